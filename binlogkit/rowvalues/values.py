"""One column value out of a row image, by its type and metadata: the Python value and the
text ``mysqlbinlog -v`` prints for it. Layouts follow MySQL's ``log_event_print_value`` /
``field.cc``; every read stays inside the image, and a value that runs past it is a
``BodyLengthError`` naming the column."""

from __future__ import annotations

import datetime
import re
import struct
from dataclasses import dataclass
from typing import NamedTuple

from ..codecs.newdecimal import _dec_size, _decimal  # noqa: F401  (shared with JSON)
from ..errors import BodyLengthError
from .tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY, INT24,
                     JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME,
                     TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR, YEAR, Column)


@dataclass(frozen=True)
class Geometry:
    """A spatial value as the server stores it: SRID, then the geometry as WKB."""

    srid: int
    wkb: bytes


def hinted(kind: str, raw: bytes) -> str:
    """The text a MariaDB server shows for a UUID / INET6 / INET4 value read as BINARY(n) bytes
    (the binlog drops trailing zero bytes of BINARY columns: they are padded back here)."""
    import ipaddress
    import uuid
    if kind == "inet4":
        return str(ipaddress.IPv4Address(raw.ljust(4, b"\0")[:4]))
    data = raw.ljust(16, b"\0")[:16]
    if kind == "uuid":
        return str(uuid.UUID(bytes=data))
    if data[:10] == bytes(10) and data[10:12] == b"\xff\xff":  # IPv4-mapped, as MariaDB prints it
        return "::ffff:" + str(ipaddress.IPv4Address(data[12:]))
    if data[:12] == bytes(12) and int.from_bytes(data[12:], "big") > 1:  # IPv4-compatible (IN6_IS_ADDR_V4COMPAT)
        return "::" + str(ipaddress.IPv4Address(data[12:]))
    return str(ipaddress.IPv6Address(data))


def _frac(b: bytes, p: int, fsp: int) -> tuple[int, int]:
    n = (fsp + 1) // 2
    if not n:
        return 0, p
    v = int.from_bytes(_take(b, p, n), "big")
    return v * (100 ** (3 - n)), p + n


# Temporal values as Python's types, as PyMySQL gives them: DATE -> date, DATETIME -> datetime,
# TIMESTAMP -> datetime in UTC, TIME -> timedelta. What those types cannot hold (zero dates,
# ALLOW_INVALID_DATES days) stays the server's text, as PyMySQL leaves it.
def _date(y: int, mo: int, d: int):
    try:
        return datetime.date(y, mo, d)
    except ValueError:
        return f"{y:04d}-{mo:02d}-{d:02d}"


def _datetime(text: str, y: int, mo: int, d: int, h: int, mi: int, s: int, us: int = 0):
    try:
        return datetime.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return text


def _timestamp(secs: int, us: int):
    if secs == 0 and us == 0:
        return "0000-00-00 00:00:00"  # the zero timestamp
    try:
        return datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).replace(microsecond=us)
    except (ValueError, OverflowError):
        return secs + us / 1e6


def _time(neg: bool, h: int, mi: int, s: int, us: int) -> datetime.timedelta:
    delta = datetime.timedelta(hours=h, minutes=mi, seconds=s, microseconds=us)
    return -delta if neg else delta


class Value(NamedTuple):
    """A column value and how mysqlbinlog -v prints it (a named tuple: made once per value)."""

    value: object
    text: str


_CONTROL = re.compile(rb"[\x00-\x1f]")


def _quote(raw: bytes) -> str:
    """As mysqlbinlog -v: bytes above 0x1F as they are (UTF-8 text stays readable; other bytes
    are carried as surrogate escapes and written back raw), control bytes as \\xNN."""
    if _CONTROL.search(raw):
        raw = _CONTROL.sub(lambda m: b"\\x%02x" % m.group()[0], raw)
    return "'" + raw.decode("utf-8", "surrogateescape") + "'"


def _take(b: bytes, p: int, n: int) -> bytes:
    """``n`` bytes at ``p``, or IndexError: a slice alone would come back short, silently."""
    if p + n > len(b):
        raise IndexError
    return b[p:p + n]


def _prefixed(b: bytes, p: int, lb: int) -> tuple[bytes, int]:
    """A value behind an ``lb``-byte little-endian length: (its bytes, the position after it)."""
    n = int.from_bytes(_take(b, p, lb), "little")
    raw = b[p + lb:p + lb + n]
    if len(raw) < n:
        raise IndexError
    return raw, p + lb + n


def _value(col: Column, b: bytes, p: int) -> tuple[Value, int]:
    t, m = col.type, col.meta
    if t in (TINY, SHORT, INT24, LONG, LONGLONG):
        n = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}[t]
        if p + n > len(b):
            raise IndexError
        u = int.from_bytes(_take(b, p, n), "little")
        s = u - (1 << (8 * n)) if u >> (8 * n - 1) else u
        return Value(s, f"{s}" + (f" ({u})" if s < 0 else "")), p + n
    if t == FLOAT:
        (f,) = struct.unpack_from("<f", b, p)
        return Value(f, f"{f:g}"), p + 4
    if t == DOUBLE:
        (f,) = struct.unpack_from("<d", b, p)
        return Value(f, f"{f:.20g}"), p + 8
    if t == NEWDECIMAL:
        d, q = _decimal(b, p, m >> 8, m & 0xFF)
        return Value(d, format(d, "f")), q
    if t == YEAR:
        y = b[p]
        return Value(1900 + y if y else 0, f"{1900 + y if y else 0}"), p + 1
    if t in (DATE, NEWDATE):
        v = int.from_bytes(_take(b, p, 3), "little")
        y, mo, d = v >> 9, (v >> 5) & 15, v & 31
        return Value(_date(y, mo, d), f"'{y:04d}:{mo:02d}:{d:02d}'"), p + 3
    if t == DATETIME2:
        v = int.from_bytes(_take(b, p, 5), "big") - 0x8000000000
        q = p + 5
        frac, q = _frac(b, q, m)
        ymd, hms = v >> 17, v & ((1 << 17) - 1)
        ym, day = ymd >> 5, ymd & 31
        year, month = ym // 13, ym % 13
        h, mi, s = hms >> 12, (hms >> 6) & 63, hms & 63
        text = f"{year:04d}-{month:02d}-{day:02d} {h:02d}:{mi:02d}:{s:02d}"
        if m:
            text += "." + f"{frac:06d}"[:m]
        return Value(_datetime(text, year, month, day, h, mi, s, frac), f"'{text}'"), q
    if t == TIMESTAMP2:
        secs = int.from_bytes(_take(b, p, 4), "big")
        frac, q = _frac(b, p + 4, m)
        text = f"{secs}" + (("." + f"{frac:06d}"[:m]) if m else "")
        return Value(_timestamp(secs, frac), text), q
    if t == TIME2:  # MySQL my_time_packed_from_binary: a signed packed value, then printed
        if m >= 5:
            packed = int.from_bytes(_take(b, p, 6), "big") - 0x800000000000
            q = p + 6
        else:
            intpart = int.from_bytes(_take(b, p, 3), "big") - 0x800000
            q = p + 3
            frac = 0
            if m in (1, 2):
                frac = b[q]
                q += 1
                if intpart < 0 and frac:
                    intpart, frac = intpart + 1, frac - 0x100
                frac *= 10000
            elif m in (3, 4):
                frac = int.from_bytes(_take(b, q, 2), "big")
                q += 2
                if intpart < 0 and frac:
                    intpart, frac = intpart + 1, frac - 0x10000
                frac *= 100
            packed = (intpart << 24) + frac
        if q > len(b):
            raise IndexError
        neg = packed < 0
        a = -packed if neg else packed
        ip, us = a >> 24, a % (1 << 24)
        h, mi, sec = (ip >> 12) % 1024, (ip >> 6) % 64, ip % 64
        text = ("-" if neg else "") + f"{h:02d}:{mi:02d}:{sec:02d}" + (("." + f"{us:06d}"[:m]) if m else "")
        return Value(_time(neg, h, mi, sec, us), f"'{text}'"), q
    if t == TIMESTAMP:
        (secs,) = struct.unpack_from("<I", b, p)
        return Value(_timestamp(secs, 0), f"{secs}"), p + 4
    if t == DATETIME:
        v = int.from_bytes(_take(b, p, 8), "little")
        d, tm = divmod(v, 1_000_000)
        text = f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} {tm // 10000:02d}:{tm // 100 % 100:02d}:{tm % 100:02d}"
        return Value(_datetime(text, d // 10000, d // 100 % 100, d % 100, tm // 10000, tm // 100 % 100, tm % 100),
                     f"'{text}'"), p + 8
    if t == TIME:
        v = int.from_bytes(_take(b, p, 3), "little")
        text = f"{v // 10000:02d}:{v // 100 % 100:02d}:{v % 100:02d}"
        return Value(_time(False, v // 10000, v // 100 % 100, v % 100, 0), f"'{text}'"), p + 3
    if t in (VARCHAR, VAR_STRING):
        raw, q = _prefixed(b, p, 1 if m < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        return Value(raw, _quote(raw)), q
    if t == STRING:
        real = m >> 8
        if real in (ENUM, SET):
            n = m & 0xFF
            v = int.from_bytes(_take(b, p, n), "little")
            if real == ENUM:
                return Value(v, f"{v}"), p + n
            return Value(v, "b'" + format(v, f"0{n * 8}b") + "'"), p + n
        maxlen = col.max_length
        raw, q = _prefixed(b, p, 1 if maxlen < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        # BINARY(n): the binlog drops trailing zero bytes, the column's value has them
        value = raw.ljust(maxlen, b"\0") if col.collation == BINARY_COLLATION else raw
        return Value(value, _quote(raw)), q
    if t == JSON:  # MySQL's binary JSON, as JSON text
        from ..codecs.mysql_json import to_text

        raw, q = _prefixed(b, p, m or 4)
        try:
            text = to_text(raw)
        except (ValueError, IndexError, KeyError, struct.error):
            raise BodyLengthError(f"column @{col.index + 1}: malformed binary JSON", field=f"@{col.index + 1}") from None
        return Value(text, _quote(text.encode("utf-8"))), q
    if t == GEOMETRY:  # 4-byte SRID, then WKB
        raw, q = _prefixed(b, p, m or 4)
        if len(raw) < 4:
            raise BodyLengthError(f"column @{col.index + 1}: a geometry of {len(raw)} bytes has no SRID",
                                  field=f"@{col.index + 1}")
        return Value(Geometry(int.from_bytes(raw[:4], "little"), raw[4:]), _quote(raw)), q
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
        raw, q = _prefixed(b, p, m or 4)
        return Value(raw, _quote(raw)), q
    if t == BIT:
        nbits = (m & 0xFF) * 8 + (m >> 8)  # whole bytes, then the bits of the last one
        n = (nbits + 7) // 8
        v = int.from_bytes(_take(b, p, n), "big")
        return Value(v, "b'" + format(v, f"0{nbits}b") + "'"), p + n
    raise UnknownColumnType(f"column @{col.index + 1} has type {t}, which binlogkit does not decode",
                            field=f"@{col.index + 1}")


class UnknownColumnType(BodyLengthError):
    """A column type this decoder does not know: its length is unknown, so the row image is
    kept raw (``RawRows``) instead of guessed at."""


def _hinted_value(col: Column, raw: bytes) -> Value:
    try:
        text = hinted(col.hint, raw)
    except ValueError as exc:
        raise BodyLengthError(f"column @{col.index + 1}: not a {col.hint} value: {exc}",
                              field=f"@{col.index + 1}") from None
    return Value(text, f"'{text}'")


_INTS = {TINY: (struct.Struct("<b").unpack_from, 1), SHORT: (struct.Struct("<h").unpack_from, 2),
         LONG: (struct.Struct("<i").unpack_from, 4), LONGLONG: (struct.Struct("<q").unpack_from, 8)}


def reader(col: Column):
    """``(image, position) -> (Value, next position)`` for one column: ``_value`` itself, or an
    equivalent specialised for the commonest types (integers, strings, blobs), made once per
    table map (``images._plan``)."""
    t, m = col.type, col.meta
    if col.hint is None and t in _INTS:
        unpack, n = _INTS[t]
        wrap = 1 << (8 * n)

        def read_int(b, p):
            s = unpack(b, p)[0]
            return Value(s, str(s) if s >= 0 else f"{s} ({s + wrap})"), p + n
        return read_int
    lb = None
    if col.hint is None:
        if t in (VARCHAR, VAR_STRING):
            lb = 1 if m < 256 else 2
        elif t == STRING and m >> 8 not in (ENUM, SET) and col.collation != BINARY_COLLATION:
            lb = 1 if col.max_length < 256 else 2
        elif t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
            lb = m or 4
    if lb == 1:
        def read_short(b, p):
            q = p + 1 + b[p]
            if q > len(b):
                raise IndexError
            raw = b[p + 1:q]
            return Value(raw, _quote(raw)), q
        return read_short
    if lb is not None:
        def read_prefixed(b, p):
            raw, q = _prefixed(b, p, lb)
            return Value(raw, _quote(raw)), q
        return read_prefixed
    return lambda b, p: _value(col, b, p)

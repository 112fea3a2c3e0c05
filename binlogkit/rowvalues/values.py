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

from ..codecs.newdecimal import dec_size, read_decimal  # noqa: F401  (shared with JSON)
from ..errors import BodyLengthError
from .tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY, INT24,
                     JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME,
                     TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR, VECTOR, YEAR, Column,
                     temporal_hint)


@dataclass(frozen=True)
class Geometry:
    """A spatial value as the server stores it: SRID, then the geometry as WKB."""

    srid: int
    wkb: bytes


@dataclass(frozen=True)
class JsonDiff:
    """A JSON column of a partial update (MySQL ``binlog_row_value_options=PARTIAL_JSON``):
    the diff operations (operation name, path, value) and, when the before image holds the
    column, the resulting document's text (else None)."""

    diffs: tuple[tuple[str, str, object], ...]
    result: str | None


class Vector(tuple):
    """A MySQL VECTOR value: its float32 components as Python floats, each the shortest decimal
    that reads back as the same float32 (0.1, not 0.10000000149011612); ``raw`` the stored bytes."""

    raw: bytes

    def __new__(cls, raw: bytes) -> Vector:
        self = super().__new__(cls, (_short_float32(f) for f in struct.unpack(f"<{len(raw) // 4}f", raw)))
        self.raw = raw
        return self

    def __getnewargs__(self) -> tuple[bytes]:  # pickled by its bytes, which __new__ takes
        return (self.raw,)

    def text(self) -> str:
        """As mysqlbinlog -v prints it (MySQL 9.7): ``[1.50000e+00,-3.25000e+00]``."""
        return "[" + ",".join("%.5e" % f for f in self) + "]"


def _short_float32(f: float) -> float:
    if f != f or f in (float("inf"), float("-inf")):
        return f
    packed = struct.pack("<f", f)
    for digits in range(1, 10):
        g = float("%.*g" % (digits, f))
        try:
            if struct.pack("<f", g) == packed:
                return g
        except OverflowError:  # rounded past FLT_MAX (3.4025e38 at 4 digits is 3.403e38): more digits
            continue
    return f


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


def timestamp_value(secs: int, us: int):
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


def quote_text(raw: bytes) -> str:
    """As mariadb-binlog -v (and mysqlbinlog before 8.0): bytes above 0x1F as they are (UTF-8
    text stays readable; other bytes are carried as surrogate escapes and written back raw),
    control bytes as \\xNN."""
    if _CONTROL.search(raw):
        raw = _CONTROL.sub(lambda m: b"\\x%02x" % m.group()[0], raw)
    return "'" + raw.decode("utf-8", "surrogateescape") + "'"


# mysqlbinlog 8.0+ (``my_b_write_quoted``'s quote table): these by name, other bytes below
# 0x20 as \xNN, every other byte (0x7F and above too) as it is
_NAMED = {0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x5C: b"\\\\", 0x27: b"\\'"}
_ESCAPED = [_NAMED.get(c, b"\\x%02x" % c) for c in range(0x60)]
_SPECIAL = re.compile(rb"[\x00-\x1f'\\]")


def _quote_escaped(raw: bytes) -> str:
    """As mysqlbinlog -v from MySQL 8.0 prints a string (``flavor.tool_escapes_strings``):
    ``'it\\'s \\\\ x'``, ``\\n`` and its kin by name, other control bytes as \\xNN."""
    if _SPECIAL.search(raw):
        raw = _SPECIAL.sub(lambda m: _ESCAPED[m.group()[0]], raw)
    return "'" + raw.decode("utf-8", "surrogateescape") + "'"


def _quote_json(text: str) -> str:
    """A JSON document's text as mysqlbinlog -v prints it (JSON columns are MySQL's alone):
    the quoting of every MySQL string (seen in fixtures/samples/mysql-9.7)."""
    return _quote_escaped(text.encode("utf-8", "surrogateescape"))


def _take(b: bytes, p: int, n: int) -> bytes:
    """``n`` bytes at ``p``, or IndexError: a slice alone would come back short, silently."""
    if p + n > len(b):
        raise IndexError
    return b[p:p + n]


def prefixed(b: bytes, p: int, lb: int) -> tuple[bytes, int]:
    """A value behind an ``lb``-byte little-endian length: (its bytes, the position after it)."""
    n = int.from_bytes(_take(b, p, lb), "little")
    raw = b[p + lb:p + lb + n]
    if len(raw) < n:
        raise IndexError
    return raw, p + lb + n


def _value(col: Column, b: bytes, p: int, escape: bool = False) -> tuple[Value, int]:
    """One value at ``p`` and the position after it; ``escape``: strings quoted as MySQL 8.0+'s
    mysqlbinlog does (``flavor.tool_escapes_strings``), else as mariadb-binlog does."""
    t, m = col.type, col.meta
    quote = _quote_escaped if escape else quote_text
    if t in (TINY, SHORT, INT24, LONG, LONGLONG):
        n = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}[t]
        if p + n > len(b):
            raise IndexError
        u = int.from_bytes(_take(b, p, n), "little")
        s = u - (1 << (8 * n)) if u >> (8 * n - 1) else u
        return Value(s, f"{s}" + (f" ({u})" if s < 0 else "")), p + n
    if t == FLOAT:
        (f,) = struct.unpack_from("<f", b, p)
        return Value(f, "%-20g" % f), p + 4  # mysqlbinlog pads FLOAT to 20 columns
    if t == DOUBLE:
        (f,) = struct.unpack_from("<d", b, p)
        return Value(f, f"{f:.20g}"), p + 8
    if t == NEWDECIMAL:
        dec, q = read_decimal(b, p, m >> 8, m & 0xFF)
        return Value(dec, format(dec, "f")), q
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
        return Value(timestamp_value(secs, frac), text), q
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
    if col.hint is not None and t in (TIME, DATETIME, TIMESTAMP):
        hint = temporal_hint(col.hint)
        if hint is not None and hint[1]:
            return _old_fractional(col, hint[1], b, p)
    if t == TIMESTAMP:
        (secs,) = struct.unpack_from("<I", b, p)
        return Value(timestamp_value(secs, 0), f"{secs}"), p + 4
    if t == DATETIME:
        v = int.from_bytes(_take(b, p, 8), "little")
        d, tm = divmod(v, 1_000_000)
        text = f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} {tm // 10000:02d}:{tm // 100 % 100:02d}:{tm % 100:02d}"
        return Value(_datetime(text, d // 10000, d // 100 % 100, d % 100, tm // 10000, tm // 100 % 100, tm % 100),
                     f"'{text}'"), p + 8
    if t == TIME:  # a signed 3-byte hhmmss number (MariaDB's old TIME, and TIME(0) in its old layout)
        v = int.from_bytes(_take(b, p, 3), "little", signed=True)
        a = abs(v)
        text = ("-" if v < 0 else "") + f"{a // 10000:02d}:{a // 100 % 100:02d}:{a % 100:02d}"
        return Value(_time(v < 0, a // 10000, a // 100 % 100, a % 100, 0), f"'{text}'"), p + 3
    if t in (VARCHAR, VAR_STRING):
        raw, q = prefixed(b, p, 1 if m < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        return Value(raw, quote(raw)), q
    if t == STRING:
        real = m >> 8
        if real in (ENUM, SET):
            n = m & 0xFF
            raw = _take(b, p, n)
            v = int.from_bytes(raw, "little")
            if real == ENUM:
                return Value(v, f"{v}"), p + n
            # mysqlbinlog prints a SET's stored (little-endian) bytes in order, each high bit first
            return Value(v, "b'" + "".join(format(x, "08b") for x in raw) + "'"), p + n
        maxlen = col.max_length
        raw, q = prefixed(b, p, 1 if maxlen < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        # BINARY(n): the binlog drops trailing zero bytes, the column's value has them
        value = raw.ljust(maxlen, b"\0") if col.collation == BINARY_COLLATION else raw
        return Value(value, quote(raw)), q
    if t == JSON:  # MySQL's binary JSON, as JSON text
        from ..codecs.mysql_json import to_text

        raw, q = prefixed(b, p, m or 4)
        try:
            text = to_text(raw)
        except (ValueError, IndexError, KeyError, struct.error):
            raise BodyLengthError(f"column @{col.index + 1}: malformed binary JSON", field=f"@{col.index + 1}") from None
        return Value(text, _quote_json(text)), q
    if t == GEOMETRY:  # 4-byte SRID, then WKB
        raw, q = prefixed(b, p, m or 4)
        if len(raw) < 4:
            raise BodyLengthError(f"column @{col.index + 1}: a geometry of {len(raw)} bytes has no SRID",
                                  field=f"@{col.index + 1}")
        return Value(Geometry(int.from_bytes(raw[:4], "little"), raw[4:]), quote(raw)), q
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
        raw, q = prefixed(b, p, m or 4)
        return Value(raw, quote(raw)), q
    if t == VECTOR:  # MySQL 9: float32 little-endian values behind an ``m``-byte length
        raw, q = prefixed(b, p, m or 4)
        if len(raw) % 4:
            raise BodyLengthError(f"column @{col.index + 1}: a VECTOR of {len(raw)} bytes (not whole float32s)",
                                  field=f"@{col.index + 1}")
        vec = Vector(raw)
        return Value(vec, vec.text()), q
    if t == BIT:
        nbits = (m & 0xFF) * 8 + (m >> 8)  # whole bytes, then the bits of the last one
        n = (nbits + 7) // 8
        v = int.from_bytes(_take(b, p, n), "big")
        return Value(v, "b'" + format(v, f"0{nbits}b") + "'"), p + n
    raise UnknownColumnType(f"column @{col.index + 1} has type {t}, which binlogkit does not decode",
                            field=f"@{col.index + 1}")


# MariaDB's pre-10.1 fractional layout (sql/field.cc Field_time_hires, Field_datetime_hires,
# Field_timestamp_hires), bytes by precision 1-6:
#   TIME(n)       3,4,4,5,5,5,6 bytes: big-endian (packed us / 10^(6-n)) + 3020400 * 10^n
#                 (packed us = signed ((h*60 + m)*60 + s)*10^6 + us; the offset keeps it unsigned)
#   DATETIME(n)   5,6,6,7,7,7,8 bytes: big-endian (((((Y*13 + M)*32 + D)*24 + h)*60 + m)*60 + s)*10^6 + us
#                 divided by 10^(6-n)
#   TIMESTAMP(n)  4 bytes big-endian seconds, then 1,1,2,2,3,3 bytes big-endian us / 10^(6-n)
# The table map gives these types 11, 12, 7 with no metadata: n comes from a column hint.
OLD_TIME_BYTES = (3, 4, 4, 5, 5, 5, 6)
OLD_DATETIME_BYTES = (5, 6, 6, 7, 7, 7, 8)
OLD_TIMESTAMP_BYTES = (4, 5, 5, 6, 6, 7, 7)


def _old_fractional(col: Column, dec: int, b: bytes, p: int) -> tuple[Value, int]:
    t = col.type
    scale = 10 ** (6 - dec)
    if t == TIME:
        n = OLD_TIME_BYTES[dec]
        packed = (int.from_bytes(_take(b, p, n), "big") - 3020400 * 10 ** dec) * scale
        neg, a = packed < 0, abs(packed)
        us, secs = a % 1_000_000, a // 1_000_000
        h, mi, sec = secs // 3600, secs // 60 % 60, secs % 60
        text = ("-" if neg else "") + f"{h:02d}:{mi:02d}:{sec:02d}." + f"{us:06d}"[:dec]
        return Value(_time(neg, h, mi, sec, us), f"'{text}'"), p + n
    if t == DATETIME:
        n = OLD_DATETIME_BYTES[dec]
        v, us = divmod(int.from_bytes(_take(b, p, n), "big") * scale, 1_000_000)
        v, sec = divmod(v, 60)
        v, mi = divmod(v, 60)
        v, h = divmod(v, 24)
        v, d = divmod(v, 32)
        y, mo = divmod(v, 13)
        text = f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{sec:02d}." + f"{us:06d}"[:dec]
        return Value(_datetime(text, y, mo, d, h, mi, sec, us), f"'{text}'"), p + n
    n = OLD_TIMESTAMP_BYTES[dec]
    secs = int.from_bytes(_take(b, p, 4), "big")
    us = int.from_bytes(_take(b, p + 4, n - 4), "big") * scale
    if us > 999_999:
        raise BodyLengthError(f"column @{col.index + 1}: a TIMESTAMP({dec}) fraction of {us} microseconds",
                              field=f"@{col.index + 1}")
    return Value(timestamp_value(secs, us), f"{secs}." + f"{us:06d}"[:dec]), p + n


class UnknownColumnType(BodyLengthError):
    """A column type this decoder does not know: its length is unknown, so the row image is
    kept raw (``RawRows``) instead of guessed at."""


def _hinted_value(col: Column, raw: bytes) -> Value:
    assert col.hint is not None, "called for hinted columns only"
    try:
        text = hinted(col.hint, raw)
    except ValueError as exc:
        raise BodyLengthError(f"column @{col.index + 1}: not a {col.hint} value: {exc}",
                              field=f"@{col.index + 1}") from None
    return Value(text, f"'{text}'")


_INTS = {TINY: (struct.Struct("<b").unpack_from, 1), SHORT: (struct.Struct("<h").unpack_from, 2),
         LONG: (struct.Struct("<i").unpack_from, 4), LONGLONG: (struct.Struct("<q").unpack_from, 8)}


def reader(col: Column, escape: bool = False):
    """``(image, position) -> (Value, next position)`` for one column: ``_value`` itself, or an
    equivalent specialised for the commonest types (integers, strings, blobs), made once per
    table map (``images._plan``); ``escape`` as for ``_value``."""
    t, m = col.type, col.meta
    quote = _quote_escaped if escape else quote_text
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
            return Value(raw, quote(raw)), q
        return read_short
    if lb is not None:
        def read_prefixed(b, p):
            raw, q = prefixed(b, p, lb)
            return Value(raw, quote(raw)), q
        return read_prefixed
    return lambda b, p: _value(col, b, p, escape)

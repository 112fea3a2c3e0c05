"""Row images to column values (lazy: only when asked, never on the scan paths).

A rows event's image holds, per row: a null bitmap over the *present* columns (the columns
bitmap), then the values of the present, non-NULL columns, each stored by its type as the
Table_map event declares it (type byte + per-type metadata). Layouts follow MySQL's
``log_event_print_value`` / ``field.cc``; every value is read inside the image's window, and a
value that runs past it is a ``BodyLengthError`` naming the column.
"""

from __future__ import annotations

import decimal
import fnmatch
import re
import struct
from dataclasses import dataclass, replace

from .codecs.compression import uncompress
from .codecs.rows import UPDATE_ROWS
from .constants import EventType as T
from .errors import BodyLengthError
from .flavor import geometry_has_charset

# column type codes (MySQL enum_field_types)
DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2 = range(10, 20)
JSON, NEWDECIMAL, ENUM, SET, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = (
    245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255)

META_BYTES = {FLOAT: 1, DOUBLE: 1, BLOB: 1, GEOMETRY: 1, JSON: 1, TIMESTAMP2: 1, DATETIME2: 1, TIME2: 1,
              VARCHAR: 2, VAR_STRING: 2, STRING: 2, NEWDECIMAL: 2, BIT: 2, ENUM: 2, SET: 2}
COMPRESSED_ROWS = {T.WRITE_ROWS_COMPRESSED_EVENT, T.UPDATE_ROWS_COMPRESSED_EVENT, T.DELETE_ROWS_COMPRESSED_EVENT,
                   T.WRITE_ROWS_COMPRESSED_EVENT_V1, T.UPDATE_ROWS_COMPRESSED_EVENT_V1,
                   T.DELETE_ROWS_COMPRESSED_EVENT_V1}
WRITE = {T.WRITE_ROWS_EVENT, T.WRITE_ROWS_EVENT_V1, T.PRE_GA_WRITE_ROWS_EVENT, T.WRITE_ROWS_COMPRESSED_EVENT,
         T.WRITE_ROWS_COMPRESSED_EVENT_V1}
ROWS_TYPES = frozenset({20, 21, 22, 23, 24, 25, 30, 31, 32, 39, 166, 167, 168, 169, 170, 171})
DELETE = {T.DELETE_ROWS_EVENT, T.DELETE_ROWS_EVENT_V1, T.PRE_GA_DELETE_ROWS_EVENT, T.DELETE_ROWS_COMPRESSED_EVENT,
          T.DELETE_ROWS_COMPRESSED_EVENT_V1}


BINARY_COLLATION = 63
# what a column hint may ask for: types the binlog does not name (MariaDB's UUID and INET6 reach
# it as BINARY(16), INET4 as BINARY(4)); see ``hinted``
HINTS = ("uuid", "inet6", "inet4")
GEOMETRY_NAMES = ("GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
                  "MULTIPOLYGON", "GEOMETRYCOLLECTION")


@dataclass(frozen=True)
class Column:
    index: int
    type: int
    meta: int
    collation: int | None = None   # from the optional metadata; 63 = binary
    hint: str | None = None        # a type the user says this column has (HINTS)

    @property
    def real_type(self) -> int:
        """STRING columns carry ENUM / SET in their metadata's high byte."""
        return self.meta >> 8 if self.type == STRING and self.meta >> 8 in (ENUM, SET) else self.type

    @property
    def is_character(self) -> bool:
        return self.real_type in (STRING, VAR_STRING, VARCHAR, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)


@dataclass(frozen=True)
class Geometry:
    """A spatial value as the server stores it: SRID, then the geometry as WKB."""

    srid: int
    wkb: bytes


@dataclass(frozen=True)
class Table:
    table_id: int
    db: str
    name: str
    columns: tuple[Column, ...]
    # from the optional metadata (MySQL 8 / MariaDB 10.5+ with binlog_row_metadata=FULL)
    column_names: tuple[str, ...] | None = None
    unsigned: frozenset[int] = frozenset()      # indexes of unsigned numeric columns
    primary_key: tuple[int, ...] | None = None
    enum_values: dict[int, tuple[str, ...]] | None = None
    set_values: dict[int, tuple[str, ...]] | None = None
    geometry_types: dict[int, str] | None = None  # POINT, POLYGON, ... per geometry column

    def column_name(self, index: int) -> str:
        names = self.column_names
        return names[index] if names and index < len(names) else f"@{index + 1}"


NUMERIC = {TINY, SHORT, INT24, LONG, LONGLONG, FLOAT, DOUBLE, NEWDECIMAL, DECIMAL}


def parse_optional_metadata(data: bytes, columns: tuple[Column, ...], flavor=None) -> dict:
    """The TLV list after the null bitmap: 1 SIGNEDNESS (a bit per numeric column, high bit
    first), 2 DEFAULT_CHARSET (a default collation, then (index, collation) pairs for the
    character columns that differ), 3 COLUMN_CHARSET (a collation per character column),
    4 COLUMN_NAME, 5 SET_STR_VALUE, 6 ENUM_STR_VALUE, 7 GEOMETRY_TYPE, 8 SIMPLE_PRIMARY_KEY,
    9 PRIMARY_KEY_WITH_PREFIX; others are skipped. Source: MySQL ``Table_map_event::Optional_metadata_fields``."""
    from .codecs.common import read_packed

    out: dict = {}
    chars = [c.index for c in columns if c.is_character or (c.type == GEOMETRY and geometry_has_charset(flavor))]
    p = 0
    while p < len(data):
        kind = data[p]
        n, p = read_packed(data, p + 1)
        v = data[p:p + n]
        p += n
        if kind == 1:
            numeric = [c.index for c in columns if c.type in NUMERIC]
            out["unsigned"] = frozenset(i for k, i in enumerate(numeric) if v[k // 8] >> (7 - k % 8) & 1)
        elif kind in (2, 3):
            nums, q = [], 0
            while q < len(v):
                k, q = read_packed(v, q)
                nums.append(k)
            if kind == 2:
                coll = dict.fromkeys(chars, nums[0])
                coll.update({chars[i]: c for i, c in zip(nums[1::2], nums[2::2]) if i < len(chars)})
            else:
                coll = dict(zip(chars, nums))
            out["collations"] = coll
        elif kind == 7:
            kinds, q = [], 0
            while q < len(v):
                k, q = read_packed(v, q)
                kinds.append(GEOMETRY_NAMES[k] if k < len(GEOMETRY_NAMES) else str(k))
            out["geometry_types"] = dict(zip([c.index for c in columns if c.type == GEOMETRY], kinds))
        elif kind == 4:
            names, q = [], 0
            while q < len(v):
                ln, q = read_packed(v, q)
                names.append(v[q:q + ln].decode("utf-8", "replace"))
                q += ln
            out["column_names"] = tuple(names)
        elif kind in (5, 6):
            cols = [c.index for c in columns if (c.meta >> 8 if c.type == STRING else c.type) == (SET if kind == 5 else ENUM)]
            lists, q = [], 0
            while q < len(v):
                cnt, q = read_packed(v, q)
                vals = []
                for _ in range(cnt):
                    ln, q = read_packed(v, q)
                    vals.append(v[q:q + ln].decode("utf-8", "replace"))
                    q += ln
                lists.append(tuple(vals))
            out["set_values" if kind == 5 else "enum_values"] = dict(zip(cols, lists))
        elif kind in (8, 9):  # SIMPLE_PRIMARY_KEY: column indexes; PRIMARY_KEY_WITH_PREFIX: (index, prefix)
            keys, q = [], 0
            while q < len(v):
                k, q = read_packed(v, q)
                keys.append(k)
                if kind == 9:
                    _, q = read_packed(v, q)
            out["primary_key"] = tuple(keys)
    return out


def table_from_map(fields, flavor=None, hints: dict[str, str] | None = None) -> Table:
    """A Table from a parsed Table_map body (the Construct container). ``hints`` maps
    ``db.table.column`` patterns (a column by name when the binlog carries names, or ``@N``;
    shell wildcards allowed) to a type of ``HINTS``."""
    types = bytes(fields.column_types)
    part = fields.metadata_part
    meta = bytes(part.metadata) if part is not None else b""
    cols, p = [], 0
    for i, t in enumerate(types):
        n = META_BYTES.get(t, 0)
        if t in (VARCHAR, VAR_STRING):  # maximum length, 2 bytes little-endian
            m = int.from_bytes(meta[p:p + 2], "little")
        elif n == 2:  # NEWDECIMAL (precision, scale), BIT (bits % 8, bytes), STRING/ENUM/SET (type, length)
            m = (meta[p] << 8 | meta[p + 1]) if p + 1 < len(meta) else 0
        elif n == 1:
            m = meta[p] if p < len(meta) else 0
        else:
            m = 0
        cols.append(Column(i, t, m))
        p += n
    extra = {}
    if part is not None and part.optional_metadata:
        try:
            extra = parse_optional_metadata(bytes(part.optional_metadata), tuple(cols), flavor)
        except (IndexError, KeyError, ValueError):
            extra = {}  # optional by definition: an unreadable TLV only loses names and signedness
    collations = extra.pop("collations", {})
    table = Table(fields.table_id, bytes(fields.db).decode("utf-8", "replace"),
                  bytes(fields.table).decode("utf-8", "replace"), tuple(cols), **extra)
    if collations or hints:
        cols = [replace(c, collation=collations.get(c.index), hint=_hint_for(table, c.index, hints))
                for c in cols]
        table = replace(table, columns=tuple(cols))
    return table


def _hint_for(table: Table, index: int, hints: dict[str, str] | None) -> str | None:
    if not hints:
        return None
    keys = {f"{table.db}.{table.name}.@{index + 1}", f"{table.db}.{table.name}.{table.column_name(index)}"}
    for pattern, kind in hints.items():
        if any(fnmatch.fnmatchcase(k, pattern) for k in keys):
            if kind not in HINTS:
                raise ValueError(f"unknown column type hint {kind!r} (known: {', '.join(HINTS)})")
            return kind
    return None


def parse_hints(specs) -> dict[str, str]:
    """``["db.t.col=uuid", ...]`` (also comma-separated) to a hints mapping; ValueError if bad."""
    out = {}
    for spec in specs or ():
        for one in spec.split(","):
            if not one.strip():
                continue
            pattern, sep, kind = one.strip().rpartition("=")
            if not sep or pattern.count(".") < 2 or kind.lower() not in HINTS:
                raise ValueError(f"column type hint {one!r}: expected DB.TABLE.COLUMN=TYPE with TYPE one of "
                                 f"{', '.join(HINTS)} (COLUMN a name or @N; wildcards allowed)")
            out[pattern] = kind.lower()
    return out


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
    addr = ipaddress.IPv6Address(data)
    return str(addr)


def _bits(b: bytes, n: int) -> list[bool]:
    return [bool(b[i // 8] >> (i % 8) & 1) for i in range(n)]


def _dec_size(digits: int) -> int:
    return digits // 9 * 4 + (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[digits % 9]


def _decimal(b: bytes, p: int, precision: int, scale: int) -> tuple[decimal.Decimal, int]:
    intg = precision - scale
    size = _dec_size(intg) + _dec_size(scale)
    raw = bytearray(b[p:p + size])
    if len(raw) < size:
        raise IndexError
    negative = not raw[0] & 0x80
    raw[0] ^= 0x80
    if negative:
        raw = bytearray(x ^ 0xFF for x in raw)
    digits, q = [], 0
    lead = intg % 9
    sizes = ([(0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[lead]] if lead else []) + [4] * (intg // 9)
    for s in sizes:
        digits.append(str(int.from_bytes(raw[q:q + s], "big")).zfill(9 if s == 4 and not (q == 0 and lead) else lead))
        q += s
    ip = "".join(digits).lstrip("0") or "0"
    frac = []
    for i in range(scale // 9):
        frac.append(str(int.from_bytes(raw[q:q + 4], "big")).zfill(9))
        q += 4
    rest = scale % 9
    if rest:
        s = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[rest]
        frac.append(str(int.from_bytes(raw[q:q + s], "big")).zfill(rest))
        q += s
    text = ("-" if negative else "") + ip + ("." + "".join(frac) if scale else "")
    return decimal.Decimal(text), p + size


def _frac(b: bytes, p: int, fsp: int) -> tuple[int, int]:
    n = (fsp + 1) // 2
    if not n:
        return 0, p
    v = int.from_bytes(b[p:p + n], "big")
    return v * (100 ** (3 - n)), p + n


@dataclass(frozen=True)
class Value:
    """A column value and how mysqlbinlog -v prints it."""

    value: object
    text: str


_CONTROL = re.compile(rb"[\x00-\x1f]")


def _quote(raw: bytes) -> str:
    """As mysqlbinlog -v: bytes above 0x1F as they are (UTF-8 text stays readable; other bytes
    are carried as surrogate escapes and written back raw), control bytes as \\xNN."""
    if _CONTROL.search(raw):
        raw = _CONTROL.sub(lambda m: b"\\x%02x" % m.group()[0], raw)
    return "'" + raw.decode("utf-8", "surrogateescape") + "'"


def _prefixed(b: bytes, p: int, lb: int) -> tuple[bytes, int]:
    """A value behind an ``lb``-byte little-endian length: (its bytes, the position after it)."""
    n = int.from_bytes(b[p:p + lb], "little")
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
        u = int.from_bytes(b[p:p + n], "little")
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
        v = int.from_bytes(b[p:p + 3], "little")
        y, mo, d = v >> 9, (v >> 5) & 15, v & 31
        return Value((y, mo, d), f"'{y:04d}:{mo:02d}:{d:02d}'"), p + 3
    if t == DATETIME2:
        v = int.from_bytes(b[p:p + 5], "big") - 0x8000000000
        q = p + 5
        frac, q = _frac(b, q, m)
        ymd, hms = v >> 17, v & ((1 << 17) - 1)
        ym, day = ymd >> 5, ymd & 31
        year, month = ym // 13, ym % 13
        h, mi, s = hms >> 12, (hms >> 6) & 63, hms & 63
        text = f"{year:04d}-{month:02d}-{day:02d} {h:02d}:{mi:02d}:{s:02d}"
        if m:
            text += "." + f"{frac:06d}"[:m]
        return Value(text, f"'{text}'"), q
    if t == TIMESTAMP2:
        secs = int.from_bytes(b[p:p + 4], "big")
        frac, q = _frac(b, p + 4, m)
        text = f"{secs}" + (("." + f"{frac:06d}"[:m]) if m else "")
        return Value(secs + frac / 1e6, text), q
    if t == TIME2:  # MySQL my_time_packed_from_binary: a signed packed value, then printed
        if m >= 5:
            packed = int.from_bytes(b[p:p + 6], "big") - 0x800000000000
            q = p + 6
        else:
            intpart = int.from_bytes(b[p:p + 3], "big") - 0x800000
            q = p + 3
            frac = 0
            if m in (1, 2):
                frac = b[q]
                q += 1
                if intpart < 0 and frac:
                    intpart, frac = intpart + 1, frac - 0x100
                frac *= 10000
            elif m in (3, 4):
                frac = int.from_bytes(b[q:q + 2], "big")
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
        return Value(text, f"'{text}'"), q
    if t == TIMESTAMP:
        (secs,) = struct.unpack_from("<I", b, p)
        return Value(secs, f"{secs}"), p + 4
    if t == DATETIME:
        v = int.from_bytes(b[p:p + 8], "little")
        d, tm = divmod(v, 1_000_000)
        text = f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d} {tm // 10000:02d}:{tm // 100 % 100:02d}:{tm % 100:02d}"
        return Value(text, f"'{text}'"), p + 8
    if t == TIME:
        v = int.from_bytes(b[p:p + 3], "little")
        text = f"{v // 10000:02d}:{v // 100 % 100:02d}:{v % 100:02d}"
        return Value(text, f"'{text}'"), p + 3
    if t in (VARCHAR, VAR_STRING):
        raw, q = _prefixed(b, p, 1 if m < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        return Value(raw, _quote(raw)), q
    if t == STRING:
        real = m >> 8
        if real in (ENUM, SET):
            n = m & 0xFF
            v = int.from_bytes(b[p:p + n], "little")
            if real == ENUM:
                return Value(v, f"{v}"), p + n
            return Value(v, "b'" + format(v, f"0{n * 8}b") + "'"), p + n
        maxlen = (((m >> 4) & 0x300) ^ 0x300) + (m & 0xFF)
        raw, q = _prefixed(b, p, 1 if maxlen < 256 else 2)
        if col.hint:
            return _hinted_value(col, raw), q
        # BINARY(n): the binlog drops trailing zero bytes, the column's value has them
        value = raw.ljust(maxlen, b"\0") if col.collation == BINARY_COLLATION else raw
        return Value(value, _quote(raw)), q
    if t == JSON:  # MySQL's binary JSON, as JSON text
        from .codecs.mysql_json import to_text

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
        v = int.from_bytes(b[p:p + n], "big")
        return Value(v, "b'" + format(v, f"0{nbits}b") + "'"), p + n
    raise UnknownColumnType(f"column @{col.index + 1} has type {t}, which binlogkit does not decode",
                            field=f"@{col.index + 1}")


class UnknownColumnType(BodyLengthError):
    """A column type this decoder does not know: its length is unknown, so the row image is
    kept raw (``RawRows``) instead of guessed at."""


@dataclass(frozen=True)
class RawRows:
    """The undecoded row images of an event whose table has a column of an unknown type."""

    data: bytes
    reason: str


def _hinted_value(col: Column, raw: bytes) -> Value:
    try:
        text = hinted(col.hint, raw)
    except ValueError as exc:
        raise BodyLengthError(f"column @{col.index + 1}: not a {col.hint} value: {exc}",
                              field=f"@{col.index + 1}") from None
    return Value(text, f"'{text}'")


def _image(table: Table, present: list[bool], b: bytes, p: int, partial: set[int] = frozenset(),
           before: dict | None = None) -> tuple[list[tuple[int, Value | None]], int]:
    cols = [c for c, on in zip(table.columns, present) if on]
    nb = (len(cols) + 7) // 8
    nulls = _bits(b[p:p + nb], len(cols))
    p += nb
    out = []
    for c, is_null in zip(cols, nulls):
        if is_null:
            out.append((c.index, None))
            continue
        try:
            if c.index in partial:  # a JSON diff against the before image's value
                from .codecs.mysql_json import apply_diffs

                diffs, p = _prefixed(b, p, c.meta or 4)  # length sized like the column's own
                old = json_loads((before or {}).get(c.index))
                text = _dump(apply_diffs(old, diffs))
                out.append((c.index, Value(text, _quote(text.encode("utf-8")))))
                continue
            v, p = _value(c, b, p)
        except (IndexError, struct.error):
            raise BodyLengthError(f"value of column @{c.index + 1} (type {c.type}) runs past the row image",
                                  field=f"@{c.index + 1}") from None
        out.append((c.index, v))
    return out, p


def decode_rows(table: Table, fields, type_code: int) -> list[dict] | RawRows:
    """[{"before": [(index, Value|None)...] | None, "after": [...] | None}, ...]; any image
    that does not fit raises ``BodyLengthError``; a table with a column type this decoder does
    not know gives ``RawRows`` (the images undecoded, and why)."""
    try:
        return _decode_rows(table, fields, type_code)
    except UnknownColumnType as exc:
        data = bytes(fields.rows)
        return RawRows(uncompress(data) if type_code in COMPRESSED_ROWS else data, str(exc))
    except (IndexError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise BodyLengthError(f"row image of `{table.db}`.`{table.name}` does not decode: {exc}") from None


def _decode_rows(table: Table, fields, type_code: int) -> list[dict]:
    data = bytes(fields.rows)
    if type_code in COMPRESSED_ROWS:
        data = uncompress(data)
    width = fields.width
    before_cols = _bits(bytes(fields.columns_before_image), width)
    after_cols = _bits(bytes(fields.columns_after_image), width) if fields.columns_after_image is not None else None
    rows, p, start = [], 0, -1
    while p < len(data):
        if p == start:
            raise BodyLengthError(f"a row image of `{table.db}`.`{table.name}` holds no bytes: "
                                  f"{len(data) - p} bytes left undecoded")
        start = p
        if type_code == T.PARTIAL_UPDATE_ROWS_EVENT:
            from .codecs.common import read_packed

            before, p = _image(table, before_cols, data, p)
            options, p = read_packed(data, p)
            partial: set[int] = set()
            if options & 1:  # PARTIAL_JSON_UPDATES: a bit per JSON column of the after image
                json_cols = [c.index for c, on in zip(table.columns, after_cols) if on and c.type == JSON]
                nb = (len(json_cols) + 7) // 8
                partial = {i for i, bit in zip(json_cols, _bits(data[p:p + nb], len(json_cols))) if bit}
                p += nb
            after, p = _image(table, after_cols, data, p, partial,
                              {i: v.value for i, v in before if v is not None})
            rows.append({"before": before, "after": after})
        elif type_code in UPDATE_ROWS:
            before, p = _image(table, before_cols, data, p)
            after, p = _image(table, after_cols, data, p)
            rows.append({"before": before, "after": after})
        elif type_code in DELETE:
            before, p = _image(table, before_cols, data, p)
            rows.append({"before": before, "after": None})
        else:
            after, p = _image(table, before_cols, data, p)
            rows.append({"before": None, "after": after})
    return rows


try:  # the optional C accelerator (setup.py); BINLOGKIT_PURE_PYTHON=1 turns it off
    import os as _os

    from . import _rowtext
    if _os.environ.get("BINLOGKIT_PURE_PYTHON"):
        _rowtext = None
except ImportError:  # built without a C compiler: the Python decoder does everything
    _rowtext = None

_KIND = {**{t: 0 for t in WRITE}, **{t: 2 for t in DELETE}}


def verbose_text(table: Table, fields, type_code: int) -> bytes:
    """`decode -v` lines of one rows event, as bytes (string values are written as stored):
    by the C accelerator when it is built and knows every column, else by ``verbose_lines``;
    a malformed image raises ``BodyLengthError`` either way (the Python decoder names it)."""
    key = table.__dict__.get("_c_args")
    if key is None:  # what the C call needs, once per table map; None: the table is not for C
        key = None if any(c.hint for c in table.columns) else (
            bytes(c.type for c in table.columns), b"".join(c.meta.to_bytes(2, "little") for c in table.columns),
            f"`{table.db}`.`{table.name}`".encode("utf-8", "surrogateescape"))
        object.__setattr__(table, "_c_args", key or ())
    if _rowtext is not None and key and type_code != T.PARTIAL_UPDATE_ROWS_EVENT:
        data = fields["rows"]  # item access: a Container's attribute access is ~1 us on this path
        if type_code in COMPRESSED_ROWS:
            data = uncompress(bytes(data))
        after = fields["columns_after_image"]
        out = _rowtext.verbose(data, _KIND.get(type_code, 1), key[0], key[1], fields["columns_before_image"],
                               b"" if after is None else after, key[2])
        if out is not None:
            return out
    lines = verbose_lines(table, decode_rows(table, fields, type_code), type_code)
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


def verbose_lines(table: Table, rows: list[dict], type_code: int) -> list[str]:
    """``### INSERT INTO `db`.`t` / ### SET / ###   @1=...`` as mysqlbinlog -v prints them."""
    name = f"`{table.db}`.`{table.name}`"
    if isinstance(rows, RawRows):
        return [f"### {name}: row images not decoded ({len(rows.data)} bytes): {rows.reason}"]
    out = []

    def image(img):
        return [f"###   @{i + 1}={'NULL' if v is None else v.text}" for i, v in img]
    for r in rows:
        if r["before"] is not None and r["after"] is not None:
            out += [f"### UPDATE {name}", "### WHERE"] + image(r["before"]) + ["### SET"] + image(r["after"])
        elif r["before"] is not None:
            out += [f"### DELETE FROM {name}", "### WHERE"] + image(r["before"])
        else:
            out += [f"### INSERT INTO {name}", "### SET"] + image(r["after"])
    return out


def json_loads(text):
    import json as _json

    return None if text is None else _json.loads(text)


def _dump(doc) -> str:
    from .codecs.mysql_json import dumps

    return dumps(doc)


# server character set -> Python codec (none: no codec in Python; the value stays bytes)
CODECS = {
    "utf8mb4": "utf-8", "utf8mb3": "utf-8", "ascii": "ascii", "latin1": "cp1252", "latin2": "iso8859_2",
    "latin5": "iso8859_9", "latin7": "iso8859_13", "cp1250": "cp1250", "cp1251": "cp1251",
    "cp1256": "cp1256", "cp1257": "cp1257", "cp850": "cp850", "cp852": "cp852", "cp866": "cp866",
    "cp932": "cp932", "greek": "iso8859_7", "hebrew": "iso8859_8", "koi8r": "koi8_r", "koi8u": "koi8_u",
    "macce": "mac_latin2", "macroman": "mac_roman", "sjis": "shift_jis", "ujis": "euc_jp",
    "eucjpms": "euc_jp", "euckr": "euc_kr", "gb2312": "gb2312", "gbk": "gbk", "gb18030": "gb18030",
    "big5": "big5", "tis620": "tis_620", "ucs2": "utf-16-be", "utf16": "utf-16-be",
    "utf16le": "utf-16-le", "utf32": "utf-32-be",
}


def column_text(col: Column, raw: bytes) -> str | None:
    """A text column's value as a str, by the character set its collation names (optional
    metadata); None when unknown or not decodable. MySQL's latin1 is cp1252 with the five
    bytes cp1252 leaves undefined mapped straight to U+0081... (as latin-1 does)."""
    from .collations import CHARSET_OF

    codec = CODECS.get(CHARSET_OF.get(col.collation)) if col.collation is not None else None
    if codec is None:
        return None
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        if codec == "cp1252":
            return "".join(bytes([b]).decode("cp1252", "strict") if b not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)
                           else chr(b) for b in raw)
        return None


def json_value(v: Value | None):
    """A JSON-safe form: numbers as numbers, DECIMAL as text, bytes as UTF-8 text or 0x-hex."""
    if v is None:
        return None
    x = v.value
    if isinstance(x, str) and x[:1] in "{[":  # JSON columns: their text
        return x
    if isinstance(x, (bytes, bytearray)):
        try:
            return bytes(x).decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + bytes(x).hex()
    if isinstance(x, decimal.Decimal):
        return str(x)
    if isinstance(x, Geometry):
        return {"srid": x.srid, "wkb": x.wkb.hex()}
    if isinstance(x, tuple):
        return "%04d-%02d-%02d" % x
    return x


def rows_json(rows: list[dict], table: Table | None = None) -> list[dict]:
    """JSON rows keyed ``@N``, or by column name when the binlog carries names; unsigned
    columns (when the binlog says which) as unsigned numbers, ENUM/SET as their strings."""
    if isinstance(rows, RawRows):
        return [{"raw": rows.data.hex(), "reason": rows.reason}]
    names = table.column_names if table is not None else None
    unsigned = table.unsigned if table is not None else frozenset()
    widths = {TINY: 8, SHORT: 16, INT24: 24, LONG: 32, LONGLONG: 64}

    def one(k, v):
        x = json_value(v)
        if table is not None and x is not None:
            col = table.columns[k]
            if isinstance(v.value, (bytes, bytearray)) and col.collation is not None and col.is_character:
                if col.collation == BINARY_COLLATION:
                    return "0x" + bytes(v.value).hex()  # BINARY / VARBINARY / BLOB: bytes, never text
                text = column_text(col, bytes(v.value))  # text in its own character set
                if text is not None:
                    return text
            if k in unsigned and col.type in widths and isinstance(x, int):
                x %= 1 << widths[col.type]
            if table.enum_values and k in table.enum_values and isinstance(x, int) and 0 < x <= len(table.enum_values[k]):
                x = table.enum_values[k][x - 1]
            elif table.set_values and k in table.set_values and isinstance(x, int):
                x = ",".join(s for b, s in enumerate(table.set_values[k]) if x >> b & 1)
        return x

    def img(i):
        if i is None:
            return None
        return {(names[k] if names and k < len(names) else f"@{k + 1}"): one(k, v) for k, v in i}
    return [{"before": img(r["before"]), "after": img(r["after"])} for r in rows]

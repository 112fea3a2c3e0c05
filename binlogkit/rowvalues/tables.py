"""Table maps as the row decoder needs them: column types and metadata, and what the optional
metadata adds (names, signedness, charsets, ENUM/SET strings, geometry types, primary key),
plus the column type hints a user gives for types the binlog cannot name."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace

from ..constants import EventType as T
from ..flavor import geometry_has_charset

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
    def max_length(self) -> int:
        """CHAR/BINARY columns (type STRING): the most bytes a value takes, which sets the size
        of its length prefix (MySQL packs bits of it into the metadata's high byte)."""
        m = self.meta
        return (((m >> 4) & 0x300) ^ 0x300) + (m & 0xFF)

    @property
    def is_character(self) -> bool:
        return self.real_type in (STRING, VAR_STRING, VARCHAR, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)


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
    from ..codecs.common import read_length

    out: dict = {}
    chars = [c.index for c in columns if c.is_character or (c.type == GEOMETRY and geometry_has_charset(flavor))]
    p = 0
    while p < len(data):
        kind = data[p]
        n, p = read_length(data, p + 1)
        v = data[p:p + n]
        p += n
        if kind == 1:
            numeric = [c.index for c in columns if c.type in NUMERIC]
            out["unsigned"] = frozenset(i for k, i in enumerate(numeric) if v[k // 8] >> (7 - k % 8) & 1)
        elif kind in (2, 3):
            nums, q = [], 0
            while q < len(v):
                k, q = read_length(v, q)
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
                k, q = read_length(v, q)
                kinds.append(GEOMETRY_NAMES[k] if k < len(GEOMETRY_NAMES) else str(k))
            out["geometry_types"] = dict(zip([c.index for c in columns if c.type == GEOMETRY], kinds))
        elif kind == 4:
            names, q = [], 0
            while q < len(v):
                ln, q = read_length(v, q)
                names.append(v[q:q + ln].decode("utf-8", "replace"))
                q += ln
            out["column_names"] = tuple(names)
        elif kind in (5, 6):
            cols = [c.index for c in columns if (c.meta >> 8 if c.type == STRING else c.type) == (SET if kind == 5 else ENUM)]
            lists, q = [], 0
            while q < len(v):
                cnt, q = read_length(v, q)
                vals = []
                for _ in range(cnt):
                    ln, q = read_length(v, q)
                    vals.append(v[q:q + ln].decode("utf-8", "replace"))
                    q += ln
                lists.append(tuple(vals))
            out["set_values" if kind == 5 else "enum_values"] = dict(zip(cols, lists))
        elif kind in (8, 9):  # SIMPLE_PRIMARY_KEY: column indexes; PRIMARY_KEY_WITH_PREFIX: (index, prefix)
            keys, q = [], 0
            while q < len(v):
                k, q = read_length(v, q)
                keys.append(k)
                if kind == 9:
                    _, q = read_length(v, q)
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

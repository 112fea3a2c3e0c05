"""Table maps as the row decoder needs them: column types and metadata, and what the optional
metadata adds (names, signedness, charsets, ENUM/SET strings, geometry types, primary key),
plus the column type hints a user gives for types the binlog cannot name."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace

from ..constants import COMPRESSED_ROWS_TYPES as COMPRESSED_ROWS, ROWS_TYPES, ColumnType as C, EventType as T
from ..flavor import geometry_has_charset, old_temporals_may_be_fractional, tool_escapes_strings

# column type codes (constants.ColumnType) as plain ints: compared per value, and an IntEnum
# comparison costs a Python call
(DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24, DATE, TIME, DATETIME, YEAR, NEWDATE,
 VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2, VECTOR, JSON, NEWDECIMAL, ENUM, SET, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB,
 BLOB, VAR_STRING, STRING, GEOMETRY) = (int(C.DECIMAL), int(C.TINY), int(C.SHORT), int(C.LONG), int(C.FLOAT),
                                        int(C.DOUBLE), int(C.NULL), int(C.TIMESTAMP), int(C.LONGLONG),
                                        int(C.INT24), int(C.DATE), int(C.TIME), int(C.DATETIME), int(C.YEAR),
                                        int(C.NEWDATE), int(C.VARCHAR), int(C.BIT), int(C.TIMESTAMP2),
                                        int(C.DATETIME2), int(C.TIME2), int(C.VECTOR), int(C.JSON),
                                        int(C.NEWDECIMAL), int(C.ENUM), int(C.SET), int(C.TINY_BLOB),
                                        int(C.MEDIUM_BLOB), int(C.LONG_BLOB), int(C.BLOB), int(C.VAR_STRING),
                                        int(C.STRING), int(C.GEOMETRY))

META_BYTES = {FLOAT: 1, DOUBLE: 1, BLOB: 1, GEOMETRY: 1, JSON: 1, VECTOR: 1, TIMESTAMP2: 1, DATETIME2: 1, TIME2: 1,
              VARCHAR: 2, VAR_STRING: 2, STRING: 2, NEWDECIMAL: 2, BIT: 2, ENUM: 2, SET: 2}
WRITE = {T.WRITE_ROWS_EVENT, T.WRITE_ROWS_EVENT_V1, T.PRE_GA_WRITE_ROWS_EVENT, T.WRITE_ROWS_COMPRESSED_EVENT,
         T.WRITE_ROWS_COMPRESSED_EVENT_V1}
DELETE = {T.DELETE_ROWS_EVENT, T.DELETE_ROWS_EVENT_V1, T.PRE_GA_DELETE_ROWS_EVENT, T.DELETE_ROWS_COMPRESSED_EVENT,
          T.DELETE_ROWS_COMPRESSED_EVENT_V1}


BINARY_COLLATION = 63
# what a column hint may ask for: types the binlog does not name (MariaDB's UUID and INET6 reach
# it as BINARY(16), INET4 as BINARY(4)); see ``hinted``
HINTS = ("uuid", "inet6", "inet4")
# ... and the fractional precision of MariaDB's pre-10.1 TIME / DATETIME / TIMESTAMP columns
# (mysql56_temporal_format=OFF, or tables made before 10.1): logged as types 11 / 12 / 7 with no
# metadata, so the binlog does not say how many bytes a value takes. ``time(3)`` etc.
TEMPORAL_HINTS = {"time": TIME, "datetime": DATETIME, "timestamp": TIMESTAMP}
_TEMPORAL_HINT = re.compile(r"(time|datetime|timestamp)\(([0-6])\)")
HINT_NAMES = ", ".join(HINTS) + ", time(N), datetime(N), timestamp(N) (N = 0-6)"


def temporal_hint(hint: str | None) -> tuple[int, int] | None:
    """``"time(3)"`` -> (TIME, 3); None for any other hint."""
    m = _TEMPORAL_HINT.fullmatch(hint or "")
    return (TEMPORAL_HINTS[m.group(1)], int(m.group(2))) if m else None



def _known_hint(kind: str) -> bool:
    return kind in HINTS or temporal_hint(kind) is not None


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
        """A column the optional metadata's charset fields count (MySQL counts VECTOR, whose
        collation is binary, among them: seen in MySQL 9.7's table maps)."""
        return self.real_type in (STRING, VAR_STRING, VARCHAR, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, VECTOR)


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
    vector_dimensions: dict[int, int] | None = None  # MySQL 9's VECTOR(n) per vector column (-vv names it)
    # flavor: may TIME/DATETIME/TIMESTAMP (11/12/7) be MariaDB's pre-10.1 fractional layout?
    old_temporals_may_be_fractional: bool = False
    # flavor: does its own tool backslash-escape ' and \ in strings (mysqlbinlog 8.0+)?
    escape_strings: bool = False
    nullable: frozenset[int] = frozenset()      # columns the map's null bitmap says may be NULL (-vv)

    def column_name(self, index: int) -> str:
        names = self.column_names
        return names[index] if names and index < len(names) else f"@{index + 1}"


NUMERIC = {TINY, SHORT, INT24, LONG, LONGLONG, FLOAT, DOUBLE, NEWDECIMAL, DECIMAL}

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
_CP1252_HOLES = (0x81, 0x8D, 0x8F, 0x90, 0x9D)


def charset_text(collation: int | None, raw: bytes) -> str | None:
    """``raw`` as a str in the character set collation ``collation`` names (the optional
    metadata's charset fields); None when unknown or not decodable. MySQL's latin1 is cp1252
    with the five bytes cp1252 leaves undefined mapped straight to U+0081... (as latin-1 does)."""
    from ..collations import CHARSET_OF

    charset = CHARSET_OF.get(collation) if collation is not None else None
    codec = CODECS.get(charset) if charset is not None else None
    if codec is None:
        return None
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        if codec == "cp1252":
            return "".join(chr(b) if b in _CP1252_HOLES else bytes([b]).decode("cp1252") for b in raw)
        return None


def _packed_list(v: bytes) -> list[int]:
    from ..codecs.common import read_length

    nums, q = [], 0
    while q < len(v):
        k, q = read_length(v, q)
        nums.append(k)
    return nums


def _charsets(kind_default: bool, v: bytes, cols: list[int]) -> dict[int, int]:
    """DEFAULT_CHARSET / ENUM_AND_SET_DEFAULT_CHARSET: a default collation, then (n, collation)
    pairs for the n-th column of ``cols`` when it differs; COLUMN_CHARSET /
    ENUM_AND_SET_COLUMN_CHARSET: a collation per column of ``cols``."""
    nums = _packed_list(v)
    if not kind_default or not nums:
        return dict(zip(cols, nums))
    coll = dict.fromkeys(cols, nums[0])
    coll.update({cols[i]: c for i, c in zip(nums[1::2], nums[2::2]) if i < len(cols)})
    return coll


def parse_optional_metadata(data: bytes, columns: tuple[Column, ...], flavor=None) -> dict:
    """The TLV list after the null bitmap: 1 SIGNEDNESS (a bit per numeric column, high bit
    first), 2 DEFAULT_CHARSET (a default collation, then (index, collation) pairs for the
    character columns that differ), 3 COLUMN_CHARSET (a collation per character column),
    4 COLUMN_NAME, 5 SET_STR_VALUE, 6 ENUM_STR_VALUE, 7 GEOMETRY_TYPE, 8 SIMPLE_PRIMARY_KEY,
    9 PRIMARY_KEY_WITH_PREFIX, 10 ENUM_AND_SET_DEFAULT_CHARSET and 11 ENUM_AND_SET_COLUMN_CHARSET
    (as 2 and 3, over the ENUM and SET columns: the character set their labels in 5 and 6 are
    written in), 13 VECTOR_DIMENSIONALITY (MySQL 9: a dimension per VECTOR column); others are
    skipped. Source: MySQL ``Table_map_event::Optional_metadata_fields``,
    MariaDB ``Table_map_log_event::init_*_field``."""
    from ..codecs.common import read_length

    out: dict = {}
    chars = [c.index for c in columns if c.is_character or (c.type == GEOMETRY and geometry_has_charset(flavor))]
    enum_sets = [c.index for c in columns if c.real_type in (ENUM, SET)]
    label_collations: dict[int, int] = {}  # ENUM/SET column -> the collation its labels are in
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
            out["collations"] = _charsets(kind == 2, v, chars)
        elif kind in (10, 11):
            label_collations = _charsets(kind == 10, v, enum_sets)
        elif kind == 13:
            out["vector_dimensions"] = dict(zip([c.index for c in columns if c.type == VECTOR], _packed_list(v)))
        elif kind == 7:
            kinds = [GEOMETRY_NAMES[k] if k < len(GEOMETRY_NAMES) else str(k) for k in _packed_list(v)]
            out["geometry_types"] = dict(zip([c.index for c in columns if c.type == GEOMETRY], kinds))
        elif kind == 4:
            names, q = [], 0
            while q < len(v):
                ln, q = read_length(v, q)
                names.append(v[q:q + ln].decode("utf-8", "replace"))
                q += ln
            out["column_names"] = tuple(names)
        elif kind in (5, 6):
            cols = [c.index for c in columns if c.real_type == (SET if kind == 5 else ENUM)]
            lists, q = [], 0
            while q < len(v):
                cnt, q = read_length(v, q)
                vals = []
                for _ in range(cnt):
                    ln, q = read_length(v, q)
                    vals.append(bytes(v[q:q + ln]))
                    q += ln
                lists.append(vals)
            out["set_values" if kind == 5 else "enum_values"] = dict(zip(cols, lists))  # decoded below
        elif kind in (8, 9):  # SIMPLE_PRIMARY_KEY: column indexes; PRIMARY_KEY_WITH_PREFIX: (index, prefix)
            keys, q = [], 0
            while q < len(v):
                k, q = read_length(v, q)
                keys.append(k)
                if kind == 9:
                    _, q = read_length(v, q)
            out["primary_key"] = tuple(keys)
    # labels in their column's character set (the charset fields may come after the labels)
    for key in ("set_values", "enum_values"):
        if key in out:
            out[key] = {i: tuple(_label(label_collations.get(i), raw) for raw in vals) for i, vals in out[key].items()}
    return out


def _label(collation: int | None, raw: bytes) -> str:
    text = charset_text(collation, raw)
    return raw.decode("utf-8", "replace") if text is None else text


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
    nulls = bytes(part.null_bitmap) if part is not None else b""
    table = Table(fields.table_id, bytes(fields.db).decode("utf-8", "replace"),
                  bytes(fields.table).decode("utf-8", "replace"), tuple(cols),
                  old_temporals_may_be_fractional=old_temporals_may_be_fractional(flavor),
                  escape_strings=tool_escapes_strings(flavor),
                  nullable=frozenset(i for i in range(len(cols)) if i // 8 < len(nulls) and nulls[i // 8] >> (i % 8) & 1),
                  **extra)
    if collations or hints:
        cols = [replace(c, collation=collations.get(c.index), hint=_hint_for(table, c.index, hints))
                for c in cols]
        table = replace(table, columns=tuple(cols))
    return table


def _hint_for(table: Table, index: int, hints: dict[str, str] | None) -> str | None:
    if not hints:
        return None
    keys = {f"{table.db}.{table.name}.@{index + 1}", f"{table.db}.{table.name}.{table.column_name(index)}"}
    col = table.columns[index]
    for pattern, kind in hints.items():
        if any(fnmatch.fnmatchcase(k, pattern) for k in keys):
            if not _known_hint(kind):
                raise ValueError(f"unknown column type hint {kind!r} (known: {HINT_NAMES})")
            temporal = temporal_hint(kind)
            if temporal is not None and temporal[0] != col.type:
                continue  # time(N) names TIME columns only (a wildcard may match others)
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
            kind = kind.strip().lower().replace(" ", "")
            if not sep or pattern.count(".") < 2 or not _known_hint(kind):
                raise ValueError(f"column type hint {one!r}: expected DB.TABLE.COLUMN=TYPE with TYPE one of "
                                 f"{HINT_NAMES} (COLUMN a name or @N; wildcards allowed)")
            out[pattern] = kind
    return out

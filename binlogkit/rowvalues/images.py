"""Row images of a rows event to rows of values, and to the ``### INSERT INTO ...`` lines of
``decode -v`` (by the optional C accelerator ``binlogkit._rowtext`` when it is built and knows
every column; this module is the reference it is tested against).

Per row: a null bitmap over the *present* columns (the columns bitmap), then the values of the
present, non-NULL columns. Pre-GA rows events (20-22) have a layout of their own (``_pre_ga``)."""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, replace
from typing import Any

from ..codecs.compression import uncompress
from ..codecs.rows import UPDATE_ROWS
from ..constants import PRE_GA_ROWS_TYPES as PRE_GA, EventType as T
from ..errors import BodyLengthError
from .._optional import load_c
from .tables import (BINARY_COLLATION, BIT, BLOB, COMPRESSED_ROWS, DATE, DATETIME, DATETIME2, DECIMAL, DELETE, DOUBLE,
                     ENUM, FLOAT, GEOMETRY, INT24, JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL,
                     SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR,
                     VECTOR, WRITE, YEAR, Column, Table, temporal_hint)
from .values import JsonDiff, UnknownColumnType, Value, prefixed, quote_text, reader

_rowtext: Any = load_c("_rowtext")  # the optional C accelerator (setup.py); BINLOGKIT_PURE_PYTHON=1 turns it off
if _rowtext is not None:
    import decimal as _decimal

    from .values import Geometry, timestamp_value
    _rowtext.configure(Value, _decimal.Decimal, Geometry, timestamp_value)
C_ROWTEXT: Any = _rowtext   # the C accelerator's module, or None (public: rowvalues re-exports it)


def _bits(b: bytes, n: int) -> list[bool]:
    return [bool(b[i // 8] >> (i % 8) & 1) for i in range(n)]


@dataclass(frozen=True)
class RawRows:
    """The undecoded row images of an event whose table has a column of an unknown type."""

    data: bytes
    reason: str


def _plan(table: Table, bitmap: bytes, width: int) -> tuple:
    """The present columns of a columns bitmap, the size of their null bitmap and a reader per
    column: made once per table map and bitmap, reused for every row."""
    plans = table.__dict__.get("_plans")
    if plans is None:
        plans = {}
        object.__setattr__(table, "_plans", plans)
    key = (bytes(bitmap), width)
    plan = plans.get(key)
    if plan is None:
        cols = tuple(c for c, on in zip(table.columns, _bits(key[0], width)) if on)
        plan = plans[key] = (cols, (len(cols) + 7) // 8, tuple(reader(c, table.escape_strings) for c in cols))
    return plan


def _image(plan: tuple, b: bytes, p: int, partial: set[int] | frozenset[int] = frozenset(),
           before: dict | None = None) -> tuple[list[tuple[int, Value | None]], int]:
    cols, nb, readers = plan
    if p + nb > len(b):
        raise IndexError
    nulls = int.from_bytes(b[p:p + nb], "little")
    p += nb
    out: list[tuple[int, Value | None]] = []
    for k, c in enumerate(cols):
        if nulls >> k & 1:
            out.append((c.index, None))
            continue
        try:
            if partial and c.index in partial:  # a JSON diff against the before image's value
                raw, p = prefixed(b, p, c.meta or 4)  # length sized like the column's own
                out.append((c.index, _json_diff(c.index, raw, (before or {}).get(c.index))))
                continue
            v, p = readers[k](b, p)
        except (IndexError, struct.error):
            raise BodyLengthError(f"value of column @{c.index + 1} (type {c.type}) runs past the row image",
                                  field=f"@{c.index + 1}") from None
        out.append((c.index, v))
    return out, p


def _json_diff(index: int, raw: bytes, old) -> Value:
    """A partial JSON update's value: printed as mysqlbinlog -v prints the diffs
    (``JSON_REPLACE(@3, '$.n', 999)``), holding the operations and, when the before image
    has the document (``old``, its text), the result of applying them."""
    from ..codecs.mysql_json import OPERATIONS, apply_diffs, diff_sql, dumps, parse_diffs

    try:
        diffs = parse_diffs(raw)
    except (ValueError, IndexError, KeyError, struct.error, UnicodeDecodeError):
        raise BodyLengthError(f"column @{index + 1}: malformed partial JSON diff", field=f"@{index + 1}") from None
    result = None
    if isinstance(old, str):
        try:
            result = dumps(apply_diffs(json.loads(old), raw))
        except (ValueError, IndexError, KeyError, TypeError):
            result = None  # the diff does not fit the logged document: no result claimed
    ops = tuple((OPERATIONS[op], path, value) for op, path, value in diffs)
    return Value(JsonDiff(ops, result), diff_sql(f"@{index + 1}", diffs))


def _uncompressed(table: Table, fields, type_code: int) -> bytes:
    """The row images of an event, MariaDB's compressed rows events inflated."""
    data = fields["rows"]
    if type_code not in COMPRESSED_ROWS:
        return data
    try:
        return uncompress(bytes(data))
    except (ValueError, zlib.error) as exc:
        raise BodyLengthError(f"row image of `{table.db}`.`{table.name}` does not decode: {exc}") from None


def _c_inputs(table: Table, fields, type_code: int) -> tuple | None:
    """The arguments both C entry points take for this event (images, kind, column types and
    metadata, column bitmaps), or None when the accelerator is not built or the table / event
    is not for it (pre-GA events: their layout is Python's alone, ``_pre_ga``)."""
    if _rowtext is None or type_code == T.PARTIAL_UPDATE_ROWS_EVENT or type_code in PRE_GA or not c_args(table):
        return None
    key = c_args(table)
    after = fields["columns_after_image"]  # item access: a Container's attribute access is ~1 us here
    return (_uncompressed(table, fields, type_code), _KIND.get(type_code, 1), key[0], key[1],
            fields["columns_before_image"], b"" if after is None else after)


def decode_rows(table: Table, fields, type_code: int) -> list[dict] | RawRows:
    """[{"before": [(index, Value|None)...] | None, "after": [...] | None}, ...]; any image
    that does not fit raises ``BodyLengthError``; a table with a column type this decoder does
    not know gives ``RawRows`` (the images undecoded, and why)."""
    args = _c_inputs(table, fields, type_code)
    out = None if args is None else _rowtext.rows(*args, c_args(table)[4], table.escape_strings)
    return out if out is not None else decode_rows_python(table, fields, type_code)


def decode_rows_python(table: Table, fields, type_code: int) -> list[dict] | RawRows:
    """``decode_rows`` without the C accelerator: the reference it is tested against."""
    if type_code in PRE_GA:
        return _pre_ga(table, fields, type_code)
    try:
        return _decode_rows(table, fields, type_code)
    except UnknownColumnType as exc:
        return RawRows(bytes(_uncompressed(table, fields, type_code)), str(exc))
    except BodyLengthError as exc:
        unsized = _old_temporals(table)
        if not unsized:
            raise
        # valid rows, most likely: MariaDB's pre-10.1 fractional TIME/DATETIME/TIMESTAMP, whose
        # size the binlog does not carry -- say so, and how to give it, instead of failing the file
        cols = ", ".join(f"{table.column_name(c.index)} ({_OLD_NAMES[c.type]})" for c in unsized[:4])
        cols += f" and {len(unsized) - 4} more" if len(unsized) > 4 else ""
        first = unsized[0]
        return RawRows(bytes(_uncompressed(table, fields, type_code)),
                       f"{exc}; columns {cols} may hold fractional seconds in MariaDB's pre-10.1 layout "
                       "(mysql56_temporal_format=OFF), whose precision the binlog does not carry: give it, "
                       f"e.g. --column-type '{table.db}.{table.name}.{table.column_name(first.index)}="
                       f"{_OLD_NAMES[first.type].lower()}(N)'")
    except (IndexError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise BodyLengthError(f"row image of `{table.db}`.`{table.name}` does not decode: {exc}") from None


_OLD_NAMES = {TIME: "TIME", DATETIME: "DATETIME", TIMESTAMP: "TIMESTAMP"}


def _old_temporals(table: Table) -> list:
    """TIME / DATETIME / TIMESTAMP columns that may be MariaDB's pre-10.1 fractional layout
    (by the flavor) and have no precision hint."""
    if not table.old_temporals_may_be_fractional:
        return []
    return [c for c in table.columns if c.type in _OLD_NAMES and temporal_hint(c.hint) is None]


def _decode_rows(table: Table, fields, type_code: int) -> list[dict]:
    data = bytes(_uncompressed(table, fields, type_code))
    width = fields.width
    before_plan = _plan(table, fields.columns_before_image, width)
    after_bitmap = fields.columns_after_image
    if after_bitmap is None and (type_code in UPDATE_ROWS or type_code == T.PARTIAL_UPDATE_ROWS_EVENT):
        raise BodyLengthError(f"update rows event of `{table.db}`.`{table.name}` without an after-image bitmap")
    after_plan = before_plan if after_bitmap is None else _plan(table, after_bitmap, width)  # used by updates only
    rows: list[dict] = []
    p, start = 0, -1
    while p < len(data):
        if p == start:
            raise BodyLengthError(f"a row image of `{table.db}`.`{table.name}` holds no bytes: "
                                  f"{len(data) - p} bytes left undecoded")
        start = p
        if type_code == T.PARTIAL_UPDATE_ROWS_EVENT:
            from ..codecs.common import read_length

            before, p = _image(before_plan, data, p)
            options, p = read_length(data, p)
            partial: set[int] = set()
            if options & 1:  # PARTIAL_JSON_UPDATES: a bit per JSON column of the after image
                json_cols = [c.index for c in after_plan[0] if c.type == JSON]
                nb = (len(json_cols) + 7) // 8
                partial = {i for i, bit in zip(json_cols, _bits(data[p:p + nb], len(json_cols))) if bit}
                p += nb
            after, p = _image(after_plan, data, p, partial, {i: v.value for i, v in before if v is not None})
            rows.append({"before": before, "after": after})
        elif type_code in UPDATE_ROWS:
            before, p = _image(before_plan, data, p)
            after, p = _image(after_plan, data, p)
            rows.append({"before": before, "after": after})
        elif type_code in DELETE:
            before, p = _image(before_plan, data, p)
            rows.append({"before": before, "after": None})
        else:
            after, p = _image(before_plan, data, p)
            rows.append({"before": None, "after": after})
    return rows


# -- pre-GA rows events (20-22: MySQL 5.1.5 to 5.1.17) ------------------------------------------
# MariaDB reads them with sql/log_event_old.cc and sql/rpl_record_old.cc (unpack_row_old), MySQL
# 5.1 wrote them with pack_row_old. Per row::
#
#   null bytes   the table record's own null bytes: bit 0 is the delete mark ("X" bit, set) when
#                the table has fixed-size records (no VARCHAR, no BLOB/TEXT), then a bit per
#                *nullable* column in column order; the bits after the last are set
#   values       every column the columns bitmap names, NULL or not (a NULL column carries its
#                default), each as Field::pack writes it: CHAR and VARCHAR a length then the
#                bytes (CHAR without its trailing spaces), BLOB/TEXT a 2-byte length
#
# An update carries one columns bitmap and before/after image pairs. The table maps of those
# versions carry no metadata and no nullability, and the rows events are read back only against
# the table's own definition: the reading here takes every column as nullable, CHAR / VARCHAR
# values of at most 255 bytes (a one-byte length) and BLOB/TEXT (two), and checks what it can
# -- the delete mark, the bits past the last column set, a NULL column carrying an empty default,
# every image ending exactly where the event does. Images that do not fit are left raw
# (``RawRows``, saying why) instead of guessed at; columns of a type whose size only the table
# definition gives (DECIMAL, BIT, JSON) too.
_VARIABLE_RECORD = {VARCHAR, VAR_STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, GEOMETRY}
_PRE_GA_META = {STRING: 0xFEFF, VARCHAR: 255, VAR_STRING: 255, BLOB: 2, GEOMETRY: 4}  # when the map has none
_PRE_GA_UNSIZED = {DECIMAL, NEWDECIMAL, BIT, JSON, ENUM, SET}


class _NotThisLayout(Exception):
    """A pre-GA image that does not fit the reading tried."""


def _pre_ga_column(c: Column) -> Column:
    if c.type in _PRE_GA_UNSIZED and not c.meta:
        raise UnknownColumnType(f"column @{c.index + 1} has type {c.type}, whose size a pre-GA table map does "
                                "not give", field=f"@{c.index + 1}")
    meta = _PRE_GA_META.get(c.type)
    return replace(c, meta=meta) if meta is not None and not c.meta else c


def _empty(v: Value) -> bool:
    """A value that is a column's default when none was declared: what a NULL column carries."""
    val = v.value
    if isinstance(val, (bytes, bytearray)):
        return not bytes(val).strip(b"\0 ")
    if isinstance(val, (int, float)) and not isinstance(val, bool):
        return val == 0
    return not v.text.strip("'").replace("0", "").strip(":- .")


def _pre_ga(table: Table, fields, type_code: int) -> list[dict] | RawRows:
    data = bytes(fields.rows)
    try:
        cols = tuple(_pre_ga_column(c) for c in table.columns)
    except UnknownColumnType as exc:
        return RawRows(data, f"pre-GA rows (MySQL 5.1.5-5.1.17): {exc}")
    width = fields.width
    if width != len(cols):
        raise BodyLengthError(f"pre-GA rows event of `{table.db}`.`{table.name}` is {width} columns wide, its "
                              f"table map has {len(cols)}")
    present = tuple(c for c, on in zip(cols, _bits(bytes(fields.columns_before_image), width)) if on)
    readers = tuple(reader(c, table.escape_strings) for c in present)
    fixed = not any(c.type in _VARIABLE_RECORD for c in cols)
    for mark in ((1, 0) if fixed else (0,)):
        try:
            return _pre_ga_rows(data, type_code, present, readers, mark, width)
        except _NotThisLayout:
            continue
    return RawRows(data, f"pre-GA row images (MySQL 5.1.5-5.1.17) of `{table.db}`.`{table.name}` do not fit the "
                   "reading their table map allows (every column nullable, CHAR/VARCHAR up to 255 bytes, TEXT/BLOB "
                   "up to 64 KiB): the binlog of those versions does not say more; the server reads them against "
                   "the table's definition")


def _pre_ga_rows(data: bytes, type_code: int, present: tuple, readers: tuple, mark: int, width: int) -> list[dict]:
    nb = (mark + width + 7) // 8
    filler = ((1 << (8 * nb)) - 1) >> (mark + width) << (mark + width)

    def image(p: int) -> tuple[list[tuple[int, Value | None]], int]:
        if p + nb > len(data):
            raise _NotThisLayout
        bits = int.from_bytes(data[p:p + nb], "little")
        if (mark and not bits & 1) or bits & filler != filler:
            raise _NotThisLayout
        p += nb
        out: list[tuple[int, Value | None]] = []
        for c, read in zip(present, readers):
            try:
                v, p = read(data, p)
            except (IndexError, struct.error, ValueError, BodyLengthError):
                raise _NotThisLayout from None
            if bits >> (mark + c.index) & 1:
                if not _empty(v):  # a NULL carries its default: this reading of the bits is wrong
                    raise _NotThisLayout
                out.append((c.index, None))
            else:
                out.append((c.index, v))
        return out, p

    rows: list[dict] = []
    p = 0
    while p < len(data):
        if type_code == T.PRE_GA_UPDATE_ROWS_EVENT:
            before, p = image(p)
            after, p = image(p)
            rows.append({"before": before, "after": after})
        elif type_code == T.PRE_GA_DELETE_ROWS_EVENT:
            before, p = image(p)
            rows.append({"before": before, "after": None})
        else:
            after, p = image(p)
            rows.append({"before": None, "after": after})
    return rows


def c_args(table: Table) -> tuple:
    """What the C calls need, made once per table map: column types, metadata, the quoted name,
    the ` /* name */` notes, the BINARY(n) pad lengths; () when the table is not for C (hints)."""
    key = table.__dict__.get("_c_args")
    if key is None:
        notes = name_notes(table)
        pads = b"".join((_binary_len(c) or 0).to_bytes(2, "little") for c in table.columns)
        key = () if any(c.hint for c in table.columns) else (
            bytes(c.type for c in table.columns), b"".join(c.meta.to_bytes(2, "little") for c in table.columns),
            f"`{table.db}`.`{table.name}`".encode("utf-8", "surrogateescape"),
            None if notes is None else tuple(n.encode("utf-8", "surrogateescape") for n in notes), pads)
        object.__setattr__(table, "_c_args", key)
    return key


def _binary_len(c) -> int | None:
    """BINARY(n) columns (binary collation, known from the optional metadata): n."""
    if c.type == STRING and c.meta >> 8 not in (ENUM, SET) and c.collation == BINARY_COLLATION:
        return c.max_length
    return None


_KIND: dict[int, int] = {**{t: 0 for t in WRITE}, **{t: 2 for t in DELETE}}


def verbose_text(table: Table, fields, type_code: int, types: bool = False) -> bytes:
    """`decode -v` lines of one rows event, as bytes (string values are written as stored):
    by the C accelerator when it is built and knows every column, else by ``verbose_lines``;
    a malformed image raises ``BodyLengthError`` either way (the Python decoder names it).
    ``types``: -vv, each value line ending in the tool's type comment (``type_notes``)."""
    args = _c_inputs(table, fields, type_code)
    if types:  # the rows as values (C or Python), their lines here
        rows = decode_rows(table, fields, type_code)
        return "".join(line + "\n" for line in verbose_lines(table, rows, type_code, types=True)).encode(
            "utf-8", "surrogateescape")
    out = None if args is None else _rowtext.verbose(*args, *c_args(table)[2:4], table.escape_strings)
    if out is not None:
        return out
    # C stepped aside: the reference decoder prints the rows or names what is wrong with them
    lines = verbose_lines(table, decode_rows_python(table, fields, type_code), type_code)
    return "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")


_BLOB_NAMES = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT", 4: "LONGBLOB/LONGTEXT"}
_TYPE_NAMES = {TINY: "TINYINT", SHORT: "SHORTINT", INT24: "MEDIUMINT", LONG: "INT", LONGLONG: "LONGINT",
               FLOAT: "FLOAT", DOUBLE: "DOUBLE", TIMESTAMP: "TIMESTAMP", DATETIME: "DATETIME", TIME: "TIME",
               DATE: "DATE", NEWDATE: "DATE", YEAR: "YEAR", GEOMETRY: "GEOMETRY", JSON: "JSON"}


def type_name(c: Column, table: Table | None = None) -> str:
    """The SQL type mysqlbinlog -vv names a column by (log_event_print_value's ``typestr``;
    MySQL 9's VECTOR with its dimension from the table's optional metadata)."""
    t, m = c.type, c.meta
    if t == VECTOR:
        dim = ((table.vector_dimensions if table is not None else None) or {}).get(c.index)
        return "VECTOR" if dim is None else f"VECTOR({dim})"
    if t == STRING and m >= 256:
        byte0, byte1 = m >> 8, m & 0xFF
        if byte0 & 0x30 != 0x30:  # a long CHAR(): length bits in the type byte
            t, length = byte0 | 0x30, byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
        else:
            t, length = byte0, byte1
    else:
        length = m
    if t in _TYPE_NAMES:
        return _TYPE_NAMES[t]
    if t == NEWDECIMAL:
        return f"DECIMAL({m >> 8},{m & 0xFF})"
    if t == BIT:
        return f"BIT({(m & 0xFF) * 8 + (m >> 8)})"
    if t in (TIMESTAMP2, DATETIME2, TIME2):
        return f"{ {TIMESTAMP2: 'TIMESTAMP', DATETIME2: 'DATETIME', TIME2: 'TIME'}[t]}({m})"
    if t == ENUM:
        return {1: "ENUM(1 byte)", 2: "ENUM(2 bytes)"}.get(m & 0xFF, "")
    if t == SET:
        return f"SET({m & 0xFF} bytes)"
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
        return _BLOB_NAMES.get(m, "")
    if t in (VARCHAR, VAR_STRING):
        return f"VARSTRING({m})"
    if t == STRING:
        return f"STRING({length})"
    return ""


def type_notes(table: Table) -> tuple[str, ...]:
    """mysqlbinlog -vv's comment after each value, `` /* INT meta=0 nullable=1 is_null=0 */``: one
    per column for a value, then one per column for a NULL (the metadata as the tool keeps it:
    BIT's two bytes the other way round)."""
    got = table.__dict__.get("_type_notes")
    if got is None:
        out = []
        for null in (0, 1):
            for c in table.columns:
                meta = ((c.meta & 0xFF) << 8 | c.meta >> 8) if c.type == BIT else c.meta
                out.append(f" /* {type_name(c, table)} meta={meta} nullable={int(c.index in table.nullable)} "
                           f"is_null={null} */")
        got = tuple(out)
        object.__setattr__(table, "_type_notes", got)
    return got


def name_notes(table: Table) -> tuple[str, ...] | None:
    """`` /* name */`` per column when the binlog carries column names (optional metadata),
    the way mysqlbinlog -vv ends value lines with a comment; None without names."""
    names = table.column_names
    if not names:
        return None
    return tuple(f" /* {names[i].replace('*/', '* /')} */" if i < len(names) else ""
                 for i in range(len(table.columns)))


def verbose_lines(table: Table, rows: list[dict] | RawRows, type_code: int, types: bool = False) -> list[str]:
    """``### INSERT INTO `db`.`t` / ### SET / ###   @1=...`` as mysqlbinlog -v prints them,
    each value line ending `` /* name */`` when the binlog carries column names; ``types`` (-vv):
    ending in the tool's type comment instead (``type_notes``)."""
    name = f"`{table.db}`.`{table.name}`"
    if isinstance(rows, RawRows):
        return [f"### {name}: row images not decoded ({len(rows.data)} bytes): {rows.reason}"]
    out = []
    notes = name_notes(table)

    def image(img):
        if types:
            n, both = len(table.columns), type_notes(table)
            return [f"###   @{i + 1}={'NULL' if v is None else v.text}{both[i + n if v is None else i]}"
                    for i, v in img]
        if notes:
            return [f"###   @{i + 1}={'NULL' if v is None else v.text}{notes[i]}" for i, v in img]
        return [f"###   @{i + 1}={'NULL' if v is None else v.text}" for i, v in img]
    for r in rows:
        if r["before"] is not None and r["after"] is not None:
            out += [f"### UPDATE {name}", "### WHERE"] + image(r["before"]) + ["### SET"] + image(r["after"])
        elif r["before"] is not None:
            out += [f"### DELETE FROM {name}", "### WHERE"] + image(r["before"])
        else:
            out += [f"### INSERT INTO {name}", "### SET"] + image(r["after"])
    return out


"""Rows as JSON-safe values: numbers as numbers, DECIMAL as text, bytes as text in their own
character set (when the table map names it) or ``0x`` hex, geometry as SRID + WKB; keyed by
column name when the binlog carries names."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import cast

from .images import RawRows
from .tables import CODECS  # noqa: F401  (re-exported: rowvalues.CODECS)
from .tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY,
                     INT24, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME,
                     TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR, YEAR, Column, Table,
                     charset_text)
from .values import Geometry, JsonDiff, Value


def column_text(col: Column, raw: bytes) -> str | None:
    """A text column's value as a str, by the character set its collation names (optional
    metadata); None when unknown or not decodable (``tables.charset_text``)."""
    return charset_text(col.collation, raw)


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
        return format(x, "f")  # the server's text: DECIMAL(9,9) zero is 0.000000000, never 0E-9
    if isinstance(x, Geometry):
        return {"srid": x.srid, "wkb": x.wkb.hex()}
    if isinstance(x, JsonDiff):  # a partial JSON update: its operations, and the result when known
        from ..codecs.mysql_json import dumps

        return {"json_diff": [{"op": op, "path": path, **({} if op == "JSON_REMOVE" else {"value": dumps(val)})}
                              for op, path, val in x.diffs], "result": x.result}
    if isinstance(x, datetime.datetime):
        if x.tzinfo is not None:  # TIMESTAMP: seconds since the epoch, as mysqlbinlog prints it
            return float(v.text) if "." in v.text else int(v.text)
        return v.text.strip("'")  # DATETIME with its own fractional digits
    if isinstance(x, datetime.date):
        return x.isoformat()
    if isinstance(x, datetime.timedelta):
        return v.text.strip("'")
    if x == "0000-00-00 00:00:00" and v.text.isdigit():
        return int(v.text)  # the zero TIMESTAMP
    return x


WIDTHS = {TINY: 8, SHORT: 16, INT24: 24, LONG: 32, LONGLONG: 64}


def _bytes_json(v: Value):
    x = cast(bytes, v.value)  # called for byte-string columns only
    try:
        return x.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + x.hex()


def _converter(table: Table, k: int):
    """Value -> JSON-safe value for column ``k`` of ``table`` (made once per table map)."""
    col = table.columns[k]
    if col.type in WIDTHS:
        if k in table.unsigned:
            wrap = 1 << WIDTHS[col.type]
            return lambda v: v.value % wrap
        return lambda v: v.value
    if col.hint is None and col.collation is None and (
            col.type in (VARCHAR, VAR_STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)
            or (col.type == STRING and col.meta >> 8 not in (ENUM, SET))):
        return _bytes_json
    enums = (table.enum_values or {}).get(k)
    sets = (table.set_values or {}).get(k)

    def convert(v):
        x = json_value(v)
        if x is None:
            return x
        if isinstance(v.value, (bytes, bytearray)) and col.collation is not None and col.is_character:
            if col.collation == BINARY_COLLATION:
                return "0x" + bytes(v.value).hex()  # BINARY / VARBINARY / BLOB: bytes, never text
            text = column_text(col, bytes(v.value))  # text in its own character set
            if text is not None:
                return text
        if enums and isinstance(x, int):
            if 0 < x <= len(enums):
                x = enums[x - 1]
            elif x == 0:
                x = ""  # index 0: the error value an invalid string became, '' in SELECT
        elif sets and isinstance(x, int):
            x = ",".join(s for b, s in enumerate(sets) if x >> b & 1)
        return x
    return convert


def _json_plan(table: Table) -> tuple:
    plan = table.__dict__.get("_json_plan")
    if plan is None:
        plan = tuple((table.column_name(k), _converter(table, k)) for k in range(len(table.columns)))
        object.__setattr__(table, "_json_plan", plan)
    return plan


def rows_json(rows: list[dict], table: Table | None = None) -> list[dict]:
    """JSON rows keyed ``@N``, or by column name when the binlog carries names; unsigned
    columns (when the binlog says which) as unsigned numbers, ENUM/SET as their strings, text
    in its character set (when the binlog says which)."""
    if isinstance(rows, RawRows):
        return [{"raw": rows.data.hex(), "reason": rows.reason}]
    if table is None:
        def img(i):
            return None if i is None else {f"@{k + 1}": json_value(v) for k, v in i}
    else:
        plan = _json_plan(table)

        def img(i):
            if i is None:
                return None
            return {plan[k][0]: (None if v is None else plan[k][1](v)) for k, v in i}
    return [{"before": img(r["before"]), "after": img(r["after"])} for r in rows]


# --- the C loop's JSON rows (binlogkit/_fastdecode.c, `decode --json -v`) -------------------------
# How each column's JSON value is written there (its J_* kinds, same order): what ``_converter``
# above does, decided once per table map.
(J_INT, J_UINT, J_UTF8, J_HEX, J_SBCS, J_ASCII, J_NUM, J_ENUM, J_SET, J_FLOAT, J_DECIMAL, J_TEXT, J_TIMESTAMP,
 J_GEOMETRY, J_DATE) = range(15)
_J_OF_TYPE = {FLOAT: J_FLOAT, DOUBLE: J_FLOAT, NEWDECIMAL: J_DECIMAL, YEAR: J_NUM, BIT: J_NUM, DATE: J_DATE,
              NEWDATE: J_DATE, DATETIME: J_TEXT, DATETIME2: J_TEXT, TIME: J_TEXT, TIME2: J_TEXT,
              TIMESTAMP: J_TIMESTAMP, TIMESTAMP2: J_TIMESTAMP, GEOMETRY: J_GEOMETRY}
_BYTE_TYPES = (VARCHAR, VAR_STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)
# Python codecs that map each byte to one character on its own (charset_text decodes these a byte
# at a time in C, by a table); the other codecs' columns leave the table's rows to Python
_SINGLE_BYTE = {"cp1252", "iso8859_2", "iso8859_9", "iso8859_13", "cp1250", "cp1251", "cp1256", "cp1257", "cp850",
                "cp852", "cp866", "iso8859_7", "iso8859_8", "koi8_r", "koi8_u", "mac_latin2", "mac_roman",
                "tis_620"}
_SBCS_TABLES: dict[int, bytes] = {}


def _sbcs_table(collation: int) -> bytes | None:
    """A single-byte charset as charset_text decodes it: 256 code points, 4 bytes little-endian
    each (0xFFFFFFFF: a byte it does not decode, so the whole value is not text in it)."""
    got = _SBCS_TABLES.get(collation)
    if got is None:
        from ..collations import CHARSET_OF

        charset = CHARSET_OF.get(collation)
        codec = CODECS.get(charset) if charset is not None else None
        if codec not in _SINGLE_BYTE:
            return None
        cps = []
        for b in range(256):
            text = charset_text(collation, bytes([b]))
            cps.append(0xFFFFFFFF if text is None or len(text) != 1 else ord(text))
        got = _SBCS_TABLES[collation] = b"".join(c.to_bytes(4, "little") for c in cps)
    return got


def _c_json_column(table: Table, k: int) -> tuple[int, object] | None:
    """(J_* kind, its extra: labels or a charset table) for column ``k``, or None: not for C."""
    col = table.columns[k]
    if col.hint is not None:
        return None
    if col.type in WIDTHS:
        return (J_UINT if k in table.unsigned else J_INT), None
    enum_set = col.type == STRING and col.meta >> 8 in (ENUM, SET)
    if col.type in _BYTE_TYPES or (col.type == STRING and not enum_set):
        if col.collation is None:
            return J_UTF8, None
        if col.collation == BINARY_COLLATION:
            return J_HEX, None
        from ..collations import CHARSET_OF

        codec = CODECS.get(CHARSET_OF.get(col.collation) or "")
        if codec == "utf-8":
            return J_UTF8, None
        if codec == "ascii":
            return J_ASCII, None
        sbcs = _sbcs_table(col.collation)
        return None if sbcs is None else (J_SBCS, sbcs)
    kind = J_NUM if enum_set else _J_OF_TYPE.get(col.type)
    if kind == J_NUM:  # ints that ``convert`` maps by the labels the binlog gives
        enums = (table.enum_values or {}).get(k)
        sets = (table.set_values or {}).get(k)
        if enums:
            return J_ENUM, tuple(json.dumps(s).encode() for s in enums)
        if sets:
            return J_SET, tuple(json.dumps(s)[1:-1].encode() for s in sets)
    return None if kind is None else (kind, None)


def c_json_plan(table: Table | None) -> tuple | None:
    """What the C loop writes a table's JSON rows by, made once per table map: (column types,
    metadata, BINARY(n) pads, J_* kinds, the JSON keys with ``: ``, extras, and the line's
    ``, "table": ..., "rows": [`` part); None when its rows are Python's (no table, a hint, a
    column type or charset C does not write, two columns of one name)."""
    from .images import c_args

    if table is None:
        return None
    args = c_args(table)
    if not args:
        return None
    cols = [_c_json_column(table, k) for k in range(len(table.columns))]
    if any(c is None for c in cols):
        return None
    names = [table.column_name(k) for k in range(len(table.columns))]
    if len(set(names)) != len(names):
        return None
    head = ', "table": ' + json.dumps(f"{table.db}.{table.name}")
    if table.primary_key is not None:
        head += ', "primary_key": ' + json.dumps([table.column_name(i) for i in table.primary_key])
    return (args[0], args[1], args[4], bytes(c[0] for c in cols if c is not None),
            tuple(json.dumps(n).encode() + b": " for n in names),
            tuple(c[1] for c in cols if c is not None), (head + ', "rows": [').encode())

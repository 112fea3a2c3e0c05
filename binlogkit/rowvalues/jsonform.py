"""Rows as JSON-safe values: numbers as numbers, DECIMAL as text, bytes as text in their own
character set (when the table map names it) or ``0x`` hex, geometry as SRID + WKB; keyed by
column name when the binlog carries names."""

from __future__ import annotations

import datetime
import decimal
from typing import cast

from .images import RawRows
from .tables import CODECS  # noqa: F401  (re-exported: rowvalues.CODECS)
from .tables import (BINARY_COLLATION, BLOB, ENUM, INT24, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, SET, SHORT, STRING,
                     TINY, TINY_BLOB, VAR_STRING, VARCHAR, Column, Table, charset_text)
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

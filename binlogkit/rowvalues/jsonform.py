"""Rows as JSON-safe values: numbers as numbers, DECIMAL as text, bytes as text in their own
character set (when the table map names it) or ``0x`` hex, geometry as SRID + WKB; keyed by
column name when the binlog carries names."""

from __future__ import annotations

import datetime
import decimal

from .images import RawRows
from .tables import (BINARY_COLLATION, BLOB, ENUM, INT24, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, SET, SHORT, STRING,
                     TINY, TINY_BLOB, VAR_STRING, VARCHAR, Column, Table)
from .values import Geometry, Value

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
    from ..collations import CHARSET_OF

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
    x = v.value
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
        if enums and isinstance(x, int) and 0 < x <= len(enums):
            x = enums[x - 1]
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

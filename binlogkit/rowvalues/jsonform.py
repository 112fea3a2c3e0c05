"""Rows as JSON-safe values: numbers as numbers, DECIMAL as text, bytes as text in their own
character set (when the table map names it) or ``0x`` hex, geometry as SRID + WKB; keyed by
column name when the binlog carries names."""

from __future__ import annotations

import decimal

from .images import RawRows
from .tables import BINARY_COLLATION, INT24, LONG, LONGLONG, SHORT, TINY, Column, Table
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

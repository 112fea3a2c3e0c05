"""MySQL's binary JSON (the storage of JSON columns, in row images) to JSON text.

Layout (MySQL ``sql-common/json_binary.cc``): a type byte, then the value. Objects and arrays
come small (2-byte counts and offsets) or large (4-byte): element count, byte size, then for
objects the key entries (offset, 2-byte length), then value entries (type byte + offset, or the
value itself inline for literals and 16-bit integers — and 32-bit ones in large containers),
offsets counted from the start of the container. Scalars: literal (0 null, 1 true, 2 false),
int16/uint16/int32/uint32/int64/uint64, double, string (7-bit-group length + UTF-8), opaque
(MySQL type byte + length + bytes: DATE / TIME / DATETIME / TIMESTAMP as a packed 8-byte
integer, DECIMAL as precision, scale and the binary decimal; any other type is shown
``"base64:typeN:..."``).
Text as the servers print it (MariaDB's ``mysql_json.cc``, MySQL's ``Json_wrapper``):
``{"a": 1, "b": [true, null]}``, strings escaping only ``\\ " \n \r \b \f \t``, dates quoted
with six fractional digits, decimals as exact numbers.

A damaged or hostile document is a ValueError (the row decoder's FormatError), never unbounded
work: containers nested deeper than ``MAX_DEPTH`` (MySQL's JSON_DOCUMENT_MAX_DEPTH: no server
writes one) and more value entries read than the document has bytes (each entry takes at least
three of its own: more means offsets pointing back into containers already read, a document
that would print itself again and again) are refused. ``binlogkit/_rowarrow.c`` (export's C
path) prints the same text, and refuses the same documents.
"""

from __future__ import annotations

import base64
import decimal
import json
import struct

SMALL_OBJ, LARGE_OBJ, SMALL_ARR, LARGE_ARR, LITERAL = 0, 1, 2, 3, 4
INT16, UINT16, INT32, UINT32, INT64, UINT64, DOUBLE, STRING, OPAQUE = 5, 6, 7, 8, 9, 10, 11, 12, 15


def _varlen(b: bytes, p: int) -> tuple[int, int]:
    n = shift = 0
    for _ in range(5):
        c = b[p]
        p += 1
        n |= (c & 0x7F) << shift
        if not c & 0x80:
            return n, p
        shift += 7
    raise ValueError("JSON string length too long")


def _scalar(t: int, b: bytes, p: int):
    if t == LITERAL:
        return {0: None, 1: True, 2: False}[b[p]]
    if t in (INT16, UINT16, INT32, UINT32, INT64, UINT64, DOUBLE):
        fmt = {INT16: "<h", UINT16: "<H", INT32: "<i", UINT32: "<I", INT64: "<q", UINT64: "<Q", DOUBLE: "<d"}[t]
        return struct.unpack_from(fmt, b, p)[0]
    if t == STRING:
        n, q = _varlen(b, p)
        return b[q:q + n].decode("utf-8", "replace")
    if t == OPAQUE:
        n, q = _varlen(b, p + 1)
        data = b[q:q + n]
        if len(data) < n:
            raise ValueError("opaque JSON value runs past the document")
        return _opaque(b[p], data)
    raise ValueError(f"unknown JSON value type {t}")


# MySQL field types an opaque JSON value may carry and that print as themselves
_DATE, _TIME, _DATETIME, _TIMESTAMP, _NEWDECIMAL = 10, 11, 12, 7, 246


class Temporal(str):
    """A DATE / TIME / DATETIME / TIMESTAMP held in a JSON document (printed as a string)."""


def _opaque(field_type: int, data: bytes):
    if field_type in (_DATE, _TIME, _DATETIME, _TIMESTAMP):
        if len(data) < 8:
            raise ValueError("opaque JSON temporal shorter than 8 bytes")
        packed = int.from_bytes(data[:8], "little", signed=True)
        neg = packed < 0
        a = -packed if neg else packed
        ip, us = a >> 24, a % (1 << 24)
        if field_type == _TIME:
            h, mi, sec = (ip >> 12) % (1 << 10), (ip >> 6) % 64, ip % 64
            return Temporal(f"{'-' if neg else ''}{h:02d}:{mi:02d}:{sec:02d}.{us:06d}")
        ymd, hms = ip >> 17, ip % (1 << 17)
        ym, day = ymd >> 5, ymd % 32
        date = f"{ym // 13:04d}-{ym % 13:02d}-{day:02d}"
        if field_type == _DATE:
            return Temporal(date)
        return Temporal(f"{date} {hms >> 12:02d}:{(hms >> 6) % 64:02d}:{hms % 64:02d}.{us:06d}")
    if field_type == _NEWDECIMAL:
        from .newdecimal import dec_size, read_decimal  # the row-image decimal reader

        if len(data) < 2 or len(data) - 2 != dec_size(data[0] - data[1]) + dec_size(data[1]):
            raise ValueError("opaque JSON decimal of the wrong size")
        return read_decimal(data, 2, data[0], data[1])[0]
    return "base64:type%d:%s" % (field_type, base64.b64encode(data).decode("ascii"))


MAX_DEPTH = 100


class _Budget:
    """The value entries a document may still have read (its byte count at the start)."""

    __slots__ = ("left",)

    def __init__(self, n: int) -> None:
        self.left = n


def _container(t: int, b: bytes, base: int, depth: int, budget: _Budget):
    if depth > MAX_DEPTH:
        raise ValueError(f"JSON containers nested deeper than {MAX_DEPTH}")
    large = t in (LARGE_OBJ, LARGE_ARR)
    w = 4 if large else 2
    count = int.from_bytes(b[base:base + w], "little")
    budget.left -= count
    if budget.left < 0:
        raise ValueError("JSON document reads more values than it has bytes (offsets pointing back)")
    p = base + 2 * w
    keys = []
    if t in (SMALL_OBJ, LARGE_OBJ):
        for _ in range(count):
            ko = int.from_bytes(b[p:p + w], "little")
            kl = int.from_bytes(b[p + w:p + w + 2], "little")
            keys.append(b[base + ko:base + ko + kl].decode("utf-8", "replace"))
            p += w + 2
    values = []
    for _ in range(count):
        vt = b[p]
        inline = vt == LITERAL or vt in (INT16, UINT16) or (large and vt in (INT32, UINT32))
        if inline:
            values.append(_scalar(vt, b, p + 1))
        else:
            off = int.from_bytes(b[p + 1:p + 1 + w], "little")
            values.append(_value(vt, b, base + off, depth, budget))
        p += 1 + w
    return dict(zip(keys, values)) if keys or t in (SMALL_OBJ, LARGE_OBJ) else values


def _value(t: int, b: bytes, p: int, depth: int, budget: _Budget):
    if t in (SMALL_OBJ, LARGE_OBJ, SMALL_ARR, LARGE_ARR):
        return _container(t, b, p, depth + 1, budget)
    return _scalar(t, b, p)


def to_python(data: bytes):
    """The value a binary JSON document holds (empty data: JSON null, as MySQL stores it)."""
    if not data:
        return None
    return _value(data[0], data, 1, 0, _Budget(len(data)))


def to_text(data: bytes) -> str:
    return dumps(to_python(data))


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\t": "\\t"}
_ESCAPE_TABLE = str.maketrans(_ESCAPES)


def dumps(value) -> str:
    """JSON text the way the servers print a JSON column (see the module docstring)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return '"' + value.translate(_ESCAPE_TABLE) + '"'
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(dumps(v) for v in value) + "]"


# --- partial updates (PARTIAL_UPDATE_ROWS, binlog_row_value_options=PARTIAL_JSON) -------------
REPLACE, INSERT, REMOVE = 0, 1, 2


def _path(text: str) -> list:
    """``$.a."b c"[3]`` -> ["a", "b c", 3]."""
    if not text.startswith("$"):
        raise ValueError(f"JSON path {text!r} does not start with $")
    out, i = [], 1
    while i < len(text):
        if text[i] == ".":
            i += 1
            if i < len(text) and text[i] == '"':
                j = text.index('"', i + 1)
                out.append(json.loads(text[i:j + 1]))
                i = j + 1
            else:
                j = i
                while j < len(text) and text[j] not in ".[":
                    j += 1
                out.append(text[i:j])
                i = j
        elif text[i] == "[":
            j = text.index("]", i)
            out.append(int(text[i + 1:j]))
            i = j + 1
        else:
            raise ValueError(f"cannot read JSON path {text!r}")
    return out


OPERATIONS = {REPLACE: "JSON_REPLACE", INSERT: "JSON_INSERT", REMOVE: "JSON_REMOVE"}


def parse_diffs(data: bytes) -> list[tuple[int, str, object]]:
    """A binary JSON diff vector (MySQL ``sql/json_diff.cc``) as (operation, path text, value)
    triples: diffs back to back until the data ends, each an operation byte (0 REPLACE,
    1 INSERT, 2 REMOVE), a packed path length and path, and (but for REMOVE) a packed value
    length and a binary JSON value. ValueError / IndexError when malformed."""
    from .common import read_length

    out: list[tuple[int, str, object]] = []
    p = 0
    while p < len(data):
        op = data[p]
        if op not in OPERATIONS:
            raise ValueError(f"unknown JSON diff operation {op}")
        n, p = read_length(data, p + 1)
        if p + n > len(data):
            raise IndexError
        path = data[p:p + n].decode("utf-8")
        p += n
        value = None
        if op != REMOVE:
            n, p = read_length(data, p)
            if p + n > len(data):
                raise IndexError
            value = to_python(data[p:p + n])
            p += n
        out.append((op, path, value))
    return out


# mysqlbinlog's quote table (``my_b_write_quoted``, MySQL 8.0+): these by name, other
# characters below 0x20 as \xNN, everything else as it is
_SQL_ESCAPES = {**{chr(c): "\\x%02x" % c for c in range(0x20)},
                "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "'": "\\'"}


def _sql_string(text: str) -> str:
    """A quoted SQL string as mysqlbinlog writes one (its quote table)."""
    return "'" + "".join(_SQL_ESCAPES.get(ch, ch) for ch in text) + "'"


def _sql_value(value) -> str:
    """A diff's value as mysqlbinlog -v writes it: scalars as SQL literals (strings and dates
    quoted), objects and arrays as ``CAST('<json>' AS JSON)``."""
    if isinstance(value, (dict, list)):
        return f"CAST({_sql_string(dumps(value))} AS JSON)"
    if isinstance(value, str):
        return _sql_string(value)
    return dumps(value)


def diff_sql(column: str, diffs: list[tuple[int, str, object]]) -> str:
    """The diffs as mysqlbinlog -v prints a partial JSON update of ``column`` (``@3``): runs of
    one operation as one call, each run wrapping the previous ones, a line per argument pair
    (``\n###      `` between them, as the ``###`` block continues); no diffs: the column itself.
    E.g. ``JSON_REMOVE(\n###      JSON_REPLACE(@3, '$.a', 1),\n###      '$.b')``."""
    if not diffs:
        return column
    runs: list[tuple[int, list[str]]] = []
    for op, path, value in diffs:
        arg = _sql_string(path) if op == REMOVE else f"{_sql_string(path)}, {_sql_value(value)}"
        if runs and runs[-1][0] == op:
            runs[-1][1].append(arg)
        else:
            runs.append((op, [arg]))
    sep = ",\n###      "
    text = "".join(f"{OPERATIONS[op]}(\n###      " for op, _ in reversed(runs[1:]))
    text += f"{OPERATIONS[runs[0][0]]}({column}, " + sep.join(runs[0][1]) + ")"
    for _, args in runs[1:]:
        text += sep + sep.join(args) + ")"
    return text


def apply_diffs(doc, data: bytes):
    """Apply a binary JSON diff vector (``parse_diffs``) to ``doc``."""
    for op, text, value in parse_diffs(data):
        path = _path(text)
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1] if path else None
        if not path:
            doc = value
        elif op == REMOVE:
            del parent[last]
        elif op == INSERT and isinstance(parent, list) and isinstance(last, int):
            parent.insert(last, value)
        else:
            parent[last] = value
    return doc

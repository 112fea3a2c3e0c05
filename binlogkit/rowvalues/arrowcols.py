"""Row images to Arrow columns: the per-table plan of the optional C accelerator
``binlogkit._rowarrow``, and the rows of an event kept as images until someone reads them.

``plan(table, arrow_types)`` says, once per table map, how each column's stored value becomes
the Arrow value of ``arrow_types`` (the export layout's types, ``export/schema.py``): its width
and sign, DECIMAL digits, temporal layout and unit, length prefix, UTF-8 or binary, BINARY(n)
padding, ENUM labels, SET members, JSON (MySQL's binary JSON to the text of
``codecs/mysql_json.py``), VECTOR (list<float32>), DECIMAL to decimal128 / decimal256. A column
the C code does not fill (text in a character set other than UTF-8 / ASCII / latin1, column
hints, pre-GA and partial-JSON events) makes the plan None: the table stays on the Python path
(``images.decode_rows`` and the export converters), which is the reference
(``tests/test_rowarrow.py`` holds both equal). A value C does not settle exactly as Python does
(a damaged JSON document, a NaN in a VECTOR, ...) sends its event to the Python path.

``ImageRows`` is a rows event's rows as a sequence that decodes them in Python only when read
(``len`` is known without decoding); its ``arrow`` holds what ``_rowarrow.Builder.add`` takes,
so export's writer fills Arrow buffers straight from the images.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Iterator

from .._optional import load_c
from ..constants import PRE_GA_ROWS_TYPES as PRE_GA, EventType as T
from .images import _KIND, _uncompressed, c_args, decode_rows
from .tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY, INT24,
                     JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2,
                     TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR, VECTOR, YEAR, CODECS, Column, Table)

C_ROWARROW: Any = load_c("_rowarrow", "BINLOGKIT_NO_ROWARROW")  # None: not built, or BINLOGKIT_PURE_PYTHON=1 / BINLOGKIT_NO_ROWARROW=1
_C = C_ROWARROW

_INT_IN = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}
_INT_OUT = {"int8": (1, 1), "int16": (2, 1), "int32": (4, 1), "int64": (8, 1),
            "uint8": (1, 0), "uint16": (2, 0), "uint32": (4, 0), "uint64": (8, 0)}
_BLOBS = (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)


class ArrowPlan:
    """The C plan of a table map (ENUM labels, SET members and the rest are made in C) and its
    columns' widths."""

    __slots__ = ("plan", "widths")

    def __init__(self, plan: Any) -> None:
        self.plan, self.widths = plan, plan.widths


def plan(table: Table, arrow_types: Sequence[str]) -> ArrowPlan | None:
    """The plan for ``table`` whose columns export as ``arrow_types`` (``str`` of the pyarrow
    types), or None (no accelerator, or a column it does not fill). Cached on the Table."""
    if _C is None:
        return None
    key = tuple(arrow_types)
    cached = table.__dict__.get("_arrow_plan")
    if cached is not None and cached[0] == key:
        return cached[1]
    out = _make(table, key)
    object.__setattr__(table, "_arrow_plan", (key, out))
    return out


def _make(table: Table, types: tuple[str, ...]) -> ArrowPlan | None:
    if not c_args(table) or len(types) != len(table.columns):  # column hints: Python's
        return None
    entries = []
    for col, typ in zip(table.columns, types):
        e = _entry(table, col, typ)
        if e is None:
            return None
        entries.append(e)
    return ArrowPlan(_C.Plan(entries))


def _text_kind(col: Column, typ: str) -> int | None:
    """UTF8 / ASCII / LATIN1 for text export decodes from those charsets, BIN for binary, else None."""
    if typ == "binary":
        return _C.BIN
    if typ != "string" or col.collation is None or col.collation == BINARY_COLLATION:
        return None
    from ..collations import CHARSET_OF

    codec = CODECS.get(CHARSET_OF.get(col.collation, ""))
    return {"utf-8": _C.UTF8, "ascii": _C.ASCII, "cp1252": _C.LATIN1}.get(codec or "")


def _entry(table: Table, col: Column, typ: str) -> tuple | None:
    """(kind, p1, p2, p3[, SET members as UTF-8]) of ``_rowarrow.Plan``, or None."""
    t, m = col.type, col.meta
    if col.hint is not None:
        return None
    if t in _INT_IN:
        out = _INT_OUT.get(typ)
        if out is None or out[0] < _INT_IN[t]:
            return None
        return (_C.INT, _INT_IN[t], out[0], out[1])
    if t == FLOAT and typ == "float":
        return (_C.F32, 0, 0, 0)
    if t == DOUBLE and typ == "double":
        return (_C.F64, 0, 0, 0)
    if t == NEWDECIMAL and typ.startswith(("decimal128(", "decimal256(")):
        p, s = m >> 8, m & 0xFF
        ok = s <= p and s <= 30 and typ == f"decimal{128 if p <= 38 else 256}({p}, {s})" and 1 <= p <= 65
        return (_C.DEC, p, s, 0) if ok else None
    if t == JSON and typ == "string":
        return (_C.JSON, m or 4, 0, 0) if (m or 4) <= 4 else None
    if t == VECTOR and typ == "list<item: float>":
        return (_C.VEC, m or 4, 0, 0) if (m or 4) <= 4 else None
    if t == YEAR and typ == "uint16":
        return (_C.YEAR, 0, 0, 0)
    if t in (DATE, NEWDATE) and typ == "date32[day]":
        return (_C.DATE, 0, 0, 0)
    unit = {"timestamp[ms]": 0, "timestamp[us]": 1, "timestamp[ms, tz=UTC]": 0, "timestamp[us, tz=UTC]": 1}
    if t == DATETIME2 and m <= 6 and typ in unit and "tz" not in typ:
        return (_C.DT2, m, unit[typ], 0)
    if t == TIMESTAMP2 and m <= 6 and typ in unit and "tz" in typ:
        return (_C.TS2, m, unit[typ], 0)
    if t == TIME2 and m <= 6 and typ == "duration[us]":
        return (_C.TIME2, m, 0, 0)
    if t == DATETIME and typ == "timestamp[ms]":
        return (_C.DT, 0, 0, 0)
    if t == TIMESTAMP and typ == "timestamp[ms, tz=UTC]":
        return (_C.TS, 0, 0, 0)
    if t == TIME and typ == "duration[us]":
        return (_C.TIME, 0, 0, 0)
    if t == BIT and typ == "uint64":
        return (_C.BIT, m, 0, 0) if ((m & 0xFF) * 8 + (m >> 8) + 7) // 8 <= 8 else None
    if t == GEOMETRY and typ == "binary":
        return (_C.GEOM, m or 4, 0, 0) if (m or 4) <= 4 else None
    if t in (VARCHAR, VAR_STRING):
        kind = _text_kind(col, typ)
        return None if kind is None else (kind, 1 if m < 256 else 2, 0, 0)
    if t in _BLOBS:
        kind = _text_kind(col, typ)
        return None if kind is None or not 1 <= (m or 4) <= 4 else (kind, m or 4, 0, 0)
    if t == STRING:
        real = m >> 8
        if real == ENUM:
            n = m & 0xFF
            if not 1 <= n <= 2:
                return None
            if typ == "uint16":
                return (_C.ENUM, n, 0xFFFF, 0)
            labels = (table.enum_values or {}).get(col.index)
            if typ != "string" or labels is None:
                return None
            try:  # the label itself, made in C (no Arrow ``take``, no pyarrow.compute)
                return (_C.ENUML, n, 0, 0, tuple(s.encode("utf-8") for s in labels))
            except UnicodeEncodeError:  # a lone surrogate: pyarrow refuses it on the Python path too
                return None
        if real == SET:
            n = m & 0xFF
            if not 1 <= n <= 8:
                return None
            if typ == "uint64":
                return (_C.SET, n, 0, 0)
            members = (table.set_values or {}).get(col.index)
            if typ != "string" or members is None or len(members) > 64:
                return None
            try:
                return (_C.SETL, n, 0, 0, tuple(s.encode("utf-8") for s in members))
            except UnicodeEncodeError:  # a lone surrogate: pyarrow refuses it on the Python path too
                return None
        kind = _text_kind(col, typ)
        if kind is None:
            return None
        pad = col.max_length if kind == _C.BIN and col.collation == BINARY_COLLATION else 0
        return (kind, 1 if col.max_length < 256 else 2, pad, 0)
    return None


def arrow_inputs(table: Table, fields, type_code: int, ap: ArrowPlan) -> tuple | None:
    """``Builder.add``'s arguments for one rows event (after the plan), or None when the event
    is not for C (pre-GA, partial JSON, a width other than the table map's)."""
    if type_code == T.PARTIAL_UPDATE_ROWS_EVENT or type_code in PRE_GA or fields["width"] != len(table.columns):
        return None
    after = fields["columns_after_image"]
    return (ap.plan, _uncompressed(table, fields, type_code), _KIND.get(type_code, 1),
            fields["columns_before_image"], b"" if after is None else after)


class ImageRows(Sequence):
    """The rows of one rows event (``decode_rows``'s list), decoded only when read; ``len``
    counted by the C accelerator; ``arrow``: ``Builder.add``'s arguments."""

    __slots__ = ("table", "fields", "type_code", "n", "arrow", "plan", "_rows", "taken")

    def __init__(self, table: Table, fields, type_code: int, n: int, arrow: tuple, plan: ArrowPlan) -> None:
        self.table, self.fields, self.type_code, self.n, self.arrow = table, fields, type_code, n, arrow
        self.plan = plan
        self._rows: list | None = None
        self.taken = False  # already appended to a consumer's Builder (``export.changes``' ``take``)

    def decoded(self) -> list:
        if self._rows is None:
            rows = decode_rows(self.table, self.fields, self.type_code)
            if not isinstance(rows, list):  # the C count said the images fit: Python must agree
                raise ValueError(f"rows of `{self.table.db}`.`{self.table.name}` not decoded: {rows.reason}")
            self._rows = rows
        return self._rows

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return self.decoded()[i]

    def __iter__(self) -> Iterator[dict]:
        return iter(self.decoded())


def image_rows(table: Table, fields, type_code: int, ap: ArrowPlan | None, scratch: Any) -> ImageRows | None:
    """The event's rows kept as images (``ImageRows``) when the C accelerator settles every one
    (``scratch``: a ``Builder`` of the plan's widths, used to count), else None."""
    if ap is None:
        return None
    args = arrow_inputs(table, fields, type_code, ap)
    if args is None:
        return None
    n = scratch.add(*args, False)
    return None if n < 0 else ImageRows(table, fields, type_code, n, args, ap)

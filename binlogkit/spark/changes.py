"""The ``changes`` table: one row per changed row, through the export's own C walk and writer;
long form (``before`` / ``after`` as JSON objects, a ``db`` / ``table`` column) or, with
``changes_table``, that table's typed export columns; and the typed schema's Spark types."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .files import FileTask

from .common import Query, _pa, schema


# --- changes --------------------------------------------------------------------------------------

def json_value(v: Any) -> Any:
    """An export value (as pyarrow's ``to_pylist`` gives it) in the long form's JSON: bytes as
    base64, decimals, times and dates as text."""
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode()
    if isinstance(v, (decimal.Decimal, _dt.date, _dt.time, _dt.timedelta)):
        return v.isoformat() if hasattr(v, "isoformat") else str(v)
    if isinstance(v, list):
        return [json_value(x) for x in v]
    return v


def long_rows(tbl: Any, db: str, table: str) -> Iterator[tuple]:
    """Long-form rows of a batch of one table's typed export rows (``db`` and ``table`` given:
    the export keeps them in the partition folder names). The test turns the local export's
    Parquet into rows through this same function."""
    names = tbl.schema.names
    sides = {side: [(n, n[len(side) + 1:]) for n in names if n.startswith(side + "_")] for side in ("before", "after")}
    cols = {n: tbl.column(n).to_pylist() for n in names}
    for i in range(tbl.num_rows):
        imgs = []
        for side in ("before", "after"):
            img = {short: json_value(cols[n][i]) for n, short in sides[side]}
            imgs.append(None if all(v is None for v in img.values()) else json.dumps(img, sort_keys=True))
        ct = cols["commit_time"][i]
        yield (db, table, cols["op"][i], cols["gtid"][i], cols["server_id"][i], ct, cols["file"][i],
               cols["offset"][i], cols["row_index"][i], cols["schema_version"][i], imgs[0], imgs[1])


# a string that json.dumps writes as itself in quotes (printable ASCII without " and \\)
_PLAIN_TEXT = r'^[\x20\x21\x23-\x5b\x5d-\x7e]*$'


def _json_texts(col) -> Any:
    """Each value of an export column as the long form's JSON text (``json.dumps(json_value(v))``;
    null where the value is null), made column-wise by Arrow compute for integers, booleans and
    plain ASCII text, and value by value (``json_value``) only for the other types and for the
    texts that need escapes: the same text as ``long_rows`` makes (the differential test)."""
    import pyarrow.compute as pc

    pa = _pa()
    t = col.type
    if pa.types.is_integer(t):
        return pc.cast(col, pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(col, "true", "false")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        col = col.cast(pa.string()) if pa.types.is_large_string(t) else col
        plain = pc.fill_null(pc.match_substring_regex(col, _PLAIN_TEXT), True)
        quoted = pc.binary_join_element_wise('"', col, '"', "")
        if pc.all(plain).as_py():
            return quoted
        rest = pc.invert(plain)
        odd = [json.dumps(v) for v in col.filter(rest).to_pylist()]
        return pc.replace_with_mask(quoted, rest, pa.array(odd, pa.string()))
    return pa.array([None if v is None else json.dumps(json_value(v)) for v in col.to_pylist()], pa.string())


def _c_kind(t) -> str | None:
    """``_rowarrow.json_objects``' kind of an Arrow type whose values C writes as ``json_value``
    and ``json.dumps`` do, or None (the column's JSON texts are made first: ``_json_texts``)."""
    pa = _pa()
    if pa.types.is_integer(t):
        return {(8, True): "b", (16, True): "h", (32, True): "i", (64, True): "q", (8, False): "B",
                (16, False): "H", (32, False): "I", (64, False): "Q"}[(t.bit_width, pa.types.is_signed_integer(t))]
    if pa.types.is_boolean(t):
        return "?"
    if pa.types.is_float32(t):
        return "f"
    if pa.types.is_float64(t):
        return "d"
    if pa.types.is_string(t):
        return "s"
    if pa.types.is_large_string(t):
        return "S"
    if pa.types.is_binary(t):
        return "y"
    if pa.types.is_large_binary(t):
        return "Y"
    if pa.types.is_date32(t):
        return "D"
    if pa.types.is_timestamp(t) and t.unit in _UNITS and t.tz in (None, "UTC"):
        return "M" if t.tz is None else "T"
    if pa.types.is_duration(t) and t.unit == "us":
        return "u"
    if pa.types.is_decimal128(t):
        return "N"
    return None


_UNITS = {"s": 1, "ms": 1000, "us": 1000000}


def _c_image(c_mod: Any, n: int, cols: list[tuple[str, Any]]):
    """One side's images by C (``_rowarrow.json_objects``): per row the JSON object of ``cols``
    ((key, Arrow array) in key order), null where every value is null."""
    pa = _pa()
    if n == 0:
        return pa.array([], pa.string())
    spec: list[tuple] = []
    for short, col in cols:
        kind = _c_kind(col.type)
        if kind is None:
            col, kind = _json_texts(col), "t"
        bufs = col.buffers()
        valid = bufs[0] if col.null_count else None
        key = (json.dumps(short) + ": ").encode()
        if kind in "sSyYt":
            spec.append((key, kind, col.offset, valid, bufs[2] or b"", bufs[1]))
        else:
            t = col.type
            param = _UNITS[t.unit] if kind in "TM" else t.scale if kind == "N" else 0
            spec.append((key, kind, col.offset, valid, bufs[1], None, param))
    valid, nulls, offsets, data = c_mod.json_objects(n, spec)
    return pa.Array.from_buffers(pa.string(), n, [None if valid is None else pa.py_buffer(valid),
                                                  pa.py_buffer(offsets), pa.py_buffer(data)], null_count=nulls)


def long_batches(rb: Any, db: str, table: str) -> Iterator[Any]:
    """``long_batch`` of ``rb``, in halves where an image column would pass 2 GiB of text."""
    try:
        yield long_batch(rb, db, table)
    except OverflowError:
        if rb.num_rows < 2:
            raise
        half = rb.num_rows // 2
        yield from long_batches(rb.slice(0, half), db, table)
        yield from long_batches(rb.slice(half), db, table)


def long_batch(rb: Any, db: str, table: str, c_mod: Any = False):
    """``long_rows`` of a batch of one table's typed export rows as one record batch of the long
    form, built column-wise: each image's JSON object is its columns' ``"name": value`` texts
    in name order (``json.dumps(..., sort_keys=True)``), null where every value is null. Written
    by C (``_rowarrow.json_objects``: integers, booleans, floats, text, binary as base64, and the
    dates, timestamps, TIME durations and decimals as json_value's texts, the JSON texts of the
    other types made value by value first) when built, else joined by Arrow
    compute (the reference path; ``c_mod=None`` asks for it)."""
    import pyarrow.compute as pc

    from ..rowvalues.arrowcols import C_ROWARROW

    pa = _pa()
    c_mod = C_ROWARROW if c_mod is False else c_mod
    if c_mod is not None and getattr(c_mod, "json_objects", None) is None:
        c_mod = None
    n = rb.num_rows
    names = rb.schema.names
    sch = schema("changes")
    imgs = []
    for side in ("before", "after"):
        cols = sorted((name[len(side) + 1:], name) for name in names if name.startswith(side + "_"))
        if not cols:
            imgs.append(pa.nulls(n, pa.string()))
            continue
        if c_mod is not None:
            imgs.append(_c_image(c_mod, n, [(short, rb.column(name)) for short, name in cols]))
            continue
        parts, empty = [], None
        for short, name in cols:
            col = rb.column(name)
            parts.append(pc.binary_join_element_wise(json.dumps(short) + ": ",
                                                     pc.fill_null(_json_texts(col), "null"), ""))
            none = pc.is_null(col)
            empty = none if empty is None else pc.and_(empty, none)
        obj = pc.binary_join_element_wise("{", pc.binary_join_element_wise(*parts, ", "), "}", "")
        imgs.append(pc.if_else(empty, pa.scalar(None, pa.string()), obj))
    same = {f.name: rb.column(f.name) for f in sch if f.name in names and f.name not in ("before", "after")}
    arrays = []
    for f in sch:
        if f.name == "db":
            arrays.append(pa.repeat(pa.scalar(db, f.type), n))
        elif f.name == "table":
            arrays.append(pa.repeat(pa.scalar(table, f.type), n))
        elif f.name in ("before", "after"):
            arrays.append(imgs[f.name == "after"])
        else:
            c = same[f.name]
            arrays.append(c if c.type == f.type else c.cast(f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=sch)


def _filters(q: Query, task: FileTask, one: str | None = None):
    """The export's ``Filters`` of a query: its tables (or the one typed table), GTIDs and, for
    a range of a file, the transactions that begin in it (``ranges.InRange``)."""
    from .ranges import InRange

    return InRange(tables=(one,) if one else tuple(q.tables), gtids=None if q.gtids is None else q.gtids.__contains__,
                   task=None if task.whole() else task)


def _changes(q: Query, task: FileTask, inp) -> Iterator[Any]:
    """The file's (or range's) committed changes through the export's own walk and writer: the
    C walk (``export.changes.committed_changes`` with the writer as ``take`` and ``sink``: the
    framing taker spools runs of table maps and rows events, ``_rowarrow.replay_run`` appends
    them straight to the Arrow builders) into ``export.dataset.BatchWriter``, whose row groups
    (what the export writes to its Parquet parts) come out as batches instead of files: the
    rows are the local export's by construction. A range is walked from the event before it
    (``task.lead``) to its end (``Input.stop``: the next range's first GTID event), its own
    transactions kept (those that begin in it). Executor memory: the writer's row groups of
    ``batch_rows`` rows (at most four of them in all, 32 MB of rows events), each handed out
    before the next rows event is read (after a flush the C walk hands that event to the
    Python path, which yields it), plus the transaction the walk holds until its commit. ``min_timestamp`` filters by commit time (the
    export's --start-datetime is the transaction's first event: not the same column).
    Statement-format changes are not rows: not in this table (the export's ``_statements``)."""
    from ..export.changes import Report, committed_changes
    from ..export.dataset import BatchWriter

    target = q.typed if q.changes_table else schema("changes")
    if not task.whole():   # the reading layer seeks to the event before the range, stops at its end
        from dataclasses import replace

        inp = replace(inp, start=task.lead if task.lead is not None else task.start, stop=task.stop)
    w = BatchWriter(row_group_rows=q.batch_rows)
    add, ready = w.add, w.ready
    for change in committed_changes([inp], _filters(q, task, q.changes_table), Report(), take=w.take, sink=w):
        add(change)
        while ready:
            yield from _emit(q, target, *ready.pop(0))
    w.close()
    while ready:
        yield from _emit(q, target, *ready.pop(0))


def _emit(q: Query, target, lay, tbl) -> Iterator[Any]:
    """One row group of the writer (a pyarrow Table of one table layout) as batches of
    ``target``: filtered, then typed (``align``) or in the long form (``long_batch``)."""
    for rb in tbl.to_batches(max_chunksize=q.batch_rows):
        if q.min_timestamp is not None or q.gtids is not None:
            rb = _keep(rb, q)
        if rb.num_rows == 0:
            continue
        if q.changes_table:
            yield align(rb, target)
        else:
            yield from long_batches(rb, lay.db, lay.table)


def _keep(rb, q: Query):
    import pyarrow.compute as pc

    mask = None
    if q.min_timestamp is not None:
        t = _pa().scalar(int(q.min_timestamp), type=_pa().int64())
        m = pc.greater_equal(pc.cast(rb.column("commit_time"), _pa().int64()), t)
        mask = m
    if q.gtids is not None:
        m = pc.is_in(rb.column("gtid"), value_set=_pa().array(sorted(q.gtids)))
        mask = m if mask is None else pc.and_(mask, m)
    return rb.filter(mask)


def spark_arrow_type(t):
    """The Arrow type a Spark column of export's type ``t`` is read as (Spark has no unsigned
    integers: widened; uint64 as decimal(20, 0), as Spark reads export's Parquet)."""
    pa = _pa()
    if pa.types.is_uint8(t):
        return pa.int16()
    if pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_time(t):
        return pa.int64()
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    return t


def typed_schema(export_schema):
    """One table's typed schema for Spark (``spark_arrow_type`` of each export column)."""
    pa = _pa()
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type)) for f in export_schema])


def align(rb, target):
    """A batch of export rows in ``target``'s columns: by name, missing ones null (another schema
    version of the table), types cast."""
    pa = _pa()
    arrays = []
    for f in target:
        if f.name in rb.schema.names:
            col = rb.column(f.name)
            if pa.types.is_time(col.type):
                col = col.cast(pa.int64())
            arrays.append(col if col.type == f.type else col.cast(f.type))
        else:
            arrays.append(pa.nulls(rb.num_rows, type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def first_layout(tasks: list[FileTask], name: str, resolve=None):
    """The export schema of ``name`` (db.table) at its first change in ``tasks``' files (read on
    the driver until it is met), or None."""
    from ..export.changes import Filters, Report, Rows, committed_changes
    from ..export.schema import layout
    from .files import _SPLITS_MAX, _planned_as

    for task in tasks:
        ident = _planned_as(task)
        key = (name, ident)
        if ident is not None and key in _FIRST:
            if _FIRST[key] is not None:
                return _FIRST[key]
            continue
        found = None
        for change in committed_changes([task.input(resolve)], Filters(tables=(name,)), Report()):
            if isinstance(change, Rows):
                found = layout(change.table).schema
                break
        if ident is not None:
            if len(_FIRST) >= _SPLITS_MAX:
                _FIRST.clear()
            _FIRST[key] = found
        if found is not None:
            return found
    return None


# ``first_layout``'s answer per (table, file identity: ``files._planned_as``): the schema of the
# table's first change in that file, or None (none in it). The source asks it when a query is
# loaded and again when it is planned: a warm query does not walk the file again.
_FIRST: dict[tuple, Any] = {}

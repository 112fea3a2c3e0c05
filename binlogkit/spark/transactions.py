"""The ``transactions`` table: one row per transaction, the fields of ``binlogkit transactions
--json``: whole plain transactions taken in C (``_eventcols.Run``), the rest by the Python walk
(``transactions.Grouper``)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .files import FileTask

from .common import Query, _pa, _range_frames, schema


# --- transactions ---------------------------------------------------------------------------------

def _grouped(task: FileTask, inp, run: Any = None) -> Iterator[Any]:
    """``group_files([inp], problems=[])`` of the file or of a range of it (``_range_frames``).
    ``run``: a ``transactions.run_taker()`` that takes the events inside transactions and whole
    plain transactions in C (their rows wait in ``run.finish()``; the Python walk sees the rest)."""
    from ..errors import BinlogError, KeyFileError, KeyRequiredError
    from ..transactions import BODIES, Grouper

    g = Grouper(keep_gtids=False)
    try:
        yield from g.feed_frames(inp.name, _range_frames(task, inp, BODIES, None if run is None else run.take), run, rows=True)
    except BinlogError as exc:
        yield from g.finish()
        if isinstance(exc, (KeyRequiredError, KeyFileError)):
            raise exc.with_context(file=inp.name)
        return
    yield from g.finish()


# the transactions table's columns: Transaction attributes, in the schema's order
_TRX_ATTRS = ("gtid", "kind", "start_file", "start_offset", "first_timestamp", "server_id", "end_file",
              "end_offset", "last_timestamp", "events", "bytes", "complete", "terminator", "source_file",
              "source_start", "source_end", "standalone", "resume_source_file", "resume_source_pos", "alter",
              "alter_id", "repeats")
# the C run's kind and terminator codes (_eventcols.c: KIND_*, TERM_*)
_TRX_KINDS = ("mariadb", "mysql", "anonymous")
_TRX_TERMS = ("XID", "COMMIT")


def _trx_batch(ts: list, sch):
    """A batch of ``Transaction`` values (the Python walk's) as the ``transactions`` table's
    record batch: one column list per attribute (the values ``to_json`` gives)."""
    pa = _pa()
    arrays = []
    for name, f in zip(_TRX_ATTRS, sch):
        vals = [getattr(t, name) for t in ts]
        if name == "kind":
            vals = [None if v is None else str(getattr(v, "value", v)) for v in vals]
        elif name == "repeats":
            vals = [None if v is None else json.dumps(v) for v in vals]
        arrays.append(pa.array(vals, type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=sch)


def _run_batch(run: Any, name: str, sch):
    """The whole transactions the C run took (``run.finish()``'s column buffers) as the
    ``transactions`` table's record batch: in this file, complete, from its own source (a
    binlog), no ALTER phase, no repeats."""
    pa = _pa()
    n, d = run.finish()
    buf = pa.py_buffer
    i64, s = pa.int64(), pa.string()

    def num(key: str, typ=i64):
        return pa.Array.from_buffers(typ, n, [None, buf(d[key])])

    def valid(arr, key: str):
        import pyarrow.compute as pc

        return pc.if_else(pc.equal(num(key, pa.uint8()), 1), arr, pa.scalar(None, arr.type))

    def const(v, typ=s):
        return pa.repeat(pa.scalar(v, typ), n)
    base = os.path.basename(name)
    start, end = num("start_offset"), num("end_offset")
    gtid = valid(pa.Array.from_buffers(s, n, [None, buf(d["gtid_offsets"]), buf(d["gtid_data"])]), "gtid_valid")
    cols = {"gtid": gtid, "kind": pa.array(_TRX_KINDS, s).take(num("kind", pa.uint8())), "start_file": const(name),
            "start_offset": start, "first_timestamp": num("first_timestamp"), "server_id": num("server_id"),
            "end_file": const(name), "end_offset": end, "last_timestamp": num("last_timestamp"),
            "events": num("events"), "bytes": num("bytes"), "complete": const(True, pa.bool_()),
            "terminator": pa.array(_TRX_TERMS, s).take(num("terminator", pa.uint8())), "source_file": const(base),
            "source_start": start, "source_end": end, "standalone": const(False, pa.bool_()),
            "resume_source_file": const(base), "resume_source_pos": valid(num("resume_source_pos"), "resume_valid")}
    return pa.RecordBatch.from_arrays([cols[f.name] if f.name in cols else pa.nulls(n, f.type) for f in sch],
                                      schema=sch)


def _keep_trx(rb, q: Query, task: FileTask, name: str):
    """A ``transactions`` batch with the query's filters and the range's (those that begin in it)."""
    import pyarrow.compute as pc

    pa = _pa()
    mask = None

    def both(m):
        return m if mask is None else pc.and_(mask, m)
    if not task.whole():
        mask = both(pc.fill_null(pc.equal(rb.column("start_file"), name), False))
        if task.start is not None:
            mask = both(pc.greater_equal(rb.column("start_offset"), task.start))
        if task.stop is not None:
            mask = both(pc.less(rb.column("start_offset"), task.stop))
    if q.gtids is not None:
        mask = both(pc.fill_null(pc.is_in(rb.column("gtid"), value_set=pa.array(sorted(q.gtids), pa.string())),
                                 False))
    if q.min_timestamp is not None:
        mask = both(pc.greater_equal(rb.column("first_timestamp"), int(q.min_timestamp)
                                     if q.min_timestamp == int(q.min_timestamp) else q.min_timestamp))
    return rb if mask is None else rb.filter(mask)


def _transactions(q: Query, task: FileTask, inp) -> Iterator[Any]:
    """The ``transactions`` table of a file or range as batches of at most ``batch_rows`` rows:
    the transactions that begin in it, filtered by GTID and first timestamp. Whole plain
    transactions come as the C run's columns (``_eventcols.Run``: no Python object for them or
    their events), the others from the Python walk (``transactions.Grouper``), in file order."""
    from ..transactions import run_taker

    pa = _pa()
    sch = schema("transactions")
    name = inp.name
    run = run_taker(q.batch_rows)
    if run is not None and task.stop is not None:
        run.stop = task.stop
    pieces: list = []
    walked: list = []
    held = 0

    def settle() -> None:   # the rows so far, in order: the Python walk's, then the C run's
        nonlocal walked, held
        for rb in ([_trx_batch(walked, sch)] if walked else []) + \
                  ([_run_batch(run, name, sch)] if run is not None and len(run) else []):
            rb = _keep_trx(rb, q, task, name)
            if rb.num_rows:
                pieces.append(rb)
                held += rb.num_rows
        walked = []

    def out() -> Iterator[Any]:
        nonlocal pieces, held
        rb = pa.concat_batches(pieces) if len(pieces) > 1 else pieces[0]
        pieces, held = [], 0
        for i in range(0, rb.num_rows, q.batch_rows):
            yield rb.slice(i, q.batch_rows)
    for t in _grouped(task, inp, run):
        if run is not None and len(run):
            settle()
        walked.append(t)
        if len(walked) + held >= q.batch_rows:
            settle()
            if held >= q.batch_rows:
                yield from out()
    settle()
    if held:
        yield from out()


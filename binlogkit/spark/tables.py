"""The tables of the ``binlog`` data source as Arrow record batches, one file at a time, without
Spark (``source.py`` is the glue): each table's Arrow schema and a generator of batches of at
most ``batch_rows`` rows for one ``FileTask``. Memory: one batch of columns (and, for
``changes``, the export's row-group buffer), never a file.

=============  ========================================================================  ==========================
table          rows                                                                      made by
=============  ========================================================================  ==========================
events         one per event, the fields of ``binlogkit decode --json`` (``fields`` as    ``api.decode_files``
               its JSON text; ``gtid``: the GTID of the transaction the event is in)
transactions   one per transaction, the fields of ``binlogkit transactions --json``       ``transactions.group_files``
changes        one per changed row, export's columns; long form (``before`` / ``after``   ``export.changes`` +
               as JSON objects, a ``db`` / ``table`` column) or, with ``changes_table``,  ``export.dataset``
               that table's typed export columns
summaries      one per file, audit's per-file summary (``summary``: all of it as JSON)     ``audit.summary``
=============  ========================================================================  ==========================
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..constants import GTID_TYPES
from .files import FileTask

BATCH_ROWS = 8192


def _pa():
    import pyarrow as pa

    return pa


def schema(table: str):
    """The Arrow schema of ``table`` (long-form ``changes``; ``typed_schema`` for one table's)."""
    pa = _pa()
    i64, s, b = pa.int64(), pa.string(), pa.bool_()
    ts = pa.timestamp("us", tz="UTC")
    cols: dict[str, list] = {
        "events": [("file", s), ("offset", i64), ("end_offset", i64), ("type", s), ("type_code", pa.int32()),
                   ("name", s), ("timestamp", i64), ("server_id", i64), ("event_size", i64), ("log_pos", i64),
                   ("flags", pa.int32()), ("checksum_ok", b), ("payload_offset", i64), ("inner_offset", i64),
                   ("gtid", s), ("fields", s)],
        "transactions": [("gtid", s), ("kind", s), ("start_file", s), ("start_offset", i64),
                         ("first_timestamp", i64), ("server_id", i64), ("end_file", s), ("end_offset", i64),
                         ("last_timestamp", i64), ("events", i64), ("bytes", i64), ("complete", b),
                         ("terminator", s), ("source_file", s), ("source_start", i64), ("source_end", i64),
                         ("standalone", b), ("resume_source_file", s), ("resume_source_pos", i64), ("alter", s),
                         ("alter_id", pa.decimal128(20, 0)), ("repeats", s)],   # a MariaDB seq_no: uint64
        "changes": [("db", s), ("table", s), ("op", s), ("gtid", s), ("server_id", i64), ("commit_time", ts),
                    ("file", s), ("offset", i64), ("row_index", i64), ("schema_version", s), ("before", s),
                    ("after", s)],
        "summaries": [("file", s), ("directory", s), ("base", s), ("number", i64), ("size", i64), ("relay", b),
                      ("server_version", s), ("flavor", s), ("events", i64), ("end_offset", i64),
                      ("first_timestamp", i64), ("last_timestamp", i64), ("transactions", i64),
                      ("bad_checksums", i64), ("server_ids", pa.list_(i64)), ("previous_gtids", s),
                      ("gtid_list", s), ("problem", s), ("summary", s)],
    }
    if table not in cols:
        raise ValueError(f"table {table!r}: one of events, transactions, changes, summaries")
    return pa.schema(cols[table])


@dataclass(frozen=True)
class Query:
    """What one read asks, as plain values that travel to executors: the table, the filters the
    rows must pass (ANDed; Spark evaluates its own filters again), the batch size and where to
    note each file opened (``trace``: a local file, for the pushdown proof)."""

    table: str
    batch_rows: int = BATCH_ROWS
    min_timestamp: float | None = None          # rows at or after (seconds); prunes files
    gtids: frozenset[str] | None = None         # rows of these GTIDs only; prunes files
    types: frozenset[int] | None = None         # events: these type codes only
    tables: tuple[str, ...] = ()                # changes: db.table patterns
    changes_table: str | None = None            # changes: one table's typed columns
    fields: bool = True                         # events: decode bodies (``name``, ``fields``, payloads' events)
    trace: str | None = None
    typed: Any = field(default=None, repr=False)  # changes_table's Arrow schema (made on the driver)


def note_open(q: Query, task: FileTask) -> None:
    """One line per file whose events are read (O_APPEND: whole lines from many processes)."""
    if q.trace:
        fd = os.open(q.trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{q.table}\t{task.name}\n".encode())
        finally:
            os.close(fd)


class _Batcher:
    """Column lists of one batch; ``add`` a row, ``full`` when ``n`` rows are in."""

    def __init__(self, sch, n: int) -> None:
        self.schema, self.n = sch, n
        self.names = sch.names
        self.cols: list[list] = [[] for _ in self.names]

    def add(self, row: tuple) -> bool:
        for c, v in zip(self.cols, row):
            c.append(v)
        return len(self.cols[0]) >= self.n

    def take(self):
        pa = _pa()
        b = pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(self.cols, self.schema)],
                                       schema=self.schema)
        self.cols = [[] for _ in self.names]
        return b

    def __len__(self) -> int:
        return len(self.cols[0])


def _rows_to_batches(rows: Iterator[tuple], sch, n: int) -> Iterator[Any]:
    b = _Batcher(sch, n)
    for row in rows:
        if b.add(row):
            yield b.take()
    if len(b):
        yield b.take()


def batches(q: Query, task: FileTask, resolve=None) -> Iterator[Any]:
    """The Arrow batches of ``q.table`` for one file."""
    note_open(q, task)
    inp = task.input(resolve)
    if q.table == "changes":
        yield from _changes(q, task, inp)
        return
    if q.table == "events" and _eventcols() is not None:
        if not q.fields:
            yield from header_batches(q, task, inp)
            return
        if decoded_usable(task, inp):
            yield from decoded_batches(q, task, inp)
            return
    if q.table == "transactions":
        yield from _transactions(q, task, inp)
        return
    make: dict[str, Callable] = {"events": _events, "summaries": _summaries}
    yield from _rows_to_batches(make[q.table](q, task, inp), schema(q.table), q.batch_rows)


# --- events ---------------------------------------------------------------------------------------

def _events(q: Query, task: FileTask, inp) -> Iterator[tuple]:
    if not q.fields:
        yield from _headers(q, task, inp)
        return
    yield from _decoded(q, task, inp)


def _eventcols() -> Any:
    """The C column filler (``binlogkit._eventcols``), or None (not built, or
    ``BINLOGKIT_NO_EVENTCOLS=1`` / ``BINLOGKIT_PURE_PYTHON=1``: the reference path)."""
    from .._optional import load_c

    return load_c("_eventcols", "BINLOGKIT_NO_EVENTCOLS")


def header_batches(q: Query, task: FileTask, inp, c_mod: Any = None, bounds: list | None = None) -> Iterator[Any]:
    """``events`` without bodies (``fields=false``) as Arrow batches filled in C
    (``_eventcols.Cols``: the framing loop's taker appends the events it settles to column
    buffers; the few it hands back -- Format_descriptions, tagged GTIDs, a bad checksum -- are
    appended from their frame), filtered per batch by Arrow compute: no Python object per
    event. The same rows as ``_headers`` (the reference). ``bounds`` (a list) receives
    ``Cols.bounds()`` after a whole file was walked to its end."""
    from ..boundary import read_gtid
    from ..codecs.header import LEN_HEADER

    c_mod = c_mod or _eventcols()
    cols = c_mod.Cols(q.batch_rows)
    hi = task.stop
    if hi is not None:
        cols.stop = hi
    name = inp.name
    append, n_full = cols.append, q.batch_rows
    frames = inp.frames(want=GTID_TYPES, records=False, taker=cols.take, start=task.start)
    ended = True
    for at, code, ts, sid, size, log_pos, flags, data, ok, fmt in frames:
        if hi is not None and at >= hi:
            ended = False
            break
        if fmt is not None:
            cols.header_length = max(LEN_HEADER, fmt.header_length)
        if code in GTID_TYPES and data is not None:
            hl = max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER
            value = read_gtid(code, sid, bytes(data[hl:len(data) - (fmt.len_checksum if fmt else 0)]))[0]
            cols.gtid = None if value is None else str(value)
        if len(cols) >= n_full:
            rb = _cols_batch(cols, q, task, name)
            if rb.num_rows:
                yield rb
        append(at, code, ts, sid, size, log_pos, flags, ok)
    if getattr(frames, "close", None):
        frames.close()
    if len(cols):
        rb = _cols_batch(cols, q, task, name)
        if rb.num_rows:
            yield rb
    if bounds is not None and ended and task.whole():
        bounds.append(cols.bounds())


def decoded_usable(task: FileTask, inp) -> bool:
    """Whether ``decoded_batches`` takes this read: the C decoder there (``reading.fastdecode``)
    and a file it reads itself: plain, compressed (its decompressed stream) or a range of either
    (the head, then a seek: ``decode_fast(streams=True)``); not standard input."""
    from ..reading import fastdecode

    return fastdecode.available() and inp.path != "-"


def decoded_batches(q: Query, task: FileTask, inp, c_mod: Any = None) -> Iterator[Any]:
    """``events`` with decoded ``fields`` as Arrow batches without a Python object per hot
    event: the C decoder renders ``decode --json``'s lines for the events it takes
    (``fastdecode.decode_fast``: GTIDs, table maps, rows events, Xids...) and ``_eventcols.JsonCols``
    scans those lines into column buffers (``fields`` as the rendered JSON text); the events
    the decoder hands to Python (Format_descriptions, Queries, payloads' inner events...) are
    appended from their ``Event``. A range: the file's head, then from ``task.start`` (the
    decoder seeks there) until the decoder passed ``task.stop`` (its progress), the events of
    the range kept (those whose own or payload's offset is in it). The same rows as
    ``_decoded`` (the reference)."""
    from dataclasses import replace

    from ..reading import fastdecode
    from ..reading.decoder import Problem

    c_mod = c_mod or _eventcols()
    cols = c_mod.JsonCols()
    lines, append, n_full = cols.lines, cols.append, q.batch_rows
    stop = task.stop
    reached = [0]

    class _Reached:   # decode_fast's progress: the offset the decoder reached
        def __init__(self, name: str, size: int) -> None:
            pass

        def __call__(self, at: int) -> None:
            reached[0] = at

        def close(self) -> None:
            pass
    if task.start is not None:
        inp = replace(inp, start=task.start)
    for item in fastdecode.decode_fast([inp], verify=inp.verify, as_json=True, streams=True,
                                       progress=_Reached if stop is not None else None):
        if isinstance(item, (bytes, bytearray)):
            lines(item)
        elif isinstance(item, Problem):
            continue
        else:
            raw = item.raw
            code = raw.type_code
            if code in GTID_TYPES:
                g = item.fields.get("gtid")
                cols.gtid = g if isinstance(g, str) else None
            inner = raw.payload_offset is not None
            append(raw.offset, raw.offset if inner else raw.end_offset, code, raw.timestamp, raw.server_id,
                   raw.event_size, raw.log_pos, raw.flags, raw.checksum_ok, item.name,
                   json.dumps(item.fields, default=str), raw.payload_offset, raw.inner_offset if inner else None)
        if len(cols) >= n_full:
            rb = _json_batch(cols, q, inp.name, task)
            if rb.num_rows:
                yield rb
        if stop is not None and reached[0] >= stop:
            break
    if len(cols):
        rb = _json_batch(cols, q, inp.name, task)
        if rb.num_rows:
            yield rb


def _json_batch(cols: Any, q: Query, name: str, task: FileTask | None = None):
    """One ``JsonCols`` batch as the ``events`` table's record batch, the query's filters (and
    the range's, by the offset of the event or of the payload it is in) applied."""
    import pyarrow.compute as pc

    pa = _pa()
    names = _type_names()
    n, d = cols.finish()
    buf = pa.py_buffer
    s, i64 = pa.string(), pa.int64()

    def num(key: str, typ):
        return pa.Array.from_buffers(typ, n, [None, buf(d[key])])

    def text(key: str):
        return pa.Array.from_buffers(s, n, [None, buf(d[key + "_offsets"]), buf(d[key + "_data"])])

    def valid(arr, key: str):
        return pc.if_else(pc.equal(num(key, pa.uint8()), 1), arr, pa.scalar(None, arr.type))

    code, ts = num("type_code", pa.int32()), num("timestamp", i64)
    ok8 = num("checksum_ok", pa.uint8())
    ok = pc.if_else(pc.equal(ok8, 2), pa.scalar(None, pa.bool_()), pc.equal(ok8, 1))
    gtid = valid(text("gtid"), "gtid_valid")
    arrays = [pa.repeat(pa.scalar(name, s), n), num("offset", i64), num("end_offset", i64), names.take(code),
              code, text("name"), ts, num("server_id", i64), num("event_size", i64), num("log_pos", i64),
              num("flags", pa.int32()), ok, valid(num("payload_offset", i64), "payload_valid"),
              valid(num("inner_offset", i64), "inner_valid"), gtid, text("fields")]
    rb = pa.RecordBatch.from_arrays(arrays, schema=schema("events"))
    if task is not None and not task.whole():
        at = pc.coalesce(rb.column("payload_offset"), rb.column("offset"))
        mask = pc.greater_equal(at, task.start if task.start is not None else 0)
        if task.stop is not None:
            mask = pc.and_(mask, pc.less(at, task.stop))
        rb = rb.filter(mask)
    return _filter_events(rb, q)


_TYPE_NAMES: Any = None


def _type_names():
    """The ``type`` column's names by type code, as an Arrow array to ``take`` from."""
    global _TYPE_NAMES
    if _TYPE_NAMES is None:
        from ..constants import event_type_name

        _TYPE_NAMES = _pa().array([event_type_name(c) for c in range(256)], _pa().string())
    return _TYPE_NAMES


def _filter_events(rb, q: Query, start: int | None = None):
    """An ``events`` batch with the query's filters applied (and a range's start: the C header
    builder may hand the events before it)."""
    import pyarrow.compute as pc

    pa = _pa()
    mask = None

    def both(m):
        return m if mask is None else pc.and_(mask, m)
    if start is not None:
        mask = both(pc.greater_equal(rb.column("offset"), start))
    if q.types is not None:
        mask = both(pc.is_in(rb.column("type_code"), value_set=pa.array(sorted(q.types), pa.int32())))
    if q.gtids is not None:
        mask = both(pc.fill_null(pc.is_in(rb.column("gtid"), value_set=pa.array(sorted(q.gtids), pa.string())),
                                 False))
    if q.min_timestamp is not None:
        mask = both(pc.greater_equal(rb.column("timestamp"), int(q.min_timestamp)
                                     if q.min_timestamp == int(q.min_timestamp) else q.min_timestamp))
    return rb if mask is None else rb.filter(mask)


def _cols_batch(cols: Any, q: Query, task: FileTask, name: str):
    """One ``Cols`` batch as the ``events`` table's record batch, the query's filters applied."""
    import pyarrow.compute as pc

    pa = _pa()
    names = _type_names()
    n, d = cols.finish()
    buf = pa.py_buffer

    def num(key: str, typ):
        return pa.Array.from_buffers(typ, n, [None, buf(d[key])])

    offset, size, code = num("offset", pa.int64()), num("event_size", pa.int64()), num("type_code", pa.int32())
    ts = num("timestamp", pa.int64())
    ok8 = num("checksum_ok", pa.uint8())
    ok = pc.if_else(pc.equal(ok8, 2), pa.scalar(None, pa.bool_()), pc.equal(ok8, 1))
    gtid = pa.Array.from_buffers(pa.string(), n, [None, buf(d["gtid_offsets"]), buf(d["gtid_data"])])
    gtid = pc.if_else(pc.equal(num("gtid_valid", pa.uint8()), 1), gtid, pa.scalar(None, pa.string()))
    s, i64 = pa.string(), pa.int64()
    arrays = [pa.repeat(pa.scalar(name, s), n), offset, pc.add(offset, size), names.take(code), code,
              pa.nulls(n, s), ts, num("server_id", i64), size, num("log_pos", i64), num("flags", pa.int32()), ok,
              pa.nulls(n, i64), pa.nulls(n, i64), gtid, pa.nulls(n, s)]
    return _filter_events(pa.RecordBatch.from_arrays(arrays, schema=schema("events")), q, task.start)


def _headers(q: Query, task: FileTask, inp) -> Iterator[tuple]:
    """``events`` without decoding bodies (``fields=false``): the framing loop's tuples, only
    GTID events' bodies read (for ``gtid``); ``name`` and ``fields`` null, and the events inside
    MySQL Transaction_payloads not listed (they are inside a body)."""
    from ..boundary import read_gtid
    from ..codecs.header import LEN_HEADER
    from ..constants import event_type_name

    name = inp.name
    gtid: str | None = None
    lo, hi = task.start, task.stop
    for at, code, ts, sid, size, log_pos, flags, data, ok, fmt in inp.frames(want=GTID_TYPES, records=False,
                                                                              start=lo):
        if hi is not None and at >= hi:
            break
        if code in GTID_TYPES and data is not None:
            hl = max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER
            value = read_gtid(code, sid, bytes(data[hl:len(data) - (fmt.len_checksum if fmt else 0)]))[0]
            gtid = None if value is None else str(value)
            if q.types is not None and code not in q.types:
                continue
        elif q.types is not None and code not in q.types:
            continue
        if lo is not None and at < lo:
            continue
        if q.gtids is not None and gtid not in q.gtids:
            continue
        if q.min_timestamp is not None and ts < q.min_timestamp:
            continue
        yield (name, at, at + size, event_type_name(code), code, None, ts, sid, size, log_pos, flags, ok, None, None,
               gtid, None)


def _decoded(q: Query, task: FileTask, inp) -> Iterator[tuple]:
    from ..api import decode_files
    from ..reading.decoder import Problem

    types = None if q.types is None else set(q.types) | set(GTID_TYPES)
    gtid: str | None = None
    evs = (decode_files([inp], types=types, payloads=True) if task.whole() else _range_events(task, inp, types))
    for ev in evs:
        if isinstance(ev, Problem):
            continue
        raw = ev.raw
        code = raw.type_code
        if code in GTID_TYPES:
            g = ev.fields.get("gtid")
            gtid = g if isinstance(g, str) else None
            if q.types is not None and code not in q.types:
                continue
        if q.gtids is not None and gtid not in q.gtids:
            continue
        if q.min_timestamp is not None and raw.timestamp < q.min_timestamp:
            continue
        inner = raw.payload_offset is not None
        yield (raw.file, raw.offset, raw.offset if inner else raw.end_offset, raw.type_name, code, ev.name,
               raw.timestamp, raw.server_id, raw.event_size, raw.log_pos, raw.flags, raw.checksum_ok,
               raw.payload_offset, raw.inner_offset if inner else None, gtid, json.dumps(ev.fields, default=str))


def _range_events(task: FileTask, inp, types) -> Iterator[Any]:
    """``decode_files``' events of a range of a file: the head, then from ``task.start`` on (the
    reading layer seeks there: ``Input.frames(start=)``), up to ``task.stop``; a damaged event
    ends the range as it ends the file there (``Problem`` values are skipped by the caller)."""
    from dataclasses import replace

    from ..errors import BinlogError
    from ..reading.decoder import EventDecoder
    from ..reading.reader import read_events

    dec = EventDecoder(strict=True)
    name = inp.name
    try:
        for raw in read_events(replace(inp, start=task.start)):
            if task.stop is not None and raw.offset >= task.stop:
                break
            if task.start is not None and raw.offset < task.start:
                continue
            yield from dec.each(raw, name, types=types, payloads=True)
            if dec.failed:
                break
    except BinlogError:
        return


def _range_frames(task: FileTask, inp, want, taker=None) -> Iterator[Any]:
    """The frames (bare tuples) of a range of whole transactions: the head, then from the event
    before ``task.start`` (``task.lead``: what the grouper needs to know before the range; the
    reading layer seeks there) to the first GTID event at or after ``task.stop`` (a whole file:
    all of it). ``taker``: the framing loop's (``transactions.Grouper``'s C run)."""
    hi = task.stop
    frames = inp.frames(want=want, records=False, start=task.lead if task.lead is not None else task.start,
                        taker=taker)
    try:
        for f in frames:
            if hi is not None and f[0] >= hi and f[1] in GTID_TYPES:
                return
            yield f
    finally:
        frames.close()


def walk_bounds(task: FileTask, resolve=None):
    """``files.TimeBounds`` of a whole file by a header walk (the C columns when built), None
    when it cannot be walked to its end."""
    from dataclasses import replace

    from ..constants import EventType as ET
    from ..errors import BinlogError
    from .files import TimeBounds

    whole = replace(task, start=None, stop=None, lead=None)
    got: list = []
    try:
        if _eventcols() is not None:
            for _ in header_batches(Query("events", batch_rows=1 << 16, fields=False), whole, whole.input(resolve),
                                    bounds=got):
                pass
            if not got:
                return None
            events, lo, hi, payloads = got[0]
        else:
            events, lo, hi, payloads = 0, None, None, 0
            for f in whole.input(resolve).frames(want=frozenset(), records=False):
                ts = f[2]
                events += 1
                lo = ts if lo is None or ts < lo else lo
                hi = ts if hi is None or ts > hi else hi
                payloads += f[1] == ET.TRANSACTION_PAYLOAD_EVENT
    except (BinlogError, OSError):
        return None
    if payloads or not events:
        return TimeBounds(events, None, None)
    return TimeBounds(events, lo, hi)


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


# --- summaries ------------------------------------------------------------------------------------

def _summaries(q: Query, task: FileTask, inp) -> Iterator[tuple]:
    from ..audit.summary import file_summary

    s = file_summary(inp)
    j = lambda v: None if v is None else json.dumps(v, default=str)  # noqa: E731
    yield (s["file"], s["directory"], s["base"], s["number"], s["size"], s["relay"], s["server_version"],
           s["flavor"], s["events"], s["end_offset"], s["first_timestamp"], s["last_timestamp"], s["transactions"],
           len(s["bad_checksums"]), list(s["server_ids"]), j(s["previous_gtids"]), j(s["gtid_list"]),
           j(s["problem"]), json.dumps(s, default=str))


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
    a range of a file, the transactions that begin in it."""
    from ..export.changes import Filters

    @dataclass(frozen=True)
    class InRange(Filters):
        task: Any = None

        def trx_wanted(self, t) -> bool:
            return (self.task is None or self.task.holds(t.start_offset)) and super().trx_wanted(t)

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

    for task in tasks:
        for change in committed_changes([task.input(resolve)], Filters(tables=(name,)), Report()):
            if isinstance(change, Rows):
                return layout(change.table).schema
    return None

"""The ``events`` table: one row per event, the fields of ``binlogkit decode --json`` (``fields``
as its JSON text; ``gtid``: the GTID of the transaction the event is in), made by the C decoder's
JSON lines scanned into C columns, or from the headers alone (``fields=false``), the Python
decode (``_decoded``, ``_headers``) the reference; and ``walk_bounds`` (a file's time bounds by a
header walk, for the bounds cache)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .files import FileTask

from ..constants import GTID_TYPES
from .common import Query, _pa, schema


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


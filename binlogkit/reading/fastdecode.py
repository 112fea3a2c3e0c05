"""The accelerated `decode` / `decode --json` / `decode -v` / `verify` path over plain files.

``binlogkit._fastdecode`` (C, optional) frames the events of a window of the file, checks their
CRC32 and renders the hot event kinds (Table_map, rows, Xid, MariaDB GTID, Annotate_rows) as
the Python path prints them; every other event, and every event it finds anything irregular
about, comes back here and goes through the Python path of that event (``api.EventDecoder``:
the same decode, the same Events the command renders). A framing problem (torn or oversized
event, checksum mismatch) hands the rest of the file to the reader itself (``reader.read_events``
of the same ``Input``), so every error is the reader's, word for word. The C loop sits behind
the one opener (``reading.source``): it reads the stored bytes ``Input.open`` gives, and anything
that is not a bare binlog (a container: a MySQL encrypted file) goes to ``Input.frames``.

What it takes: uncompressed local files (not .xz/.gz/.bz2, not encrypted: a Start_encryption
event hands over), output in UTC, no position / time / type / GTID filters. ``usable()`` says
whether it applies; the command falls back to ``api.decode_files`` otherwise. Without the C
module (no compiler, or ``BINLOGKIT_PURE_PYTHON=1``) nothing here is used.

Replayable ``decode`` (the default: ``decoding.replay``) takes the C loop's ``Replayer`` through
``replay_fast``: a typical row-based transaction (MariaDB GTID, Annotate_rows, Table_map, rows
events, Xid) is printed in C, byte for byte as ``Replay.feed`` prints it, from the state
``Replay.lend()`` gives; before any other event (Query, Format_description, an event C finds
unusual) is fed to ``Replay``, ``Replay.settle(...)`` takes that state back with the statement
C holds (its row events' headers and base64, an Annotate_rows' lines). Table maps C printed are
registered with the Python decoder then, for rows events of theirs the Python path reads
(``tests/test_fastdecode_replay.py``).

Equality with the Python path is tested on every event of every fixture and corpus file and on
damaged copies (``tests/test_fastdecode.py``, hypothesis); ``make asan-fastdecode`` runs the same
under AddressSanitizer + UBSan.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Protocol

from .._optional import load_c
from ..codecs import fast as fast_codecs
from ..codecs.format_description import fde_is_checksum_aware
from ..codecs.header import LEN_HEADER
from ..constants import BINLOG_MAGIC, LEN_CHECKSUM, ChecksumAlg, EventType, event_type_name
from .crc import CRC32
from ..errors import BinlogError
from .format import Format, format_of_event
from .reader import RawEvent, event_crc
from .source import Input, as_input, inputs
from .registry import codec_for

if TYPE_CHECKING:
    from .decoder import EventDecoder
    from .scan import ScanResult
    from .storage import Url



class _CLoop(Protocol):
    """What is used of the C module (``_fastdecode.pyi``): tests swap in None or another build."""

    def walk(self, buf: bytearray, rel: int, filled: int, at: int, opts: int, crc: Callable[[bytes, int], int],
             cfg: bytes, names: tuple[bytes | None, ...] | dict[int, bytes] | None, prefix: bytes,
             plans: dict[bytes, Any] = ..., tables: dict[int, Any] = ..., maps: dict[int, tuple[bytes, int]] = ...,
             /) -> tuple[int, int, int, int, bytes, Any, int, int]: ...


_fastdecode: _CLoop | None = load_c("_fastdecode", "BINLOGKIT_NO_FASTDECODE")


MORE, PYTHON, HANDOVER, ROWS, TABLEMAP, FULL = range(6)
O_VERIFY, O_TEXT, O_JSON, O_VERBOSE, O_FIRST_PY, O_CRC_ON, O_SHOW_CRC, O_COUNT = (1 << i for i in range(8))
O_JROWS = 1 << 17  # with O_JSON: rows events with their values (decode --json -v), by _JsonRows' plans
WINDOW = 4 << 20
_FDE, _START_V3 = int(EventType.FORMAT_DESCRIPTION_EVENT), int(EventType.START_EVENT_V3)
_START_ENCRYPTION = int(EventType.START_ENCRYPTION_EVENT)
_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD_EVENT)
# what the C loop renders, and the codec it must be for the flavor in force
HOT = {19: "Table_map", 16: "Xid", 162: "GTID", 160: "Annotate_rows",
       23: "Write_rows_v1", 24: "Update_rows_v1", 25: "Delete_rows_v1",
       30: "Write_rows", 31: "Update_rows", 32: "Delete_rows"}
ROWS_CODES = frozenset({23, 24, 25, 30, 31, 32})
REPLAY_ONLY = {2: "Query"}  # replayable text: its BEGIN / COMMIT printed by Replayer.walk too
REPLAY_HOT = ROWS_CODES | {19, 16, 162, 160, 2}  # replayable text: what Replayer.walk prints (decoding/replay.py's way)


def available() -> bool:
    return _fastdecode is not None


def plain(path) -> bool:
    """Not compressed: a local regular file, or an object-storage URL (read through its stream)."""
    return as_input(path).plain()


def usable(*, utc: bool, filters: bool) -> bool:
    """Whether ``decode`` can take this path (per file, ``plain`` decides the rest)."""
    return _fastdecode is not None and utc and not filters


def _checksum_on(fde: bytes) -> bool:
    return fde_is_checksum_aware(fde) and fde[-5] == ChecksumAlg.CRC32


class _Config:
    """What the C loop needs to know about the format in force: which types it renders, the
    post-header lengths, the JSON names."""

    _cache: dict[tuple[Format | None, bool, bool, bool], _Config] = {}
    cfg: bytes                          # 256 "rendered here" flags, then 256 post-header lengths
    names: tuple[bytes | None, ...]     # per type code: the JSON name fields, for rendered types
    show_crc: bool

    def __new__(cls, fmt: Format | None, *, as_json: bool, rows_objects: bool, replay: bool = False) -> _Config:
        key = (fmt, as_json, rows_objects, replay)
        got = cls._cache.get(key)
        if got is not None:
            return got
        self = super().__new__(cls)
        hot = bytearray(256)
        names: list[bytes | None] = [None] * 256
        if fmt is not None and fmt.header_length == LEN_HEADER:
            for code, name in (HOT | REPLAY_ONLY if replay else HOT).items():
                codec = codec_for(code, fmt.flavor)
                if codec is None or codec.name != name:
                    continue
                if rows_objects and (code == 19 or code in ROWS_CODES):
                    continue  # rows as Python objects: the Python path's
                if replay and code not in REPLAY_HOT:
                    continue  # replayable text: the events Replayer.walk prints
                hot[code] = 1
                names[code] = (f'"type": {json.dumps(event_type_name(code))}, "type_code": {code}, '
                               f'"name": {json.dumps(codec.name)}').encode()
        phl = bytes((fmt.post_header_length(t) or 0) if fmt else 0 for t in range(256))
        self.cfg = bytes(hot) + phl
        self.names = tuple(names)
        self.show_crc = bool(fmt and fmt.len_checksum)
        if len(cls._cache) > 64:
            cls._cache.clear()
        cls._cache[key] = self
        return self


class _Window:
    """A sliding window over a file: ``buf[rel:filled]`` holds the file from offset ``at``."""

    def __init__(self, fh: Any) -> None:  # a binary stream with readinto
        self.fh = fh
        self.buf = bytearray(WINDOW)
        self.rel = self.filled = 0
        self.at = 4
        self.eof = False

    def refill_next(self) -> None:
        """Refill for the next event: its whole bytes when its header is in, else a header."""
        need = LEN_HEADER
        if self.filled - self.rel >= LEN_HEADER:
            need = int.from_bytes(self.buf[self.rel + 9:self.rel + 13], "little")
        self.refill(need)

    def skip_to(self, start: int) -> None:
        """Move on to file offset ``start`` (at or after ``at``): within the window, or by
        ``framing.skip_to`` (a seek, or the bytes read and dropped) and an empty window."""
        ahead = self.filled - self.rel
        if start - self.at <= ahead:
            self.rel += start - self.at
        else:
            from . import framing

            framing.skip_to(self.fh, self.at + ahead, start)
            self.rel = self.filled = 0
            self.eof = False
        self.at = start

    def refill(self, need: int) -> None:
        """Slide what is left to the front and read until ``need`` bytes are there (or EOF)."""
        keep = self.filled - self.rel
        buf = self.buf
        if need > len(buf):
            buf.extend(bytes(need - len(buf)))
        mv = memoryview(buf)
        try:
            mv[:keep] = mv[self.rel:self.filled]
            self.rel, self.filled = 0, keep
            while not self.eof and (self.filled < need or self.filled < len(buf) // 2):
                got = self.fh.readinto(mv[self.filled:])
                if not got:
                    self.eof = True
                    break
                self.filled += got
        finally:
            mv.release()


def decode_fast(paths, *, verify: bool = True, strict: bool = True, rows: bool | str = False,
                column_types=None, as_json: bool = False, progress=None, streams: bool = False) -> Iterator:
    """What ``api.decode_files(paths, ..., payloads=True)`` yields, except that stretches of hot
    events come as ``bytes``: their text (or JSON lines) already rendered. ``progress(name,
    size)``, when given, makes a callable told the offset reached (with ``close()``) per file.
    ``streams``: compressed files (``.xz``/``.gz``/``.bz2``) and inputs read from an offset
    (``Input.start``: the head, then the events from there, as ``Input.frames`` reads them) go
    through the C loop too, over the one opener's decompressed stream (``Input.open``; a seek, or
    bytes read and dropped), instead of the reader."""
    from .decoder import EventDecoder

    dec = EventDecoder(strict=strict, rows=rows, column_types=column_types)
    jrows = _JsonRows() if as_json and rows is True else None  # tables carry over, as the decoder's
    for inp in inputs(paths, verify=verify):
        c_loop = _fastdecode
        taken = inp.plain() or (streams and inp.path != "-" and inp.stop is None
                                and (inp.compression is not None or inp.start is not None))
        if c_loop is None or not taken:  # archives: the reader (tables carry over)
            if jrows is not None:
                jrows.sync(dec)
            yield from _handover(inp, 0, dec, strict=strict)
            continue
        prog = progress(inp.basename, inp.size()) if progress is not None else None
        try:
            yield from _file(c_loop, inp, dec, strict=strict, as_json=as_json, progress=prog, jrows=jrows)
        finally:
            if prog is not None:
                prog.close()


def _handover(inp: Input, at: int, dec: EventDecoder, *, strict: bool) -> Iterator:
    """The rest of the file from offset ``at`` by the reader itself (its framing, its errors)."""
    from .reader import read_events

    path = inp.name
    try:
        for raw in read_events(inp):
            if raw.offset < at:
                continue
            yield from dec.each(raw, path, payloads=True)
            if dec.failed and strict:
                return
    except BinlogError as exc:
        from .decoder import Problem
        yield Problem(path, exc.with_context(file=path))


class _JsonRows:
    """decode --json -v through the C loop (O_JROWS): ``plans``, Table_map body -> what C writes
    that table's rows by (``rowvalues.jsonform.c_json_plan`` of the Python decoder's table; None:
    its map and rows are the Python path's); ``tables``, table id -> the plan of the map C wrote
    last for it; ``maps``, table id -> (event bytes, offset) of the maps C wrote since the Python
    decoder last heard of them (``sync``: before it reads anything)."""

    def __init__(self) -> None:
        self.plans: dict[bytes, Any] = {}
        self.tables: dict[int, Any] = {}
        self.maps: dict[int, tuple[bytes, int]] = {}
        self.fmt: Format | None = None
        self.name = ""

    def plan(self, dec: EventDecoder, raw: RawEvent, body: bytes) -> None:
        """The plan of a map C asked for (the Python decoder reads it: its table is kept too)."""
        from ..rowvalues.jsonform import c_json_plan

        if len(self.plans) > 4096:
            self.plans.clear()
        self.plans[body] = c_json_plan(_read_map(dec, raw))

    def sync(self, dec: EventDecoder) -> None:
        """The maps C wrote, registered with the Python decoder (for the rows events it reads)."""
        show_crc = bool(self.fmt and self.fmt.len_checksum)
        for table_id, (data, offset) in self.maps.items():
            body = data[LEN_HEADER:len(data) - (LEN_CHECKSUM if show_crc else 0)]
            _register(dec, self.fmt, body, table_id, data, offset, self.name)
        self.maps.clear()


def _file(c_loop: _CLoop, inp: Input, dec: EventDecoder, *, strict: bool, as_json: bool,
          progress: Callable[[int], object] | None = None, jrows: _JsonRows | None = None) -> Iterator:
    name, verify = inp.name, inp.verify
    rows = dec.rows
    verbose_text = rows in ("text", "types") and not as_json
    opts = (O_JSON if as_json else O_TEXT) | (O_VERIFY if verify else 0) | (O_VERBOSE if verbose_text else 0)
    prefix = f'{{"file": {json.dumps(name)}, "offset": '.encode()
    fmt = None
    crc_on = False
    objects = bool(rows) and as_json and jrows is None
    if jrows is not None:
        opts |= O_JROWS
        jargs: tuple = (jrows.plans, jrows.tables, jrows.maps)
        jrows.sync(dec)  # what an earlier file's maps left
        jrows.fmt, jrows.name = None, name
    else:
        jargs = ()
    cfg = _Config(None, as_json=as_json, rows_objects=objects)
    first_py = False
    jump = inp.start
    with inp.open() as fh:  # the one opener's stored bytes (plain: no container, no codec)
        if fh.read(4) != BINLOG_MAGIC:  # a container or not a binlog: the one opener's way
            yield from _handover(inp, 0, dec, strict=strict)
            return
        w = _Window(fh)
        w.refill(LEN_HEADER)
        walk = c_loop.walk
        while True:
            o = opts | (O_CRC_ON if crc_on else 0) | (O_SHOW_CRC if cfg.show_crc else 0) | (O_FIRST_PY if first_py else 0)
            status, w.rel, _, w.at, text, info, _, _ = walk(w.buf, w.rel, w.filled, w.at, o, CRC32, cfg.cfg,
                                                            cfg.names, prefix, *jargs)
            was_first_py = first_py
            if status != MORE:
                first_py = False
            if progress is not None:
                progress(w.at)
            if status == MORE:
                if text:
                    yield text
                if w.eof:
                    if w.rel < w.filled:  # a torn event: the reader says so
                        if jrows is not None:
                            jrows.sync(dec)
                        yield from _handover(inp, w.at, dec, strict=strict)
                    return
                w.refill_next()
                continue
            if status == FULL:
                yield text
                continue
            if status == HANDOVER:
                if text:
                    yield text
                if jrows is not None:
                    jrows.sync(dec)
                yield from _handover(inp, w.at, dec, strict=strict)
                return
            if status in (ROWS, TABLEMAP):
                code, table_id, b0, b1, mark = info
                body = bytes(w.buf[b0:b1])
                size = LEN_HEADER + (b1 - b0) + (LEN_CHECKSUM if cfg.show_crc else 0)
                try:
                    extra = _rows_text(dec, fmt, code, table_id, body) if status == ROWS else None
                    if status == TABLEMAP:
                        _register(dec, fmt, body, table_id, bytes(w.buf[w.rel - size:w.rel]), w.at - size, name)
                except BinlogError as exc:
                    from .decoder import Problem
                    if mark:
                        yield text[:mark]
                    yield Problem(name, exc.with_context(file=name, offset=w.at - size,
                                                         event_type=event_type_name(code)))
                    if strict:
                        return
                    continue
                yield text + extra if extra else text
                continue
            # PYTHON: this event goes through the Python path
            if text:
                yield text
            code, ts, sid, size, log_pos, flags, ok = info
            at = w.at
            data = bytes(w.buf[w.rel:w.rel + size])
            if jrows is not None:
                if code == 19 and size >= LEN_HEADER + (LEN_CHECKSUM if cfg.show_crc else 0):
                    body = data[LEN_HEADER:size - (LEN_CHECKSUM if cfg.show_crc else 0)]
                    if body not in jrows.plans:  # a map not seen yet: its plan made here, then the C loop's
                        jrows.plan(dec, RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, name), body)
                        first_py = was_first_py
                        continue
                jrows.sync(dec)
            if code == _START_ENCRYPTION:  # the reader reads it and says what follows is encrypted
                yield from _handover(inp, at, dec, strict=strict)
                return
            if code == _FDE:
                if fde_is_checksum_aware(data):
                    ok = int.from_bytes(data[-4:], "little") == event_crc(data)
                    if not ok and verify:
                        yield from _handover(inp, at, dec, strict=strict)
                        return
                crc_on = _checksum_on(data)
                try:
                    fmt = format_of_event(data)
                except BinlogError:
                    yield from _handover(inp, at, dec, strict=strict)
                    return
                cfg = _Config(fmt, as_json=as_json, rows_objects=objects)
                if jrows is not None:  # plans are the flavor's reading of a map
                    jrows.plans.clear()
                    jrows.fmt = fmt
            elif code == _START_V3 and fmt is None:
                fmt = format_of_event(data)
                cfg = _Config(fmt, as_json=as_json, rows_objects=objects)
                if jrows is not None:
                    jrows.plans.clear()
                    jrows.fmt = fmt
            raw = RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, name)
            w.rel += size
            w.at += size
            if jrows is not None and code in (19, _PAYLOAD):  # maps the Python decoder reads: C's go
                if code == 19:
                    width = 4 if fmt is not None and fmt.post_header_length(19) == 6 else 6
                    jrows.tables.pop(int.from_bytes(data[LEN_HEADER:LEN_HEADER + width], "little"), None)
                else:
                    jrows.tables.clear()
            yield from dec.each(raw, name, payloads=True)
            if dec.failed and strict:
                return
            if jump is not None and code in (_FDE, _START_V3):   # the head read: on to ``inp.start``
                w.refill(LEN_HEADER)                            # (after a Start_encryption: the reader)
                if not (w.filled - w.rel >= LEN_HEADER and w.buf[w.rel + 4] == _START_ENCRYPTION) and jump > w.at:
                    w.skip_to(jump)
                    w.refill(LEN_HEADER)
                jump = None
            # the event after a Transaction_payload ends the `# End of compressed events!` pair
            # ... and the Query a two-phase ALTER's GTID marks (the decoder's state)
            first_py = code == _PAYLOAD or dec.alter is not None


def _register(dec: EventDecoder, fmt: Format | None, body: bytes, table_id: int, data: bytes, offset: int, name: str) -> None:
    """A table map the C loop printed, for the rows events after it (``EventDecoder.register``)."""
    table = dec.known.get((fmt.flavor if fmt else None, body))
    if table is None:
        u32 = int.from_bytes
        raw = RawEvent(offset, u32(data[0:4], "little"), 19, u32(data[5:9], "little"), len(data),
                       u32(data[13:17], "little"), u32(data[17:19], "little"), data, fmt, None, name)
        dec.register(raw)
        return
    dec.tables[table_id] = table


def _rows_text(dec: EventDecoder, fmt: Format | None, code: int, table_id: int, body: bytes) -> bytes | None:
    """The `decode -v` lines of a rows event the C loop printed the header of."""
    table = dec.tables.get(table_id)
    if table is None:
        return None
    from ..rowvalues import verbose_text

    parsed = fast_codecs.rows(body, code, fmt.post_header_length(code) if fmt else None)
    return verbose_text(table, parsed, code, types=dec.rows == "types")


def verify_fast(path: str | os.PathLike[str], *, progress: Callable[[int], object] | None = None) -> ScanResult:
    """``scan.scan(path)`` for a plain file, with the framing and CRC32 loop in C; the Python
    scan reads any file it finds irregular (its verdict and wording are the reference)."""
    from .scan import ScanResult, scan

    from .files import input_size
    from .storage import is_url

    if not is_url(path):
        path = Path(path)
    c_loop = _fastdecode
    if c_loop is None or not plain(path):
        return scan(path, progress=progress)
    res = ScanResult(str(path), input_size(path))
    crc_on = False
    noconf = bytes(512)
    with as_input(path).open() as fh:
        if fh.read(4) != BINLOG_MAGIC:
            return scan(path, progress=progress)
        w = _Window(fh)
        w.refill(LEN_HEADER)
        walk = c_loop.walk
        while True:
            o = O_COUNT | O_VERIFY | (O_CRC_ON if crc_on else 0)
            status, w.rel, _, w.at, _, info, events, checksummed = walk(w.buf, w.rel, w.filled, w.at, o, CRC32,
                                                                        noconf, None, b"")
            res.events += events
            res.checksummed += checksummed
            res.end_offset = w.at
            if progress is not None:
                progress(w.at)
            if status == MORE:
                if w.eof:
                    return res if w.rel == w.filled else scan(path, progress=progress)
                w.refill_next()
                continue
            if status != PYTHON:
                return scan(path, progress=progress)
            code, size = info[0], info[3]
            if code == _START_ENCRYPTION:
                return scan(path, progress=progress)
            ok = info[6]
            if code == _FDE:
                data = bytes(w.buf[w.rel:w.rel + size])
                crc_on = _checksum_on(data)
                ok = None
                if fde_is_checksum_aware(data):
                    ok = int.from_bytes(data[-4:], "little") == event_crc(data)
                    if not ok:
                        return scan(path, progress=progress)
            res.events += 1
            res.checksummed += ok is not None
            w.rel += size
            w.at += size
            res.end_offset = w.at


# --- replayable text (decode's default): the hot events in C, the rest through decoding/replay.py ---

O_UTC, O_ROWCOUNT, O_SKIPREPL, O_GTIDS, O_ANNOTATE, O_TABLES, O_SV_MARIADB, O_SHOWS_XID = (1 << i for i in range(9, 17))
DIRECT_MIN = 1 << 18  # with a descriptor: a statement over this many bytes is written from the C loop's buffers


def replay_usable(replay: Any, *, filters: bool) -> bool:
    """Whether replayable ``decode`` can take this path: no filters, and ``replay``'s options the
    loop does not shape (no --database / --rewrite-db, BINLOG blocks on). Local time or UTC, as
    ``replay`` prints; -v / -vv rows too (by the tables' plans, ``_verbose_plan``)."""
    o = replay.opts
    return (_fastdecode is not None and not filters and o.base64 == "auto"
            and not o.databases and not o.rewrite_db)


class ReplayChunks:
    """``replay_fast``'s chunks (an iterator of str and bytes). ``direct(fd, flush)``, called before
    the first chunk is taken: the C loop writes its text to ``fd`` itself, in writes of up to
    1 MiB (no bytes object per MiB), after ``flush()`` has written what the chunks taken before
    it left buffered; the chunks are then only the Python path's text."""

    def __init__(self, make: Callable[["ReplayChunks"], Iterator[str | bytes]]) -> None:
        self.fd = -1
        self.flush: Callable[[], object] = lambda: None
        self._chunks = make(self)

    def direct(self, fd: int, flush: Callable[[], object]) -> None:
        self.fd, self.flush = fd, flush

    def __iter__(self) -> "ReplayChunks":
        return self

    def __next__(self) -> str | bytes:
        return next(self._chunks)


def replay_fast(replay: Any, paths, *, verify: bool = True, column_types=None, progress=None) -> ReplayChunks:
    """``decoding.replay_text(replay, paths, verify=verify, ...)`` without filters, with the hot
    events (MariaDB GTID, Annotate_rows, Table_map, rows, Xid) printed by the C loop. The C loop
    continues from what ``replay.lend()`` gives and ``replay.settle(...)`` takes it back before
    any other event is fed to ``replay`` as the reference path feeds it. The C loop's text comes
    as bytes, or goes straight to a descriptor (``ReplayChunks.direct``)."""
    return ReplayChunks(lambda out: _replay_fast(replay, paths, verify=verify, column_types=column_types,
                                                 progress=progress, out=out))


def _replay_fast(replay: Any, paths, *, verify: bool, column_types, progress, out: ReplayChunks) -> Iterator[str | bytes]:
    from .decoder import EventDecoder, Problem

    paths = [p.with_options(verify=verify) if isinstance(p, Input) else p for p in paths]  # as replay_text
    for inp in inputs(paths, verify=verify):
        dec = EventDecoder(strict=True, rows="types" if replay.opts.verbose >= 2 else "text",  # -vv: type comments
                           column_types=column_types)  # per file, as decode_files([inp])
        c_loop = _fastdecode
        prog = None
        if progress is not None:
            try:
                prog = progress(inp.basename, inp.size())
            except (OSError, ValueError):
                prog = None
        if c_loop is None or not inp.plain():
            items: Iterator = _handover(inp, 0, dec, strict=True)
        else:
            items = _replay_file(c_loop, inp, dec, replay, hints=bool(column_types), progress=prog, out=out)
        for item in items:
            if isinstance(item, bytes):
                yield item
                continue
            if isinstance(item, Problem):
                yield replay.fail(None, str(item.error), file=item.path, offset=getattr(item.error, "offset", None),
                                  error=item.error)
                yield replay.close()
                return
            try:
                text = replay.feed(item)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:  # as replay_text
                yield replay.fail(item, f"the event does not print for replay ({type(exc).__name__}: {exc})")
                yield replay.close()
                return
            yield text
        if prog is not None and hasattr(prog, "close"):
            prog.close()
    yield replay.close()


class _Lender:
    """The C loop's ``Replayer`` and the ``Replay`` it prints for: ``lend`` before a walk (False:
    the Replay is somewhere the loop does not model), ``settle`` before the Replay is fed."""

    def __init__(self, c_loop: Any, replay: Any, *, hints: bool) -> None:
        self.rc = c_loop.Replayer()
        self.rc.direct_min = DIRECT_MIN
        self.replay = replay
        self.hints = hints
        self.lent = False

    def lend(self) -> bool:
        if self.lent:
            return True
        state = self.replay.lend()
        if state is None:
            return False
        rc = self.rc
        for name, value in state.items():
            setattr(rc, name, value)
        self.names = tuple(state)
        tool, o = self.replay.tool, self.replay.opts
        rc.notes = b"" if o.skip_gtids else "".join(n + "\n" for n in tool.table_map_notes).encode()
        self.opts = ((O_UTC if o.utc else 0) | (O_ROWCOUNT if tool.row_count else 0)
                     | (O_SKIPREPL if tool.skip_replication else 0) | (0 if o.skip_gtids else O_GTIDS)
                     | (O_ANNOTATE if tool.annotate_with_table_map else 0) | (0 if self.hints else O_TABLES)
                     | (O_SV_MARIADB if tool.status_vars_mariadb else 0) | (O_SHOWS_XID if tool.query_shows_xid else 0)
                     | (O_VERBOSE if o.verbose else 0))
        self.lent = True
        return True

    def settle(self) -> None:
        if not self.lent:
            return
        rc = self.rc
        head, body, annotate, tail = rc.take()
        self.replay.settle({name: getattr(rc, name) for name in self.names},
                           head=head.decode("ascii").split("\n")[:-1],  # each line ends in "\n"
                           body=[body.decode("ascii")] if body else [],
                           annotate=None if annotate is None else annotate.decode("ascii").split("\n")[:-1],
                           tail=None if tail is None else [tail.decode("utf-8", "surrogateescape")])
        self.lent = False

    def sync_tables(self, dec: EventDecoder, fmt: Format | None, name: str, show_crc: bool) -> None:
        """The table maps the C loop printed, registered with the Python decoder (its rows events
        may be the Python path's)."""
        maps = self.rc.maps
        for table_id, (data, offset) in maps.items():
            body = data[LEN_HEADER:len(data) - (LEN_CHECKSUM if show_crc else 0)]
            _register(dec, fmt, body, table_id, data, offset, name)
        maps.clear()


def _read_map(dec: EventDecoder, raw: RawEvent) -> Any:
    """The Python decoder's table of a Table_map (``EventDecoder.register``); None when it does not
    decode (the Python path then reads it and says why)."""
    try:
        tm = dec.register(raw)
    except BinlogError:
        return None
    return None if tm.parsed is None else dec.tables.get(tm.parsed["table_id"])


def _verbose_plan(table: Any, types_too: bool = False) -> tuple[bytes, bytes, bytes, tuple[bytes, ...] | None, bool] | None:
    """What the C loop prints a table's -v rows by, as ``rowvalues.verbose_text`` calls
    ``_rowtext.verbose`` (the same printer, ``_rowimage.h``): column types, metadata, quoted
    name, ` /* name */` notes (``types_too``, -vv: the type comments, ``rowvalues.images.type_notes``:
    one per column for a value, then one for a NULL), string quoting; None: the Python path prints
    them (no table, no C row printer, column hints, a name with a line break: rows are counted by
    their lines)."""
    from ..rowvalues.images import C_ROWTEXT, c_args, type_notes

    args = c_args(table) if table is not None and C_ROWTEXT is not None else ()
    if not args:
        return None
    types, metas, quoted, notes, _pads = args
    if types_too:
        notes = tuple(n.encode() for n in type_notes(table))
    if b"\n" in quoted or any(b"\n" in n for n in notes or ()):
        return None
    return types, metas, quoted, notes, bool(table.escape_strings)


def _replay_file(c_loop: Any, inp: Input, dec: EventDecoder, replay: Any, *, hints: bool = False,
                 progress: Callable[[int], object] | None = None, out: ReplayChunks | None = None) -> Iterator:
    """The events of one plain file: the C loop's text (bytes, or written to ``out.fd``), and the
    Events and Problems of the Python path for ``replay.feed``."""
    name, verify = inp.name, inp.verify
    base = O_TEXT | (O_VERIFY if verify else 0)
    fmt = None
    crc_on = False
    cfg = _Config(None, as_json=False, rows_objects=False, replay=True)
    first_py = False
    lender = _Lender(c_loop, replay, hints=hints)
    direct = out if out is not None and out.fd >= 0 else None
    if direct is not None:
        lender.rc.out_fd = direct.fd
    with inp.open() as fh:
        if fh.read(4) != BINLOG_MAGIC:
            yield from _handover(inp, 0, dec, strict=True)
            return
        w = _Window(fh)
        w.refill(LEN_HEADER)
        while True:
            # the event after one that leaves Replay between states its feed() closes (a
            # Transaction_payload's inner events) goes to the Python path
            first_py = first_py or replay.in_payload or not lender.lend()
            o = base | (O_CRC_ON if crc_on else 0) | (O_SHOW_CRC if cfg.show_crc else 0) | (O_FIRST_PY if first_py else 0)
            if lender.lent:
                o |= lender.opts
            if direct is not None:  # the text taken before this walk's, out of the consumer's buffer first
                direct.flush()
            status, w.rel, w.at, text, info = lender.rc.walk(w.buf, w.rel, w.filled, w.at, o, CRC32, cfg.cfg)
            if text:
                yield text
            if status != MORE:
                first_py = False
            if progress is not None:
                progress(w.at)
            if status == FULL:
                continue
            if status == MORE and not w.eof:
                w.refill_next()
                continue
            if status == PYTHON and info[0] == 19 and info[6] is True and lender.lent and replay.opts.verbose:
                size = info[3]
                body = bytes(w.buf[w.rel + LEN_HEADER:w.rel + size - (LEN_CHECKSUM if cfg.show_crc else 0)])
                if body not in lender.rc.plans:  # -v: a map not seen yet, read here; the C loop prints it
                    raw = RawEvent(w.at, info[1], 19, info[2], size, info[4], info[5], bytes(w.buf[w.rel:w.rel + size]),
                                   fmt, info[6], name)
                    lender.rc.plans[body] = _verbose_plan(_read_map(dec, raw), replay.opts.verbose >= 2)
                    continue
            lender.settle()
            if status == MORE:  # the end of the file
                if w.rel < w.filled:
                    yield from _handover(inp, w.at, dec, strict=True)
                return
            if status == HANDOVER:
                lender.sync_tables(dec, fmt, name, cfg.show_crc)
                yield from _handover(inp, w.at, dec, strict=True)
                return
            # PYTHON
            code, ts, sid, size, log_pos, flags, ok = info
            at = w.at
            data = bytes(w.buf[w.rel:w.rel + size])
            lender.sync_tables(dec, fmt, name, cfg.show_crc)
            if code == _START_ENCRYPTION:
                yield from _handover(inp, at, dec, strict=True)
                return
            if code == _FDE:
                if fde_is_checksum_aware(data):
                    ok = int.from_bytes(data[-4:], "little") == event_crc(data)
                    if not ok and verify:
                        yield from _handover(inp, at, dec, strict=True)
                        return
                crc_on = _checksum_on(data)
                try:
                    fmt = format_of_event(data)
                except BinlogError:
                    yield from _handover(inp, at, dec, strict=True)
                    return
                cfg = _Config(fmt, as_json=False, rows_objects=False, replay=True)
            elif code == _START_V3 and fmt is None:
                fmt = format_of_event(data)
                cfg = _Config(fmt, as_json=False, rows_objects=False, replay=True)
            raw = RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, name)
            w.rel += size
            w.at += size
            if code == 19:  # a map the Python path reads: the C loop no longer counts by an older one
                width = 4 if fmt is not None and fmt.post_header_length(19) == 6 else 6
                table_id = int.from_bytes(data[LEN_HEADER:LEN_HEADER + width], "little")
                lender.rc.tables.pop(table_id, None)
                lender.rc.vtables.pop(table_id, None)
            yield from dec.each(raw, name, payloads=True)
            if dec.failed:
                return
            # ... and the Query a two-phase ALTER's GTID marks (the decoder's state)
            first_py = code == _PAYLOAD or dec.alter is not None

"""Transactions: an event stream (one file, an index, a relay directory) grouped into
transactions with GTID, local and source coordinates, times, size and completeness.

Runs on the fast scan path (``source.Input.frames``): only the bodies that carry boundaries are
read — GTIDs, Query, Xid, XA_prepare, Transaction_payload, Rotate, Format_description,
Previous_gtids, Gtid_list; row images are never decoded.

Boundaries are the rules of ``binlogkit.boundary`` (the one copy: its ``step``); events outside
transactions never end one, so a transaction spans relay-log rotations.

``Grouper.feed_frames(run=)`` takes a C run (``run_taker``: ``_eventcols.Run``, the framing
loop's taker) that accounts the plain events inside a transaction without a frame each and,
for the Spark ``transactions`` table (``rows=True``), takes whole plain transactions of a
binlog as column rows; without it (the commands) this walk does everything, and is the
reference the tests hold the run equal to.

A transaction is **complete** when its terminating event is present, whole and passes its
checksum; one still open when the stream ends (or when the next GTID arrives) is not.

A relay log can hold a range of the source's binlog twice: a replica that reconnects at a
position behind what its relay log already holds (a file/position replica killed before it
synced master.info) gets those events again. Where the source's stream restarts behind (the
Rotate a connection begins with names a position below the highest end seen of that file), the
open transaction ends there, incomplete, and every transaction with events of
the range seen before says so in ``repeats`` (``{"source_file", "start", "end"}``: its part of
the range). ``binlogkit audit`` reports the range as ``duplicated_range``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Generator, Iterable, Iterator

from .boundary import (BEGIN, DECIDING, GTID_TYPES, OPEN, OUTSIDE, PRELUDE, QUERY_TYPES, STANDALONE, Gtid, Kind,
                       advance, gtid_state, read_gtid)
from .codecs.gtid import decode_previous_gtids
from .codecs.header import LEN_HEADER
from .constants import EventFlag, EventType as T
from .errors import BinlogError, BodyLengthError, FormatError, KeyFileError, KeyRequiredError
from .flavor import Flavor
from .reading.format import Format
from .reading.source import Input, frames_of_stream, inputs
from .positions import NOT_FROM_SOURCE_FILE, SourceClock

__all__ = ["BODIES", "GTID_TYPES", "KNOWN_TYPES", "OUTSIDE", "PRELUDE", "QUERY_TYPES", "FileInfo", "Grouper",
           "Kind", "Transaction", "group_files", "gtid_list_strings", "gtid_values", "mariadb_alter", "run_taker"]
# the header flags the walk tests on every event, as plain ints (an IntFlag's ``&`` makes a new
# IntFlag: 2 us an event, a sixth of the walk on the bench binlog)
_IGNORABLE, _ARTIFICIAL, _RELAY_LOG = int(EventFlag.IGNORABLE), int(EventFlag.ARTIFICIAL), int(EventFlag.RELAY_LOG)
BODIES = frozenset(GTID_TYPES | QUERY_TYPES | {T.XID_EVENT, T.XA_PREPARE_LOG_EVENT, T.ROTATE_EVENT,
                                                T.PREVIOUS_GTIDS_LOG_EVENT, T.GTID_LIST_EVENT,
                                                T.INCIDENT_EVENT})


@dataclass
class Transaction:
    gtid: str | None              # None: anonymous or no GTID at all; the text of gtid_value
    kind: Kind                    # mariadb, mysql, anonymous, legacy, continuation (a str)
    start_file: str
    start_offset: int
    first_timestamp: int
    server_id: int
    end_file: str | None = None
    end_offset: int | None = None  # end of the last event seen (of the terminator when complete)
    last_timestamp: int = 0
    events: int = 0
    bytes: int = 0
    complete: bool = False
    terminator: str | None = None  # XID, COMMIT, ROLLBACK, DDL, STATEMENT, XA_PREPARE, XA_COMMIT, ...
    source_file: str | None = None
    source_start: int | None = None
    source_end: int | None = None  # source end of the last event seen (of the terminator when complete),
                                   # 64-bit: end_log_pos unwrapped (binlogkit.positions)
    standalone: bool = False
    # the last source event before this transaction began: where to resume to re-fetch it
    resume_source_file: str | None = None
    resume_source_pos: int | None = None
    # MariaDB binlog_alter_two_phase: "START" / "COMMIT" / "ROLLBACK" ALTER, and for the last two
    # the START ALTER's seq_no (a ROLLBACK ALTER's group is never applied: its ALTER failed)
    alter: str | None = None
    alter_id: int | None = None
    # the source range of its events that the stream held already (a restarted source stream)
    repeats: dict | None = None
    # the GTID as a value (MysqlGtid / MariadbGtid; str() is ``gtid``): not in the JSON form
    gtid_value: Gtid | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and k != "gtid_value"}


@dataclass
class FileInfo:
    """What one file says about GTIDs, for ``binlogkit gtids``."""

    file: str
    relay: bool = False
    server_version: str | None = None
    previous_gtids: list[dict] | None = None  # MySQL Previous_gtids (decoded)
    gtid_list: list[str] | None = None        # MariaDB Gtid_list at the top of the file
    gtids: list[str] = field(default_factory=list)
    first_transaction: str | None = None
    last_transaction: str | None = None
    incomplete: list[str] = field(default_factory=list)
    transactions: int = 0
    problem: str | None = None
    problem_offset: int | None = None
    problem_kind: str | None = None
    # what an audit needs besides GTIDs
    events: int = 0
    end_offset: int = 4
    checksummed: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    bad_checksums: list[int] = field(default_factory=list)
    incidents: list[dict] = field(default_factory=list)
    unknown_events: list[dict] = field(default_factory=list)
    position_breaks: list[dict] = field(default_factory=list)
    rotates: list[dict] = field(default_factory=list)
    gtid_offsets: list[int] = field(default_factory=list)
    server_ids: set = field(default_factory=set)


def _known_types() -> frozenset[int]:
    from .reading.registry import CODECS

    return frozenset(CODECS)


KNOWN_TYPES = _known_types()


def gtid_list_strings(body: bytes, at: int) -> list[str]:
    """The GTIDs ``domain-server-seq`` of a MariaDB Gtid_list body; its count is checked against
    the bytes first (a damaged count is a typed error, not a 268-million-step loop)."""
    n = int.from_bytes(body[:4], "little") & 0x0FFFFFFF
    if 4 + 16 * n > len(body):
        raise BodyLengthError(f"Gtid_list: {n} entries need {4 + 16 * n} bytes, the body has {len(body)}",
                              offset=at, event_type="GTID_LIST_EVENT")
    return [f"{int.from_bytes(body[4 + 16 * i:8 + 16 * i], 'little')}-"
            f"{int.from_bytes(body[8 + 16 * i:12 + 16 * i], 'little')}-"
            f"{int.from_bytes(body[12 + 16 * i:20 + 16 * i], 'little')}" for i in range(n)]


class Grouper:
    """Feeds on events file by file; yields finished transactions as they close."""

    # what it makes of each transaction (a subclass may carry more: pitr's event-time bounds)
    transaction_type: type[Transaction] = Transaction

    def __init__(self, *, source_file: str | None = None, relay: bool | None = None,
                 keep_gtids: bool = True) -> None:
        """``keep_gtids=False``: the files' GTID lists (``FileInfo.gtids``, ``gtid_offsets``) are
        not kept, for callers that only want the transactions (memory flat in a file's size)."""
        self.keep_gtids = keep_gtids
        self.cur: Transaction | None = None
        self.state = 0   # the boundary machine's state (binlogkit.boundary)
        self.source_file = source_file
        self.relay_forced = relay
        self.files: list[FileInfo] = []
        self.fmt: Format | None = None
        # the last whole event that came from the source: where it ends here and there
        self.last_event: dict | None = None
        self.last_whole: tuple[str, int] | None = None  # (file, end) of the last whole event
        self.last_relay_rotate: dict | None = None
        self.clock = SourceClock(source_file)  # the source's 64-bit positions (relay logs)
        # the last Rotate the source itself wrote (the end of its file), in a relay log
        self.last_source_rotate: dict | None = None
        # relay logs: the highest source end seen per source file, and the range being repeated
        self.held: dict[str, int] = {}
        self.repeat: list | None = None   # [source file, start, end]

    def _restart(self, file: str | None, position: int, adopt: bool = False) -> Iterator[Transaction]:
        """The source's stream (re)starts at ``position`` of ``file``: behind what was held,
        the open transaction ends here and the range up to the highest end is a repeat. Events
        of a file no Rotate named (the relay logs that had it were purged) are taken as ``file``'s:
        a stream changes file only at a Rotate of the source's own, which would have named it."""
        if file and self.source_file is None and "" in self.held:
            unnamed = self.held.pop("")
            if adopt:  # the artificial Rotate of a new connection, not the end of a file
                self.held[file] = max(unnamed, self.held.get(file, 0))
        high = self.held.get(file or "", 0)
        if position < high:
            if self.cur is not None:
                yield self._close(False, None)
            self.repeat = [file, position, high]

    def _repeated(self, src_file: str | None, src_end: int, size: int) -> None:
        """Account an event of the source for ``repeats`` and the held ends."""
        r = self.repeat
        if r is not None and r[0] == src_file and src_end - size < r[2] and self.cur is not None:
            t = self.cur
            if t.repeats is None:
                t.repeats = {"source_file": src_file, "start": max(r[1], src_end - size), "end": 0}
            t.repeats["end"] = min(src_end, r[2])
        if r is not None and (r[0] != src_file or src_end >= r[2]):
            self.repeat = None
        key = src_file or ""
        if src_end > self.held.get(key, 0):
            self.held[key] = src_end

    def _close(self, complete: bool, terminator: str | None) -> Transaction:
        t = self.cur
        assert t is not None, "closing with no transaction open"
        t.complete, t.terminator = complete, terminator
        self.cur = None
        self.state = 0
        info = self.files[-1]
        if not complete and t.gtid:
            info.incomplete.append(t.gtid)
        return t

    def feed(self, inp: Input) -> Generator[Transaction, None, None]:
        """The transactions of one input (``source.Input``), read through the one opener."""
        return self.feed_frames(inp.name, inp.frames(want=BODIES, records=False))

    def feed_file(self, path: str, fh, *, verify: bool = True) -> Generator[Transaction, None, None]:
        """The transactions of a stream a caller opened (at byte 0), named ``path``."""
        return self.feed_frames(path, frames_of_stream(fh, verify=verify, want=BODIES, records=False))

    def feed_frames(self, path: str, frames: Iterable[Any], run: Any = None,
                    rows: bool = False) -> Generator[Transaction, None, None]:
        """The transactions of one input's ``framing.Frame`` records (locals untyped: the hot loop).
        ``run``: the ``_eventcols.Run`` that is the framing loop's ``taker`` of ``frames``
        (``run_taker``): the events inside a transaction that it takes are accounted here from
        the run (``_with_run``), not one by one: the same transactions and ``FileInfo``. With
        ``rows`` (and ``keep_gtids=False``) it also takes whole plain transactions, which are
        then not yielded but rows of ``run.finish()`` (the Spark ``transactions`` table)."""
        info = FileInfo(path, relay=bool(self.relay_forced))
        if run is not None and type(self)._account is Grouper._account:
            frames = self._with_run(path, frames, run, rows and not self.keep_gtids)
        self.files.append(info)
        fdes = 0
        own_source = None  # for a binlog: its own name
        base = os.path.basename(path)
        try:
            for at, code, ts, sid, ev_size, log_pos, flags, data, ok, fmt in frames:
                end = at + ev_size
                self.last_whole = (path, end)
                info.events += 1
                info.end_offset = end
                if ok is not None:
                    info.checksummed += 1
                    if ok is False:
                        info.bad_checksums.append(at)
                if ts:
                    if info.first_timestamp is None:
                        info.first_timestamp = ts
                    info.last_timestamp = ts
                if code not in KNOWN_TYPES and not flags & _IGNORABLE:
                    info.unknown_events.append({"offset": at, "type_code": code})
                if not info.relay and fdes >= 1 and log_pos and not flags & _ARTIFICIAL \
                        and code != T.FORMAT_DESCRIPTION_EVENT and log_pos != end & 0xFFFFFFFF:
                    info.position_breaks.append({"offset": at, "expected": end & 0xFFFFFFFF, "log_pos": log_pos})
                if code == T.FORMAT_DESCRIPTION_EVENT:
                    fdes += 1
                    if fdes == 1 and flags & _RELAY_LOG and self.relay_forced is None:
                        info.relay = True  # the replica marks what it writes into its relay logs
                    self.fmt = fmt  # the framing loop attaches every Format_description's Format
                    info.server_version = fmt.server_version
                    if fdes == 2 and self.relay_forced is None:
                        info.relay = True
                    continue
                relay = info.relay if self.relay_forced is None else self.relay_forced
                if code == T.ROTATE_EVENT:
                    rb = self._body(data)
                    info.rotates.append({"offset": at, "target": rb[8:].decode("utf-8", "replace"),
                                         "position": int.from_bytes(rb[:8], "little") if len(rb) >= 8 else None,
                                         "relay": bool(flags & _RELAY_LOG), "server_id": sid})
                    if flags & _RELAY_LOG:
                        body = self._body(data)
                        self.last_relay_rotate = {"file": path, "offset": at, "end": end,
                                                  "target": body[8:].decode("utf-8", "replace")}
                    if not flags & _RELAY_LOG and (relay or self.relay_forced is None and fdes < 2):
                        body = self._body(data)
                        name = body[8:].decode("utf-8", "replace") if len(body) >= 8 else ""
                        if relay or not own_source:
                            pos = int.from_bytes(body[:8], "little") if len(body) >= 8 else 4
                            if relay:
                                yield from self._restart(name, pos, adopt=not log_pos)
                            if relay and log_pos:  # the source's own Rotate, at the end of its file
                                self.last_source_rotate = {"file": path, "offset": at, "end": end,
                                                           "from_file": self.source_file,
                                                           "from_end": self.clock.unwrap(log_pos, ev_size),
                                                           "target": name}
                            self.source_file = name
                            self.clock.rotate(name, pos)
                            self.last_event = {"file": path, "offset": at, "end": end, "type": code,
                                               "source_file": name, "source_end": pos}
                    continue
                src_file: str | None
                if not relay:
                    src_file = own_source = base
                    src_end = end  # a binlog is its own source: the offset, 64-bit
                elif flags & NOT_FROM_SOURCE_FILE:
                    # the replica's own event or the dump thread's made-up one (positions.py): its
                    # end_log_pos is no end in the source's file, and unwrapping it took the clock
                    # 4 GiB off (MySQL 9.7 FLUSH RELAY LOGS, MariaDB 11.8's Gtid_list at a GTID
                    # connection's start); the source is where it was
                    src_file = self.source_file
                    src_end = self.clock.end if self.clock.end is not None or flags & _RELAY_LOG \
                        else log_pos
                else:
                    src_file = self.source_file
                    src_end = self.clock.unwrap(log_pos, ev_size)
                before = self.last_event or {}
                self.last_event = {"file": path, "offset": at, "end": end, "type": code,
                                   "source_file": src_file, "source_end": src_end}
                if code in OUTSIDE:
                    if code == T.INCIDENT_EVENT:
                        body = self._body(data)
                        n = body[2] if len(body) > 2 else 0
                        info.incidents.append({"offset": at, "code": int.from_bytes(body[:2], "little"),
                                               "message": body[3:3 + n].decode("utf-8", "replace")})
                    if code == T.PREVIOUS_GTIDS_LOG_EVENT and info.previous_gtids is None:
                        try:
                            info.previous_gtids = decode_previous_gtids(self._body(data))
                        except ValueError as exc:
                            raise FormatError(str(exc), offset=at, event_type="PREVIOUS_GTIDS_LOG_EVENT") from None
                    elif code == T.GTID_LIST_EVENT and info.gtid_list is None:
                        info.gtid_list = gtid_list_strings(self._body(data), at)
                    continue
                if code in GTID_TYPES:
                    if self.cur is not None:
                        yield self._close(False, None)
                    gbody = self._body(data)
                    value, kind, standalone = read_gtid(code, sid, gbody, at)
                    gtid = None if value is None else str(value)
                    self.cur = self.transaction_type(gtid, kind, path, at, ts, sid, standalone=standalone,
                                           source_file=src_file,
                                           source_start=(src_end - ev_size) if src_end else None,
                                           resume_source_file=before.get("source_file"),
                                           resume_source_pos=before.get("source_end"), gtid_value=value)
                    self.state = gtid_state(code, gbody)
                    if code == T.GTID_EVENT:
                        self.cur.alter, self.cur.alter_id = mariadb_alter(self._body(data))
                    info.transactions += 1
                    info.server_ids.add(sid)
                    if gtid and self.keep_gtids:
                        info.gtids.append(gtid)
                        info.gtid_offsets.append(at)
                    if info.first_transaction is None:
                        info.first_transaction = gtid or f"@{at}"
                    info.last_transaction = gtid or f"@{at}"
                    self._account(end, ts, ev_size, src_end, path)
                    if relay and src_end:
                        self._repeated(src_file, src_end, ev_size)
                    continue
                if self.cur is None:
                    kind = Kind.CONTINUATION if (info.transactions == 0 and not self.files[:-1] and
                                                 code not in QUERY_TYPES and code not in PRELUDE) else Kind.LEGACY
                    self.cur = self.transaction_type(None, kind, path, at, ts, sid, source_file=src_file,
                                           source_start=(src_end - ev_size) if src_end else None)
                    self.state = OPEN
                    info.transactions += 1
                    if info.first_transaction is None:
                        info.first_transaction = f"@{at}"
                    info.last_transaction = f"@{at}"
                self._account(end, ts, ev_size, src_end, path)
                if relay and src_end:
                    self._repeated(src_file, src_end, ev_size)
                if code in DECIDING or self.state & STANDALONE:
                    self.state, d = advance(self.state, code, data, self.fmt)
                    if d is not None and d is not BEGIN:
                        yield self._close(True, d)
        except BinlogError as exc:
            exc.with_context(file=path)
            info.problem, info.problem_offset, info.problem_kind = exc.message, exc.offset, type(exc).__name__
            raise

    def _with_run(self, path: str, frames: Iterable[Any], run: Any, rows: bool) -> Iterator[Any]:
        """``frames`` with what ``run`` took before each of them (and before the end or a damaged
        event) accounted first. After the walk took a frame, after a Format_description, ``run``
        is ``armed`` where the walk would do nothing but account the events inside the open
        transaction (not a standalone one; in a relay log: while the source's clock is known and
        no repeated range is open), and, in a binlog, ``idle`` where none is open and ``rows`` (it takes whole transactions then: their rows are ``run.finish()``'s,
        not yielded here)."""
        base = os.path.basename(path)
        fdes = 0
        fmt_seen = None
        run.armed = run.idle = 0
        try:
            for f in frames:
                r = run.pop()
                if r is not None:
                    self._take_run(path, base, r)
                fmt = f[9]
                if fmt is not fmt_seen:
                    fmt_seen = fmt
                    run.header_length = max(LEN_HEADER, fmt.header_length) if fmt is not None else 0
                    run.query_phl = (fmt.post_header_length(T.QUERY_EVENT) or 0) if fmt is not None else 0
                if f[1] == T.FORMAT_DESCRIPTION_EVENT:
                    fdes += 1
                yield f
                relay = self.files[-1].relay if self.relay_forced is None else self.relay_forced
                ok = fdes >= 1 and not relay
                cur = self.cur
                # a relay log: while the source's clock is known and no repeated range is open
                clock = self.clock.end if relay and self.repeat is None and self.clock.end is not None else -1
                run.relay, run.clock = relay, clock
                run.armed = fdes >= 1 and cur is not None and not self.state & STANDALONE and (not relay or clock >= 0)
                idle = rows and ok and cur is None
                run.idle = idle
                if idle:
                    last = self.last_event
                    run.resume_end = last["source_end"] if last is not None and last["source_file"] == base \
                        and last["source_end"] is not None else -1
        finally:
            run.armed = run.idle = 0
            r = run.pop()
            if r is not None:
                self._take_run(path, base, r)

    def _take_run(self, path: str, base: str, r: tuple) -> None:
        """Account what the C run took (``_eventcols.Run.pop()``) as the walk accounts each
        event: the file's counts and times, and the open transaction's size, end and times (the
        events inside it) or the file's transactions (whole ones it took)."""
        n, nck, size, last_at, end, code, ts, first_nz, last_nz, trx, first, last, sids, src_end = r
        info = self.files[-1]
        info.events += n
        info.end_offset = end
        info.checksummed += nck
        if first_nz >= 0 and info.first_timestamp is None:
            info.first_timestamp = first_nz
        if last_nz >= 0:
            info.last_timestamp = last_nz
        self.last_whole = (path, end)
        src_file: str | None = base
        if src_end >= 0:   # a relay log: the source's clock moved with the events (``_repeated``: none open)
            src_file = self.source_file
            self.clock.end = src_end
            key = src_file or ""
            if src_end > self.held.get(key, 0):
                self.held[key] = src_end
        else:
            src_end = end
        self.last_event = {"file": path, "offset": last_at, "end": end, "type": code, "source_file": src_file,
                           "source_end": src_end}
        if trx:
            info.transactions += trx
            info.server_ids.update(sids)
            if info.first_transaction is None:
                info.first_transaction = first[0] or f"@{first[1]}"
            info.last_transaction = last[0] or f"@{last[1]}"
            return
        t = self.cur
        assert t is not None, "a run with no transaction open"
        t.events += n
        t.bytes += size
        t.end_file, t.end_offset, t.last_timestamp = path, end, ts
        t.source_end = src_end

    def finish(self) -> Iterator[Transaction]:
        if self.cur is not None:
            yield self._close(False, None)

    def _account(self, end: int, ts: int, size: int, src_end: int, path: str) -> None:
        t = self.cur
        assert t is not None, "accounting with no transaction open"
        t.events += 1
        t.bytes += size
        t.end_file, t.end_offset, t.last_timestamp = path, end, ts
        if src_end:
            t.source_end = src_end

    def _body(self, data: bytes) -> bytes:
        fmt = self.fmt
        lc = fmt.len_checksum if fmt else 0
        hl = max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER
        return data[hl:len(data) - lc]

    def _gtid(self, code: int, server_id: int, body: bytes) -> tuple[str | None, Kind, bool]:
        """(GTID text, kind, standalone) of a GTID event's body (``boundary.read_gtid``)."""
        value, kind, standalone = read_gtid(code, server_id, body)
        return (None if value is None else str(value)), kind, standalone


def run_taker(capacity: int = 8192) -> Any:
    """A new ``_eventcols.Run`` for ``Grouper.feed_frames(run=)`` (its ``take`` the framing loop's
    ``taker``; at most ``capacity`` whole transactions wait in its columns), or None: not built,
    or ``BINLOGKIT_NO_EVENTCOLS`` / ``BINLOGKIT_PURE_PYTHON``."""
    from ._optional import load_c

    c_mod = load_c("_eventcols", "BINLOGKIT_NO_EVENTCOLS", needs="Run")
    if c_mod is None:
        return None
    plain = KNOWN_TYPES - OUTSIDE - DECIDING - GTID_TYPES - BODIES - {T.FORMAT_DESCRIPTION_EVENT, T.START_EVENT_V3}
    return c_mod.Run(bytes(1 if c in plain else 0 for c in range(256)), capacity)


def mariadb_alter(body: bytes) -> tuple[str | None, int | None]:
    """(phase, START ALTER's seq_no) of a MariaDB GTID body's flags_extra (``codecs.gtid``:
    seq_no 8, domain 4, flags2 1, commit_id 8 if flags2 & 2, an XID if flags2 & (64|128), then
    flags_extra 1, extra_engines 1 if it & 1, sa_seq_no 8 if it & (4|8)); (None, None) for
    any other GTID or a body too short to say."""
    if len(body) < 13:
        return None, None
    flags2, p = body[12], 13
    if flags2 & 2:
        p += 8
    if flags2 & (64 | 128):
        if p + 6 > len(body):
            return None, None
        p += 6 + body[p + 4] + body[p + 5]
    if p >= len(body):
        return None, None
    fx = body[p]
    if not fx:                 # the common case: no phase, no START ALTER seq_no
        return None, None
    from .reading.decoder import alter_phase

    phase = alter_phase({"flags_extra": fx})
    p += 1 + (1 if fx & 1 else 0)
    seq = int.from_bytes(body[p:p + 8], "little") if fx & (4 | 8) and p + 8 <= len(body) else None
    return phase, seq


def gtid_values(transactions: Iterable[Transaction]) -> dict[Flavor, list[Gtid]]:
    """The typed GTIDs of ``transactions`` per flavor, in their order (every flavor a key)."""
    out: dict[Flavor, list[Gtid]] = {f: [] for f in Flavor}
    for t in transactions:
        flavor = Kind(t.kind).flavor
        if t.gtid_value is not None and flavor is not None:
            out[flavor].append(t.gtid_value)
    return out


def group_files(paths: Iterable[Input | str | os.PathLike], *, verify: bool = True, relay: bool | None = None,
                source_file: str | None = None, grouper: Grouper | None = None,
                problems: list[BinlogError] | None = None) -> Iterator[Transaction]:
    """Transactions of the files, in order (index files and folders expanded). A damaged file
    raises its ``BinlogError`` after the transactions before the damage were yielded; the
    transaction open at that point is yielded as incomplete first. With ``problems`` (a list)
    a damaged file's error is appended to it instead and the next files are read on (a missing
    or unusable key is still raised: the next files need it too). ``paths`` are ``Input`` values
    (with their keys) or paths read with this ``verify``."""
    g = grouper or Grouper(source_file=source_file, relay=relay)
    for inp in inputs(paths, verify=verify):
        path = inp.name
        try:
            yield from g.feed(inp)
        except BinlogError as exc:
            yield from g.finish()
            if problems is None or isinstance(exc, (KeyRequiredError, KeyFileError)):
                raise  # no key: a usage error, and the next files need the same key
            exc.__traceback__ = None
            problems.append(exc.with_context(file=str(path)))
    yield from g.finish()

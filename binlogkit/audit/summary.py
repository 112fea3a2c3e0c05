"""The per-file pass: one binlog or relay log in, one compact summary out.

A summary's size depends on the file's anomalies and on the number of GTID streams, never on
its transaction count (a clean 1 GB binlog gives about 1 KB of JSON). It holds:

* header facts: relay or binlog, server version, events, end of the last whole event, first and
  last timestamps, the first Previous_gtids / Gtid_list, the Rotate that ends the file;
* the **head** (does the file start inside a transaction?) and the **tail** (the transaction
  still open at its end: GTID, offset, source coordinates);
* GTID coverage as interval sets (``intervals.py``): every GTID (``all``) and the ones whose
  transaction completed in this file (``complete``), per MariaDB domain-server / MySQL uuid[:tag];
  for MariaDB also each domain's first GTID (with offset) and highest GTID;
* in a relay log, the **source runs**: the ranges of the source's binlogs its events cover, one
  per stretch of the source's stream (``[source file or None, start, end, offset, end offset,
  restart]``; None: the file is the one of the previous relay log). A new run starts at a Rotate
  from the source; ``restart``: the run begins a new stream (the artificial Rotate a connection
  starts with): the
  merge finds the source ranges that a series holds twice. Their number grows with the source's
  rotations and restarts, not with the events;
* every anomaly with its offset: bad checksums, incidents, unknown events, breaks of the
  end_log_pos chain, transactions interrupted inside the file, the first problem (torn event,
  unreadable, encrypted), and the GTID order findings *inside* the file.

The GTID order findings depend on what came before the file. ``file_summary(path)`` assumes
nothing came before; the merge computes the true incoming state from the summaries of the
earlier files (``merge.plan``) and, only where the file's own GTIDs overlap it, has the file
scanned again with that state as ``context`` — the same code path, so the findings are those of
one sequential pass over the whole series. ``context["collect"]`` lists GTIDs whose every
occurrence (offset, completeness, source) the merge needs for findings across connections.

Transaction boundaries are decided by ``binlogkit.boundary.step``, as in
``binlogkit.transactions.Grouper`` (a test keeps the two in agreement); this loop only keeps what
an audit needs.

On a binlog (not a relay log), between two frames, the one framing loop (``Input.frames``) hands
its window to the C loop ``_pullscan.summary`` (``_CTaker``, the framer's ``taker``), which takes
the run of events the pass settles without a Python call -- rows, table maps, Xid, a plain BEGIN /
COMMIT, and the next in-order GTID of the stream seen last -- and stops before any other: the
Python loop below reads only the rest, and decides everything irregular (never the C loop once a
Start_encryption was read). ``tests/test_boundary.py`` holds both equal on every fixture and
corpus file and on built ones.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from .._optional import load_c
from ..boundary import (BEGIN, DECIDING, GTID_TYPES, OPEN, OUTSIDE, PRELUDE, QUERY_TYPES,
                        STANDALONE, Kind, advance, gtid_state, read_gtid, step)
from ..codecs.gtid import decode_previous_gtids
from ..codecs.header import LEN_HEADER
from ..constants import EventFlag, EventType as T
from ..errors import BinlogError
from ..reading.crc import CRC32
from ..reading.format import Format
from ..reading.names import series_key  # noqa: F401  (named here too: moved to the reading layer)
from ..positions import SourceClock, moves_source_clock
from ..reading.source import Input, as_input
from ..transactions import BODIES, KNOWN_TYPES, gtid_list_strings
from . import intervals as iv

# observe(gtid, kind, offset, complete): called per transaction (tests)
Observe = Callable[[str | None, str, int, bool], None]

_FDE, _ROTATE, _GTID_MARIA, _GTID_MYSQL = T.FORMAT_DESCRIPTION_EVENT, T.ROTATE_EVENT, T.GTID_EVENT, T.GTID_LOG_EVENT
_INCIDENT, _PREVIOUS, _GTID_LIST = T.INCIDENT_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT, T.GTID_LIST_EVENT
_IGNORABLE, _ARTIFICIAL, _RELAY = int(EventFlag.IGNORABLE), int(EventFlag.ARTIFICIAL), int(EventFlag.RELAY_LOG)
# events with no say in boundaries or headers: the loop's fast path
_PLAIN = frozenset(range(256)) - {_FDE, _ROTATE} - OUTSIDE - DECIDING


class _Trx:
    __slots__ = ("gtid", "key", "n", "kind", "offset", "source_file", "source_start")

    def __init__(self, gtid: str | None, key: str | None, n: int | None, kind: Kind, offset: int,
                 source_file: str | None, source_start: int | None) -> None:
        # gtid, key and n are all set (a GTID transaction) or all None (legacy / continuation)
        self.gtid, self.key, self.n, self.kind, self.offset = gtid, key, n, kind, offset
        self.source_file, self.source_start = source_file, source_start

    def source(self) -> dict[str, Any] | None:
        if self.source_start is not None:
            return {"file": self.source_file, "position": self.source_start}
        return None


class GtidOrder:
    """The sequential GTID rules of one series, started from a known state.

    MariaDB, per domain: a GTID seen before is a duplicate; a seq_no not above the domain's
    highest so far is out of order; one more than a step above it leaves a gap. MySQL: a GTID in
    the set so far is a duplicate (holes are found on the whole series' set by the merge)."""

    def __init__(self, context: dict[str, Any] | None) -> None:
        ctx = context or {}
        # domain -> [gtid text, seq_no] of the highest GTID so far (the first one to reach it)
        self.last: dict[int, list[Any]] = {int(d): [g, n] for d, (g, n) in ctx.get("maria_last", {}).items()}
        self.maria_before: iv.IntervalSet = ctx.get("maria_seen") or {}
        self.mysql_before: iv.IntervalSet = ctx.get("mysql_seen") or {}
        self.maria = iv.Runs()
        self.mysql = iv.Runs()
        self.first: dict[int, list[Any]] = {}   # domain -> [gtid, offset, source, seq]
        self.high: dict[int, list[Any]] = {}    # domain -> [gtid, seq] highest in this file
        self.anomalies: list[dict[str, Any]] = []

    def mariadb(self, t: _Trx, domain: int, key: str, n: int) -> None:
        """``t``, a MariaDB GTID transaction: its stream ``key`` and seq_no ``n``."""
        if domain not in self.first:
            self.first[domain] = [t.gtid, t.offset, t.source(), n]
        h = self.high.get(domain)
        if h is None or n > h[1]:
            self.high[domain] = [t.gtid, n]
        prev = self.last.get(domain)
        if (key, n) in self.maria or iv.contains(self.maria_before, key, n):
            self._note("duplicate_gtid", t, None)
        elif prev is not None and n <= prev[1]:
            self._note("out_of_order_gtid", t, prev[0])
        elif prev is not None and n > prev[1] + 1:
            self._note("gtid_gap", t, prev[0])
        self.maria.add(key, n)
        if prev is None or n > prev[1]:
            self.last[domain] = [t.gtid, n]

    def mysql_gtid(self, t: _Trx, key: str, n: int) -> None:
        """``t``, a MySQL GTID transaction: its stream ``key`` (uuid[:tag]) and number ``n``."""
        if (key, n) in self.mysql or iv.contains(self.mysql_before, key, n):
            self.anomalies.append({"kind": "duplicate_gtid", "gtid": t.gtid, "prev": None, "offset": t.offset,
                                   "source": None})
        self.mysql.add(key, n)

    def _note(self, kind: str, t: _Trx, prev: str | None) -> None:
        self.anomalies.append({"kind": kind, "gtid": t.gtid, "prev": prev, "offset": t.offset, "source": t.source()})


def file_summary(path: Input | str | os.PathLike[str], context: dict[str, Any] | None = None, *,
                 observe: Observe | None = None) -> dict[str, Any]:
    """The compact summary of one file (see the module docstring); never raises for damaged
    input. ``observe(gtid, kind, offset, complete)`` is called per transaction (for tests).
    An ``Input``'s keys (a ``crypto.Keys``, or a ``crypto.KeySpec`` loaded here: worker
    processes, Spark executors) read encrypted files; without them an encrypted file is a finding."""
    inp = as_input(path).with_options(verify=False)
    path = inp.name
    directory, base, number = series_key(path)
    s = _Scan(path, context, observe)
    problem: dict[str, Any] | None = None
    try:
        taker = _CTaker(s) if _pullscan is not None else None
        s.run(inp.frames(want=BODIES, records=False, taker=taker), taker)
    except BinlogError as exc:
        problem = {"kind": type(exc).__name__, "offset": exc.offset, "message": exc.message,
                   "event_type": exc.event_type}
    except OSError as exc:
        problem = {"kind": "OSError", "offset": None, "message": str(exc), "event_type": None}
    tail = None
    if s.cur is not None:
        t = s.cur
        tail = {"gtid": t.gtid, "offset": t.offset, "source": t.source()}
        s.close(False, final=True)
    o = s.order
    maria = {"all": o.maria.m, "first": {str(d): v for d, v in sorted(o.first.items())},
             "high": {str(d): v for d, v in sorted(o.high.items())}} if o.maria.m else None
    out = {
        "file": path, "directory": directory, "base": base, "number": number,
        "size": inp.size(), "problem": problem,
        "relay": s.relay, "server_version": s.fmt.server_version if s.fmt else None,
        "flavor": s.fmt.flavor.value if s.fmt else None,
        "events": s.events, "end_offset": s.end_offset, "checksummed": s.checksummed,
        "first_timestamp": s.first_ts, "last_timestamp": s.last_ts,
        "bad_checksums": s.bad_checksums, "incidents": s.incidents, "unknown_events": s.unknown,
        "position_breaks": s.breaks,
        "end_rotate": s.last_relay_rotate if s.relay else s.last_rotate,
        "previous_gtids": s.previous_gtids, "gtid_list": s.gtid_list,
        "server_ids": sorted(s.server_ids), "transactions": s.transactions,
        "head": {"continuation": s.continuation_head},
        "tail": tail,
        "interrupted": s.interrupted,
        "maria": maria, "mysql": o.mysql.m or None, "complete": s.complete.m,
        "gtid_anomalies": o.anomalies,
        "source_runs": [r for r in s.runs if r[2] > r[1]] if s.relay else [],
    }
    if context is not None:
        out["context"] = True
        out["collected"] = s.collected
    return out


class _Scan:
    """One file's walk; the state of a fresh ``Grouper`` on one file, kept lean."""

    def __init__(self, path: str, context: dict[str, Any] | None, observe: Observe | None) -> None:
        self.path, self.base = path, os.path.basename(path)
        self.order = GtidOrder(context)
        self.collect: iv.IntervalSet = (context or {}).get("collect") or {}
        self.collected: list[list[Any]] = []
        self.observe = observe
        self.complete = iv.Runs()
        self.cur: _Trx | None = None
        self.state = 0   # the boundary machine's (binlogkit.boundary)
        self.fmt: Format | None = None
        self._hl, self._lc = LEN_HEADER, 0   # header and checksum lengths of self.fmt
        self.relay = False
        self.events = self.checksummed = self.transactions = 0
        self.end_offset = 4
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.bad_checksums: list[int] = []
        self.incidents: list[dict[str, Any]] = []
        self.unknown: list[dict[str, Any]] = []
        self.breaks: list[dict[str, Any]] = []
        self.interrupted: list[dict[str, Any]] = []
        self.last_rotate: dict[str, Any] | None = None
        self.last_relay_rotate: dict[str, Any] | None = None
        self.previous_gtids: list[dict[str, Any]] | None = None
        self.gtid_list: list[str] | None = None
        self.server_ids: set[int] = set()
        self.source_file: str | None = None
        self.continuation_head = False
        self._keys: dict[tuple[int, int], str] = {}
        # the GTID stream the C loop may extend: (domain, server id, key, b"") for MariaDB's,
        # (-1, -1, uuid, its 16 bytes) for MySQL's untagged ones
        self._fast: tuple[int, int, str, bytes] | None = None
        self.clock = SourceClock()
        self.runs: list[list[Any]] = []  # [source file | None, start, end, offset, end offset, restart]

    def source_event(self, at: int, end: int, log_pos: int, size: int) -> None:
        """An event from the source (relay logs, after the source's Format_description): extend
        the current source run, or start one (the first event of the file). A stream restarts
        only at a Rotate: every connection begins with one (pre-5.1 servers' end_log_pos inside
        a transaction count from its start, so a jump back alone proves nothing)."""
        clock = self.clock
        runs = self.runs
        if not runs:
            runs.append([None, max(0, log_pos - size), 0, at, at, False])
        e = clock.unwrap(log_pos, size)
        r = runs[-1]
        r[2], r[4] = e, end

    def source_rotate(self, at: int, end: int, name: str, position: int, log_pos: int, size: int) -> None:
        """A Rotate from the source: its file ends here (a real one) or the stream (re)starts
        at ``position`` of ``name`` (the artificial one a connection begins with). Its own
        end_log_pos is not read: MySQL replicas write Rotates (server id 0) whose end_log_pos is
        a relay-log offset."""
        if self.runs and self.runs[-1][2] <= self.runs[-1][1]:
            self.runs.pop()  # a run without events: replaced
        self.clock.rotate(name, position)
        self.runs.append([name, position, position, at, end, not log_pos])

    def body(self, data: bytes) -> bytes:
        return data[self._hl:len(data) - self._lc]

    def close(self, complete: bool, final: bool = False) -> None:
        t = self.cur
        if t is None:  # every caller has checked that a transaction is open
            raise AssertionError("close() without an open transaction")
        self.cur = None
        self.state = 0
        if t.key is not None and t.n is not None:  # a GTID transaction
            if complete:
                self.complete.add(t.key, t.n)
            if self.collect and iv.contains(self.collect, t.key, t.n):
                self.collected.append([t.gtid, t.offset, complete, t.source()])
        if not complete and not final:
            self.interrupted.append({"gtid": t.gtid, "offset": t.offset, "source": t.source()})
        if self.observe is not None:
            self.observe(t.gtid, t.kind, t.offset, complete)

    def open_gtid(self, at: int, code: int, sid: int, ev_size: int, log_pos: int, data: bytes,
                  src_file: str | None) -> None:
        body = self.body(data)
        self.state = gtid_state(code, body)
        if code == _GTID_MARIA:  # the common case, without a value object: the stream keys are cached
            seq = int.from_bytes(body[0:8], "little")
            domain = int.from_bytes(body[8:12], "little")
            key = self._keys.get((domain, sid))
            if key is None:
                key = self._keys[(domain, sid)] = f"{domain}-{sid}"
            t = _Trx(f"{key}-{seq}", key, seq, Kind.MARIADB, at, src_file, (log_pos - ev_size) if log_pos else None)
            self.cur = t
            self.order.mariadb(t, domain, key, seq)
            self._fast = (domain, sid, key, b"")
            return
        value, kind, _standalone = read_gtid(code, sid, body, at)
        if value is None:  # an anonymous transaction
            self.cur = _Trx(None, None, None, kind, at, src_file, (log_pos - ev_size) if log_pos else None)
            return
        gtid = str(value)
        key, n = iv.split_gtid(gtid)
        t = _Trx(gtid, key, n, kind, at, src_file, (log_pos - ev_size) if log_pos else None)
        self.cur = t
        self.order.mysql_gtid(t, key, n)
        self._fast = (-1, -1, key, body[1:17]) if code == _GTID_MYSQL else None

    def run(self, frames: Iterable[Any], taker: _CTaker | None = None) -> None:
        """The bare frames of one input (``Input.frames(records=False)``, locals untyped: the hot
        loop); ``taker``: the C loop the framing hands its window between two frames, which
        counts the events it takes."""
        fdes = 0
        own_source = None
        base = self.base
        relay = self.relay
        bad, known, plain = self.bad_checksums, KNOWN_TYPES, _PLAIN
        events = checksummed = 0
        end = 4
        first_ts: int | None = None
        last_ts: int | None = None
        first_at = last_at = 0   # where they are (merged with the taker's)
        src_file: str | None
        try:
            for at, code, ts, sid, ev_size, log_pos, flags, data, ok, fmt in frames:
                end = at + ev_size
                events += 1
                if ok is not None:
                    checksummed += 1
                    if ok is False:
                        bad.append(at)
                if ts:
                    if first_ts is None:
                        first_ts, first_at = ts, at
                    last_ts, last_at = ts, at
                if code not in known and not flags & _IGNORABLE:
                    self.unknown.append({"offset": at, "type_code": code})
                if log_pos != end & 0xFFFFFFFF and not relay and fdes >= 1 and log_pos and not flags & _ARTIFICIAL \
                        and code != _FDE:
                    self.breaks.append({"offset": at, "expected": end & 0xFFFFFFFF, "log_pos": log_pos})
                if code in plain:  # row images, table maps, annotations...: only a boundary matters
                    if not relay:
                        own_source = base
                    elif fdes >= 2 and moves_source_clock(log_pos, flags):
                        self.source_event(at, end, log_pos, ev_size)
                    if self.cur is None:
                        cont = self.transactions == 0 and code not in PRELUDE
                        self.cur = _Trx(None, None, None, Kind.CONTINUATION if cont else Kind.LEGACY, at,
                                        self.source_file if relay else base, (log_pos - ev_size) if log_pos else None)
                        self.state = OPEN
                        self.continuation_head |= cont
                        self.transactions += 1
                    elif self.state & STANDALONE:
                        self.state, d = step(self.state, code, b"")
                        if d is not None:
                            self.close(True)
                    continue
                if code == _FDE:
                    fdes += 1
                    if fdes == 1 and flags & _RELAY:
                        self.relay = True
                    self.fmt = fmt
                    self._hl, self._lc = max(LEN_HEADER, fmt.header_length), fmt.len_checksum
                    if fdes == 2:
                        self.relay = True
                    relay = self.relay
                    continue
                if code == _ROTATE:
                    rb = self.body(data)
                    r = {"offset": at, "target": rb[8:].decode("utf-8", "replace"),
                         "position": int.from_bytes(rb[:8], "little") if len(rb) >= 8 else None,
                         "relay": bool(flags & _RELAY), "server_id": sid}
                    self.last_rotate = r
                    if flags & _RELAY:
                        self.last_relay_rotate = r
                    elif (relay or fdes < 2) and (relay or not own_source):
                        self.source_file = rb[8:].decode("utf-8", "replace") if len(rb) >= 8 else ""
                        if relay and r["position"] is not None:
                            self.source_rotate(at, end, self.source_file, r["position"], log_pos, ev_size)
                    continue
                if not relay:
                    src_file = own_source = base
                else:
                    src_file = self.source_file
                    if fdes >= 2 and moves_source_clock(log_pos, flags):
                        self.source_event(at, end, log_pos, ev_size)
                if code in OUTSIDE:
                    if code == _INCIDENT:
                        body = self.body(data)
                        n = body[2] if len(body) > 2 else 0
                        self.incidents.append({"offset": at, "code": int.from_bytes(body[:2], "little"),
                                               "message": body[3:3 + n].decode("utf-8", "replace")})
                    elif code == _PREVIOUS and self.previous_gtids is None:
                        try:
                            self.previous_gtids = decode_previous_gtids(self.body(data))
                        except ValueError:
                            pass
                    elif code == _GTID_LIST and self.gtid_list is None:
                        self.gtid_list = gtid_list_strings(self.body(data), at)
                    continue
                if code in GTID_TYPES:
                    if self.cur is not None:
                        self.close(False)
                    self.open_gtid(at, code, sid, ev_size, log_pos, data, src_file)
                    self.transactions += 1
                    self.server_ids.add(sid)
                    continue
                if self.cur is None:
                    cont = self.transactions == 0 and code not in QUERY_TYPES and code not in PRELUDE
                    self.cur = _Trx(None, None, None, Kind.CONTINUATION if cont else Kind.LEGACY, at, src_file,
                                    (log_pos - ev_size) if log_pos else None)
                    self.state = OPEN
                    if cont:
                        self.continuation_head = True
                    self.transactions += 1
                self.state, d = advance(self.state, code, data, self.fmt)
                if d is not None and d is not BEGIN:
                    self.close(True)
        finally:  # a damaged file stops the walk: what was counted up to there stays
            self.events, self.checksummed, self.end_offset = events, checksummed, end
            self.first_ts, self.last_ts = first_ts, last_ts
            if taker is not None and taker.events:   # with the events the C loop took
                self.events += taker.events
                self.checksummed += taker.checksummed
                self.end_offset = max(end, taker.end)
                if taker.first_ts is not None and (first_ts is None or taker.first_at < first_at):
                    self.first_ts = taker.first_ts
                if taker.last_ts is not None and (last_ts is None or taker.last_at > last_at):
                    self.last_ts = taker.last_ts


_LL_MAX = (1 << 63) - 1   # the C loop's run ends are signed 64-bit (a MariaDB seq_no is unsigned)


_pullscan = load_c("_pullscan", "BINLOGKIT_NO_AUDITSCAN", needs="summary")
_KNOWN = bytes(1 if c in KNOWN_TYPES else 0 for c in range(256))


class _CTaker:
    """The C loop (``_pullscan.summary``) as the framing loop's ``taker``: handed the window
    after each frame of a plain binlog (not a relay log, a 19-byte header), it takes the run of
    events it settles, applies them to the scan ``s`` (transactions, the GTID stream it extends,
    the boundary state) and counts them; the frames the Python loop reads are the rest."""

    def __init__(self, s: _Scan) -> None:
        self.s = s
        self.events = self.checksummed = 0
        self.end = 4
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self.first_at = self.last_at = 0   # the offsets of the runs they were in

    def __call__(self, buf: bytearray, rel: int, filled: int, at: int, crc_on: bool) -> tuple[int, int]:
        s = self.s
        if s.relay or s.fmt is None or s.fmt.header_length > LEN_HEADER or filled - rel < LEN_HEADER:
            return rel, at
        fast = s._fast
        t = s.cur
        domain, server, uuid, last, ce = -1, -1, b"", -1, -1
        if fast is not None and not s.collect and s.observe is None:
            d, sv, key, sidb = fast
            if sidb:   # a MySQL stream: its numbers so far end at the last run's end
                ivs = s.order.mysql.m.get(key)
                if ivs and not s.order.mysql_before:
                    uuid, last = sidb, ivs[-1][1]
            else:      # a MariaDB stream: its run ends at the domain's last seq_no
                ivs, lt = s.order.maria.m.get(key), s.order.last.get(d)
                if ivs and lt is not None and ivs[-1][1] == lt[1] and not s.order.maria_before:
                    domain, server, last = d, sv, lt[1]
            if last >= 0:
                civs = s.complete.m.get(key)
                ce = civs[-1][1] if civs else -1
            if last >= _LL_MAX or ce >= _LL_MAX:   # past the C loop's signed 64-bit run ends
                domain, server, uuid, last, ce = -1, -1, b"", -1, -1
        cur_fast = t is not None and fast is not None and t.key == fast[2] and t.n is not None
        phl = s.fmt.post_header_length(T.QUERY_EVENT)
        (_status, rel, at2, n, nck, fts, lts, state, have_cur, _cur_fast, cur_seq, cur_at, cur_src, last2,
         ce2, trx, opened) = _pullscan.summary(buf, rel, filled, at, crc_on, s.state, phl if phl else 13, _KNOWN,
                                               t is not None, cur_fast, t.n if cur_fast and t is not None else 0,
                                               -1, -1, domain, server, uuid, last, ce, CRC32)
        if not n:
            return rel, at
        self.events += n
        self.checksummed += nck
        self.end = at2
        if fts >= 0:
            if self.first_ts is None:
                self.first_ts, self.first_at = fts, at
            self.last_ts, self.last_at = lts, at
        s.state = state
        s.transactions += trx
        if fast is not None and last >= 0:
            d, sv, key, sidb = fast
            if last2 != last and sidb:
                s.order.mysql.m[key][-1][1] = last2
            elif last2 != last:
                text = f"{key}-{last2}"
                s.order.maria.m[key][-1][1] = last2
                s.order.last[d] = [text, last2]
                s.order.high[d] = [text, last2]
            if ce2 != ce:
                s.complete.m[key][-1][1] = ce2
            if not have_cur:
                s.cur = None
            elif opened:
                s.cur = _Trx(iv.join_gtid(key, cur_seq), key, cur_seq, Kind.MYSQL if sidb else Kind.MARIADB, cur_at,
                             s.base, cur_src if cur_src >= 0 else None)
        elif not have_cur:
            s.cur = None
        return rel, at2

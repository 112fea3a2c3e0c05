"""``binlogkit pitr``: can this archive take a backup to a point in time, and how?

In: an archive (files / folders of one server's binlogs), where the backup stands (a GTID
state, a file and position, or a backup tool's coordinates) and the target (a time, a GTID
state, a file and position). Out: a plan — reachable or not; the ordered files with the exact
start and stop positions; the transactions and bytes to replay; every problem on the way (with
file and offset); and the replay command for the server's own tools.

What is read is bounded by what was asked, never by the archive's size:

1. file heads (Format_description, Gtid_list / Previous_gtids: a few hundred bytes each), only
   those a bisection over the series visits, to find the file holding the start and the stop;
2. the audit's compact summaries (``binlogkit.audit.file_summary``: interval-set GTID coverage,
   anomalies with offsets) of the files from the start to the stop, merged by the audit's own
   merge — the findings that lie between the two points are the plan's problems;
3. one streaming pass over the transactions of the first and of the last file (and of the few
   files a time or GTID target is looked for in), folding counters, never keeping a list.

The start and stop are always file positions, so the replay is exact whatever the flavor: the
replay tool's ``--start-position`` applies to the first file only and ``--stop-position`` to the
last. A stop that would fall inside a transaction moves to that transaction's start, and the
plan names it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, overload

from ..audit import file_summary, merge
from ..audit.engine import audit_inputs
from ..audit.merge import Finding
from ..audit.summary import series_key
from ..crypto.keys import Keys, KeySpec
from ..errors import BinlogError, KeyRequiredError
from ..reading.names import compression_of, strip_compressed
from ..flavor import Flavor, has_two_phase_alter
from .flavors import REPLAY, Replay
from ..reading.progress import finished
from ..reading.source import Input
from .walk import Heads, TimedTransaction, event_boundary, last_group, read_head, transactions

Paths = Iterable[Input | str | os.PathLike[str]]


class PitrUsage(BinlogError):
    """What was asked cannot be planned at all (no such series, ambiguous archive): exit 2."""


@dataclass(frozen=True)
class From:
    """Where the backup stands: ``file`` + ``position`` (``gtids``, when known, is checked
    against the binlog), or ``gtids`` alone."""
    file: str | None = None
    position: int | None = None
    gtids: str | None = None
    origin: str = "position"     # position | gtid | backup-info
    backup: dict | None = None   # the backup-info file's coordinates, as read


@dataclass(frozen=True)
class Until:
    """The target: exactly one of ``timestamp`` (epoch seconds), ``gtids``, ``file``+``position``."""
    timestamp: int | None = None
    gtids: str | None = None
    file: str | None = None
    position: int | None = None


def _name(path: str) -> str:
    return strip_compressed(os.path.basename(path))


@overload
def _utc(ts: int) -> str: ...
@overload
def _utc(ts: None) -> None: ...
def _utc(ts: int | None) -> str | None:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if ts is not None else None


def _series(paths: Paths, want_base: str | None) -> tuple[str, list[int], list[Input]]:
    groups: dict[tuple[str, str], list[tuple[int, str, Input]]] = defaultdict(list)
    for f in audit_inputs(paths):
        d, base, n = series_key(f.name)
        if n >= 0:
            groups[(d, base)].append((n, f.name, f))
    if want_base is not None:
        cands = [k for k in groups if k[1] == want_base]
        if not cands:
            raise PitrUsage(f"no file of the series {want_base}.NNNNNN in the archive "
                            f"(it has: {', '.join(sorted({b for _d, b in groups})) or 'no binlogs'})")
    else:
        cands = [k for k in groups if not read_head(min(groups[k])[2]).relay]
        if not cands:
            raise PitrUsage("the archive holds no binlog series (NAME.NNNNNN files written by a server)")
    if len(cands) > 1:
        raise PitrUsage("the archive holds several binlog series: "
                        + ", ".join(f"{d}/{b}" for d, b in sorted(cands))
                        + "; give the folder of one of them (or --from-file with its name)")
    d, b = cands[0]
    files = sorted(groups[(d, b)], key=lambda x: x[:2])
    return f"{d}/{b}", [n for n, _, _ in files], [f for _, _, f in files]


def _base(name: str | None) -> str | None:
    if not name:
        return None
    _d, base, n = series_key(name)
    return base if n >= 0 else None


def _where(name: str, paths: list[str], numbers: list[int]) -> str:
    """Where a file the archive lacks would have been, for the problem that says so."""
    n = series_key(name)[2]
    where = f"the archive has {_name(paths[0])} .. {_name(paths[-1])}"
    if n >= 0 and n < numbers[0]:
        where += ": the archive begins after it"
    elif n >= 0 and n > numbers[-1]:
        where += ": the archive ends before it"
    return where


def _span(k: int, i: int, j: int, start_pos: int, stop_pos: int) -> tuple[int, int | None]:
    """The part [lo, hi) of file k (of the files i..j) the replay applies; hi None: to its end."""
    return (start_pos if k == i else 4), (stop_pos if k == j else None)


def _on_the_way(findings: list[dict], first: str, last: str, start_pos: int, stop_pos: int,
                firsts: set[tuple[str, int | None]]) -> list[Finding]:
    """The audit's findings that lie between the start (in ``first``) and the stop (in ``last``),
    less those the plan measures itself against the backup's own state."""
    out = []
    for f in findings:
        whole_file = f["kind"] in ("unreadable", "encrypted")  # nothing after it can be vouched for
        if f["file"] == first and f["offset"] is not None and f["offset"] < start_pos and not whole_file:
            continue
        if f["file"] == last and f["offset"] is not None and f["offset"] >= stop_pos:
            continue
        if f["kind"] == "gtid_gap" and (f["file"], f["offset"]) in firsts:
            continue  # measured against the backup's own state
        if f["kind"] == "gtid_gap" and f["file"] is None:
            continue  # a MySQL series' holes: measured on what the replay applies
        if f["kind"] == "partial_transaction" and f["severity"] == "warning" and f["file"] == last:
            continue
        out.append(Finding(**{k: f[k] for k in ("kind", "severity", "file", "offset", "detail", "gtids", "source",
                                                "series", "place")}))
    return out


def _holes(start_state: dict, applied: dict) -> list[str]:
    """MySQL: holes of (backup ∪ replayed) above the backup's highest number, per uuid[:tag]: GTIDs
    the server wrote between the backup and the target that the archive does not have. (A hole
    inside the backup's own set is the source's history, not the archive's loss.)"""
    from ..audit import intervals as iv

    both = iv.union(start_state, applied)
    out = []
    for key in applied:
        floor = start_state[key][-1][1] if start_state.get(key) else 0
        ivs = both[key]
        for (_a1, b1), (a2, _b2) in zip(ivs, ivs[1:]):
            if b1 >= floor:
                out.append(f"{key}:{b1 + 1}" + (f"-{a2 - 1}" if a2 - 1 > b1 + 1 else ""))
    return out


def _target_text(u: Until) -> str:
    if u.timestamp is not None:
        return _utc(u.timestamp)
    if u.gtids is not None:
        return u.gtids
    return f"{u.file}:{u.position}"


# what a stop search ends with when it finds no stop: damage (a problem says what) or the archive's end
_DAMAGED, _ENDED = "damaged", "ended"


class _Plan:
    """The state of one planning run (I/O through ``walk`` and the audit only)."""

    def __init__(self, paths: Paths, frm: From, until: Until, jobs: int | None) -> None:
        self.frm, self.until, self.jobs = frm, until, jobs
        self.series, self.numbers, inputs = _series(paths, _base(frm.file) or _base(until.file))
        self.paths = [i.name for i in inputs]
        self.inputs = dict(zip(self.paths, inputs))  # each file with its argument's keys
        self.heads = Heads(inputs)
        flavor = self.heads[0].flavor or Flavor.MARIADB
        self.r: Replay[Any] = REPLAY[flavor]  # states (Any) are the flavor's: see flavors.py
        self.flavor = flavor
        self.replay_with = BINLOGKIT
        self.program = "binlogkit"
        self.problems: list[Finding] = []
        self.notes: list[str] = []
        self.before: dict | None = None
        self.stop_reason = ""
        self.walked: dict[str, dict] = {}
        self.last_ts_before: int | None = None  # the latest event time before the start
        self._start_state: Any = None           # the backup's GTID state, once the start is found
        from ..audit.intervals import Runs

        self.applied = Runs()  # MySQL: what the replay applies

    def problem(self, kind: str, detail: str, file: str | None = None, offset: int | None = None,
                gtids: Iterable[str] = (), severity: str = "error") -> None:
        self.problems.append(Finding(kind, severity, file, offset, detail, list(gtids), series=self.series))

    def index_of(self, name: str) -> int | None:
        want = _name(name)
        for k, p in enumerate(self.paths):
            if _name(p) == want:
                return k
        return None

    # --- the two reads every search is made of ---------------------------------------------------
    @contextlib.contextmanager
    def _pass(self, path: str) -> Iterator[tuple[Iterator[TimedTransaction], list[BinlogError]]]:
        """One pass over the transactions of ``path``, the caller's loop included: a missing key
        is a usage error (exit 2) and is raised; other damage ends the pass and is kept in the
        list, for the caller to say what it means there."""
        damage: list[BinlogError] = []
        with contextlib.closing(transactions(self.inputs[path])) as ts:
            try:
                yield ts, damage
            except KeyRequiredError:  # no key: a usage error (exit 2), not damage
                raise
            except BinlogError as exc:
                damage.append(exc)

    def _at_position(self, name: str, position: int | None, what: str, field: str) -> tuple[int, str, int] | None:
        """(index, path, position) of a file and position the archive must hold; None: a problem says
        why (the file is not in the archive)."""
        i = self.index_of(name)
        if i is None:
            self.problem("missing_file", f"{what} {_name(name)} is not in the archive "
                         f"({_where(name, self.paths, self.numbers)})")
            return None
        if position is None:
            raise PitrUsage(f"{what} file needs its position ({field})")
        return i, self.paths[i], position

    def _event_starts(self, path: str, pos: int, why: str = "") -> bool:
        if event_boundary(self.inputs[path], pos)[0]:
            return True
        self.problem("bad_position", f"no event starts at {pos} in {_name(path)}{why}", path, pos)
        return False

    # --- the start ---------------------------------------------------------------------------
    def start(self) -> tuple[int, int, Any] | None:
        """(file index, position, GTID state) where the replay starts; None: a problem says why."""
        frm = self.frm
        if frm.file is not None:
            return self._start_at_position(frm.file, frm.position)
        if frm.gtids is None:
            raise PitrUsage("say where the backup stands: a binlog file and position, or a GTID state")
        return self._start_at_gtids(frm.gtids)

    def _start_at_position(self, name: str, position: int | None) -> tuple[int, int, Any] | None:
        r = self.r
        at = self._at_position(name, position, "the backup's binlog", "From.position")
        if at is None:
            return None
        i, path, pos = at
        if not self._event_starts(path, pos, ": not a binlog position the server could have reported"):
            return None
        state = r.of_head(self.heads[i])
        self.last_ts_before = None
        w = None  # from the start on, the pass goes on as the count of the first file
        earlier = 0  # transactions of this file before the position
        with self._pass(path) as (ts, damage):
            for t in ts:
                if w is None and t.start_offset >= pos:
                    self._start_state = state
                    w = self._walk_of(path)
                if w is not None:
                    self._note(w, t)
                    continue
                if t.end_offset is not None and t.end_offset > pos:
                    self.problem("bad_position", f"{_name(path)}@{pos} falls inside transaction "
                                 f"{t.gtid or '@' + str(t.start_offset)} ({t.start_offset}..{t.end_offset})",
                                 path, pos, [t.gtid] if t.gtid else [])
                    return None
                if t.gtid:
                    r.add(state, t.gtid)
                earlier += 1
                self.last_ts_before = t.max_timestamp
        if damage:
            self.walked.pop(path, None)  # damage after the start is the audit's to report
        if earlier == 0 and i > 0:
            self._snapshot_at_rotation(i, pos)
        if self.frm.gtids:
            said = r.parse(self.frm.gtids)
            if not (r.includes(said, state) and r.includes(state, said)):
                self.problem("backup_mismatch", f"the backup says {self.frm.gtids} at {_name(path)}:{pos}, but there "
                             f"the binlog's GTID state is {r.text(state) or '(empty)'}", path, pos)
        return i, pos, state

    def _snapshot_at_rotation(self, i: int, pos: int) -> None:
        """A MariaDB dump whose point is the start of a file: MariaDB reports the new file's start
        as the snapshot's binlog position from the moment it rotates, before the group commit that
        filled the previous file is visible to a snapshot (seen on 10.11 and 11.8 with
        ``mariadb-dump --single-transaction --master-data``: the dump lacks the previous file's
        last transaction, the GTID position it prints includes it). Then replaying from this
        point loses that group; whether the dump holds it only its rows can tell. A warning that
        names the group and the start that replays it."""
        backup = self.frm.backup or {}
        if self.flavor is not Flavor.MARIADB or backup.get("origin") != "dump":
            return
        prev = self.paths[i - 1]
        group = last_group(self.inputs[prev])
        if not group:
            return
        off, _ = group[0]
        gtids = [g for _, g in group]
        which = (f"transaction {gtids[0]}" if len(gtids) == 1
                 else f"the {len(gtids)} transactions {gtids[0]} .. {gtids[-1]} (one group commit)")
        self.problem("backup_at_rotation",
                     f"the dump's point {_name(self.paths[i])}:{pos} is the start of a file: a MariaDB "
                     f"snapshot taken right after a rotation can lack the previous file's last group commit "
                     f"while its binlog position says it holds it. If the dump lacks the rows of {which} "
                     f"({_name(prev)}:{off}), replay from there instead: --from-file {_name(prev)} "
                     f"--from-position {off}", prev, off, gtids, severity="warning")

    def _start_at_gtids(self, gtids: str) -> tuple[int, int, Any] | None:
        r = self.r
        target = r.parse(gtids)
        i = self.heads.last_true(lambda h: r.includes(target, r.of_head(h)))
        if i < 0:
            h = self.heads[0]
            self.problem("gtid_gap", f"the archive begins after the backup: its first file {_name(h.path)} starts "
                         f"from GTID state {r.text(r.of_head(h))}, beyond {gtids}; the transactions in between "
                         "are not in the archive", h.path, None)
            return None
        path = self.paths[i]
        pos = None
        self.last_ts_before = None
        self._start_state = target
        w = None
        with self._pass(path) as (ts, damage):
            for t in ts:
                if w is None and t.gtid and not r.holds(target, t.gtid):
                    pos = t.start_offset
                    w = self._walk_of(path)
                if w is not None:
                    self._note(w, t)
                    continue
                self.last_ts_before = t.max_timestamp
        if damage:  # the start cannot be vouched for: said, not skipped silently
            self.walked.pop(path, None)
            if pos is None:
                exc = damage[0]
                self.problem("unreadable", f"looking for the start after {gtids}: {type(exc).__name__}: "
                             f"{exc.message}", path, exc.offset)
        if pos is None:
            if i + 1 < len(self.paths):
                i, pos = i + 1, 4
            else:
                pos = event_boundary(self.inputs[path], -1)[1]
        return i, pos, target

    # --- the stop ----------------------------------------------------------------------------
    def stop(self, i: int, start_pos: int) -> tuple[int, int] | None:
        """(file index, position) where the replay stops; None: a problem says why."""
        until = self.until
        if until.file is not None:
            return self._stop_at_position(i, start_pos, until.file, until.position)
        if until.timestamp is not None:
            return self._stop_at_time(i, start_pos, until.timestamp)
        if until.gtids is None:
            raise PitrUsage("give the target: a time, a GTID state, or a binlog file and position")
        return self._stop_at_gtids(i, start_pos, until.gtids)

    def _stop_at_position(self, i: int, start_pos: int, name: str, position: int | None) -> tuple[int, int] | None:
        at = self._at_position(name, position, "the target's binlog", "Until.position")
        if at is None:
            return None
        j, path, pos = at
        if (j, pos) < (i, start_pos):
            raise PitrUsage(f"the target {_name(path)}:{pos} comes before the start {_name(self.paths[i])}:{start_pos}")
        if not self._event_starts(path, pos):
            return None
        w = self._walk_of(path)
        with self._pass(path) as (ts, damage):
            for t in ts:
                if t.start_offset >= pos:
                    break
                if t.end_offset is not None and t.end_offset > pos:
                    self._stopped_before(t, f"{_name(path)}:{pos} falls inside it")
                    pos = t.start_offset
                    break
                if j > i or t.start_offset >= start_pos:
                    self._note(w, t)
        if damage:
            self.walked.pop(path, None)  # the count pass and the audit say what is wrong
        self.stop_reason = "the position asked for"
        return j, pos

    def _search(self, i: int, start_pos: int, j0: int, looking_for: str,
                step: Callable[[int, dict, TimedTransaction], tuple[int, int] | None]) -> tuple[int, int] | str:
        """The stop ``step(file index, walk, transaction)`` finds among the transactions from file
        ``j0`` on (from the start in the start's file ``i``), each counted in its file's walk by the
        step; ``_DAMAGED`` (a problem says where) or ``_ENDED`` when there is none."""
        for j in range(j0, len(self.paths)):
            path = self.paths[j]
            w = self._walk_of(path)
            with self._pass(path) as (ts, damage):
                for t in ts:
                    if j == i and t.start_offset < start_pos:
                        continue
                    got = step(j, w, t)
                    if got is not None:
                        return got
            if damage:
                self.problem("unreadable", f"looking for {looking_for}: {damage[0].message}", path, damage[0].offset)
                return _DAMAGED
        return _ENDED

    def _stop_at_time(self, i: int, start_pos: int, T: int) -> tuple[int, int] | None:
        if self.last_ts_before is not None and self.last_ts_before >= T:
            raise PitrUsage(f"the target {_utc(T)} is before the backup point (the transaction just before it "
                            f"is dated {_utc(self.last_ts_before)})")

        def at_target(j: int, w: dict, t: TimedTransaction) -> tuple[int, int] | None:
            if t.max_timestamp < T:
                self._note(w, t)
                return None
            if t.min_timestamp < T:
                self._stopped_before(t, f"its events are dated from {_utc(t.min_timestamp)} to "
                                     f"{_utc(t.max_timestamp)}, across the target")
            self.stop_reason = f"the first transaction at or after {_utc(T)}"
            return j, t.start_offset

        j0 = max(i, self.heads.last_true(lambda h: (h.first_timestamp or 0) < T))
        got = self._search(i, start_pos, j0, _utc(T), at_target)
        if got == _ENDED:
            last = self.paths[-1]
            self.problem("target_beyond_archive", f"the archive ends ({_name(last)}, last event "
                         f"{_utc(self.last_event_ts(last))}) before the target {_utc(T)}: what the server wrote after "
                         "that is not in the archive", last, None)
        return got if isinstance(got, tuple) else None

    def _stop_at_gtids(self, i: int, start_pos: int, gtids: str) -> tuple[int, int] | None:
        r = self.r
        tgt = r.parse(gtids)
        start_state = self._start_state
        if r.beyond(start_state, tgt):
            raise PitrUsage(f"the target {gtids} is before the backup point ({r.text(start_state)})")
        if r.includes(start_state, tgt):
            self.stop_reason = "the backup already holds the target"
            self.walked.pop(self.paths[i], None)
            return i, start_pos
        j0 = max(i, self.heads.last_true(lambda h: not r.includes(r.of_head(h), tgt)))
        state = r.copy(start_state) if j0 == i else r.of_head(self.heads[j0])
        streams = r.streams(tgt)

        def completes(j: int, w: dict, t: TimedTransaction) -> tuple[int, int] | None:
            self._note(w, t)
            if not t.gtid:
                return None
            if self._stream(t.gtid) in streams and not r.holds(tgt, t.gtid):
                self.problem("not_a_prefix", f"{t.gtid} comes before {gtids} is reached: a replay "
                             "up to the target by position would apply it", self.paths[j], t.start_offset, [t.gtid])
            r.add(state, t.gtid)
            if not r.includes(state, tgt):
                return None
            self.stop_reason = f"the end of the transaction that completes {gtids}"
            # set from a transaction's first event on: never None once yielded
            assert t.end_offset is not None
            return j, t.end_offset

        got = self._search(i, start_pos, j0, gtids, completes)
        if got == _ENDED:
            last = self.paths[-1]
            self.problem("target_beyond_archive", f"the archive ends ({_name(last)}) before {gtids} is reached; it "
                         f"reaches {r.text(state)}", last, None)
        return got if isinstance(got, tuple) else None

    def _walk_of(self, path: str) -> dict:
        """What a stop search saw of the transactions to replay in ``path``, in order: their count,
        each stream's first GTID, the ones the backup already holds (at most 1000)."""
        from ..audit.intervals import Runs

        w = self.walked[path] = {"n": 0, "firsts": {}, "dups": [], "applied": Runs()}
        return w

    def _note(self, w: dict, t: TimedTransaction) -> None:
        w["n"] += 1
        g = t.gtid
        if g:
            if self.r.sets:  # kept per walk: only the walks that count are added up
                from ..audit.intervals import split_gtid

                w["applied"].add(*split_gtid(g))
            key = self._stream(g)
            if key not in w["firsts"]:
                w["firsts"][key] = (g, t.start_offset)
            if len(w["dups"]) < 1000 and self.r.holds(self._start_state, g):
                w["dups"].append((g, t.start_offset))

    def _replayed(self, gtid: str) -> None:
        """MySQL: the GTIDs the replay applies, as an interval set (its holes are gaps on the way)."""
        if self.r.sets:
            from ..audit.intervals import split_gtid

            self.applied.add(*split_gtid(gtid))

    def _stream(self, gtid: str) -> str:
        return self.r.stream(gtid)

    def _stopped_before(self, t: TimedTransaction, why: str) -> None:
        self.before = {"gtid": t.gtid, "file": t.start_file, "offset": t.start_offset,
                       "first_timestamp": t.min_timestamp, "last_timestamp": t.max_timestamp, "why": why}
        self.notes.append(f"stopped before transaction {t.gtid or '@' + str(t.start_offset)} at "
                          f"{_name(t.start_file)}:{t.start_offset}: {why}")

    def last_event_ts(self, path: str) -> int | None:
        last = None
        try:
            for f in self.inputs[path].frames(verify=False):
                last = f.timestamp or last
        except KeyRequiredError:  # no key: a usage error (exit 2), not damage
            raise
        except BinlogError:
            pass
        return last

    # --- the way between ---------------------------------------------------------------------
    def summaries(self, i: int, j: int) -> list[dict]:
        todo = [self.inputs[p] for p in self.paths[i:j + 1]]
        # workers get the keys' KeySpec (paths) and load them: no key bytes cross a pipe
        sent = [t.for_worker() for t in todo]
        if self.jobs == 1 or len(todo) <= 1 or any(s.keys is None and t.keys is not None for s, t in zip(sent, todo)):
            return [file_summary(t) for t in todo]  # (keys made in code: no spec to pass)
        with ProcessPoolExecutor(max_workers=self.jobs or os.cpu_count() or 1) as pool:
            out = []
            for t, s in zip(todo, pool.map(file_summary, sent, chunksize=1)):
                finished(t.name, t.size)    # the progress line, on a terminal (the workers read the files)
                out.append(s)
            return out

    def _rescan(self, items: list[tuple[str, dict]]) -> list[dict]:
        """The files the audit's merge wants scanned again with a context (read with the keys)."""
        return [file_summary(self.inputs[p], c) for p, c in items]

    def count_pass(self, path: str, lo: int, hi: int | None, start_state: Any,
                   first_seen: dict[str, tuple[str, int | None]]) -> tuple[int, int]:
        """(transactions starting in [lo, hi), end of the last whole event read); checks GTIDs after the
        start against the backup's state."""
        n = 0
        end = lo
        with self._pass(path) as (ts, _damage):  # damage: the audit's findings name it
            for t in ts:
                if t.start_offset < lo:
                    continue
                if hi is not None and t.start_offset >= hi:
                    break
                n += 1
                end = t.end_offset or end
                if t.gtid:
                    self._replayed(t.gtid)
                    self._check_after_start(t.gtid, path, t.start_offset, start_state, first_seen)
        return n, end

    def _alter_split(self, path: str, lo: int, hi: int) -> None:
        """MariaDB binlog_alter_two_phase: a START ALTER the replay applies whose COMMIT ALTER /
        ROLLBACK ALTER lies after the stop is a warning (the replay leaves that ALTER begun, never
        finished: the server state at the target had it running)."""
        started: dict[int, tuple[str, int]] = {}
        with self._pass(path) as (ts, _damage):  # damage: the audit's findings name it
            for t in ts:
                if t.alter == "START" and lo <= t.start_offset < hi and t.gtid:
                    started[int(t.gtid.rsplit("-", 1)[1])] = (t.gtid, t.start_offset)
                elif (t.alter in ("COMMIT", "ROLLBACK") and t.start_offset >= hi and t.alter_id is not None
                      and t.alter_id in started):
                    g, off = started.pop(t.alter_id)
                    self.problem("alter_split", f"the two-phase ALTER started by {g} ({_name(path)}:{off}) "
                                 f"ends after the stop ({t.alter} ALTER {t.gtid} at {_name(path)}:"
                                 f"{t.start_offset}): the replay applies its START ALTER only",
                                 path, off, [g] + ([t.gtid] if t.gtid else []), severity="warning")

    def _check_after_start(self, gtid: str, path: str, offset: int | None, start_state: Any,
                           first_seen: dict[str, tuple[str, int | None]]) -> None:
        if self.r.holds(start_state, gtid):
            self._held(gtid, path, offset, start_state)
        else:
            self._first(self._stream(gtid), gtid, path, offset, start_state, first_seen)

    def _held(self, gtid: str, path: str, offset: int | None, start_state: Any) -> None:
        self.problem("duplicate_gtid", f"{gtid} is already in the backup ({self.r.text(start_state)}): the replay "
                     "would apply it a second time", path, offset, [gtid])

    def _first(self, key: str, gtid: str, path: str, offset: int | None, start_state: Any,
               first_seen: dict[str, tuple[str, int | None]]) -> None:
        if key not in first_seen:
            first_seen[key] = (path, offset)
            gap = self._gap(start_state, gtid)
            if gap:
                self.problem("gtid_gap", gap, path, offset, [gtid])

    def _gap(self, state: Any, gtid: str) -> str | None:
        return self.r.gap(state, gtid)

    def middle_checks(self, s: dict, start_state: Any, first_seen: dict[str, tuple[str, int | None]]) -> None:
        """What a middle file's summary says against the backup's state."""
        from ..audit import intervals as iv

        if s.get("maria"):
            for _d, (g, off, _src, _seq) in sorted(s["maria"]["first"].items()):
                self._check_after_start(g, s["file"], off, start_state, first_seen)
        if s.get("mysql"):
            iv.add_into(self.applied.m, s["mysql"])
            for key, ivs in s["mysql"].items():
                for a, b in ivs:
                    hit = iv.intersect({key: [[a, b]]}, start_state)
                    if hit:
                        self.problem("duplicate_gtid", f"{key}:{hit[key][0][0]}.. already in the backup", s["file"],
                                     None)
                if key not in first_seen:
                    self._check_after_start(f"{key}:{ivs[0][0]}", s["file"], None, start_state, first_seen)

    def walked_checks(self, path: str, w: dict, start_state: Any, first_seen: dict[str, tuple[str, int | None]]) -> int:
        """What a start or stop search saw of a file, against the backup's state; its transactions."""
        from ..audit.intervals import add_into

        add_into(self.applied.m, w["applied"].m)
        for g, off in w["dups"]:
            self._held(g, path, off, start_state)
        for key, (g, off) in sorted(w["firsts"].items(), key=lambda kv: kv[1][1]):
            if not self.r.holds(start_state, g):
                self._first(key, g, path, off, start_state, first_seen)
        return w["n"]

    def count(self, i: int, j: int, start_pos: int, stop_pos: int, by_file: dict[str, dict], start_state: Any,
              first_seen: dict[str, tuple[str, int | None]]) -> tuple[int, int]:
        """(transactions, bytes) the replay applies; every GTID after the start checked against the
        backup's state, by the cheapest read there is of each file: a search's walk, a count pass
        of the first and last file, a middle file's summary."""
        trx = nbytes = 0
        for k in range(i, j + 1):
            p = self.paths[k]
            s = by_file[p]
            lo, hi = _span(k, i, j, start_pos, stop_pos)
            w = self.walked.get(p)
            if w is not None:  # the start or stop search walked it already
                n = self.walked_checks(p, w, start_state, first_seen)
            elif k in (i, j):
                n, _end = self.count_pass(p, lo, hi, start_state, first_seen)
            else:
                n = s["transactions"]
                self.middle_checks(s, start_state, first_seen)
            trx += n
            nbytes += max(0, (hi if hi is not None else s["end_offset"]) - lo)
        return trx, nbytes

    # --- all of it -----------------------------------------------------------------------------
    def run(self) -> dict:
        frm = self.frm
        got = self.start()
        doc = {"reachable": False, "series": self.series, "flavor": self.flavor.value, "files": [],
               "start": None, "stop": None, "transactions": 0, "bytes": 0, "problems": [], "command": None,
               "binlogkit_command": None, "tool_command": None, "notes": self.notes}
        if got is None:
            doc["problems"] = [p.to_json() for p in self.problems]
            return doc
        i, start_pos, start_state = got
        self._start_state = start_state
        doc["start"] = {"file": self.paths[i], "position": start_pos, "gtids": self.r.text(start_state),
                        "origin": frm.origin, "backup": frm.backup}
        stop = self.stop(i, start_pos)
        if stop is None:
            doc["problems"] = [p.to_json() for p in self.problems]
            return doc
        j, stop_pos = stop
        summaries = self.summaries(i, j)
        by_file = {s["file"]: s for s in summaries}
        audit = merge(summaries, rescan=self._rescan)
        first_seen: dict[str, tuple[str, int | None]] = {}
        trx, nbytes = self.count(i, j, start_pos, stop_pos, by_file, start_state, first_seen)
        if has_two_phase_alter(self.flavor) and stop_pos is not None:
            self._alter_split(self.paths[j], start_pos if i == j else 4, stop_pos)
        first, last = self.paths[i], self.paths[j]
        self.problems += _on_the_way(audit["findings"], first, last, start_pos, stop_pos,
                                     {(p, o) for p, o in first_seen.values()})
        if self.r.sets:
            for hole in _holes(start_state, self.applied.m):
                self.problem("gtid_gap", f"{hole} missing: between the backup and the target, the archive "
                             "does not have these", None, None, [hole])
        self.problems.sort(key=lambda p: (p.severity != "error", p.file or "", p.offset or 0))
        files = self.paths[i:j + 1]
        end_last = by_file[last]["end_offset"]
        doc.update({
            "files": files,
            "stop": {"file": last, "position": stop_pos, "reason": self.stop_reason, "before": self.before,
                     "target": _target_text(self.until)},
            "transactions": trx, "bytes": nbytes,
            "problems": [p.to_json() for p in self.problems],
            "reachable": not any(p.severity == "error" for p in self.problems),
        })
        stop_at = stop_pos if stop_pos < end_last else None
        spec = _key_spec(self.inputs[f] for f in files)
        tool_ok = not any(self.inputs[f].is_url for f in files) and spec is None
        doc["tool_command"] = command(self.r, files, start_pos, stop_at) if tool_ok else None
        doc["binlogkit_command"] = replay_command(self.r, files, start_pos, stop_at, spec, self.program)
        doc["command"] = doc["binlogkit_command"] if self.replay_with == BINLOGKIT else doc["tool_command"]
        if doc["command"] is None:
            raise PitrUsage("the server's binlog tool reads neither object-storage URLs nor encrypted files "
                            "offline: replay with binlogkit (--replay-with binlogkit, the default)")
        if spec is not None and spec.key_file and not spec.secret_file \
                and os.environ.get("BINLOGKIT_KEY_FILE_SECRET"):
            self.notes.append("the command reads the key file's secret from BINLOGKIT_KEY_FILE_SECRET, "
                              "as this plan did: run it with the same environment")
        if trx == 0:
            self.notes.append("nothing to replay: the backup already stands at the target")
        if any(compression_of(f) for f in files) and self.replay_with == TOOL:
            self.notes.append("compressed files are decompressed into the tool's standard input, one "
                              "invocation per file (the tool cannot seek in a pipe)")
        return doc


BINLOGKIT, TOOL = "binlogkit", "tool"  # who prints the replayed SQL (plan_pitr's replay_with)
_DECOMPRESS = {".xz": "xz", ".lzma": "xz", ".gz": "gzip", ".bz2": "bzip2"}


def command(r: Replay[Any], files: list[str], start_pos: int, stop_pos: int | None) -> str:
    """The replay line: the server's binlog tool with ``--start-position`` (first file only) and
    ``--stop-position`` (last file only), piped into its client with no connection options (the
    user's own option files and environment apply).

    Compressed files cannot be read by the tool (it seeks), but it reads a binlog from standard
    input (``-``), skipping to a start position by reading: then each file gets its own
    invocation, in order, in one group piped into one client."""
    q = shlex.quote
    first = [f"--start-position={start_pos}"] if start_pos > 4 else []
    last = [f"--stop-position={stop_pos}"] if stop_pos is not None else []
    files = [_absolute(f) for f in files]
    if not any(os.path.splitext(f)[1] in _DECOMPRESS for f in files):
        return " ".join(map(q, [r.binlog_tool, *first, *last, *files])) + f" | {r.client}"

    def opts(k: int) -> list[str]:
        return (first if k == 0 else []) + (last if k == len(files) - 1 else [])

    parts = []
    for k, f in enumerate(files):
        tool = _DECOMPRESS.get(os.path.splitext(f)[1])
        words = " ".join(map(q, [r.binlog_tool, *opts(k)]))
        parts.append(f"{tool} -dc {q(f)} | {words} -" if tool else f"{words} {q(f)}")
    return "{ " + "; ".join(parts) + f"; }} | {r.client}"


def _key_spec(inputs: Iterable[Input]) -> KeySpec | None:
    """Where the keys of the first keyed input are (paths, never key bytes)."""
    for i in inputs:
        if i.keys is not None:
            return i.keys.spec if isinstance(i.keys, Keys) else i.keys
    return None


def _absolute(path: str) -> str:
    """A local path as an absolute one (the command runs from any folder); a URL as it is."""
    return path if "://" in path else os.path.abspath(path)


def replay_command(r: Replay[Any], files: list[str], start_pos: int, stop_pos: int | None,
                   key_files: KeySpec | None = None, program: str = "binlogkit") -> str:
    """The replay line with binlogkit: ``binlogkit decode`` (replayable output, mysqlbinlog's
    ``--start-position`` in the first file and ``--stop-position`` in the last) piped into the
    flavor's client with no connection options. It reads what the server's tool cannot:
    encrypted files (``key_files``: the key options, paths only: the command line never holds key bytes or the
    secret), ``.xz``/``.gz``/``.bz2`` files as streams and ``s3://`` objects, so one invocation
    reads them all. ``program``: the words that run binlogkit (``cli.pitr.program``: its path
    when the ``binlogkit`` on PATH is another one or none); paths are absolute."""
    q = shlex.quote
    words = [*shlex.split(program), "decode"]
    if key_files is not None:
        words += [f"--key-file={_absolute(key_files.key_file)}"] if key_files.key_file else []
        words += [f"--key-file-secret-file={_absolute(key_files.secret_file)}"] if key_files.secret_file else []
        words += [f"--cipher={key_files.cipher.lower()}"] if key_files.cipher else []
        words += [f"--keyring-file={_absolute(key_files.keyring_file)}"] if key_files.keyring_file else []
    words += [f"--start-position={start_pos}"] if start_pos > 4 else []
    words += [f"--stop-position={stop_pos}"] if stop_pos is not None else []
    return " ".join(map(q, [*words, *map(_absolute, files)])) + f" | {r.client}"


def plan_pitr(paths: Paths, frm: From, until: Until, *, jobs: int | None = None,
              replay_with: str = "binlogkit", program: str = "binlogkit") -> dict:
    """The plan as a JSON-able document (see the module docstring); raises ``PitrUsage`` when
    the question cannot be put to this archive. ``paths``: folders, files or ``Input`` values;
    an Input's keys (a ``crypto.Keys``) read the encrypted files found under it.

    ``command`` is the replay line: ``binlogkit decode … | mariadb`` (``| mysql``) by default,
    which reads every archive binlogkit reads; ``replay_with="tool"``: the server's own
    ``mariadb-binlog`` / ``mysqlbinlog`` line, for plain local files (PitrUsage on URLs or
    encrypted files). Both are in the document: ``binlogkit_command`` and ``tool_command``
    (None where the tool cannot read the files). ``program``: how the binlogkit line starts."""
    if replay_with not in (BINLOGKIT, TOOL):
        raise PitrUsage(f"replay_with: {BINLOGKIT!r} or {TOOL!r}, not {replay_with!r}")
    plan = _Plan(paths, frm, until, jobs)
    plan.replay_with = replay_with
    plan.program = program
    return plan.run()

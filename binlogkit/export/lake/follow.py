"""``export --follow``: after what the archive holds, keep applying what arrives in it — a folder
``binlogkit pull`` is filling — until SIGTERM / SIGINT, then commit what is whole and stop.

A look (every ``poll`` seconds) checks the newest file's size; a read — when a commit is due,
a new file came, a batch's bytes wait, at the first look and the last — goes on from where the
last one had read every transaction whole (that file's head, then from that offset; the newer
files whole), as the ordinary walk does (``changes.committed_changes``: only whole, committed
transactions; a transaction pull has not finished writing is left for the next read) and
gives the mirror the transactions past its position. A batch ends at ``batch_transactions``
(as the export's) or when ``commit_interval`` seconds have passed since the last commit with
something pending.

Checkpoint: after every batch the warehouse's ``_binlogkit_follow.json`` says where the batch
ended (file, position, GTID state), written after the batch's table commits; a restart reads
from there on (the GTID state starting from the recorded one), not the archive from its start.
The audit's gap rule runs when the list of files changes. Each table still skips what its own
last commit holds (the export's restart rule), so a follower killed anywhere — between two
tables' commits, before the checkpoint is written — and restarted applies nothing twice and
skips nothing. A checkpoint past every table's last commit (a warehouse put back from an older
copy) is refused. A gap in the files (the audit's rules) stops the follower, exit 1, as it stops
the export.

A failover (``failover``): pointed at a new primary, the follower reads its binlogs from their
first file, skips what the checkpoint's GTID state holds, and compares each table by GTID state
from then on (``Follower.position``: a ``GtidFloor``), positions of two series not comparing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time

from ...codecs.header import HEADER_STRUCT, LEN_HEADER
from ...constants import BINLOG_MAGIC, EventType as T
from ...errors import ArchiveGap, BinlogError, UsageError
from ..changes import Filters, Report, checked_inputs, committed_changes
from .failover import BY_GTID, SOURCE, GtidFloor, at, floor_of
from .mirror import Mirror, StatementsOfAnyDatabase, open_sink
from .props import order_key, position_of
from .state import Tracker, flavor_of

CHECKPOINT = "_binlogkit_follow.json"


def read_checkpoint(warehouse: str) -> dict | None:
    path = os.path.join(warehouse, CHECKPOINT)
    if os.path.islink(path):
        raise UsageError(f"{path}: a link, not the follower's checkpoint (it writes a regular file there, never "
                         "through a link); remove it")
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{os.path.join(warehouse, CHECKPOINT)}: unreadable ({exc}); remove it to walk the archive "
                         "again from its start") from None
    if not isinstance(doc, dict) or not doc.get("file") or not isinstance(doc.get("position"), int):
        raise UsageError(f"{os.path.join(warehouse, CHECKPOINT)}: not a follower's checkpoint")
    return doc


def replace_file(path: str, doc: dict, durable: bool = True) -> None:
    """``doc`` as JSON at ``path``, through ``writing.safeio`` (as every writer): an exclusive
    temporary file of a random name, fsync, rename over, fsync the folder; a link (or anything
    but a regular file) at ``path`` is refused (``WriteRefused``), never written through.
    ``durable=False``: without the two fsyncs (the status, rewritten as the follower goes)."""
    from ...writing.safeio import SafeDir

    folder, name = os.path.split(os.path.abspath(path))
    with SafeDir(folder) as d:
        d.replace(name, json.dumps(doc).encode(), new_mode=0o644, durable=durable)


def write_checkpoint(warehouse: str, doc: dict) -> None:
    replace_file(os.path.join(warehouse, CHECKPOINT), doc)


def check_checkpoint(sink, ck: dict) -> None:
    """The checkpoint against the tables' own commit properties: some table's last commit is
    at or past it (the checkpoint is written after the commits of its batch)."""
    at = order_key(ck["file"], ck["position"])
    newest = None
    for db, name in sink.table_names():
        p = position_of(sink.recorded(db, name))
        if p is not None and (newest is None or p > newest):
            newest = p
    if newest is None or newest < at:
        raise UsageError(f"the follower's checkpoint ({ck['file']}:{ck['position']}) is past every table's last "
                         f"commit ({'none' if newest is None else f'{newest[1]}:{newest[2]}'}): the warehouse is "
                         f"not the one it was written for (put back from an older copy?); remove "
                         f"{CHECKPOINT} to walk the archive from its start")


def check_checkpoint_by_gtid(sink, ck: dict) -> None:
    """``check_checkpoint`` for a warehouse whose tables' positions span two primaries' series
    (after a failover): some table's last commit's GTID state holds the checkpoint's."""
    from .state import PROP, Query

    want = ck.get("gtid_state") or ""
    if not want:
        raise UsageError(f"the follower's checkpoint records no GTID state: a failover cannot be followed by GTID; "
                         f"remove {CHECKPOINT} and export again")
    for db, name in sink.table_names():
        have = (sink.recorded(db, name) or {}).get(PROP)
        if have and Query(have).holds_state(want):
            return
    raise UsageError(f"the follower's checkpoint (GTID state {want}) is past every table's last commit: the "
                     f"warehouse is not the one it was written for (put back from an older copy?); remove "
                     f"{CHECKPOINT} to walk the archive from its start")


def status(m: "Follower | None", started: float, now_wall: float, now: float) -> dict:
    """The follower's status (pure): ``lag_seconds``, how old the oldest transaction not yet
    committed to the tables is, read or waiting in the folder (now minus its time on the
    primary: ``Follower.pending_since``; 0: caught up with the folder), the last GTID and position
    committed, row changes per second since the start, commits. ``m`` None: no binlog in the
    folder yet (pull has not written its first): the same keys, nothing read, and ``waiting``."""
    seconds = max(now - started, 1e-9)
    if m is None:
        return {"lag_seconds": 0.0, "last_gtid": None, "file": None, "position": 0, "rows": 0,
                "rows_per_second": 0.0, "commits": 0, "batches": 0, "pending_transactions": 0,
                "seconds": round(seconds, 3), "waiting": "no binlog in the folder yet"}
    s = m.stats
    return {"lag_seconds": 0.0 if m.pending_since is None else max(0.0, round(now_wall - m.pending_since, 3)),
            "last_gtid": m.applied_gtid, "file": m.applied_at[0], "position": m.applied_at[1],
            "rows": s.rows, "rows_per_second": round(s.rows / seconds, 1), "commits": s.commits,
            "batches": s.batches, "pending_transactions": m.n_trx, "seconds": round(seconds, 3)}


def status_line(doc: dict, now_wall: float | None = None) -> str:
    """The terminal line; with pull's state (``doc["pull"]``, ``feed.PullState``) while pull
    cannot reach the primary."""
    from .feed import describe

    lag = f"{doc['lag_seconds']:.1f} s"
    pulling = describe(doc["pull"], time.time() if now_wall is None else now_wall) if doc.get("pull") else ""
    if doc.get("waiting"):
        return f"following: waiting, {doc['waiting']}{pulling}"
    return (f"following: lag {lag}, last GTID {doc['last_gtid'] or '-'} at {doc['file'] or '-'}:{doc['position']}, "
            f"{doc['rows']:,} row changes ({doc['rows_per_second']:,.0f}/s), {doc['commits']:,} commits{pulling}")


STATUS_EVERY = 1.0   # seconds: the status file is replaced at most this often (and at every commit)


def write_status(path: str, doc: dict) -> None:
    """The status: a report rewritten as the follower goes (``follow_lake``: at most once a
    second, at every commit and at the end), never read back (the checkpoint is what a restart
    reads): replaced whole, not fsync'd (two fsyncs a look were half the follower's CPU when
    it waits)."""
    replace_file(path, doc, durable=False)


class Follower(Mirror):
    """The mirror, whose every batch ends by writing the checkpoint."""

    warehouse = ""
    series = ""

    def settled(self) -> bool:
        """Nothing pending, and the last transaction read (a statement: an ALTER, a TRUNCATE)
        is past the checkpoint while a table's own commit carries it (``Mirror._ddl``,
        ``_fill``, ``_empty``): the checkpoint moves past it too, else a restart reads it again."""
        t = self.last
        if t is None or self.batches:
            return False
        end = order_key(t.end_file or t.start_file, t.end_offset or 0)
        return self.applied_at != end[1:] and any(isinstance(p, tuple) and p >= end for p in self.recorded.values())

    def due(self, interval: float) -> bool:
        """Something to commit (pending transactions, or a checkpoint to move: ``settled``) and
        ``interval`` seconds passed since the last commit."""
        return bool(self.n_trx or self.settled()) and time.monotonic() - self.committed_at >= interval

    def flush(self) -> None:
        had = bool(self.batches) or self.settled()
        t = self.last
        super().flush()
        if had and t is not None:
            end = order_key(t.end_file or t.start_file, t.end_offset or 0)
            doc = {"file": end[1], "position": end[2], "gtid": t.gtid or "", "gtid_state": self.state.at(end),
                   "series": self.series}
            if self.source is not None:
                doc[SOURCE] = self.source
            if self.by_gtid is not None:
                doc[BY_GTID] = True
            write_checkpoint(self.warehouse, doc)
            self.committed_at = time.monotonic()
            self.applied_gtid, self.applied_at = t.gtid or "", end[1:]
        self.pending_since = None

    def add(self, item, trx_pos: tuple) -> None:
        super().add(item, trx_pos)
        if self.pending_since is None and self.n_trx:
            self.pending_since = item.trx.last_timestamp

    def position(self, db: str, name: str):
        """After a failover (``by_gtid``: the checkpoint's state, for commits that recorded none)
        a table's ``GtidFloor``, not its position: positions of two series do not compare."""
        if self.by_gtid is None:
            return super().position(db, name)
        k = (db, name)
        if k not in self.floors:
            self.floors[k] = floor_of(self.sink.recorded(db, name), self.by_gtid)
        return self.floors[k]

    by_gtid: str | None = None
    source: int | None = None       # the server_id of the primary pull copies (the checkpoint keeps it)
    floors: dict = {}
    final = False       # the follower has stopped: its last report
    committed_at = 0.0
    # the primary's time of the oldest transaction not committed: read (its commit time), or
    # waiting unread in the folder (its first event's)
    pending_since: float | None = None
    applied_gtid = ""
    applied_at: tuple = ("", 0)


def follow_lake(paths, warehouse: str, *, fmt: str = "iceberg", mirror: bool = True, filters: Filters | None = None,
                catalog: str | None = None, batch_transactions: int = 1000, batch_rows: int = 100_000,
                commit_interval: float = 5.0, poll: float = 0.5, series: str | None = None,
                skip_statements: bool = False, stop_after: float | None = None, on_poll=None,
                status_file: str | None = None, status_line_to=None, feeder=None, buffer: str | None = None,
                source: int | None = None, cross: bool = False, pull_state=None) -> dict:
    """Follow the archive ``paths`` into ``warehouse`` (the module text) until SIGTERM / SIGINT
    (or ``stop_after`` seconds, for tests); the export's summary. ``ArchiveGap`` at a gap.
    ``status_file``: ``status`` as JSON, replaced at most once a second (``STATUS_EVERY``), at
    every commit and at the end; ``status_line_to``: a
    callable given ``status_line`` after every look (the CLI's terminal line). ``feeder``: the
    ``binlogkit pull`` child filling the folder (``subprocess.Popen``): when it ends, the follower
    commits what it read and stops (its exit code in the summary, ``pull_exit``); when the
    follower stops, it is sent SIGTERM and waited for. ``buffer``: the folder pull fills when
    ``paths`` are an archive it continues (``handover``): the follower reads both as one list.
    ``source``: the server_id of the primary pull copies (kept in the checkpoint). ``cross``: a
    failover (``failover``): ``paths`` are the new primary's binlogs, read from their first file,
    every transaction the checkpoint's GTID state holds skipped, the tables compared by GTID.
    ``pull_state``: a callable giving the feeder's state (``feed.PullState.doc``), put in the
    status as ``pull`` (and on the status line while pull cannot reach the primary)."""
    started = time.monotonic()
    written = [0.0, -1]     # when the status file was last replaced, the commits it said

    def report(m) -> None:
        now = time.monotonic()
        doc = status(m, started, time.time(), now)
        if pull_state is not None:
            doc["pull"] = pull_state()
        # the file: at most once a STATUS_EVERY seconds, and whenever commits were made, and the last
        if status_file and ((m is not None and m.final) or doc["commits"] != written[1]
                            or now - written[0] >= STATUS_EVERY):
            write_status(status_file, doc)
            written[:] = [now, doc["commits"]]
        if status_line_to is not None:
            status_line_to(status_line(doc))
        if on_poll is not None and m is not None:
            on_poll(m)
    stopping: list[int] = []

    def on_signal(signum, _frame) -> None:
        stopping.append(signum)
    # first: a SIGTERM while the tables are opened stops the follower as cleanly as one later
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if feeder is not None:
            def feeder_done(m) -> None:
                if feeder.poll() is not None and not stopping:
                    stopping.append(0)
            inner = report

            def report(m) -> None:      # noqa: F811 -- the status, then the child's state
                inner(m)
                feeder_done(m)
        doc = _follow(paths, warehouse, stopping, fmt=fmt, mirror=mirror, filters=filters, catalog=catalog,
                       batch_transactions=batch_transactions, batch_rows=batch_rows, commit_interval=commit_interval,
                       poll=poll, series=series, skip_statements=skip_statements, stop_after=stop_after,
                       on_poll=report, buffer=buffer, source=source, cross=cross)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        alone = feeder is not None and feeder.poll() is not None
        if feeder is not None and feeder.poll() is None:
            feeder.send_signal(signal.SIGTERM)
            try:
                feeder.wait(60)
            except Exception:
                feeder.kill()
                feeder.wait()
    if feeder is not None:
        # the pull's exit code when it ended by itself (it stopped the follower), else None
        doc["pull_exit"] = feeder.returncode if alone else None
    return doc


def _follow(paths, warehouse: str, stopping: list[int], *, fmt: str, mirror: bool, filters: Filters | None,
            catalog: str | None, batch_transactions: int, batch_rows: int, commit_interval: float, poll: float,
            series: str | None, skip_statements: bool, stop_after: float | None, on_poll,
            buffer: str | None = None, source: int | None = None, cross: bool = False) -> dict:
    from .. import make_summary
    from ...pitr.walk import read_head
    from ...reading.names import strip_compressed
    from .gaps import audit_gap

    if "://" in warehouse:
        raise UsageError("--follow keeps its checkpoint in a local warehouse folder; an object-store warehouse "
                         "is not followed yet")
    os.makedirs(warehouse, exist_ok=True)
    filters = filters or Filters()
    sink = open_sink(fmt, warehouse, catalog)
    ck = read_checkpoint(warehouse)
    if cross and not (ck and ck.get("gtid_state")):
        raise UsageError("a new primary is followed from the mirror's GTID state, which the warehouse's checkpoint "
                         "does not record")
    # after a failover the tables' positions span two series: each table compared by GTID
    by_gtid = ck["gtid_state"] if ck and (cross or ck.get(BY_GTID)) else None
    if ck is not None:
        (check_checkpoint_by_gtid if by_gtid else check_checkpoint)(sink, ck)
    if source is None and ck is not None and isinstance(ck.get(SOURCE), int):
        source = ck[SOURCE]
    skip = GtidFloor(ck["gtid_state"]) if cross and ck else None    # held already: the new series' start
    t0 = time.monotonic()
    total = Report()
    m: Follower | None = None
    floor = order_key(ck["file"], ck["position"]) if ck and not cross else None      # applied up to here
    # where the next look starts reading: every transaction before it was seen whole (and, if
    # wanted, given to the mirror); with a checkpoint that records the GTID state, the checkpoint
    # itself (the state there is known), else the first file's start (the state from its head)
    resume = floor if ck and ck.get("gtid_state") and not cross else None
    noted = resume   # the GTIDs told to the state: those of transactions after it
    audited: tuple = ()
    g = None
    gap = None
    verified: set[str] = set()     # names whose archive and pull copies were compared
    read_files: set[str] = set()
    kept: dict = {}     # the walk's table maps, from one look to the next
    walked = -1         # the newest file's size when the last walk started (``_unread``), -1: unknown
    mark = None         # (file, offset) where the first transaction not read whole starts (``_unread``)
    while not (stopping and m is None):   # a signal before the first poll: nothing read
        try:
            found = checked_inputs(paths, series=series, one_series=True)
        except FileNotFoundError:
            # folders with no binlog yet (pull has not written its first file): wait for one
            if m is not None or not all(os.path.isdir(getattr(p, "name", str(p))) for p in paths):
                raise
            if stop_after is not None and time.monotonic() - t0 >= stop_after:
                break
            on_poll(None)
            time.sleep(poll)
            continue
        done_to = resume or floor       # the files before this one are read whole
        if buffer is not None:          # the archive, then what pull has written after it
            found, gap = _with_pulled(found, buffer, series, done_to, verified)
            if gap is not None:
                break
        if done_to is not None:
            found = [i for i in found if order_key(i.name, 0)[:2] >= done_to[:2]]
            if not found and buffer is not None:    # pull has not written the checkpoint's file yet
                if stop_after is not None and time.monotonic() - t0 >= stop_after:
                    break
                on_poll(m)
                time.sleep(poll)
                continue
            if not found:
                raise UsageError(f"the follower's position {done_to[1]}:{done_to[2]}: that file is not in "
                                 f"{', '.join(getattr(p, 'name', str(p)) for p in paths)} any more (nor any after it)")
        if m is None:
            known = (resume is not None or cross) and ck     # the state at the checkpoint
            state = Tracker(flavor_of(ck["gtid_state"]), ck["gtid_state"]) if known and ck else \
                Tracker.from_head(read_head(found[0]))
            m = Follower(sink, mirror=mirror, batch_transactions=batch_transactions, batch_rows=batch_rows,
                         tables=filters.tables, skip_statements=skip_statements, state=state)
            m.warehouse, m.series = warehouse, found[0].name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            m.by_gtid, m.source, m.floors = by_gtid, source, {}
            m.committed_at = time.monotonic()
        # the audit (the gap rule) when the files changed: a new file, a rotation (a file that
        # grows is read by the walk, which reports damage)
        names = tuple(i.name for i in found)
        # a walk when the newest file is another (the first look; a new one; pull's copy of the
        # archive's)
        newest = not audited or names[-1] != audited[-1]
        if names != audited:
            g = audit_gap(found)
            audited = names
        # read now, or leave what arrived for the look that commits: the bytes past the last
        # whole transaction read are walked when a commit is due (``commit_interval`` since the
        # last), when they reach a batch's bytes, when the newest file is another or the files
        # have a gap, at the first look and the last one; looks in between only say how old the
        # oldest of them is (``lazy``): one walk per commit, not one per poll (each walk reads
        # the file's head again, and wakes cold caches)
        last_look = stop_after is not None and time.monotonic() - t0 >= stop_after
        force = newest or g is not None or bool(stopping) or last_look
        lazy = _unread(found, mark, m.batch_bytes)
        due = time.monotonic() - m.committed_at >= commit_interval
        if not force and lazy is not None and (lazy[1] == walked or not due):
            if lazy[1] != walked and m.pending_since is None:
                m.pending_since = lazy[0] if lazy[0] is not None else time.time()
            if m.due(commit_interval):
                m.flush()
            on_poll(m)
            time.sleep(poll)
            continue
        # the newest file's size as the walk starts (a look compares it: ``_unread``)
        walked = lazy[1] if lazy is not None else -1 if found[-1].is_url else found[-1].size()
        # stopping: what waits unread (less than a batch's bytes) is read whole and committed;
        # a longer read (a backlog, an archive) stops at the signal
        finishing = bool(stopping) and lazy is not None
        if resume is not None and found[0].basename == resume[1] and resume[2] > 4:
            found[0] = found[0].with_options(start=resume[2])     # its head, then from there on
        report = Report()
        start = floor
        began = time.monotonic()

        def note(t, _m=m) -> None:
            nonlocal noted
            pos = order_key(t.end_file or t.start_file, t.end_offset or 0)
            if noted is None or pos > noted:
                if skip is None or not skip.holds_gtid(t.gtid):
                    _m.note(t)
                noted = pos
        walk = StatementsOfAnyDatabase(**{f.name: getattr(filters, f.name) for f in dataclasses.fields(Filters)},
                                       seen=note)
        cur = None
        for item in committed_changes(found, walk, report, keep=kept):
            t = item.trx
            pos = order_key(t.end_file or t.start_file, t.end_offset or 0)
            if start is not None and pos <= start:
                continue
            if skip is not None and skip.holds_gtid(t.gtid):
                continue
            if by_gtid is not None:
                pos = at(pos, t.gtid)
            if t is not cur:
                if any(stopping) and not finishing:   # a signal (0: the feeder ended: read whole)
                    break
                if g is not None and order_key(t.start_file, t.start_offset) >= g[0]:
                    gap = g[1]
                    break
                cur = t
                total.transactions += 1
                # a walk long enough (a backlog) commits every interval as it goes; one walk of what
                # arrived since the last commit commits it at its end, read whole
                if m.n_trx and time.monotonic() - max(m.committed_at, began) >= commit_interval:
                    m.flush()
            m.add(item, pos)
            floor = pos
        else:
            if noted is not None:
                resume = noted          # the look read everything whole up to there
            # where what the next look finds unread starts: past the last whole transaction in
            # the newest file, or past its head events when it has none yet (a rotation on a
            # quiet primary: its looks stay lazy until the new file's first transaction)
            mark = (resume[1], resume[2]) if resume is not None and resume[1] == found[-1].basename \
                else _past_head(found[-1])
        # a tail pull has not finished writing is not a problem: only problems before the newest file
        last = found[-1].name
        total.problems += [p for p in report.problems if p.get("file") and p["file"] != last]
        read_files.update(strip_compressed(i.basename) for i in found)
        total.files = len(read_files)
        if gap is not None or stopping or total.problems:
            break
        if g is not None:
            gap = g[1]
            break
        if m.due(commit_interval):
            m.flush()
        if on_poll is not None:
            on_poll(m)
        if stop_after is not None and time.monotonic() - t0 >= stop_after:
            break
        time.sleep(poll)
    if m is None:       # stopped before the first poll: nothing read, nothing to commit
        m = Follower(sink, mirror=mirror, batch_transactions=batch_transactions, batch_rows=batch_rows)
    m.flush()
    if m.warehouse:
        m.final = True
        on_poll(m)
    s = m.stats
    summary = make_summary(warehouse, total, {}, 0, 0, 0, time.monotonic() - t0)
    summary.update({"format": fmt, "mirror": mirror, "rows": s.rows, "batches": s.batches, "commits": s.commits,
                    "skipped_rows": s.skipped_rows, "from_snapshot": 0, "tables": sorted(s.tables),
                    "no_key": sorted(s.no_key - set(s.stopped)), "partial_images": s.partial, "gap": gap,
                    "stopped": [{k: v for k, v in s.stopped[t].items() if k != "_pos"} for t in sorted(s.stopped)],
                    "skipped_statements": s.skipped_statements, "moved": s.moved, "follow": True,
                    "signal": signal.Signals(stopping[0]).name if stopping and stopping[0] else None})
    if gap is not None:
        err = ArchiveGap(f"archive gap ({gap['kind']}: {gap['detail']}): the tables hold every change before it; "
                         f"the follower stopped at {gap['place']}", file=gap.get("file"), offset=gap.get("offset"))
        err.summary = summary  # type: ignore[attr-defined]
        raise err
    return summary


def _unread(found: list, mark: tuple | None, budget: int) -> tuple[float | None, int] | None:
    """What arrived past ``mark`` (the newest file's name and the offset where its first
    transaction not read whole starts) when only the newest file grew since: the timestamp of the
    event there (the next transaction's first, as the primary stamped it; None: its header not
    there whole yet) and the file's size. None when a look must read: no mark, a newest file
    other than the mark's, a file read with keys, compressed or not local and plain, ``budget``
    bytes or more waiting (a batch's worth)."""
    last = found[-1]
    if mark is None or last.basename != mark[0] or not _peekable(last):
        return None
    try:
        with last.open() as fh:
            size = os.fstat(fh.fileno()).st_size
            if fh.read(len(BINLOG_MAGIC)) != BINLOG_MAGIC or size - mark[1] >= budget:
                return None
            fh.seek(mark[1])
            head = fh.read(LEN_HEADER)
    except OSError:
        return None
    ts = HEADER_STRUCT.unpack(head)[0] if len(head) == LEN_HEADER else 0
    return (float(ts) if ts else None), size


# the events a binlog or relay log opens with, before its first transaction
_FILE_HEAD = frozenset(int(c) for c in (T.FORMAT_DESCRIPTION_EVENT, T.ROTATE_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT,
                                        T.GTID_LIST_EVENT, T.BINLOG_CHECKPOINT_EVENT, T.START_EVENT_V3))
_HEAD_EVENTS = 16       # at most these many head events are stepped over (a relay log has a few more)


def _peekable(inp) -> bool:
    return inp.keys is None and inp.plain() and not inp.is_url


def _past_head(inp) -> tuple[str, int] | None:
    """``(name, offset)`` of the first event of a plain local binlog that is not one of its head
    events (or of its end, or of a torn event after the head); None where it cannot be peeked
    at, or past ``_HEAD_EVENTS`` head events. Framed by ``Input.frames``, bytes of no event."""
    if not _peekable(inp):
        return None
    at = len(BINLOG_MAGIC)
    frames = inp.frames(verify=False)
    try:
        for n, f in enumerate(frames):
            if n == _HEAD_EVENTS:
                return None
            if f.type_code not in _FILE_HEAD:
                break
            at = f.end_offset
    except (BinlogError, OSError):
        pass    # what follows the head is torn: the mark is where it starts (no binlog: _unread refuses it)
    finally:
        frames.close()
    return inp.basename, at


def _with_pulled(archive: list, buffer: str, series: str | None, at: tuple | None,
                 verified: set[str]) -> tuple[list, dict | None]:
    """The archive's files and those pull has written in ``buffer`` as one list
    (``handover.merge``), and the gap to stop at when a copy of pull's differs from the
    archive's copy of that file (checked once per name)."""
    from ...reading.names import strip_compressed
    from .handover import merge, same_bytes

    try:
        pulled = checked_inputs([buffer], series=series, one_series=True)
    except FileNotFoundError:
        pulled = []
    mine = {strip_compressed(i.basename): i for i in archive}
    found = merge(archive, pulled, at)
    for i in found:
        a = mine.get(i.basename)
        if a is None or a is i or i.basename in verified:
            continue
        verified.add(i.basename)
        off = same_bytes(a, i)
        if off is not None:
            return found, {"kind": "archive_mismatch", "file": i.basename, "offset": off,
                           "place": f"{i.basename}:{off}",
                           "detail": f"the primary's {i.basename} (pulled into {buffer}) differs from the archive's "
                                     f"copy ({a.name}) at byte {off}: not the same server's binlog"}
    return found, None

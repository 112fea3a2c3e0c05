"""Which files, in what order, with what context: the one plan the Spark jobs (audit, export)
and the ``binlog`` data source share, and the heads that prune whole files.

``plan_files(paths, keys=…)`` lists the inputs (files, folders, ``.index`` files, compressed
archives, ``s3://`` prefixes: ``reading.source.inputs``, or audit's recursive listing) as
``FileTask`` values in binlog order: the task's number is its place in that order, its
``series`` the folder (or prefix) it belongs to, its ``keys`` a ``crypto.KeySpec`` (key FILE
PATHS, loaded where the file is read; never key bytes). Audit deals them largest first
(``by_size``); export and the data source keep the order.

``head(task)`` reads the first events of a file (the Format_description and the
Previous_gtids / Gtid_list that follow it: a few hundred bytes, no transaction body) and
``bounds(tasks, heads)`` turns the heads of a series into what each file can hold:

* time: every event of file *i* was written before the server rotated to file *i+1*, and an
  event's timestamp is when its statement began, never later than its write: the events of
  file *i* have ``timestamp <= head(i+1).timestamp``. A transaction may start long before it
  is written, so there is no lower bound from heads: only ``timestamp >= T`` (and ``>``, ``=``)
  prunes by time;
* GTIDs: MySQL's Previous_gtids of file *i* is every GTID before it; file *i* holds GTIDs of
  ``previous(i+1) - previous(i)`` only. MariaDB's Gtid_list of file *i* is the position before
  it: a GTID ``d-s-n`` is in file *i* only if ``n`` is above that list's ``d`` and (not the last
  file) at or below the next file's.

The last file of a series has no upper bound. Anything the heads cannot say (no GTID events in
the head, a damaged head, a relay log) keeps the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from ..constants import GTID_TYPES, EventType as T
from ..reading.source import Input


@dataclass(frozen=True)
class FileTask:
    """One file to read: its place in binlog order, name, stored size, series (folder or prefix)
    and key spec (paths only; ``repr`` shows no key material either way)."""

    index: int
    name: str
    size: int
    series: str
    keys: Any = field(default=None, repr=False)   # crypto.KeySpec | None
    start: int | None = None    # a range of the file: the transactions that begin in [start, stop)
    stop: int | None = None
    lead: int | None = None     # the offset of the event right before ``start`` (the state a reader
                                # needs from before the range: the transactions' resume position)

    def whole(self) -> bool:
        return self.start is None and self.stop is None

    def holds(self, offset: int) -> bool:
        """Whether a transaction (or event) that begins at ``offset`` is this task's."""
        return (self.start is None or offset >= self.start) and (self.stop is None or offset < self.stop)

    def input(self, resolve=None) -> Input:
        """The ``Input`` to read it with, its keys loaded here (``resolve``: see ``KeySpec.load``)."""
        return Input(self.name, self.keys.load(resolve=resolve) if self.keys is not None else None)


def plan_files(paths: Iterable[Input | str | os.PathLike], *, keys=None, recursive: bool = False,
               check: bool = False) -> list[FileTask]:
    """The files ``paths`` stand for, in binlog order (series, then number), as ``FileTask``.
    ``recursive``: folders all the way down and ``.index`` files without the logs they list
    that are missing (the audit's listing, ``audit.engine.audit_inputs``); else
    ``reading.source.inputs`` (an index's logs, a folder's logs, a prefix's objects).
    ``check``: a listed file that does not exist or cannot be read is an ``OSError`` (the
    export's check, ``export.changes.checked_inputs``). ``keys``: a ``crypto.KeySpec`` (or an
    ``Input`` given carries its own)."""
    from ..reading.names import series_key
    from ..reading.files import input_size

    paths = list(paths)
    if recursive:
        from ..audit.engine import audit_inputs

        found = audit_inputs(paths)
    elif check:
        from ..export.changes import checked_inputs

        found = checked_inputs(paths)
    else:
        from ..reading.source import inputs

        found = inputs(paths)
    out = list(found)   # each file once (a file given twice is read once, as every command does)
    if recursive:  # audit's listing is largest first: back to binlog order
        out.sort(key=lambda i: series_key(i.name))
    tasks = []
    for n, inp in enumerate(out):
        spec = inp.for_worker().keys if inp.keys is not None else keys
        tasks.append(FileTask(n, inp.name, input_size(inp.path), series_key(inp.name)[0], spec))
    return tasks


def by_size(tasks: list[FileTask]) -> list[FileTask]:
    """Largest first (what the audit deals to tasks), binlog order among equals."""
    return sorted(tasks, key=lambda t: (-t.size, t.index))


# The cuts ``split`` found, by the file's identity (a local file's path, size and modification
# time: ``_planned_as``): the data source plans every query of a session in one reused Python
# worker, and a warm query then skips the header walk (0.4-0.6 s of serial planning on the 1 GB
# bench binlog). A file that grew, was rewritten or replaced is another identity: walked again.
_SPLITS: dict[tuple, tuple[list[int], list[int | None]]] = {}
_SPLITS_MAX = 100_000


def _planned_as(task: FileTask) -> str | None:
    """What names ``task``'s bytes in ``_SPLITS``: a local file's path, size and modification
    time (``_identity``, the bounds cache's), stat'ed now; None for object storage and standard
    input (not kept)."""
    from ..reading.storage import is_url

    if task.name == "-" or is_url(task.name):
        return None
    try:
        return _identity(task.name)
    except OSError:
        return None


def split(task: FileTask, every: int, resolve=None) -> list[FileTask]:
    """``task`` as ranges of whole transactions of about ``every`` bytes, found by a header
    walk (no body read): each range begins at a GTID event (a transaction's first), so a range's
    transactions and events are its own; a transaction belongs to the range it begins in. A
    file below ``every`` bytes, without GTID events, or that cannot be walked stays whole."""
    from ..errors import BinlogError

    if every <= 0 or task.size <= every:
        return [task]
    ident = _planned_as(task)
    known = _SPLITS.get((ident, every)) if ident is not None else None
    if known is not None:
        cuts, leads = known
    else:
        cuts, leads = [], []
        try:
            nxt = every
            prev = None
            for f in task.input(resolve).frames(want=frozenset(), verify=False, records=False):
                if f[0] >= nxt and f[1] in GTID_TYPES:
                    cuts.append(f[0])
                    leads.append(prev)
                    nxt = f[0] + every
                prev = f[0]
        except (BinlogError, OSError):
            return [task]
        if ident is not None:
            if len(_SPLITS) >= _SPLITS_MAX:
                _SPLITS.clear()
            _SPLITS[(ident, every)] = (cuts, leads)
    if not cuts:
        return [task]
    bounds_ = [None, *cuts, None]
    return [replace(task, start=a, stop=b, lead=lead)
            for a, b, lead in zip(bounds_, bounds_[1:], [None, *leads])]


# --- heads -----------------------------------------------------------------------------------------

HEAD_TYPES = frozenset({T.PREVIOUS_GTIDS_LOG_EVENT, T.GTID_LIST_EVENT})
_HEAD_EVENTS = 8   # FDE, (Start_encryption), Previous_gtids / Gtid_list, Binlog_checkpoint...: the head


@dataclass(frozen=True)
class Head:
    """What the first events of a file say: the Format_description's timestamp, MySQL's
    Previous_gtids (set text) and MariaDB's Gtid_list (GTID texts); ``ok``: the head was read."""

    timestamp: int | None = None
    previous_gtids: str | None = None
    gtid_list: tuple[str, ...] | None = None
    ok: bool = False


def head(task: FileTask, resolve=None) -> Head:
    """The head of ``task``'s file: its first few events only (the walk stops there and the file
    is closed); a file that cannot be read gives ``Head()`` (kept: it may match)."""
    from ..errors import BinlogError
    from ..gtid import MysqlGtidSet
    from ..codecs.gtid import decode_previous_gtids
    from ..transactions import gtid_list_strings
    from ..codecs.header import LEN_HEADER

    ts: int | None = None
    prev: str | None = None
    glist: tuple[str, ...] | None = None
    try:
        frames: Any = task.input(resolve).frames(want=HEAD_TYPES, verify=False)  # a generator: closed below
        try:
            for i, f in enumerate(frames):
                if f.type_code == T.FORMAT_DESCRIPTION_EVENT and ts is None:
                    ts = f.timestamp
                elif f.type_code in HEAD_TYPES and f.data is not None:
                    fmt = f.format
                    body = f.data[max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER:
                                  len(f.data) - (fmt.len_checksum if fmt else 0)]
                    if f.type_code == T.PREVIOUS_GTIDS_LOG_EVENT:
                        prev = str(MysqlGtidSet.from_previous_gtids(decode_previous_gtids(bytes(body))))
                    else:
                        glist = tuple(gtid_list_strings(bytes(body), f.offset))
                    break
                elif f.type_code in GTID_TYPES or f.type_code == T.QUERY_EVENT or i >= _HEAD_EVENTS:
                    break
        finally:
            frames.close()
    except (BinlogError, OSError, ValueError):
        return Head()
    return Head(ts, prev, glist, ts is not None)


@dataclass(frozen=True)
class Bounds:
    """What a file can hold, from the heads of its series: ``max_timestamp`` (None: unknown),
    the GTIDs before it and, when not the last of its series, those before the next file."""

    max_timestamp: int | None = None
    mysql_before: str | None = None
    mysql_after: str | None = None
    maria_before: tuple[str, ...] | None = None
    maria_after: tuple[str, ...] | None = None

    def may_have_timestamp_at_least(self, t: float) -> bool:
        return self.max_timestamp is None or self.max_timestamp >= t

    def may_have_gtid(self, gtid: str) -> bool:
        """False only when the heads prove ``gtid`` is not in the file."""
        from ..gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet

        try:
            if ":" in gtid:
                g = MysqlGtid.parse(gtid)
                if self.mysql_before is not None and g in MysqlGtidSet.parse(self.mysql_before):
                    return False
                return self.mysql_after is None or g in MysqlGtidSet.parse(self.mysql_after)
            m = MariadbGtid.parse(gtid)
        except ValueError:
            return True
        if self.maria_before is not None and GtidPos.from_gtid_list(self.maria_before).covers(m):
            return False
        if self.maria_after is not None:
            after = GtidPos.from_gtid_list(self.maria_after)
            return after.covers(m)
        return True


def bounds(tasks: list[FileTask], heads: list[Head]) -> list[Bounds]:
    """``Bounds`` of each task (same order): from its head and the next file's in its series."""
    nxt: dict[int, int] = {}
    last: dict[str, int] = {}
    for i in sorted(range(len(tasks)), key=lambda i: tasks[i].index, reverse=True):
        t = tasks[i]
        if t.series in last:
            nxt[i] = last[t.series]
        last[t.series] = i
    out = []
    for i, h in enumerate(heads):
        j = nxt.get(i)
        n = heads[j] if j is not None else None
        after_ok = n is not None and n.ok
        out.append(Bounds(
            max_timestamp=n.timestamp if after_ok and n is not None else None,
            mysql_before=h.previous_gtids if h.ok else None,
            mysql_after=n.previous_gtids if after_ok and n is not None and h.previous_gtids is not None else None,
            maria_before=h.gtid_list if h.ok else None,
            maria_after=n.gtid_list if after_ok and n is not None and h.gtid_list is not None else None))
    return out


# --- time bounds cache ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimeBounds:
    """The least and greatest header timestamp of every event of a file (a header walk to its
    end), or unknown (None) when the file holds MySQL Transaction_payload events (the events
    inside carry timestamps no header walk sees) or could not be walked to its end."""

    events: int
    min_timestamp: int | None
    max_timestamp: int | None


def _identity(name: str) -> str | None:
    """What a cached bound is valid for: local files by size and mtime (ns), objects by their
    store's ETag and size; None (no cache: never prune by it) when the store names no version."""
    from ..reading.storage import is_url

    if is_url(name):
        from ..reading.storage import version

        v = version(name)
        return None if v is None else f"{name}\0{v}"
    st = os.stat(name)
    return f"{name}\0{st.st_size}\0{st.st_mtime_ns}"


def time_bounds(task: FileTask, cache: str, walk, trace: str | None = None) -> TimeBounds | None:
    """``TimeBounds`` of ``task``'s file from the cache folder ``cache`` (a local path), walked
    (``walk(task)``: ``tables.walk_bounds``, the header columns' C walk) and written there when
    missing; ``trace`` gets ``bounds\t<file>`` per walk. None when unknown: a file whose identity the
    store cannot give, a damaged file, payload events. Sound for pruning: every event of the
    file has ``min_timestamp <= timestamp <= max_timestamp`` while its identity (size and mtime,
    or ETag) is what was walked."""
    import hashlib
    import json

    from ..errors import BinlogError

    try:
        ident = _identity(task.name)
    except (OSError, BinlogError):
        return None
    if ident is None:
        return None
    path = os.path.join(cache, hashlib.sha256(ident.encode()).hexdigest()[:40] + ".json")
    try:
        with open(path) as fh:
            d = json.load(fh)
        if d.get("identity") == ident:
            return TimeBounds(d["events"], d["min_timestamp"], d["max_timestamp"])
    except (OSError, ValueError, KeyError):
        pass
    b = walk(task)
    if trace:
        with open(trace, "a") as fh:
            fh.write(f"bounds\t{task.name}\n")
    if b is None:
        return None
    os.makedirs(cache, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump({"identity": ident, "events": b.events, "min_timestamp": b.min_timestamp,
                   "max_timestamp": b.max_timestamp}, fh)
    os.replace(tmp, path)
    return b

"""The reads a plan needs, each bounded by what was asked: a file's head, and one streaming pass
over the transactions of one file. Memory stays flat in the file's size (no per-transaction list
is kept: callers fold what they need as transactions go by).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Generator

from ..codecs.gtid import decode_previous_gtids
from ..codecs.header import LEN_HEADER
from ..constants import EventFlag, EventType as T
from ..errors import BinlogError, KeyRequiredError
from ..flavor import Flavor
from ..reading.format import Format
from ..reading.source import Input
from ..transactions import GTID_TYPES, Grouper, Transaction

_HEAD_BODIES = frozenset({T.GTID_LIST_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT})
_HEAD_EVENTS = 16  # the Gtid_list / Previous_gtids sit right after the Format_description


@dataclass(frozen=True)
class Head:
    """What a file's first events say: enough to place it in time and in GTIDs."""
    path: str
    relay: bool
    flavor: Flavor | None
    server_version: str | None
    first_timestamp: int | None     # the Format_description's time: when the file was begun
    gtid_list: tuple[str, ...] | None
    previous_gtids: tuple[dict, ...] | None  # MySQL: the decoded Previous_gtids
    problem: str | None = None


def _body(data: bytes, fmt: Format) -> bytes:
    """An event's body: its bytes after the common header (as long as ``fmt`` says), before the
    checksum."""
    return data[max(LEN_HEADER, fmt.header_length):len(data) - fmt.len_checksum]


def read_head(inp: Input) -> Head:
    path = inp.name
    relay = False
    fmt: Format | None = None
    first_ts: int | None = None
    gtid_list: tuple[str, ...] | None = None
    previous: tuple[dict, ...] | None = None
    fdes = 0
    try:
        for n, f in enumerate(inp.frames(want=_HEAD_BODIES, verify=False)):
            code, data = f.type_code, f.data
            if first_ts is None and f.timestamp:
                first_ts = f.timestamp
            if code == T.FORMAT_DESCRIPTION_EVENT:
                fdes += 1
                relay = relay or bool(f.flags & EventFlag.RELAY_LOG) or fdes == 2
                fmt = f.format
                continue
            body = _body(data, fmt) if data is not None and fmt else None
            if code == T.GTID_LIST_EVENT and body is not None:
                k = int.from_bytes(body[:4], "little") & 0x0FFFFFFF
                gtid_list = tuple(
                    f"{int.from_bytes(body[4 + 16 * i:8 + 16 * i], 'little')}-"
                    f"{int.from_bytes(body[8 + 16 * i:12 + 16 * i], 'little')}-"
                    f"{int.from_bytes(body[12 + 16 * i:20 + 16 * i], 'little')}" for i in range(k))
            elif code == T.PREVIOUS_GTIDS_LOG_EVENT and body is not None:
                try:
                    previous = tuple(decode_previous_gtids(body))
                except ValueError:
                    previous = None
            if code in GTID_TYPES or gtid_list is not None or previous is not None or n >= _HEAD_EVENTS:
                break
    except KeyRequiredError as exc:  # an encrypted file without its key: the caller's usage error, not damage
        raise exc.with_context(file=path)
    except BinlogError as exc:
        return Head(path, relay, fmt.flavor if fmt else None, fmt.server_version if fmt else None, first_ts,
                    gtid_list, previous, f"{type(exc).__name__} at offset {exc.offset}: {exc.message}")
    return Head(path, relay, fmt.flavor if fmt else None, fmt.server_version if fmt else None, first_ts,
                gtid_list, previous)


class Heads:
    """Heads of a series' files, read only when asked (a bisection reads O(log n) of them)."""

    def __init__(self, inputs: list[Input]) -> None:
        self.inputs = inputs
        self._cache: dict[int, Head] = {}

    def __getitem__(self, i: int) -> Head:
        h = self._cache.get(i)
        if h is None:
            h = self._cache[i] = read_head(self.inputs[i])
        return h

    def last_true(self, pred: Callable[[Head], bool]) -> int:
        """The last index i with pred(head i), for a predicate true on a prefix; -1 if none."""
        lo, hi = 0, len(self.inputs)  # pred true below lo, false from hi on
        while lo < hi:
            mid = (lo + hi) // 2
            if pred(self[mid]):
                lo = mid + 1
            else:
                hi = mid
        return lo - 1


@dataclass
class TimedTransaction(Transaction):
    """A transaction with its earliest and latest event time: a server stamps events with their
    statement's start, so a transaction's events need not be in time order."""

    min_timestamp: int = 0
    max_timestamp: int = 0

    def __post_init__(self) -> None:  # its first event, the one it is made on, is accounted next
        self.min_timestamp = self.max_timestamp = self.first_timestamp


class _TimedGrouper(Grouper):
    """The transactions' grouping, with each one's ``min_timestamp`` / ``max_timestamp``."""

    transaction_type = TimedTransaction

    def _account(self, end: int, ts: int, size: int, src_end: int, path: str) -> None:
        super()._account(end, ts, size, src_end, path)
        t = self.cur
        assert isinstance(t, TimedTransaction), "the timed grouper makes only timed transactions"
        if ts < t.min_timestamp:
            t.min_timestamp = ts
        elif ts > t.max_timestamp:
            t.max_timestamp = ts


def _timed(t: Transaction) -> TimedTransaction:
    assert isinstance(t, TimedTransaction), "the timed grouper makes only timed transactions"
    return t


def transactions(inp: Input) -> Generator[TimedTransaction, None, None]:
    """The transactions of one input (read unverified), streamed (a damaged file raises its
    BinlogError after the transactions before the damage; the one open there comes first,
    incomplete)."""
    g = _TimedGrouper(relay=False)
    try:
        for t in g.feed(inp.with_options(verify=False)):
            info = g.files[-1]
            info.gtids.clear()          # the grouper keeps these for `binlogkit gtids`;
            info.gtid_offsets.clear()   # a plan folds as it goes
            info.incomplete.clear()
            yield _timed(t)
    except BinlogError:
        yield from map(_timed, g.finish())
        raise
    yield from map(_timed, g.finish())


def last_group(inp: Input) -> list[tuple[int, str]]:
    """The transactions a MariaDB server committed last in this file as one group: (offset, GTID)
    of each, in file order — those whose GTID events carry the last GTID event's commit id, or the
    last transaction alone when it has none. One pass over the file's headers (GTID event bodies
    only); damage ends the pass quietly (the plan's other reads report it)."""
    from construct import ConstructError

    from ..codecs.fast import Irregular, mariadb_gtid
    from ..codecs.gtid import MariadbGtidBody

    group: list[tuple[int, str]] = []
    last_cid: int | None = None
    try:
        for f in inp.frames(want=frozenset({T.GTID_EVENT}), verify=False):
            if f.type_code != T.GTID_EVENT or f.data is None or f.format is None:
                continue
            body = _body(f.data, f.format)
            try:
                g = mariadb_gtid(body)
            except Irregular:  # an XA transaction's GTID (its PREPARE's or its COMMIT's): the full codec
                try:
                    g = MariadbGtidBody.parse(body)
                except ConstructError:  # not a GTID event's body: a group of its own
                    group, last_cid = [], None
                    continue
            text = f"{g.domain_id}-{f.server_id}-{g.seq_no}"
            if g.commit_id is not None and g.commit_id == last_cid:
                group.append((f.offset, text))
            else:
                group = [(f.offset, text)]
            last_cid = g.commit_id
    except KeyRequiredError as exc:
        raise exc.with_context(file=inp.name)
    except BinlogError:
        pass
    return group


def rotation_group(files: list[Input], name: str, position: int) -> tuple[str, list[tuple[int, str]]]:
    """The file before the one named ``name`` among ``files`` (in binlog order) and its
    ``last_group``, when ``position`` comes before every transaction of that file (its start,
    right after a rotation); else ``("", [])``. A MariaDB snapshot at such a point can lack that group while
    its coordinates say it holds it (see ``pitr.plan``)."""
    import contextlib

    from ..reading.names import strip_compressed

    names = [strip_compressed(os.path.basename(i.name)) for i in files]
    want = strip_compressed(os.path.basename(name))
    k = names.index(want) if want in names else 0
    if k == 0:      # not in the archive, or its first file: no file before it here
        return "", []
    with contextlib.closing(transactions(files[k])) as ts:
        try:
            for t in ts:
                if t.start_offset < position:
                    return "", []
                break
        except BinlogError:
            return "", []
    return files[k - 1].name, last_group(files[k - 1])


def event_boundary(inp: Input, position: int) -> tuple[bool, int]:
    """(whether an event starts at ``position`` or it is the end of the last whole event,
    the end of the last whole event). One header walk; a damaged tail ends it quietly."""
    end = 4
    hit = position == 4
    try:
        for f in inp.frames(verify=False):
            if f.offset == position:
                hit = True
            end = f.end_offset
            if f.offset > position and not hit:
                break
    except KeyRequiredError as exc:
        raise exc.with_context(file=inp.name)
    except BinlogError as exc:
        if exc.offset is None or exc.offset < position:  # not a binlog, or damaged before the position
            return False, end
    return hit or position == end, end


def size_of(path: str) -> int:
    from ..reading.files import input_size  # local files and object-storage URLs alike

    return input_size(path)

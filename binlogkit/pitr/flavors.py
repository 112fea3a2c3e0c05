"""What differs between MariaDB and MySQL for a point-in-time replay, declared once.

* **GTID state.** MariaDB's is a *position*: per replication domain, the last GTID applied
  (``0-1-42`` means everything of domain 0 up to seq_no 42); MySQL's is a *set* of GTIDs
  (``uuid:1-42``). Each flavor gives: parse a user's text, the state a file's head declares
  (Gtid_list / Previous_gtids), whether a state already holds a GTID, the state after one more.
* **The replay tools.** The server's own binlog reader and client (``mariadb-binlog | mariadb``,
  ``mysqlbinlog | mysql``).

Plans only call these; no ``if flavor ==`` elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from ..audit import intervals as iv
from ..flavor import Flavor
from ..gtid import GtidPos, MariadbGtid, MysqlGtidSet

if TYPE_CHECKING:
    from .walk import Head

S = TypeVar("S")  # a flavor's GTID state


@dataclass(frozen=True)
class Replay(Generic[S]):
    name: str
    binlog_tool: str
    client: str
    parse: Callable[[str], S]                    # user text -> state
    of_head: Callable[[Head], S]                 # Head -> the state before the file's first transaction
    holds: Callable[[S, str], bool]              # state, GTID text -> already in it?
    add: Callable[[S, str], S]                   # state, GTID text -> state after it (may mutate)
    includes: Callable[[S, S], bool]             # a, b -> b is within a
    text: Callable[[S], str]                     # state -> canonical text
    copy: Callable[[S], S]
    beyond: Callable[[S, S], bool]               # a, b -> a is past b in a stream b names
    stream: Callable[[str], str]                 # GTID text -> its stream (MariaDB domain, MySQL uuid[:tag])
    streams: Callable[[S], set[str]]             # the streams a state names
    gap: Callable[[S, str], str | None]          # state, the next GTID of its stream -> what is missing between
    sets: bool                                   # a state is a set: holes above the backup are losses


# --- MariaDB: a position, per domain ---------------------------------------------------------------

MariadbState = dict[int, MariadbGtid]  # domain -> the last GTID applied


def _m_head(head: Head) -> MariadbState:
    return {g.domain_id: g for g in GtidPos.from_gtid_list(head.gtid_list or ())}


def _m_holds(state: MariadbState, gtid: str) -> bool:
    d, _s, n = gtid.split("-")  # binlog GTIDs are well formed; a user's went through parse
    cur = state.get(int(d))
    return cur is not None and cur.seq_no >= int(n)


def _m_add(state: MariadbState, gtid: str) -> MariadbState:
    g = MariadbGtid.parse(gtid)
    cur = state.get(g.domain_id)
    if cur is None or g.seq_no > cur.seq_no:
        state[g.domain_id] = g
    return state


def _m_gap(state: MariadbState, gtid: str) -> str | None:
    g = MariadbGtid.parse(gtid)
    cur = state.get(g.domain_id)
    if cur is not None and g.seq_no > cur.seq_no + 1:
        return (f"domain {g.domain_id}: seq_no {cur.seq_no + 1}..{g.seq_no - 1} missing between the backup "
                f"({cur}) and the archive's next transaction ({g})")
    return None


def _m_includes(a: MariadbState, b: MariadbState) -> bool:
    return all(d in a and a[d].seq_no >= g.seq_no for d, g in b.items())


MARIADB: Replay[MariadbState] = Replay(
    "MariaDB", "mariadb-binlog", "mariadb",
    parse=lambda text: {g.domain_id: g for g in GtidPos.parse(text)},
    of_head=_m_head, holds=_m_holds, add=_m_add, includes=_m_includes,
    text=lambda s: str(GtidPos(s.values())), copy=dict,
    beyond=lambda a, b: any(d in a and a[d].seq_no > g.seq_no for d, g in b.items()),
    stream=lambda gtid: gtid.split("-", 1)[0], streams=lambda s: {str(d) for d in s}, gap=_m_gap, sets=False)


# --- MySQL: a set ---------------------------------------------------------------------------------

def _s_parse(text: str) -> iv.IntervalSet:
    return _from_set(MysqlGtidSet.parse(text))


def _from_set(s: MysqlGtidSet) -> iv.IntervalSet:
    return {(f"{u}:{t}" if t else u): [list(x) for x in ivs] for (u, t), ivs in s.intervals().items()}


def _s_head(head: Head) -> iv.IntervalSet:
    return _from_set(MysqlGtidSet.from_previous_gtids(list(head.previous_gtids))) if head.previous_gtids else {}


def _s_holds(state: iv.IntervalSet, gtid: str) -> bool:
    key, n = iv.split_gtid(gtid)
    return iv.contains(state, key, n)


def _s_add(state: iv.IntervalSet, gtid: str) -> iv.IntervalSet:
    key, n = iv.split_gtid(gtid)
    iv.add_into(state, {key: [[n, n]]})
    return state


def _s_gap(state: iv.IntervalSet, gtid: str) -> str | None:
    key, n = iv.split_gtid(gtid)
    ivs = state.get(key)
    if ivs and n > ivs[-1][1] + 1:
        return f"{key}:{ivs[-1][1] + 1}-{n - 1} missing between the backup and the archive's next transaction"
    return None


def _s_text(state: iv.IntervalSet) -> str:
    return str(MysqlGtidSet(iv.mysql_mapping(state)))


MYSQL: Replay[iv.IntervalSet] = Replay(
    "MySQL", "mysqlbinlog", "mysql",
    parse=_s_parse, of_head=_s_head, holds=_s_holds, add=_s_add,
    includes=lambda a, b: not iv.subtract(b, a), text=_s_text,
    copy=lambda s: {k: [list(x) for x in v] for k, v in s.items()},
    beyond=lambda a, b: any(a.get(k) and a[k][-1][1] > ivs[-1][1] for k, ivs in b.items() if ivs),
    stream=lambda gtid: iv.split_gtid(gtid)[0], streams=lambda s: set(s), gap=_s_gap, sets=True)


# the flavor is known at run time: a plan holds its states as Any
REPLAY: dict[Flavor, Replay[Any]] = {Flavor.MARIADB: MARIADB, Flavor.MYSQL: MYSQL}

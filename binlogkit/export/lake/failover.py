"""A follower pointed at a new primary (a failover to a GTID replica) continues by GTID state.

The new primary's binlogs are another series (other file names, or the same names holding other
bytes): a file and position of the old one mean nothing there. So the follower asks the new
primary for what comes after the mirror's executed GTID state (pull's ``--gtid``: MySQL the GTID
set, MariaDB the position) into a folder of that server's own (``pull_dir_for``), reads that
folder from its first file, skips every transaction the state holds, and from then on a table
skips what its own last commit's GTID state holds (``GtidFloor``) instead of comparing
positions, which two series cannot order.

Before pull starts, ``check_primary`` compares the mirror's state with the new primary's
(``probe``): transactions the mirror holds that the new primary lacks (the promoted replica was
behind) and transactions the mirror lacks that the primary purged stop the follower, named.
Pure but for ``probe`` and ``previous_source``.
"""

from __future__ import annotations

import json
import os

from ...errors import UsageError
from ...gtid import MariadbGtid, MysqlGtid, MysqlGtidSet
from .state import PROP, flavor_of, mariadb_pos

SOURCE = "source"      # the checkpoint's key: the server_id of the primary it was written from
BY_GTID = "by_gtid"    # the checkpoint's key: the tables' positions span series; compare by GTID


def pull_dir_for(warehouse: str, server_id: int) -> str:
    """Pull's folder for the primary ``server_id`` after a failover: one per server."""
    from .handover import BUFFER

    return os.path.join(warehouse, f"{BUFFER}.server-{server_id}")


def previous_source(ck: dict | None, folder: str | None) -> int | None:
    """The server_id the warehouse was followed from: the checkpoint's, else the one pull's
    folder ``folder`` records (a checkpoint written before it was kept), else None."""
    if ck and isinstance(ck.get(SOURCE), int):
        return ck[SOURCE]
    if folder:
        from .handover import PULL_STATE

        try:
            with open(os.path.join(folder, PULL_STATE), encoding="utf-8") as fh:
                sid = json.load(fh).get("primary_server_id")
        except (OSError, ValueError, AttributeError):
            return None
        return sid if isinstance(sid, int) else None
    return None


class At(tuple):
    """An order key (``props.order_key``) that knows its transaction's GTID."""

    gtid: str | None = None


def at(key: tuple, gtid: str | None) -> At:
    a = At(key)
    a.gtid = gtid
    return a


class GtidFloor:
    """What a table holds, as its last commit's GTID state, in the place of its recorded
    position: a transaction (an ``At``) is at or before it when its GTID is in the state."""

    def __init__(self, state: str) -> None:
        self.state = state
        self.flavor = flavor_of(state)
        self.set = MysqlGtidSet.parse(state) if self.flavor == "mysql" else None
        self.pos = mariadb_pos(state) if self.flavor == "mariadb" else {}
        self._last: tuple[str | None, bool] = (None, False)

    def holds_gtid(self, gtid: str | None) -> bool:
        if not gtid:
            return False
        if gtid == self._last[0]:
            return self._last[1]
        if self.flavor == "mariadb":
            try:
                g = MariadbGtid.parse(gtid)
            except ValueError:
                r = False
            else:
                r = g.domain_id in self.pos and g.seq_no <= self.pos[g.domain_id]
        else:
            r = self.set is not None and flavor_of(gtid) == "mysql" and MysqlGtid.parse(gtid) in self.set
        self._last = (gtid, r)
        return r

    def _holds(self, other) -> bool:
        return self.holds_gtid(getattr(other, "gtid", None))

    # ``pos <= floor`` (held) and ``pos > floor`` (to apply), reflected from the tuple's side
    def __ge__(self, other) -> bool:
        return self._holds(other)

    def __gt__(self, other) -> bool:
        return self._holds(other)

    def __lt__(self, other) -> bool:
        return not self._holds(other)

    def __le__(self, other) -> bool:
        return not self._holds(other)

    def __repr__(self) -> str:
        return f"GtidFloor({self.state!r})"


def floor_of(props: dict | None, fallback: str) -> GtidFloor | None:
    """A table's ``GtidFloor`` from its last commit's properties (None: no commit yet); a
    commit that recorded no state (an older binlogkit's) stands at ``fallback``, the
    checkpoint's state."""
    if not props or not props.get("binlogkit.file"):
        return None
    return GtidFloor(props.get(PROP) or fallback)


def mirror_state(ck_state: str, table_states: list[str]) -> str:
    """Everything the warehouse holds: the checkpoint's state joined with each table's last
    commit's (a follower killed between two tables' commits leaves some past the checkpoint)."""
    states = [s for s in [ck_state, *table_states] if s and s.strip()]
    if flavor_of(ck_state) == "mysql":
        out = MysqlGtidSet()
        for s in states:
            if flavor_of(s) == "mysql":
                out = out | MysqlGtidSet.parse(s)
        return str(out)
    best: dict[int, MariadbGtid] = {}
    for s in states:
        if flavor_of(s) != "mariadb":
            continue
        for part in s.split(","):
            g = MariadbGtid.parse(part.strip())
            if g.domain_id not in best or g.seq_no > best[g.domain_id].seq_no:
                best[g.domain_id] = g
    return ",".join(str(best[d]) for d in sorted(best))


def check_primary(held: str, primary: dict) -> dict | None:
    """The reason the new primary cannot continue the mirror holding ``held`` (its executed
    state), as a gap (``kind``, ``detail``, ``gtids``), or None. ``primary``: ``probe``'s.
    MySQL: ``errant_on_mirror`` for GTIDs of ``held`` not in the primary's ``gtid_executed``;
    ``purged_on_primary`` for GTIDs the primary purged (``gtid_purged``) that ``held`` lacks.
    MariaDB: ``errant_on_mirror`` when the last GTID the mirror holds of a domain is not in
    the primary's binlog state (its server's sequence there is lower, or the server absent)."""
    if primary["flavor"] == "mysql":
        if flavor_of(held) != "mysql":
            raise UsageError(f"the mirror's GTID state {held} is MariaDB's; {primary['where']} is a MySQL server")
        have = MysqlGtidSet.parse(held)
        errant = have - MysqlGtidSet.parse(primary["executed"])
        if errant:
            return {"kind": "errant_on_mirror", "gtids": str(errant),
                    "detail": f"the mirror holds {errant}, which {primary['where']} has not executed: it is behind "
                              f"the mirror (a replica promoted before it had them all?)"}
        purged = MysqlGtidSet.parse(primary["purged"]) - have
        if purged:
            return {"kind": "purged_on_primary", "gtids": str(purged),
                    "detail": f"{primary['where']} purged {purged}, which the mirror lacks"}
        return None
    if flavor_of(held) != "mariadb":
        raise UsageError(f"the mirror's GTID state {held} is MySQL's; {primary['where']} is a MariaDB server")
    state = {}
    for part in (primary["executed"] or "").split(","):
        if part.strip():
            g = MariadbGtid.parse(part.strip())
            state[(g.domain_id, g.server_id)] = g.seq_no
    lacks: list[str] = []
    for part in held.split(","):
        g = MariadbGtid.parse(part.strip())
        n = state.get((g.domain_id, g.server_id))
        if n is None or n < g.seq_no:
            # the sequence numbers of that server's GTIDs in the domain past what the primary holds
            lacks.append(f"{g.domain_id}-{g.server_id}-{1 if n is None else n + 1}..{g}")
    if lacks:
        return {"kind": "errant_on_mirror", "gtids": ",".join(lacks),
                "detail": f"the mirror holds {', '.join(lacks)}, which {primary['where']}'s binlog lacks: it is "
                          f"behind the mirror (a replica promoted before it had them all?)"}
    return None


def probe(host: str, port: int, user: str, password: str) -> dict:
    """The primary's server_id, flavor and GTID state (MySQL ``gtid_executed`` and
    ``gtid_purged``; MariaDB ``gtid_binlog_state``), through pull's client."""
    from ...pull.conn import Connection

    conn = Connection(host, port, user, password)
    try:
        sid = int(conn.value("SELECT @@server_id"))
        flavor = conn.flavor.value.lower()
        if flavor == "mysql":
            row = conn.query("SELECT @@GLOBAL.gtid_executed, @@GLOBAL.gtid_purged")[0]
            executed, purged = (_text(v) for v in row)
        else:
            executed, purged = _text(conn.value("SELECT @@GLOBAL.gtid_binlog_state")), ""
        return {"server_id": sid, "flavor": flavor, "executed": "".join(executed.split()),
                "purged": "".join(purged.split()), "where": f"{host}:{port} (server_id {sid})"}
    finally:
        conn.close()


def _text(v) -> str:
    if v is None:
        return ""
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)


def held_by(sink, ck: dict) -> str:
    """``mirror_state`` of the warehouse ``sink`` whose checkpoint is ``ck``."""
    states = [(sink.recorded(db, n) or {}).get(PROP, "") for db, n in sink.table_names()]
    return mirror_state(ck.get("gtid_state") or "", states)

"""The executed GTID state a commit records (``binlogkit.gtid_state``), and the GTID sets and
positions ``as_of`` compares it with (pure: no I/O).

MySQL: the GTID set executed once the batch is applied (the first file's Previous_gtids plus
every GTID of the archive up to the batch's end), ``uuid:1-20,uuid2:1-4``; MariaDB: the
position, the last GTID of each domain, ``0-1-20,1-2-7``. ``Tracker`` keeps it while the
archive is walked: it is told every committed transaction (those of tables not exported too)
and asked for the state at a batch's end.
"""

from __future__ import annotations

import re

from ...errors import UsageError
from ...gtid import MariadbGtid, MysqlGtid, MysqlGtidSet

PROP = "binlogkit.gtid_state"
_MARIADB = re.compile(r"^\s*\d+-\d+-\d+(\s*,\s*\d+-\d+-\d+)*\s*$")
_ONE_MYSQL = re.compile(r"^\s*([0-9a-fA-F-]{32,36})(:[A-Za-z_][A-Za-z0-9_]*)?:(\d+)\s*$")


def flavor_of(text: str) -> str:
    """``mariadb`` for a position ``D-S-N,...``, else ``mysql`` (a GTID set)."""
    return "mariadb" if _MARIADB.match(text) else "mysql"


def mariadb_pos(text: str) -> dict[int, int]:
    """domain -> highest sequence number of a MariaDB position (a GTID list may name several
    servers of a domain: the highest wins)."""
    out: dict[int, int] = {}
    for part in text.split(","):
        if part.strip():
            g = MariadbGtid.parse(part.strip())
            out[g.domain_id] = max(out.get(g.domain_id, -1), g.seq_no)
    return out


class Query:
    """What ``as_of(gtid=...)`` was given: a MySQL GTID set (a single ``uuid:N`` stands for
    ``uuid:1-N``: everything of that server up to N) or a MariaDB position / GTID (``D-S-N,...``:
    per domain, every sequence number up to N). ``UsageError`` for text that is neither."""

    def __init__(self, text: str) -> None:
        from ...errors import BinlogError

        self.text = text.strip()
        if not self.text:
            raise UsageError("an empty GTID set / position")
        self.flavor = flavor_of(self.text)
        try:
            if self.flavor == "mariadb":
                self.pos = mariadb_pos(self.text)
            else:
                one = _ONE_MYSQL.match(self.text)
                if one:
                    self.set = MysqlGtidSet.parse(f"{one.group(1)}{one.group(2) or ''}:1-{one.group(3)}")
                else:
                    self.set = MysqlGtidSet.parse(self.text)
        except (BinlogError, ValueError) as exc:
            raise UsageError(f"{text!r}: neither a MySQL GTID set (uuid:1-5,...) nor a MariaDB GTID position "
                             f"(D-S-N,...): {exc}") from None

    def holds_state(self, state: str) -> bool:
        """Whether the executed state ``state`` (of the query's flavor) is contained in it."""
        if not state.strip():
            return False
        if self.flavor == "mariadb":
            if flavor_of(state) != "mariadb":
                raise UsageError(f"{self.text}: a MariaDB position, but the table's commits record MySQL GTID sets")
            return all(d in self.pos and n <= self.pos[d] for d, n in mariadb_pos(state).items())
        if flavor_of(state) == "mariadb":
            raise UsageError(f"{self.text}: a MySQL GTID set, but the table's commits record MariaDB positions")
        return MysqlGtidSet.parse(state) <= self.set

    def holds_gtid(self, gtid: str) -> bool:
        """Old commits (no recorded state): whether the batch's last GTID is in it."""
        if not gtid:
            return False
        if self.flavor == "mariadb":
            if flavor_of(gtid) != "mariadb":
                return False
            g = MariadbGtid.parse(gtid)
            return g.domain_id in self.pos and g.seq_no <= self.pos[g.domain_id]
        if flavor_of(gtid) == "mariadb":
            return False
        return MysqlGtid.parse(gtid) in self.set


class Tracker:
    """The executed GTID state along a walk: ``start`` (the first file's Previous_gtids as a
    set, its Gtid_list as a position, or a recorded state), then every committed transaction
    told to ``note`` in binlog order; ``at(pos)`` the state once every transaction ending at or
    before ``pos`` (an order key) is applied; ``advance(pos)`` folds those in for good (the
    walk's batches end in order)."""

    def __init__(self, flavor: str | None, start: str = "") -> None:
        self.flavor = flavor
        self.mysql = MysqlGtidSet.parse(start) if flavor == "mysql" and start else MysqlGtidSet()
        self.maria: dict[int, MariadbGtid] = {}
        if flavor == "mariadb" and start:
            for part in start.split(","):
                if part.strip():
                    g = MariadbGtid.parse(part.strip())
                    if g.domain_id not in self.maria or g.seq_no > self.maria[g.domain_id].seq_no:
                        self.maria[g.domain_id] = g
        self.pending: list[tuple[tuple, str]] = []

    @classmethod
    def from_head(cls, head) -> "Tracker":
        """From ``pitr.walk.read_head`` of the archive's first file."""
        if head.previous_gtids is not None:
            return cls("mysql", str(MysqlGtidSet.from_previous_gtids(list(head.previous_gtids))))
        if head.gtid_list is not None:
            return cls("mariadb", ",".join(head.gtid_list))
        flavor = getattr(head.flavor, "value", head.flavor)
        return cls(str(flavor).lower() if flavor else None)

    def note(self, pos: tuple, gtid: str | None) -> None:
        if gtid:
            self.pending.append((pos, gtid))

    def _fold(self, upto: list[str]) -> tuple[MysqlGtidSet, dict[int, MariadbGtid]]:
        mysql, maria = self.mysql, dict(self.maria)
        my = []
        for g in upto:
            if flavor_of(g) == "mariadb":
                m = MariadbGtid.parse(g)
                maria[m.domain_id] = m
            else:
                my.append(MysqlGtid.parse(g))
        if my:
            mysql = mysql | MysqlGtidSet.of(my)
        return mysql, maria

    @staticmethod
    def _text(mysql: MysqlGtidSet, maria: dict[int, MariadbGtid]) -> str:
        parts = [str(mysql)] if mysql else []
        parts += [str(maria[d]) for d in sorted(maria)]
        return ",".join(parts)

    def at(self, pos: tuple) -> str:
        return self._text(*self._fold([g for p, g in self.pending if p <= pos]))

    def advance(self, pos: tuple) -> None:
        done = [g for p, g in self.pending if p <= pos]
        if done:
            self.mysql, self.maria = self._fold(done)
            self.pending = [(p, g) for p, g in self.pending if p > pos]

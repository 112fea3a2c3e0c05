"""MariaDB GTIDs ``domain-server-seq``, GTID positions and the strict-mode ordering rule.

A **position** holds at most one GTID per replication domain — the last one applied there —
as ``gtid_slave_pos`` / ``gtid_binlog_pos`` print it: ``0-1-100,1-2-7`` (whitespace allowed).
The canonical text sorts by domain. Gtid_list events carry such a list (possibly with one
entry per domain *and server*, which ``GtidPos`` keeps as the highest seq_no per domain only
when asked through ``from_gtid_list(..., per_server=False)``).

Strict mode (gtid_strict_mode=ON) requires seq_no to increase within a domain; a GTID whose
seq_no is not greater than the last one of its domain is out of order — how duplicates arriving
over several connections show up when gtid_ignore_duplicates is OFF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..errors import GtidError

_GTID = re.compile(r"^(\d+)-(\d+)-(\d+)$")
U32, U64 = (1 << 32) - 1, (1 << 64) - 1


@dataclass(frozen=True, order=True)
class MariadbGtid:
    domain_id: int
    server_id: int
    seq_no: int

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"

    @classmethod
    def parse(cls, text: str) -> "MariadbGtid":
        m = _GTID.match(text.strip())
        if not m:
            raise GtidError("a MariaDB GTID is domain-server-seq", part=text)
        if any(len(x) > 20 for x in m.groups()):   # past U64 anyway (and int() refuses 4,300 digits)
            raise GtidError("GTID component out of range", part=text[:80])
        d, s, n = (int(x) for x in m.groups())
        if d > U32 or s > U32 or n > U64:
            raise GtidError("GTID component out of range", part=text)
        return cls(d, s, n)


class GtidPos:
    """Immutable GTID position: {domain_id: MariadbGtid}."""

    __slots__ = ("_m",)

    def __init__(self, gtids: Iterable[MariadbGtid] = ()) -> None:
        m: dict[int, MariadbGtid] = {}
        for g in gtids:
            if g.domain_id in m:
                raise GtidError("two GTIDs for one domain in a position", part=f"{m[g.domain_id]},{g}")
            m[g.domain_id] = g
        self._m = dict(sorted(m.items()))

    @classmethod
    def parse(cls, text: str) -> "GtidPos":
        parts = [p.strip() for p in text.replace("\n", ",").split(",")]
        return cls(MariadbGtid.parse(p) for p in parts if p)

    @classmethod
    def from_gtid_list(cls, gtids: Iterable[MariadbGtid | str]) -> "GtidPos":
        """Highest seq_no per domain of a Gtid_list (which may list several servers)."""
        best: dict[int, MariadbGtid] = {}
        for g in gtids:
            g = MariadbGtid.parse(g) if isinstance(g, str) else g
            if g.domain_id not in best or g.seq_no > best[g.domain_id].seq_no:
                best[g.domain_id] = g
        return cls(best.values())

    def __str__(self) -> str:
        return ",".join(str(g) for g in self._m.values())

    def __repr__(self) -> str:
        return f"GtidPos({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidPos) and self._m == other._m

    def __hash__(self) -> int:
        return hash(tuple(self._m.items()))

    def __iter__(self):
        return iter(self._m.values())

    def __len__(self) -> int:
        return len(self._m)

    def __getitem__(self, domain_id: int) -> MariadbGtid:
        return self._m[domain_id]

    def get(self, domain_id: int) -> MariadbGtid | None:
        return self._m.get(domain_id)

    def advance(self, gtid: MariadbGtid) -> "GtidPos":
        """The position after applying ``gtid`` (it replaces its domain's entry)."""
        m = dict(self._m)
        m[gtid.domain_id] = gtid
        return GtidPos(m.values())

    def covers(self, gtid: MariadbGtid) -> bool:
        """Whether ``gtid`` is at or before this position in its domain (by seq_no)."""
        cur = self._m.get(gtid.domain_id)
        return cur is not None and cur.seq_no >= gtid.seq_no

    def includes(self, other: "GtidPos") -> bool:
        return all(self.covers(g) for g in other)


def order_violations(gtids: Iterable[MariadbGtid], start: GtidPos | None = None) -> list[tuple[MariadbGtid, MariadbGtid]]:
    """(gtid, the last GTID of its domain before it) for each GTID that strict mode refuses."""
    last = dict((g.domain_id, g) for g in (start or GtidPos()))
    out = []
    for g in gtids:
        prev = last.get(g.domain_id)
        if prev is not None and g.seq_no <= prev.seq_no:
            out.append((g, prev))
        else:
            last[g.domain_id] = g
    return out

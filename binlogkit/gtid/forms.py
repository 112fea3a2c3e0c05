"""The two flavors' GTID texts, registered once: which flavor a text is written in, and what
each flavor does with its texts (parse, split into stream key and number, select, hold, compact).

MySQL writes ``uuid[:tag]:number`` (a set: ``uuid:1-5:7,uuid2:3``), MariaDB ``domain-server-seq``
(a position: ``0-1-100,1-2-7``; a selection may hold ranges ``d-s-a..b``). The one test that
tells them apart is :func:`text_form` (a colon: MySQL); everything else looks the flavor up in
:data:`FORMS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..errors import GtidError
from ..flavor import Flavor
from .mariadb import GtidPos, MariadbGtid
from .mysql import MysqlGtid, MysqlGtidSet

Predicate = Callable[[str], bool]
LEN_UUID = 36


@dataclass(frozen=True)
class GtidForm:
    """How one flavor writes GTIDs as text."""

    flavor: Flavor
    sep: str                                      # between the stream key and the number
    parse: Callable[[str], MysqlGtid | MariadbGtid]
    matcher: Callable[[str], Predicate]           # a selection's text -> predicate on GTID text
    holds: Callable[[str], Predicate]             # a set / position's text -> predicate on GTID text
    compact: Callable[[list[str]], str]           # GTIDs in stream order -> one compact text
    position: Callable[[list[str]], str]          # GTIDs in stream order -> the set / position they reach

    def split(self, gtid: str) -> tuple[str, int]:
        """``"0-1-7"`` -> ``("0-1", 7)``; ``"uuid:7"`` -> ``("uuid", 7)``; ``"uuid:tag:7"`` ->
        ``("uuid:tag", 7)``."""
        key, n = gtid.rsplit(self.sep, 1)
        return key, int(n)

    def join(self, key: str, n: int) -> str:
        return f"{key}{self.sep}{n}"


def text_form(text: str) -> GtidForm:
    """The form a GTID, GTID set or position text is written in (the one place that tells)."""
    return FORMS[Flavor.MYSQL if ":" in text else Flavor.MARIADB]


def key_form(key: str) -> GtidForm:
    """The form of a stream key: a MySQL ``uuid`` / ``uuid:tag``, or a MariaDB ``domain-server``."""
    return FORMS[Flavor.MYSQL if ":" in key or len(key) == LEN_UUID else Flavor.MARIADB]


def by_flavor(gtids: Iterable[str]) -> dict[Flavor, list[str]]:
    """GTID texts grouped by flavor, each group in the given order."""
    out: dict[Flavor, list[str]] = {}
    for g in gtids:
        out.setdefault(text_form(g).flavor, []).append(g)
    return out


def _own(flavor: Flavor, pred: Predicate) -> Predicate:
    """``pred`` for GTIDs of ``flavor``; False for the other flavor's."""
    return lambda g: text_form(g).flavor is flavor and pred(g)


def _mysql_set(text: str) -> Predicate:
    s = MysqlGtidSet.parse(text)
    return _own(Flavor.MYSQL, lambda g: g in s)


def _mariadb_ranges(text: str) -> Predicate:
    """MariaDB GTIDs ``d-s-n`` and ranges ``d-s-a..b``, comma-separated."""
    ranges = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if ".." in part:
            head, hi = part.split("..", 1)
            lo = MariadbGtid.parse(head)
            if not hi.isdigit():
                raise GtidError("a MariaDB range is domain-server-first..last", part=part)
            ranges.append((lo.domain_id, lo.server_id, lo.seq_no, int(hi)))
        else:
            g = MariadbGtid.parse(part)
            ranges.append((g.domain_id, g.server_id, g.seq_no, g.seq_no))

    def match(g: str) -> bool:
        x = MariadbGtid.parse(g)
        return any(d == x.domain_id and s == x.server_id and lo <= x.seq_no <= hi for d, s, lo, hi in ranges)
    return _own(Flavor.MARIADB, match)


def _mariadb_pos(text: str) -> Predicate:
    pos = GtidPos.parse(text)
    return _own(Flavor.MARIADB, lambda g: pos.covers(MariadbGtid.parse(g)))


def _mysql_compact(gtids: list[str]) -> str:
    return str(MysqlGtidSet.of(MysqlGtid.parse(g) for g in gtids))


def _mariadb_compact(gtids: list[str]) -> str:
    """Runs ``d-s-a..b`` in stream order."""
    runs: list[list[int]] = []
    for g in gtids:
        d, s, n = (int(x) for x in g.split("-"))
        if runs and runs[-1][0] == d and runs[-1][1] == s and runs[-1][3] + 1 == n:
            runs[-1][3] = n
        else:
            runs.append([d, s, n, n])
    return ",".join(f"{d}-{s}-{a}" + (f"..{b}" if b > a else "") for d, s, a, b in runs)


def _mysql_position(gtids: list[str]) -> str:
    return str(MysqlGtidSet.of(MysqlGtid.parse(g) for g in gtids))


def _mariadb_position(gtids: list[str]) -> str:
    """The last GTID of each domain, in stream order."""
    last: dict[int, MariadbGtid] = {}
    for g in gtids:
        x = MariadbGtid.parse(g)
        last[x.domain_id] = x
    return str(GtidPos(last.values()))


# MySQL first: where one text must stand for GTIDs of both, MySQL's set is the one shown
FORMS: dict[Flavor, GtidForm] = {
    Flavor.MYSQL: GtidForm(Flavor.MYSQL, ":", MysqlGtid.parse, _mysql_set, _mysql_set, _mysql_compact,
                           _mysql_position),
    Flavor.MARIADB: GtidForm(Flavor.MARIADB, "-", MariadbGtid.parse, _mariadb_ranges, _mariadb_pos,
                             _mariadb_compact, _mariadb_position),
}


def parse_gtid(text: str) -> MysqlGtid | MariadbGtid:
    """A GTID of either flavor from its text."""
    return text_form(text).parse(text)

"""GTID values of both flavors: immutable, ``str()`` parses back to an equal value.

Interval convention (the one place it is written down): intervals are **closed**,
``(start, end)`` with ``start <= end``, exactly as the text ``uuid:1-5`` reads; the binary
Previous_gtids form stores end exclusive and is converted on the way in.
"""

from typing import Iterable

from ..flavor import Flavor
from .forms import FORMS, GtidForm, by_flavor, key_form, parse_gtid, text_form
from .mariadb import GtidPos, MariadbGtid, order_violations
from .mysql import MysqlGtid, MysqlGtidSet

__all__ = ["FORMS", "GtidForm", "GtidPos", "MariadbGtid", "MysqlGtid", "MysqlGtidSet", "by_flavor", "key_form",
           "order_violations", "parse_gtid", "ranges_text", "text_form"]


def ranges_text(gtids: Iterable[str]) -> str:
    """A set of GTIDs of either flavor as ranges, in one canonical text whatever their order:
    the MySQL ones as a ``MysqlGtidSet`` (``uuid:1-5:7``), the MariaDB ones sorted into runs
    ``domain-server-first..last`` (what ``decode --include-gtids`` reads), comma-separated;
    "" for none."""
    groups = by_flavor(gtids)
    mysql = [MysqlGtid.parse(g) for g in groups.get(Flavor.MYSQL, [])]
    maria = [MariadbGtid.parse(g) for g in groups.get(Flavor.MARIADB, [])]
    runs: list[list[int]] = []
    for x in sorted(set(maria), key=lambda x: (x.domain_id, x.server_id, x.seq_no)):
        r = runs[-1] if runs else None
        if r is not None and (r[0], r[1]) == (x.domain_id, x.server_id) and r[3] + 1 == x.seq_no:
            r[3] = x.seq_no
        else:
            runs.append([x.domain_id, x.server_id, x.seq_no, x.seq_no])
    parts = [str(MysqlGtidSet.of(mysql))] if mysql else []
    parts += [f"{d}-{s}-{a}" + (f"..{b}" if b > a else "") for d, s, a, b in runs]
    return ",".join(parts)

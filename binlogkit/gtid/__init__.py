"""GTID values of both flavors: immutable, ``str()`` parses back to an equal value.

Interval convention (the one place it is written down): intervals are **closed**,
``(start, end)`` with ``start <= end``, exactly as the text ``uuid:1-5`` reads; the binary
Previous_gtids form stores end exclusive and is converted on the way in.
"""

from typing import Iterable

from .mariadb import GtidPos, MariadbGtid, order_violations
from .mysql import MysqlGtid, MysqlGtidSet

__all__ = ["GtidPos", "MariadbGtid", "MysqlGtid", "MysqlGtidSet", "order_violations", "ranges_text"]


def ranges_text(gtids: Iterable[str]) -> str:
    """A set of GTIDs of either flavor as ranges, in one canonical text whatever their order:
    the MySQL ones as a ``MysqlGtidSet`` (``uuid:1-5:7``), the MariaDB ones sorted into runs
    ``domain-server-first..last`` (what ``decode --include-gtids`` reads), comma-separated;
    "" for none."""
    mysql: list[MysqlGtid] = []
    maria: list[MariadbGtid] = []
    for g in gtids:
        (mysql.append(MysqlGtid.parse(g)) if ":" in g else maria.append(MariadbGtid.parse(g)))
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

"""GTID values of both flavors: immutable, ``str()`` parses back to an equal value.

Interval convention (the one place it is written down): intervals are **closed**,
``(start, end)`` with ``start <= end``, exactly as the text ``uuid:1-5`` reads; the binary
Previous_gtids form stores end exclusive and is converted on the way in.
"""

from .mariadb import GtidPos, MariadbGtid, order_violations
from .mysql import MysqlGtid, MysqlGtidSet

__all__ = ["GtidPos", "MariadbGtid", "MysqlGtid", "MysqlGtidSet", "order_violations"]

"""The backfill of a lakehouse mirror on Spark (``spark/jobs/mirror.py``): what is pure.

Executors walk the archive in partitions (files, ranges of whole transactions); each stops at
its first *barrier*: something the backfill does not apply and leaves to the local run —

- a schema change of a table exported (ALTER TABLE, DROP / CREATE OR REPLACE, RENAME, DROP
  DATABASE of its database), a new table version met without one;
- statement-format DML of a table exported (unless ``skip_statements``: counted), a statement
  naming it that the mirror cannot apply (kind ``statement`` / ``statement it cannot apply``:
  what stops the local mirror's table, exit 1);
- a partial row image (binlog_row_image MINIMAL / NOBLOB) of a keyed table: the local mirror
  fills it from the row it holds;
- an archive gap (``gaps``).

A TRUNCATE TABLE passes (kind ``truncate``): the partition forgets its fold of that table so far
and says so; the driver drops the folds of the partitions before the last one that truncated it.

``cut`` takes the partitions before the first barrier of the archive (and of that one, what is
before its barrier); everything before it is committed with the coordinates of its last
transaction (``end_state``: the GTID state then), so ``binlogkit export --mirror`` (local)
continues from there. The fold per key across partitions keeps, per key, the entry of the last
partition holding it (``winner``): each partition's entries are already its own fold
(``fold.fold``: a delete or a key update's old key an entry without a row).
"""

from __future__ import annotations

from typing import Callable

from ...gtid import MariadbGtid, MysqlGtidSet
from .. import ddl
from ..effects import effects
from .state import Tracker, flavor_of

SCHEMA = "schema change"
STOPS = ("statement", "statement it cannot apply")   # the local mirror's stops: exit 1


def barrier(sql: str, database: str | None, alter_phase: str | None, wanted: Callable[[str, str], bool],
            db_wanted: Callable[[str], bool], skip_statements: bool = False) -> tuple[str, str] | None:
    """(kind, table) of a statement the backfill stops before, ("skipped", table) for
    statement-format DML ignored by ``skip_statements``, ("truncate", table) for a TRUNCATE
    TABLE (the only effect of its statement), or None (it passes: CREATE TABLE, statements of
    tables not exported, MariaDB's START ALTER / ROLLBACK ALTER)."""
    if alter_phase in ("START", "ROLLBACK"):
        return None
    a = ddl.alter(sql, database or None)
    if a is not None and a.db is not None and wanted(a.db, a.table):
        return SCHEMA, f"{a.db}.{a.table}"
    fx = effects(sql, database or None)
    if not fx:
        return None
    for d in fx.databases:
        if db_wanted(d):
            return SCHEMA, f"{d}.*"
    only = not (fx.databases or fx.renames or fx.dml or fx.unknown or fx.mentions or fx.created)
    for db, n in fx.emptied:
        if db is not None and wanted(db, n):
            return ("truncate" if fx.truncate and only and len(fx.emptied) == 1 else SCHEMA), f"{db}.{n}"
    for pair in fx.renames:
        for db, n in pair:
            if db is not None and wanted(db, n):
                return SCHEMA, f"{db}.{n}"
    for db, n in fx.dml:
        if db is not None and wanted(db, n):
            return ("skipped" if skip_statements else "statement"), f"{db}.{n}"
    for db, n in fx.unknown + fx.mentions:
        if db is not None and wanted(db, n):
            return "statement it cannot apply", f"{db}.{n}"
    return None


def cut(results: list[dict]) -> tuple[list[dict], dict | None]:
    """The partitions' results (``spark.backfill.walk_task``, in binlog order) the backfill
    commits, and where it stopped (the first barrier: a partition's own, or a table whose
    version differs from the partitions' before it: that partition is not taken), None when it
    took the whole archive."""
    versions: dict = {}
    out: list[dict] = []
    for r in results:
        for name, t in r["tables"].items():
            if name in versions and versions[name] != t["version"]:
                return out, {"kind": "table version", "table": "{}.{}".format(*name), **t["first_at"]}
        for name, t in r["tables"].items():
            versions[name] = t["version"]
        out.append(r)
        if r["barrier"] is not None:
            return out, r["barrier"]
    return out, None


def absorb(tr: Tracker, text: str) -> None:
    """A partition's GTID state text (its GTIDs: a MySQL set, or MariaDB's last GTID of each
    domain) folded into ``tr`` (partitions in binlog order: a later one's GTID of a domain wins)."""
    if not text.strip():
        return
    if flavor_of(text) == "mariadb":
        for part in text.split(","):
            if part.strip():
                g = MariadbGtid.parse(part.strip())
                tr.maria[g.domain_id] = g
    else:
        tr.mysql = tr.mysql | MysqlGtidSet.parse(text)


def end_state(start: Tracker, taken: list[dict]) -> tuple[dict | None, str]:
    """(the last transaction the backfill applies, as ``walk_task`` gives it: None when none;
    the executed GTID state once it is applied): ``start`` (the archive's head) then the GTIDs
    of the partitions before the one holding it, and of that one up to it."""
    last_i = max((i for i, r in enumerate(taken) if r["last"] is not None), default=None)
    if last_i is None:
        return None, Tracker._text(start.mysql, start.maria)
    for r in taken[:last_i]:
        absorb(start, r["gtids"])
    absorb(start, taken[last_i]["gtids_to_last"])
    return taken[last_i]["last"], Tracker._text(start.mysql, start.maria)


def after_truncate(name, parts: list[tuple[int, dict]], truncated: dict) -> list[tuple[int, dict]]:
    """The partitions' staged folds of table ``name`` that count: those of the last partition
    that truncated it (``truncated``: table -> partitions that did, its fold then holds only what
    came after) and after; all of them when none did."""
    last = max(truncated.get(name, ()), default=None)
    return parts if last is None else [(i, p) for i, p in parts if i >= last]


def winner(a: tuple, b: tuple) -> tuple:
    """Of two entries of one key, ``(partition, file, row, dead)``: the later partition's."""
    return a if a[0] > b[0] else b


def position_text(stop: dict) -> str:
    return f"{stop.get('file')}:{stop.get('offset')} ({stop.get('gtid') or 'no GTID'})"


def stop_line(stop: dict) -> str:
    """The backfill's stop, for people."""
    what = f": {stop['statement']}" if stop.get("statement") else ""
    then = (f"the local run continues the other tables and stops the mirror of {stop['table']} there too"
            if stop["kind"] in STOPS else "the local run applies it and continues")
    return (f"backfill stopped before {position_text(stop)}, {stop['kind']} of {stop['table']}{what} -- every table "
            f"is committed up to there; {then} (binlogkit export ... --mirror without --engine spark)")

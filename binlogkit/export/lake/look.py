"""Looking at a mirror: its commits with their coordinates (``history``) and its rows as of a
GTID set / position or a time (``show``), read by DuckDB with the offline extensions
(``read.duckdb_connection``). What ``binlogkit lake history`` / ``lake show`` print."""

from __future__ import annotations

import os

from ...errors import UsageError
from .names import stored
from .props import PREFIX

FIELDS = ("gtid", "gtid_state", "file", "position", "commit_time", "transactions")


def detect(warehouse: str, db: str, table: str, fmt: str | None = None) -> str:
    """The format of ``db.table`` in a local warehouse: ``fmt`` when given, else Delta when its
    folder has a ``_delta_log``, Iceberg when the warehouse has its SQLite catalog."""
    if fmt:
        return fmt
    if os.path.isdir(os.path.join(warehouse, stored(db), stored(table), "_delta_log")):
        return "delta"
    if os.path.isfile(os.path.join(warehouse, "catalog.sqlite")):
        return "iceberg"
    raise UsageError(f"{warehouse}: no Delta table {db}.{table} ({stored(db)}/{stored(table)}/_delta_log) and no "
                     "Iceberg catalog (catalog.sqlite); give --format and --catalog for another catalog")


def split_name(name: str) -> tuple[str, str]:
    db, dot, table = name.partition(".")
    if not dot or not db or not table:
        raise UsageError(f"{name!r}: give the table as DB.T")
    return db, table


def history(warehouse: str, db: str, table: str, fmt: str | None = None, catalog: str | None = None) -> dict:
    """The commits of ``db.table``, oldest first: the snapshot id / version and the coordinates
    each records (``gtid_state`` empty for commits written before it was recorded)."""
    from .mirror import open_sink

    fmt = detect(warehouse, db, table, fmt)
    sink = open_sink(fmt, warehouse, catalog)
    hist = sink.history(db, table)
    if not hist and (db, table) not in sink.table_names():
        raise UsageError(f"{warehouse}: no {fmt} table {db}.{table}")
    commits = []
    for v, p in hist:
        c: dict = {"snapshot" if fmt == "iceberg" else "version": v}
        c.update({k: p.get(PREFIX + k, "") for k in FIELDS})
        c["recorded"] = bool(p.get(PREFIX + "file"))
        c["state_recorded"] = PREFIX + "gtid_state" in p
        commits.append(c)
    return {"warehouse": warehouse, "table": f"{db}.{table}", "format": fmt, "commits": commits}


def render_history(doc: dict) -> str:
    key = "snapshot" if doc["format"] == "iceberg" else "version"
    lines = [f"{doc['table']} ({doc['format']}): {len(doc['commits'])} commits"]
    for c in doc["commits"]:
        if not c["recorded"]:
            lines.append(f"{c[key]}  (no coordinates: a commit not made by a batch)")
            continue
        state = c["gtid_state"] if c["state_recorded"] else "(state not recorded: an older export)"
        lines.append(f"{c[key]}  {c['commit_time']}  {c['file']}:{c['position']}  gtid {c['gtid'] or '-'}  "
                     f"state {state or '-'}")
    return "\n".join(lines)


def show(warehouse: str, db: str, table: str, *, fmt: str | None = None, catalog: str | None = None,
         gtid: str | None = None, time: str | None = None, limit: int | None = None):
    """(the version read or None for the newest, the DuckDB relation of the rows, sorted by
    the table's first column). ``UsageError`` when the table had no commit then."""
    from .read import as_of, duckdb_connection, metadata_file

    fmt = detect(warehouse, db, table, fmt)
    version = None
    if gtid is not None or time is not None:
        version = as_of(history_pairs(warehouse, db, table, fmt, catalog), gtid=gtid, time=time)
        if version is None:
            raise UsageError(f"{db}.{table} had no commit as of {gtid if gtid is not None else time}")
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    if fmt == "iceberg":
        if catalog:
            raise UsageError("lake show reads Iceberg tables of the warehouse's own SQLite catalog (its metadata "
                             "files); another catalog: read it with its own client")
        try:
            meta = metadata_file(warehouse, db, table)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
        scan = f"iceberg_scan('{_quoted(meta)}'" + (f", snapshot_from_id={int(version)})" if version is not None else ")")
    else:
        path = os.path.join(warehouse, stored(db), stored(table))
        scan = f"delta_scan('{_quoted(path)}'" + (f", version={int(version)})" if version is not None else ")")
    rel = con.sql(f"SELECT * FROM {scan} ORDER BY 1" + (f" LIMIT {int(limit)}" if limit is not None else ""))
    return version, rel


def history_pairs(warehouse: str, db: str, table: str, fmt: str, catalog: str | None) -> list[tuple[int, dict]]:
    from .mirror import open_sink

    return open_sink(fmt, warehouse, catalog).history(db, table)


def _quoted(text: str) -> str:
    return text.replace("'", "''")

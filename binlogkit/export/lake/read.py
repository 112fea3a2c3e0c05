"""Reading the tables back with DuckDB, offline: the ``iceberg`` and ``delta`` extensions
(and ``avro``, which iceberg needs) loaded from their PyPI packages (``duckdb-extension-*``),
never downloaded."""

from __future__ import annotations

import glob
import os

from ..._optional import need
from ...errors import UsageError
from .names import stored


def duckdb_connection():
    """A DuckDB connection with avro, iceberg and delta loaded from the installed packages."""
    duckdb = need("duckdb", "reading lakehouse tables", extra="lake")
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in ("avro", "iceberg", "delta"):
        mod = need(f"duckdb_extension_{name}", "reading lakehouse tables with DuckDB", extra="lake")
        here = os.path.dirname(mod.__file__ or "")
        found = glob.glob(os.path.join(here, "extensions", "*", f"{name}.duckdb_extension"))
        if not found:
            raise UsageError(f"duckdb-extension-{name}: no {name}.duckdb_extension in {here}")
        con.execute(f"LOAD '{found[0]}'")
    return con


def metadata_file(warehouse: str, db: str, table: str, snapshot_gtid: str | None = None) -> str:
    """The newest Iceberg metadata file of a table in a local warehouse (what ``iceberg_scan`` reads)."""
    files = sorted(glob.glob(os.path.join(warehouse, stored(db), stored(table), "metadata", "*.metadata.json")))
    if not files:
        raise FileNotFoundError(f"{warehouse}: no Iceberg table {db}.{table}")
    return files[-1]


def scan(fmt: str, warehouse: str, db: str, table: str) -> str:
    """The DuckDB table function that reads ``db.table`` of a local warehouse."""
    if fmt == "iceberg":
        return f"iceberg_scan('{metadata_file(warehouse, db, table)}')"
    return f"delta_scan('{os.path.join(warehouse, stored(db), stored(table))}')"


def as_of(history: list[tuple[int, dict]], *, gtid: str | None = None, time: str | None = None) -> int | None:
    """The snapshot (Iceberg) or version (Delta) of a table as of a GTID set / position or a
    time (``history``: the sink's, oldest first): the last commit whose executed GTID state is
    contained in ``gtid`` (``state.Query``: a MySQL set, a single ``uuid:N`` meaning
    ``uuid:1-N``; a MariaDB position ``D-S-N,...``), or whose batch commit time is at or
    before ``time`` (ISO 8601, UTC unless it says). Commits written before the state was
    recorded (no ``binlogkit.gtid_state``) are placed by their batch's last GTID instead.
    None: the table had no commit yet then. ``UsageError``: neither a set nor a position, or
    one of the other flavor than the table's commits."""
    import datetime

    from .state import PROP, Query

    q = Query(gtid) if gtid is not None else None
    if q is None:
        if time is None:
            raise UsageError("as of what: a GTID set / position or a time")
        try:
            when = datetime.datetime.fromisoformat(time.strip())
        except ValueError:
            raise UsageError(f"{time!r}: not a time (ISO 8601: 2026-11-27 01:54:03[+00:00])") from None
        when = when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)

    def before(p: dict) -> bool:
        if not p.get("binlogkit.file"):
            return False
        if q is not None:
            if PROP in p:
                return q.holds_state(p[PROP])
            return q.holds_gtid(p.get("binlogkit.gtid") or "")
        at = p.get("binlogkit.commit_time") or ""
        return bool(at) and datetime.datetime.fromisoformat(at) <= when
    found = [v for v, p in history if before(p)]
    return found[-1] if found else None

"""Lakehouse mirrors against real servers (issue 33, proof 1): MariaDB 10.11 (the host's),
MariaDB 11.8 and MySQL 9.7 (the lab's chroots; skipped without them, failed in CI).

A server (binlog_row_image=FULL, binlog_row_metadata=FULL, 1 MB binlogs) gets the type tables
(10.11: the row-types tables, every column family; 11.8 and 9.7: ``fixtures/lab/today.py``'s,
with VECTOR, JSON, GEOMETRY, BIT, fractional temporals, five character sets) and a table that
goes through DDL. The workload: updates of every table, key updates (``id = id + 1000``),
deletes (MySQL: PARTIAL_JSON updates too); then the GTID state is noted and every table read
(the server's own text: the snapshot "as of" that GTID); then ALTER TABLE ADD, RENAME, MODIFY
(BIGINT -> DECIMAL) and DROP COLUMN with changes between them, ADD COLUMN with defaults (a
constant, NOT NULL's implicit 0, none, and the statement's time: a TIMESTAMP(3) and, from a session at
+02:00, a DATETIME and a DATE) that most rows keep, a TRUNCATE TABLE and a DROP TABLE
(from a session whose default database is the table's) each followed by new rows (the second
in a table made again with one more column), more deletes and key updates; then
the server is set to binlog_row_image=MINIMAL (updates, key updates, an insert, a delete; and a
NOBLOB session): the mirrors apply those partial images by key.

The binlogs alone, from the first, become an Iceberg mirror (small batches: many commits), read
back with DuckDB's iceberg extension (offline, from PyPI) and compared value by value with the
server's final tables; DuckDB's ``iceberg_scan(..., snapshot_from_id=)`` of the last snapshot at
or before the noted GTID equals the server's tables at that GTID. The Delta mirror's final state
is compared the same way (read by deltalake). A third mirror starts from a real ``mariadb-dump
--single-transaction --master-data=2 --gtid`` / ``mysqldump --single-transaction --source-data=2``
(its GTID_PURGED line) taken at the noted GTID (``--snapshot DUMP``) and continues with the
archive: it equals the server's final tables too. The three servers together: ~50 s.
"""

from __future__ import annotations

import gzip
import os
import shutil
import time

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from binlogkit.export.lake.read import duckdb_connection, metadata_file
from binlogkit.export.lake.snapshot import covered_by
from fixtures.lab import Lab
from fixtures.lab.clients import dump
from fixtures.lab.build import start_row_types_primary

import export_fold as fold

pytestmark = pytest.mark.server
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

TABLES = ["ints", "nums", "times", "strs", "extra", "charsets", "allcs", "enumsets", "exactnums", "fsp",
          "decimals", "many"]
TODAY = ["nums", "times", "strs", "geo", "docs", "vec", "many"]   # fixtures/lab/today.py's type tables
KINDS = [pytest.param("mariadb-10.11", id="mariadb-10.11"),
         pytest.param("mariadb-11.8", id="mariadb-11.8", marks=pytest.mark.kind("mariadb-11.8")),
         pytest.param("mysql-9.7", id="mysql-9.7", marks=pytest.mark.kind("mysql-9.7"))]
# the dump each flavor's tool writes at a consistent point with its coordinates (CHANGE MASTER /
# CHANGE REPLICATION SOURCE as a comment, and the GTID line: gtid_slave_pos / GTID_PURGED)
DUMP_ARGS = {"mariadb": ("--single-transaction", "--master-data=2", "--gtid"),
             "mysql": ("--single-transaction", "--source-data=2")}


def _workload_1011(lab):
    srv = start_row_types_primary(lab, changes=True, many=600, binlog_row_metadata="FULL", max_binlog_size=1 << 20)
    with srv.connect() as conn, conn.cursor() as cur:
        for t in TABLES[:11]:
            cur.execute(f"UPDATE types.{t} SET id = id + 1000")              # key updates, both images
        cur.execute("DELETE FROM types.many WHERE id % 3 = 0")
        cur.execute("DELETE FROM types.ints WHERE id IN (1003, 1004)")
    return srv, TABLES


def _workload_today(lab):
    from fixtures.lab.today import WORKLOADS, start_types_primary

    srv = start_types_primary(lab, many=600, max_binlog_size=1 << 20)
    w = WORKLOADS[srv.kind.flavor]
    with srv.connect() as conn, conn.cursor() as cur:
        for t in TODAY:
            cur.execute(f"UPDATE types.{t} SET id = id + 1000")              # key updates, both images
        for sql in w.json_session[:1]:                                        # MySQL: PARTIAL_JSON (image FULL)
            cur.execute(sql)
        cur.execute("UPDATE types.docs SET j = JSON_SET(j, '$.n', 999), note = 'partial' WHERE id = 1001")
        cur.execute("UPDATE types.docs SET j = JSON_REPLACE(j, '$[1]', 'two') WHERE id = 1002")
        cur.execute("DELETE FROM types.many WHERE id % 3 = 0")
        cur.execute("DELETE FROM types.strs WHERE id = 1003")
        cur.execute("UPDATE types.times SET d6 = '2024-02-28 01:02:03.000004', t6 = '-12:00:00.5' WHERE id = 1002")
    return srv, TODAY


WORKLOAD = {"mariadb-10.11": _workload_1011, "mariadb-11.8": _workload_today, "mysql-9.7": _workload_today}


def _executed(srv) -> str:
    """The server's own GTID state (MariaDB gtid_binlog_pos, MySQL gtid_executed)."""
    return srv.var(srv.kind.sql.executed_var)


@pytest.fixture(scope="module", params=KINDS)
def run(request, tmp_path_factory):
    os.environ["TZ"] = "UTC"
    time.tzset()
    kind = request.param
    base = tmp_path_factory.mktemp(f"lake-lab-{kind}")
    t0 = time.monotonic()
    with Lab(base, kind=None if kind == "mariadb-10.11" else kind) as lab:
        srv, tables = WORKLOAD[kind](lab)
        tables = tables + ["blobs", "scratch", "again"]
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE types.blobs (id INT PRIMARY KEY, note VARCHAR(20), body BLOB, t TEXT)")
            cur.execute("INSERT INTO types.blobs VALUES (1, 'one', 'b1', 't1'), (2, 'two', 'b2', 't2'), "
                        "(3, 'three', REPEAT('b3', 500), 't3'), (4, 'four', NULL, 't4')")
            for t in ("scratch", "again"):   # emptied after the noted GTID: TRUNCATE, DROP and CREATE
                cur.execute(f"CREATE TABLE types.{t} (id INT PRIMARY KEY, v VARCHAR(20))")
                cur.execute(f"INSERT INTO types.{t} VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        mid_gtid = _executed(srv)
        mid_cols = {t: fold.server_columns(srv, "types", t) for t in tables}
        mid = {t: fold.server_rows(srv, "types", t, mid_cols[t]) for t in tables}
        (base / "mid.sql.gz").write_bytes(gzip.compress(dump(srv, *DUMP_ARGS[srv.kind.flavor], "--databases",
                                                             "types")))
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("TRUNCATE TABLE types.scratch")
            cur.execute("INSERT INTO types.scratch VALUES (10, 'after truncate')")
            cur.execute("USE types")
            cur.execute("DROP TABLE again")
            cur.execute("CREATE TABLE again (id INT PRIMARY KEY, v VARCHAR(20), w INT)")
            cur.execute("INSERT INTO again VALUES (7, 'made again', 1)")
            cur.execute("ALTER TABLE types.many ADD COLUMN extra VARCHAR(10) DEFAULT 'new'")
            cur.execute("UPDATE types.many SET extra = CONCAT('x', id % 7), n = n * 2")
            cur.execute("FLUSH BINARY LOGS")
            cur.execute("ALTER TABLE types.many RENAME COLUMN v TO label")
            cur.execute("UPDATE types.many SET label = CONCAT(label, ' renamed') WHERE id < 100")
            cur.execute("ALTER TABLE types.many MODIFY n DECIMAL(30,2)")
            cur.execute("UPDATE types.many SET n = n + 0.25 WHERE id < 200")
            cur.execute("ALTER TABLE types.many DROP COLUMN extra")
            cur.execute("INSERT INTO types.many VALUES (5000, 'after the alters', 1.5)")
            # added with defaults, rows left as they are: the mirror's rows get the defaults
            cur.execute("ALTER TABLE types.many ADD COLUMN flag INT NOT NULL, ADD COLUMN tag VARCHAR(8) DEFAULT 'dflt', "
                        "ADD COLUMN amount DECIMAL(6,2) DEFAULT -1.25, ADD COLUMN note VARCHAR(8), "
                        "ADD COLUMN noted DATETIME")      # Delta: the table's first TIMESTAMP_NTZ, by a merge
            # defaults that are the statement's time: the server fills its rows with the ALTER's
            # start time (a TIMESTAMP, and a DATETIME in the session's zone), the mirror from its event
            cur.execute("SET time_zone = '+02:00'")
            cur.execute("ALTER TABLE types.many ADD COLUMN made TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3), "
                        "ADD COLUMN seen DATETIME DEFAULT NOW(), ADD COLUMN day DATE DEFAULT (CURRENT_DATE)")
            cur.execute("SET time_zone = SYSTEM")
            cur.execute("UPDATE types.many SET tag = 'set', flag = 2 WHERE id % 5 = 0")
            cur.execute("UPDATE types.many SET id = id + 100000 WHERE id < 20")             # key updates
            cur.execute("DELETE FROM types.many WHERE id BETWEEN 300 AND 330")
            cur.execute("DELETE FROM types.strs WHERE id = 1002")
            cur.execute("UPDATE types.strs SET v = CONCAT(v, '€') WHERE id = 1001")
            if "fsp" in tables:
                cur.execute("UPDATE types.fsp SET dt6 = '2024-02-30 01:02:03.000004' WHERE id = 1001")
        # the server set to binlog_row_image=MINIMAL (after images: the changed columns; before
        # images: the key), then a session with NOBLOB (unchanged BLOB/TEXT left out)
        srv.execute("SET GLOBAL binlog_row_image='MINIMAL'")
        with srv.connect() as conn, conn.cursor() as cur:
            assert srv.query("SELECT @@SESSION.binlog_row_image AS i")[0]["i"] == "MINIMAL"
            cur.execute("UPDATE types.many SET label = CONCAT(label, ' min') WHERE id % 4 = 1")
            cur.execute("UPDATE types.many SET id = id + 200000 WHERE id BETWEEN 400 AND 410")    # key updates
            cur.execute("UPDATE types.many SET tag = 'm', n = n + 1 WHERE id BETWEEN 200 AND 260")
            cur.execute("UPDATE types.blobs SET note = 'min' WHERE id = 1")
            cur.execute("INSERT INTO types.blobs (id, note) VALUES (10, 'min insert')")
            cur.execute("DELETE FROM types.blobs WHERE id = 2")
            cur.execute("SET SESSION binlog_row_image='NOBLOB'")
            cur.execute("UPDATE types.blobs SET note = 'noblob' WHERE id = 3")
            cur.execute("UPDATE types.blobs SET body = 'new body' WHERE id = 4")
            cur.execute("UPDATE types.blobs SET id = 30 WHERE id = 3")
        srv.execute("SET GLOBAL binlog_row_image='FULL'")
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("FLUSH BINARY LOGS")
        cols = {t: fold.server_columns(srv, "types", t) for t in tables}
        final = {t: fold.server_rows(srv, "types", t, cols[t]) for t in tables}
        archive = base / "archive"
        archive.mkdir()
        for r in srv.query("SHOW BINARY LOGS"):
            shutil.copy(srv.datadir / r["Log_name"], archive / r["Log_name"])
    server_s = time.monotonic() - t0
    summaries = {fmt: export_lake([archive], str(base / fmt), fmt=fmt, mirror=True, batch_transactions=5)
                 for fmt in ("iceberg", "delta")}
    yield {"kind": kind, "base": base, "tables": tables, "mid_gtid": mid_gtid, "mid": mid, "mid_cols": mid_cols,
           "final": final, "cols": cols, "summaries": summaries, "server_s": server_s}


def _as_server_text(rows: list[dict], cols) -> dict:
    """Mirror rows (name -> value) as the server's text, keyed by id (export_fold's oracle)."""
    out = {}
    for r in rows:
        vals = tuple(fold.exported_text(r.get(n), r.get(f"{n}__text"), d, c, "us") for n, d, c in cols)
        out[vals[0]] = vals
    return out


def _compare(name: str, got: dict, want: dict) -> list:
    """What differs between two tables (key -> row text): [] when equal."""
    if set(got) != set(want):
        return [(name, "keys", sorted(set(got) ^ set(want))[:10])]
    return [(name, k, [(a, b) for a, b in zip(got[k], row) if a != b]) for k, row in want.items() if got[k] != row]


def _duckdb():
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    return con


def test_summaries(run):
    for s in run["summaries"].values():
        assert not s["gap"] and not s["problems"] and not s["partial_images"] and not s["no_key"]
        assert s["commits"] > 20 and s["files"] >= 3
        assert set(run["tables"]) <= {t.split(".", 1)[1] for t in s["tables"]}


def test_the_archive_holds_partial_images_the_mirrors_applied(run):
    """The MINIMAL / NOBLOB phase really logged partial after images (so the mirror tests below
    prove applying them); none was left unapplied."""
    from binlogkit.export.changes import Filters, Report, Rows, committed_changes

    partial = 0
    for item in committed_changes([run["base"] / "archive"], Filters(tables=("types.many", "types.blobs")), Report()):
        if isinstance(item, Rows):
            width = len(item.table.columns)
            partial += sum(1 for r in item.rows if r["after"] is not None and len(r["after"]) < width)
    assert partial >= 100
    assert all(s["partial_images"] == {} for s in run["summaries"].values())


def test_iceberg_mirror_read_by_duckdb_equals_the_server(run):
    con, bad = _duckdb(), []
    for table in run["tables"]:
        meta = metadata_file(str(run["base"] / "iceberg"), "types", table)
        rows = con.execute(f"SELECT * FROM iceberg_scan('{meta}')").to_arrow_table().to_pylist()
        bad += _compare(table, _as_server_text(rows, run["cols"][table]), run["final"][table])
    assert bad == []


def test_iceberg_time_travel_to_the_noted_gtid_equals_the_servers_tables_then(run):
    """The last snapshot whose recorded GTID the noted GTID state covers (MariaDB: a position,
    MySQL: a GTID set; ``covered_by`` either way), read by DuckDB as of that snapshot."""
    con, bad = _duckdb(), []
    sink = open_sink("iceberg", str(run["base"] / "iceberg"))
    covered = covered_by(run["mid_gtid"])
    for table in run["tables"]:
        at = [sid for sid, p in sink.history("types", table) if p.get("binlogkit.gtid") and covered(p["binlogkit.gtid"])]
        assert at, table
        meta = metadata_file(str(run["base"] / "iceberg"), "types", table)
        rows = con.execute(f"SELECT * FROM iceberg_scan('{meta}', snapshot_from_id={at[-1]})").to_arrow_table()
        bad += _compare(table, _as_server_text(rows.to_pylist(), run["mid_cols"][table]), run["mid"][table])
    assert bad == []


def test_delta_mirror_equals_the_server(run):
    bad = []
    for table in run["tables"]:
        rows = open_sink("delta", str(run["base"] / "delta")).read("types", table).to_pylist()
        bad += _compare(table, _as_server_text(rows, run["cols"][table]), run["final"][table])
    assert bad == []


def test_delta_mirror_from_a_dump_plus_the_archive_equals_the_server(run):
    """--snapshot DUMP.sql.gz at the noted GTID (mariadb-dump's CHANGE MASTER / gtid_slave_pos
    lines, mysqldump's CHANGE REPLICATION SOURCE / GTID_PURGED lines), then the archive from
    there, through the ALTERs: the server's final tables value by value."""
    from binlogkit.export.changes import Filters
    from binlogkit.export.lake.dump import dump_point

    path = str(run["base"] / "mid.sql.gz")
    point = dump_point(path)
    assert point.gtids == run["mid_gtid"]
    out = str(run["base"] / "from-dump")
    # --database types: the dump's tables of it, and the ALTERs the workload ran from sessions with
    # no default database (kept by the table they name)
    s = export_lake([run["base"] / "archive"], out, fmt="delta", mirror=True, snapshot=path, from_gtid=point.gtids,
                    snapshot_at=(point.file, point.position), batch_transactions=50,
                    filters=Filters(tables=("types.*",)))
    assert s["from_snapshot"] > 0 and not s["gap"] and not s["problems"]
    sink = open_sink("delta", out)
    bad = []
    for table in run["tables"]:
        first = sink.history("types", table)[0][1]      # the oldest commit: the dump, at its coordinates
        assert first["binlogkit.gtid"] == point.gtids and first["binlogkit.file"] == point.file
        rows = sink.read("types", table).to_pylist()
        cols = run["cols"][table]
        # FLOAT: a dump holds 6 significant digits (the dump tool's text; a server restored from
        # it holds the same): compared at that precision, every other column exactly
        six = [i for i, (_n, d, _c) in enumerate(cols) if d == "float"]

        def at_six(rows_by_key: dict) -> dict:
            return {k: tuple(f"{float(v):.6g}" if i in six and v is not None else v for i, v in enumerate(r))
                    for k, r in rows_by_key.items()}
        bad += _compare(table, at_six(_as_server_text(rows, cols)), at_six(run["final"][table]))
    assert bad == []

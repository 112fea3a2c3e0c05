"""Lakehouse mirrors against a real MariaDB server (issue 33, proof 1).

A server (binlog_row_image=FULL, binlog_row_metadata=FULL, 1 MB binlogs) gets the row-types
tables (every column family) and a table that goes through DDL. The workload: updates of every
table, key updates (``id = id + 1000``), deletes; then a GTID is noted and every table read
(the server's own text: the snapshot "as of" that GTID); then ALTER TABLE ADD, RENAME, MODIFY
(BIGINT -> DECIMAL) and DROP COLUMN with changes between them, more deletes and key updates.

The binlogs alone, from the first, become an Iceberg mirror (small batches: many commits), read
back with DuckDB's iceberg extension (offline, from PyPI) and compared value by value with the
server's final tables; DuckDB's ``iceberg_scan(..., snapshot_from_id=)`` of the last snapshot at
or before the noted GTID equals the server's tables at that GTID. The Delta mirror's final state
is compared the same way (read by deltalake). A third mirror starts from a real ``mariadb-dump
--single-transaction --master-data=2 --gtid`` taken at the noted GTID (``--snapshot DUMP``) and
continues with the archive: it equals the server's final tables too.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from binlogkit.export.lake.read import duckdb_connection, metadata_file
from fixtures.lab import Lab, row_types
from fixtures.lab.clients import dump
from fixtures.lab.build import TYPES_ROWS, TYPES_SCHEMA

import export_fold as fold

pytestmark = pytest.mark.server
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

TABLES = ["ints", "nums", "times", "strs", "extra", "charsets", "allcs", "enumsets", "exactnums", "fsp",
          "decimals", "many"]


def _seq(gtid: str) -> int:
    return int(gtid.rsplit("-", 1)[1])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    os.environ["TZ"] = "UTC"
    time.tzset()
    base = tmp_path_factory.mktemp("lake-lab")
    with Lab(base) as lab:
        srv = lab.server("primary", 1, binlog_row_metadata="FULL", max_binlog_size=1 << 20,
                         sql_mode="ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION",
                         explicit_defaults_for_timestamp="ON").start()
        srv.execute("SET GLOBAL time_zone='+00:00'")
        charsets = row_types.server_charsets(srv)
        with srv.connect() as conn, conn.cursor() as cur:
            for sql in TYPES_SCHEMA + TYPES_ROWS + row_types.schema(charsets) + row_types.rows(charsets):
                cur.execute(sql)
            cur.execute("CREATE DATABASE seq")
            cur.execute("CREATE TABLE types.many (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)")
            cur.execute("INSERT INTO types.many SELECT seq, CONCAT('row ', seq), seq FROM seq.seq_1_to_600")
            for sql in row_types.CHANGES_FULL:
                cur.execute(sql)
            for t in TABLES[:11]:
                cur.execute(f"UPDATE types.{t} SET id = id + 1000")              # key updates, both images
            cur.execute("DELETE FROM types.many WHERE id % 3 = 0")
            cur.execute("DELETE FROM types.ints WHERE id IN (1003, 1004)")
        mid_gtid = srv.query("SELECT @@gtid_binlog_pos AS g")[0]["g"]
        mid_cols = {t: fold.server_columns(srv, "types", t) for t in TABLES}
        mid = {t: fold.server_rows(srv, "types", t, mid_cols[t]) for t in TABLES}
        import gzip

        (base / "mid.sql.gz").write_bytes(gzip.compress(dump(srv, "--single-transaction", "--master-data=2",
                                                             "--gtid", "--databases", "types")))
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("ALTER TABLE types.many ADD COLUMN extra VARCHAR(10) DEFAULT 'new'")
            cur.execute("UPDATE types.many SET extra = CONCAT('x', id % 7), n = n * 2")
            cur.execute("FLUSH BINARY LOGS")
            cur.execute("ALTER TABLE types.many RENAME COLUMN v TO label")
            cur.execute("UPDATE types.many SET label = CONCAT(label, ' renamed') WHERE id < 100")
            cur.execute("ALTER TABLE types.many MODIFY n DECIMAL(30,2)")
            cur.execute("UPDATE types.many SET n = n + 0.25 WHERE id < 200")
            cur.execute("ALTER TABLE types.many DROP COLUMN extra")
            cur.execute("INSERT INTO types.many VALUES (5000, 'after the alters', 1.5)")
            cur.execute("UPDATE types.many SET id = id + 100000 WHERE id < 20")             # key updates
            cur.execute("DELETE FROM types.many WHERE id BETWEEN 300 AND 330")
            cur.execute("DELETE FROM types.strs WHERE id = 1002")
            cur.execute("UPDATE types.strs SET v = CONCAT(v, '€') WHERE id = 1001")
            cur.execute("UPDATE types.fsp SET dt6 = '2024-02-30 01:02:03.000004' WHERE id = 1001")
            cur.execute("FLUSH BINARY LOGS")
        cols = {t: fold.server_columns(srv, "types", t) for t in TABLES}
        final = {t: fold.server_rows(srv, "types", t, cols[t]) for t in TABLES}
        archive = base / "archive"
        archive.mkdir()
        for n in (srv.datadir / "mariadb-bin.index").read_text().split():
            shutil.copy(srv.datadir / Path(n).name, archive / Path(n).name)
    summaries = {fmt: export_lake([archive], str(base / fmt), fmt=fmt, mirror=True, batch_transactions=5)
                 for fmt in ("iceberg", "delta")}
    yield {"base": base, "mid_gtid": mid_gtid, "mid": mid, "mid_cols": mid_cols, "final": final, "cols": cols,
           "summaries": summaries}


def _as_server_text(rows: list[dict], cols) -> dict:
    """Mirror rows (name -> value) as the server's text, keyed by id (export_fold's oracle)."""
    out = {}
    for r in rows:
        vals = tuple(fold.exported_text(r.get(n), r.get(f"{n}__text"), d, c, "us") for n, d, c in cols)
        out[vals[0]] = vals
    return out


def _compare(name: str, got: dict, want: dict) -> None:
    assert set(got) == set(want), (name, sorted(set(got) ^ set(want))[:10])
    for k, row in want.items():
        assert got[k] == row, (name, k, [(a, b) for a, b in zip(got[k], row) if a != b])


def test_summaries(run):
    for s in run["summaries"].values():
        assert not s["gap"] and not s["problems"] and not s["partial_images"] and not s["no_key"]
        assert s["commits"] > 20 and s["files"] >= 3


@pytest.mark.parametrize("table", TABLES)
def test_iceberg_mirror_read_by_duckdb_equals_the_server(run, table):
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    meta = metadata_file(str(run["base"] / "iceberg"), "types", table)
    rows = con.execute(f"SELECT * FROM iceberg_scan('{meta}')").to_arrow_table().to_pylist()
    _compare(table, _as_server_text(rows, run["cols"][table]), run["final"][table])


@pytest.mark.parametrize("table", TABLES)
def test_iceberg_time_travel_to_the_noted_gtid_equals_the_servers_tables_then(run, table):
    con = duckdb_connection()
    con.execute("SET TimeZone = 'UTC'")
    sink = open_sink("iceberg", str(run["base"] / "iceberg"))
    mid = _seq(run["mid_gtid"])
    at = [sid for sid, p in sink.history("types", table) if p.get("binlogkit.gtid") and _seq(p["binlogkit.gtid"]) <= mid]
    assert at, table
    meta = metadata_file(str(run["base"] / "iceberg"), "types", table)
    rows = con.execute(f"SELECT * FROM iceberg_scan('{meta}', snapshot_from_id={at[-1]})").to_arrow_table()
    _compare(table, _as_server_text(rows.to_pylist(), run["mid_cols"][table]), run["mid"][table])


@pytest.mark.parametrize("table", TABLES)
def test_delta_mirror_equals_the_server(run, table):
    rows = open_sink("delta", str(run["base"] / "delta")).read("types", table).to_pylist()
    _compare(table, _as_server_text(rows, run["cols"][table]), run["final"][table])


def test_delta_mirror_from_a_mariadb_dump_plus_the_archive_equals_the_server(run):
    """--snapshot DUMP.sql.gz at the noted GTID (its own CHANGE MASTER / gtid_slave_pos lines),
    then the archive from there, through the ALTERs: the server's final tables value by value."""
    from binlogkit.export.lake.dump import dump_point

    path = str(run["base"] / "mid.sql.gz")
    point = dump_point(path)
    assert point.gtids == run["mid_gtid"]
    out = str(run["base"] / "from-dump")
    s = export_lake([run["base"] / "archive"], out, fmt="delta", mirror=True, snapshot=path, from_gtid=point.gtids,
                    snapshot_at=(point.file, point.position), batch_transactions=50)
    assert s["from_snapshot"] > 0 and not s["gap"] and not s["problems"]
    sink = open_sink("delta", out)
    for table in TABLES:
        first = sink.history("types", table)[0][1]      # the oldest commit: the dump, at its coordinates
        assert first["binlogkit.gtid"] == point.gtids and first["binlogkit.file"] == point.file
        rows = sink.read("types", table).to_pylist()
        cols = run["cols"][table]
        # FLOAT: a dump holds 6 significant digits (mariadb-dump's text; a server restored from it
        # holds the same): compared at that precision, every other column exactly
        six = [i for i, (_n, d, _c) in enumerate(cols) if d == "float"]

        def at_six(rows_by_key: dict) -> dict:
            return {k: tuple(f"{float(v):.6g}" if i in six and v is not None else v for i, v in enumerate(r))
                    for k, r in rows_by_key.items()}
        _compare(table, at_six(_as_server_text(rows, cols)), at_six(run["final"][table]))

"""Replay equivalence of ``binlogkit export`` on a real MariaDB server (issue 21, proof 1).

A server (binlog_row_image=FULL, binlog_row_metadata=FULL, 1 MB binlogs) gets the row-types
tables (every column family: integers of every width and sign, DECIMAL up to (65,30), FLOAT,
DOUBLE, every temporal type and precision with zero and invalid dates, text in every character
set the server has, ENUM/SET, BIT, BLOB, spatial, JSON, UUID, INET6) and a logical snapshot of
every table is taken (the server's own text). Then the workload: multi-row UPDATEs of every
table (both images of every column family), multi-row DELETEs, one big transaction
(``EXPORT_BIG_MB``, 3 MB here, 25 MB in ``make export-proof``) spilled by the spool, a
transaction rolled back (logged with ROLLBACK: it touched a non-transactional table),
rotations, and ALTER TABLE ADD COLUMN mid-archive followed by changes in the new layout.

The binlogs after the snapshot are exported; the change table is folded onto the snapshot in
binlog order with DuckDB SQL and with Spark SQL (``export_fold.FOLD_SQL``), and every value of
the result is compared with the server's final tables as the server shows them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from binlogkit.export import changes, export
from fixtures.lab import Lab, row_types
from fixtures.lab.build import start_row_types_primary

import export_fold as fold

pytestmark = pytest.mark.server
duckdb = pytest.importorskip("duckdb")

TABLES = ["ints", "nums", "times", "strs", "extra", "charsets", "allcs", "enumsets", "exactnums", "fsp",
          "decimals", "many", "big"]
BIG_MB = int(os.environ.get("EXPORT_BIG_MB", "3"))
# tables with DECIMAL(39..65) columns (decimal256): DuckDB's and Spark's DECIMAL stop at 38 digits
WIDE = {"nums", "exactnums", "decimals"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    os.environ["TZ"] = "UTC"
    time.tzset()
    base = tmp_path_factory.mktemp("export-lab")
    with Lab(base) as lab:
        srv = start_row_types_primary(lab, many=2000, binlog_row_metadata="FULL", max_binlog_size=1 << 20,
                                      max_allowed_packet=256 << 20)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE types.big (id INT PRIMARY KEY, payload LONGBLOB)")
            cur.execute("CREATE TABLE types.nt (id INT PRIMARY KEY, note VARCHAR(20)) ENGINE=MyISAM")
            cur.execute("FLUSH BINARY LOGS")
        first = srv.query("SHOW MASTER STATUS")[0]["File"]
        cols = {t: fold.server_columns(srv, "types", t) for t in TABLES}
        snapshot = {t: fold.server_rows(srv, "types", t, cols[t]) for t in TABLES}
        workload(srv)
        srv.execute("FLUSH BINARY LOGS")
        final_cols = {t: fold.server_columns(srv, "types", t) for t in TABLES}
        final = {t: fold.server_rows(srv, "types", t, final_cols[t]) for t in TABLES}
        names = [line.strip() for line in (srv.datadir / "mariadb-bin.index").read_text().splitlines()]
        files = [str(srv.datadir / Path(n).name) for n in names]
        files = files[[Path(f).name for f in files].index(first):]
        out = base / "changes"
        old = changes.SPOOL_MEMORY
        changes.SPOOL_MEMORY = 1 << 20  # the big transaction goes through the spool's temporary file
        try:
            summary = export(files, str(out), row_group_rows=500)
        finally:
            changes.SPOOL_MEMORY = old
        yield {"srv": srv, "files": files, "out": out, "summary": summary, "snapshot": snapshot, "final": final,
               "cols": final_cols}


def workload(srv) -> None:
    with srv.connect() as conn, conn.cursor() as cur:
        for sql in row_types.CHANGES_FULL:
            cur.execute(sql)
        for t in TABLES[:11]:
            cur.execute(f"UPDATE types.{t} SET id = id + 1000")                 # every column family, both images
        cur.execute("DELETE FROM types.many WHERE id % 3 = 0")                 # a multi-row DELETE
        cur.execute("DELETE FROM types.ints WHERE id IN (1003, 1004)")
        cur.execute("BEGIN")                                                    # the big transaction
        chunk = 256 << 10
        for i in range(BIG_MB * 4):
            cur.execute("INSERT INTO types.big VALUES (%s, REPEAT(CHAR(%s), %s))", (i, 65 + i % 26, chunk))
        cur.execute("UPDATE types.many SET n = n + 1 WHERE id < 100")
        cur.execute("COMMIT")
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")  # so that MyISAM's change rides in the transaction
        cur.execute("BEGIN")                                                    # rolled back, yet logged
        cur.execute("INSERT INTO types.many VALUES (99999, 'rolled back', 0)")
        cur.execute("INSERT INTO types.nt VALUES (1, 'kept')")
        cur.execute("ROLLBACK")
        cur.execute("INSERT INTO types.nt VALUES (2, 'a statement')")         # statement-format DML, committed
        cur.execute("SET SESSION binlog_format = 'ROW'")
        cur.execute("FLUSH BINARY LOGS")                                        # a rotation
        cur.execute("ALTER TABLE types.many ADD COLUMN extra VARCHAR(10) DEFAULT 'new'")
        cur.execute("UPDATE types.many SET extra = CONCAT('x', id % 7), n = n * 2")
        cur.execute("INSERT INTO types.many (id, v, n, extra) VALUES (5000, 'after the alter', 1, NULL)")
        cur.execute("DELETE FROM types.big WHERE id % 2 = 0")
        cur.execute("UPDATE types.fsp SET dt6 = '2024-02-30 01:02:03.000004', ts3 = '1999-12-31 23:59:59.999' "
                    "WHERE id = 1001")
        cur.execute("DELETE FROM types.strs WHERE id = 1002")
        cur.execute("UPDATE types.strs SET v = CONCAT(v, '€') WHERE id = 1001")


def _check(name: str, got: dict, r: dict) -> None:
    assert set(got) == set(r["final"][name]), name
    for k, row in r["final"][name].items():
        assert got[k] == row, (name, k, [(c[0], a, b) for c, a, b in zip(r["cols"][name], got[k], row) if a != b])


def _units(out: Path, table: str) -> dict[str, str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    units = {}
    for part in (out / "db=types" / f"table={table}").rglob("*.parquet"):
        for f in pq.read_schema(part):
            if pa.types.is_duration(f.type):
                units[f.name.removeprefix("after_").removeprefix("before_")] = f.type.unit
    return units


def _select_cols(r: dict, table: str) -> list[str]:
    out = []
    for name, dtype, _c in r["cols"][table]:
        out.append(name)
        if dtype in ("date", "datetime", "timestamp"):
            out.append(f"{name}__text")
    return out


def _apply(r: dict, table: str, folded) -> dict:
    """The snapshot with the folded rows applied, every value as the server's text."""
    cols = r["cols"][table]
    units = _units(r["out"], table)
    got = dict(r["snapshot"][table])
    names = _select_cols(r, table)
    for rec in folded:
        k, present, values = rec[0], rec[1], dict(zip(names, rec[2:]))
        if not present:
            got.pop(str(k), None)
            continue
        got[str(k)] = tuple(fold.exported_text(values[n], values.get(f"{n}__text"), d, c, units.get(n))
                            for n, d, c in cols)
    return got


def test_summary(run):
    s = run["summary"]
    assert s["problems"] == [] and s["incomplete"] == []
    assert s["rolled_back"] == 1
    assert s["files"] == len(run["files"]) >= 4          # rotations: 1 MB files and two FLUSHes
    assert s["tables"]["types.many"]["delete"] == 666 and s["tables"]["types.big"]["insert"] == BIG_MB * 4
    assert "types.nt" not in s["tables"]                   # only in the rolled back transaction
    import pyarrow.parquet as pq

    versions = pq.read_table(run["out"] / "_schemas").to_pylist()
    many = [v for v in versions if v["table"] == "many"]
    assert len(many) == 2 and '"extra"' in many[1]["columns"] and many[1]["first_gtid"]
    statements = pq.read_table(run["out"] / "_statements").column("sql").to_pylist()
    assert any(q.startswith("ALTER TABLE types.many ADD COLUMN") for q in statements)
    assert "INSERT INTO types.nt VALUES (2, 'a statement')" in statements          # nothing vanishes silently
    assert "INSERT INTO types.nt VALUES (1, 'kept')" not in statements             # rolled back: not exported
    # versions are never mixed in one file
    for part in (run["out"] / "db=types" / "table=many").rglob("*.parquet"):
        assert len(set(pq.read_table(part, columns=["schema_version"]).column(0).to_pylist())) == 1


@pytest.mark.parametrize("table", TABLES)
def test_duckdb_fold_equals_the_server(run, table):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    src = f"read_parquet('{run['out']}/db=types/table={table}/*/*.parquet', union_by_name = true)"
    if table in WIDE:
        # DuckDB's DECIMAL stops at 38 digits (it reads decimal256 as DOUBLE): those columns come
        # in through pyarrow, exact, as text (docs/export.md says so)
        con.register("changes", _decimal256_as_text(run["out"] / "db=types" / f"table={table}"))
        src = "changes"
    folded = con.execute(fold.fold_sql(src, _select_cols(run, table))).fetchall()
    _check(table, _apply(run, table, folded), run)


def _decimal256_as_text(folder: Path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    tbl = ds.dataset(str(folder), format="parquet", partitioning="hive").to_table()
    cols = [c.cast(pa.string()) if pa.types.is_decimal256(c.type) else c for c in tbl.columns]
    return pa.table(cols, names=tbl.column_names)


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from binlogkit.spark.jobs import audit as job

    s = job.session("local[1]")
    s.conf.set("spark.sql.session.timeZone", "UTC")
    yield s
    s.stop()


@pytest.mark.parametrize("table", [t for t in TABLES if t not in WIDE])
def test_spark_sql_fold_equals_the_server(run, spark, table):
    df = spark.read.option("mergeSchema", "true").parquet(str(run["out"] / "db=types" / f"table={table}"))
    df.createOrReplaceTempView("changes")
    folded = [tuple(r) for r in spark.sql(fold.fold_sql("changes", _select_cols(run, table), "`")).collect()]
    _check(table, _apply(run, table, folded), run)


# --- today's servers (issue 29): the DuckDB fold on MySQL 9.7 -------------------------------------
TODAY = ["nums", "times", "strs", "geo", "docs", "vec", "many"]


def _today_workload(srv) -> None:
    """Every row of every table UPDATEd (both images of every column family: VECTOR, JSON,
    GEOMETRY, BIT, fractional temporals, five character sets), partial JSON updates (MySQL's
    PARTIAL_JSON with FULL images: the export takes the resulting document), a multi-row DELETE,
    a rolled-back transaction, a rotation, an ALTER and changes in the new layout."""
    from fixtures.lab.today import WORKLOADS

    w = WORKLOADS[srv.kind.flavor]
    with srv.connect() as conn, conn.cursor() as cur:
        for t in TODAY:
            cur.execute(f"UPDATE types.{t} SET id = id + 1000")
        for sql in w.json_session[:1]:  # PARTIAL_JSON, the row image stays FULL
            cur.execute(sql)
        cur.execute("UPDATE types.docs SET j = JSON_SET(j, '$.n', 999), note = 'partial' WHERE id = 1001")
        cur.execute("UPDATE types.docs SET j = JSON_REMOVE(j, '$.o') WHERE id = 1001")
        cur.execute("UPDATE types.docs SET j = JSON_REPLACE(j, '$[1]', 'two') WHERE id = 1002")
        cur.execute("DELETE FROM types.many WHERE id % 3 = 0")
        cur.execute("BEGIN")
        cur.execute("INSERT INTO types.many VALUES (99999, 'rolled back', 0)")
        cur.execute("ROLLBACK")
        cur.execute("FLUSH BINARY LOGS")
        cur.execute("ALTER TABLE types.many ADD COLUMN extra VARCHAR(10) DEFAULT 'new'")
        cur.execute("UPDATE types.many SET extra = CONCAT('x', id % 7), n = n * 2")  # every row: the fold knows no DDL default
        cur.execute("UPDATE types.vec SET v = " + w.rows[0].split("VALUES (1, ")[1].split(", 'one')")[0]
                    + " WHERE id = 1002")
        cur.execute("DELETE FROM types.strs WHERE id = 1002")
        cur.execute("UPDATE types.strs SET v = CONCAT(v, '€') WHERE id = 1001")


# rows events that carry JSON diffs (MySQL PARTIAL_UPDATE_ROWS, type 39): MariaDB has none
PARTIAL_EVENTS = {"mysql": 3, "mariadb": 0}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.kind(k), id=k) for k in ("mysql-9.7", "mariadb-11.8")])
def test_duckdb_fold_equals_the_server_on_todays_servers(tmp_path, kind):
    """The fold proof on MySQL 9.7 (binlog_row_metadata=FULL): export of the binlogs after the
    snapshot, folded with DuckDB onto it, equals the server's final tables value by value."""
    from binlogkit.api import decode_files
    from fixtures.lab.oracle import master_status
    from fixtures.lab.today import start_types_primary

    os.environ["TZ"] = "UTC"
    time.tzset()
    with Lab(tmp_path / "lab", kind=kind) as lab:
        srv = start_types_primary(lab, many=600, max_binlog_size=1 << 20)
        srv.execute("FLUSH BINARY LOGS")
        first = master_status(srv)["file"]
        cols = {t: fold.server_columns(srv, "types", t) for t in TODAY}
        assert ("v", "vector", "vector(4)") in cols["vec"]
        assert cols["docs"][1][:2] == ("j", {"mysql": "json", "mariadb": "longtext"}[lab.kind.flavor])
        snapshot = {t: fold.server_rows(srv, "types", t, cols[t]) for t in TODAY}
        _today_workload(srv)
        srv.execute("FLUSH BINARY LOGS")
        final_cols = {t: fold.server_columns(srv, "types", t) for t in TODAY}
        final = {t: fold.server_rows(srv, "types", t, final_cols[t]) for t in TODAY}
        names = [r["Log_name"] for r in srv.query("SHOW BINARY LOGS")]
        files = [str(srv.datadir / n) for n in names[names.index(first):]]
        out = tmp_path / "changes"
        summary = export(files, str(out), row_group_rows=200)
        kinds = [ev.raw.type_code for ev in decode_files(files)]
    # PARTIAL_UPDATE_ROWS_EVENT (MySQL): every UPDATE once the session has PARTIAL_JSON
    assert (kinds.count(39) >= 3) if PARTIAL_EVENTS[lab.kind.flavor] else kinds.count(39) == 0
    assert summary["problems"] == [] and summary["incomplete"] == [] and summary["rolled_back"] == 0
    assert summary["tables"]["types.many"]["delete"] == 200 and summary["tables"]["types.vec"]["update"] == len(snapshot["vec"]) + 1
    run = {"out": out, "snapshot": snapshot, "final": final, "cols": final_cols}
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for table in TODAY:
        src = f"read_parquet('{out}/db=types/table={table}/*/*.parquet', union_by_name = true)"
        folded = con.execute(fold.fold_sql(src, _select_cols(run, table))).fetchall()
        _check(table, _apply(run, table, folded), run)

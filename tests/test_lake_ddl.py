"""Lakehouse mirrors through DDL of every kind a server logs, and statement-format row changes
(MIXED), against real servers: Debian's MariaDB (10.11 / 11.8) and the lab's MySQL 9.7.

The workload (row format, except where a session sets ``binlog_format='MIXED'``, MariaDB's
default, under which an INSERT ... VALUES and a DELETE are logged as statements): the table
swap ``RENAME TABLE shop.t TO shop.t_2025, shop.t_new TO shop.t``; a rename and a new table at
the old name with another column type (``z.c``); a cross-database rename; ``ALTER TABLE ...
RENAME TO``; ``DROP DATABASE``; ``TRUNCATE``; ``DROP TABLE IF EXISTS`` of several; ADD / DROP /
RENAME / MODIFY COLUMN; ``CREATE TABLE ... LIKE`` and ``... AS SELECT``; MariaDB's ``CREATE OR
REPLACE TABLE``; ``ALTER TABLE ... TRUNCATE PARTITION`` (a statement the mirror cannot apply);
statement-format DML on a mirrored table and on one without a primary key.

After ``export --mirror`` (Iceberg and Delta) every mirror table equals the server's table
value by value, a table the server no longer has is empty in the mirror, and the two tables the
rules stop (``shop.p``: TRUNCATE PARTITION; ``shop.s``: statement-format DML) hold exactly the
server's rows before the statement, with exit 1 and the statement, GTID, file and offset named.
``--skip-statements`` counts shop.s's two statements and stops only shop.p; a rerun into the same
warehouse changes nothing and stops at the same places.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pymysql
import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from fixtures.lab import Lab

import export_fold as fold

pytestmark = pytest.mark.server
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytest.importorskip("sqlglot")

KINDS = [pytest.param("mariadb-10.11", id="mariadb"),
         pytest.param("mariadb-11.8", id="mariadb-11.8", marks=pytest.mark.kind("mariadb-11.8")),
         pytest.param("mysql-9.7", id="mysql-9.7", marks=pytest.mark.kind("mysql-9.7"))]
STOPPED = {"shop.ctas", "shop.k", "shop.ld", "shop.m", "shop.p", "shop.pp", "shop.px", "shop.s"}


def _rows(srv, db: str, table: str) -> tuple[list, dict]:
    cols = fold.server_columns(srv, db, table)
    return cols, fold.server_rows(srv, db, table, cols)


def _workload(srv, flavor: str, base) -> dict:
    """Runs the DDL workload; (db, table) -> (columns, rows) the mirror must hold: the server's
    final table, the rows before the stop for a stopped one, none for a table gone."""
    want: dict = {}
    with srv.connect() as conn, conn.cursor() as cur:
        run = cur.execute
        for db in ("shop", "z", "gone"):
            run(f"CREATE DATABASE {db}")
        # the table swap
        run("CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(20))")
        run("INSERT INTO shop.t VALUES " + ", ".join(f"({i}, 'old {i}')" for i in range(1, 12)))
        run("CREATE TABLE shop.t_new LIKE shop.t")
        run("INSERT INTO shop.t_new VALUES (100, 'new')")
        run("RENAME TABLE shop.t TO shop.t_2025, shop.t_new TO shop.t")
        run("UPDATE shop.t SET v = 'updated' WHERE id = 100")
        run("INSERT INTO shop.t VALUES (101, 'after the swap')")
        run("UPDATE shop.t_2025 SET v = 'kept' WHERE id = 1")
        # renamed away, a new table of another column type at the old name
        run("CREATE TABLE z.c (id INT PRIMARY KEY, amount DECIMAL(10,2))")
        run("INSERT INTO z.c VALUES " + ", ".join(f"({i}, {i}.25)" for i in range(1, 6)))
        run("RENAME TABLE z.c TO z.c2")
        run("CREATE TABLE z.c (id INT PRIMARY KEY, amount INT)")
        run("INSERT INTO z.c VALUES (1, 7)")
        run("UPDATE z.c2 SET amount = amount + 1 WHERE id = 2")
        # across databases; ALTER TABLE ... RENAME TO
        run("CREATE TABLE shop.x (id INT PRIMARY KEY, v VARCHAR(20))")
        run("INSERT INTO shop.x VALUES (1, 'x1'), (2, 'x2'), (3, 'x3')")
        run("RENAME TABLE shop.x TO z.x")
        run("DELETE FROM z.x WHERE id = 3")
        run("CREATE TABLE shop.a (id INT PRIMARY KEY, v VARCHAR(20))")
        run("INSERT INTO shop.a VALUES (1, 'a1'), (2, 'a2')")
        run("ALTER TABLE shop.a RENAME TO shop.b")
        run("INSERT INTO shop.b VALUES (3, 'b3')")
        # DROP DATABASE, TRUNCATE, DROP TABLE IF EXISTS of several
        run("CREATE TABLE gone.g (id INT PRIMARY KEY, v INT)")
        run("INSERT INTO gone.g VALUES (1, 1), (2, 2), (3, 3)")
        run("DROP DATABASE gone")
        run("CREATE TABLE shop.tr (id INT PRIMARY KEY, v INT)")
        run("INSERT INTO shop.tr VALUES (1, 1), (2, 2), (3, 3)")
        run("TRUNCATE TABLE shop.tr")
        run("INSERT INTO shop.tr VALUES (9, 9)")
        for t in ("d1", "d2"):
            run(f"CREATE TABLE shop.{t} (id INT PRIMARY KEY, v INT)")
            run(f"INSERT INTO shop.{t} VALUES (1, 1), (2, 2)")
        run("DROP TABLE IF EXISTS shop.d1, shop.d2, shop.not_there")
        # columns
        run("CREATE TABLE shop.cols (id INT PRIMARY KEY, a INT, b VARCHAR(10), c BIGINT)")
        run("INSERT INTO shop.cols VALUES (1, 1, 'one', 10), (2, 2, 'two', 20), (3, 3, 'three', 30)")
        run("ALTER TABLE shop.cols ADD COLUMN d INT DEFAULT 5")
        run("UPDATE shop.cols SET d = 6 WHERE id = 1")
        run("ALTER TABLE shop.cols DROP COLUMN a")
        run("ALTER TABLE shop.cols RENAME COLUMN b TO bb")
        run("UPDATE shop.cols SET bb = 'TWO' WHERE id = 2")
        run("ALTER TABLE shop.cols MODIFY c DECIMAL(20,2)")
        run("UPDATE shop.cols SET c = c + 0.5 WHERE id = 3")
        run("CREATE TABLE shop.lk LIKE shop.cols")
        run("INSERT INTO shop.lk VALUES (1, 'like', 1.5, 1)")
        run("CREATE TABLE shop.sel (PRIMARY KEY (id)) AS SELECT id, bb FROM shop.cols")
        if flavor == "mariadb":
            run("CREATE TABLE shop.rep (id INT PRIMARY KEY, v INT)")
            run("INSERT INTO shop.rep VALUES (1, 1), (2, 2)")
            run("CREATE OR REPLACE TABLE shop.rep (id INT PRIMARY KEY, w VARCHAR(5))")
            run("INSERT INTO shop.rep VALUES (5, 'five')")
        if flavor == "mariadb":
            # two-phase ALTER: START ALTER and COMMIT ALTER both log the statement; a failed one
            # (duplicates for a new unique key) START and ROLLBACK ALTER: it changed nothing
            run("CREATE TABLE shop.two (id INT PRIMARY KEY, v INT, x INT)")
            run("INSERT INTO shop.two VALUES (1, 1, 5), (2, 2, 5)")
            run("SET SESSION binlog_alter_two_phase = ON")
            run("ALTER TABLE shop.two RENAME COLUMN v TO w")
            with pytest.raises(pymysql.err.IntegrityError):
                run("ALTER TABLE shop.two RENAME COLUMN w TO ww, ADD UNIQUE KEY u (x)")
            run("ALTER TABLE shop.two ADD COLUMN d INT DEFAULT 4")
            run("SET SESSION binlog_alter_two_phase = OFF")
            run("UPDATE shop.two SET w = 9 WHERE id = 1")
        # a statement the mirror cannot apply: its mirror stops before it
        run("CREATE TABLE shop.p (id INT PRIMARY KEY, v INT) PARTITION BY RANGE (id) "
            "(PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)")
        run("INSERT INTO shop.p VALUES (1, 1), (2, 2), (15, 15)")
        want[("shop", "p")] = _rows(srv, "shop", "p")
        run("ALTER TABLE shop.p TRUNCATE PARTITION p0")
        run("INSERT INTO shop.p VALUES (3, 3)")
        # rows the mirror cannot key (the primary key dropped): its mirror stops before them
        run("CREATE TABLE shop.k (id INT PRIMARY KEY, v INT)")
        run("INSERT INTO shop.k VALUES (1, 1), (2, 2)")
        run("TRUNCATE TABLE shop.k")                 # emptied, not gone: still the same table
        run("INSERT INTO shop.k VALUES (5, 5)")
        want[("shop", "k")] = _rows(srv, "shop", "k")
        run("ALTER TABLE shop.k DROP PRIMARY KEY")
        run("INSERT INTO shop.k VALUES (3, 3)")
        # statement-format row changes (MIXED logs these as statements)
        run("CREATE TABLE shop.s (id INT PRIMARY KEY, v VARCHAR(5))")
        run("CREATE TABLE shop.nokey (v INT)")
        run("INSERT INTO shop.s VALUES (1, 'a'), (2, 'b')")
        want[("shop", "s")] = _rows(srv, "shop", "s")
        run("SET SESSION binlog_format = 'MIXED'")
        run("INSERT INTO shop.s VALUES (3, 'c'), (4, 'd')")
        run("DELETE FROM shop.s WHERE id = 1")
        run("INSERT INTO shop.nokey VALUES (1), (2)")
        # CREATE TABLE ... SELECT logged as a statement: its rows never come as row events
        run("CREATE TABLE shop.ctas (PRIMARY KEY (id)) SELECT id, v FROM shop.b")
        run("SET SESSION binlog_format = 'ROW'")
        # EXCHANGE PARTITION: rows swapped between two tables, neither mirror can follow
        run("CREATE TABLE shop.px (id INT PRIMARY KEY, v INT)")
        run("CREATE TABLE shop.pp (id INT PRIMARY KEY, v INT) PARTITION BY RANGE (id) "
            "(PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)")
        run("INSERT INTO shop.px VALUES (5, 5)")
        run("INSERT INTO shop.pp VALUES (1, 1), (20, 20)")
        want[("shop", "px")] = _rows(srv, "shop", "px")
        want[("shop", "pp")] = _rows(srv, "shop", "pp")
        run("ALTER TABLE shop.pp EXCHANGE PARTITION p0 WITH TABLE shop.px")
        # LOAD DATA logged as a statement (Begin_load_query + Execute_load_query)
        run("CREATE TABLE shop.ld (id INT PRIMARY KEY, v VARCHAR(10))")
        run("INSERT INTO shop.ld VALUES (1, 'row')")
        want[("shop", "ld")] = _rows(srv, "shop", "ld")
        (base / "ld.tsv").write_text("2\tloaded\n3\tloaded\n")
        srv.execute("SET GLOBAL local_infile = 1")
        with srv.connect(local_infile=True) as c2, c2.cursor() as cur2:
            cur2.execute("SET SESSION binlog_format = 'STATEMENT'")
            cur2.execute(f"LOAD DATA LOCAL INFILE '{base / 'ld.tsv'}' INTO TABLE shop.ld")
        run("UPDATE shop.ld SET v = 'after' WHERE id = 1")
        # one transaction of a statement and row events (UUID(): unsafe for statements, so rows under
        # MIXED): shop.m stops before the transaction; shop.o, after the statement in it, goes on
        run("CREATE TABLE shop.m (id INT PRIMARY KEY, v VARCHAR(40))")
        run("CREATE TABLE shop.o (id INT PRIMARY KEY, v VARCHAR(40))")
        run("INSERT INTO shop.m VALUES (1, 'row')")
        want[("shop", "m")] = _rows(srv, "shop", "m")
        run("SET SESSION binlog_format = 'MIXED'")
        run("BEGIN")
        run("INSERT INTO shop.m VALUES (3, 'statement')")
        run("INSERT INTO shop.m VALUES (2, UUID())")
        run("INSERT INTO shop.o VALUES (1, UUID())")
        run("COMMIT")
        run("SET SESSION binlog_format = 'ROW'")
        run("UPDATE shop.s SET v = 'row' WHERE id = 2")
        run("INSERT INTO shop.nokey VALUES (3)")
        run("UPDATE shop.t SET v = 'last' WHERE id = 101")
        run("FLUSH BINARY LOGS")
    want["final_m"] = _rows(srv, "shop", "m")
    for db in ("shop", "z"):
        for r in srv.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (db,)):
            if (db, r["t"]) not in want and r["t"] != "nokey":
                want[(db, r["t"])] = _rows(srv, db, r["t"])
    for gone in (("shop", "x"), ("shop", "a"), ("gone", "g"), ("shop", "d1"), ("shop", "d2"), ("shop", "ctas")):
        want[gone] = (None, {})
    return want


@pytest.fixture(scope="module", params=KINDS)
def run(request, tmp_path_factory):
    os.environ["TZ"] = "UTC"
    time.tzset()
    kind = request.param
    base = tmp_path_factory.mktemp(f"lake-ddl-{kind}")
    with Lab(base, kind=None if kind == "mariadb-10.11" else kind) as lab:
        srv = lab.server("primary", 1, binlog_row_metadata="FULL", sql_mode="NO_ENGINE_SUBSTITUTION").start()
        want = _workload(srv, srv.kind.flavor, base)
        final_m = want.pop("final_m")
        archive = base / "archive"
        archive.mkdir()
        for r in srv.query("SHOW BINARY LOGS"):
            shutil.copy(srv.datadir / r["Log_name"], archive / r["Log_name"])
    out = {"base": base, "want": want, "archive": archive, "flavor": kind, "final_m": final_m}
    out["iceberg"] = export_lake([archive], str(base / "iceberg"), fmt="iceberg", mirror=True, batch_transactions=3)
    out["skip"] = export_lake([archive], str(base / "skip"), fmt="iceberg", mirror=True, skip_statements=True)
    cli = subprocess.run([sys.executable, "-m", "binlogkit", "export", str(archive), "-o", str(base / "delta"),
                          "--format", "delta", "--mirror"], capture_output=True, text=True, timeout=300)
    out["delta"] = cli
    yield out


def _mirror_text(rows: list[dict], cols) -> dict:
    out = {}
    for r in rows:
        vals = tuple(fold.exported_text(r.get(n), r.get(f"{n}__text"), d, c, "us") for n, d, c in cols)
        out[vals[0]] = vals
    return out


def _check(sink, want: dict, skip_s: bool = False) -> list:
    bad = []
    for (db, table), (cols, rows) in sorted(want.items()):
        got = sink.read(db, table)
        if cols is None:                        # gone from the server: no rows in the mirror
            if got is not None and got.num_rows:
                bad.append((f"{db}.{table}", "rows left", got.num_rows))
            continue
        if got is None:
            bad.append((f"{db}.{table}", "no mirror"))
            continue
        have = _mirror_text(got.to_pylist(), cols)
        if have != rows:
            bad.append((f"{db}.{table}", sorted(set(have) ^ set(rows)),
                        [(k, have.get(k), rows.get(k)) for k in rows if have.get(k) != rows[k]][:5]))
    return bad


def test_iceberg_mirror_equals_the_server_or_stops_where_the_rules_say(run):
    s = run["iceberg"]
    assert {x["table"] for x in s["stopped"]} == STOPPED
    assert not s["gap"] and not s["problems"] and "shop.nokey" in s["no_key"]
    assert {"shop.t -> shop.t_2025", "shop.t_new -> shop.t", "z.c -> z.c2", "shop.x -> z.x",
            "shop.a -> shop.b"} <= set(s["moved"])
    by = {x["table"]: x for x in s["stopped"]}
    assert by["shop.s"]["statement"].startswith("INSERT INTO shop.s VALUES (3, 'c')")
    assert by["shop.p"]["statement"].startswith("ALTER TABLE shop.p TRUNCATE PARTITION")
    assert by["shop.k"]["kind"] == "rows without a primary key" and by["shop.k"]["statement"] is None
    assert by["shop.ld"]["statement"].startswith("LOAD DATA LOCAL INFILE")
    for x in by.values():
        assert x["gtid"] and x["file"] and x["offset"] > 0
    assert _check(open_sink("iceberg", str(run["base"] / "iceberg")), run["want"]) == []


def test_delta_mirror_by_the_cli_exits_1_naming_the_statements(run):
    cli = run["delta"]
    assert cli.returncode == 1, cli.stderr
    text = cli.stdout + cli.stderr
    assert "mirror of shop.s stopped before" in text and "binlog_format=ROW" in text and "--skip-statements" in text
    assert "INSERT INTO shop.s VALUES (3, 'c')" in text
    assert "mirror of shop.p stopped before" in text and "TRUNCATE PARTITION" in text
    assert _check(open_sink("delta", str(run["base"] / "delta")), run["want"]) == []


def test_skip_statements_counts_them_and_stops_only_what_it_cannot_apply(run):
    s = run["skip"]
    assert [x["table"] for x in s["stopped"]] == ["shop.k", "shop.p", "shop.pp", "shop.px"]
    assert s["skipped_statements"] == {"shop.ctas": 1, "shop.ld": 1, "shop.m": 1, "shop.s": 2}
    from binlogkit.export.lake.mirror import render

    assert "2 statement-format changes skipped on shop.s" in render(s)
    want = dict(run["want"])
    # the statements ignored: the rows before them, then the row change after them (id 2 updated)
    cols, rows = want[("shop", "s")]
    rows = dict(rows)
    rows["2"] = rows["2"][:1] + ("row",)
    want[("shop", "s")] = (cols, rows)
    cols, rows = want[("shop", "ld")]              # the load ignored, the update after it applied
    want[("shop", "ld")] = (cols, {"1": ("1", "after")})
    with_uuid = run["final_m"]                    # the row events of the transaction, not its statement
    want[("shop", "m")] = (with_uuid[0], {k: v for k, v in with_uuid[1].items() if k != "3"})
    assert _check(open_sink("iceberg", str(run["base"] / "skip")), want) == []


def test_a_rerun_changes_nothing_and_stops_again(run):
    s = export_lake([run["archive"]], str(run["base"] / "iceberg"), fmt="iceberg", mirror=True, batch_transactions=3)
    assert {x["table"] for x in s["stopped"]} == STOPPED
    assert s["commits"] == 0 and s["moved"] == []
    assert _check(open_sink("iceberg", str(run["base"] / "iceberg")), run["want"]) == []
    again = subprocess.run([sys.executable, "-m", "binlogkit", "export", str(run["archive"]), "-o",
                            str(run["base"] / "delta"), "--format", "delta", "--mirror", "--json"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 1
    assert {x["table"] for x in json.loads(again.stdout)["stopped"]} == STOPPED
    assert _check(open_sink("delta", str(run["base"] / "delta")), run["want"]) == []


def test_tables_not_exported_stop_nothing_and_a_rename_from_one_stops_its_target(run):
    """--table: statements on tables left out stop nothing; a rename brings rows from a table not
    exported into one exported: its mirror stops there (its rows are unknown): the swap's second
    pair into shop.t, and shop.x -> z.x."""
    from binlogkit.export.changes import Filters

    out = str(run["base"] / "filtered")
    s = export_lake([run["archive"]], out, fmt="delta", mirror=True,
                    filters=Filters(tables=("shop.t", "shop.t_2025", "z.*")))
    assert [(x["table"], x["kind"]) for x in s["stopped"]] == [("shop.t", "rename from a table not exported"),
                                                                ("z.x", "rename from a table not exported")]
    assert s["moved"] == ["shop.t -> shop.t_2025", "z.c -> z.c2"]
    want = {k: v for k, v in run["want"].items() if k in (("z", "c"), ("z", "c2"), ("shop", "t_2025"))}
    want[("shop", "x")] = want[("z", "x")] = (None, {})
    assert _check(open_sink("delta", out), want) == []
    assert open_sink("delta", out).read("shop", "t").num_rows == 0     # left empty by the first pair, then stopped

"""flashback's outputs replayed as a DBA replays them, into real lab servers: MySQL 9.7 with
gtid_mode=ON and with gtid_mode=OFF (the lab's chroot), Debian's MariaDB 10.11 and the lab's 11.8.

* the undo binlog replays as it is, ``mysqlbinlog undo.bin | mysql``, into both MySQL servers:
  the server numbers the undo transactions itself (new GTIDs under ON, anonymous under OFF);
* ``--timestamp now`` dates the events the replay writes into the server's binlog at the time of
  the flashback run, not at the damage's;
* ``--sql`` on a table with generated columns (VIRTUAL and STORED): on MySQL the replay stops
  before writing one (nothing changed, the undo of another table before it included: the script
  is one transaction), and with ``--generated`` it restores the table; MariaDB 10.11 ignores the
  values it is given for them; MariaDB 11.8 leaves generated columns out of its FULL row images,
  which flashback refuses, naming them, unless ``--generated`` says they are generated.

Each scenario has its own database: a table with generated columns ``t`` and a plain one ``p``;
the damage is two transactions (``t`` first, then ``p``), so the undo touches ``p`` first.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from binlogkit.api import decode_files
from binlogkit.constants import EventType as T
from binlogkit.flashback import flashback
from fixtures.lab import Lab

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent


class _Servers:
    """The module's servers, started on first use and stopped together at the module's end: a
    lab that ends stops every server of the process, so none may end while others are in use."""

    def __init__(self, factory, stack: contextlib.ExitStack) -> None:
        self.factory, self.stack, self.started = factory, stack, {}

    def mysql(self) -> dict:
        from fixtures.lab.kinds import kind

        if not kind("mysql-9.7").available():
            pytest.skip("the lab's mysql-9.7 chroot is not built")
        if "mysql" not in self.started:
            lab = self.stack.enter_context(Lab(self.factory.mktemp("fb-mysql"), kind="mysql-9.7"))
            on = lab.server("gtid-on", 1, binlog_row_metadata="FULL").start()
            off = lab.server("gtid-off", 2, binlog_row_metadata="FULL", gtid_mode="OFF",
                             enforce_gtid_consistency="OFF").start()
            assert (on.var("gtid_mode"), off.var("gtid_mode")) == ("ON", "OFF")
            self.started["mysql"] = {"on": on, "off": off}
        return self.started["mysql"]

    def mariadb(self, name: str):
        if name not in self.started:
            lab = self.stack.enter_context(Lab(self.factory.mktemp("fb-" + name), kind=name))
            self.started[name] = lab.server("primary", 1, binlog_row_metadata="FULL").start()
        return self.started[name]


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    with contextlib.ExitStack() as stack:
        yield _Servers(tmp_path_factory, stack)


@pytest.fixture
def mysql_on_off(servers):
    """Two MySQL 9.7 servers, binlog_row_metadata=FULL: gtid_mode=ON (the lab's default) and OFF."""
    return servers.mysql()


@pytest.fixture
def mariadb(servers):
    """Debian's MariaDB (10.11)."""
    return servers.mariadb("mariadb-10.11")


def _status(srv) -> tuple[str, int]:
    from fixtures.lab.oracle import master_status

    st = master_status(srv)
    return st["file"], st["position"]


def scenario(srv, db: str) -> dict:
    """Tables, rows, the snapshot; then the damage: where it is in the binlog."""
    srv.execute(f"CREATE DATABASE {db}",
                f"CREATE TABLE {db}.t (id INT PRIMARY KEY, a INT, g INT GENERATED ALWAYS AS (a * 2) VIRTUAL, "
                "note VARCHAR(20), s VARCHAR(30) AS (CONCAT(note, '/', a)) STORED)",
                f"CREATE TABLE {db}.p (id INT PRIMARY KEY, v VARCHAR(20))",
                f"INSERT INTO {db}.t (id, a, note) VALUES (1, 1, 'one'), (2, 2, 'two'), (3, 3, NULL)",
                f"INSERT INTO {db}.p VALUES (1, 'x'), (2, 'y')")
    before = snapshot(srv, db)
    time.sleep(1.1)
    f, start = _status(srv)
    srv.execute("BEGIN", f"UPDATE {db}.t SET a = a + 10, note = 'damaged'", f"DELETE FROM {db}.t WHERE id = 2",
                "COMMIT")
    srv.execute(f"UPDATE {db}.p SET v = 'damaged'")
    f2, stop = _status(srv)
    assert f2 == f and snapshot(srv, db) != before
    return {"before": before, "file": srv.datadir / f, "start": start, "stop": stop, "damaged": snapshot(srv, db)}


def snapshot(srv, db: str) -> dict:
    return {t: srv.query(f"SELECT * FROM {db}.{t} ORDER BY id") for t in ("t", "p")}


def replay_binlog(srv, path: Path) -> subprocess.CompletedProcess:
    """``mysqlbinlog FILE | mysql`` (``mariadb-binlog FILE | mariadb``) from the kind's own
    tree, no option: as the docs say to replay."""
    from fixtures.lab.clients import client
    from fixtures.lab.kinds import binlog_tool

    out = binlog_tool(srv.kind, path, raw=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return client(srv, input=out.stdout, check=False)


def replay_sql(srv, path: Path) -> subprocess.CompletedProcess:
    from fixtures.lab.clients import client

    return client(srv, input=path.read_bytes(), check=False)


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlogkit.cli", "flashback", *map(str, args)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def server_events(srv, file: Path, start: int) -> list:
    return [ev.raw for ev in decode_files([file], start_position=start)]


@pytest.mark.kind("mysql-9.7")
@pytest.mark.parametrize("mode", ["on", "off"])
def test_mysql_undo_binlog_replays_as_it_is_with_gtid_mode_on_and_off(mysql_on_off, tmp_path, mode):
    """``mysqlbinlog undo.bin | mysql``, nothing more: a gtid_mode=ON server gives the two undo
    transactions GTIDs of its own (the next ones: not the damage's), an OFF one logs them
    anonymous. (Before, the ON server refused the first BEGIN: ERROR 1782.)"""
    srv = mysql_on_off[mode]
    r = scenario(srv, f"gtid_{mode}")
    undo = tmp_path / "undo.bin"
    res = flashback([r["file"]], undo, start_position=r["start"], stop_position=r["stop"])
    assert res.undone == 2
    f, at = _status(srv)
    executed = srv.var("gtid_executed")
    rep = replay_binlog(srv, undo)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(srv, f"gtid_{mode}") == r["before"]
    written = [e.type_code for e in server_events(srv, srv.datadir / f, at)]
    if mode == "on":
        assert written.count(T.GTID_LOG_EVENT) == 2 and T.ANONYMOUS_GTID_LOG_EVENT not in written
        uuid, last = executed.split(":")[0], int(executed.rsplit("-", 1)[-1])
        assert srv.var("gtid_executed").replace("\n", "") == f"{uuid}:1-{last + 2}"
    else:
        assert written.count(T.ANONYMOUS_GTID_LOG_EVENT) == 2 and T.GTID_LOG_EVENT not in written
    # the undo of the undo reads the same file: its GTID_NEXT line is no change, not a statement
    res = flashback([undo], tmp_path / "twice.bin")
    assert res.undone == 2 and res.skipped == []


def _timestamp_case(srv, db: str, tmp_path: Path) -> None:
    r = scenario(srv, db)
    plain = tmp_path / "plain.bin"
    flashback([r["file"]], plain, start_position=r["start"], stop_position=r["stop"])
    damage_time = max(e.timestamp for e in decode_files([r["file"]], start_position=r["start"],
                                                        stop_position=r["stop"]) for e in [e.raw])
    time.sleep(2.1)
    run = int(time.time())
    undo = tmp_path / "undo.bin"
    p = cli(r["file"], "-o", undo, "--start-position", r["start"], "--stop-position", r["stop"], "--timestamp", "now")
    assert p.returncode == 0, p.stderr
    stamps = {ev.raw.timestamp for ev in decode_files([undo])}
    assert len(stamps) == 1 and run <= stamps.pop() <= int(time.time())
    # without --timestamp the undo keeps the damage's times: a replay would log them
    assert max(ev.raw.timestamp for ev in decode_files([plain])) <= damage_time < run
    f, at = _status(srv)
    rep = replay_binlog(srv, undo)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(srv, db) == r["before"]
    logged = server_events(srv, srv.datadir / f, at)
    assert len(logged) >= 8 and all(e.timestamp >= run for e in logged), [(e.type_code, e.timestamp) for e in logged]


@pytest.mark.kind("mysql-9.7")
def test_timestamp_now_dates_the_replayed_events_on_mysql(mysql_on_off, tmp_path):
    _timestamp_case(mysql_on_off["on"], "stamp", tmp_path)


def test_timestamp_now_dates_the_replayed_events_on_mariadb(mariadb, tmp_path):
    _timestamp_case(mariadb, "stamp", tmp_path)


@pytest.mark.kind("mysql-9.7")
def test_sql_with_generated_columns_on_mysql_stops_before_any_change_then_restores(mysql_on_off, tmp_path):
    """MySQL refuses a value for a generated column (ERROR 3105) and the binlog does not say
    which columns are: the --sql replay stops at the check before the table's first statement,
    naming them, and the undo of ``p`` that came before it in the file is not kept (one
    transaction). ``--generated`` leaves them out: the replay restores the table."""
    srv = mysql_on_off["on"]
    r = scenario(srv, "gen")
    undo = tmp_path / "undo.sql"
    p = cli(r["file"], "-o", undo, "--start-position", r["start"], "--stop-position", r["stop"], "--sql")
    assert p.returncode == 0, p.stderr
    text = undo.read_text()
    check_t = text.index("TABLE_SCHEMA = 'gen' AND TABLE_NAME = 't' AND COLUMN_NAME IN ('id', 'a', 'g', 'note', 's')")
    assert text.index("UPDATE `gen`.`p`") < check_t < text.index("UPDATE `gen`.`t`")
    rep = replay_sql(srv, undo)
    assert rep.returncode != 0
    assert b"ERROR 1231" in rep.stderr and b"generated column gen.t.g gen.t.s cannot be written: nothing was " \
        b"changed; run flashback again with --generated gen.t.g --generated gen.t.s" in rep.stderr, rep.stderr
    assert snapshot(srv, "gen") == r["damaged"]          # nothing changed: not even p, undone before t
    undo.unlink()
    p = cli(r["file"], "-o", undo, "--start-position", r["start"], "--stop-position", r["stop"], "--sql",
            "--generated", "gen.t.g,gen.t.S")                       # a name that is not the table's: refused
    assert p.returncode == 2 and "--generated gen.t.S: no such column" in p.stderr and not undo.exists()
    p = cli(r["file"], "-o", undo, "--start-position", r["start"], "--stop-position", r["stop"], "--sql",
            "--generated", "gen.t.g", "--generated", "gen.t.s")          # given twice: both left out
    assert p.returncode == 0, p.stderr
    assert "`g`=" not in undo.read_text() and "`s`=" not in undo.read_text()
    rep = replay_sql(srv, undo)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(srv, "gen") == r["before"]


def test_sql_with_generated_columns_on_mariadb_restores(mariadb, tmp_path):
    """MariaDB ignores (warning 1906) the values the statements give generated columns under the
    script's non-strict sql_mode: no check, the replay restores the table."""
    r = scenario(mariadb, "gen")
    undo = tmp_path / "undo.sql"
    flashback([r["file"]], undo, start_position=r["start"], stop_position=r["stop"], sql=True)
    assert "@binlogkit_generated" not in undo.read_text()
    rep = replay_sql(mariadb, undo)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(mariadb, "gen") == r["before"]


def test_a_failed_sql_replay_changes_nothing(mariadb, tmp_path):
    """A statement of the --sql output that fails half-way (here: the row the undo of ``p``
    re-inserts was taken meanwhile) stops the client; the undo transactions before it in the file
    are rolled back with it."""
    r = scenario(mariadb, "atomic")
    mariadb.execute("INSERT INTO atomic.t (id, a, note) VALUES (2, 7, 'taken')")   # the deleted row's key
    now = snapshot(mariadb, "atomic")
    undo = tmp_path / "undo.sql"
    flashback([r["file"]], undo, start_position=r["start"], stop_position=r["stop"], sql=True, check_later=False)
    text = undo.read_text()
    assert text.index("UPDATE `atomic`.`p`") < text.index("INSERT INTO `atomic`.`t`")
    rep = replay_sql(mariadb, undo)
    assert rep.returncode != 0 and b"Duplicate entry" in rep.stderr
    assert snapshot(mariadb, "atomic") == now


def test_timestamp_is_refused_where_it_means_nothing_and_generated_needs_three_parts(tmp_path):
    from fixtures import store

    fm = store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.index"
    p = cli(fm, "-o", tmp_path / "u.sql", "--include-gtids", "0-1-34", "--sql", "--timestamp", "now")
    assert p.returncode == 2 and "--sql statements carry no time" in p.stderr
    p = cli(fm, "-o", tmp_path / "u.sql", "--include-gtids", "0-1-34", "--sql", "--generated", "strs.v")
    assert p.returncode == 2 and "DB.TABLE.COLUMN" in p.stderr
    p = cli(fm, "-o", tmp_path / "u.bin", "--include-gtids", "0-1-34", "--timestamp", "yesterday")
    assert p.returncode == 2 and "yesterday" in p.stderr
    assert list(tmp_path.iterdir()) == []
    p = cli(fm, "-o", tmp_path / "u.bin", "--include-gtids", "0-1-34", "--timestamp", "2030-01-02 03:04:05")
    assert p.returncode == 0, p.stderr
    stamp = int(datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp())
    assert {ev.raw.timestamp for ev in decode_files([tmp_path / "u.bin"])} == {stamp}
    # --generated without --sql: images that hold every column (10.11) need no name; the same bytes
    flashback([fm], tmp_path / "a.bin", gtids=__import__("binlogkit.api", fromlist=["x"]).gtid_matcher("0-1-34"))
    p = cli(fm, "-o", tmp_path / "b.bin", "--include-gtids", "0-1-34", "--generated", "types.strs.v")
    assert p.returncode == 0 and (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()


def test_statement_format_dml_is_named_with_the_setting_and_skipping_it_says_what_is_left(mariadb, tmp_path):
    """MariaDB's default binlog_format is MIXED: a statement-format INSERT inside BEGIN ... COMMIT
    is a transaction of the range like any other. Refused, the message names binlog_format=ROW;
    with --skip-statements and nothing else in the range, the refusal says the range holds only
    statements (it said "the filters (--database, --table) leave no row change", with no filter
    given); beside a row change, the statement left out is listed (summary and JSON)."""
    mariadb.execute("CREATE DATABASE stm", "CREATE TABLE stm.t (id INT PRIMARY KEY, v VARCHAR(10))")
    f, start = _status(mariadb)
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")
        cur.execute("BEGIN")
        cur.execute("INSERT INTO stm.t VALUES (1, 'a'), (2, 'b')")
        cur.execute("COMMIT")
    mid = _status(mariadb)[1]
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION binlog_format = 'ROW'")
        cur.execute("UPDATE stm.t SET v = 'rows' WHERE id = 1")
    stop = _status(mariadb)[1]
    src = mariadb.datadir / f
    out = tmp_path / "u.bin"
    p = cli(src, "-o", out, "--start-position", start, "--stop-position", mid)
    assert p.returncode == 2 and "binlog_format=ROW" in p.stderr and "INSERT INTO stm.t" in p.stderr, p.stderr
    p = cli(src, "-o", out, "--start-position", start, "--stop-position", mid, "--skip-statements")
    assert p.returncode == 2 and "the range holds only statements (1 left out by --skip-statements)" in p.stderr
    assert "--database" not in p.stderr and "binlog_format=ROW" in p.stderr and not out.exists()
    p = cli(src, "-o", out, "--start-position", start, "--stop-position", mid, "--skip-statements", "--table", "stm.t")
    assert p.returncode == 2 and "the filters (--database, --table) leave no row change" in p.stderr
    p = cli(src, "-o", out, "--start-position", start, "--stop-position", stop, "--skip-statements", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["undone"] == 1 and [s["statement"] for s in doc["skipped"]] == ["INSERT INTO stm.t VALUES (1, 'a'), (2, 'b')"]
    p = cli(src, "-o", tmp_path / "u2.bin", "--start-position", start, "--stop-position", stop, "--skip-statements")
    assert p.returncode == 0 and f"left out (--skip-statements): {f}:" in p.stderr and "INSERT INTO stm.t" in p.stderr


@pytest.mark.kind("mariadb-11.8")
def test_mariadb_11_8_leaves_generated_columns_out_of_full_images_and_generated_names_them(servers, tmp_path):
    """MariaDB 11.8 (binlog_row_image=FULL) logs a table's generated columns, VIRTUAL and STORED,
    in its table map but not in the row images (10.11 logs their values), and nothing says they
    are generated: without --generated the undo is refused (exit 2, nothing written), naming the
    columns left out, this cause and the option; with --generated naming them, the undo binlog
    and the --sql statements (the images' columns only) replay with 11.8's own tools and the
    table is back as it was."""
    srv = servers.mariadb("mariadb-11.8")
    assert srv.query("SELECT @@binlog_row_image AS i")[0]["i"] == "FULL"
    r = scenario(srv, "gen")
    out = tmp_path / "undo.bin"
    p = cli(r["file"], "-o", out, "--start-position", r["start"], "--stop-position", r["stop"])
    assert p.returncode == 2 and not out.exists()
    assert "`gen`.`t`: the row images leave columns out (image without g, s)" in p.stderr, p.stderr
    assert "generated columns, which MariaDB 11.8 leaves out of FULL images" in p.stderr
    assert "--generated gen.t.COLUMN names each" in p.stderr
    p = cli(r["file"], "-o", out, "--start-position", r["start"], "--stop-position", r["stop"], "--generated", "gen.t.g")
    assert p.returncode == 2 and "(image without g, s)" in p.stderr     # s is left out too: not named
    p = cli(r["file"], "-o", out, "--start-position", r["start"], "--stop-position", r["stop"],
            "--generated", "gen.t.g", "--generated", "gen.t.s")          # given twice: both left out
    assert p.returncode == 0, p.stderr
    rep = replay_binlog(srv, out)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(srv, "gen") == r["before"]
    r = scenario(srv, "gen_sql")
    sql = tmp_path / "undo.sql"
    flashback([r["file"]], sql, start_position=r["start"], stop_position=r["stop"], sql=True,
              generated=("gen_sql.t.g", "gen_sql.t.s"))
    assert "INSERT INTO `gen_sql`.`t` (`id`, `a`, `note`) VALUES (2, 12, " in sql.read_text()
    rep = replay_sql(srv, sql)
    assert rep.returncode == 0, rep.stderr
    assert snapshot(srv, "gen_sql") == r["before"]


def _filtered_case(srv, tmp_path: Path) -> None:
    """The damage to ``fs.s`` sits among DDL of other tables and databases and an XA transaction
    of another table: ``--table fs.s`` undoes it (they are named, left as they are), the replay
    restores ``fs.s`` and leaves the other tables as the server has them; DDL on ``fs.s`` itself
    still refuses, named alone."""
    srv.execute("CREATE DATABASE fs", "CREATE TABLE fs.s (id INT PRIMARY KEY, v VARCHAR(20))",
                "CREATE TABLE fs.o (id INT PRIMARY KEY, v VARCHAR(20))",
                "INSERT INTO fs.s VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT INTO fs.o VALUES (1, 'x')")
    before = srv.query("SELECT * FROM fs.s ORDER BY id")
    f, start = _status(srv)
    srv.execute("UPDATE fs.s SET v = 'damaged' WHERE id < 3",
                "CREATE TABLE fs.o2 (id INT PRIMARY KEY)", "ALTER TABLE fs.o ADD COLUMN w INT",
                "CREATE DATABASE fs_more", "DROP TABLE fs.o2", "RENAME TABLE fs.o TO fs.o3",
                "XA START 'fsx'", "INSERT INTO fs.o3 VALUES (2, 'y', 2)", "XA END 'fsx'", "XA PREPARE 'fsx'",
                "XA COMMIT 'fsx'",
                "DELETE FROM fs.s WHERE id = 3", "INSERT INTO fs.o3 VALUES (3, 'z', 3)")
    f2, stop = _status(srv)
    assert f2 == f
    others = srv.query("SELECT * FROM fs.o3 ORDER BY id")
    src = srv.datadir / f
    undo = tmp_path / "s.bin"
    p = cli(src, "-o", undo, "--start-position", start, "--stop-position", stop)
    assert p.returncode == 2 and "statement(s) in the range" in p.stderr      # unfiltered: every DDL blocks
    p = cli(src, "-o", undo, "--start-position", start, "--stop-position", stop, "--table", "fs.s", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    apart = " | ".join(s["statement"] for s in doc["outside"])
    assert doc["undone"] == 2 and doc["rows"] == 3 and len(doc["outside"]) == 7, apart   # 5 DDL, XA prepare + commit
    assert "CREATE DATABASE fs_more" in apart and "RENAME TABLE fs.o TO fs.o3" in apart and "XA COMMIT" in apart
    rep = replay_binlog(srv, undo)
    assert rep.returncode == 0, rep.stderr
    assert srv.query("SELECT * FROM fs.s ORDER BY id") == before
    assert srv.query("SELECT * FROM fs.o3 ORDER BY id") == others
    # DDL on the filtered table itself: refused, that statement alone named
    f, start = _status(srv)
    srv.execute("UPDATE fs.s SET v = 'again'", "ALTER TABLE fs.s ADD COLUMN n INT", "CREATE TABLE fs.o4 (id INT)")
    stop = _status(srv)[1]
    p = cli(srv.datadir / f, "-o", tmp_path / "r.bin", "--start-position", start, "--stop-position", stop,
            "--table", "fs.s")
    assert p.returncode == 2 and "1 statement(s) in the range" in p.stderr and "ALTER TABLE fs.s" in p.stderr, p.stderr
    assert not (tmp_path / "r.bin").exists()
    p = cli(srv.datadir / f, "-o", tmp_path / "r.bin", "--start-position", start, "--stop-position", stop,
            "--database", "fs")
    assert p.returncode == 2 and "2 statement(s) in the range" in p.stderr, p.stderr


@pytest.mark.kind("mysql-9.7")
def test_filtered_undo_among_other_tables_ddl_replays_on_mysql(mysql_on_off, tmp_path):
    _filtered_case(mysql_on_off["on"], tmp_path)


def test_filtered_undo_among_other_tables_ddl_replays_on_mariadb(mariadb, tmp_path):
    _filtered_case(mariadb, tmp_path)

"""Time travel by GTID state on real servers: every commit records the executed GTID state
after its batch (MySQL 9.7: the GTID set, GTIDs of two server UUIDs included; MariaDB: the
position per domain), ``as_of`` takes a set or a position of either flavor, an ADD COLUMN's
fill is the ALTER's own commit (one snapshot / one Delta version at the ALTER's coordinates),
and no commit of the history shows an empty table the server never had.

A lab primary (the host's MariaDB, MySQL 9.7 from the lab's chroot) gets a table, inserts and
updates, then ``ALTER TABLE ADD COLUMN c INT DEFAULT 7`` (the mirror's rows take 7), then more
changes (MySQL: one transaction under another server's UUID, as after a failover). The server's
GTID state and the table are noted before the ALTER, after it, and at the end; the archive
becomes Iceberg and Delta mirrors (one transaction a batch), read back as of each noted state.
"""

from __future__ import annotations

import shutil

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from binlogkit.export.lake.read import as_of
from fixtures.lab import Lab

pytestmark = pytest.mark.server
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

OTHER = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
KINDS = [pytest.param("mariadb-10.11", id="mariadb-10.11"),
         pytest.param("mysql-9.7", id="mysql-9.7", marks=pytest.mark.kind("mysql-9.7"))]


def _table(srv) -> tuple[list[str], list[tuple]]:
    cols = [r["COLUMN_NAME"] for r in srv.query(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'lab' AND TABLE_NAME = 't' "
        "ORDER BY ORDINAL_POSITION")]
    rows = [tuple(r[c] for c in cols) for r in srv.query("SELECT * FROM lab.t ORDER BY id")]
    return cols, rows


@pytest.fixture(scope="module", params=KINDS)
def run(request, tmp_path_factory):
    kind = request.param
    base = tmp_path_factory.mktemp(f"asof-{kind}")
    with Lab(base, kind=None if kind == "mariadb-10.11" else kind) as lab:
        srv = lab.server("primary", 1, max_binlog_size=1 << 20, binlog_row_metadata="FULL").start()
        var = srv.kind.sql.executed_var
        noted = {}
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE lab")
            cur.execute("CREATE TABLE lab.t (id INT PRIMARY KEY, v VARCHAR(20))")
            for i in range(1, 6):
                cur.execute(f"INSERT INTO lab.t VALUES ({i}, 'v{i}')")
            cur.execute("UPDATE lab.t SET v = 'changed' WHERE id = 2")
            cur.execute("FLUSH BINARY LOGS")
            cur.execute("DELETE FROM lab.t WHERE id = 5")
        noted["before"] = (srv.var(var), *_table(srv))
        srv.execute("ALTER TABLE lab.t ADD COLUMN c INT DEFAULT 7")
        noted["alter"] = (srv.var(var), *_table(srv))
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("UPDATE lab.t SET c = 8 WHERE id = 1")
            cur.execute("INSERT INTO lab.t VALUES (10, 'ten', 10)")
            if srv.kind.flavor == "mysql":
                # a transaction of another server (as a failover's new primary writes): the
                # binlog's GTIDs now belong to two UUIDs
                cur.execute(f"SET gtid_next = '{OTHER}:1'")
                cur.execute("INSERT INTO lab.t VALUES (11, 'other', 11)")
                cur.execute("SET gtid_next = 'AUTOMATIC'")
            cur.execute("UPDATE lab.t SET v = 'last' WHERE id = 3")
            cur.execute("FLUSH BINARY LOGS")
        noted["end"] = (srv.var(var), *_table(srv))
        archive = base / "archive"
        archive.mkdir()
        for r in srv.query("SHOW BINARY LOGS"):
            shutil.copy(srv.datadir / r["Log_name"], archive / r["Log_name"])
        flavor = srv.kind.flavor
    for fmt in ("iceberg", "delta"):
        export_lake([archive], str(base / fmt), fmt=fmt, mirror=True, batch_transactions=1)
    yield {"base": base, "noted": noted, "flavor": flavor}


def _read(run, fmt: str, version):
    sink = open_sink(fmt, str(run["base"] / fmt))
    got = sink.read("lab", "t", version)
    return got.column_names, sorted(tuple(r.values()) for r in got.to_pylist())


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_every_commit_records_the_servers_gtid_state(run, fmt):
    sink = open_sink(fmt, str(run["base"] / fmt))
    hist = sink.history("lab", "t")
    states = [p.get("binlogkit.gtid_state") for _v, p in hist if p.get("binlogkit.file")]
    assert states and all(states)
    # the last commit's state is the server's executed state at the end (the archive's last
    # transaction changed lab.t)
    from binlogkit.export.lake.state import Query

    end = run["noted"]["end"][0].replace("\n", "")
    assert Query(end).holds_state(states[-1]) and Query(states[-1]).holds_state(end)
    if run["flavor"] == "mysql":
        assert OTHER in states[-1]


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
@pytest.mark.parametrize("when", ["before", "alter", "end"])
def test_as_of_the_servers_gtid_state_is_the_servers_table_then(run, fmt, when):
    state, cols, rows = run["noted"][when]
    sink = open_sink(fmt, str(run["base"] / fmt))
    v = as_of(sink.history("lab", "t"), gtid=state.replace("\n", ""))
    assert v is not None
    got_cols, got = _read(run, fmt, v)
    assert got_cols == cols          # before the ALTER: the old columns
    assert got == sorted(rows)


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_no_commit_shows_an_empty_table_and_the_fill_is_the_alters_own(run, fmt):
    sink = open_sink(fmt, str(run["base"] / fmt))
    hist = [(v, p) for v, p in sink.history("lab", "t") if p.get("binlogkit.file")]
    for v, p in hist:
        _c, rows = _read(run, fmt, v)
        assert rows, (v, p)          # the server's lab.t never was empty once made
    # one commit per set of coordinates: no second snapshot / version repeating them
    keys = [(p["binlogkit.file"], p["binlogkit.position"]) for _v, p in hist]
    assert len(keys) == len(set(keys))
    # the ALTER's fill: a commit whose state is the server's right after the ALTER
    alter = run["noted"]["alter"][0].replace("\n", "")
    from binlogkit.export.lake.state import Query

    at = [v for v, p in hist if Query(alter).holds_state(p["binlogkit.gtid_state"])
          and Query(p["binlogkit.gtid_state"]).holds_state(alter)]
    assert len(at) == 1
    assert _read(run, fmt, at[0])[0] == run["noted"]["alter"][1]


def test_as_of_a_single_mysql_gtid_and_a_set_without_the_other_uuid(run):
    if run["flavor"] != "mysql":
        pytest.skip("MySQL's GTID sets")
    sink = open_sink("iceberg", str(run["base"] / "iceberg"))
    hist = sink.history("lab", "t")
    end = run["noted"]["end"][0].replace("\n", "")
    own = [g for g in end.split(",") if OTHER not in g][0]
    uuid, n = own.split(":")[0], own.split("-")[-1]
    # the server's own GTIDs only: every commit after the other server's transaction holds it
    v = as_of(hist, gtid=f"{uuid}:{n}")
    _c, rows = _read(run, "iceberg", v)
    assert 11 not in [r[0] for r in rows] and 10 in [r[0] for r in rows]
    assert as_of(hist, gtid=f"{uuid}:1-{n},{OTHER}:1") == hist[-1][0]

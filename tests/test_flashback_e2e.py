"""flashback proven on a real MariaDB 10.11 server.

A server (binlog_row_image=FULL, binlog_row_metadata=FULL) gets the row-types workload (a table
per column family: integers, decimals, floats, every temporal type and precision, every
character set, ENUM/SET, BIT, BLOB, spatial, JSON, UUID, INET6, an 18 KB row) plus a table of
2 000 rows; the state is snapshot (CHECKSUM TABLE and a full SELECT of every table). Then the
damage: a DELETE without WHERE, an UPDATE of every row of every table (every column family in
before and after images), an UPDATE of 2 000 rows, and one transaction mixing two tables that
changes the same row twice; then unrelated transactions. The damage alone is flashed back — by
position, by date-time and by GTID — and the file replayed with ``mariadb-binlog FILE |
mariadb``: the damaged tables equal the snapshot and the unrelated changes are still there.
``mariadb-binlog --flashback`` on the same kind of range reaches the same end state; the
flashback of the flashback gives back the original row images byte for byte.
"""

from __future__ import annotations

import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from binlogkit.api import decode_files
from binlogkit.flashback import flashback
from binlogkit.flashback.invert import ROWS_TYPES
from fixtures.lab import Lab
from fixtures.lab.build import start_row_types_primary

pytestmark = pytest.mark.server

TABLES = ["ints", "nums", "times", "strs", "extra", "charsets", "allcs", "enumsets", "exactnums", "fsp",
          "decimals", "many"]


def snapshot(srv) -> dict:
    out = {}
    with srv.connect() as conn, conn.cursor() as cur:
        for t in TABLES:
            cur.execute(f"CHECKSUM TABLE types.{t}")
            checksum = cur.fetchone()[-1]
            cur.execute(f"SELECT * FROM types.{t} ORDER BY id")
            out[t] = (checksum, cur.fetchall())
    return out


def master(srv) -> tuple[str, int]:
    row = srv.query("SHOW MASTER STATUS")[0]
    return row["File"], int(row["Position"])


def damage(srv, tag: int) -> None:
    """The accident: four transactions."""
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM types.strs")                                  # DELETE without WHERE
        for t in TABLES[:-1]:
            if t != "strs":
                cur.execute(f"UPDATE types.{t} SET id = id + 1000")            # every column family, both images
        cur.execute(f"UPDATE types.many SET n = n * 3 + {tag}, v = CONCAT(v, 'x')")  # 2 000 rows
        cur.execute("BEGIN")                                                   # two tables, one row twice
        cur.execute("DELETE FROM types.many WHERE id <= 300")
        cur.execute("UPDATE types.charsets SET l1 = 'first' WHERE id = 1001")
        cur.execute("INSERT INTO types.many VALUES (5000, 'new', 1), (5001, NULL, NULL)")
        cur.execute("UPDATE types.charsets SET l1 = 'second', u8 = NULL WHERE id = 1001")
        cur.execute("UPDATE types.many SET v = 'again' WHERE id = 5000")
        cur.execute("COMMIT")


def unrelated(srv, tag: int) -> None:
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute(f"INSERT INTO other.log VALUES ({tag}, 'after the damage')")
        cur.execute(f"UPDATE other.log SET note = CONCAT(note, '!') WHERE id = {tag}")


def replay(srv, path: Path, *extra: str) -> None:
    dump = subprocess.run(["mariadb-binlog", *extra, str(path)], capture_output=True, check=True)
    subprocess.run(["mariadb", "--no-defaults", f"--socket={srv.socket}", "-uroot"], input=dump.stdout,
                   capture_output=True, check=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("flashback-lab")
    with Lab(base) as lab:
        srv = start_row_types_primary(lab, changes=True, many=2000, binlog_row_metadata="FULL",
                                      max_binlog_size=1 << 30)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE other")
            cur.execute("CREATE TABLE other.log (id INT PRIMARY KEY, note VARCHAR(40))")
        yield srv


def _binlog(srv, name: str) -> Path:
    return srv.datadir / name


def _round(srv, tag: int) -> dict:
    """Snapshot, damage, unrelated changes: where each happened."""
    before = snapshot(srv)
    time.sleep(1.1)
    f, start = master(srv)
    gtid0 = srv.var("gtid_binlog_pos")
    t0 = datetime.now(timezone.utc).replace(microsecond=0)
    time.sleep(0.01)
    damage(srv, tag)
    f2, stop = master(srv)
    assert f2 == f
    gtid1 = srv.var("gtid_binlog_pos")
    time.sleep(1.1)
    t1 = datetime.now(timezone.utc).replace(microsecond=0)
    unrelated(srv, tag)
    assert snapshot(srv) != before
    d0, s0, n0 = map(int, gtid0.split("-"))
    n1 = int(gtid1.split("-")[2])
    return {"before": before, "file": _binlog(srv, f), "start": start, "stop": stop, "t0": t0, "t1": t1,
            "gtids": f"{d0}-{s0}-{n0 + 1}..{n1}", "n": n1 - n0}


def _check(srv, r: dict, tag: int) -> None:
    assert snapshot(srv) == r["before"]
    assert srv.query(f"SELECT note FROM other.log WHERE id = {tag}") == [{"note": "after the damage!"}]


@pytest.mark.parametrize("how", ["position", "datetime", "gtid"])
def test_flashback_the_damage_replays_to_the_snapshot(server, tmp_path, how):
    tag = {"position": 1, "datetime": 2, "gtid": 3}[how]
    r = _round(server, tag)
    out = tmp_path / "undo.bin"
    kw = {"position": dict(start_position=r["start"], stop_position=r["stop"]),
          "datetime": dict(start_datetime=r["t0"], stop_datetime=r["t1"]),
          "gtid": dict(gtids=__import__("binlogkit.api", fromlist=["gtid_matcher"]).gtid_matcher(r["gtids"]))}[how]
    res = flashback([r["file"]], out, **kw)
    assert res.transactions == r["n"] == res.undone == 13
    assert res.later == {"conflicts": [], "total": 0, "note": None}   # the later changes touch other rows
    assert subprocess.run([".venv/bin/binlogkit", "verify", str(out)], cwd=Path(__file__).parent.parent,
                          capture_output=True).returncode == 0
    replay(server, out)
    _check(server, r, tag)


def test_same_end_state_as_mariadb_binlog_flashback(server, tmp_path):
    r = _round(server, 4)
    replay(server, r["file"], "--flashback", f"--start-position={r['start']}", f"--stop-position={r['stop']}")
    theirs = snapshot(server)
    _check(server, r, 4)
    r = _round(server, 5)
    flashback([r["file"]], tmp_path / "undo.bin", start_position=r["start"], stop_position=r["stop"])
    replay(server, tmp_path / "undo.bin")
    _check(server, r, 5)
    assert snapshot(server) == theirs


def _images(path: Path, start: int | None = None, stop: int | None = None) -> list:
    """(type code, table, columns bitmaps, row bytes) of every rows event."""
    out = []
    for ev in decode_files([path], start_position=start, stop_position=stop):
        if ev.raw.type_code in ROWS_TYPES:
            f = ev.fields
            out.append((ev.raw.type_code, f["columns_before_image"], f["columns_after_image"],
                        bytes(ev.parsed["rows"])))
    return out


def test_flashback_of_the_flashback_gives_the_original_row_images(server, tmp_path):
    r = _round(server, 6)
    once, twice = tmp_path / "once.bin", tmp_path / "twice.bin"
    flashback([r["file"]], once, start_position=r["start"], stop_position=r["stop"])
    res = flashback([once], twice)
    assert res.undone == 13
    original = _images(r["file"], r["start"], r["stop"])
    assert len(original) > 10
    assert _images(twice) == original
    assert _images(once) != original
    replay(server, once)
    _check(server, r, 6)


def test_sql_undo_replays_to_the_snapshot(server, tmp_path):
    """--sql: the same damage undone by SQL statements (every column family, charsets, NULLs,
    a 2 000-row UPDATE) replayed with `mariadb < FILE`."""
    r = _round(server, 7)
    out = tmp_path / "undo.sql"
    res = flashback([r["file"]], out, start_position=r["start"], stop_position=r["stop"], sql=True)
    assert res.undone == 13 and res.rows > 2000
    with open(out, "rb") as fh:
        subprocess.run(["mariadb", "--no-defaults", f"--socket={server.socket}", "-uroot"], stdin=fh,
                       capture_output=True, check=True)
    _check(server, r, 7)


def test_table_filter_undoes_only_that_table(server, tmp_path):
    r = _round(server, 8)
    out = tmp_path / "undo.bin"
    res = flashback([r["file"]], out, start_position=r["start"], stop_position=r["stop"], table="types.strs")
    assert res.undone == 1            # only the DELETE without WHERE touched strs
    replay(server, out)
    now = snapshot(server)
    assert now["strs"] == r["before"]["strs"]
    assert now["many"] != r["before"]["many"] and now["ints"] != r["before"]["ints"]
    # the rest, by database: everything in `types` but strs (already undone) comes back
    res = flashback([r["file"]], tmp_path / "rest.bin", start_position=r["start"], stop_position=r["stop"],
                    database="types")
    assert res.undone == 13


def test_a_later_change_to_a_restored_row_is_named_and_is_what_the_replay_loses_or_stops_on(server, tmp_path):
    """Last: its replays go wrong on purpose. The damage updates every row of other.c (primary
    key) and other.nk (none); a later transaction updates one row of each again. The flashback
    names that transaction. Replayed anyway, the undo overwrites the later change in other.c
    (the server finds the row by its key) and stops in other.nk (error 1032: no row equals the
    before image) — the two outcomes the warning announces."""
    server.execute("CREATE TABLE other.c (id INT PRIMARY KEY, v VARCHAR(20))",
                   "INSERT INTO other.c VALUES (1, 'one'), (2, 'two'), (3, 'three')",
                   "CREATE TABLE other.nk (id INT, v VARCHAR(20))",
                   "INSERT INTO other.nk VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    f, start = master(server)
    server.execute("UPDATE other.c SET v = 'damaged'")
    mid = master(server)[1]
    server.execute("UPDATE other.nk SET v = 'damaged'")
    stop = master(server)[1]
    server.execute("BEGIN", "UPDATE other.c SET v = 'later' WHERE id = 2",
                   "UPDATE other.nk SET v = 'later' WHERE id = 2", "COMMIT")
    later_gtid = server.var("gtid_binlog_pos")
    src = _binlog(server, f)
    res = flashback([src], tmp_path / "c.bin", start_position=start, stop_position=mid)
    assert res.undone == 1
    assert [(c["gtid"], c["table"], c["rows"]) for c in res.later["conflicts"]] == [(later_gtid, "other.c", 1)]
    res = flashback([src], tmp_path / "nk.bin", start_position=mid, stop_position=stop)
    assert [(c["gtid"], c["table"], c["rows"]) for c in res.later["conflicts"]] == [(later_gtid, "other.nk", 1)]
    r = subprocess.run([".venv/bin/binlogkit", "flashback", str(src), "-o", str(tmp_path / "cli.bin"),
                        "--start-position", str(start), "--stop-position", str(stop)],
                       cwd=Path(__file__).parent.parent, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.count(f"warning: a later transaction {later_gtid} ") == 2
    replay(server, tmp_path / "c.bin")
    assert server.query("SELECT v FROM other.c ORDER BY id") == [{"v": "one"}, {"v": "two"}, {"v": "three"}]
    dump = subprocess.run(["mariadb-binlog", str(tmp_path / "nk.bin")], capture_output=True, check=True)
    rep = subprocess.run(["mariadb", "--no-defaults", f"--socket={server.socket}", "-uroot"], input=dump.stdout,
                         capture_output=True)
    assert rep.returncode != 0 and b"1032" in rep.stderr
    assert server.query("SELECT v FROM other.nk ORDER BY id") == [{"v": "damaged"}, {"v": "later"}, {"v": "damaged"}]


# --- today's servers (issue 29): the same proof on MySQL 9.7 and MariaDB 11.8 ----------------------
TODAY = ["nums", "times", "strs", "geo", "docs", "vec", "many"]


def _today_snapshot(srv) -> dict:
    """CHECKSUM TABLE and every value as the server shows it (today.py's SELECTs: VECTOR_TO_STRING...)."""
    from fixtures.lab.today import COMMON_SELECTS, WORKLOADS

    selects = {**COMMON_SELECTS, **WORKLOADS[srv.kind.flavor].selects, "many": "SELECT * FROM types.many ORDER BY id"}
    out = {}
    with srv.connect() as conn, conn.cursor() as cur:
        for t in TODAY:
            cur.execute(f"CHECKSUM TABLE types.{t}")
            checksum = cur.fetchone()[-1]
            cur.execute(selects[t])
            out[t] = (checksum, cur.fetchall())
    return out


def _today_damage(srv) -> None:
    """A DELETE without WHERE, every row of every table UPDATEd (VECTOR and JSON columns in both
    images), a JSON document rewritten, and one transaction over two tables changing a row twice."""
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM types.strs")
        for t in TODAY:
            if t != "strs":
                cur.execute(f"UPDATE types.{t} SET id = id + 1000")
        cur.execute("UPDATE types.docs SET j = JSON_SET(j, '$.n', 999), note = 'damaged' WHERE id = 1001")
        cur.execute("BEGIN")
        cur.execute("DELETE FROM types.many WHERE id <= 1100")
        cur.execute("UPDATE types.vec SET note = 'first' WHERE id = 1001")
        cur.execute("INSERT INTO types.many VALUES (5000, 'new', 1)")
        cur.execute("UPDATE types.vec SET note = 'second' WHERE id = 1001")
        cur.execute("COMMIT")


def _replay_with_own_tools(srv, path: Path) -> None:
    """``mysqlbinlog FILE | mysql`` (``mariadb-binlog FILE | mariadb``) from the kind's own tree,
    no option (a MySQL undo sets GTID_NEXT='AUTOMATIC' itself: test_flashback_replay.py)."""
    from fixtures.lab.clients import client
    from fixtures.lab.kinds import binlog_tool

    out = binlog_tool(srv.kind, path, raw=True)
    assert out.returncode == 0, out.stderr[-2000:]
    client(srv, input=out.stdout)


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.kind(k), id=k)
                                  for k in ("mysql-9.7", "mariadb-11.8")])
def test_flashback_replays_to_the_snapshot_on_todays_servers(tmp_path, kind):
    """The proof above on MySQL 9.7 and MariaDB 11.8: today's type tables (VECTOR, JSON,
    GEOMETRY, BIT, fractional temporals, five character sets) and 400 rows; the damage flashed
    back by position and by GTID set, each undo replayed with the server's own tool and client,
    and as --sql statements run by its client:
    the tables equal the snapshot, the unrelated change stays."""
    from binlogkit.api import gtid_matcher
    from fixtures.lab.oracle import master_status
    from fixtures.lab.today import start_types_primary

    with Lab(tmp_path, kind=kind) as lab:
        srv = start_types_primary(lab, many=400, max_binlog_size=1 << 30)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE other")
            cur.execute("CREATE TABLE other.log (id INT PRIMARY KEY, note VARCHAR(40))")
        for tag, how in enumerate(("position", "gtid", "sql"), 1):
            before = _today_snapshot(srv)
            start = master_status(srv)
            _today_damage(srv)
            stop = master_status(srv)
            srv.execute(f"INSERT INTO other.log VALUES ({tag}, 'after the damage')")
            assert _today_snapshot(srv) != before and start["file"] == stop["file"]
            if how in ("position", "sql"):
                kw = dict(start_position=start["position"], stop_position=stop["position"], sql=how == "sql")
            else:  # the GTIDs the damage got: MySQL uuid:a-b, MariaDB d-s-a..b
                kw = dict(gtids=gtid_matcher(_gtids_between(start["gtid_binlog_pos"], stop["gtid_binlog_pos"])))
            out = tmp_path / f"undo-{how}.bin"
            res = flashback([srv.datadir / start["file"]], out, **kw)
            assert res.transactions == res.undone == len(TODAY) + 2  # DELETE, 6 UPDATEs, JSON, the mixed one
            assert res.later == {"conflicts": [], "total": 0, "note": None}
            if how == "sql":  # `mysql < undo.sql` (VECTOR as STRING_TO_VECTOR / its bytes, JSON as CAST)
                from fixtures.lab.clients import client

                client(srv, input=out.read_bytes())
            else:
                _replay_with_own_tools(srv, out)
            assert _today_snapshot(srv) == before, how
            assert srv.query(f"SELECT note FROM other.log WHERE id = {tag}") == [{"note": "after the damage"}]


def _gtids_between(before: str, after: str) -> str:
    """The GTIDs committed between two GTID states of one server (one uuid / one domain)."""
    if ":" in after:  # MySQL gtid_executed: uuid:1-N
        uuid, hi = after.replace("\n", "").split(":")[0], after.rsplit("-", 1)[-1]
        lo = int(before.rsplit("-", 1)[-1]) + 1
        return f"{uuid}:{lo}-{hi}"
    d, s, n0 = before.split("-")
    return f"{d}-{s}-{int(n0) + 1}..{after.split('-')[2]}"

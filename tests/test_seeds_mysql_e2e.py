"""Two seeds proven on real MySQL 9.7 (the lab's ``mysql-9.7`` kind; issue 29 points 5 and 6).

- The incident (WL#3464 R3.1/R4): ``binlogkit incident`` on a stopped primary, restart; a GTID
  auto-position replica that already held every GTID of that file receives it, stops with
  ER_REPLICA_INCIDENT (13119) and resumes past it as MySQL documents for GTID replicas (an
  empty transaction with the incident's GTID); a file/position replica does the same.
- A partial transaction in the relay log of a GTID auto-position replica (bug #69943): the IO
  thread stopped inside a large transaction and started again, then the replica killed -9 in
  the middle of one; ``binlogkit recover`` names the partial transaction and gives MySQL's
  auto-position answer (no SOURCE_LOG_POS statement, which MySQL refuses with error 1776), and
  the replica resumes with nothing skipped or doubled.

The source's bytes reach the replica through ``fixtures.cutproxy.CutProxy``, which holds them
at an exact count: the relay log ends inside the transaction every time.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.crypto import load_keys
from binlogkit.reading.source import Input
from binlogkit.writing.writer import record_incident
from fixtures.cutproxy import CutProxy
from fixtures.lab.topology import REPL_PASSWORD, REPL_USER, Lab, catch_up, connect, grant_replication, wait_replica

KIND = "mysql-9.7"
pytestmark = [pytest.mark.server, pytest.mark.kind(KIND)]
BIG_ROWS = 2000  # one transaction of ~2 MB of row events


def _lab_or_skip(tmp_path) -> Lab:
    return Lab(tmp_path, kind=KIND)  # the chroot's presence: the kind marker's policy (conftest)


def _checksums(srv) -> dict:
    return {r["Table"]: r["Checksum"] for r in srv.query("CHECKSUM TABLE t.a, t.b")}


def _status(replica) -> dict:
    return replica.query(replica.kind.sql.status(""))[0]


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "binlog_encryption"])
def test_incident_reaches_a_gtid_auto_position_replica(tmp_path, encrypted):
    """Encrypted: a primary with binlog_encryption=ON; the incident is written encrypted with its
    keyring, and the restarted server serves it (it decrypts what binlogkit encrypted)."""
    enc = {"keyring": True, "binlog_encryption": "ON"} if encrypted else {}
    with _lab_or_skip(tmp_path) as lab:
        p = lab.server("primary", 1, **enc).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        p.execute("CREATE DATABASE t", "CREATE TABLE t.a (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(50))",
                  "CREATE TABLE t.b (id INT PRIMARY KEY, v TEXT)", "INSERT INTO t.a (v) VALUES ('one'), ('two')")
        r2 = lab.server("position-replica", 3).start()  # file/position mode: it must see it too
        connect(r, p, gtid=True)
        connect(r2, p, gtid=False)
        catch_up(r, p)
        catch_up(r2, p)
        held = r.var("gtid_executed")
        r.execute("STOP REPLICA")
        r2.execute("STOP REPLICA")
        p.stop()
        where = Input(p.datadir, load_keys(keyring_file=str(p.keyring))) if encrypted else p.datadir
        done = record_incident(where, code="LOST_EVENTS", message="binlogs lost in transit")
        if encrypted:
            assert Path(done.file).read_bytes()[:4] == b"\xfdbin"
        uuid, gno = done.gtid.rsplit(":", 1)
        assert held.endswith(f"{uuid}:1-{int(gno) - 1}")  # the replica held every GTID of the file
        p.start()
        assert p.query("SELECT GTID_SUBSET(%s, @@GLOBAL.gtid_executed) AS ok", (done.gtid,))[0]["ok"]
        r.execute("START REPLICA")
        res = wait_replica(r, gtid_target=done.gtid, timeout=60)
        st = res["status"]
        assert res["outcome"] == "stopped", res  # R3.1: the replica stops at the marker
        assert st["Last_SQL_Errno"] == 13119  # ER_REPLICA_INCIDENT (1590 is obsolete in MySQL 9)
        assert "The incident LOST_EVENTS occurred on the source. Message: binlogs lost in transit" \
            in st["Last_SQL_Error"]
        assert r.query("SELECT GTID_SUBSET(%s, %s) AS ok", (done.gtid, st["Gtid_IO_Pos"]))[0]["ok"]  # received ...
        assert not r.query("SELECT GTID_SUBSET(%s, @@GLOBAL.gtid_executed) AS ok", (done.gtid,))[0]["ok"]  # ... not applied
        r2.execute("START REPLICA")
        res2 = wait_replica(r2, gtid_target=done.gtid, timeout=60)
        assert res2["outcome"] == "stopped" and res2["status"]["Last_SQL_Errno"] == 13119, res2
        # R4, MySQL's way for a GTID replica: commit an empty transaction with the incident's GTID
        # (with gtid_mode=ON the same for a file/position replica)
        for rep in (r, r2):
            rep.execute("STOP REPLICA", f"SET GTID_NEXT='{done.gtid}'", "BEGIN", "COMMIT",
                        "SET GTID_NEXT='AUTOMATIC'", "START REPLICA")
        p.execute("INSERT INTO t.a (v) VALUES ('after the gap')", "INSERT INTO t.b VALUES (1, 'x')")
        for rep in (r, r2):
            catch_up(rep, p)
            assert rep.var("gtid_executed") == p.var("gtid_executed")
            assert _checksums(rep) == _checksums(p)


def _last_gtid(p) -> str:
    """The primary's last GTID (its gtid_executed is one interval of its own uuid here)."""
    return f"{p.var('server_uuid')}:{p.var('gtid_executed').rsplit('-', 1)[-1].strip()}"


def _run_recover(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["recover", *args])
    return res.exit_code, res.output


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "binlog_encryption"])
def test_partial_transaction_in_a_gtid_replicas_relay_log(tmp_path, encrypted):
    """Encrypted: both servers with binlog_encryption=ON and component_keyring_file, so the relay
    logs are encrypted too; recover needs the replica's keyring to read them (exit 2 without it,
    nothing cut), cuts them in place still encrypted, and the server reads what it left."""
    enc = {"keyring": True, "binlog_encryption": "ON"} if encrypted else {}
    with _lab_or_skip(tmp_path) as lab, CutProxy(0) as px:
        p = lab.server("primary", 1, **enc).start()
        r = lab.server("replica", 2, relay_log_recovery="OFF", **enc).start()
        key = ["--keyring-file", str(r.keyring)] if encrypted else []
        px.upstream = ("127.0.0.1", p.port)
        grant_replication(p)
        p.execute("CREATE DATABASE t", "CREATE TABLE t.a (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(50))",
                  "CREATE TABLE t.b (id INT PRIMARY KEY, v VARCHAR(1000))", "INSERT INTO t.a (v) VALUES ('one')")
        r.execute(r.kind.sql.change("", host="127.0.0.1", port=px.port, user=REPL_USER, password=REPL_PASSWORD,
                                    gtid=True), "START REPLICA")
        catch_up(r, p)

        def big(first: int) -> str:
            p.execute("SET SESSION cte_max_recursion_depth=100000",
                      f"INSERT INTO t.b SELECT n + {first}, REPEAT('x', 1000) FROM (WITH RECURSIVE s(n) AS "
                      f"(SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {BIG_ROWS}) SELECT n FROM s) x")
            return p.var("gtid_executed")

        # bug #69943: the IO thread stopped inside a large transaction, then started again
        px.cut_after(60_000)
        big(0)
        assert px.held(30)
        time.sleep(0.5)
        r.execute("STOP REPLICA IO_THREAD")
        if encrypted:
            code, out = _run_recover(str(r.datadir), "--mode", "gtid")
            assert code == 2 and "--keyring-file" in out, out  # it cannot read them: says how, plans nothing
        code, out = _run_recover(str(r.datadir), "--mode", "gtid", *key)  # read-only while the server runs
        partial = re.search(r"partial trx\s+: (\S+)", out)
        assert partial and partial.group(1) == _last_gtid(p), out
        assert "STOP REPLICA; CHANGE" not in out and "run START REPLICA; nothing else" in out
        retrieved = re.search(r"retrieved GTIDs : (\S+)", out).group(1)
        assert _status(r)["Retrieved_Gtid_Set"].replace("\n", "") == retrieved  # the partial one is not counted
        px.cut_after(None)
        r.execute("START REPLICA IO_THREAD")
        catch_up(r, p)
        assert r.var("gtid_executed") == p.var("gtid_executed")
        assert _checksums(r) == _checksums(p)

        # kill -9 with a partial transaction in the relay log
        px.cut_after(60_000)
        big(BIG_ROWS)
        assert px.held(30)
        time.sleep(0.5)
        r.kill9()
        code, out = _run_recover(str(r.datadir), *key)
        assert code == 1, out
        gtid = re.search(r"partial trx\s+: (\S+) from (\S+):(\d+)", out)
        assert gtid and gtid.group(1) == _last_gtid(p), out  # the big transaction, named
        assert "MySQL, SOURCE_AUTO_POSITION=1 (relay_log_recovery ON or OFF): run START REPLICA; nothing else." in out
        assert "no info file to write" in out
        retrieved = re.search(r"retrieved GTIDs : (\S+)", out).group(1)
        relay_file, cut = gtid.group(2), int(gtid.group(3))
        cut += 512 if encrypted else 0  # the position is in the plaintext stream, after the file's header
        code, out = _run_recover("--apply", str(r.datadir), *key)
        assert code == 0, out
        if encrypted:  # cut in place, still encrypted: the header the server wrote, then ciphertext
            assert (r.datadir / relay_file).read_bytes()[:4] == b"\xfdbin"
        assert not (r.datadir / "master.info").exists() and not (r.datadir / "relay-log.info").exists()
        assert (r.datadir / relay_file).stat().st_size == cut
        r.start()
        st = _status(r)
        assert st["Retrieved_Gtid_Set"].replace("\n", "") == retrieved  # what the plan said, without the partial one
        assert (r.datadir / relay_file).stat().st_size == cut  # MySQL's sanitizer found nothing more to cut
        px.cut_after(None)
        r.execute("START REPLICA")
        catch_up(r, p)
        assert r.var("gtid_executed") == p.var("gtid_executed")
        assert _checksums(r) == _checksums(p)
        assert r.query("SELECT COUNT(*) AS n FROM t.b")[0]["n"] == 2 * BIG_ROWS


def test_incident_without_gtids_reaches_a_position_replica(tmp_path):
    """gtid_mode=OFF: the Incident opened by an Anonymous_gtid, as the server writes every
    transaction there; the replica stops with 13119 and resumes with sql_replica_skip_counter."""
    off = dict(gtid_mode="OFF", enforce_gtid_consistency="OFF")
    with _lab_or_skip(tmp_path) as lab:
        p = lab.server("primary", 1, **off).start()
        r = lab.server("replica", 2, **off).start()
        grant_replication(p)
        p.execute("CREATE DATABASE t", "CREATE TABLE t.a (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(50))",
                  "CREATE TABLE t.b (id INT PRIMARY KEY, v TEXT)", "INSERT INTO t.a (v) VALUES ('one')")
        connect(r, p, gtid=False)

        def synced() -> dict:
            st = p.query(p.kind.sql.binlog_status)[0]
            res = wait_replica(r, file_target=(st["File"], st["Position"]), timeout=60)
            return res

        assert synced()["outcome"] == "caught_up"
        r.execute("STOP REPLICA")
        p.stop()
        done = record_incident(p.datadir, code="LOST_EVENTS", message="gap without gtids")
        assert done.gtid == "ANONYMOUS"
        p.start()
        r.execute("START REPLICA")
        res = wait_replica(r, file_target=("never", 0), timeout=60)
        assert res["outcome"] == "stopped" and res["status"]["Last_SQL_Errno"] == 13119, res
        assert "gap without gtids" in res["status"]["Last_SQL_Error"]
        r.execute("STOP REPLICA", "SET GLOBAL sql_replica_skip_counter=1", "START REPLICA")
        p.execute("INSERT INTO t.a (v) VALUES ('after the gap')")
        assert synced()["outcome"] == "caught_up"
        assert _checksums(r) == _checksums(p)

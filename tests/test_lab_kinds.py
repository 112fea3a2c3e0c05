"""The lab's server kinds on real servers (issue 29): MySQL 9.7 and MariaDB 11.8 run from their
chroots like the host's MariaDB 10.11: bound to 127.0.0.1, own datadir, stopped by PID;
primary -> replica in GTID (auto-position) and file/position mode, lossless semisync
(AFTER_SYNC), and a replica killed with SIGKILL inside a transaction that resumes with every
row. Each kind costs a few seconds (the initialized datadir is a template copied per server)."""

from __future__ import annotations

import os
import socket
import time

import pytest

from fixtures.lab import Lab, catch_up, connect, enable_semisync, grant_replication, semisync_status
from fixtures.lab.crash import crash_replica
from fixtures.lab.kinds import KINDS
from fixtures.lab.oracle import master_status, replication_metadata, slave_status, table_fingerprints
from fixtures.lab.today import big

CHROOT_KINDS = [k for k in KINDS if KINDS[k].chroot]
pytestmark = pytest.mark.server


def _kinds(names=CHROOT_KINDS):
    return [pytest.param(k, marks=pytest.mark.kind(k), id=k) for k in names]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _work(p, start: int = 0) -> None:
    p.execute("CREATE DATABASE IF NOT EXISTS lab",
              "CREATE TABLE IF NOT EXISTS lab.t (id INT PRIMARY KEY, v VARCHAR(20))",
              "CREATE TABLE IF NOT EXISTS lab.small (id INT AUTO_INCREMENT PRIMARY KEY, k INT, v VARCHAR(64))",
              "CREATE TABLE IF NOT EXISTS lab.big (id INT PRIMARY KEY, note VARCHAR(32), b LONGBLOB)")
    with p.connect() as conn, conn.cursor() as cur:
        for i in range(start, start + 20):
            cur.execute("INSERT INTO lab.t VALUES (%s, %s)", (i, f"v{i}"))


@pytest.mark.parametrize("kind", _kinds())
def test_kind_starts_on_loopback_in_its_chroot_and_stops_by_pid(tmp_path, kind):
    k = KINDS[kind]
    with Lab(tmp_path, kind=kind) as lab:
        a = lab.server("a", 11).start()
        b = lab.server("b", 12).start()
        assert a.var("version").startswith(kind.split("-")[1])
        assert a.var("bind_address") == "127.0.0.1" and int(a.var("port")) == a.port
        # the workloads' MD5 (on MySQL 9.7 a component the template installs) and no binlog of it
        assert a.query("SELECT MD5('1') AS m")[0]["m"] == "c4ca4238a0b923820dcc509a6f75849b"
        assert [f["Log_name"] for f in a.query("SHOW BINARY LOGS")][0].endswith(".000001")
        with socket.create_connection(("127.0.0.1", a.port), timeout=5):
            pass
        # the server's files live in the chroot, owned by the chroot's mysql user; the lab's
        # folder outside it links there
        assert a.base.is_relative_to(k.root) and (tmp_path / "a").resolve() == a.base
        assert (a.datadir / "mysql").stat().st_uid == k.owner()[0]
        assert os.readlink(f"/proc/{a.pid}/root") == str(k.root)
        # two copies of one template are two servers (MySQL: its own server_uuid each)
        if k.flavor == "mysql":
            assert a.var("server_uuid") != b.var("server_uuid")
        pid = a.pid
        a.stop()
        assert not _alive(pid) and a.pid is None
        assert b.pid and _alive(b.pid)  # stopping one stops only that one
    assert not (tmp_path / "a").exists() or not (tmp_path / "a").resolve().exists()


@pytest.mark.parametrize("kind", _kinds())
def test_gtid_semisync_and_position_replicas(tmp_path, kind):
    """One primary, a GTID replica with AFTER_SYNC semisync, a file/position replica: every
    commit acknowledged, both replicas equal to the primary."""
    with Lab(tmp_path, kind=kind) as lab:
        p = lab.server("primary", 1).start()
        g = lab.server("gtid", 2).start()
        f = lab.server("position", 3).start()
        grant_replication(p)
        enable_semisync(p, g)
        connect(g, p, gtid=True)
        connect(f, p, gtid=False)
        deadline = time.monotonic() + 30
        while semisync_status(p).get(p.kind.sql.semisync_status_like.replace("%", "clients")) != "1":
            assert time.monotonic() < deadline, semisync_status(p)
            time.sleep(0.2)
        _work(p)
        for r in (g, f):
            catch_up(r, p)
        st = semisync_status(p)
        prefix = p.kind.sql.semisync_status_like.rstrip("%")
        assert st[prefix + "status"] == "ON" and int(st[prefix + "yes_tx"]) >= 20 and st[prefix + "no_tx"] == "0"
        assert p.var(p.kind.sql.executed_var) == master_status(p)["gtid_binlog_pos"]
        assert slave_status(g)["Using_Gtid"] not in (None, "No", 0, "0")
        assert slave_status(f)["Using_Gtid"] in ("No", 0, "0")
        if p.kind.sql.metadata_tables:  # MySQL: the replica's metadata in tables, auto-position on/off
            assert replication_metadata(g)["master_info"]["Enabled_auto_position"] == 1
            meta = replication_metadata(f)
            assert meta["master_info"]["Enabled_auto_position"] == 0
            assert meta["relay_log_info"]["Master_log_name"] == master_status(p)["file"]
        want = table_fingerprints(p)
        assert want["t"]["rows"] == 20
        assert table_fingerprints(g) == want == table_fingerprints(f)


@pytest.mark.parametrize("kind", _kinds())
def test_replica_killed_inside_a_transaction_resumes_with_every_row(tmp_path, kind):
    """SIGKILL (strace, at the 6th write to the relay log of a 1.5 MB transaction: inside it),
    restart a byte copy of the crashed datadir (Lab.copy_of), START REPLICA: the primary's rows,
    none lost or doubled."""
    with Lab(tmp_path, kind=kind) as lab:
        p = lab.server("primary", 1).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        connect(r, p, gtid=True)
        _work(p)
        catch_up(r, p)
        how = crash_replica(r, syscall="write", when=6, log=tmp_path / "strace.log", timeout=60,
                            workload=lambda: big(p, 3, 512 * 1024))
        assert how["returncode"] == -9
        assert not r.socket.exists()  # nothing stale left in the chroot's /run
        _work(p, 200)  # the primary goes on
        with p.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO lab.t VALUES (100, 'after')")
        copy = lab.copy_of(r, "copy", relay_log_purge="OFF")  # the crashed datadir, byte for byte
        copy.start()
        copy.execute(copy.kind.sql.start())
        catch_up(copy, p, timeout=90)
        want = table_fingerprints(p)
        assert want["big"]["rows"] == 3 and want["t"]["rows"] == 41
        assert table_fingerprints(copy) == want


def test_mysql_9_has_no_native_password_for_the_replication_user(tmp_path):
    """A clear LabError, before any statement: the 9.x server ships only the client plugin."""
    from binlogkit.errors import LabError
    from fixtures.lab import Server

    srv = Server("p", tmp_path / "p", 1, kind=KINDS["mysql-9.7"])
    with pytest.raises(LabError, match="no mysql_native_password"):
        grant_replication(srv, auth="mysql_native_password")
    assert srv.proc is None

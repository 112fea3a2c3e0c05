"""Writers as root against real servers (issue 23): a replica run as the ``mysql`` user resumes
after a root ``recover --apply``; a primary run as ``mysql`` starts after a root ``incident``; a
running server is seen through a bind mount of its folder (device and inode, not path text)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fixtures.lab import Lab, catch_up, connect, grant_replication, wait_replica
from fixtures.lab import workload
from fixtures.lab.build import crash_and_recover
from fixtures.lab.oracle import table_fingerprints

pytestmark = pytest.mark.server
CMD = [sys.executable, "-m", "binlogkit.cli"]


def _mysql_uid() -> int | None:
    try:
        return pwd.getpwnam("mysql").pw_uid
    except KeyError:
        return None


needs_root_mysql = pytest.mark.skipif(os.geteuid() != 0 or _mysql_uid() is None,
                                      reason="needs root and the mysql user (Debian's mariadb-server creates it)")


@pytest.fixture
def open_base():
    """A lab folder the mysql user can traverse (pytest's tmp_path is root-only)."""
    base = Path(tempfile.mkdtemp(prefix="binlogkit-owner-", dir="/tmp"))
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@needs_root_mysql
def test_replica_run_as_mysql_resumes_after_a_root_recover(open_base):
    r = crash_and_recover(open_base, point="rotation-small", gtid=False, owner="mysql")
    assert r["owners_after"] == r["owners_before"], (r["owners_before"], r["owners_after"])
    uid = _mysql_uid()
    assert all(o[0] == uid for o in r["owners_after"].values())
    assert r["outcome"] == "caught_up", r["status"]
    assert r["data_matches_primary"] and r["error_log"] == []


@needs_root_mysql
def test_primary_run_as_mysql_starts_after_a_root_incident(open_base):
    with Lab(open_base) as lab:
        p = lab.server("primary", 1, user="mysql").start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        connect(r, p, gtid=False)
        workload.schema(p)
        workload.small(p, 20)
        catch_up(r, p)
        r.execute("STOP SLAVE IO_THREAD")
        workload.small(p, 5, start=500)
        p.stop()
        res = subprocess.run(CMD + ["incident", str(p.datadir), "--message", "root wrote this"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert {f.stat().st_uid for f in p.datadir.iterdir() if f.name.startswith("mariadb-bin.")} == {_mysql_uid()}
        p.start()  # as mysql: it must be able to open and append to its binlogs
        r.execute("START SLAVE IO_THREAD")
        st = wait_replica(r, gtid_target="0-1-999999999", timeout=60)["status"]
        assert st["Last_SQL_Errno"] == 1590 and "root wrote this" in st["Last_SQL_Error"], st


def _bind(src: Path, dst: Path) -> bool:
    dst.mkdir(parents=True, exist_ok=True)
    return os.geteuid() == 0 and subprocess.run(["mount", "--bind", str(src), str(dst)],
                                                capture_output=True).returncode == 0


def _sizes(d: Path) -> dict:
    return {p.name: p.stat().st_size for p in d.iterdir() if p.is_file() and p.name.startswith(("mariadb-bin", "relay-bin"))}


def test_a_live_server_is_seen_through_a_bind_mount(tmp_path):
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        connect(r, p, gtid=True)
        workload.schema(p)
        workload.small(p, 30)
        catch_up(r, p)
        pm, rm = tmp_path / "primary-volume", tmp_path / "replica-volume"
        if not _bind(p.datadir, pm):
            pytest.skip("mount --bind not permitted here")
        try:
            assert _bind(r.datadir, rm)
            try:
                before_p = _sizes(p.datadir)
                keep = p.var("gtid_binlog_pos").rsplit("-", 1)[0] + "-5"
                for args in (["incident", str(pm)], ["recover", "--binlog", "--keep-through", keep, "--apply", str(pm)]):
                    res = subprocess.run(CMD + args, capture_output=True, text=True)
                    assert res.returncode == 2 and "mariadbd" in res.stderr and "stop the server" in res.stderr, res
                assert _sizes(p.datadir) == before_p
                (r.datadir / "relay-bin.000999").write_bytes(b"")  # something for the plan to do
                before_r = _sizes(r.datadir)
                res = subprocess.run(CMD + ["recover", "--apply", str(rm)], capture_output=True, text=True)
                assert res.returncode == 2 and "mariadbd" in res.stderr, res
                assert _sizes(r.datadir) == before_r
            finally:
                subprocess.run(["umount", str(rm)])
        finally:
            subprocess.run(["umount", str(pm)])
        # and the servers go on, untouched
        workload.small(p, 5, start=900)
        catch_up(r, p)
        assert table_fingerprints(r) == table_fingerprints(p)

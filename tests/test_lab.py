"""The lab against a real mariadbd: life cycle by PID, clear failures, and a real crash."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from binlogkit import open_binlog
from binlogkit.errors import LabError, TruncatedEventError
from fixtures.lab import Lab, Server
from fixtures.lab import build, server as server_mod

pytestmark = pytest.mark.server


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split()[2] != "Z"


def _mariadbd_under(path) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"datadir={path}"], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def test_server_binds_loopback_and_stops_by_pid(tmp_path):
    with Lab(tmp_path) as lab:
        srv = lab.server("one", 7).start()
        pid = srv.pid
        assert srv.var("bind_address") == "127.0.0.1"
        assert int(srv.var("port")) == srv.port
        assert srv.query("SELECT @@log_bin AS b")[0]["b"] == 1
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5):
            pass
        srv.stop()
        assert not _alive(pid)
        assert srv.pid is None
    assert _mariadbd_under(tmp_path) == []


def test_port_in_use_is_a_clear_error_and_starts_nothing(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        srv = Server("clash", tmp_path / "clash", 8, port=port)
        with pytest.raises(LabError, match=f"port {port} .* in use"):
            srv.start()
    assert srv.proc is None
    assert _mariadbd_under(tmp_path) == []


def test_server_that_cannot_start_reports_its_log_and_leaves_nothing(tmp_path):
    srv = Server("bad", tmp_path / "bad", 9, options={"no_such_option_at_all": 1})
    with pytest.raises(LabError) as info:
        srv.start()
    assert "no-such-option-at-all" in str(info.value) or "unknown" in str(info.value).lower()
    assert srv.pid is None and not server_mod._RUNNING
    assert _mariadbd_under(tmp_path) == []


def test_missing_server_binary_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(server_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(server_mod.os.path, "exists", lambda p: False)
    with pytest.raises(LabError, match="mariadb-server"):
        server_mod._binary("mariadbd", "mysqld")


def test_deps_script_without_root_says_what_to_run(tmp_path):
    """No root and something missing: exit 1 with the apt-get line to run, no apt call."""
    env = dict(os.environ, DEPS_UID="1000", PATH=str(tmp_path))  # nothing is found on PATH
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    res = subprocess.run(["/bin/bash", "scripts/install-deps.sh"], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    if os.path.exists("/usr/sbin/mariadbd") and "strace" not in res.stderr and res.returncode == 0:
        pytest.skip("everything present: nothing to install")
    assert res.returncode == 1
    assert "not root" in res.stderr and "apt-get install -y" in res.stderr


@pytest.mark.parametrize("point,gtid", [("torn", False), ("partial", True)])
def test_crash_scenario_end_to_end(tmp_path, point, gtid):
    """A reduced crash run in CI: real kill at the syscall, snapshot, truth from mariadb-binlog,
    MariaDB restarted with relay_log_recovery=0/1; binlogkit's reader agrees with the truth."""
    out = tmp_path / f"crash-{point}"
    m = build.build_crash(out, point=point, gtid=gtid, big_rows=4, small_count=40)
    truth = m["truth"]
    relay = out / "relay"
    for f in truth["files"]:
        stored = relay / (f["name"] + ".xz") if (relay / (f["name"] + ".xz")).exists() else relay / f["name"]
        events, err = [], None
        try:
            events.extend(open_binlog(str(stored)))
        except TruncatedEventError as exc:
            err = exc
        assert len(events) == f["events"]
        assert (err.offset if err else None) == f["torn_at"]
    assert m["crash"]["returncode"] == -9
    runs = {r["relay_log_recovery"]: r for r in m["mariadb_restart"]}
    assert runs[1]["outcome"] == "caught_up" and runs[1]["data_matches_primary"]
    if point == "torn":
        assert truth["torn"] and runs[0]["last_sql_errno"] == 1594
    else:
        assert truth["partial_transaction"] and not truth["torn"]
    assert (out / "README.md").read_text().startswith(f"# crash-{point}")

"""``export --mirror --follow --host`` through a primary failover to a GTID replica, on lab servers
under a live workload: a follower on the primary (pull's folder as its input), the primary killed
with SIGKILL (the follower with it), the replica promoted (its replication account created and
granted again, outside the binlog) and taking writes (an ALTER TABLE ADD COLUMN among them), the
follower started again with the same warehouse and input, pointed at the
new primary: it continues by GTID state, into a folder of that server's own
(``WAREHOUSE/_binlogkit_pull.server-2``), killed once more and started again. The mirror then
equals the new primary's table value by value, its change table holds each row change once (by
GTID and row: the two servers' binlogs share file names), and the checkpoint's state is a set
over both servers (MySQL: two UUIDs). Then the stops: the old primary restarted (it lacks the new
primary's transactions the mirror holds) is refused, exit 1, those GTIDs named; a copy of the
warehouse taken before the failover, pointed at the new primary after it purged its binlogs,
stops exit 1, purged_on_primary (MySQL: named from gtid_purged; MariaDB: pull's error 1236).

``LAKE_FOLLOW_FAILOVER_SECONDS`` of writes on each primary (3 in the suite; ``make
lake-follow-soak``: 15)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.export.lake.mirror import open_sink
from fixtures.lab import Lab, catch_up, connect, grant_replication
from fixtures.lab.topology import promote
from fixtures.lab.pull_lab import REPL_USER, Writer, kill9, password_file, settle, start_primary

from followers import STARTED, lock_free, mirror_rows, reap_followers  # noqa: F401 (autouse: a failed test's followers stopped)

pytestmark = pytest.mark.server
pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent
SECONDS = float(os.environ.get("LAKE_FOLLOW_FAILOVER_SECONDS", "3"))
KINDS = [pytest.param("mysql-9.7", "iceberg", id="mysql-9.7-iceberg", marks=pytest.mark.kind("mysql-9.7")),
         pytest.param("mariadb-11.8", "delta", id="mariadb-11.8-delta", marks=pytest.mark.kind("mariadb-11.8"))]
COLS = ("id", "k", "v", "ts", "extra")


def _follower(folder: Path, wh: Path, server, pw: Path, log: Path, fmt: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh), "--format", fmt, "--mirror",
         "--follow", "--commit-interval", "1", "--host", "127.0.0.1", "--port", str(server.port), "--user", REPL_USER,
         "--password-file", str(pw), "--server-id", "4330", "--json"],
        stdout=subprocess.PIPE, stderr=open(log, "a"), text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
    STARTED.append(p)
    return p


def _table(server, cols: tuple) -> list:
    return sorted(tuple(r.get(c) for c in cols) for r in server.query("SELECT * FROM lab.small"))


def _wait(pred, timeout: float, what: str, proc=None, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
            pytest.fail(f"{what}: {log.read_text()[-3000:] if log else ''}")
        time.sleep(0.2)


def _run(folder: Path, wh: Path, server, pw: Path, log: Path, fmt: str) -> tuple[int, dict, str]:
    p = _follower(folder, wh, server, pw, log, fmt)
    out, _ = p.communicate(timeout=120)
    return p.returncode, json.loads(out) if out.strip() else {}, log.read_text()


@pytest.mark.parametrize("kind,fmt", KINDS)
def test_failover_to_a_gtid_replica_followed_by_gtid_state(kind, fmt, tmp_path):
    if fmt == "iceberg":
        pytest.importorskip("pyiceberg")
    folder, wh, log = tmp_path / "pulled", tmp_path / "wh", tmp_path / "follower.log"
    with Lab(tmp_path / "lab", kind=kind) as lab:
        mysql = lab.kind.flavor == "mysql"
        sql = lab.kind.sql
        old = start_primary(lab, binlog_row_metadata="FULL")
        extra = {} if mysql else {"gtid_strict_mode": 1}
        new = lab.server("replica", 2, max_binlog_size=1 << 20, binlog_row_metadata="FULL", **extra).start()
        grant_replication(new)
        connect(new, old, gtid=True)
        pw = password_file(tmp_path)
        old_uuid = old.var("server_uuid") if mysql else ""
        old.execute("ALTER TABLE lab.small ADD COLUMN extra INT DEFAULT 1")
        f = _follower(folder, wh, old, pw, log, fmt)
        writer = Writer(old, seed=46)
        writer.start()
        try:
            _wait(lambda: mirror_rows(fmt, wh, COLS), 60, "the follower applied nothing", f, log)
            time.sleep(SECONDS)
            writer.pause()
            catch_up(new, old)
            # the primary dies, the follower with it (SIGKILL: its pull child gets SIGTERM)
            old.kill9()
            kill9(f)
            _wait(lambda: lock_free(folder), 30, "pull's lock")
            before = tmp_path / "wh-before"
            shutil.copytree(wh, before)
            # the replica promoted: replication reset, it takes the writes
            promote(new)
            grant_replication(new)      # as a DBA does on a promoted replica (sql_log_bin=0)
            writer.server = new
            writer.resume()
            time.sleep(SECONDS / 2)
            new.execute("ALTER TABLE lab.small ADD COLUMN extra2 INT DEFAULT 7")
            # the same command, pointed at the new primary
            f = _follower(folder, wh, new, pw, log, fmt)
            time.sleep(SECONDS / 2 + 1)
            kill9(f)         # and once more, mid-stream, after it crossed over
            _wait(lambda: lock_free(wh / "_binlogkit_pull.server-2"), 30, "pull's lock")
            f = _follower(folder, wh, new, pw, log, fmt)
            time.sleep(SECONDS / 2)
        finally:
            writer.stop()
        assert writer.error is None, writer.error
        settle(new)
        cols = COLS + ("extra2",)
        want = _table(new, cols)
        _wait(lambda: mirror_rows(fmt, wh, cols) == want, 90, "the mirror did not catch up", f, log)
        f.send_signal(signal.SIGTERM)
        out, _ = f.communicate(timeout=120)
        err = log.read_text()
        assert f.returncode == 0, err[-3000:]
        assert "Traceback" not in err
        doc = json.loads(out)
        assert doc["pull_exit"] is None and doc["problems"] == [] and doc["gap"] is None
        assert sorted(os.listdir(wh / "_binlogkit_pull.server-2"))     # the new primary's own folder
        ck = json.loads((wh / "_binlogkit_follow.json").read_text())
        assert ck["source"] == 2 and ck["by_gtid"] is True
        executed = new.var(sql.executed_var)
        if mysql:
            from binlogkit.gtid.mysql import MysqlGtidSet

            held = MysqlGtidSet.parse(ck["gtid_state"])
            assert old_uuid in ck["gtid_state"] and new.var("server_uuid") in ck["gtid_state"], ck
            assert held <= MysqlGtidSet.parse(executed.replace("\n", "")), (ck, executed)
        else:
            assert ck["gtid_state"].startswith("0-2-"), (ck, executed)
        got = mirror_rows(fmt, wh, cols)
        assert len(got) == len(want) > 100 and got == want
        changes = open_sink(fmt, str(wh)).read("lab", "small__changes").to_pylist()
        places = [(r["gtid"], r["row_index"]) for r in changes]
        assert len(places) == len(set(places))
        servers = {r["server_id"] for r in changes}
        assert servers == {1, 2}

        # the old primary back (it lacks what the new one wrote since): refused, named
        old.start()
        code, doc, err = _run(folder, wh, old, pw, log, fmt)
        assert code == 1 and doc["gap"]["kind"] == "errant_on_mirror", err[-2000:]
        if mysql:
            assert new.var("server_uuid") in doc["gap"]["gtids"]
        else:
            assert doc["gap"]["gtids"].startswith("0-2-")
        assert "errant_on_mirror" in err and "Traceback" not in err
        assert not (wh / "_binlogkit_pull.server-1").exists()   # pull never started
        old.stop()

        # a warehouse from before the failover, the new primary's binlogs purged since
        new.execute("FLUSH BINARY LOGS")
        newest = new.query("SHOW BINARY LOGS")[-1]["Log_name"]
        new.execute(f"PURGE BINARY LOGS TO '{newest}'")
        code, doc, err = _run(folder, before, new, pw, log, fmt)
        assert code == 1, err[-2000:]
        assert "purged_on_primary" in err and "Traceback" not in err
        if mysql:
            assert doc["gap"]["kind"] == "purged_on_primary" and new.var("server_uuid") in doc["gap"]["gtids"]
        assert mirror_rows(fmt, before, COLS)      # what it held, untouched

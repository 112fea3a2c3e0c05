"""``export --mirror --follow --host``: faults on the pull side while following a lab primary under
a live workload — pull's connection cut in the middle of a transaction (``fixtures.cutproxy``
holds the primary's bytes part way, then drops the connection), cut again abruptly, and the
primary restarted (a clean shutdown, a new binlog after it). Pull reconnects by itself (its
backoff), cutting what a cut left half written; the follower, reading only whole committed
transactions, goes on; after each restart an ALTER TABLE ADD COLUMN with a default (a DDL
mid-stream, the writer's changes after it). Then the mirror equals the primary's table value by value and its
change table holds each row change once, on the host's MariaDB (10.11 or 11.8, into Delta),
MariaDB 11.8 from the lab's chroot and MySQL 9.7 (into Iceberg).

``LAKE_FOLLOW_FAULTS`` rounds of the three faults (1 in the suite; ``make lake-follow-soak``: 5)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.export.lake.mirror import open_sink
from fixtures.cutproxy import CutProxy
from fixtures.lab import Lab
from fixtures.lab.pull_lab import REPL_USER, Writer, password_file, settle, start_primary

from followers import STARTED, mirror_rows, pulled_whole, reap_followers  # noqa: F401 (autouse: a failed test's followers stopped)

pytestmark = pytest.mark.server
pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(os.environ.get("LAKE_FOLLOW_FAULTS", "1"))
KINDS = [pytest.param(None, "delta", id="host-mariadb-delta"),
         pytest.param("mariadb-11.8", "delta", id="mariadb-11.8-delta", marks=pytest.mark.kind("mariadb-11.8")),
         pytest.param("mysql-9.7", "iceberg", id="mysql-9.7-iceberg", marks=pytest.mark.kind("mysql-9.7"))]
COLS = ("id", "k", "v", "ts")


@pytest.mark.parametrize("kind,fmt", KINDS)
def test_pulls_connection_cut_and_the_primary_restarted_while_following(kind, fmt, tmp_path):
    if fmt == "iceberg":
        pytest.importorskip("pyiceberg")
    rng = random.Random(45)
    folder, wh = tmp_path / "pulled", tmp_path / "wh"
    with Lab(tmp_path / "lab", kind=kind) as lab:
        primary = start_primary(lab, binlog_row_metadata="FULL")
        pw = password_file(tmp_path)
        with CutProxy(primary.port) as px:
            follower = subprocess.Popen(
                [sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh), "--format", fmt,
                 "--mirror", "--follow", "--commit-interval", "1", "--host", "127.0.0.1", "--port", str(px.port),
                 "--user", REPL_USER, "--password-file", str(pw), "--server-id", "4310", "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
            STARTED.append(follower)
            writer = Writer(primary, seed=45)
            writer.start()
            deadline = time.monotonic() + 60      # pull is streaming (its first connection is not retried)
            while not (folder / "mariadb-bin.index").exists() and not (folder / "binlog.index").exists():
                assert time.monotonic() < deadline and follower.poll() is None, follower.stderr.read()
                time.sleep(0.1)
            try:
                for r in range(ROUNDS):
                    time.sleep(rng.uniform(1.0, 2.0))
                    # the primary's next bytes reach pull part way (inside an event, a
                    # transaction), then the connection drops
                    px.cut_after(rng.randrange(200, 3000))
                    px.held(20)
                    px.drop()
                    px.cut_after(None)
                    time.sleep(rng.uniform(1.0, 2.0))
                    px.drop()                           # abrupt, wherever the stream is
                    time.sleep(rng.uniform(1.0, 2.0))
                    writer.pause()
                    primary.stop()                      # a restart: pull's dump ends, it reconnects
                    primary.start()
                    # a DDL mid-stream: a column added with a default, the writer's changes after it
                    primary.execute(f"ALTER TABLE lab.small ADD COLUMN extra{r} INT DEFAULT {r + 5}")
                    writer.resume()
            finally:
                writer.stop()
            assert writer.error is None, writer.error
            settle(primary)
            deadline = time.monotonic() + 60
            while not pulled_whole(primary, folder):
                if time.monotonic() > deadline:
                    follower.send_signal(signal.SIGTERM)
                    out, err = follower.communicate(timeout=120)
                    pytest.fail(f"pull did not catch up: {primary.query('SHOW BINARY LOGS')} {sorted(os.listdir(folder))}"
                                f"\n{err[-3000:]}")
                time.sleep(0.2)
            cols = COLS + tuple(f"extra{r}" for r in range(ROUNDS))
            want = sorted(tuple(r[c] for c in cols) for r in primary.query("SELECT * FROM lab.small"))
            # the follower, still running, catches up with what pull wrote (a SIGTERM commits what
            # it has read and stops: it does not wait for the rest)
            deadline = time.monotonic() + 90
            while mirror_rows(fmt, wh, cols) != want and time.monotonic() < deadline and follower.poll() is None:
                time.sleep(0.5)
            follower.send_signal(signal.SIGTERM)
            out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, err
        assert "Traceback" not in err and "reconnect" in err
        doc = json.loads(out)
        assert doc["pull_exit"] is None and doc["problems"] == []
    sink = open_sink(fmt, str(wh))
    got = mirror_rows(fmt, wh, cols)
    assert len(got) == len(want) > 100 and got == want
    places = [(r["file"], r["offset"], r["row_index"]) for r in sink.read("lab", "small__changes").to_pylist()]
    assert len(places) == len(set(places))


@pytest.mark.parametrize("kind,fmt", [pytest.param("mysql-9.7", "iceberg", id="mysql-9.7-iceberg",
                                                    marks=pytest.mark.kind("mysql-9.7"))])
def test_pull_that_cannot_reach_the_primary_is_in_the_status_file(kind, fmt, tmp_path):
    """The primary down under a follower: pull retries with its backoff, and the follower's status
    file says so (``pull``: reconnecting, the reason, since when, the next try in at most 30 s)
    instead of a lag of 0 while the primary moves on; the primary back (its replication account
    granted again, sql_log_bin=0, as a DBA does after a restart or a promotion), pull streams
    again and the mirror catches up."""
    from fixtures.lab import workload

    if fmt == "iceberg":
        pytest.importorskip("pyiceberg")
    folder, wh, st = tmp_path / "pulled", tmp_path / "wh", tmp_path / "status.json"
    with Lab(tmp_path / "lab", kind=kind) as lab:
        primary = start_primary(lab, binlog_row_metadata="FULL")
        pw = password_file(tmp_path)
        follower = subprocess.Popen(
            [sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh), "--format", fmt, "--mirror",
             "--follow", "--commit-interval", "0.5", "--host", "127.0.0.1", "--port", str(primary.port), "--user",
             REPL_USER, "--password-file", str(pw), "--server-id", "4311", "--status-file", str(st), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
        STARTED.append(follower)

        def status_until(pred, what: str, timeout: float = 60) -> dict:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    doc = json.loads(st.read_text())
                except (OSError, ValueError):
                    doc = {}
                if pred(doc):
                    return doc
                if time.monotonic() > deadline or follower.poll() is not None:
                    follower.send_signal(signal.SIGTERM)
                    pytest.fail(f"{what}: {doc} {follower.communicate(timeout=120)[1][-3000:]}")
                time.sleep(0.2)

        def want() -> list:
            return sorted(tuple(r[c] for c in COLS) for r in primary.query("SELECT * FROM lab.small"))
        workload.small(primary, 30)
        rows = want()
        status_until(lambda d: mirror_rows(fmt, wh, COLS) == rows and d.get("pull", {}).get("state") == "streaming",
                     "the follower did not apply the first transactions")
        primary.stop()
        doc = status_until(lambda d: d.get("pull", {}).get("state") == "reconnecting"
                           and d["pull"].get("failed_in_a_row", 0) >= 2, "pull's reconnecting is not in the status")
        p = doc["pull"]
        assert p["reason"] and 0 < p["retry_in_s"] <= 30 and p["since"] <= p["retry_at"], p
        primary.start()
        primary.execute("SET sql_log_bin=0", f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'127.0.0.1'",
                        "SET sql_log_bin=1")
        workload.small(primary, 30, start=30)
        rows = want()
        doc = status_until(lambda d: mirror_rows(fmt, wh, COLS) == rows and d["pull"]["state"] == "streaming",
                           "the mirror did not catch up after the primary came back")
        assert doc["pull"]["reconnects"] >= 1 and "reason" not in doc["pull"], doc
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=120)
    assert follower.returncode == 0, err
    assert "Traceback" not in err and "reconnecting in" in err and "reconnected; resuming at" in err
    assert json.loads(out)["pull_exit"] is None

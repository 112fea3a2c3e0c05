"""``export --follow`` on a folder ``binlogkit pull`` is filling, against real primaries under a
live workload (the host's MariaDB 10.11 into Delta; MariaDB 11.8 and MySQL 9.7 from the lab's
chroots into Iceberg).

The primary takes small transactions (inserts, updates that change keys' columns, deletes),
rollbacks, CREATE/DROP TABLE and FLUSH BINARY LOGS (many rotations, 1 MB binlogs) from a writer
thread; ``binlogkit pull`` copies its binlogs into a folder; ``binlogkit export FOLDER --mirror
--follow`` applies them as they arrive, and is killed with SIGKILL at random moments and started
again (each restart continues from the warehouse's checkpoint). Then the writer stops, the
follower gets SIGTERM (exit 0, its checkpoint at a batch's end), and a last restart catches up with
the folder. The mirror then equals the primary's table value by value, and the change table holds
each row change of the folder once: the same rows as a plain ``export`` of the folder makes.
"""

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

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.follow import CHECKPOINT, follow_lake
from binlogkit.export.lake.mirror import open_sink
from fixtures.lab import Lab
from fixtures.lab.pull_lab import (PULL_SERVER_ID, REPL_USER, Writer, kill9, password_file, run_pull, settle,
                                   start_primary, start_pull)

from followers import pulled_whole

pytestmark = pytest.mark.server
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent
KILLS = int(os.environ.get("LAKE_FOLLOW_KILLS", "3"))     # make lake-follow-soak: TRIALS (20)
KINDS = [pytest.param("mariadb-10.11", "delta", id="mariadb-10.11-delta"),
         pytest.param("mariadb-11.8", "iceberg", id="mariadb-11.8-iceberg", marks=pytest.mark.kind("mariadb-11.8")),
         pytest.param("mysql-9.7", "iceberg", id="mysql-9.7-iceberg", marks=pytest.mark.kind("mysql-9.7"))]


def _follower(folder: Path, wh: Path, fmt: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh), "--format", fmt,
                             "--mirror", "--follow", "--commit-interval", "1", "--batch-transactions", "40"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)


@pytest.mark.parametrize("kind,fmt", KINDS)
def test_follow_a_pulled_folder_under_load_with_kills(kind, fmt, tmp_path):
    rng = random.Random(44)
    folder, wh = tmp_path / "pulled", tmp_path / "wh"
    folder.mkdir()
    with Lab(tmp_path / "lab", kind=None if kind == "mariadb-10.11" else kind) as lab:
        primary = start_primary(lab, binlog_row_metadata="FULL")
        pull = start_pull(primary, folder)
        writer = Writer(primary, seed=44)
        writer.start()
        follower = _follower(folder, wh, fmt)
        kills = 0
        try:
            for _ in range(KILLS):
                time.sleep(rng.uniform(1.5, 4.0))
                kill9(follower)              # anywhere: mid-batch, between two tables' commits, ...
                kills += 1
                follower = _follower(folder, wh, fmt)
            time.sleep(rng.uniform(1.5, 3.0))
        finally:
            writer.stop()
        assert writer.error is None, writer.error
        settle(primary)
        deadline = time.monotonic() + 60
        while not pulled_whole(primary, folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pulled_whole(primary, folder)
        time.sleep(2)
        # on a loaded machine the last follower (and every one killed before it) may not have
        # committed yet: a SIGTERM before its first look stops it with nothing read
        while not (wh / CHECKPOINT).exists() and time.monotonic() < deadline + 60:
            time.sleep(0.2)
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, err
        assert "Traceback" not in err
        ck = json.loads((wh / CHECKPOINT).read_text())
        assert ck["file"] and ck["position"] > 0
        # a last restart: from the checkpoint, up to what the folder holds, then stop
        follow_lake([folder], str(wh), fmt=fmt, batch_transactions=40, commit_interval=1, stop_after=0)
        want = sorted(tuple(r.values()) for r in primary.query("SELECT id, k, v, ts FROM lab.small"))
        kill9(pull)
    assert kills == KILLS and writer.n > 10
    sink = open_sink(fmt, str(wh))
    got = sorted(tuple(r[c] for c in ("id", "k", "v", "ts")) for r in sink.read("lab", "small").to_pylist())
    assert len(got) == len(want) and got == want
    # every row change once: what a plain export of the folder makes
    export_lake([folder], str(tmp_path / "plain"), fmt=fmt, mirror=True, batch_transactions=1000)
    plain = open_sink(fmt, str(tmp_path / "plain"))
    changes = sink.read("lab", "small__changes").to_pylist()
    places = [(r["file"], r["offset"], r["row_index"]) for r in changes]
    assert len(places) == len(set(places))
    assert sorted(places) == sorted((r["file"], r["offset"], r["row_index"])
                                    for r in plain.read("lab", "small__changes").to_pylist())


def test_follow_a_primary_through_pulls_client(tmp_path):
    """``--host ...``: the follower runs ``binlogkit pull`` into the folder itself and applies what
    it has written, an ALTER TABLE ADD COLUMN with a default among it; SIGTERM stops both (the folder's pull lock is free after: a second pull on it
    runs), exit 0; the mirror then equals the primary's table."""
    folder, wh = tmp_path / "pulled", tmp_path / "wh"
    with Lab(tmp_path / "lab") as lab:
        primary = start_primary(lab, binlog_row_metadata="FULL")
        pw = password_file(tmp_path)
        follower = subprocess.Popen(
            [sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh), "--format", "delta", "--mirror",
             "--follow", "--commit-interval", "1", "--host", "127.0.0.1", "--port", str(primary.port), "--user",
             REPL_USER, "--password-file", str(pw), "--server-id", str(PULL_SERVER_ID), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
        writer = Writer(primary, seed=7)
        writer.start()
        time.sleep(4)
        writer.stop()
        assert writer.error is None, writer.error
        # a DDL mid-stream, while the follower runs: a column added with a default (the
        # mirror's rows take it), then changes of it
        primary.execute("ALTER TABLE lab.small ADD COLUMN extra INT DEFAULT 5",
                        "UPDATE lab.small SET extra = 6 WHERE id % 2 = 0",
                        "INSERT INTO lab.small (k, v, ts, extra) VALUES (1, 'after the alter', '2024-01-02', 7)")
        settle(primary)
        deadline = time.monotonic() + 60
        while not pulled_whole(primary, folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pulled_whole(primary, folder)
        time.sleep(3)
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, err
        doc = json.loads(out)
        assert doc["follow"] and doc["pull_exit"] is None and doc["rows"] > 0
        done = run_pull(primary, folder, "--until-end", pwfile=pw)     # the child pull is gone: its lock is free
        assert done.returncode == 0, done.stderr
        follow_lake([folder], str(wh), fmt="delta", batch_transactions=40, commit_interval=1, stop_after=0)
        want = sorted(tuple(r.values()) for r in primary.query("SELECT id, k, v, ts, extra FROM lab.small"))
    got = sorted(tuple(r[c] for c in ("id", "k", "v", "ts", "extra"))
                 for r in open_sink("delta", str(wh)).read("lab", "small").to_pylist())
    assert got == want

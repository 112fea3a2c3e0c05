"""``export ARCHIVE --mirror --follow --host ...``: the mirror is built from an archive (a copy of
a lab primary's older binlogs, one of them gzipped), then continues live through ``binlogkit
pull`` (its folder in the warehouse), starting where the archive ends — while the primary has
purged the binlogs the archive holds, keeps writing (rotations, DDL) and purges more. One primary,
three followers at once:

* the archive's files are whole (its last one ends with a Rotate): pull starts with the next one;
* the archive's last file was copied while the primary wrote it: pull starts with that file, the
  follower reads the archive's copy, then pull's once it holds as much (the same bytes), nothing
  applied twice;
* the archive ends before the primary's oldest binlog: exit 1 naming the gap, with everything the
  archive holds committed (the mirror equals a plain export of the archive).

The first follower is killed with SIGKILL mid-stream and started again (its pull child stops
with it). The first two mirrors then equal the primary's table value by value."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.follow import CHECKPOINT
from binlogkit.export.lake.mirror import open_sink
from fixtures.lab import Lab
from fixtures.lab import workload
from fixtures.lab.pull_lab import REPL_USER, Writer, binlog_names, kill9, password_file, primary_binlogs, settle, start_primary

from followers import STARTED, lock_free, pulled_whole, reap_followers  # noqa: F401 (autouse: a failed test's followers stopped)

pytestmark = pytest.mark.server
pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent
KINDS = [pytest.param("mariadb", "delta", id="mariadb-delta"),
         pytest.param("mysql-9.7", "iceberg", id="mysql-9.7-iceberg", marks=pytest.mark.kind("mysql-9.7"))]
COLS = ("id", "k", "v", "ts")



def _follower(archive: Path, wh: Path, fmt: str, primary, pw: Path, server_id: int,
              log: Path | None = None) -> subprocess.Popen:
    out = subprocess.PIPE if log is None else open(log, "w")    # a log: pull's output has a reader to the end
    STARTED.append(subprocess.Popen(
        [sys.executable, "-m", "binlogkit", "export", str(archive), "-o", str(wh), "--format", fmt, "--mirror",
         "--follow", "--commit-interval", "1", "--host", "127.0.0.1", "--port", str(primary.port), "--user",
         REPL_USER, "--password-file", str(pw), "--server-id", str(server_id), "--json"],
        stdout=out, stderr=out, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        start_new_session=True))
    return STARTED[-1]


def _copy(primary, names: list[str], to: Path, gz: str | None = None) -> None:
    to.mkdir()
    for n in names:
        if n == gz:
            with open(primary.datadir / n, "rb") as src, gzip.open(to / (n + ".gz"), "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copy(primary.datadir / n, to / n)


def _rows(fmt: str, wh: Path, cols=COLS) -> list:
    return sorted(tuple(r[c] for c in cols) for r in open_sink(fmt, str(wh)).read("lab", "small").to_pylist())


@pytest.mark.parametrize("kind,fmt", KINDS)
def test_the_archive_then_live_from_a_primary_that_purged_it(kind, fmt, tmp_path):
    if fmt == "iceberg":
        pytest.importorskip("pyiceberg")
    with Lab(tmp_path / "lab", kind=None if kind == "mariadb" else kind) as lab:
        primary = start_primary(lab, binlog_row_metadata="FULL")
        pw = password_file(tmp_path)
        for i in range(4):                          # files 1..4 hold changes, 5 is active
            workload.small(primary, 30, start=i * 30)
            primary.execute("FLUSH BINARY LOGS")
        workload.small(primary, 30, start=120)
        names = primary_binlogs(primary)
        assert len(names) == 5
        settle(primary)
        _copy(primary, names[:3], tmp_path / "whole", gz=names[0])     # ends with a Rotate naming names[3]
        _copy(primary, names, tmp_path / "active")                      # its last file: being written
        _copy(primary, names[:2], tmp_path / "short")                   # lacks names[2], purged below
        primary.execute(f"PURGE BINARY LOGS TO '{names[3]}'")
        assert primary_binlogs(primary)[0] == names[3]
        fs = {w: _follower(tmp_path / w, tmp_path / f"wh-{w}", fmt, primary, pw, 4300 + j,
                           tmp_path / "first.log" if w == "whole" else None)
              for j, w in enumerate(("whole", "active", "short"))}
        writer = Writer(primary, seed=9)
        writer.start()
        time.sleep(2)
        # the first follower killed with SIGKILL mid-stream: its pull child goes too (the
        # parent-death signal: the folder's lock is free), a restart continues from the
        # checkpoint, pull from its folder
        while not (tmp_path / "wh-whole" / "_binlogkit_pull" / names[3]).exists():
            time.sleep(0.1)             # pull runs
        kill9(fs["whole"])
        deadline = time.monotonic() + 30
        while not lock_free(tmp_path / "wh-whole" / "_binlogkit_pull"):
            assert time.monotonic() < deadline, "the killed follower's pull still holds its folder"
            time.sleep(0.1)
        fs["whole"] = _follower(tmp_path / "whole", tmp_path / "wh-whole", fmt, primary, pw, 4300)
        time.sleep(1)
        primary.execute("ALTER TABLE lab.small ADD COLUMN extra INT DEFAULT 5")
        time.sleep(2)
        writer.stop()
        assert writer.error is None, writer.error
        primary.execute(f"PURGE BINARY LOGS TO '{primary_binlogs(primary)[-2]}'")
        workload.small(primary, 20, start=900000)
        settle(primary)
        # the gap: exit 1 naming the file the archive lacks and the primary purged
        out, err = fs["short"].communicate(timeout=120)
        assert fs["short"].returncode == 1, err
        assert "archive gap (purged_on_primary" in err and names[2] in err and "Traceback" not in err
        assert json.loads(out)["gap"]["file"] == names[2]
        deadline = time.monotonic() + 60
        while not all(pulled_whole(primary, tmp_path / f"wh-{w}" / "_binlogkit_pull") for w in ("whole", "active")):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        want = sorted(tuple(r[c] for c in COLS + ("extra",)) for r in primary.query("SELECT * FROM lab.small"))
        docs = {}
        for w in ("whole", "active"):
            # the follower, still running, catches up with what pull wrote (a SIGTERM commits what
            # it has read and stops: it does not wait for the rest)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and fs[w].poll() is None:
                try:
                    if _rows(fmt, tmp_path / f"wh-{w}", COLS + ("extra",)) == want:
                        break
                except Exception:       # no column extra yet
                    pass
                time.sleep(0.5)
            fs[w].send_signal(signal.SIGTERM)
            out, err = fs[w].communicate(timeout=120)
            assert fs[w].returncode == 0, err
            docs[w] = json.loads(out)
    for w in ("whole", "active"):
        got = _rows(fmt, tmp_path / f"wh-{w}", COLS + ("extra",))
        assert len(got) == len(want) and got == want, w
        changes = open_sink(fmt, str(tmp_path / f"wh-{w}")).read("lab", "small__changes").to_pylist()
        places = [(r["file"], r["offset"], r["row_index"]) for r in changes]
        assert len(places) == len(set(places)), w           # nothing applied twice
        assert json.loads((tmp_path / f"wh-{w}" / CHECKPOINT).read_text())["file"] > names[3]
        assert docs[w]["rows"] > 0 and docs[w]["pull_exit"] is None
    # where pull started: the file after the whole archive's last one; the active file itself
    assert binlog_names(tmp_path / "wh-whole" / "_binlogkit_pull")[0] == names[3]
    assert binlog_names(tmp_path / "wh-active" / "_binlogkit_pull")[0] == names[4]
    # the gap case committed everything the archive holds: a plain export of it
    export_lake([tmp_path / "short"], str(tmp_path / "plain"), fmt=fmt, mirror=True)
    assert _rows(fmt, tmp_path / "wh-short") == _rows(fmt, tmp_path / "plain")

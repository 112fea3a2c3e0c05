"""``export --follow`` on files (the committed row-types-full-metadata fixture: three binlogs of
a MariaDB 10.11 server), without a server: files arriving while it follows, the checkpoint and a
restart that does not read the archive again, the status file, SIGTERM, a gap, refusals."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from binlogkit.errors import ArchiveGap, UsageError
from binlogkit.export.lake import export_lake
from binlogkit.export.lake.follow import CHECKPOINT, follow_lake
from binlogkit.export.lake.mirror import open_sink
from fixtures import store

pytest.importorskip("deltalake")

ROOT = Path(__file__).resolve().parent.parent
NAMES = ["mariadb-bin.000001", "mariadb-bin.000002", "mariadb-bin.000003"]


def _src() -> Path:
    return store.materialize("row-types-full-metadata") / "primary"


def _tables(wh: Path) -> dict:
    sink = open_sink("delta", str(wh))
    return {f"{db}.{t}": sorted(map(repr, sink.read(db, t).to_pylist())) for db, t in sink.table_names()}


def test_files_arriving_are_applied_and_a_restart_starts_at_the_checkpoint(tmp_path):
    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, folder / n)

    def later():
        time.sleep(1.5)
        shutil.copy(_src() / NAMES[2], folder / (NAMES[2] + ".tmp"))
        os.replace(folder / (NAMES[2] + ".tmp"), folder / NAMES[2])
    threading.Thread(target=later).start()
    status = tmp_path / "status.json"
    s = follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, commit_interval=0.5, stop_after=4,
                    status_file=str(status))
    assert s["transactions"] == 49 and s["problems"] == [] and s["incomplete"] == []
    ck = json.loads((wh / CHECKPOINT).read_text())
    assert (ck["file"], ck["gtid"], ck["gtid_state"]) == (NAMES[2], "0-1-49", "0-1-49")
    st = json.loads(status.read_text())
    assert st["lag_seconds"] == 0 and st["last_gtid"] == "0-1-49" and st["rows"] == s["rows"] > 0
    assert st["commits"] == s["commits"] and st["file"] == NAMES[2]
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _tables(wh) == _tables(tmp_path / "plain")
    # the restart reads from the checkpoint's file: the older ones may be gone
    (folder / NAMES[0]).unlink()
    (folder / NAMES[1]).unlink()
    again = follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, commit_interval=0.5, stop_after=0)
    assert again["commits"] == 0 and again["skipped_rows"] == 0 and again["problems"] == []
    assert _tables(wh) == _tables(tmp_path / "plain")


def test_a_checkpoint_past_every_tables_commit_is_refused(tmp_path):
    folder, wh = tmp_path / "in", tmp_path / "wh"
    shutil.copytree(_src(), folder)
    follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0)
    ck = json.loads((wh / CHECKPOINT).read_text())
    (wh / CHECKPOINT).write_text(json.dumps({**ck, "position": ck["position"] + 1}))
    with pytest.raises(UsageError, match="past every table's last commit"):
        follow_lake([folder], str(wh), fmt="delta", stop_after=0)


def test_a_gap_stops_the_follower(tmp_path):
    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in (NAMES[0], NAMES[2]):
        shutil.copy(_src() / n, folder / n)
    with pytest.raises(ArchiveGap) as exc:
        follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=2)
    assert exc.value.summary["gap"]["kind"] == "rotate_mismatch"   # type: ignore[attr-defined]
    assert json.loads((wh / CHECKPOINT).read_text())["file"] == NAMES[0]


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "binlogkit", "export", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            **kw)


def test_sigterm_commits_what_is_whole_and_exits_0(tmp_path):
    folder, wh = tmp_path / "in", tmp_path / "wh"
    shutil.copytree(_src(), folder)
    p = _cli(folder, "-o", wh, "--format", "delta", "--mirror", "--follow", "--commit-interval", "0.5",
             "--status-file", tmp_path / "st.json", "--json")
    deadline = time.monotonic() + 120
    while not (tmp_path / "st.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    doc = json.loads(out)
    assert doc["follow"] is True and doc["signal"] == "SIGTERM" and doc["transactions"] == 49
    assert json.loads((wh / CHECKPOINT).read_text())["gtid"] == "0-1-49"


@pytest.mark.parametrize("args", [("--format", "parquet", "--follow"),
                                  ("--format", "delta", "--mirror", "--status-file", "s.json"),
                                  ("--format", "delta", "--mirror", "--follow", "--from-gtid", "0-1-5"),
                                  ("--format", "delta", "--mirror", "--follow", "--pull-dir", "p")])
def test_refusals(tmp_path, args):
    p = _cli(_src(), "-o", tmp_path / "wh", *args)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and err.startswith("binlogkit: error: "), err


def test_a_pull_that_stops_by_itself_stops_the_follower_exit_1(tmp_path):
    """``--host`` to a port nobody listens on: the pull child gives up (exit 2), the follower,
    still waiting for a first binlog, stops with exit 1 naming it."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    (tmp_path / "pw").write_text("x\n")
    (tmp_path / "pw").chmod(0o600)
    p = _cli(tmp_path / "pulled", "-o", tmp_path / "wh", "--format", "delta", "--mirror", "--follow", "--host",
             "127.0.0.1", "--port", port, "--user", "u", "--password-file", tmp_path / "pw", "--server-id", 4242)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert "binlogkit pull stopped (exit 2)" in err and "Traceback" not in err


def test_a_file_growing_under_the_follower_and_a_restart_in_its_middle(tmp_path):
    """The newest file arrives in pieces, cut anywhere (a torn event, half a transaction), as
    pull writes it: the follower applies the whole transactions, a restart continues from the
    checkpoint in the middle of the file (its head, then from there on), the GTID state it
    records is the file's, and the tables end as a plain export's."""
    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, folder / n)
    data = (_src() / NAMES[2]).read_bytes()
    cuts = [len(data) // 3 + 7, 2 * len(data) // 3 + 1, len(data)]
    (folder / NAMES[2]).write_bytes(data[:cuts[0]])
    first = follow_lake([folder], str(wh), fmt="delta", batch_transactions=3, commit_interval=0.2, stop_after=0)
    ck1 = json.loads((wh / CHECKPOINT).read_text())
    assert first["problems"] == [] and ck1["file"] == NAMES[2] and 4 < ck1["position"] < cuts[0]
    seen = []

    def grow(m):
        if len(seen) < 2:
            with open(folder / NAMES[2], "ab") as fh:
                fh.write(data[cuts[len(seen)]:cuts[len(seen) + 1]])
            seen.append(1)
    again = follow_lake([folder], str(wh), fmt="delta", batch_transactions=3, commit_interval=0.2, poll=0.2,
                        stop_after=3, on_poll=grow)
    assert again["problems"] == [] and len(seen) == 2
    ck = json.loads((wh / CHECKPOINT).read_text())
    assert (ck["gtid"], ck["gtid_state"]) == ("0-1-49", "0-1-49")
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _tables(wh) == _tables(tmp_path / "plain")


def test_the_checkpoint_and_status_file_are_never_written_through_a_link(tmp_path):
    """The checkpoint and the status file are replaced as every writer replaces a file
    (``writing.safeio``: an exclusive temporary of a random name, fsync, rename): a link planted
    at the name a plain ``NAME.tmp`` would take is left alone (its target unchanged), and a link
    at the checkpoint's own name is refused (``WriteRefused``), not replaced nor written through."""
    from binlogkit.errors import WriteRefused

    folder, wh = tmp_path / "in", tmp_path / "wh"
    shutil.copytree(_src(), folder)
    wh.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (wh / (CHECKPOINT + ".tmp")).symlink_to(victim)
    (tmp_path / "st.json.tmp").symlink_to(victim)
    follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0,
                status_file=str(tmp_path / "st.json"))
    assert victim.read_text() == "keep me\n"
    assert not (wh / CHECKPOINT).is_symlink() and json.loads((wh / CHECKPOINT).read_text())["gtid"] == "0-1-49"
    assert json.loads((tmp_path / "st.json").read_text())["last_gtid"] == "0-1-49"
    assert (wh / (CHECKPOINT + ".tmp")).is_symlink()
    # a link at the status file's name: refused (nothing was committed: the follower had
    # caught up), its target unchanged; one at the checkpoint's name: refused, never read
    (tmp_path / "st.json").unlink()
    (tmp_path / "st.json").symlink_to(victim)
    with pytest.raises(WriteRefused, match="not a regular file"):
        follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0,
                    status_file=str(tmp_path / "st.json"))
    assert victim.read_text() == "keep me\n"
    victim.write_text((wh / CHECKPOINT).read_text())
    (wh / CHECKPOINT).unlink()
    (wh / CHECKPOINT).symlink_to(victim)
    with pytest.raises(UsageError, match="a link"):
        follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0)


def _mirrors(wh: Path) -> dict:
    """The current-state tables (the change tables name a compressed file's copy as read)."""
    return {k: v for k, v in _tables(wh).items() if not k.endswith("__changes")}


def _places(wh: Path) -> list:
    sink = open_sink("delta", str(wh))
    return [(r["file"], r["offset"], r["row_index"]) for db, t in sink.table_names() if t.endswith("__changes")
            for r in sink.read(db, t).to_pylist()]


def test_an_archive_whose_last_file_was_being_written_then_pulls_copy_of_it(tmp_path):
    """The archive (its first file gzipped) ends with a copy of the file the server was writing,
    cut in a transaction; pull's folder (``buffer``) holds that file whole as pull writes it:
    the follower reads the archive's copy, then pull's (the same bytes), and the tables end as a
    plain export of the whole files, each row change once."""
    import gzip

    from binlogkit.export.lake.handover import archive_end, pull_start
    from binlogkit.export.changes import checked_inputs

    archive, buffer, wh = tmp_path / "archive", tmp_path / "pulled", tmp_path / "wh"
    archive.mkdir()
    buffer.mkdir()
    (archive / (NAMES[0] + ".gz")).write_bytes(gzip.compress((_src() / NAMES[0]).read_bytes()))
    shutil.copy(_src() / NAMES[1], archive / NAMES[1])
    data = (_src() / NAMES[2]).read_bytes()
    (archive / NAMES[2]).write_bytes(data[:len(data) // 2 + 3])
    found = checked_inputs([archive], one_series=True)
    assert archive_end(found[1]) == (NAMES[1], NAMES[2])      # whole: its Rotate names the next
    assert pull_start(found) == NAMES[2]                      # being written: that file itself
    first = follow_lake([archive], str(wh), fmt="delta", batch_transactions=5, stop_after=0, buffer=str(buffer))
    ck1 = json.loads((wh / CHECKPOINT).read_text())
    assert first["problems"] == [] and ck1["file"] == NAMES[2] and ck1["position"] < len(data) // 2
    (buffer / NAMES[2]).write_bytes(data[:100])               # pull has begun the file: shorter, not read
    seen = []

    def grow(m):        # after every look: the second makes pull's copy whole, the fourth stops
        seen.append(1)
        if len(seen) == 2:
            (buffer / NAMES[2]).write_bytes(data)
        elif len(seen) == 4:
            os.kill(os.getpid(), signal.SIGTERM)        # the follower's own handler: commit, stop
    again = follow_lake([archive], str(wh), fmt="delta", batch_transactions=5, poll=0.2, stop_after=60,
                        on_poll=grow, buffer=str(buffer))
    assert len(seen) >= 4
    assert again["problems"] == [] and again["gap"] is None
    assert json.loads((wh / CHECKPOINT).read_text())["gtid"] == "0-1-49"
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _mirrors(wh) == _mirrors(tmp_path / "plain")
    assert len(_places(wh)) == len(set(_places(wh))) == len(_places(tmp_path / "plain"))


def test_a_pulled_copy_unlike_the_archives_is_a_named_gap(tmp_path):
    """Pull's copy of the archive's last file differs from it (another server's file of that
    name): the follower stops there, ``ArchiveGap`` naming the file and byte, the archive's
    transactions committed."""
    archive, buffer, wh = tmp_path / "archive", tmp_path / "pulled", tmp_path / "wh"
    archive.mkdir()
    buffer.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, archive / n)
    data = bytearray((_src() / NAMES[2]).read_bytes())
    (archive / NAMES[2]).write_bytes(data[:len(data) // 2])
    data[300] ^= 0xFF
    (buffer / NAMES[2]).write_bytes(data)
    with pytest.raises(ArchiveGap) as exc:      # the second look, at the latest, stops at it
        follow_lake([archive], str(wh), fmt="delta", batch_transactions=5, poll=0.2, stop_after=60,
                    buffer=str(buffer))
    gap = exc.value.summary["gap"]   # type: ignore[attr-defined]
    assert (gap["kind"], gap["file"], gap["offset"]) == ("archive_mismatch", NAMES[2], 300)
    assert json.loads((wh / CHECKPOINT).read_text())["file"] == NAMES[2]


def test_a_restart_after_a_compressed_file_applies_nothing_twice(tmp_path):
    """An archive of plain and gzipped files: the follower's place in a ``NAME.000002.gz`` is in
    file 2 (binlog order by the file's number, its compressed suffix aside): a restart after it
    reads on from there, nothing applied twice, and the GTID state recorded is the file's."""
    import gzip

    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    shutil.copy(_src() / NAMES[0], folder / NAMES[0])
    (folder / (NAMES[1] + ".gz")).write_bytes(gzip.compress((_src() / NAMES[1]).read_bytes()))
    first = follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0)
    ck = json.loads((wh / CHECKPOINT).read_text())
    assert ck["gtid"] == ck["gtid_state"] == "0-1-32"
    shutil.copy(_src() / NAMES[2], folder / NAMES[2])
    again = follow_lake([folder], str(wh), fmt="delta", batch_transactions=5, stop_after=0)
    assert first["transactions"] + again["transactions"] == 49
    plain = tmp_path / "plain"
    export_lake([_src()], str(plain), fmt="delta", mirror=True, batch_transactions=5)
    assert len(_places(wh)) == len(set(_places(wh))) == len(_places(plain))
    assert _mirrors(wh) == _mirrors(plain)


def test_the_pull_folder_may_not_be_an_input(tmp_path):
    (tmp_path / "pw").write_text("x\n")
    (tmp_path / "pw").chmod(0o600)
    p = _cli(_src(), "-o", tmp_path / "wh", "--format", "delta", "--mirror", "--follow", "--host", "127.0.0.1",
             "--user", "u", "--password-file", tmp_path / "pw", "--server-id", 4242, "--pull-dir", _src())
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "--pull-dir" in err and "is an input" in err, err
    assert not (tmp_path / "wh" / "_binlogkit_pull").exists()


def test_a_trailing_alter_moves_the_checkpoint_past_it(tmp_path):
    """The last whole transaction of the folder is an ALTER whose own commit (the added column
    filled with its default) the table carries: the checkpoint moves past it too, and the
    restart on the whole file applies the rest once (MariaDB 11.8's two-phase ALTER, the committed
    sample: ``COMMIT ALTER`` of ``ADD COLUMN y INT DEFAULT 5`` ends at 1241)."""
    src = ROOT / "fixtures" / "samples" / "mariadb-11.8" / "mariadb-bin.000001"
    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    data = src.read_bytes()
    (folder / src.name).write_bytes(data[:1241])      # pull has written up to the end of the ALTER
    follow_lake([folder], str(wh), fmt="delta", commit_interval=0.2, stop_after=1)
    ck = json.loads((wh / CHECKPOINT).read_text())
    assert (ck["position"], ck["gtid"], ck["gtid_state"]) == (1241, "0-2-5", "0-2-5")
    assert open_sink("delta", str(wh)).read("t", "a").column("y").to_pylist() == [5, 5, 5]
    (folder / src.name).write_bytes(data)
    again = follow_lake([folder], str(wh), fmt="delta", stop_after=0)
    assert again["skipped_rows"] == 0 and again["problems"] == []
    export_lake([src], str(tmp_path / "plain"), fmt="delta", mirror=True)
    assert _tables(wh) == _tables(tmp_path / "plain")


def test_the_status_file_is_replaced_at_most_once_a_second_and_at_the_end(tmp_path, monkeypatch):
    """A look that finds nothing new does not replace the status file (a rename, and the
    kernel's writeback of the new file, at every look): at most once a second, at every
    commit, and at the end, which says everything committed."""
    import binlogkit.export.lake.follow as follow

    written: list[dict] = []
    real = follow.write_status

    def counted(path, doc):
        written.append(doc)
        real(path, doc)
    monkeypatch.setattr(follow, "write_status", counted)
    looks = [0]
    status = tmp_path / "status.json"
    s = follow_lake([_src()], str(tmp_path / "wh"), fmt="delta", batch_transactions=5, poll=0.05, stop_after=5,
                    status_file=str(status), on_poll=lambda m: looks.__setitem__(0, looks[0] + 1))
    assert looks[0] >= 10
    assert len(written) <= min(8, looks[0] // 2)     # the commits (the first look), about once a second after
    st = json.loads(status.read_text())
    assert st == written[-1] and st["commits"] == s["commits"] > 0 and st["lag_seconds"] == 0
    assert st["last_gtid"] == "0-1-49"


@pytest.fixture
def walks(monkeypatch) -> list[int]:
    """``[n]``: how many walks (``committed_changes`` calls) the follower has made."""
    import binlogkit.export.lake.follow as follow

    n = [0]
    real = follow.committed_changes

    def counted(*a, **k):
        n[0] += 1
        return real(*a, **k)
    monkeypatch.setattr(follow, "committed_changes", counted)
    return n


def _follow_to_sigterm(folder: Path, wh: Path, interval: float, on_poll) -> float:
    """A follower of ``folder`` polling every 50 ms, committing every ``interval`` seconds, until
    ``on_poll`` sends SIGTERM; it applied the fixture's 49 transactions. The seconds it ran."""
    t0 = time.monotonic()
    s = follow_lake([folder], str(wh), fmt="delta", batch_transactions=1000, commit_interval=interval, poll=0.05,
                    stop_after=120, on_poll=on_poll)
    assert s["signal"] == "SIGTERM" and s["problems"] == [] and s["transactions"] == 49
    return time.monotonic() - t0


def test_what_arrives_is_walked_once_a_commit_and_its_age_is_the_lag(tmp_path, walks):
    """Looks between two commits do not walk what arrived (a walk reads the file's head again:
    one a poll cost a fifth of the follower's CPU at 5,000 row changes/s); they stat the newest
    file, and the lag counts what waits unread from its first event's timestamp. An idle
    follower walks at its first look and its last only. The tables end as a plain export's."""
    import binlogkit.export.lake.follow as follow

    idle_looks = [0]
    idle = follow_lake([_src()], str(tmp_path / "idle"), fmt="delta", batch_transactions=5, commit_interval=0.2,
                       poll=0.05, stop_after=6, on_poll=lambda m: idle_looks.__setitem__(0, idle_looks[0] + 1))
    assert idle["transactions"] == 49 and idle_looks[0] >= 10
    assert walks[0] == 2      # the first look, the last

    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, folder / n)
    data = (_src() / NAMES[2]).read_bytes()
    cuts = [len(data) * i // 8 for i in range(1, 9)]
    (folder / NAMES[2]).write_bytes(data[:cuts[0]])
    walks[0] = 0
    looks: list[tuple[int, float]] = []

    def grow(m):
        # the file grows by an eighth every 4 looks; 8 looks after the last eighth, SIGTERM: the
        # run ends on what it has seen, not on a clock a loaded machine stretches
        looks.append((m.n_trx, follow.status(m, 0.0, time.time(), 1.0)["lag_seconds"]))
        k = len(looks)
        if k % 4 == 0 and k // 4 < len(cuts):
            with open(folder / NAMES[2], "ab") as fh:
                fh.write(data[cuts[k // 4 - 1]:cuts[k // 4]])
        elif k == 4 * len(cuts) + 8:
            os.kill(os.getpid(), signal.SIGTERM)        # the follower's own handler
    elapsed = _follow_to_sigterm(folder, wh, 1.0, grow)
    assert len(looks) >= 4 * len(cuts) + 8
    # the first look, one a commit interval (1 s), the last: not one a look (40 looks)
    assert walks[0] <= 2 + math.ceil(elapsed / 1.0), (walks[0], elapsed)
    # a look that has read nothing pending while the file holds unread transactions: their age
    ts = int.from_bytes(data[4:8], "little")
    assert any(n == 0 and lag >= time.time() - ts - 60 for n, lag in looks)
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _tables(wh) == _tables(tmp_path / "plain")


def test_sigterm_commits_what_waits_unread_too(tmp_path):
    """Transactions that arrived between two commits (read at the next one) are read and
    committed when SIGTERM comes: the follower stops having applied what is whole."""
    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, folder / n)
    data = (_src() / NAMES[2]).read_bytes()
    (folder / NAMES[2]).write_bytes(data[:len(data) // 2])
    looks = [0]

    def look(m):
        looks[0] += 1
        if looks[0] == 3:
            with open(folder / NAMES[2], "ab") as fh:
                fh.write(data[len(data) // 2:])
        elif looks[0] == 6:
            os.kill(os.getpid(), signal.SIGTERM)        # the follower's own handler
    s = follow_lake([folder], str(wh), fmt="delta", batch_transactions=1000, commit_interval=60, poll=0.05,
                    stop_after=60, on_poll=look)
    assert s["signal"] == "SIGTERM" and s["transactions"] == 49 and s["problems"] == []
    assert json.loads((wh / CHECKPOINT).read_text())["gtid"] == "0-1-49"
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _tables(wh) == _tables(tmp_path / "plain")


def test_a_new_file_holding_only_its_head_is_not_walked_at_every_look(tmp_path, walks):
    """After a rotation on a quiet primary the newest file holds its head events only (format
    description, GTID list, checkpoint) and no transaction: looks stay lazy (a size check) until
    its first transaction arrives, which the next commit reads. Before, every look walked the
    folder again while the new file had no whole transaction."""
    from binlogkit.api import transactions

    folder, wh = tmp_path / "in", tmp_path / "wh"
    folder.mkdir()
    for n in NAMES[:2]:
        shutil.copy(_src() / n, folder / n)
    head_end = min(t.start_offset for t in transactions([str(_src() / NAMES[2])]))
    data = (_src() / NAMES[2]).read_bytes()
    assert 4 < head_end < len(data)
    (folder / NAMES[2]).write_bytes(data[:head_end])
    seen: dict[int, int] = {}

    def look(m):
        seen[len(seen) + 1] = walks[0]
        if len(seen) == 20:
            with open(folder / NAMES[2], "ab") as fh:
                fh.write(data[head_end:])
        elif len(seen) == 40:
            os.kill(os.getpid(), signal.SIGTERM)        # the follower's own handler
    elapsed = _follow_to_sigterm(folder, wh, 0.3, look)
    assert seen[20] == 1                            # 20 looks at the head-only file: the first walked
    assert walks[0] <= 2 + math.ceil(elapsed / 0.3), (walks[0], elapsed)
    export_lake([_src()], str(tmp_path / "plain"), fmt="delta", mirror=True, batch_transactions=5)
    assert _tables(wh) == _tables(tmp_path / "plain")

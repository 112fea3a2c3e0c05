"""What a ``kill -9`` leaves, the next run removes (issue 28, point 9): ``recover --apply``,
``incident`` and ``flashback`` are killed for real (SIGKILL injected by strace at the entry of
the writer's N-th ``renameat``: a temporary file or copy written in full and never renamed
into place, or at its N-th ``write``), then run again: the rerun says on one stderr line what
it removed, leaves no temporary file and no abandoned backup, writes what an uninterrupted run
writes, and a third run changes nothing. A journal of an interrupted ``recover`` is finished,
never deleted. Only this user's regular files named by the writer's own pattern go; a link or
another user's file of that name stays."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from binlogkit.recover.plan import JOURNAL
from binlogkit.writing.safeio import SafeDir, remove_leftovers
from fixtures import store

from conftest import stopped_primary_copy

ROOT = Path(__file__).resolve().parent.parent
CMD = [sys.executable, "-m", "binlogkit.cli"]
TEMP = re.compile(r"\..+\.binlogkit-[0-9a-f]{16}")
needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (make deps installs it)")


def env(**extra: str) -> dict:
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(ROOT), **extra)


def run(*args: str, environ: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + list(args), env=environ or env(), capture_output=True, text=True, timeout=120)


def killed_at(syscall: str, when: int, *args: str, environ: dict | None = None) -> subprocess.CompletedProcess:
    """The command, SIGKILLed by strace at the entry of its ``when``-th ``syscall``."""
    cmd = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscall}",
           "-e", f"inject={syscall}:signal=SIGKILL:when={when}", *CMD, *args]
    return subprocess.run(cmd, env=environ or env(), capture_output=True, text=True, timeout=120)


def state(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


def temps(*dirs: Path) -> list[Path]:
    return [p for d in dirs if d.is_dir() for p in d.iterdir() if TEMP.fullmatch(p.name)]


def backups(d: Path, label: str) -> list[Path]:
    return sorted(d.parent.glob(f"{d.name}.binlogkit-{label}-*"))


def removed_line(stderr: str) -> str | None:
    lines = [line for line in stderr.splitlines() if "leftover(s) of an interrupted earlier run" in line]
    assert len(lines) <= 1, stderr
    return lines[0] if lines else None


# -- recover --apply ---------------------------------------------------------------------------
def relay(where: Path) -> Path:
    d = where / "relay"
    shutil.copytree(store.materialize("crash-rotation-small-position") / "relay", d)
    return d


@needs_strace
def test_recover_killed_at_every_rename_then_rerun_cleans_and_converges(tmp_path):
    clean = relay(tmp_path / "clean")
    assert run("recover", "--apply", str(clean)).returncode == 0
    want = state(clean)
    for when in range(1, 20):
        d = relay(tmp_path / f"k{when}")
        first = killed_at("renameat", when, "recover", "--apply", str(d))
        if first.returncode == 0:  # past the last rename: the campaign covered every one
            assert when > 5, first.stderr
            break
        assert first.returncode == -signal.SIGKILL, first.stderr
        left = temps(d, *backups(d, "recover"))
        assert left, f"rename {when}: the kill left no temporary file"
        journal = (d / JOURNAL).exists()
        second = run("recover", "--apply", str(d))
        assert second.returncode == 0, (when, second.stderr)
        line = removed_line(second.stderr)
        assert line and all(str(p) in line or p.parent.name in line for p in left), (when, line, left)
        if journal:
            assert "finished the interrupted repair" in second.stderr + second.stdout
        assert state(d) == want, when
        assert not temps(d, *backups(d, "recover")) and not (d / JOURNAL).exists()
        for b in backups(d, "recover"):  # only finished runs' backups remain
            assert json.loads((b / "journal.json").read_text()).get("finished"), (when, b)
        kept = backups(d, "recover")
        third = run("recover", "--apply", str(d))
        assert third.returncode == 0 and removed_line(third.stderr) is None, third.stderr
        assert state(d) == want and backups(d, "recover") == kept
    else:
        pytest.fail("recover never completed under the rename campaign")


def test_recover_killed_between_backup_copies_leaves_nothing_behind(tmp_path):
    d = relay(tmp_path)
    want_dir = relay(tmp_path / "clean")
    assert run("recover", "--apply", str(want_dir)).returncode == 0
    first = run("recover", "--apply", str(d), environ=env(BINLOGKIT_RECOVER_KILL_AT="during-backup"))
    assert first.returncode == -signal.SIGKILL
    (abandoned,) = backups(d, "recover")
    assert (abandoned / "journal.json").exists() and not (d / JOURNAL).exists()
    second = run("recover", "--apply", str(d))
    assert second.returncode == 0, second.stderr
    assert f"{abandoned}/" in (removed_line(second.stderr) or "")
    assert not abandoned.exists() and state(d) == state(want_dir)


# -- incident ----------------------------------------------------------------------------------
def incident_view(d: Path, original: bytes) -> dict:
    """The folder with the last binlog as (its old bytes kept, the bodies of what follows them):
    an event header carries the time it was written, so two runs differ in those bytes."""
    from binlogkit.writing.writer import _last_two

    out = state(d)
    last = d / "mariadb-bin.000016"
    data = last.read_bytes()
    out[last.name] = (len(data), data[:len(original)] == original, [(t, bytes(b)) for t, b, _o in _last_two(last)])
    return out


@needs_strace
@pytest.mark.parametrize("syscall,when", [("write", 1), ("renameat", 1), ("renameat", 2)])
def test_incident_killed_then_rerun_cleans_and_appends_once(syscall, when, tmp_path):
    clean = stopped_primary_copy(tmp_path / "clean")
    before = state(clean)
    original = (clean / "mariadb-bin.000016").read_bytes()
    assert run("incident", str(clean)).returncode == 0
    want = incident_view(clean, original)
    assert want["mariadb-bin.000016"][1] and [t for t, _b in want["mariadb-bin.000016"][2]] == [26, 4]
    d = stopped_primary_copy(tmp_path / "k")
    assert state(d) == before
    first = killed_at(syscall, when, "incident", str(d))
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert {n: h for n, h in state(d).items() if not TEMP.fullmatch(n)} == before  # nothing renamed into place
    left = temps(d, *backups(d, "incident"))
    assert left, "the kill left no temporary file"
    second = run("incident", str(d))
    assert second.returncode == 0, second.stderr
    line = removed_line(second.stderr) or ""
    assert all(str(p) in line or p.parent.name in line for p in left), (line, left)
    assert incident_view(d, original) == want and not temps(d, *backups(d, "incident"))
    (kept,) = backups(d, "incident")  # the rerun's own: the file as it was before the Incident
    assert state(kept) == {"mariadb-bin.000016": before["mariadb-bin.000016"]}
    third = run("incident", str(d))
    assert third.returncode == 0 and "already ends with an Incident" in third.stdout
    assert removed_line(third.stderr) is None and incident_view(d, original) == want
    assert backups(d, "incident") == [kept]


# -- flashback ---------------------------------------------------------------------------------
FB = ["--include-gtids", "0-1-8..11"]


def _fixture_binlog() -> Path:
    return store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000001"


@needs_strace
@pytest.mark.parametrize("force", [False, True])
def test_flashback_killed_then_rerun_cleans_and_writes_the_same_undo(force, tmp_path):
    src = _fixture_binlog()
    assert run("flashback", str(src), "-o", str(tmp_path / "want.bin"), *FB).returncode == 0
    want = (tmp_path / "want.bin").read_bytes()
    renames = 2 if force else 1  # --force: the old output's backup copy is renamed first
    for when in range(1, renames + 1):
        out_dir = tmp_path / f"out{when}"
        out_dir.mkdir()
        out = out_dir / "undo.bin"
        extra = ["--force"] if force else []
        if force:
            out.write_bytes(b"an older undo")
        first = killed_at("renameat", when, "flashback", str(src), "-o", str(out), *FB, *extra)
        assert first.returncode == -signal.SIGKILL, first.stderr
        left = temps(out_dir, *backups(out_dir, "flashback"))
        assert left and (out.read_bytes() == b"an older undo" if force else not out.exists())
        second = run("flashback", str(src), "-o", str(out), *FB, *extra)
        assert second.returncode == 0, second.stderr
        line = removed_line(second.stderr) or ""
        assert all(str(p) in line or p.parent.name in line for p in left), (line, left)
        assert out.read_bytes() == want and not temps(out_dir, *backups(out_dir, "flashback"))
        kept = backups(out_dir, "flashback")
        assert len(kept) == (1 if force else 0)  # the rerun's copy of the older undo
        if force:
            assert (kept[0] / "undo.bin").read_bytes() == b"an older undo"
        third = run("flashback", str(src), "-o", str(out), *FB, "--force")
        assert third.returncode == 0 and removed_line(third.stderr) is None, third.stderr
        assert out.read_bytes() == want


@needs_strace
def test_flashback_killed_with_an_archive_input_removes_its_decompressed_copy(tmp_path):
    src = store.SETS_DIR / "row-types-full-metadata" / "primary" / "mariadb-bin.000001.xz"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "undo.bin"
    first = killed_at("renameat", 1, "flashback", str(src), "-o", str(out), *FB, environ=env(TMPDIR=str(tmp)))
    assert first.returncode == -signal.SIGKILL
    (copy,) = tmp.iterdir()
    assert copy.name.startswith("binlogkit-flashback-input-") and copy.stat().st_size == _fixture_binlog().stat().st_size
    second = run("flashback", str(src), "-o", str(out), *FB, environ=env(TMPDIR=str(tmp)))
    assert second.returncode == 0, second.stderr
    assert str(copy) in (removed_line(second.stderr) or "") and not list(tmp.iterdir())


def test_a_live_runs_decompressed_copy_is_never_removed(tmp_path):
    """The copy a live run holds locked stays; one nobody holds goes."""
    import fcntl

    from binlogkit.flashback import INPUT_PREFIX, remove_stale_inputs

    live, dead = tmp_path / f"{INPUT_PREFIX}aaaaaaaa", tmp_path / f"{INPUT_PREFIX}bbbbbbbb"
    live.write_bytes(b"x" * 10)
    dead.write_bytes(b"y" * 10)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               f"f = open({str(live)!r}, 'rb'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                               "print('locked', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        assert remove_stale_inputs(str(tmp_path)) == [str(dead)]
        assert live.exists() and not dead.exists()
    finally:
        holder.kill()
        holder.wait()
    with open(live, "rb") as fh:  # the holder is gone: its lock with it
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fh, fcntl.LOCK_UN)
    assert remove_stale_inputs(str(tmp_path)) == [str(live)]


# -- what is never removed ---------------------------------------------------------------------
def test_only_own_regular_files_of_the_writers_names_go(tmp_path):
    d = tmp_path / "binlogs"
    d.mkdir()
    mine = d / ".mariadb-bin.000016.binlogkit-0123456789abcdef"
    mine.write_bytes(b"a temporary copy")
    other_name = d / ".notes.txt.binlogkit-0123456789abcdef"      # not a name incident writes
    other_name.write_bytes(b"x")
    short = d / ".mariadb-bin.000016.binlogkit-0123"                # not the temporary-name pattern
    short.write_bytes(b"x")
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    link = d / ".mariadb-bin.000015.binlogkit-fedcba9876543210"     # a planted link: never followed
    link.symlink_to(target)
    a_dir = d / ".mariadb-bin.000014.binlogkit-00000000aaaaaaaa"
    a_dir.mkdir()
    finished = tmp_path / "binlogs.binlogkit-incident-20260101T000000Z-abcdef"  # a real backup: kept
    finished.mkdir()
    (finished / "mariadb-bin.000016").write_bytes(b"the file before the incident")
    (d / "mariadb-bin.000016").write_bytes(b"the file after the incident")
    with SafeDir(d) as sd, sd.locked():
        gone = remove_leftovers(sd, "incident", lambda n: re.fullmatch(r".+\.\d{6,}", n) is not None)
    assert gone == [str(mine)]
    assert other_name.exists() and short.exists() and link.is_symlink() and a_dir.is_dir()
    assert target.read_bytes() == b"keep me" and (finished / "mariadb-bin.000016").exists()
    if os.geteuid() == 0:  # another user's file of the same name stays
        theirs = d / ".mariadb-bin.000016.binlogkit-aaaaaaaaaaaaaaaa"
        theirs.write_bytes(b"x")
        os.chown(theirs, 65534, 65534)
        with SafeDir(d) as sd, sd.locked():
            assert remove_leftovers(sd, "incident", lambda n: n.startswith("mariadb-bin.")) == []
        assert theirs.exists()


def test_a_refused_run_still_says_what_it_removed(tmp_path):
    """The leftovers go under the lock before the checks: a run then refused (a process holds
    the binlog open) still names them."""
    d = stopped_primary_copy(tmp_path)
    left = d / ".mariadb-bin.000016.binlogkit-0123456789abcdef"
    left.write_bytes(b"x" * 4096)
    with open(d / "mariadb-bin.000016", "rb") as fh:
        holder = subprocess.Popen(["sleep", "30"], stdin=fh)
    try:
        r = run("incident", str(d))
    finally:
        holder.kill()
        holder.wait()
    assert r.returncode == 2 and "stop the server" in r.stderr, r.stderr
    assert str(left) in (removed_line(r.stderr) or "") and not left.exists()
    assert r.stderr.index("leftover(s)") < r.stderr.index("refused")

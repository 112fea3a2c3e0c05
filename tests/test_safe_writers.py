"""Writers a DBA can run as root on a production host (issue 23): owners and modes kept, no
write through a planted link, verified backups in fresh folders, a lock, partial applies told
and finished by a rerun, a kill at every step of every crash fixture converging byte-identical.

Tests that need root (chown to the ``mysql`` user, chattr, tmpfs mounts) skip cleanly elsewhere.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.errors import WriteRefused
from binlogkit.recover import RecoveryRefused, apply_plan, plan_recovery
from binlogkit.recover.plan import JOURNAL
from binlogkit.writing.writer import record_incident
from fixtures import store

from conftest import stopped_primary_copy

CRASH = [s for s in store.set_names() if s.startswith("crash-")]
ROOT = os.geteuid() == 0
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
CMD = [sys.executable, "-m", "binlogkit.cli"]


def _mysql() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("mysql")
    except KeyError:
        return None


needs_root_mysql = pytest.mark.skipif(not (ROOT and _mysql()), reason="needs root and the mysql user "
                                      "(Debian's mariadb-server creates it)")


def relay_copy(name: str, where: Path) -> Path:
    d = where / name / "relay"
    shutil.copytree(store.materialize(name) / "relay", d)
    return d


def binlog_copy(where: Path) -> Path:
    return stopped_primary_copy(where)


def state(d: Path) -> dict:
    """Every entry of the folder: name -> sha256 of a regular file, or the link text."""
    out = {}
    for p in sorted(d.iterdir()):
        out[p.name] = ("link", os.readlink(p)) if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def owners(d: Path) -> dict:
    return {p.name: (p.lstat().st_uid, p.lstat().st_gid, oct(p.lstat().st_mode & 0o7777)) for p in d.iterdir()}


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + list(args), env=env or ENV, capture_output=True, text=True, timeout=120)


def clean_result(name: str, where: Path) -> dict:
    d = relay_copy(name, where / "clean")
    r = run("recover", "--apply", "--backup-dir", str(where / "clean-backup"), str(d))
    assert r.returncode == 0, r.stderr
    return state(d)


def backups_verified(parent: Path) -> int:
    """Every backup folder beside the relay folder whose journal lists files holds them
    byte-exact (size and sha256 as recorded before the first change)."""
    n = 0
    for journal in parent.glob("*.binlogkit-*/journal.json"):
        doc = json.loads(journal.read_text())
        for name, info in doc.get("files", {}).items():
            data = (journal.parent / name).read_bytes()
            assert (len(data), hashlib.sha256(data).hexdigest()) == (info["size"], info["sha256"]), journal
            n += 1
    return n


# -- 1. owners and modes --------------------------------------------------------------------
@needs_root_mysql
def test_root_keeps_the_mysql_owner_and_modes(tmp_path):
    mysql = _mysql()
    d = relay_copy("crash-rotation-small-position", tmp_path)
    for p in [d, *d.iterdir()]:
        os.chown(p, mysql.pw_uid, mysql.pw_gid)
        os.chmod(p, 0o750 if p.is_dir() else 0o660)
    before = owners(d)
    r = run("recover", "--apply", str(d))
    assert r.returncode == 0, r.stderr
    after = owners(d)
    assert after == before  # the same files, each with its owner, group and mode
    assert not any(uid == 0 for uid, _g, _m in after.values())
    b = binlog_copy(tmp_path / "p")
    for p in [b, *b.iterdir()]:
        os.chown(p, mysql.pw_uid, mysql.pw_gid)
        os.chmod(p, 0o750 if p.is_dir() else 0o660)
    before = owners(b)
    r = run("incident", str(b), "--message", "x")
    assert r.returncode == 0, r.stderr
    assert owners(b) == before


# -- 2. links --------------------------------------------------------------------------------
def test_a_planted_link_is_never_written_through(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"root only\n")
    secret.chmod(0o600)
    d = relay_copy("crash-rotation-small-position", tmp_path)
    b = binlog_copy(tmp_path / "p")
    # the names older versions used, and the journal's name
    for folder, names in ((d, ["master.info.binlogkit-tmp", "relay-bin.index.binlogkit-tmp",
                                "relay-bin.000011.binlogkit-tmp"]), (b, ["mariadb-bin.000016.binlogkit-tmp"])):
        for n in names:
            (folder / n).symlink_to(secret)
    assert run("recover", "--apply", str(d)).returncode == 0
    assert run("incident", str(b)).returncode == 0
    assert secret.read_bytes() == b"root only\n" and oct(secret.stat().st_mode & 0o777) == "0o600"
    # a journal planted as a link (or by another user) is not trusted to say what to cut
    d2 = relay_copy("crash-torn-position", tmp_path / "j")
    (d2 / JOURNAL).symlink_to(secret)
    before = state(d2)
    r = run("recover", "--apply", str(d2))
    assert r.returncode == 2 and "not trusted" in r.stderr
    assert state(d2) == before and secret.read_bytes() == b"root only\n"


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_every_file_the_writers_create_is_exclusive_and_never_through_a_link(tmp_path):
    """Traced with strace: each open that may create a file in the folders involved carries
    O_EXCL and O_NOFOLLOW (a planted name makes it fail instead of writing elsewhere)."""
    d = relay_copy("crash-partial-gtid", tmp_path)
    b = binlog_copy(tmp_path / "p")
    for args, folder in ((["recover", "--apply", str(d)], d), (["incident", str(b)], b)):
        log = tmp_path / "trace"
        r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,creat", "-o", str(log)] + CMD + args,
                           env=ENV, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        # every create of the run (the folders are reached through directory descriptors, so
        # most lines name no full path)
        creates = [l for l in log.read_text().splitlines() if "O_CREAT" in l and '"/dev/' not in l]
        assert creates, "strace saw no file created"
        for line in creates:
            assert "O_EXCL" in line and "O_NOFOLLOW" in line, line
        assert not [p for p in folder.iterdir() if ".binlogkit-" in p.name], list(folder.iterdir())


def test_symlinked_relay_logs_and_info_files_are_refused_unless_followed(tmp_path):
    d = relay_copy("crash-rotation-small-position", tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("relay-bin.000011", "master.info"):
        shutil.move(d / name, elsewhere / name)
        (d / name).symlink_to(elsewhere / name)
    before, outside = state(d), state(elsewhere)
    r = run("recover", "--apply", str(d))
    assert r.returncode == 2 and "is a symbolic link" in r.stderr and "--follow-links" in r.stderr
    assert state(d) == before and state(elsewhere) == outside
    r = run("recover", "--apply", "--follow-links", str(d))
    assert r.returncode == 0, r.stderr
    assert (d / "relay-bin.000011").is_symlink() and (d / "master.info").is_symlink()  # links kept
    clean = relay_copy("crash-rotation-small-position", tmp_path / "c")
    assert run("recover", "--apply", str(clean)).returncode == 0
    for name in ("relay-bin.000011", "master.info"):  # the targets changed as the files would have
        assert (elsewhere / name).read_bytes() == (clean / name).read_bytes()
    assert run("recover", str(d)).returncode == 0  # nothing left to do


# -- 3. backups ------------------------------------------------------------------------------
def test_backups_are_fresh_verified_and_never_inside_the_folder(tmp_path):
    d = relay_copy("crash-partial-gtid", tmp_path)
    before = state(d)
    for bad in (d, d / "sub"):
        r = run("recover", "--apply", "--backup-dir", str(bad), str(d))
        assert r.returncode == 2 and "inside the folder being changed" in r.stderr, r.stderr
    (tmp_path / "via-link").symlink_to(d)
    r = run("recover", "--apply", "--backup-dir", str(tmp_path / "via-link" / "b"), str(d))
    assert r.returncode == 2 and "inside the folder being changed" in r.stderr
    assert state(d) == before
    # killed while copying: the partial backup is never taken for a backup by the rerun
    env = dict(ENV, BINLOGKIT_RECOVER_KILL_AT="during-backup")
    r = run("recover", "--apply", "--backup-dir", str(tmp_path / "b"), str(d), env=env)
    assert r.returncode == -signal.SIGKILL and state(d) == before
    r = run("recover", "--apply", "--backup-dir", str(tmp_path / "b"), str(d))
    assert r.returncode == 0, r.stderr
    folders = [p for p in (tmp_path / "b").iterdir() if (p / "journal.json").exists()] + [tmp_path / "b"]
    done = [f for f in folders if (f / "journal.json").exists() and json.loads((f / "journal.json").read_text()).get("finished")]
    assert len(done) == 1
    doc = json.loads((done[0] / "journal.json").read_text())
    assert doc["files"] and all(before[n] == i["sha256"] for n, i in doc["files"].items())
    # two runs in the same second get two folders
    a, b = relay_copy("crash-torn-position", tmp_path / "x"), relay_copy("crash-torn-position", tmp_path / "y")
    pa, pb = apply_plan(plan_recovery(a), check_processes=False), apply_plan(plan_recovery(b), check_processes=False)
    assert pa != pb and pa.parent == a.parent


# -- 4. the lock and concurrent runs ---------------------------------------------------------
def test_a_held_lock_refuses(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = state(d)
        r = run("recover", "--apply", str(d))
        assert r.returncode == 2 and "another binlogkit command" in r.stderr
        assert state(d) == before
    finally:
        os.close(fd)


def test_concurrent_applies_lose_nothing(tmp_path):
    """Two `recover --apply` started together, 20 times: one repairs, the other refuses or finds
    nothing left; the end state is the uninterrupted one and every backup holds the originals."""
    name = "crash-partial-gtid"
    want = clean_result(name, tmp_path)
    outcomes = []
    for trial in range(20):
        d = relay_copy(name, tmp_path / f"t{trial}")
        before = state(d)
        procs = [subprocess.Popen(CMD + ["recover", "--apply", str(d)], env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        res = [(p.wait(120), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        codes = sorted(c for c, _ in res)
        assert codes in ([0, 0], [0, 2]), res
        for c, err in res:
            if c == 2:
                assert re.search(r"another binlogkit command|changed since the plan|finished \(or changed\)", err), err
        assert state(d) == want
        copied = backups_verified(d.parent)
        assert copied >= 1
        for journal in d.parent.glob("*.binlogkit-*/journal.json"):
            for n, info in json.loads(journal.read_text())["files"].items():
                assert info["sha256"] == before[n]  # what was copied is the original
        outcomes.append(tuple(codes))
    assert outcomes  # 20 trials ran


# -- 6. failures part-way, and kills at every step -------------------------------------------
@pytest.mark.skipif(not ROOT, reason="chattr +i needs root")
def test_an_immutable_file_is_refused_before_any_change(tmp_path):
    d = relay_copy("crash-rotation-small-position", tmp_path)
    if subprocess.run(["chattr", "+i", str(d / "master.info")], capture_output=True).returncode != 0:
        pytest.skip("chattr +i not supported here")
    try:
        before = state(d)
        r = run("recover", "--apply", str(d))
        assert r.returncode == 2 and "master.info cannot be opened for writing" in r.stderr, r.stderr
        assert state(d) == before
    finally:
        subprocess.run(["chattr", "-i", str(d / "master.info")])


def _tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    return ROOT and subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                   capture_output=True).returncode == 0


@pytest.mark.skipif(not ROOT, reason="mounting a tmpfs needs root")
def test_enospc_mid_apply_is_told_and_a_rerun_finishes(tmp_path):
    name = "crash-rotation-small-position"
    want = clean_result(name, tmp_path)
    mnt = tmp_path / "small"
    if not _tmpfs(mnt, "4m"):
        pytest.skip("mount not permitted here")
    try:
        d = relay_copy(name, mnt)
        env = dict(ENV, BINLOGKIT_RECOVER_PAUSE_AT="after-truncate")
        p = subprocess.Popen(CMD + ["recover", "--apply", "--backup-dir", str(tmp_path / "b"), str(d)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and Path(f"/proc/{p.pid}/stat").read_text().split()[2] != "T":
            time.sleep(0.05)
        filler = mnt / "filler"
        with open(filler, "wb") as fh:  # the file system fills up while the repair is half done
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 3, (out, err)
        assert "No space left on device" in err and "partial" in err and "run the same command again" in err
        assert str(tmp_path / "b") in err
        assert not [x for x in d.iterdir() if ".binlogkit-" in x.name and x.name != JOURNAL]  # no temp left
        filler.unlink()
        r = run("recover", "--apply", str(d))
        assert r.returncode == 0, r.stderr
        assert "interrupted" in r.stdout
        assert state(d) == want
    finally:
        subprocess.run(["umount", str(mnt)])


@pytest.mark.skipif(not ROOT, reason="mounting a tmpfs needs root")
def test_a_backup_that_cannot_be_made_changes_nothing(tmp_path):
    d = relay_copy("crash-partial-gtid", tmp_path)  # its relay logs hold a 24 MB transaction
    mnt = tmp_path / "tiny"
    if not _tmpfs(mnt, "1m"):
        pytest.skip("mount not permitted here")
    try:
        before = state(d)
        r = run("recover", "--apply", "--backup-dir", str(mnt / "b"), str(d))
        assert r.returncode == 2 and "nothing was changed" in r.stderr, r.stderr
        assert state(d) == before
    finally:
        subprocess.run(["umount", str(mnt)])


STEPS = ["during-backup", "after-backup", "after-journal", "after-truncate", "after-remove", "after-index",
         "after-master-info", "after-relay-log-info"]


@pytest.mark.parametrize("name", CRASH)
def test_a_kill_at_every_step_converges_byte_identical(name, tmp_path):
    want = clean_result(name, tmp_path)
    for step in STEPS:
        d = relay_copy(name, tmp_path / step)
        env = dict(ENV, BINLOGKIT_RECOVER_KILL_AT=step)
        first = run("recover", "--apply", str(d), env=env)
        assert first.returncode in (0, -signal.SIGKILL), first.stderr
        if first.returncode == -signal.SIGKILL and step not in ("during-backup", "after-backup"):
            assert (d / JOURNAL).exists()  # the next run finishes this one
        second = run("recover", "--apply", str(d))
        assert second.returncode == 0, (step, second.stderr)
        assert state(d) == want, step
        assert run("recover", str(d)).returncode == 0  # nothing left to do
        backups_verified(d.parent)


def test_refused_apply_api(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    with pytest.raises(RecoveryRefused):
        apply_plan(plan_recovery(d), backup_dir=d)
    b = binlog_copy(tmp_path)
    with pytest.raises(WriteRefused):
        record_incident(b, backup_dir=b)

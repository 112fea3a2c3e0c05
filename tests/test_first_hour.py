"""A newcomer's first hour (issue 23): no traceback, no silent success, no plan to cut what is
not a binlog; a closed pipe or a full disk ends with one line at most."""

from __future__ import annotations

import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures import store

CMD = [sys.executable, "-m", "binlogkit.cli"]
READERS = ["decode", "verify", "gtids", "transactions", "audit"]


def run(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + [str(a) for a in args], capture_output=True, text=True, timeout=120, **kw)


def primary() -> Path:
    return store.materialize("replication-gtid") / "primary"


@pytest.mark.parametrize("command", READERS)
def test_a_folder_without_binlogs_is_an_error(command, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here\n")
    r = run(command, tmp_path)
    assert r.returncode == 2 and "no binlog or relay log in" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("command", ["decode", "verify", "gtids", "transactions"])
def test_an_index_naming_a_missing_file_is_an_error(command, tmp_path):
    shutil.copy(primary() / "mariadb-bin.000001", tmp_path)
    (tmp_path / "mariadb-bin.index").write_text("./mariadb-bin.000001\n./mariadb-bin.000002\n")
    r = run(command, tmp_path / "mariadb-bin.index")
    assert r.returncode == 2 and "mariadb-bin.000002" in r.stderr and "does not exist" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("command", READERS)
def test_a_closed_pipe_ends_quietly_and_a_full_disk_says_so(command):
    p = subprocess.Popen(CMD + [command, str(primary())], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()  # `| head -1`
    err = p.stderr.read().decode()
    assert p.wait(60) == 0 and err == ""
    p.stderr.close()
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            r = subprocess.run(CMD + [command, str(primary())], stdout=full, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 2 and "No space left on device" in r.stderr and "Traceback" not in r.stderr


def _relay(tmp_path: Path, name: str = "crash-torn-position") -> Path:
    d = tmp_path / "relay"
    shutil.copytree(store.materialize(name) / "relay", d)
    return d


def test_recover_refuses_compressed_relay_logs(tmp_path):
    d = _relay(tmp_path)
    for p in list(d.glob("relay-bin.0*")):
        with open(p, "rb") as src, lzma.open(str(p) + ".xz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        p.unlink()
    before = sorted(os.listdir(d))
    for args in (["recover", d], ["recover", "--apply", d]):
        r = run(*args)
        assert r.returncode == 2 and "relay logs stored compressed" in r.stderr, r.stderr
        assert "rewrite" not in r.stdout and "truncate" not in r.stdout
    assert sorted(os.listdir(d)) == before


def test_recover_binlog_refuses_compressed_binlogs(tmp_path):
    d = tmp_path / "b"
    d.mkdir()
    for n in ("mariadb-bin.000001", "mariadb-bin.000002"):
        with open(primary() / n, "rb") as src, lzma.open(d / (n + ".xz"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    (d / "mariadb-bin.index").write_text("./mariadb-bin.000001\n./mariadb-bin.000002\n")
    r = run("recover", "--binlog", d)
    assert r.returncode == 2 and "binlogs stored compressed" in r.stderr and "Traceback" not in r.stderr


def test_recover_never_plans_to_cut_a_file_that_is_not_a_binlog(tmp_path):
    d = _relay(tmp_path)
    last = sorted(d.glob("relay-bin.0*"))[-1]
    last.write_text("these are my notes, not a relay log\n")
    r = run("recover", d)
    assert r.returncode == 2 and "is not a binlog or relay log" in r.stderr
    assert "truncate" not in r.stdout


def test_recover_without_master_info_and_source_name(tmp_path):
    d = _relay(tmp_path, "crash-rotation-small-position")
    (d / "master.info").unlink()
    r = run("recover", d)
    assert "'None'" not in r.stdout and "None:" not in r.stdout
    assert "SOURCE_LOG_FILE='mariadb-bin.000002'" in r.stdout

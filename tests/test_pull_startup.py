"""``binlogkit pull`` starts light (issue 34): the modules a ``pull --help`` and a real pull (the
CLI in a child process against the fake primary of ``fixtures/fake_primary.py``, a copy checked
byte for byte) have imported when the process exits. Neither loads the export, decode, audit or
Spark code, pyarrow, duckdb, pyspark, cryptography (loaded when an RSA key is needed), PyMySQL
(the login and the queries are ``pull.conn``'s own), construct (the receiver's header offsets and
Format_description check are in ``constants``, ``flavor`` and ``reading.crc``) nor, from a server
that offers no TLS, ``ssl``; a real pull does not load click either (``cli/entry.py``).

Start-up costs, measured: docs/explanation/speed.md, "Start-up and the closing fsync".
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.fake_primary import FakePrimary, fixture_files, honest
from import_probe import imported as _imported

ROOT = Path(__file__).resolve().parent.parent
# what pull never needs: libraries other commands use, and their command rooms
HEAVY_LIBS = ("pyarrow", "duckdb", "pyspark", "cryptography", "fsspec", "numpy", "pandas", "pymysql", "construct")
HEAVY_ROOMS = ("binlogkit.export", "binlogkit.decoding", "binlogkit.audit", "binlogkit.flashback", "binlogkit.pitr",
               "binlogkit.report", "binlogkit.rowvalues", "binlogkit.crypto", "binlogkit.cli.decode",
               "binlogkit.cli.export", "binlogkit.cli.audit", "binlogkit.cli.inspect", "binlogkit.cli.repair",
               "binlogkit.cli.pitr")


def imported(tmp_path: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    return _imported(tmp_path, *args, env=env, text=True)


def heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY_LIBS + HEAVY_ROOMS))


def test_the_heavy_libraries_are_installed():
    """Otherwise their absence below would prove nothing."""
    missing = [m for m in ("pyarrow", "duckdb", "cryptography") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"not installed: {missing}")


def test_pull_help_imports_nothing_heavy(tmp_path):
    res, mods = imported(tmp_path, "pull", "--help")
    assert res.returncode == 0 and "--sync" in res.stdout, res.stderr
    assert "binlogkit.cli.pull" in mods and "click" in mods    # the probe sees what was imported
    assert heavy(mods) == []
    assert "pymysql" not in mods


def test_a_real_pull_imports_nothing_heavy(tmp_path):
    files = fixture_files(2)
    d = tmp_path / "copy"
    with FakePrimary(honest(files)) as fp:
        res, mods = imported(tmp_path, "pull", "--host", "127.0.0.1", "--port", str(fp.port), "--user", "repl",
                             "--server-id", "99", "--dir", str(d), "--until-end", env={"MYSQL_PWD": "x"})
    assert res.returncode == 0, res.stderr
    for name, data in files:   # byte for byte, but the in-use flag of the last file (never rotated away from)
        got = (d / name).read_bytes()
        assert got[:21] + got[22:] == data[:21] + data[22:]
    assert "binlogkit.pull.receiver" in mods and "binlogkit._pullscan" in mods   # it did log in and receive
    assert heavy(mods) == []
    assert "ssl" not in mods    # the fake primary offers no TLS: nothing to wrap
    assert "click" not in mods and "binlogkit.cli.entry" in mods   # its options read by cli/entry.py
    assert "encodings.idna" not in mods   # 127.0.0.1 resolved without the IDNA codec


def test_the_check_sees_a_heavy_import(tmp_path):
    """The same probe on a command that does load the decoders: the check can fail."""
    res, mods = imported(tmp_path, "decode", "--help")
    assert res.returncode == 0
    assert "binlogkit.cli.decode" in heavy(mods)


# -- the fsync policy: --sync none leaves the binlogs to the page cache; nothing that an ack promises
def _pull_traced(tmp_path: Path, files, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """A pull child under ``strace -f -e trace=fsync,fdatasync -y``: the paths it fsynced."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    d, log = tmp_path / "copy", tmp_path / "strace.txt"
    with FakePrimary(honest(files)) as fp:
        res = subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", str(log),
                              sys.executable, "-m", "binlogkit.cli", "pull", "--host", "127.0.0.1", "--port",
                              str(fp.port), "--user", "repl", "--server-id", "99", "--dir", str(d), "--until-end",
                              *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                             env={**os.environ, "MYSQL_PWD": "x"})
    synced = re.findall(r"fd?a?t?a?sync\(\d+<([^>]*)>", log.read_text())
    return res, [Path(p).name for p in synced]


@pytest.mark.parametrize("mode", ["none", "off"])
def test_sync_none_fsyncs_no_binlog(tmp_path, mode):
    files = fixture_files(2)
    res, synced = _pull_traced(tmp_path, files, "--sync", mode)
    assert res.returncode == 0, res.stderr
    binlogs = [n for n in synced if n in {name for name, _ in files}]
    if mode == "off":   # each file at its rotation or at the exit: the check sees fsyncs
        assert set(binlogs) == {name for name, _ in files}
    else:
        assert binlogs == [] and " 0 fsyncs" in res.stderr + res.stdout
        assert any(".index" in n for n in synced)    # the index is still replaced durably (a temporary, renamed)
    for name, data in files:
        got = (tmp_path / "copy" / name).read_bytes()
        assert got[:21] + got[22:] == data[:21] + data[22:]


def test_sync_none_is_refused_with_semisync(tmp_path):
    res = subprocess.run([sys.executable, "-m", "binlogkit.cli", "pull", "--user", "repl", "--server-id", "99",
                          "--dir", str(tmp_path / "copy"), "--sync", "none", "--semisync"], capture_output=True,
                         text=True, cwd=ROOT, timeout=60, env={**os.environ, "MYSQL_PWD": "x"})
    assert res.returncode == 2 and "--sync none" in res.stderr and "semisync" in res.stderr
    assert not (tmp_path / "copy").exists()


def test_pull_needs_no_pymysql(tmp_path):
    """PyMySQL made unimportable: pull logs in, queries and copies all the same (its client is
    ``pull.conn``'s own; before, this run stopped with "needs PyMySQL")."""
    files = fixture_files(2)
    code = ("import sys; sys.modules['pymysql'] = None; sys.argv[0] = 'binlogkit'\n"
            "from binlogkit.cli import main; main()")
    with FakePrimary(honest(files)) as fp:
        res = subprocess.run([sys.executable, "-c", code, "pull", "--host", "127.0.0.1", "--port", str(fp.port),
                              "--user", "u", "--server-id", "99", "--dir", str(tmp_path / "copy"), "--until-end"],
                             capture_output=True, text=True, cwd=ROOT, timeout=60, env={**os.environ, "MYSQL_PWD": "x"})
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    for name, data in files:
        got = (tmp_path / "copy" / name).read_bytes()
        assert got[:21] + got[22:] == data[:21] + data[22:]

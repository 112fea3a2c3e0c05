"""``binlogkit decode FILE`` (replayable, the C loop) starts light (issue 31's speed): the modules
the CLI in a child process has imported when it exits. No ``pull`` room and its ``ssl`` (the exit
code of a ``PullError`` is looked up by module name: ``cli/exits.LAZY``), no PyMySQL, pyarrow, duckdb,
fsspec, and no cryptography for an unencrypted file. ``binlogkit``'s public names are exported
lazily (PEP 562) and stay importable. Construct is still loaded: the reader's framing takes the
header layout and the Format_description check from ``codecs``.

Start-up costs, measured: docs/explanation/speed.md, "binlogkit decode".
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import binlogkit
from import_probe import imported

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "samples"
HEAVY = ("ssl", "_ssl", "pymysql", "pyarrow", "duckdb", "cryptography", "fsspec", "pyspark", "numpy", "pandas",
         "binlogkit.pull", "binlogkit.export", "binlogkit.audit", "binlogkit.flashback", "binlogkit.crypto.mariadb",
         "binlogkit.crypto.mysql")


def heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("path", [SAMPLES / "mariadb-11.8" / "mariadb-bin.000001",
                                  SAMPLES / "mysql-9.7" / "quotes.000001"], ids=lambda p: p.parent.name)
def test_replayable_decode_imports_nothing_heavy(tmp_path, path):
    if not path.exists():
        pytest.skip(f"no fixture {path}")
    res, mods = imported(tmp_path, "decode", str(path))
    assert res.returncode == 0, res.stderr
    assert b"BINLOG '" in res.stdout and b"DELIMITER ;" in res.stdout
    assert "binlogkit._fastdecode" in mods and "binlogkit.cli.decode" in mods   # the probe saw the C loop run
    assert heavy(mods) == []


def test_a_damaged_file_exits_1_without_pull(tmp_path):
    """The error's exit code comes from ``cli/exits``' table without importing ``pull``."""
    data = (SAMPLES / "mariadb-11.8" / "mariadb-bin.000001").read_bytes()
    cut = tmp_path / "mariadb-bin.000001"
    cut.write_bytes(data[: len(data) - 7])
    res, mods = imported(tmp_path, "decode", str(cut))
    assert res.returncode == 1 and b"binlogkit: error:" in res.stderr, res.stderr
    assert heavy(mods) == []


def test_the_check_sees_a_heavy_import(tmp_path):
    """The same probe on an encrypted file with its keys: cryptography is loaded, the check can fail."""
    from fixtures.lab.encrypted import keys_args

    path = ROOT / "fixtures" / "encrypted" / "mariadb-aes-cbc" / "primary" / "mariadb-bin.000001"
    res, mods = imported(tmp_path, "decode", *keys_args("mariadb-aes-cbc"), str(path))
    assert res.returncode == 0, res.stderr
    assert "cryptography" in heavy(mods)


def test_pull_errors_keep_their_exit_code():
    from binlogkit.cli.exits import EXIT_USAGE, exit_code, message
    from binlogkit.pull.protocol import HostileServer, PullError

    assert exit_code(PullError("refused")) == EXIT_USAGE and message(PullError("refused")) == "refused"
    assert exit_code(HostileServer("a name with a slash")) == EXIT_USAGE   # a subclass: the nearest class wins


def test_public_names_are_exported():
    for name in binlogkit.__all__:
        assert hasattr(binlogkit, name), name
        assert name in dir(binlogkit)
    from binlogkit import Event, Flavor, Format, Input, RawEvent, decode, iter_raw_events

    assert Event is importlib.import_module("binlogkit.reading.events").Event
    assert decode is importlib.import_module("binlogkit.reading.events").decode
    assert Format is importlib.import_module("binlogkit.reading.format").Format
    assert Flavor is importlib.import_module("binlogkit.flavor").Flavor
    assert RawEvent is importlib.import_module("binlogkit.reading.reader").RawEvent
    assert iter_raw_events is importlib.import_module("binlogkit.reading.reader").iter_raw_events
    assert Input is importlib.import_module("binlogkit.reading.source").Input
    with pytest.raises(AttributeError):
        binlogkit.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        from binlogkit import no_such_name  # noqa: F401


# -- the C loop writes its text straight to the output descriptor (fastdecode.ReplayChunks.direct)
BENCH = Path("/work/benchdata/mariadb-bin.000001")


def _samples() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*/*") if p.is_file() and p.suffix[1:].isdigit())


def _through_fd(tmp_path: Path, *args: str) -> tuple[int, bytes, bytes]:
    """``binlogkit decode ARGS`` in a child, stdout a file (the C loop writes there) and a pipe:
    the exit code and the two outputs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BINLOGKIT_") and k != "PYTHONUNBUFFERED"}
    cmd = [sys.executable, "-m", "binlogkit", "decode", *args]   # stdout buffered, as it runs for users
    with open(tmp_path / "out.sql", "wb") as fh:
        to_file = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, cwd=ROOT, timeout=300, env=env)
    to_pipe = subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=300, env=env)
    assert to_file.returncode == to_pipe.returncode and to_file.stderr == to_pipe.stderr
    return to_pipe.returncode, (tmp_path / "out.sql").read_bytes(), to_pipe.stdout


def _in_process(*args: str) -> tuple[int, bytes]:
    """The same through click's runner: no descriptor, the C loop's text comes back as bytes."""
    from click.testing import CliRunner

    from binlogkit.cli import main

    res = CliRunner().invoke(main, ["decode", *args])
    return res.exit_code, res.stdout_bytes


@pytest.mark.parametrize("path", _samples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_direct_writes_are_the_returned_bytes(tmp_path, path):
    code, to_file, to_pipe = _through_fd(tmp_path, "--utc", str(path))
    assert (code, to_file) == _in_process("--utc", str(path))
    assert to_pipe == to_file and b"BINLOG '" in to_file


def test_direct_writes_of_several_files_and_a_torn_tail(tmp_path):
    """Several files in one run (the Python path's text between the C loop's writes), the last
    one torn: the output up to the damage, the same; exit 1."""
    files = _samples()[:3]
    torn = tmp_path / "torn.000009"
    data = files[-1].read_bytes()
    torn.write_bytes(data[: len(data) * 2 // 3])
    code, to_file, to_pipe = _through_fd(tmp_path, "--utc", *map(str, files), str(torn))
    assert (code, to_file) == _in_process("--utc", *map(str, files), str(torn))
    assert code == 1 and to_pipe == to_file and to_file.count(b"DELIMITER /*!*/;") == len(files) + 1


def test_direct_writes_of_many_mib(tmp_path):
    """Past the C loop's 1 MiB writes: the first 6 MB of the bench binlog (torn there)."""
    if not BENCH.exists():
        pytest.skip("no bench binlog (make bench-data)")
    part = tmp_path / "mariadb-bin.000001"
    with open(BENCH, "rb") as fh:
        part.write_bytes(fh.read(6_000_000))
    code, to_file, to_pipe = _through_fd(tmp_path, "--utc", str(part))
    assert (code, to_file) == _in_process("--utc", str(part))
    assert len(to_file) > 4 << 20 and to_pipe == to_file

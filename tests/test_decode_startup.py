"""``binlogkit decode FILE`` (replayable, the C loop) starts light (issue 31's speed): the modules
the CLI in a child process has imported when it exits. No ``pull`` room and its ``ssl`` (the exit
code of a ``PullError`` is looked up by module name: ``cli/exits.LAZY``), no PyMySQL, pyarrow, duckdb,
fsspec, and no cryptography for an unencrypted file. ``binlogkit``'s public names are exported
lazily (PEP 562) and stay importable. Construct is still loaded: the reader's framing takes the
header layout and the Format_description check from ``codecs``.

Start-up costs, measured: docs/decode.md, "Speed".
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import binlogkit

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "fixtures" / "samples"
HEAVY = ("ssl", "_ssl", "pymysql", "pyarrow", "duckdb", "cryptography", "fsspec", "pyspark", "numpy", "pandas",
         "binlogkit.pull", "binlogkit.export", "binlogkit.audit", "binlogkit.flashback", "binlogkit.crypto.mariadb",
         "binlogkit.crypto.mysql")
PROBE = ("import atexit, sys\n"
         "def _dump():\n"
         "    with open(out, 'w') as fh:\n"
         "        fh.write('\\n'.join(sorted(n for n, m in sys.modules.items() if m is not None)))\n"
         "atexit.register(_dump)\n"
         "out = sys.argv[1]; sys.argv = ['binlogkit'] + sys.argv[2:]\n"
         "from binlogkit.cli import main\n"
         "main()\n")


def imported(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``binlogkit ARGS`` in a child; what it had imported at exit."""
    out = tmp_path / "modules.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BINLOGKIT_")}
    res = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True, cwd=ROOT, timeout=120,
                         env={**env, "PYTHONPATH": str(ROOT)})
    return res, set(out.read_text().split("\n"))


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

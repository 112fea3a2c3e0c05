"""The command line: help for every command, exit codes, output formats."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from binlogkit import __version__
from binlogkit.cli import main
from fixtures import store


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_version():
    res = run("--version")
    assert res.exit_code == 0 and __version__ in res.output


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_has_help(command):
    res = run(command, "--help")
    assert res.exit_code == 0
    assert len(main.commands[command].help or "") > 40
    assert "Usage:" in res.output


def test_console_script_installed():
    res = subprocess.run([sys.executable, "-m", "binlogkit.cli", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "decode" in res.stdout


def test_decode_table_and_json_agree():
    path = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001"
    table = run("decode", str(path))
    js = run("decode", "--json", str(path))
    assert table.exit_code == js.exit_code == 0
    rows = [json.loads(line) for line in js.output.splitlines()]
    ats = [int(line[5:]) for line in table.output.splitlines() if line.startswith("# at ")]
    assert ats == [r["offset"] for r in rows]
    assert rows[0]["type"] == "FORMAT_DESCRIPTION_EVENT" and rows[0]["offset"] == 4
    assert rows[0]["fields"]["server_version"].startswith("10.11")
    for a, b in zip(rows, rows[1:]):
        assert b["offset"] == a["offset"] + a["event_size"]


def test_decode_damaged_exits_1_with_location():
    path = store.materialize("crash-torn-position") / "relay"
    torn = store.manifest("crash-torn-position")["truth"]["torn"][0]
    res = run("decode", str(path / torn["file"]))
    assert res.exit_code == 1
    assert f"offset {torn['offset']}" in res.output and "torn event" in res.output


def test_decode_missing_file_exits_2():
    assert run("decode", "/nonexistent/file").exit_code == 2


def test_decode_does_not_open_for_writing(tmp_path, monkeypatch):
    """Read-only commands never open an input for writing (checked at every open call)."""
    import builtins
    import lzma

    modes = []
    real_open, real_lzma = builtins.open, lzma.open
    monkeypatch.setattr(builtins, "open", lambda f, mode="r", *a, **k: (modes.append(mode), real_open(f, mode, *a, **k))[1])
    monkeypatch.setattr(lzma, "open", lambda f, mode="rb", *a, **k: (modes.append(mode), real_lzma(f, mode, *a, **k))[1])
    src = store.SETS_DIR / "crash-torn-gtid" / "relay"
    for name in ("relay-bin.000004.xz", "relay-bin.000005.xz"):
        run("decode", str(src / name))
    assert modes and all(set(m) <= {"r", "b", "t"} for m in modes), modes

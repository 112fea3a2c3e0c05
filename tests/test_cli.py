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
    table = run("decode", "--base64-output=decode-rows", str(path))
    js = run("decode", "--base64-output=decode-rows", "--json", str(path))
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
    res = run("decode", "--base64-output=decode-rows", str(path / torn["file"]))
    assert res.exit_code == 1
    assert f"offset {torn['offset']}" in res.output and "torn event" in res.output


def test_decode_missing_file_exits_2():
    assert run("decode", "--base64-output=decode-rows", "/nonexistent/file").exit_code == 2


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
        run("decode", "--base64-output=decode-rows", str(src / name))
    assert modes and all(set(m) <= {"r", "b", "t"} for m in modes), modes


def test_verify_folder_reports_the_torn_file():
    d = store.materialize("crash-torn-position") / "relay"
    torn = store.manifest("crash-torn-position")["truth"]["torn"][0]
    res = run("verify", str(d))
    assert res.exit_code == 1
    lines = res.output.splitlines()
    assert any(l.startswith("OK ") for l in lines)
    bad = [l for l in lines if l.startswith("BAD")]
    assert len(bad) == 1 and torn["file"] in bad[0] and f"offset {torn['offset']}" in bad[0]
    js = run("verify", "--json", str(d))
    docs = [json.loads(l) for l in js.output.splitlines()]
    assert [d["problem"]["offset"] for d in docs if not d["ok"]] == [torn["offset"]]


def test_verify_clean_set_exits_0():
    d = store.materialize("replication-gtid") / "primary" / "mariadb-bin.index"
    res = run("verify", str(d))
    assert res.exit_code == 0 and res.output.count("OK ") == len(store.manifest("replication-gtid")["primary"]["binlog_files"])


def test_decode_filters():
    path = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001"
    js = [json.loads(l) for l in run("decode", "--base64-output=decode-rows", "--json", str(path)).output.splitlines()]
    mid = js[len(js) // 2]["offset"]
    part = [json.loads(l) for l in run("decode", "--base64-output=decode-rows", "--json", "--start-position", str(mid), "--stop-position",
                                       str(js[-1]["offset"]), str(path)).output.splitlines()]
    assert part[0]["offset"] == mid and part[-1]["end_offset"] == js[-1]["offset"]
    xids = [json.loads(l) for l in run("decode", "--base64-output=decode-rows", "--json", "--type", "xid", str(path)).output.splitlines()]
    assert xids and all(e["type"] == "XID_EVENT" for e in xids)
    assert len(xids) == sum(1 for e in js if e["type"] == "XID_EVENT")
    assert run("decode", "--base64-output=decode-rows", "--type", "nonsense", str(path)).exit_code == 2
    late = [json.loads(l) for l in run("decode", "--base64-output=decode-rows", "--json", "--start-datetime", "2100-01-01", str(path)).output.splitlines()]
    assert late == []


def test_decode_lenient_carries_on(tmp_path):
    """A corrupt event mid-file: strict stops there (exit 1); lenient reports it and goes on."""
    src = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001"
    js = [json.loads(l) for l in run("decode", "--base64-output=decode-rows", "--json", str(src)).output.splitlines()]
    victim = next(e for e in js if e["type"] == "TABLE_MAP_EVENT")
    raw = bytearray(src.read_bytes())
    raw[victim["offset"] + 19 + 8] = 200  # db length runs past the body
    body_end = victim["end_offset"] - 4
    import zlib
    raw[body_end:body_end + 4] = zlib.crc32(bytes(raw[victim["offset"]:body_end])).to_bytes(4, "little")
    f = tmp_path / "bad.bin"
    f.write_bytes(bytes(raw))
    strict = run("decode", "--base64-output=decode-rows", "--json", str(f))
    assert strict.exit_code == 1
    lenient = run("decode", "--base64-output=decode-rows", "--json", "--lenient", str(f))
    assert lenient.exit_code == 1
    n_strict = sum(1 for l in strict.output.splitlines() if l.startswith("{"))
    n_lenient = sum(1 for l in lenient.output.splitlines() if l.startswith("{"))
    assert n_strict < n_lenient == len(js) - 1
    assert f"offset {victim['offset']}" in strict.output


def test_decode_progress_goes_to_a_terminal_stderr_only(tmp_path):
    """Output redirected, stderr a terminal: progress on stderr, output untouched; stderr not a
    terminal: nothing on stderr."""
    import os
    import pty
    import subprocess
    import sys

    from fixtures import store

    path = store.materialize("replication-gtid") / "primary"  # 8 files, ~8 000 events
    cmd = [sys.executable, "-m", "binlogkit.cli", "decode", "--base64-output=decode-rows", str(path)]
    env = dict(os.environ, BINLOGKIT_PROGRESS_MIN_BYTES="0")
    plain = subprocess.run(cmd, capture_output=True, env=env)
    assert plain.returncode == 0 and plain.stderr == b""
    master, slave = pty.openpty()
    with open(tmp_path / "out.txt", "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.returncode == 0
    assert b"decode mariadb-bin.00000" in seen and b"%" in seen
    assert (tmp_path / "out.txt").read_bytes() == plain.stdout


def _on_a_terminal(cmd: list[str], env: dict, stdout_too: bool = False) -> tuple[int, bytes, bytes]:
    """(exit code, what a terminal on stderr saw, stdout) of ``cmd`` run with stderr (and with
    ``stdout_too`` stdout as well) on a pseudo-terminal, read while it runs (a full terminal
    would block it)."""
    import os
    import pty
    import subprocess
    import tempfile

    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=slave if stdout_too else out, stderr=slave, env=env)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:       # EIO: the last writer closed its end
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        code = proc.wait(timeout=600)
        out.seek(0)
        written = out.read()
    return code, seen, written


@pytest.mark.parametrize("command", [["export", "-o", "{tmp}/out"], ["export", "--format", "delta", "-o", "{tmp}/lake"],
                                     ["transactions"], ["gtids"], ["flashback", "--start-position", "4", "--skip-statements", "-o", "{tmp}-undo.bin"],
                                     ["pitr", "--from-file", "mariadb-bin.000001", "--from-position", "4",
                                      "--until-gtid", "0-1-3014"]])
def test_long_commands_show_progress_on_a_terminal_stderr_only(command, tmp_path):
    """export (Parquet and lake), transactions, gtids, flashback and pitr (its pool's files as they
    are done) say on a terminal's stderr which
    file they read and how far (the reading layer's one watcher): the file's number among the
    inputs and a percentage, erased at the end; with stderr not a terminal, or (transactions)
    with their lines on the same terminal, nothing; the output is the same either way."""
    import os
    import re
    import subprocess
    import sys

    from fixtures import store

    if "delta" in command:
        pytest.importorskip("deltalake")
    path = store.materialize("replication-gtid") / "primary"   # 16 files, the 8th 24 MB
    env = dict(os.environ, BINLOGKIT_PROGRESS_MIN_BYTES="0")

    def cmd(tag: str) -> list[str]:
        return [sys.executable, "-m", "binlogkit.cli", *[c.format(tmp=tmp_path / tag) for c in command], str(path)]

    plain = subprocess.run(cmd("plain"), capture_output=True, env=env)
    assert plain.returncode in (0, 1) and b"%" not in plain.stderr and b"\r" not in plain.stderr
    code, seen, written = _on_a_terminal(cmd("tty"), env)
    assert code == plain.returncode
    label = b"export --format delta" if "delta" in command else command[0].encode()
    assert label + b": file 8 of 16: mariadb-bin.000008 " in seen and b"%" in seen, seen[:300]
    assert re.search(rb"\r +\r", seen[seen.rindex(b"%"):]), seen[-200:]    # the line erased at the end
    if command[0] in ("transactions", "gtids", "pitr"):
        assert written == plain.stdout
    if command[0] == "transactions":
        _code, both, _ = _on_a_terminal(cmd("both"), env, stdout_too=True)
        assert b"file 8 of 16" not in both
    if command[0] == "gtids":
        env_big = dict(env, BINLOGKIT_PROGRESS_MIN_BYTES=str(1 << 40))     # small inputs: nothing
        _code, quiet, _ = _on_a_terminal(cmd("quiet"), env_big)
        assert b"%" not in quiet

"""The committed MySQL 9.7.4 binlog_encryption set (fixtures/mysql-9.7/keyring-encrypted: a real
server's binlogs and its component_keyring_file keyring) read anywhere, checked against the
server's own answers in its manifest (SHOW BINARY LOGS, gtid_executed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mysql-9.7" / "keyring-encrypted"
BIN = [sys.executable, "-m", "binlogkit.cli"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*BIN, *args], capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))


def test_the_servers_answers_with_the_component_keyring(tmp_path):
    m = json.loads((FIX / "manifest.json").read_text())
    shutil.copy(FIX / "keyring", tmp_path / "keyring")
    os.chmod(tmp_path / "keyring", 0o600)
    files = [str(FIX / "binlogs" / f["Log_name"]) for f in m["show_binary_logs"]]
    res = _cli("verify", "--keyring-file", str(tmp_path / "keyring"), *files)
    assert res.returncode == 0, res.stderr
    sizes = [int(line.split()[-2]) for line in res.stdout.splitlines()]
    assert sizes == [f["File_size"] for f in m["show_binary_logs"]]
    res = _cli("gtids", "--keyring-file", str(tmp_path / "keyring"), *files)
    assert res.returncode == 0 and res.stdout.strip().splitlines()[-1].endswith(m["gtid_executed"])
    # the keyring is the component's JSON, and without it every file is a usage error
    assert (FIX / "keyring").read_bytes().startswith(b'{"version":"1.0","elements":')
    res = _cli("verify", files[0])
    assert res.returncode == 2 and "MySQLReplicationKey_" in res.stderr and "Traceback" not in res.stderr

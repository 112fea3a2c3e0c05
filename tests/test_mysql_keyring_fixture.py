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


def test_recover_cuts_an_encrypted_binlog_past_its_header(tmp_path):
    """recover --binlog on MySQL binlog_encryption files: positions are in the plaintext stream,
    the file has the 512-byte header before it. The cut is made at position + 512 (it was made
    at the position, which tore the last whole events and the server's header of short files);
    what is left verifies with the keyring and is the file's own prefix."""
    d = tmp_path / "b"
    shutil.copytree(FIX / "binlogs", d)
    shutil.copy(FIX / "keyring", tmp_path / "keyring")
    os.chmod(tmp_path / "keyring", 0o600)
    key = ["--keyring-file", str(tmp_path / "keyring")]
    last = sorted(d.glob("binlog.0*"))[-1]
    whole = last.read_bytes()
    os.truncate(last, len(whole) - 100)  # a torn last transaction
    res = _cli("recover", "--binlog", str(d), *key, "--json")
    plan = json.loads(res.stdout)
    (cut,) = plan["partial_transaction"]["cut"]
    (tr,) = plan["truncate"]
    assert tr["file"] == cut["file"] == last.name and tr["new_size"] == cut["offset"] + 512
    res = _cli("recover", "--binlog", str(d), *key, "--apply", "--backup-dir", str(tmp_path / "bk"))
    assert res.returncode == 0, res.stderr
    assert last.read_bytes() == whole[:cut["offset"] + 512]
    res = _cli("verify", *key, str(last))
    assert res.returncode == 0, res.stdout + res.stderr
    res = _cli("recover", "--binlog", str(d), *key, "--json")
    assert json.loads(res.stdout)["truncate"] == []


def test_incident_appends_encrypted_events_to_an_encrypted_binlog(tmp_path):
    """incident --keyring-file on MySQL binlog_encryption files: the Gtid, Incident and Rotate
    are written encrypted under the file's own key at their stream offsets (AES-CTR), so the
    file verifies with the keyring and decodes them; without the keyring it is refused, exit 2,
    nothing written; a second run writes nothing."""
    d = tmp_path / "b"
    shutil.copytree(FIX / "binlogs", d)
    (d / "binlog.index").write_text("".join(f"./{p.name}\n" for p in sorted(d.glob("binlog.0*"))))
    shutil.copy(FIX / "keyring", tmp_path / "keyring")
    os.chmod(tmp_path / "keyring", 0o600)
    key = ["--keyring-file", str(tmp_path / "keyring")]
    last = sorted(d.glob("binlog.0*"))[-1]
    before = last.read_bytes()
    res = _cli("incident", str(d), "--gtid", "none", "--backup-dir", str(tmp_path / "bk0"))
    assert res.returncode == 2 and "--keyring-file" in res.stderr and "Traceback" not in res.stderr
    assert last.read_bytes() == before
    res = _cli("incident", *key, str(d), "--message", "lost in transit", "--backup-dir", str(tmp_path / "bk"))
    assert res.returncode == 0, res.stderr
    after = last.read_bytes()
    assert after[:len(before)] == before and after[:4] == b"\xfdbin" and b"lost in transit" not in after
    res = _cli("verify", *key, str(last))
    assert res.returncode == 0, res.stdout + res.stderr
    res = _cli("decode", *key, "--json", str(last))
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    tail = [e["name"] for e in events[-3:]]
    assert tail == ["Gtid", "Incident", "Rotate"], tail
    assert events[-2]["fields"]["message"] == "lost in transit"
    m = json.loads((FIX / "manifest.json").read_text())
    uuid, last_gno = m["gtid_executed"].split(":")[0], int(m["gtid_executed"].rsplit("-", 1)[1])
    assert events[-3]["fields"]["gtid"] == f"{uuid}:{last_gno + 1}"  # the server's next GTID
    res = _cli("incident", *key, str(d), "--message", "lost in transit", "--backup-dir", str(tmp_path / "bk2"))
    assert res.returncode == 0 and last.read_bytes() == after

"""MySQL 9.7.4 ``binlog_encryption=ON`` with ``component_keyring_file`` (MySQL 9.x has no
keyring_file plugin), read offline by binlogkit with ``--keyring-file``, proven against the
server decrypting the same files (issue 29).

A real MySQL 9.7 server started by the lab with ``keyring=True`` (its datadir's own manifest
loads component_keyring_file, the keyring a file of the lab's) writes a workload with 64 KiB
rotations, DDL, a multi-statement transaction and a ~768 KiB one. Then, on its encrypted files:

* ``mysqlbinlog --read-from-remote-server --raw`` gives the plain files as the server decrypts
  them; binlogkit's ``decode`` / ``verify`` / ``gtids`` on the encrypted files with the keyring
  print exactly what they print on those plain files (same positions: MySQL counts them after
  the 512-byte encryption header);
* ``decode -v`` row lines equal ``mysqlbinlog --read-from-remote-server -v``'s, event by event;
* the GTID set is the server's gtid_executed;
* without the keyring every encrypted file is a usage error naming the key (exit 2), never a
  traceback or garbage.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from fixtures.lab import Lab
from fixtures.lab import workload
from fixtures.lab.kinds import KINDS

pytestmark = [pytest.mark.server, pytest.mark.kind("mysql-9.7")]

BIN = [sys.executable, "-m", "binlogkit.cli"]
ENCRYPTED_MAGIC = b"\xfdbin"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*BIN, *args], capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))


def _remote(server, *args: str) -> subprocess.CompletedProcess:
    """MySQL 9.7's own mysqlbinlog reading through the server (which decrypts)."""
    k = server.kind
    return subprocess.run(k.argv(k.binary(k.binlog_tool), "--read-from-remote-server", f"--socket={k.inner(server.socket)}",
                                 "--user=root", *args), capture_output=True, text=True,
                          env=dict(os.environ, TZ="UTC"))


def _rows_by_event(text: str) -> dict[int, list[str]]:
    """``### `` row lines of each event, keyed by its ``# at N`` position."""
    out: dict[int, list[str]] = {}
    at = None
    for line in text.splitlines():
        m = re.match(r"^# at (\d+)$", line)
        if m:
            at = int(m.group(1))
        elif line.startswith("### ") and at is not None:
            out.setdefault(at, []).append(line)
    return out


@pytest.fixture(scope="module")
def encrypted():
    with Lab(kind="mysql-9.7") as lab:
        p = lab.server("primary", 1, keyring=True, binlog_encryption="ON").start()
        workload.schema(p)
        workload.small(p, 300)
        workload.ddl(p)
        workload.multi(p)
        workload.big(p, 3, 256 * 1024, first_id=1)
        workload.small(p, 200, start=300)
        p.execute("FLUSH BINARY LOGS")
        names = [f["Log_name"] for f in p.query("SHOW BINARY LOGS")]
        assert all(f["Encrypted"] == "Yes" for f in p.query("SHOW BINARY LOGS"))
        executed = p.var("gtid_executed").replace("\n", "")
        status = {r["STATUS_KEY"]: r["STATUS_VALUE"] for r in
                  p.query("SELECT * FROM performance_schema.keyring_component_status")}
        work = Path(tempfile.mkdtemp(prefix="bk-keyring-", dir=KINDS["mysql-9.7"].root / "tmp"))
        try:
            enc, plain = work / "enc", work / "plain"
            enc.mkdir()
            plain.mkdir()
            os.chmod(work, 0o777)
            os.chmod(plain, 0o777)
            for n in names[:-1]:  # the closed files (the last one is still being written)
                shutil.copy(p.datadir / n, enc / n)
            keyring = work / "keyring"
            shutil.copy(p.keyring, keyring)
            res = _remote(p, "--raw", f"--result-file={p.kind.inner(plain)}/", *names[:-1])
            assert res.returncode == 0, res.stderr
            verbose = _remote(p, "-v", "--base64-output=decode-rows", *names[:-1])
            assert verbose.returncode == 0, verbose.stderr
            yield {"enc": enc, "plain": plain, "keyring": keyring, "names": names[:-1], "executed": executed,
                   "status": status, "verbose": verbose.stdout}
        finally:
            shutil.rmtree(work, ignore_errors=True)


def test_the_server_really_encrypted_with_component_keyring_file(encrypted):
    assert encrypted["status"]["Component_status"] == "Active"
    assert encrypted["status"]["Implementation_name"] == "component_keyring_file"
    assert len(encrypted["names"]) >= 3  # 64 KiB rotations: several encrypted files
    for n in encrypted["names"]:
        assert (encrypted["enc"] / n).read_bytes()[:4] == ENCRYPTED_MAGIC
        assert (encrypted["plain"] / n).read_bytes()[:4] == b"\xfebin"
        assert (encrypted["enc"] / n).stat().st_size == (encrypted["plain"] / n).stat().st_size + 512
    # the component's keyring is JSON (not the old plugin's layout) holding the replication key
    assert encrypted["keyring"].read_bytes().lstrip().startswith(b"{")
    assert b"MySQLReplicationKey_" in encrypted["keyring"].read_bytes()


@pytest.mark.parametrize("command", [["decode"], ["decode", "--base64-output=decode-rows", "-v"], ["verify"], ["gtids"], ["transactions"]],
                         ids=lambda c: " ".join(c))
def test_keyring_output_equals_the_servers_own_decryption(encrypted, command):
    enc = [str(encrypted["enc"] / n) for n in encrypted["names"]]
    plain = [str(encrypted["plain"] / n) for n in encrypted["names"]]
    ours = _cli(*command, "--keyring-file", str(encrypted["keyring"]), *enc)
    theirs = _cli(*command, *plain)
    assert ours.returncode == 0 == theirs.returncode, ours.stderr + theirs.stderr
    norm = lambda s: s.replace(str(encrypted["enc"]), "D").replace(str(encrypted["plain"]), "D")  # noqa: E731
    ours_text = re.sub(r", encrypted \(MySQL[^)]*\)", "", norm(ours.stdout))  # verify names the encryption
    if command == ["verify"]:  # verify counts the file's bytes: the 512-byte encryption header more
        ours_text = re.sub(r"(\d+) bytes", lambda m: f"{int(m.group(1)) - 512} bytes", ours_text)
    assert ours_text == norm(theirs.stdout)
    assert len(ours.stdout) > 200


def test_decode_v_rows_equal_mysqlbinlog_through_the_server(encrypted):
    ours_text = ""
    for n in encrypted["names"]:
        res = _cli("decode", "--base64-output=decode-rows", "-v", "--keyring-file", str(encrypted["keyring"]), str(encrypted["enc"] / n))
        assert res.returncode == 0, res.stderr
        ours_text += res.stdout
    ours, theirs = _rows_by_event(ours_text), _rows_by_event(encrypted["verbose"])
    assert sum(map(len, theirs.values())) > 1000
    assert ours == theirs


def test_gtids_are_the_servers_gtid_executed(encrypted):
    res = _cli("gtids", "--keyring-file", str(encrypted["keyring"]),
               *(str(encrypted["enc"] / n) for n in encrypted["names"]))
    assert res.returncode == 0, res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.endswith(encrypted["executed"]), (last, encrypted["executed"])


def test_without_the_keyring_a_usage_error_naming_the_key(encrypted):
    res = _cli("verify", str(encrypted["enc"] / encrypted["names"][0]))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "MySQLReplicationKey_" in res.stderr and "--keyring-file" in res.stderr

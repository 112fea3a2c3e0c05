"""`pull` from a primary whose binlogs are encrypted (MariaDB ``encrypt_binlog=ON``,
file_key_management), on real servers.

The primary decrypts what it sends, but it keeps the positions of its files: the Start_encryption
event after the Format_description is sent (as it is written, ``LOG_EVENT_IGNORABLE_F``), so the
copy holds every event at the offset the primary's file has it, in clear, with that marker
(a "decrypted copy": binlogkit's reader and mariadb-binlog read the events after it in clear; the
marker itself arrives flagged LOG_EVENT_IGNORABLE_F, as the primary sends it). A dump that
starts inside a file gets the Format_description and the Start_encryption again, made up for the
stream (``log_pos`` 0): they are not events of the file at that place and must not be written
there (a resumed pull appended the 40-byte marker, and every later position was off by 40).

Proof: pulls resumed inside a file and at a new file; every copy has the size of the primary's
file and, event for event, the bytes our reader gets from the primary's file decrypted with the
key file; the copies verify; the state the folder resumes from is the primary's position.
"""

from __future__ import annotations

import pytest

from binlogkit.reading.source import Input
from fixtures.lab import Lab, workload
from fixtures.lab.encrypted import start_encrypted_primary
from fixtures.lab.pull_lab import binlog_names, primary_binlogs, run_pull, settle

pytestmark = pytest.mark.server

KINDS = [pytest.param(None, "AES_CTR", id="mariadb-10.11-ctr"),
         pytest.param("mariadb-11.8", "AES_CBC", id="mariadb-11.8-cbc", marks=pytest.mark.kind("mariadb-11.8")),
         pytest.param("mysql-9.7", None, id="mysql-9.7", marks=pytest.mark.kind("mysql-9.7"))]


def _events(inp: Input) -> list[tuple]:
    """(offset, type, log_pos, flags, bytes) of every event; the Start_encryption's flags and
    bytes left out: the primary sends it flagged LOG_EVENT_IGNORABLE_F (its checksum made
    again), which its file's own copy is not."""
    return [(f.offset, f.type_code, f.log_pos) + ((f.flags, bytes(f.data)) if f.type_code != 164 else ())
            for f in inp.frames(want=None)]


@pytest.mark.parametrize("kind, cipher", KINDS)
def test_pull_of_an_encrypted_primary_resumes_at_the_primarys_positions(tmp_path, kind, cipher):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p, keys = start_encrypted_primary(lab, cipher)   # None: MySQL binlog_encryption, keyring
        workload.small(p, 20)
        copy = tmp_path / "copy"
        steps = []
        for step in ("first", "inside the file", "at a new file"):
            if step == "inside the file":
                workload.small(p, 15)
            elif step == "at a new file":
                p.execute("FLUSH BINARY LOGS")
                workload.small(p, 10)
            settle(p)
            r = run_pull(p, copy, "--until-end")
            assert r.returncode == 0, r.stderr
            steps.append(r.stderr)
        names = primary_binlogs(p)
        assert binlog_names(copy) == names
        for name in names:
            served = p.datadir / name
            pulled = copy / name
            # MySQL: the positions are the plaintext stream's, after the file's 512-byte header
            header = 0 if cipher else 512
            assert pulled.stat().st_size == served.stat().st_size - header, name
            want = _events(Input(str(served), keys))
            got = _events(Input(str(pulled)))
            assert [e[:3] for e in got] == [e[:3] for e in want], name
            assert got == want, name            # the same bytes, decrypted
            assert sum(e[1] == 164 for e in got) == (1 if cipher else 0), name   # MariaDB: the file's own marker


@pytest.mark.parametrize("kind, cipher", KINDS)
def test_recover_former_primary_against_the_pull_of_an_encrypted_primary(tmp_path, kind, cipher):
    """The failover's last step on an encrypted primary: its binlogs (ciphertext, MySQL's with
    the 512-byte file header) against pull's decrypted copy. recover names and cuts exactly the
    transactions the copy lacks, at the encrypted file's own offsets, and the cut files still
    read with the keys, holding what the copy holds."""
    from click.testing import CliRunner

    from binlogkit.api import expand_paths, transactions
    from binlogkit.cli import main

    with Lab(tmp_path / "lab", kind=kind) as lab:
        p, keys = start_encrypted_primary(lab, cipher)
        workload.small(p, 20)
        settle(p)
        copy = tmp_path / "copy"
        r = run_pull(p, copy, "--until-end")
        assert r.returncode == 0, r.stderr
        workload.small(p, 7, start=5000)          # the tail pull never received
        settle(p)
        p.kill9()
        held = [t.gtid for t in transactions(expand_paths([str(copy)])) if t.complete and t.gtid]
        index = p.datadir / f"{p.options['log_bin']}.index"
        old = [t.gtid for t in transactions(Input(str(x), keys) for x in expand_paths([index])) if t.complete and t.gtid]
        tail = old[len(held):]
        assert old[:len(held)] == held and len(tail) >= 7
        key_args = ["--keyring-file", str(p.keyring)] if cipher is None else \
            ["--key-file", str(lab.work / "keys" / "keys.txt")]
        plan = CliRunner().invoke(main, ["recover", "--binlog", str(p.datadir), "--replica", str(copy), "--json",
                                         *key_args])
        assert plan.exit_code == 1, plan.output    # a repair pending
        assert all(g in plan.output for g in (tail[0], tail[-1])), plan.output
        out = CliRunner().invoke(main, ["recover", "--binlog", str(p.datadir), "--replica", str(copy), "--apply",
                                        "--backup-dir", str(tmp_path / "backup"), *key_args])
        assert out.exit_code == 0, out.output
        after = [t.gtid for t in transactions(Input(str(x), keys) for x in expand_paths([index])) if t.complete and t.gtid]
        assert after == held
        again = CliRunner().invoke(main, ["recover", "--binlog", str(p.datadir), "--replica", str(copy), *key_args])
        assert again.exit_code == 0, again.output   # idempotent: nothing left to do

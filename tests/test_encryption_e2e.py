"""Encrypted logs with real servers (issue 20, proofs 3 and 5): MariaDB servers with
encrypt_binlog=ON and file_key_management.

* A replica killed with SIGKILL inside a large transaction (its relay logs rotating every
  64 KiB under it), its newest relay log torn on top: `binlogkit recover --apply --key-file`
  repairs the encrypted relay directory, the replica restarts, reads its relay logs and catches
  up with the primary's data.
* `binlogkit incident --key-file` on a stopped primary's encrypted binlog: the restarted server
  decrypts and serves the events we wrote encrypted (SHOW BINLOG EVENTS shows them), and a
  replica stops with error 1590.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.crypto import load_keys
from binlogkit.reading.scan import scan
from binlogkit.reading.source import Input
from binlogkit.writing.writer import record_incident
from fixtures.lab import Lab, catch_up, connect, grant_replication, wait_replica
from fixtures.lab import workload
from fixtures.lab.encrypted import encryption_options, write_key_file
from fixtures.lab.oracle import show_binlog_events, table_fingerprints

pytestmark = pytest.mark.server


def _relay_size(datadir) -> int:
    return sum(p.stat().st_size for p in datadir.glob("relay-bin.0*"))


KINDS = [pytest.param(None, id="mariadb-10.11"),
         pytest.param("mariadb-11.8", id="mariadb-11.8", marks=pytest.mark.kind("mariadb-11.8"))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cipher", ["AES_CBC", "AES_CTR"])
def test_killed_replica_recovers_its_encrypted_relay_logs(tmp_path, cipher, kind):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        key_dir = lab.work / "keys"  # where a chroot kind's server sees it
        key_file, _ = write_key_file(key_dir, cipher, encrypted=False)
        lab.kind.chown_tree(key_dir)
        enc = encryption_options(key_file, cipher)
        keys = load_keys(str(key_file))
        p = lab.server("primary", 1, gtid_domain_id=0, **enc).start()
        r = lab.server("replica", 2, max_relay_log_size=64 * 1024, relay_log_purge="OFF", **enc).start()
        grant_replication(p)
        connect(r, p, gtid=True)
        workload.schema(p)
        workload.small(p, 40)
        catch_up(r, p)
        base = _relay_size(r.datadir)
        big = threading.Thread(target=workload.big, args=(p, 6, 1 << 20))
        r.execute("STOP SLAVE SQL_THREAD")  # the transaction stays in the relay log, unapplied
        big.start()
        deadline = time.monotonic() + 60
        while _relay_size(r.datadir) < base + 2_500_000 and time.monotonic() < deadline:
            time.sleep(0.005)
        r.kill9()  # inside the 6 MB transaction: some of it received, in several relay logs
        big.join()
        newest = max(r.datadir.glob("relay-bin.0*"))
        if newest.stat().st_size > 256:  # a relay log the kill found just opened holds no event to tear
            os.truncate(newest, newest.stat().st_size - 7)  # and a torn last event on top
        workload.small(p, 20, start=1000)
        res = CliRunner().invoke(main, ["recover", "--json", str(r.datadir)])
        assert res.exit_code == 2 and "refusing to plan a cut" in res.stderr  # no key: nothing cut
        res = CliRunner().invoke(main, ["recover", "--apply", "--key-file", str(key_file),
                                        "--backup-dir", str(tmp_path / "backup"), str(r.datadir)])
        assert res.exit_code == 0, res.output
        assert "partial trx" in res.stdout or "cut trx" in res.stdout, res.stdout
        relays = sorted(r.datadir.glob("relay-bin.0*"))
        for f in relays:  # still encrypted, whole
            s = scan(Input(f, keys))
            assert s.ok and s.encryption and cipher in s.encryption, (f, s.problem)
        log_start = r.error_log.stat().st_size
        r.start()
        for f in relays:  # the server itself reads what recover left
            assert show_binlog_events(r, f.name, relay=True)
        r.execute("START SLAVE")
        catch_up(r, p)
        assert table_fingerprints(r) == table_fingerprints(p)
        errors = [line for line in r.log_tail(log_start, 100000).splitlines() if "[ERROR]" in line]
        assert errors == []


def test_incident_in_an_encrypted_binlog_is_served_and_stops_the_replica(tmp_path):
    key_file, secret = write_key_file(tmp_path / "keys", "AES_CTR", encrypted=True)
    enc = encryption_options(key_file, "AES_CTR", secret)
    keys = load_keys(str(key_file), secret_file=str(secret))
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1, **enc).start()
        r = lab.server("replica", 2, **enc).start()
        grant_replication(p)
        connect(r, p, gtid=False)
        workload.schema(p)
        workload.small(p, 30)
        catch_up(r, p)
        r.execute("STOP SLAVE IO_THREAD")
        workload.small(p, 10, start=500)  # the replica has not received these
        p.stop()
        done = record_incident(Input(p.datadir, keys), code="LOST_EVENTS", message="encrypted gap")
        assert scan(Input(done.file, keys)).ok
        p.start()
        served = show_binlog_events(p, os.path.basename(done.file))  # the server decrypts our events
        assert [(e.offset, e.kind) for e in served[-2:]] == [(done.offsets[0], "Incident"), (done.offsets[1], "Rotate")]
        r.execute("START SLAVE IO_THREAD")
        res = wait_replica(r, gtid_target="0-1-999999999", timeout=60)
        st = res["status"]
        assert res["outcome"] == "stopped" and st["Last_SQL_Errno"] == 1590 and "encrypted gap" in st["Last_SQL_Error"], st
        r.execute("SET GLOBAL sql_slave_skip_counter=1", "START SLAVE")
        workload.small(p, 20, start=100)
        catch_up(r, p)
        assert table_fingerprints(r) == table_fingerprints(p)

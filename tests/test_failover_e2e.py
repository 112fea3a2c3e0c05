"""Seed 002 with real servers: a primary killed while a semisync AFTER_SYNC commit waits for an
acknowledgement keeps that transaction in its binlog. Restarted untouched it commits it — a
phantom no replica had. `binlogkit compare` names it and `recover --binlog --replica` cuts it:
restarted, the row is gone, the GTID history equals the replica's, and it rejoins as a replica
of the promoted server with equal data."""

from __future__ import annotations

import shutil
import threading
import time

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.compare import compare
from binlogkit.api import expand_paths
from fixtures.lab import Lab, Server, catch_up, connect, grant_replication
from fixtures.lab import workload
from fixtures.lab.topology import enable_semisync
from fixtures.lab.oracle import table_fingerprints

pytestmark = pytest.mark.server


def test_unacknowledged_transaction_is_cut_and_the_old_primary_rejoins(tmp_path):
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        enable_semisync(p, r, timeout_ms=100000)  # the commit must still be waiting when killed
        connect(r, p, gtid=True)
        workload.schema(p)
        workload.small(p, 40)
        catch_up(r, p)
        r.execute("STOP SLAVE IO_THREAD")

        def blocked():
            try:
                p.execute("INSERT INTO lab.acct VALUES (999, 1)")
            except Exception:
                pass  # the server is killed under it
        t = threading.Thread(target=blocked, daemon=True)
        t.start()
        time.sleep(2.0)  # written and synced to the binlog, waiting for an acknowledgement
        p.kill9()
        t.join(10)

        def copy(name: str) -> Server:
            base = lab.base / name
            shutil.copytree(p.base, base, ignore=shutil.ignore_patterns("*.sock", "*.pid", "*.sock.lock"))
            srv = Server(name, base, 1, options=dict(p.options))
            lab.servers.append(srv)
            return srv

        # (a) restarted untouched: the un-acknowledged row is committed — a phantom
        a = copy("untouched").start()
        assert a.query("SELECT id FROM lab.acct WHERE id = 999")
        phantom_pos = a.var("gtid_binlog_pos")
        a.stop()

        # (b) compare names exactly that transaction; recover cuts it
        b = copy("repaired")
        res = compare(expand_paths([b.datadir / "mariadb-bin.index"]), [expand_paths([r.datadir])])
        assert [u["gtid"] for u in res["unacknowledged"]] == [phantom_pos.split(",")[0]]
        out = CliRunner().invoke(main, ["recover", "--binlog", str(b.datadir), "--replica", str(r.datadir),
                                        "--apply", "--backup-dir", str(lab.base / "backup")])
        assert out.exit_code == 0, out.output
        b.start()
        assert b.query("SELECT id FROM lab.acct WHERE id = 999") == []
        assert b.var("gtid_binlog_pos") == r.var("gtid_slave_pos")

        # the replica is promoted; the old primary rejoins as its replica
        r.execute("STOP SLAVE", "RESET SLAVE ALL")
        grant_replication(r)
        b.execute("SET GLOBAL gtid_slave_pos = @@gtid_binlog_pos")
        connect(b, r, gtid=True)
        workload.small(r, 15, start=2000)
        catch_up(b, r)
        assert table_fingerprints(b) == table_fingerprints(r)

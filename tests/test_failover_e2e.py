"""Seed 002 with real servers, on every kind of the lab (MariaDB 10.11, MariaDB 11.8, MySQL 9.7):
a primary killed while a semisync AFTER_SYNC commit waits for an acknowledgement keeps those
transactions in its binlog. Restarted untouched it commits them — phantoms no replica had.
`binlogkit compare` names it and `recover --binlog --replica` cuts them: restarted, the rows are
gone, the GTID history equals the replica's, and it rejoins as a replica of the promoted server
with equal data, every acknowledged commit on the promoted one."""

from __future__ import annotations

import threading
import time

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.compare import compare
from binlogkit.api import expand_paths
from fixtures.lab import Lab, Server, catch_up, connect, grant_replication
from fixtures.lab import workload
from fixtures.lab.kinds import KINDS, kind_params
from fixtures.lab.topology import enable_semisync, promote, rejoin
from fixtures.lab.oracle import table_fingerprints

pytestmark = pytest.mark.server

KIND_PARAMS = kind_params(KINDS)


def only_on(a: Server, b: Server) -> list[str]:
    """The GTIDs ``a`` has executed that ``b`` has not, one by one in the kind's notation:
    ``0-1-46`` (MariaDB: one domain, one server here) or ``uuid:46`` (MySQL: GTID_SUBTRACT)."""
    sql = a.kind.sql
    if a.kind.flavor == "mysql":
        text = a.query("SELECT GTID_SUBTRACT(%s, %s) AS g", (a.var(sql.executed_var), b.var(sql.applied_var)))[0]["g"]
        uuid, _, ranges = text.partition(":")
        lo, _, hi = ranges.partition("-")
        return [f"{uuid}:{n}" for n in range(int(lo), int(hi or lo) + 1)]
    d, s, have = a.var(sql.executed_var).split(",")[0].split("-")
    _d, _s, held = b.var(sql.applied_var).split(",")[0].split("-")
    return [f"{d}-{s}-{n}" for n in range(int(held) + 1, int(have) + 1)]


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_unacknowledged_transaction_is_cut_and_the_old_primary_rejoins(tmp_path, kind):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        sql = lab.kind.sql
        p = lab.server("primary", 1).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        enable_semisync(p, r, timeout_ms=100000)  # the commit must still be waiting when killed
        connect(r, p, gtid=True)
        workload.schema(p)
        workload.small(p, 40)
        catch_up(r, p)
        acknowledged = table_fingerprints(p)  # every commit so far returned: acknowledged
        r.execute(sql.stop(thread="IO_THREAD"))

        def blocked(row: int):
            try:
                p.execute(f"INSERT INTO lab.acct VALUES ({row}, 1)")
            except Exception:
                pass  # the server is killed under it
        waiting = [threading.Thread(target=blocked, args=(row,), daemon=True) for row in (998, 999)]
        for t in waiting:
            t.start()
            time.sleep(1.0)  # written and synced to the binlog, waiting for an acknowledgement
        assert all(t.is_alive() for t in waiting)  # AFTER_SYNC: neither commit has returned
        p.kill9()
        for t in waiting:
            t.join(10)

        # (a) restarted untouched: the un-acknowledged rows are committed — phantoms
        a = lab.copy_of(p, "untouched").start()
        assert len(a.query("SELECT id FROM lab.acct WHERE id IN (998, 999)")) == 2
        phantom = only_on(a, r)
        assert len(phantom) == 2
        a.stop()

        # (b) compare names exactly those transactions; recover cuts them
        b = lab.copy_of(p, "repaired")
        index = b.datadir / f"{p.options['log_bin']}.index"
        res = compare(expand_paths([index]), [expand_paths([r.datadir])])
        assert [u["gtid"] for u in res["unacknowledged"]] == phantom
        out = CliRunner().invoke(main, ["recover", "--binlog", str(b.datadir), "--replica", str(r.datadir),
                                        "--apply", "--backup-dir", str(lab.base / "backup")])
        assert out.exit_code == 0, out.output
        b.start()
        assert b.query("SELECT id FROM lab.acct WHERE id IN (998, 999)") == []
        assert b.var(sql.executed_var) == r.var(sql.applied_var)
        assert table_fingerprints(b) == acknowledged

        # the replica is promoted, nothing acknowledged lost; the old primary rejoins as its replica
        promote(r)
        assert table_fingerprints(r) == acknowledged
        grant_replication(r)
        rejoin(b, r)
        workload.small(r, 15, start=2000)
        catch_up(b, r)
        assert table_fingerprints(b) == table_fingerprints(r)
        assert b.query("SELECT id FROM lab.acct WHERE id IN (998, 999)") == []

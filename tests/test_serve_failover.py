"""The failover story, run for real: an AFTER_SYNC semisync primary whose acknowledging member is
``binlogkit pull --semisync``; two replicas fed by ``binlogkit serve`` over pull's folder; the
primary killed -9 under a stream of commits, pull hung (SIGSTOP) just before so that two commits wait
for their acknowledgement: every commit a client saw return reaches both
replicas (their tables equal), and one of them is promoted (replication reset, it takes writes).
Then the old primary's tail (docs/failover.md): ``binlogkit compare`` of its binlogs against
pull's folder names exactly the transactions the folder lacks (none a client saw committed),
``binlogkit recover --binlog OLD --replica FOLDER --apply`` cuts them; restarted on the cut
binlog, its GTID state is the folder's, and it rejoins as a replica of the promoted one with
equal tables and no errant GTIDs."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from click.testing import CliRunner

from binlogkit.api import expand_paths, transactions
from binlogkit.cli import main
from binlogkit.compare import compare
from binlogkit.gtid.mariadb import GtidPos
from binlogkit.gtid.mysql import MysqlGtid, MysqlGtidSet
from fixtures.lab.kinds import kind_params
from fixtures.lab import workload
from fixtures.lab.pull_lab import (CommitStream, _commit, _poll, _status, _wait_started, folder_gtids, kill9, start_primary,
                                   start_pull)
from fixtures.lab.serve_lab import ServeProcess, checksums, make_cert, point_replica
from fixtures.lab.topology import Lab, catch_up, grant_replication, promote, rejoin, wait_replica

pytestmark = pytest.mark.server

FAILOVER_KINDS = ("mariadb-10.11", "mysql-9.7")
KIND_PARAMS = kind_params(FAILOVER_KINDS)


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_primary_killed_every_acknowledged_commit_reaches_both_replicas(tmp_path, kind):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        p.execute(*(sql.format(timeout_ms=600000) for sql in p.kind.sql.semisync_source))
        folder = tmp_path / "pulled"
        pull = start_pull(p, folder, "--semisync", "--json")
        serve = None
        try:
            _wait_started(pull)
            assert _poll(lambda: _status(p).get("status") == "ON", 60, 0.05), _status(p)
            cert, _key = tls = make_cert(lab.work / "tls")
            serve = ServeProcess(folder, tmp_path, tls=tls)
            replicas = [lab.server(f"replica{i}", 10 + i).start() for i in (1, 2)]
            for r in replicas:
                point_replica(r, serve.port, gtid=True, cert=cert)
            stream = CommitStream(p, p.kind.flavor)

            def blocked():
                try:
                    with p.connect() as c:
                        _commit(c, p.kind.flavor)
                except Exception:   # the primary died under it
                    pass
            stream.start()
            time.sleep(2.0)
            # the acknowledging member hangs (SIGSTOP): the stream's next commit and one more from
            # another connection are written and synced to the primary's binlog and wait for an
            # acknowledgement; the primary dies so, and pull with it (never resumed)
            os.kill(pull.pid, signal.SIGSTOP)
            waiting = threading.Thread(target=blocked, daemon=True)
            waiting.start()
            time.sleep(1.0)
            assert waiting.is_alive() and stream.is_alive()   # AFTER_SYNC: neither commit has returned
            p.kill9()
            kill9(pull)
            seen = stream.stop()
            waiting.join(30)
            assert len(seen) > 10
            if p.kind.flavor == "mysql":
                target = str(MysqlGtidSet.of(MysqlGtid.parse(g) for g in seen))
            else:
                target = str(GtidPos.from_gtid_list(seen))
            for r in replicas:
                res = wait_replica(r, gtid_target=target, timeout=120)
                st = res["status"]
                assert res["outcome"] == "caught_up", (r.name, target, st.get("Gtid_IO_Pos"),
                                                       st.get("Last_IO_Error"), st.get("Last_SQL_Error"), serve.text())
            # everything pull's folder holds (acknowledged or written just before the kill) reaches both
            held = folder_gtids(folder)
            assert set(seen) <= set(held)
            everything = _as_state(held, p.kind.flavor)
            for r in replicas:
                assert wait_replica(r, gtid_target=everything, timeout=60)["outcome"] == "caught_up"
            a, b = replicas
            assert checksums(a) == checksums(b)
            # the old primary's tail: compare names exactly what its binlog has beyond the folder
            index = p.datadir / f"{p.options['log_bin']}.index"
            old = [t.gtid for t in transactions(expand_paths([index])) if t.complete and t.gtid]
            assert set(held) <= set(old)
            tail = [g for g in old if g not in set(held)]
            assert tail and not set(tail) & set(seen)   # the waiting commits (those pull had not written); none returned
            res = compare(expand_paths([index]), [expand_paths([folder])])
            assert [u["gtid"] for u in res["unacknowledged"]] == tail, (res, tail)
            assert res["replicas"][0]["errant"] == [] and res["last_common"] == held[-1]
            out = CliRunner().invoke(main, ["compare", str(index), str(folder)])
            assert out.exit_code == (1 if tail else 0), out.output
            print(f"\n$ binlogkit compare OLD/{index.name} pulled  (exit {out.exit_code})\n{out.output}")
            # recover cuts it (a byte copy of the crashed datadir), and it restarts on the cut binlog
            old_primary = lab.copy_of(p, "old_primary")
            out = CliRunner().invoke(main, ["recover", "--binlog", str(old_primary.datadir), "--replica", str(folder),
                                            "--apply", "--backup-dir", str(lab.base / "backup")])
            assert out.exit_code == 0, out.output
            print(f"$ binlogkit recover --binlog OLD --replica pulled --apply ...\n{out.output}")
            old_primary.start()
            sql = p.kind.sql
            assert _same_state(old_primary.var(sql.executed_var), everything, p.kind.flavor)
            # promote the first: its replication reset, it takes writes; the old primary follows it
            promote(a)
            a.execute("INSERT INTO lab.small (k, v) VALUES (8, 'after failover')")
            grant_replication(a)
            rejoin(old_primary, a)
            workload.small(a, 10, start=3000)
            catch_up(old_primary, a)
            assert checksums(old_primary) == checksums(a)
            assert old_primary.query("SELECT COUNT(*) AS n FROM lab.small WHERE v='after failover'")[0]["n"] == 1
            if p.kind.flavor == "mysql":      # no errant GTIDs: the old primary has nothing the promoted one lacks
                assert a.query("SELECT GTID_SUBTRACT(%s, @@GLOBAL.gtid_executed) AS g",
                               (old_primary.var("gtid_executed"),))[0]["g"] == ""
                assert old_primary.var("gtid_executed") == a.var("gtid_executed")
            else:
                assert old_primary.var("gtid_current_pos") == a.var("gtid_binlog_pos")
        finally:
            if serve is not None:
                serve.stop()
            kill9(pull)


def _as_state(gtids: list[str], flavor: str) -> str:
    """The GTID state (MySQL set, MariaDB position) of these GTIDs."""
    if flavor == "mysql":
        return str(MysqlGtidSet.of(MysqlGtid.parse(g) for g in gtids))
    return str(GtidPos.from_gtid_list(gtids))


def _same_state(have: str, want: str, flavor: str) -> bool:
    if flavor == "mysql":
        return str(MysqlGtidSet.parse(have.replace("\n", ""))) == want
    return str(GtidPos.parse(have)) == want

"""The failover story, run for real: an AFTER_SYNC semisync primary whose acknowledging member is
``binlogkit pull --semisync``; two replicas fed by ``binlogkit serve`` over pull's folder; the
primary killed -9 under a stream of commits: every commit a client saw return reaches both
replicas (their tables equal), and one of them is promoted (replication reset, it takes writes).
The old primary's un-acknowledged tail (compare + recover --binlog, docs/failover.md) is not run
here."""

from __future__ import annotations

import threading
import time

import pytest

from binlogkit.gtid.mariadb import GtidPos
from binlogkit.gtid.mysql import MysqlGtid, MysqlGtidSet
from fixtures.lab.kinds import KINDS
from fixtures.lab.pull_lab import _commit, _poll, _status, _wait_started, kill9, start_primary, start_pull
from fixtures.lab.serve_lab import ServeProcess, checksums, make_cert, point_replica
from fixtures.lab.topology import Lab, wait_replica

pytestmark = pytest.mark.server

FAILOVER_KINDS = ("mariadb-10.11", "mysql-9.7")
KIND_PARAMS = [pytest.param(k, marks=pytest.mark.kind(k), id=k) if KINDS[k].chroot else pytest.param(k, id=k)
               for k in FAILOVER_KINDS]


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
            seen: list[str] = []
            halt = threading.Event()

            def stream():
                try:
                    with p.connect() as c:
                        while not halt.is_set():
                            seen.append(_commit(c, p.kind.flavor)[0])
                except Exception:   # the primary died under it
                    pass
            t = threading.Thread(target=stream, daemon=True)
            t.start()
            time.sleep(2.0)
            p.kill9()
            halt.set()
            t.join(30)
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
            a, b = replicas
            assert checksums(a) == checksums(b)
            # promote the first: its replication reset, it takes writes
            a.execute(a.kind.sql.stop(""), a.kind.sql.reset_replica_all)
            a.execute("INSERT INTO lab.small (k, v) VALUES (8, 'after failover')")
            assert a.query("SELECT COUNT(*) AS n FROM lab.small WHERE v='after failover'")[0]["n"] == 1
        finally:
            if serve is not None:
                serve.stop()
            kill9(pull)

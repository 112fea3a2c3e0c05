"""``binlogkit serve`` over a folder ``binlogkit pull`` is filling, with real replicas: the
replicas receive the primary's new transactions as pull writes them (across rotations, a 25 MB
transaction with a 17 MB event among them), ``serve`` is killed -9 mid-stream and started again
on the same port: the replicas (one by GTID, one by file/position) reconnect and end with CHECKSUM TABLE equal to the primary's,
their GTID state the primary's (nothing lost, nothing doubled)."""

from __future__ import annotations

import time

import pytest

from fixtures.lab import workload
from fixtures.lab.kinds import kind_params
from fixtures.lab.pull_lab import big_event_trx, binlog_names, kill9, settle, start_primary, start_pull
from fixtures.lab.serve_lab import ServeProcess, checksums, make_cert, point_replica
from fixtures.lab.topology import Lab, wait_replica

pytestmark = pytest.mark.server

SERVE_KINDS = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")
KIND_PARAMS = kind_params(SERVE_KINDS)


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_live_pull_folder_kill9_and_restart(tmp_path, kind):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 20)
        folder = tmp_path / "pulled"
        pull = start_pull(p, folder)
        serve = None
        try:
            deadline = time.monotonic() + 60
            while not (folder.is_dir() and any(folder.iterdir())) and time.monotonic() < deadline:
                time.sleep(0.2)
            cert, _key = tls = make_cert(lab.work / "tls")
            serve = ServeProcess(folder, tmp_path, tls=tls)
            port = serve.port
            r = lab.server("replica", 2).start()
            point_replica(r, port, gtid=True, cert=cert)
            f = lab.server("by_file", 3).start()
            point_replica(f, port, gtid=False, cert=cert, file=binlog_names(folder)[0], pos=4)
            for i in range(3):
                workload.small(p, 30, start=1000 * (i + 1))
                p.execute("FLUSH BINARY LOGS")
            big_event_trx(p, 100000)
            time.sleep(0.3)
            serve.kill9()                       # mid-stream (the 25 MB transaction may be in flight)
            workload.small(p, 30, start=9000)
            serve.stop()
            serve = ServeProcess(folder, tmp_path, tls=tls, port=port)
            workload.multi(p)
            p.execute("FLUSH BINARY LOGS")
            workload.small(p, 20, start=20000)
            settle(p)
            for x in (r, f):
                try:
                    res = wait_replica(x, gtid_target=p.var(p.kind.sql.executed_var), timeout=180)
                except Exception as exc:   # the replica died: its error log says why
                    raise AssertionError(f"{exc}\n{x.error_log.read_text()[-4000:]}\n{serve.text()}") from None
                st = res["status"]
                assert res["outcome"] == "caught_up", (x.name, st.get("Last_IO_Error"), st.get("Last_SQL_Error"),
                                                       serve.text())
                assert checksums(x) == checksums(p)
                assert x.var(x.kind.sql.applied_var) == p.var(p.kind.sql.executed_var)
            assert "dump for server_id 2" in serve.text()
        finally:
            if serve is not None:
                serve.stop()
            kill9(pull)

"""``binlogkit serve`` with real replicas: MariaDB 10.11 and 11.8 (MASTER_USE_GTID=slave_pos and
file/position) and MySQL 9.7 (SOURCE_AUTO_POSITION=1 and file/position) replicate a lab primary's
archive from scratch, over TLS, and end with CHECKSUM TABLE equal to the primary's (the GTID one
a semisync replica: its status says semisync ON, serve logs the acks it got); a GTID state the
archive cannot serve is the replica's 1236 with the server's text. Compressed (.xz, .gz, .bz2)
and ``s3://`` archives reach real replicas too."""

from __future__ import annotations

import shutil
import time

import pytest

from fixtures.lab import workload
from fixtures.lab.kinds import kind_params
from fixtures.lab.oracle import slave_status
from fixtures.lab.pull_lab import primary_binlogs, settle, start_primary
from fixtures.lab.topology import Lab, wait_replica

from fixtures.lab.serve_lab import checksums, make_cert, point_replica, start_serve

pytestmark = pytest.mark.server

SERVE_KINDS = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")
KIND_PARAMS = kind_params(SERVE_KINDS)


def _archive(p, where):
    where.mkdir()
    for n in primary_binlogs(p):
        shutil.copy(p.datadir / n, where / n)
    return where


def _why(res: dict, srv) -> str:
    st = res["status"]
    keys = ("Slave_IO_Running", "Slave_SQL_Running", "Last_IO_Error", "Last_SQL_Error", "Master_Log_File",
            "Read_Master_Log_Pos", "Gtid_IO_Pos")
    return f"{res['outcome']}: {({k: st.get(k) for k in keys})}; serve: {srv.lines}"


def _semisync_status(replica) -> str:
    """Rpl_semi_sync_slave_status (MariaDB) / Rpl_semi_sync_replica_status (MySQL) of a replica."""
    rows = replica.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_%_status'")
    return next(str(r["Value"]) for r in rows if r["Variable_name"].endswith(("slave_status", "replica_status")))


def _heartbeats_while_idle(replica, srv, semisync: bool = False) -> None:
    """The replica reconnected with a heartbeat period of 0.2 s, idle at the end of the archive:
    it counts heartbeats received (a MySQL replica asks for Heartbeat_log_event_v2: serve sends those)."""
    mysql = replica.kind.flavor == "mysql"
    replica.execute(replica.kind.sql.stop(""))
    replica.execute("CHANGE REPLICATION SOURCE TO SOURCE_HEARTBEAT_PERIOD = 0.2" if mysql
                    else "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 0.2")
    count = ("SELECT COUNT_RECEIVED_HEARTBEATS AS n FROM performance_schema.replication_connection_status" if mysql
             else "SELECT VARIABLE_VALUE AS n FROM information_schema.GLOBAL_STATUS "
                  "WHERE VARIABLE_NAME = 'SLAVE_RECEIVED_HEARTBEATS'")
    before = int(replica.query(count)[0]["n"])
    n = len(srv.lines)
    replica.execute(replica.kind.sql.start(""))
    deadline = time.monotonic() + 20
    while int(replica.query(count)[0]["n"]) < before + 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert int(replica.query(count)[0]["n"]) >= before + 3, srv.lines[n:]
    dumps = [ln for ln in srv.lines[n:] if "dump for server_id" in ln]
    assert dumps and dumps[0].endswith(", heartbeat v2") == mysql, dumps
    assert (", semisync" in dumps[0]) == semisync, dumps


def _io_error(replica, timeout=30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = slave_status(replica)
        if st.get("Last_IO_Error"):
            return str(st["Last_IO_Error"])
        time.sleep(0.3)
    return ""


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_replicas_from_scratch_equal_the_primary(tmp_path, kind):
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 30)
        workload.multi(p)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 20, start=500)
        settle(p)
        archive = _archive(p, tmp_path / "archive")
        cert, _key = tls = make_cert(lab.work / "tls")
        srv, port = start_serve(archive, tls=tls)
        try:
            target = p.var(p.kind.sql.executed_var)
            want = checksums(p)
            by_gtid = lab.server("by_gtid", 2).start()
            by_file = lab.server("by_file", 3).start()
            by_gtid.execute(*by_gtid.kind.sql.semisync_replica)   # asks for semisync: serve's dump is semisync
            point_replica(by_gtid, port, gtid=True, cert=cert)
            point_replica(by_file, port, gtid=False, cert=cert, file=primary_binlogs(p)[0], pos=4)
            for r in (by_gtid, by_file):
                res = wait_replica(r, gtid_target=target, timeout=120)
                assert res["outcome"] == "caught_up", _why(res, srv)
                assert checksums(r) == want
            # live: the archive grows (a new file, then more events in it): the connected replicas get them
            p.execute("FLUSH BINARY LOGS")
            workload.small(p, 10, start=900)
            settle(p)
            for n in primary_binlogs(p):
                shutil.copy(p.datadir / n, archive / (n + ".tmp"))
                (archive / (n + ".tmp")).rename(archive / n)
            target = p.var(p.kind.sql.executed_var)
            want = checksums(p)
            for r in (by_gtid, by_file):
                res = wait_replica(r, gtid_target=target, timeout=60)
                assert res["outcome"] == "caught_up", _why(res, srv)
                assert checksums(r) == want
            assert any("(TLS)" in ln or ", TLS)" in ln for ln in srv.lines), srv.lines
            assert _semisync_status(by_gtid) == "ON"
            by_gtid.execute(by_gtid.kind.sql.stop(""))
            last = primary_binlogs(p)[-1]
            deadline = time.monotonic() + 20
            while not any("semisync: " in ln and "acks" in ln for ln in srv.lines) and time.monotonic() < deadline:
                time.sleep(0.2)
            ended = [ln for ln in srv.lines if "semisync: " in ln]
            assert len(ended) == 1 and f"the last for {last}:" in ended[0], srv.lines
            acks, asked = map(int, ended[0].split("semisync: ", 1)[1].split(" asked")[0].split(" acks of "))
            assert acks == asked > 10, ended   # every transaction end flagged, each acknowledged
            _heartbeats_while_idle(by_file, srv)
            _heartbeats_while_idle(by_gtid, srv, semisync=True)   # heartbeats with the 0xef header too
        finally:
            srv.stop()


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_a_gtid_state_the_archive_lacks_is_1236(tmp_path, kind):
    """The archive starts at the primary's second binlog (the first is purged): a replica from
    scratch asks for transactions it no longer has -> 1236 with the server's text."""
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 10)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 10, start=100)
        settle(p)
        archive = tmp_path / "archive"
        archive.mkdir()
        for n in primary_binlogs(p)[1:]:
            shutil.copy(p.datadir / n, archive / n)
        cert, _key = tls = make_cert(lab.work / "tls")
        srv, port = start_serve(archive, tls=tls)
        try:
            r = lab.server("replica", 2).start()
            point_replica(r, port, gtid=True, cert=cert)
            text = _io_error(r)
            assert "1236" in text, (text, srv.lines)
            if kind.startswith("mariadb"):
                assert "Could not find GTID state requested by slave in any binlog files" in text
            else:
                assert "Cannot replicate because the source purged required binary logs" in text
        finally:
            srv.stop()


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_io_thread_stopped_inside_a_large_transaction(tmp_path, kind):
    """The seed bug's scenario (#69943): the replica's IO thread has received part of a 25 MB
    transaction (the archive's last file ends inside it, as a file pull is still writing does)
    and is stopped; the file is completed; START: the GTID start is that transaction's first
    event, never inside it: the replica ends equal to the primary."""
    from binlogkit.reading.reader import iter_raw_events
    from fixtures.lab.pull_lab import big_event_trx

    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 10)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 5, start=100)
        big_event_trx(p, 1000)
        workload.small(p, 5, start=200)
        settle(p)
        last = primary_binlogs(p)[-1]
        with open(p.datadir / last, "rb") as fh:
            evs = [(e.offset, e.type_code, e.event_size) for e in iter_raw_events(fh, name=last)]
        big = max(range(len(evs)), key=lambda i: evs[i][2])      # the 17 MB rows event
        cut = evs[big][0] + evs[big][2]                          # after it: inside the transaction
        archive = _archive(p, tmp_path / "archive")
        whole = (archive / last).read_bytes()
        (archive / last).write_bytes(whole[:cut])
        cert, _key = tls = make_cert(lab.work / "tls")
        srv, port = start_serve(archive, tls=tls)
        try:
            r = lab.server("replica", 2).start()
            point_replica(r, port, gtid=True, cert=cert)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                st = slave_status(r)
                if st.get("Master_Log_File") == last and int(st.get("Read_Master_Log_Pos") or 0) >= evs[big][0]:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError((slave_status(r), srv.lines))
            r.execute(r.kind.sql.stop("", "IO_THREAD"))
            (archive / (last + ".tmp")).write_bytes(whole)
            (archive / (last + ".tmp")).rename(archive / last)
            r.execute(r.kind.sql.start("", "IO_THREAD"))
            res = wait_replica(r, gtid_target=p.var(p.kind.sql.executed_var), timeout=120)
            assert res["outcome"] == "caught_up", _why(res, srv)
            assert checksums(r) == checksums(p)
            assert r.var(r.kind.sql.applied_var) == p.var(p.kind.sql.executed_var)
        finally:
            srv.stop()


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_a_replica_ahead_of_the_archive_is_1236(tmp_path, kind):
    """A replica that applied transactions of the archive's server beyond the archive's end (the
    archive lost its tail): the server's 1236, never a silent start."""
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 10)
        settle(p)
        archive = _archive(p, tmp_path / "archive")
        workload.small(p, 10, start=100)           # the primary goes on; the archive does not have these
        settle(p)
        r = lab.server("replica", 2).start()
        from fixtures.lab.topology import connect, catch_up

        connect(r, p, gtid=True)
        catch_up(r, p)
        r.execute(r.kind.sql.stop(""))
        r.execute(r.kind.sql.reset_replica_all)
        cert, _key = tls = make_cert(lab.work / "tls")
        srv, port = start_serve(archive, tls=tls)
        try:
            point_replica(r, port, gtid=True, cert=cert)
            text = _io_error(r)
            assert "1236" in text, (text, srv.lines)
            if kind.startswith("mariadb"):
                assert "which is not in the master's binlog" in text, text
            else:
                assert "Replica has more GTIDs than the source has" in text, text
            assert any("caching_sha2_password, TLS" in ln for ln in srv.lines) or kind.startswith("mariadb")
        finally:
            srv.stop()


ENCRYPTED = [pytest.param("mariadb-10.11", "AES_CBC", id="mariadb-10.11-AES_CBC"),
             pytest.param("mysql-9.7", None, marks=pytest.mark.kind("mysql-9.7"), id="mysql-9.7-binlog_encryption")]


@pytest.mark.parametrize("kind, cipher", ENCRYPTED)
def test_an_encrypted_archive_is_served_decrypted(tmp_path, kind, cipher):
    """The primary's encrypted binlogs (MariaDB encrypt_binlog, MySQL binlog_encryption) as the
    archive, served with the key: a replica without encryption replicates it, tables equal."""
    from fixtures.lab.encrypted import start_encrypted_primary

    with Lab(tmp_path / "lab", kind=kind) as lab:
        p, keys = start_encrypted_primary(lab, cipher)
        workload.small(p, 20)
        p.execute("FLUSH BINARY LOGS")
        workload.multi(p)
        workload.small(p, 10, start=300)
        settle(p)
        archive = _archive(p, tmp_path / "archive")
        cert, _key = tls = make_cert(lab.work / "tls")
        srv, port = start_serve(archive, tls=tls, keys=keys)
        try:
            r = lab.server("replica", 2).start()
            point_replica(r, port, gtid=True, cert=cert)
            res = wait_replica(r, gtid_target=p.var(p.kind.sql.executed_var), timeout=120)
            assert res["outcome"] == "caught_up", _why(res, srv)
            assert checksums(r) == checksums(p)
            f = lab.server("by_file", 3).start()
            point_replica(f, port, gtid=False, cert=cert, file=primary_binlogs(p)[0], pos=4)
            res = wait_replica(f, gtid_target=p.var(p.kind.sql.executed_var), timeout=120)
            assert res["outcome"] == "caught_up", _why(res, srv)
            assert checksums(f) == checksums(p)
        finally:
            srv.stop()


ARCHIVED = [pytest.param("mariadb-10.11", id="mariadb-10.11"),
            pytest.param("mysql-9.7", marks=pytest.mark.kind("mysql-9.7"), id="mysql-9.7")]


@pytest.mark.parametrize("kind", ARCHIVED)
def test_compressed_and_s3_archives_to_replicas_from_scratch(tmp_path, kind, s3_server):
    """The primary's binlogs compressed (.xz, .gz, .bz2 and a plain last file, in one folder)
    served to a replica by GTID; the same folder uploaded to a real S3 server (SeaweedFS) and
    its ``s3://`` prefix served to another by file/position: both end with the primary's tables
    and GTID state."""
    import bz2
    import gzip
    import lzma

    from binlogkit.reading import storage

    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        workload.small(p, 20)
        p.execute("FLUSH BINARY LOGS")
        workload.multi(p)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 20, start=500)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 10, start=800)
        settle(p)
        names = primary_binlogs(p)
        assert len(names) == 4
        archive = tmp_path / "archive"
        archive.mkdir()
        for n, (suffix, squeeze) in zip(names, ((".xz", lzma.compress), (".gz", gzip.compress),
                                               (".bz2", bz2.compress), ("", bytes))):
            (archive / (n + suffix)).write_bytes(squeeze((p.datadir / n).read_bytes()))
        s3_server.make_bucket("serve-e2e")
        fs = storage.filesystem("s3://serve-e2e/")[0]
        for f in sorted(archive.iterdir()):
            fs.put_file(str(f), f"serve-e2e/{kind}/{f.name}")
        storage.forget()
        cert, _key = tls = make_cert(lab.work / "tls")
        local, port = start_serve(archive, tls=tls)
        remote, s3_port = start_serve(f"s3://serve-e2e/{kind}", tls=tls, server_id=78)
        try:
            target = p.var(p.kind.sql.executed_var)
            want = checksums(p)
            by_gtid = lab.server("by_gtid", 2).start()
            by_file = lab.server("by_file", 3).start()
            point_replica(by_gtid, port, gtid=True, cert=cert)
            point_replica(by_file, s3_port, gtid=False, cert=cert, file=names[0], pos=4)
            for r, srv in ((by_gtid, local), (by_file, remote)):
                res = wait_replica(r, gtid_target=target, timeout=120)
                assert res["outcome"] == "caught_up", _why(res, srv)
                assert checksums(r) == want
                assert r.var(r.kind.sql.applied_var) == target
            st = slave_status(by_file)
            assert st.get("Master_Log_File") == names[-1]
        finally:
            local.stop()
            remote.stop()

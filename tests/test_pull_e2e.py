"""``binlogkit pull`` against a real MariaDB primary: byte identity (cmp), the CLI's exit codes
and --json, resume after kill -9 (a bounded campaign; ``make pull-soak`` runs more), a torn tail
repaired on start, the start options. The kill -9 campaign and the lossless semisync proof run
on MariaDB 10.11, MySQL 9.7 and MariaDB 11.8 (PULL_KINDS)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fixtures.lab import workload
from fixtures.lab.pull_lab import (big_event_trx, binlog_names, compare_files, crash_campaign, folder_gtids, last_per_domain,
                                   primary_binlogs, pull_cmd, run_pull, semisync_proof, settle, start_primary, start_pull,
                                   strace_ack_order)
from fixtures.lab.kinds import KINDS, kind_params
from fixtures.lab.server import Server
from fixtures.lab.topology import COMMON, Lab, grant_replication

pytestmark = pytest.mark.server

# MariaDB 11.8 writes end_log_pos 0 inside transactions (binlog_legacy_event_pos=OFF): a real
# event with log_pos 0, which pull once dropped as artificial (issue 29)
PULL_KINDS = ("mariadb-10.11", "mysql-9.7", "mariadb-11.8")
KIND_PARAMS = kind_params(PULL_KINDS)


# -- tests with their own primary first (a Lab stops every server at its exit) ---------------
@pytest.mark.kind("mariadb-11.8")
def test_mariadb_11_8_events_with_log_pos_0(tmp_path):
    """MariaDB 11.8 (binlog_legacy_event_pos=OFF) writes end_log_pos 0 in the events inside a
    transaction (Annotate_rows, Table_map, Rows; a 17 MB Rows event arrives in two packets):
    real events, copied byte for byte, and iter_events places them where the file has them."""
    from binlogkit.pull import iter_events
    from binlogkit.reading.reader import iter_raw_events
    from fixtures.lab.topology import REPL_PASSWORD, REPL_USER

    with Lab(tmp_path / "lab", kind="mariadb-11.8") as lab:
        p = start_primary(lab)
        workload.small(p, 20)
        big_event_trx(p, 1, big_mb=17, more_mb=1)
        workload.small(p, 5, start=1000)
        settle(p)                                # the Binlog_checkpoint MariaDB appends after the commits
        d = tmp_path / "pulled"
        r = run_pull(p, d, "--until-end")
        assert r.returncode == 0, r.stderr
        names = primary_binlogs(p)
        assert compare_files(p, d, names) == {n: "identical" for n in names}
        files = []
        for n in names:
            with open(p.datadir / n, "rb") as fh:
                files += [(n, e.offset, e.type_code, e.log_pos, e.event_size) for e in iter_raw_events(fh, name=n)]
        zero = [f for f in files if f[3] == 0]
        assert len(zero) >= 3 * 25 and {19, 23, 160} <= {f[2] for f in zero}, zero[:5]   # Table_map, Write_rows, Annotate
        assert any(f[4] > 17 << 20 for f in zero)   # the 17 MB row: log_pos 0, two protocol packets
        live = list(iter_events("127.0.0.1", p.port, REPL_USER, REPL_PASSWORD, server_id=4444, file=names[0]))
        assert [(e.file, e.offset, e.type_code, e.log_pos, e.event_size) for e in live] == files


def test_purged_binlog_on_resume_exit_2(tmp_path):
    with Lab(tmp_path / "lab") as lab:
        p = start_primary(lab)
        workload.small(p, 20)
        d = tmp_path / "pulled"
        assert run_pull(p, d, "--until-end").returncode == 0
        for _ in range(3):
            p.execute("FLUSH BINARY LOGS")
            workload.small(p, 5, start=100)
        # the first run's dump thread may still hold its file for a moment (PURGE then skips it)
        deadline = time.monotonic() + 60
        while primary_binlogs(p)[0] == "mariadb-bin.000001" and time.monotonic() < deadline:
            p.execute(f"PURGE BINARY LOGS TO '{primary_binlogs(p)[-1]}'")
            time.sleep(0.2)
        assert primary_binlogs(p)[0] != "mariadb-bin.000001"
        r = run_pull(p, d, "--until-end")
        assert r.returncode == 2, r.stderr
        assert "1236" in r.stderr and "mariadb-bin.000001" in r.stderr


def test_primary_without_checksums(tmp_path):
    """binlog_checksum=NONE: the checksum negotiated is the primary's, the copy is identical."""
    with Lab(tmp_path / "lab") as lab:
        p = start_primary(lab, binlog_checksum="NONE")
        workload.small(p, 50)
        p.execute("FLUSH BINARY LOGS")
        workload.multi(p)
        settle(p)
        d = tmp_path / "pulled"
        r = run_pull(p, d, "--until-end")
        assert r.returncode == 0, r.stderr
        names = primary_binlogs(p)
        assert compare_files(p, d, names) == {n: "identical" for n in names}
        assert last_per_domain(folder_gtids(d)) == p.var("gtid_binlog_pos")


@pytest.mark.kind("mysql-9.7")
def test_mysql_gtid_auto_positioning_start(tmp_path):
    """--gtid on MySQL is auto-positioning (COM_BINLOG_DUMP_GTID with the set already held):
    the copy starts with the oldest binlog whose Previous_gtids the set covers, whole, and
    resumes by itself; a set naming the primary's own transactions it never wrote is refused
    with the primary's 1236, exit 2."""
    from binlogkit.gtid.mysql import MysqlGtidSet, MysqlGtid

    with Lab(tmp_path / "lab", kind="mysql-9.7") as lab:
        p = start_primary(lab)
        for i in range(4):
            workload.small(p, 15, start=100 * i)
            p.execute("FLUSH BINARY LOGS")
        names = primary_binlogs(p)
        assert len(names) >= 5
        held = [g for n in names[:2] for g in folder_gtids_of(p, n)]
        third = folder_gtids_of(p, names[2])
        assert len(third) >= 5
        # the set the replica holds: files 0 and 1 and the first 3 of file 2 -> file 2, whole
        cases = [(held + third[:3], names[2]), (held + third, names[3])]
        for k, (gtids, first) in enumerate(cases):
            text = str(MysqlGtidSet.of(MysqlGtid.parse(g) for g in gtids))
            d = tmp_path / f"from-gtid-{k}"
            r = run_pull(p, d, "--until-end", "--gtid", text, "--json")
            assert r.returncode == 0, r.stderr
            assert _json_lines(r.stdout)[0]["file"] == first
            rest = names[names.index(first):]
            assert compare_files(p, d, rest) == {n: "identical" for n in rest}
            assert not any((d / n).exists() for n in names[:names.index(first)])
        workload.small(p, 10, start=900)
        r = run_pull(p, tmp_path / "from-gtid-0", "--until-end")
        assert r.returncode == 0, r.stderr
        now = primary_binlogs(p)
        assert compare_files(p, tmp_path / "from-gtid-0", now[2:]) == {n: "identical" for n in now[2:]}
        uuid = p.var("server_uuid")
        r = run_pull(p, tmp_path / "ahead", "--until-end", "--gtid", f"{uuid}:1-999999")
        assert r.returncode == 2 and "more GTIDs than the source" in r.stderr, r.stderr
        r = run_pull(p, tmp_path / "bad", "--until-end", "--gtid", "not-a-gtid-set")
        assert r.returncode == 2 and "Traceback" not in r.stderr and "not-a-gtid-set" in r.stderr, r.stderr


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_kill9_campaign_resumes_without_loss_or_doubles(tmp_path, kind):
    """Bounded here (on the host's MariaDB 10.11 6 trials: 2 random, 2 inside a 25 MB
    transaction, 2 at rotation; on the chroot kinds 3, one of each); ``make pull-soak KIND=…``
    runs 30."""
    res = crash_campaign(tmp_path, trials=3 if KINDS[kind].chroot else 6, seed=7, log=lambda s: None, kind=kind)
    assert all(r["exited_before_kill"] is None for r in res["trials"]), res["trials"]
    assert res["final_exit"] == 0, res["final_stderr"]
    assert res["all_identical"], res["files"]
    assert res["gtid_unique"]
    assert res["folder_gtid_pos"] == res["gtid_binlog_pos"]
    # every cut a kill left was announced by the next run, at the size the kill left (a file
    # killed before its magic was written — 0 to 3 bytes — is removed: the resume is at its 4)
    rows = res["trials"]
    for prev, nxt in zip(rows, rows[1:]):
        if prev.get("reason"):
            told = nxt["repair_told"]
            assert len(told) == 1 and told[0]["cut_from"] == prev["size"] and told[0]["position"] == max(prev["keep"], 4)


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_lossless_semisync_after_sync(tmp_path, kind):
    """AFTER_SYNC primary, pull --semisync its only replica (under strace): N commits return
    promptly, yes_tx +N, no_tx +0, each commit's GTID is in the folder when it returns, no ack
    before the fsync of what it acknowledges; without pull a commit waits for the timeout; a
    commit waiting while pull is frozen and kill -9'd stays blocked, and returns once pull is
    back, its transaction in the folder; the primary kill -9'd under a stream of commits: every
    commit a client saw return is in the folder, and compare names nothing missing."""
    r = semisync_proof(tmp_path, n=20, log=lambda s: None, kind=kind)
    assert r["yes_tx"] == 20 and r["no_tx"] == 0 and r["semisync_status"] == "ON"
    assert r["not_in_folder_at_return"] == []
    assert r["max_commit_s"] < 1.5, r
    assert r["strace"]["acks"] >= 20 and r["strace"]["unsafe"] == []
    assert r["without_pull_commit_s"] >= 1.9 and r["without_pull_no_tx"] == 1
    assert r["blocked_while_frozen"] and r["blocked_after_kill9"]
    assert r["returned_after_restart"] and r["waited_commit_in_folder"]
    assert r["acknowledged_by_clients"] > 0 and r["acknowledged_missing_from_folder"] == []
    assert r["pull_exit_after_primary_died"] == 0 and r["pull_reconnects"]
    rep = r["compare"]["replicas"][0]
    assert rep["missing_from_replica"] == [] and rep["errant"] == [] and rep["problem"] is None


def test_strace_ack_check_can_fail(tmp_path):
    """The ordering check itself: an ack sent before the fsync of its bytes is reported."""
    d = tmp_path / "d"
    f = str(d / "mariadb-bin.000001")
    ack = (b"\x1b\x00\x00\x00\xef" + (300).to_bytes(8, "little") + b"mariadb-bin.000001")
    ack_hex = "".join(f"\\x{b:02x}" for b in ack)
    lines = [f'write(5<{f}>, "\\xfe\\x62\\x69\\x6e", 4) = 4',
             f'writev(5<{f}>, [{{iov_base="\\x00"..., iov_len=296}}], 1) = 296',
             f'sendto(4<socket:[1]>, "{ack_hex}", 31, 0, NULL, 0) = 31',
             f'fsync(5<{f}>) = 0',
             f'sendto(4<socket:[1]>, "{ack_hex}", 31, 0, NULL, 0) = 31']
    t = tmp_path / "trace"
    t.write_text("\n".join(lines) + "\n")
    res = strace_ack_order(t, d)
    assert res["acks"] == 2
    assert res["unsafe"] == [{"file": "mariadb-bin.000001", "position": 300, "synced": 0, "written": 300}]


@pytest.fixture(scope="module")
def primary(tmp_path_factory):
    """A primary after a workload with rotations (FLUSH BINARY LOGS and max_binlog_size of 1 MB),
    a ~25 MB transaction holding a 17 MB event, DDL and rollbacks."""
    base = tmp_path_factory.mktemp("pull-primary")
    with Lab(base / "lab") as lab:
        p = start_primary(lab)
        workload.small(p, 300)
        workload.ddl(p)
        workload.rollback(p)
        p.execute("FLUSH BINARY LOGS")
        workload.multi(p)
        big_event_trx(p, 1)
        workload.small(p, 200, start=300)
        p.execute("FLUSH BINARY LOGS")
        workload.small(p, 50, start=500)
        settle(p)
        yield p


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_until_end_copies_every_file_byte_identical(primary, tmp_path):
    d = tmp_path / "pulled"
    res = run_pull(primary, d, "--until-end", "--json")
    assert res.returncode == 0, res.stderr
    lines = _json_lines(res.stdout)
    kinds = [x["event"] for x in lines]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert lines[0]["file"] == "mariadb-bin.000001" and lines[0]["position"] == 4
    assert "MariaDB" in lines[0]["server_version"]
    done = lines[-1]
    assert done["outcome"] == "end"
    names = primary_binlogs(primary)
    assert len(names) >= 4
    files = compare_files(primary, d, names)
    assert files == {n: "identical" for n in names}
    assert sum(1 for x in lines if x["event"] == "rotate") == len(names) - 1
    assert done["bytes"] == sum(os.path.getsize(d / n) - 4 for n in names)
    assert (d / "mariadb-bin.index").read_text() == "".join(f"./{n}\n" for n in names)
    # the active file keeps its in-use flag (as the primary's), closed ones have it cleared
    flags = {n: (d / n).read_bytes()[4 + 17] & 1 for n in names}
    assert flags == {n: int(n == names[-1]) for n in names}
    gtids = folder_gtids(d)
    assert len(gtids) == len(set(gtids))
    assert last_per_domain(gtids) == primary.var("gtid_binlog_pos")
    # a second run has nothing to fetch and changes nothing
    before = {n: (d / n).read_bytes() for n in names}
    again = run_pull(primary, d, "--until-end", "--json")
    assert again.returncode == 0, again.stderr
    assert _json_lines(again.stdout)[0] == {**_json_lines(again.stdout)[0], "file": names[-1],
                                            "position": len(before[names[-1]])}
    assert {n: (d / n).read_bytes() for n in names} == before


def test_text_output_and_sigterm(primary, tmp_path):
    """Without --until-end it runs until SIGTERM, then syncs and exits 0 with a summary."""
    d = tmp_path / "pulled"
    proc = start_pull(primary, d)
    deadline = time.monotonic() + 60
    last = primary_binlogs(primary)[-1]
    while time.monotonic() < deadline:
        if (d / last).exists() and (d / last).stat().st_size == (primary.datadir / last).stat().st_size:
            break
        time.sleep(0.1)
    workload.small(primary, 5, start=2000)   # arrives live
    settle(primary)                            # with the Binlog_checkpoint the primary adds after it
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert err.startswith(f"pulling from 127.0.0.1:{primary.port}")
    assert "stopped: mariadb-bin." in err and " transactions, " in err
    assert compare_files(primary, d) == {n: "identical" for n in primary_binlogs(primary)}


def test_errors_a_user_can_act_on_exit_2(primary, tmp_path):
    d = tmp_path / "pulled"
    bad = tmp_path / "bad.pw"
    bad.write_text("wrong\n")
    r = run_pull(primary, d, "--until-end", pwfile=bad)
    assert r.returncode == 2 and "refused the login" in r.stderr and "Access denied" in r.stderr
    r = run_pull(primary, d, "--until-end", "--start-file", "mariadb-bin.999999")
    assert r.returncode == 2 and "1236" in r.stderr and "Could not find first log file" in r.stderr
    r = run_pull(primary, d, "--until-end", server_id=1)
    assert r.returncode == 2 and "is the primary's own server_id" in r.stderr
    r = run_pull(primary, d, "--until-end", "--start-position", "100")
    assert r.returncode == 2 and "--start-position must be 4" in r.stderr
    r = run_pull(primary, d, "--until-end", "--gtid", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    assert r.returncode == 2 and "is not a MariaDB GTID position" in r.stderr
    r = run_pull(primary, d, "--until-end", "--sync", "sometimes")
    assert r.returncode == 2 and "--sync must be" in r.stderr
    no_user = subprocess.run([*pull_cmd(primary, d)[:3], "pull", "--server-id", "5",
                              "--dir", str(d)], capture_output=True, text=True, env={**os.environ, "MYSQL_PWD": ""})
    assert no_user.returncode == 2 and "--user is required" in no_user.stderr
    # nothing was written by the refused runs but the folder and its state
    assert not any(n.startswith("mariadb-bin.0") for n in os.listdir(d)) if d.exists() else True


def test_defaults_file_and_mysql_pwd(primary, tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nuser=repl\npassword=\"repl-pw\"\nhost=127.0.0.1\nport={primary.port}\n")
    base = [*pull_cmd(primary, tmp_path)[:3], "pull", "--server-id", "77", "--until-end"]
    r = subprocess.run([*base, "--defaults-file", str(cnf), "--dir", str(tmp_path / "a")], capture_output=True,
                       text=True, cwd=Path(__file__).parent.parent)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*base, "--host", "127.0.0.1", "--port", str(primary.port), "--user", "repl",
                        "--dir", str(tmp_path / "b")], capture_output=True, text=True,
                       cwd=Path(__file__).parent.parent, env={**os.environ, "MYSQL_PWD": "repl-pw"})
    assert r.returncode == 0, r.stderr
    names = primary_binlogs(primary)
    for sub in ("a", "b"):
        assert compare_files(primary, tmp_path / sub, names) == {n: "identical" for n in names}


def test_start_file_and_gtid_start_then_resume(primary, tmp_path):
    names = primary_binlogs(primary)
    # --start-file: from that file on
    d = tmp_path / "from-file"
    r = run_pull(primary, d, "--until-end", "--start-file", names[2])
    assert r.returncode == 0, r.stderr
    assert compare_files(primary, d, names[2:]) == {n: "identical" for n in names[2:]}
    assert not (d / names[0]).exists()
    # --gtid: the file holding the transactions after that GTID, whole
    gt = folder_gtids_of(primary, names[2])[3]
    d2 = tmp_path / "from-gtid"
    r = run_pull(primary, d2, "--until-end", "--gtid", gt, "--json")
    assert r.returncode == 0, r.stderr
    assert _json_lines(r.stdout)[0]["file"] == names[2]
    assert compare_files(primary, d2, names[2:]) == {n: "identical" for n in names[2:]}
    # the folder resumes by itself; a different start option is refused
    r = run_pull(primary, d2, "--until-end", "--start-file", names[0])
    assert r.returncode == 2 and "resumes by itself" in r.stderr
    workload.small(primary, 20, start=3000)
    for sub in (d, d2):
        r = run_pull(primary, sub, "--until-end")
        assert r.returncode == 0, r.stderr
        assert compare_files(primary, sub, names[2:]) == {n: "identical" for n in names[2:]}


def folder_gtids_of(primary, name: str) -> list[str]:
    from binlogkit.transactions import group_files

    return [t.gtid for t in group_files([primary.datadir / name], relay=False) if t.gtid and t.complete]


def test_torn_tail_and_partial_transaction_repaired_on_start(primary, tmp_path):
    """A copy whose last file ends inside an event, or inside a transaction: the start repairs
    it (says so) and the pull re-fetches exactly what was cut."""
    names = primary_binlogs(primary)
    d = tmp_path / "pulled"
    assert run_pull(primary, d, "--until-end").returncode == 0
    big = next(n for n in names if (primary.datadir / n).stat().st_size > 20 << 20)
    later = names[names.index(big) + 1:]
    for n in later:
        os.unlink(d / n)
    full = (primary.datadir / big).stat().st_size
    for cut, why in ((full - 1000, "TruncatedEventError"), (18 << 20, "TruncatedEventError"),
                     (None, "without its commit")):
        if cut is None:   # end exactly after the big 17 MB event: a whole event, a partial transaction
            cut = _end_of_largest_event(primary.datadir / big)
        os.truncate(d / big, cut)
        r = run_pull(primary, d, "--until-end", "--json")
        assert r.returncode == 0, r.stderr
        rep = [x for x in _json_lines(r.stdout) if x["event"] == "repair"]
        assert len(rep) == 1 and rep[0]["cut_from"] == cut and why in rep[0]["reason"], rep
        assert rep[0]["position"] < cut
        assert compare_files(primary, d, names) == {n: "identical" for n in names}
        for n in later:
            os.unlink(d / n)
    # the text form says it on stderr
    os.truncate(d / big, full - 7)
    r = run_pull(primary, d, "--until-end")
    assert r.returncode == 0 and f"repaired {big}: cut from {full - 7} to " in r.stderr


def _end_of_largest_event(path: Path) -> int:
    from binlogkit.reading.reader import iter_raw_events

    with open(path, "rb") as fh:
        best = max(iter_raw_events(fh, name=str(path)), key=lambda e: e.event_size)
    return best.offset + best.event_size


def test_folder_of_another_primary_refused(primary, tmp_path):
    d = tmp_path / "pulled"
    assert run_pull(primary, d, "--until-end").returncode == 0
    # another server, stopped by its own PID (a second Lab would stop every server at its exit)
    other = Server("other", tmp_path / "other", 9, options=dict(COMMON)).start()
    try:
        grant_replication(other)
        r = run_pull(other, d, "--until-end")
        assert r.returncode == 2 and "server_id 1" in r.stderr and "use another folder" in r.stderr
    finally:
        other.stop()
    # a folder with binlogs not made by pull
    d2 = tmp_path / "stray"
    d2.mkdir()
    (d2 / "mariadb-bin.000001").write_bytes(b"\xfebin")
    r = run_pull(primary, d2, "--until-end")
    assert r.returncode == 2 and "not a folder binlogkit pull made" in r.stderr


def test_resume_past_the_dump_requests_32_bits(primary, tmp_path):
    """COM_BINLOG_DUMP carries a 32-bit position. A copy whose resume point lies past it (here
    the limit is lowered to 1000 bytes so that a real primary shows the path) reads its file
    again from 4, compares every byte it already has, and goes on writing from its end."""
    from binlogkit.pull import PullConfig, PullError, pull
    from fixtures.lab.topology import REPL_PASSWORD, REPL_USER

    names = primary_binlogs(primary)
    d = tmp_path / "pulled"
    assert run_pull(primary, d, "--until-end").returncode == 0
    k = next(i for i, n in enumerate(names) if (primary.datadir / n).stat().st_size > 20 << 20)
    for n in names[k + 1:]:
        os.unlink(d / n)
    cut = _end_of_largest_event(primary.datadir / names[k])  # a partial transaction: repaired to its start
    os.truncate(d / names[k], cut)
    seen = []
    cfg = PullConfig("127.0.0.1", primary.port, REPL_USER, REPL_PASSWORD, 4343, str(d), until_end=True,
                     max_dump_position=1000)
    done = pull(cfg, report=seen.append)
    assert done["outcome"] == "end"
    kinds = [x["event"] for x in seen]
    assert kinds[:3] == ["repair", "start", "refetch"], kinds
    keep = seen[0]["position"]
    assert keep > 1000 and seen[2]["position"] == keep and seen[2]["file"] == names[k]
    assert compare_files(primary, d, names) == {n: "identical" for n in names}
    # a copy whose bytes differ from the primary's (a valid event, its CRC32 recomputed) is
    # refused, not overwritten
    import zlib

    for n in names[k + 1:]:
        os.unlink(d / n)
    path = d / names[k]
    fde_size = int.from_bytes(path.read_bytes()[4 + 9:4 + 13], "little")
    fde = bytearray(path.read_bytes()[4:4 + fde_size])
    fde[19 + 2] ^= 0x20   # the server version's first byte, another case
    fde[-4:] = zlib.crc32(bytes(fde[:-4])).to_bytes(4, "little")
    with open(path, "r+b") as fh:
        fh.seek(4)
        fh.write(fde)
    before = path.read_bytes()
    with pytest.raises(PullError) as err:
        pull(cfg, report=lambda e: None)
    assert f"{names[k]} in the folder differs from the primary's at 4" in str(err.value)
    assert path.read_bytes() == before


def test_iter_events_api_yields_the_files_events(primary):
    """The Python API: a live primary's events as RawEvent values, the same offsets, bytes and
    checksums as the file reader gives for the primary's own files."""
    from binlogkit.pull import iter_events
    from binlogkit.reading.reader import iter_raw_events
    from fixtures.lab.topology import REPL_PASSWORD, REPL_USER

    names = primary_binlogs(primary)
    live = list(iter_events("127.0.0.1", primary.port, REPL_USER, REPL_PASSWORD, server_id=4444, file=names[0]))
    files = []
    for n in names:
        with open(primary.datadir / n, "rb") as fh:
            files += [(n, e.offset, e.type_code, e.data) for e in iter_raw_events(fh, name=n)]
    assert [(e.file, e.offset, e.type_code) for e in live] == [f[:3] for f in files]
    assert all(e.checksum_ok for e in live)
    # bytes equal, but for the in-use flag of each file's Format_description
    differ = [(e.file, e.offset) for e, f in zip(live, files) if e.data != f[3]]
    assert all(off == 4 for _, off in differ)


def test_server_id_in_use_refused_when_the_account_may_see_replicas(primary, tmp_path):
    """SHOW SLAVE HOSTS needs REPLICATION MASTER ADMIN on MariaDB >= 10.5: with it, a server id
    another replica (here another pull) registered is refused with exit 2, and the running one
    is left alone."""
    primary.execute("SET sql_log_bin=0", "GRANT REPLICATION MASTER ADMIN ON *.* TO 'repl'@'127.0.0.1'")
    first = start_pull(primary, tmp_path / "a", "--json", server_id=5151)
    try:
        assert '"start"' in first.stdout.readline()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                int(r["Server_id"]) == 5151 for r in primary.query("SHOW SLAVE HOSTS")):
            time.sleep(0.1)
        r = run_pull(primary, tmp_path / "b", "--until-end", server_id=5151)
        assert r.returncode == 2, r.stderr
        assert "server_id 5151 is already used by a replica" in r.stderr
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
        primary.execute("SET sql_log_bin=0", "REVOKE REPLICATION MASTER ADMIN ON *.* FROM 'repl'@'127.0.0.1'")
    assert first.returncode == 0


def test_tty_shows_rate_and_lag(primary, tmp_path):
    """On a terminal, stderr carries one refreshed line: position, MB/s, events/s, lag."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(pull_cmd(primary, tmp_path / "pulled"), stdout=subprocess.DEVNULL, stderr=slave,
                            cwd=Path(__file__).parent.parent)
    os.close(slave)
    time.sleep(4)
    workload.small(primary, 5, start=5000)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    text = out.decode("utf-8", "replace")
    assert proc.returncode == 0, text
    status = [s for s in text.split("\r") if " MB/s " in s]
    assert status, text
    assert " events/s  lag " in status[-1] and status[-1].startswith("mariadb-bin.")
    assert "stopped: mariadb-bin." in text


@pytest.mark.parametrize("kind", KIND_PARAMS)
def test_semisync_until_end(tmp_path, kind):
    """``--semisync --until-end``: a MariaDB primary's non-blocking dump with a semisync replica
    may never send its end (the dump thread hangs in "Waiting to finalize termination" and holds
    up the next dump of the same server_id for a minute and more): refused at once, exit 2,
    naming the way out, the primary left without a dump thread and the folder unclaimed; MySQL's
    ends (exit 0) with the primary's files copied."""
    with Lab(tmp_path / "lab", kind=kind) as lab:
        p = start_primary(lab)
        p.execute(*(sql.format(timeout_ms=3000) for sql in p.kind.sql.semisync_source))
        workload.small(p, 5)
        copy = tmp_path / "copy"
        for i in range(3):     # the server's hang came in about half the runs
            workload.small(p, 2, start=9000 + 10 * i)
            t0 = time.monotonic()
            r = run_pull(p, copy, "--until-end", "--semisync", "--json", timeout=120)
            took = time.monotonic() - t0
            if p.kind.flavor == "mariadb":
                assert r.returncode == 2 and "--semisync with --until-end" in r.stderr, r.stderr
                assert "leave out --until-end" in r.stderr and took < 10, (took, r.stderr)
                assert not binlog_names(copy)
            else:
                assert r.returncode == 0, r.stderr
                done = json.loads(r.stdout.strip().splitlines()[-1])
                # MySQL may close the connection on the last acknowledgement unread (a reset the
                # end packet is lost in): one reconnection, at the end already
                assert done["outcome"] == "end" and done["reconnects"] <= 1, done
                assert binlog_names(copy) == primary_binlogs(p)
        time.sleep(0.5)
        assert not [x for x in p.query("SHOW PROCESSLIST") if x["Command"] == "Binlog Dump"]

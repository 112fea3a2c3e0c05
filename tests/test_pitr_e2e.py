"""Point-in-time recovery proven on real servers: a backup point taken from a running server by
``mariadb-dump --single-transaction --master-data=2 --gtid`` while a writer is busy, more
workload over several rotations, a snapshot of the tables at a chosen second T (with a
transaction open across T), more workload; then a fresh server loaded from the dump, the
command ``binlogkit pitr --backup-info DUMP --until-datetime T`` prints run as printed (the
client's settings from its own option file), and the tables equal the snapshot. A middle file
removed, or a file cut, makes the same plan not reachable, naming the place."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit import open_binlog
from binlogkit.cli import main
from fixtures.lab import Lab, workload
from fixtures.lab.oracle import table_fingerprints

pytestmark = pytest.mark.server


ROOT = Path(__file__).resolve().parent.parent


def _binlogkit_on_path(tmp: Path) -> str:
    """A folder whose ``binlogkit`` is this checkout's (the printed command names ``binlogkit``)."""
    bindir = tmp / "bk-bin"
    if not bindir.is_dir():
        bindir.mkdir()
        (bindir / "binlogkit").write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(ROOT))} "
                                          f"exec {shlex.quote(sys.executable)} -m binlogkit.cli \"$@\"\n")
        (bindir / "binlogkit").chmod(0o755)
    return str(bindir)


def _client_home(tmp: Path, server) -> dict:
    """A HOME whose ~/.my.cnf points the client at ``server``: the command has no options; and
    this checkout's ``binlogkit`` first on PATH."""
    home = tmp / f"home-{server.name}"
    home.mkdir()
    (home / ".my.cnf").write_text(f"[client]\nsocket={server.socket}\nuser=root\n")
    return dict(os.environ, HOME=str(home), PATH=f"{_binlogkit_on_path(tmp)}:{os.environ['PATH']}")


def _run(command: str, env: dict) -> subprocess.CompletedProcess:
    """The printed command as printed, by bash (pipefail: a replayer's failure is the line's)."""
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], env=env, capture_output=True, text=True)


def _pitr(*args) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["pitr", "--json", *map(str, args)])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)



def _archive_of(p, archive: Path) -> Path:
    """A copy of the (stopped) MariaDB server's binlogs in ``archive``."""
    archive.mkdir()
    for f in sorted(p.datadir.glob("mariadb-bin.0*")):
        shutil.copy2(f, archive / f.name)
    return archive

def _held_by_the_dump(plan: dict, archive: Path, until: str, restored) -> dict:
    """The plan to replay into ``restored`` (the dump loaded): as planned, unless the plan warns
    that the dump's point is a file's start right after a rotation (a MariaDB snapshot there can
    lack the previous file's last group commit) and the loaded dump indeed lacks that group's rows:
    then the plan from the start the warning names. No other problem is allowed."""
    warn = [p for p in plan["problems"] if p["kind"] == "backup_at_rotation"]
    assert [p for p in plan["problems"] if p not in warn] == [], plan["problems"]
    if not warn:
        return plan
    [w] = warn
    keys = {int(m) for e in open_binlog(str(archive / Path(w["file"]).name)) if e.offset >= w["offset"]
            for m in re.findall(rb"INSERT INTO lab\.small \(k, v\) VALUES \((\d+)", bytes(e.data or b""))}
    assert keys, w  # the group is the writer's inserts
    with restored.connect() as conn, conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM lab.small WHERE k IN ({','.join(map(str, keys))})")
        held = cur.fetchone()[0]
    assert held in (0, len(keys)), (held, keys)
    if held:
        return plan
    code, alt = _pitr(archive, "--from-file", Path(w["file"]).name, "--from-position", w["offset"],
                      "--until-datetime", until)
    assert code == 0 and alt["problems"] == [] and alt["transactions"] == plan["transactions"] + len(w["gtids"])
    return alt


@contextlib.contextmanager
def _commits_during(p, most: int, *, writers: int = 1, first: int = 10_000, label: str = "during-dump"):
    """``writers`` writers committing single-row inserts into ``lab.small`` (``v`` = ``label``;
    writer w's keys from ``first`` + 100,000 w, at most ``most`` each) while the block runs (a
    backup taken under load); stopped and joined on leaving."""
    stop = threading.Event()

    def writer(start: int) -> None:
        with p.connect() as conn, conn.cursor() as cur:
            for i in range(start, start + most):
                if stop.is_set():
                    break
                cur.execute("INSERT INTO lab.small (k, v) VALUES (%s, %s)", (i, label))

    threads = [threading.Thread(target=writer, args=(first + 100_000 * w,)) for w in range(writers)]
    for th in threads:
        th.start()
    time.sleep(0.2)
    try:
        yield
    finally:
        stop.set()
        for th in threads:
            th.join()


def test_restore_dump_and_replay_to_a_second(tmp_path):
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1).start()
        workload.schema(p)
        workload.small(p, 200)
        # the backup, taken while a writer commits
        dump = tmp_path / "backup.sql"
        with _commits_during(p, 2_000), open(dump, "wb") as out:
            subprocess.run(["mariadb-dump", f"--socket={p.socket}", "-uroot", "--single-transaction",
                            "--master-data=2", "--gtid", "--databases", "lab"], stdout=out, check=True)
        workload.small(p, 600, start=200)       # several rotations (64 KiB binlogs)
        # a transaction open across T
        straddler = p.connect()
        scur = straddler.cursor()
        scur.execute("BEGIN")
        scur.execute("INSERT INTO lab.acct (id, balance) VALUES (1, 100)")
        T = int(time.time()) + 1
        time.sleep(T - time.time() + 0.3)        # now inside second T: nothing else commits in it
        snapshot = table_fingerprints(p)
        pos_at_t = p.var("gtid_binlog_pos")
        scur.execute("INSERT INTO lab.acct (id, balance) VALUES (2, 200)")
        scur.execute("COMMIT")
        scur.execute("SELECT @@last_gtid")
        straddle_gtid = scur.fetchone()[0]
        straddler.close()
        workload.small(p, 600, start=800)
        assert table_fingerprints(p) != snapshot
        p.stop()
        archive = _archive_of(p, tmp_path / "archive")
        assert len(list(archive.iterdir())) >= 6

        until = datetime.fromtimestamp(T, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        code, plan = _pitr(archive, "--backup-info", dump, "--until-datetime", until)
        assert code == 0 and plan["reachable"], plan
        assert plan["start"]["backup"]["origin"] == "dump" and plan["start"]["backup"]["gtids"]
        assert len(plan["files"]) >= 3 and plan["transactions"] >= 600   # the 600 small ones, and what the
        # writer committed after the dump's snapshot (none when the dump was quick)
        # the plan stops right before the transaction open across T, and names it
        res = CliRunner().invoke(main, ["transactions", "--json", "--gtids", straddle_gtid, str(archive)])
        strad = next(t for t in map(json.loads, res.output.splitlines()) if t["gtid"] == straddle_gtid)
        assert (Path(plan["stop"]["file"]).name, plan["stop"]["position"]) == (
            Path(strad["start_file"]).name, strad["start_offset"])
        # the target fell inside the straddler when its events are dated on both sides of T
        stamps = [e.timestamp for e in open_binlog(str(archive / Path(strad["start_file"]).name))
                  if strad["start_offset"] <= e.offset < strad["end_offset"]]
        assert min(stamps) < T <= max(stamps)    # its first INSERT is dated before T, its GTID and Xid after
        assert plan["stop"]["before"]["gtid"] == straddle_gtid

        # restore into a fresh server, replay exactly what was printed
        r = lab.server("restored", 3).start()
        env = _client_home(tmp_path, r)
        with open(dump, "rb") as fh:
            subprocess.run(["mariadb"], stdin=fh, env=env, check=True)
        assert table_fingerprints(r) != snapshot
        plan = _held_by_the_dump(plan, archive, until, r)
        assert plan["command"].startswith("binlogkit decode ") and plan["command"].endswith(" | mariadb")
        done = _run(plan["command"], env)
        assert done.returncode == 0, done.stderr
        got = table_fingerprints(r)
        assert got == snapshot, (plan, r.var("gtid_binlog_pos"), pos_at_t, done.stderr[-2000:])
        assert r.var("gtid_binlog_pos") == pos_at_t

        # by GTIDs, over an archive whose files are compressed: the same data
        packed = tmp_path / "packed"
        shutil.copytree(archive, packed)
        for f in sorted(packed.iterdir())[::2]:
            subprocess.run(["xz", "-0", str(f)], check=True)
        backup_gtids = plan["start"]["gtids"]  # the GTID state at the replay's start: what the dump holds
        code, byg = _pitr(packed, "--from-gtid", backup_gtids, "--until-gtid", pos_at_t)
        assert code == 0 and byg["problems"] == [] and byg["transactions"] == plan["transactions"]
        assert [Path(f).name.split(".xz")[0] for f in byg["files"]] == [Path(f).name for f in plan["files"]]
        # binlogkit reads the .xz files itself; the server tool's line decompresses into its stdin
        assert byg["command"].startswith("binlogkit decode ") and "xz -dc" not in byg["command"]
        assert byg["tool_command"].startswith("{ ") and "xz -dc" in byg["tool_command"]
        for name, sid, line in (("restored-gtid", 4, byg["command"]), ("restored-tool", 5, byg["tool_command"])):
            r2 = lab.server(name, sid).start()
            env2 = _client_home(tmp_path, r2)
            with open(dump, "rb") as fh:
                subprocess.run(["mariadb"], stdin=fh, env=env2, check=True)
            done = _run(line, env2)
            assert done.returncode == 0, done.stderr
            assert table_fingerprints(r2) == snapshot and r2.var("gtid_binlog_pos") == pos_at_t

        # the same plan over a damaged archive: not reachable, the place named
        holed = tmp_path / "holed"
        shutil.copytree(archive, holed)
        middle = Path(plan["files"][len(plan["files"]) // 2]).name
        (holed / middle).unlink()
        code, bad = _pitr(holed, "--backup-info", dump, "--until-datetime", until)
        assert code == 1 and not bad["reachable"]
        kinds = {(f["kind"], f["place"]) for f in bad["problems"]}
        assert any(k == "missing_file" and middle in place for k, place in kinds), kinds
        assert any(k == "gtid_gap" for k, _ in kinds)

        cut = tmp_path / "cut"
        shutil.copytree(archive, cut)
        victim = cut / Path(plan["files"][1]).name
        size = victim.stat().st_size
        with open(victim, "r+b") as fh:
            fh.truncate(size // 2)
        code, bad = _pitr(cut, "--backup-info", dump, "--until-datetime", until)
        assert code == 1
        torn = [f for f in bad["problems"] if f["kind"] == "torn_event"]
        assert torn and Path(torn[0]["file"]).name == victim.name and torn[0]["offset"] < size // 2


def test_physical_backup_with_mariabackup(tmp_path):
    """mariabackup --backup while a writer commits leaves xtrabackup_binlog_info (file, position,
    GTID): prepared and copied back into a fresh datadir, plus the printed replay to a GTID, the
    server's tables equal the original's at that GTID."""
    exe = shutil.which("mariadb-backup") or shutil.which("mariabackup")
    if not exe:
        if os.environ.get("CI"):
            pytest.fail("CI run without mariadb-backup: scripts/install-deps.sh installs it")
        pytest.skip("mariadb-backup is not installed (Debian: mariadb-backup)")
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1).start()
        workload.schema(p)
        workload.small(p, 300)
        target = tmp_path / "backup"
        with _commits_during(p, 10_000, first=20_000, label="during-backup"):
            res = subprocess.run([exe, "--backup", f"--target-dir={target}", f"--socket={p.socket}", "--user=root"],
                                 capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        info = next(f for f in (target / "mariadb_backup_binlog_info", target / "xtrabackup_binlog_info") if f.exists())
        workload.small(p, 700, start=300)
        pos = p.var("gtid_binlog_pos")
        snapshot = table_fingerprints(p)
        workload.small(p, 300, start=1000)
        p.stop()
        archive = _archive_of(p, tmp_path / "archive")

        code, plan = _pitr(archive, "--backup-info", info, "--until-gtid", pos)
        assert code == 0 and plan["problems"] == [] and plan["start"]["backup"]["origin"] == "binlog_info", plan
        assert plan["start"]["backup"]["gtids"]  # the binlog's GTID state there agreed with it

        res = subprocess.run([exe, "--prepare", f"--target-dir={target}"], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        r = lab.server("restored", 3)
        r.datadir.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run([exe, "--copy-back", f"--target-dir={target}", f"--datadir={r.datadir}"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-3000:]
        r.start()
        assert table_fingerprints(r) != snapshot
        done = _run(plan["command"], _client_home(tmp_path, r))
        assert done.returncode == 0, done.stderr
        assert table_fingerprints(r) == snapshot


# --- today's servers (issue 29): the dump-and-replay proof on MySQL 9.7 and MariaDB 11.8 ---------
# the kind's dump tool with the backup's binlog coordinates and GTID state in its output
DUMP_COORDINATES = {"mysql": ("--source-data=2", "--set-gtid-purged=ON"), "mariadb": ("--master-data=2", "--gtid")}


def _gtid_text(s: str) -> str:
    return "".join(str(s).split())  # MySQL's gtid_executed breaks lines between uuids


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.kind(k), id=k)
                                  for k in ("mysql-9.7", "mariadb-11.8")])
def test_restore_dump_and_replay_to_a_second_on_todays_servers(tmp_path, kind):
    """The proof above on MySQL 9.7 (mysqldump --single-transaction --source-data=2, GTID_PURGED)
    and MariaDB 11.8 (mariadb-dump --master-data=2 --gtid): the dump taken while a writer
    commits, rotations after it, a transaction open across second T; a fresh server loaded from
    the dump, the printed ``mysqlbinlog … | mysql`` (``mariadb-binlog … | mariadb``) run with
    the chroot's own tools (the archive's paths as the chroot sees them): the tables equal the
    original's at T and the GTID state is the original's at T."""
    from fixtures.lab.clients import TOOLS, client, dump as dump_of
    from fixtures.lab.oracle import master_status

    with Lab(tmp_path / "lab", kind=kind) as lab:
        k = lab.kind
        p = lab.server("primary", 1).start()
        workload.schema(p)
        workload.small(p, 100)
        with _commits_during(p, 1_000):
            backup = dump_of(p, "--single-transaction", *DUMP_COORDINATES[k.flavor], "--databases", "lab")
        dump = tmp_path / "backup.sql"
        dump.write_bytes(backup)
        workload.small(p, 300, start=100)        # rotations (64 KiB binlogs)
        straddler = p.connect()
        scur = straddler.cursor()
        scur.execute("BEGIN")
        scur.execute("INSERT INTO lab.acct (id, balance) VALUES (1, 100)")
        T = int(time.time()) + 1
        time.sleep(T - time.time() + 0.3)        # inside second T: nothing else commits in it
        snapshot = table_fingerprints(p)
        pos_at_t = _gtid_text(master_status(p)["gtid_binlog_pos"])
        scur.execute("INSERT INTO lab.acct (id, balance) VALUES (2, 200)")
        scur.execute("COMMIT")
        straddler.close()
        workload.small(p, 200, start=400)
        assert table_fingerprints(p) != snapshot
        base = p.options.get("log_bin") or k.defaults["log_bin"]
        p.stop()
        archive = lab.work / "archive"            # inside the chroot: its mysqlbinlog reads it there
        archive.mkdir()
        for f in sorted(p.datadir.glob(f"{base}.0*")):
            shutil.copy2(f, archive / f.name)
        assert len(list(archive.iterdir())) >= 4

        until = datetime.fromtimestamp(T, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        code, plan = _pitr(archive, "--backup-info", dump, "--until-datetime", until)
        assert code == 0 and plan["reachable"], plan
        assert plan["start"]["backup"]["origin"] == "dump" and plan["start"]["backup"]["gtids"]
        assert len(plan["files"]) >= 2 and plan["transactions"] >= 300
        assert plan["stop"]["before"]["gtid"]    # stops right before the straddler, named
        assert plan["tool_command"].startswith(k.binlog_tool[0] + " ") or plan["tool_command"].startswith("{ ")

        # the server tool's line (--replay-with tool), run in the chroot as printed
        r = lab.server("restored", 3).start()
        client(r, input=backup)
        assert table_fingerprints(r) != snapshot
        plan = _held_by_the_dump(plan, archive, until, r)
        inner_home = lab.work / "home"
        inner_home.mkdir()
        (inner_home / ".my.cnf").write_text(f"[client]\nsocket={k.inner(r.socket)}\nuser=root\n")
        command = plan["tool_command"].replace(str(k.root.resolve()), "")  # the same files, seen from the chroot
        done = subprocess.run(k.argv("/bin/bash", "-c", command), capture_output=True, text=True,
                              env=dict(os.environ, HOME=k.inner(inner_home), TZ="UTC"))
        assert done.returncode == 0, done.stderr[-2000:]
        assert table_fingerprints(r) == snapshot
        assert _gtid_text(master_status(r)["gtid_binlog_pos"]) == pos_at_t

        # the plan's command (binlogkit decode ... | client) on the host, into the chroot's client
        r2 = lab.server("restored-bk", 4).start()
        client(r2, input=backup)
        bindir = tmp_path / "client-bin"
        bindir.mkdir()
        login = " ".join(shlex.quote(a) for a in k.argv(k.binary(TOOLS[k.flavor][0]), "--no-defaults",
                                                         f"--socket={k.inner(r2.socket)}", "-uroot"))
        (bindir / TOOLS[k.flavor][0][0]).write_text(f"#!/bin/sh\nexec {login} \"$@\"\n")
        (bindir / TOOLS[k.flavor][0][0]).chmod(0o755)
        env = dict(os.environ, TZ="UTC", PATH=f"{bindir}:{_binlogkit_on_path(tmp_path)}:{os.environ['PATH']}")
        assert plan["command"].startswith("binlogkit decode ") and plan["command"].endswith(f" | {TOOLS[k.flavor][0][0]}")
        done = _run(plan["command"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert table_fingerprints(r2) == snapshot
        assert _gtid_text(master_status(r2)["gtid_binlog_pos"]) == pos_at_t


def test_a_dump_taken_at_a_rotation_is_warned_and_the_named_start_restores(tmp_path):
    """MariaDB (Debian's): a dump taken by ``mariadb-dump --single-transaction --master-data=2
    --gtid`` right after a binlog rotation can print the new file's start as its point (and a
    GTID position that includes the previous file's last transaction) while its data lacks that
    transaction. Dumps are taken under three writers on 4 KiB binlogs until one lands there; the
    plan warns (exit 0, the group named); replaying from the dump's own point loses the
    transaction, replaying from the start the warning names restores the tables exactly."""
    with Lab(tmp_path / "lab") as lab:
        p = lab.server("primary", 1, max_binlog_size=4096, binlog_row_metadata="FULL").start()
        workload.schema(p)
        workload.small(p, 50)
        base = int(p.var("gtid_binlog_pos").split("-")[-1])
        dump = tmp_path / "backup.sql"
        with _commits_during(p, 10**9, writers=3):
            for _ in range(200):
                out = subprocess.run(["mariadb-dump", f"--socket={p.socket}", "-uroot", "--single-transaction",
                                      "--master-data=2", "--gtid", "--databases", "lab"],
                                     capture_output=True, check=True).stdout
                seq = int(re.findall(rb"gtid_slave_pos='[0-9]+-[0-9]+-([0-9]+)'", out)[-1])
                if out.count(b"'during-dump'") < seq - base:  # its data lacks what its point says it holds
                    dump.write_bytes(out)
                    break
        assert dump.exists(), "no dump of 200 landed right after a rotation"
        target = p.var("gtid_binlog_pos")
        expected = table_fingerprints(p)
        with p.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT id, k, v FROM lab.small")
            server_rows = sorted(cur.fetchall())
        p.stop()
        archive = _archive_of(p, tmp_path / "archive")

        code, plan = _pitr(archive, "--backup-info", dump, "--until-gtid", target)
        assert code == 0 and plan["reachable"], plan
        [w] = plan["problems"]
        assert (w["kind"], w["severity"]) == ("backup_at_rotation", "warning")
        assert plan["start"]["position"] < 1024   # the start of a file
        code, alt = _pitr(archive, "--from-file", Path(w["file"]).name, "--from-position", w["offset"],
                          "--until-gtid", target)
        assert code == 0 and alt["problems"] == [] and alt["transactions"] == plan["transactions"] + len(w["gtids"])
        for name, sid, line, same in (("as-dumped", 2, plan["command"], False), ("as-warned", 3, alt["command"], True)):
            r = lab.server(name, sid).start()
            env = _client_home(tmp_path, r)
            with open(dump, "rb") as fh:
                subprocess.run(["mariadb"], stdin=fh, env=env, check=True)
            done = _run(line, env)
            assert done.returncode == 0, done.stderr[-2000:]
            assert (table_fingerprints(r) == expected) is same
            assert r.var("gtid_binlog_pos") == target

        # a mirror started from the same dump applies that group again: the server's rows
        res = CliRunner().invoke(main, ["export", str(archive), "-o", str(tmp_path / "wh"), "--format", "delta",
                                        "--mirror", "--snapshot", str(dump), "--table", "lab.small", "--json"])
        assert res.exit_code == 0, res.output
        s = json.loads(res.output)
        assert s["snapshot_at_rotation"]["gtids"] == w["gtids"] and s["snapshot_at_rotation"]["offset"] == w["offset"]
        from binlogkit.export.lake.mirror import open_sink

        mirrored = sorted((r["id"], r["k"], r["v"]) for r in open_sink("delta", str(tmp_path / "wh")).read("lab", "small").to_pylist())
        assert mirrored == server_rows

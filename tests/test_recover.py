"""Recovery plans on the committed crash snapshots equal the ground truth; apply is backed up,
atomic, idempotent, and converges when killed at any step."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.recover import RecoveryRefused, apply_plan, plan_recovery
from binlogkit.recover.info import MasterInfo, RelayLogInfo, read_info
from fixtures import store

from conftest import CORPUS

CRASH = [s for s in store.set_names() if s.startswith("crash-")]


def relay_copy(name: str, tmp_path: Path) -> Path:
    d = tmp_path / name / "relay"
    shutil.copytree(store.materialize(name) / "relay", d)
    return d


def state(d: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", CRASH)
def test_plan_matches_ground_truth(name, tmp_path):
    m = store.manifest(name)
    truth = m["truth"]
    plan = plan_recovery(store.materialize(name) / "relay")
    assert plan.mode == m["mode"]
    if m["mode"] == "position":
        want = truth["next_source_position_position_mode"]
        assert plan.next_source == {"file": want["file"], "position": want["pos"]}
        cut = {t["file"]: t["new_size"] for t in plan.truncate}
        if truth["torn"]:
            assert cut == {truth["torn"][0]["file"]: truth["torn"][0]["offset"]}
        elif truth["dangling_rotate"]:
            assert cut == {truth["dangling_rotate"]["file"]: truth["dangling_rotate"]["offset"]}
        else:
            assert cut == {}
        mi = m["relay_dir"]["master_info"]
        lagging = (mi["master_log_file"], mi["master_log_pos"]) != (want["file"], want["pos"])
        assert (plan.master_info is not None) == lagging
    else:
        p = truth["partial_transaction"]
        assert plan.next_source == {"file": p["source_file"], "position": p["source_start"]}
        assert plan.truncate == [{"file": p["relay_file"], "size": plan.truncate[0]["size"],
                                  "new_size": p["start_offset"], "reason": plan.truncate[0]["reason"]}]
    last = truth["last_complete_transaction"]["gtid"]
    assert plan.last_complete_gtid == last
    assert plan.retrieved_gtids == last  # the partial transaction is not counted as retrieved
    assert plan.partial_transaction["gtid"] == truth["partial_transaction"]["gtid"]


@pytest.mark.parametrize("name", CRASH)
def test_apply_then_nothing_to_do(name, tmp_path):
    d = relay_copy(name, tmp_path)
    before = state(d)
    plan = plan_recovery(d)
    backup = apply_plan(plan, backup_dir=tmp_path / "backup", check_processes=False)
    again = plan_recovery(d)
    assert again.nothing_to_do, again.to_json()
    assert again.next_source == plan.next_source
    if plan.nothing_to_do:
        assert backup is None and state(d) == before
        return
    journal = json.loads((backup / "journal.json").read_text())
    assert journal["finished"] and journal["plan"]["next_source"] == plan.next_source
    for t in plan.truncate:  # every changed file was copied first, byte-exact
        assert hashlib.sha256((backup / t["file"]).read_bytes()).hexdigest() == before[t["file"]]
        assert (d / t["file"]).stat().st_size == t["new_size"]
    if plan.master_info:
        mi = MasterInfo(read_info(d / "master.info", kind="master"))
        old = MasterInfo(read_info(backup / "master.info", kind="master"))
        assert (mi.file, mi.position) == (plan.next_source["file"], plan.next_source["position"])
        assert mi.info.lines[3:] == old.info.lines[3:] and mi.info.extra == old.info.extra  # the rest kept
        assert mi.info.stale_bytes == 0


STEPS = ["after-backup", "after-truncate", "after-remove", "after-index", "after-master-info"]


@pytest.mark.parametrize("step", STEPS)
def test_killed_apply_converges(step, tmp_path):
    """SIGKILL `binlogkit recover --apply` at each step, run it again: same end state as a
    run that was never interrupted."""
    name = "crash-rotation-small-position"
    clean = relay_copy(name, tmp_path / "clean")
    assert CliRunner().invoke(main, ["recover", "--apply", "--backup-dir", str(tmp_path / "b0"), str(clean)]).exit_code == 0
    d = relay_copy(name, tmp_path / "killed")
    env = dict(os.environ, BINLOGKIT_RECOVER_KILL_AT=step)
    cmd = [sys.executable, "-m", "binlogkit.cli", "recover", "--apply", "--backup-dir", str(tmp_path / "b1"), str(d)]
    first = subprocess.run(cmd, env=env, capture_output=True)
    plan_says_step = step in ("after-backup", "after-truncate", "after-master-info")
    if plan_says_step:
        assert first.returncode == -signal.SIGKILL
    env.pop("BINLOGKIT_RECOVER_KILL_AT")
    second = subprocess.run(cmd[:-3] + ["--backup-dir", str(tmp_path / "b2"), str(d)], env=env, capture_output=True)
    assert second.returncode == 0, second.stderr
    assert state(d) == state(clean)


def test_refuses_while_a_process_holds_the_directory(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    with open(d / "relay-bin.index", "rb") as fh:
        holder = subprocess.Popen(["sleep", "30"], stdin=fh)
    try:
        before = state(d)
        res = CliRunner().invoke(main, ["recover", "--apply", str(d)])
        assert res.exit_code == 2 and "stop the server" in res.output
        assert state(d) == before
        with pytest.raises(RecoveryRefused):
            apply_plan(plan_recovery(d))
    finally:
        holder.kill()
        holder.wait()


def test_cli_dry_run_json_and_exit_codes(tmp_path):
    d = relay_copy("crash-partial-gtid", tmp_path)
    before = state(d)
    res = CliRunner().invoke(main, ["recover", "--json", str(d)])
    assert res.exit_code == 1 and state(d) == before  # a dry run changes nothing
    doc = json.loads(res.output)
    for key in ("mode", "next_source", "retrieved_gtids", "last_complete_gtid", "truncate", "remove",
                "relay_log_info", "warnings"):
        assert key in doc
    assert doc["mode"] == "gtid" and doc["retrieved_gtids"] == "0-1-306"
    ok = CliRunner().invoke(main, ["recover", str(store.materialize("replication-gtid") / "replica-relay")])
    assert ok.exit_code == 0 and "nothing to do" in ok.output


def test_sql_thread_past_the_relay_log(tmp_path):
    """Seed 004: relay-log.info says the SQL thread applied past what the relay log holds (the
    relay log lost its tail): resume from the SQL thread's position, point relay-log.info at
    what is kept."""
    d = relay_copy("crash-torn-position", tmp_path)
    ri = RelayLogInfo(read_info(d / "relay-log.info", kind="relay"))
    plan0 = plan_recovery(d)
    ahead = plan0.next_source["position"] + 1000
    (d / "relay-log.info").write_bytes(ri.moved_to("./relay-bin.000005", 999999999, plan0.next_source["file"], ahead).info.render())
    plan = plan_recovery(d)
    assert plan.next_source == {"file": plan0.next_source["file"], "position": ahead}
    assert plan.relay_log_info["master_log_pos"] == ahead
    assert plan.relay_log_info["relay_log_pos"] == plan.truncate[0]["new_size"]
    assert any("past what the relay log keeps" in w for w in plan.warnings)


def test_info_files_stale_bytes_and_old_formats(tmp_path):
    p = tmp_path / "master.info"
    good = b"33\nmariadb-bin.000002\n4229364\n127.0.0.1\nrepl\npw\n3306\n" + b"\n" * 26 + b"using_gtid=0\nEND_MARKER\n"
    p.write_bytes(good + b"stale-tail-from-a-longer-write\n")
    mi = MasterInfo(read_info(p, kind="master"))
    assert (mi.file, mi.position, mi.using_gtid) == ("mariadb-bin.000002", 4229364, 0)
    assert mi.info.stale_bytes == len(b"stale-tail-from-a-longer-write\n")
    assert mi.info.render() == good
    if CORPUS.is_dir():
        for name, fmt_new in (("new-format-relay-log.info", True), ("old-format-relay-log.info", False)):
            ri = RelayLogInfo(read_info(CORPUS / "mysql/mysql-test/std_data" / name if (CORPUS / "mysql/mysql-test/std_data" / name).exists()
                                        else CORPUS / "mariadb/mysql-test/std_data" / name, kind="relay"))
            assert ri.info.has_count == fmt_new
            assert ri.relay_file and ri.relay_pos is not None and ri.master_pos is not None
            assert ri.info.stale_bytes == 0 and ri.info.render() == (ri.info.path and Path(ri.info.path).read_bytes())
    # MariaDB 10.11 relay-log.info: count 5 does not count itself; sql_delay is kept
    ri = RelayLogInfo(read_info(store.materialize("crash-torn-position") / "relay" / "relay-log.info", kind="relay"))
    assert ri.info.lines[-1] == "0" and len(ri.info.lines) == 6


def test_corrupt_event_in_the_middle_is_cut_and_later_files_moved_aside(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    from binlogkit import open_binlog
    events = list(open_binlog(str(d / "relay-bin.000004")))
    victim = events[len(events) // 2]
    raw = bytearray((d / "relay-bin.000004").read_bytes())
    raw[victim.offset + 25] ^= 0x5A  # inside the body: the CRC32 no longer matches
    (d / "relay-bin.000004").write_bytes(bytes(raw))
    # the SQL thread is at the first transaction of that file: behind the damage
    first = next(e for e in events if e.type_code == 162)
    ri = RelayLogInfo(read_info(d / "relay-log.info", kind="relay"))
    (d / "relay-log.info").write_bytes(ri.moved_to("./relay-bin.000004", first.offset, "mariadb-bin.000002",
                                                    first.log_pos - first.event_size).info.render())
    plan = plan_recovery(d)
    assert plan.refuse is None
    assert plan.problem["kind"] == "checksum" and plan.problem["offset"] == victim.offset
    assert plan.truncate[0]["file"] == "relay-bin.000004" and plan.truncate[0]["new_size"] == victim.offset
    assert [r["file"] for r in plan.remove] == ["relay-bin.000005"]
    prev = events[events.index(victim) - 1]
    assert plan.next_source["position"] == prev.log_pos
    assert plan.index == ["./relay-bin.000004"]
    apply_plan(plan, backup_dir=tmp_path / "b", check_processes=False)
    assert plan_recovery(d).nothing_to_do and not (d / "relay-bin.000005").exists()
    assert (tmp_path / "b" / "relay-bin.000005").exists()


def test_refuses_when_sql_thread_applied_past_a_corrupt_event(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    raw = bytearray((d / "relay-bin.000004").read_bytes())
    raw[1000] ^= 0x5A
    (d / "relay-bin.000004").write_bytes(bytes(raw))
    ri = RelayLogInfo(read_info(d / "relay-log.info", kind="relay"))
    (d / "relay-log.info").write_bytes(ri.moved_to("./relay-bin.000005", 553, "mariadb-bin.000002", 34087).info.render())
    before = state(d)
    res = CliRunner().invoke(main, ["recover", "--apply", str(d)])
    assert res.exit_code == 2 and "refused" in res.output
    assert state(d) == before


def test_index_mismatches_and_rec_leftovers(tmp_path):
    d = relay_copy("crash-torn-position", tmp_path)
    (d / "relay-bin.~rec~").write_text("./relay-bin.000006\n")
    (d / "relay-bin.000006").write_bytes((d / "relay-bin.000005").read_bytes()[:256])
    plan = plan_recovery(d)
    removed = {r["file"] for r in plan.remove}
    assert {"relay-bin.~rec~", "relay-bin.000006"} <= removed
    apply_plan(plan, backup_dir=tmp_path / "b", check_processes=False)
    assert plan_recovery(d).nothing_to_do
    # an index that names a file that is gone
    (d / "relay-bin.index").write_text((d / "relay-bin.index").read_text() + "./relay-bin.000009\n")
    plan = plan_recovery(d)
    assert plan.index == ["./relay-bin.000004", "./relay-bin.000005"]
    assert any("not on disk" in w for w in plan.warnings)


def test_relay_log_info_behind_the_commits_is_moved_forward(tmp_path):
    """relay-log.info is rewritten after a commit, not with it: a crash in between leaves it one
    transaction behind (found by `make soak`: a restart then applies it twice, error 1062).
    Given what the replica committed, the plan moves it past those transactions."""
    d = relay_copy("crash-torn-position", tmp_path)
    m = store.manifest("crash-torn-position")
    from binlogkit.transactions import group_files
    from binlogkit.errors import BinlogError
    trx = []
    try:
        for t in group_files([d / "relay-bin.index"], source_file="mariadb-bin.000002"):
            trx.append(t)
    except BinlogError:
        pass
    complete = [t for t in trx if t.complete and t.gtid]
    behind = complete[-3]  # the SQL thread recorded itself before the last three commits
    ri = RelayLogInfo(read_info(d / "relay-log.info", kind="relay"))
    (d / "relay-log.info").write_bytes(ri.moved_to("./" + Path(behind.start_file).name, behind.start_offset,
                                                    behind.source_file, behind.source_start).info.render())
    last = m["truth"]["last_complete_transaction"]
    plan = plan_recovery(d, applied_gtids=last["gtid"])
    assert plan.relay_log_info == {"relay_log_file": "./" + last["relay_file"],
                                   "relay_log_pos": last["relay_end_offset"], "master_log_file": last["source_file"],
                                   "master_log_pos": last["source_end"]}
    assert any("behind the commits" in w for w in plan.warnings)
    # without knowing what was committed, nothing is moved (and no replica binlog is here)
    assert plan_recovery(d).relay_log_info is None
    apply_plan(plan, backup_dir=tmp_path / "b", check_processes=False)
    after = RelayLogInfo(read_info(d / "relay-log.info", kind="relay"))
    assert (after.relay_pos, after.master_pos) == (last["relay_end_offset"], last["source_end"])
    assert after.info.lines[5] == ri.info.lines[5]  # sql_delay kept


def test_compressed_relay_logs_refused_without_a_plan_then_planned_after_xz_dk(tmp_path):
    """The committed fixture copied as it is (relay logs .xz): refused, exit 2, the reason only
    (no half plan on stdout); after the advice as given (`xz -dk`, which keeps the .xz beside
    each plain file) the plain files are planned and repaired, the .xz copies named and left
    alone; the plan is the one of the materialized set."""
    d = tmp_path / "relay"
    shutil.copytree(store.SETS_DIR / "crash-torn-position" / "relay", d)
    res = CliRunner().invoke(main, ["recover", str(d)])
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and "refused: relay logs stored compressed" in res.stderr
    assert "last complete" not in res.stderr and "next source" not in res.stderr
    for f in sorted(d.glob("*.xz")):
        subprocess.run(["xz", "-dk", str(f)], check=True)
    res = CliRunner().invoke(main, ["recover", "--json", str(d)])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    want = plan_recovery(store.materialize("crash-torn-position") / "relay").to_json()
    assert (doc["next_source"], doc["truncate"], doc["remove"]) == (want["next_source"], want["truncate"], want["remove"])
    assert any("relay-bin.000004.xz, relay-bin.000005.xz: compressed copies" in w for w in doc["warnings"])
    res = CliRunner().invoke(main, ["recover", "--apply", str(d), "--backup-dir", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    assert plan_recovery(d).nothing_to_do
    assert sorted(p.name for p in d.glob("*.xz")) == ["relay-bin.000004.xz", "relay-bin.000005.xz"]


def test_a_binlog_folder_is_named_with_the_option_it_needs(tmp_path):
    d = tmp_path / "binlogs"
    shutil.copytree(store.materialize("replication-gtid") / "primary", d)
    res = CliRunner().invoke(main, ["recover", str(d)])
    assert res.exit_code == 2
    assert "is a binlog folder (mariadb-bin.index)" in res.output and "--former-primary" in res.output
    assert "--binlog" in res.output


@pytest.mark.parametrize("name,step", [("crash-rotation-small-position", "START SLAVE; the IO thread asks the primary "
                                                                          "for mariadb-bin.000002:49994"),
                                       ("crash-partial-gtid", "START SLAVE; (MASTER_USE_GTID) the replica asks the "
                                                              "primary by GTID, fetching 0-1-307 again whole")])
def test_mariadb_next_steps_after_apply(name, step, tmp_path):
    """MariaDB replicas get what to run after the repair, for their mode (MySQL's are its
    mysql_answer): shown by the dry run and by --apply, which prints the plan it carries out."""
    d = relay_copy(name, tmp_path)
    for args in (["recover", str(d)], ["recover", "--apply", "--backup-dir", str(tmp_path / "b"), str(d)]):
        res = CliRunner().invoke(main, args)
        assert "MariaDB, after recover --apply: start the server with relay_log_recovery=OFF" in res.stdout
        assert step in res.stdout
    assert res.exit_code == 0, res.output

"""compare and recover --binlog on the committed fixtures."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from binlogkit.api import expand_paths
from binlogkit.cli import main
from binlogkit.compare import compare
from binlogkit.recover import apply_plan
from binlogkit.recover.primary import plan_binlog_recovery
from fixtures import store


def test_compare_in_sync_and_with_a_tail():
    d = store.materialize("replication-gtid")
    res = compare(expand_paths([d / "primary"]), [expand_paths([d / "replica-relay"])])
    assert res["unacknowledged"] == [] and res["replicas"][0]["errant"] == []
    assert res["last_common"] == "0-1-3014"
    crash = store.materialize("crash-torn-gtid")
    res = compare(expand_paths([crash / "primary"]), [expand_paths([crash / "relay"])])
    truth = store.manifest("crash-torn-gtid")["truth"]
    assert res["last_common"] == truth["last_complete_transaction"]["gtid"]
    assert res["unacknowledged"][0]["gtid"] == truth["partial_transaction"]["gtid"]
    assert CliRunner().invoke(main, ["compare", str(crash / "primary"), str(crash / "relay")]).exit_code == 1


def test_recover_binlog_keep_through(tmp_path):
    d = tmp_path / "primary"
    shutil.copytree(store.materialize("replication-gtid") / "primary", d)
    trx = store.manifest("replication-gtid")["primary"]["transactions"]
    keep = trx[1500]
    first_cut = trx[1501]
    plan = plan_binlog_recovery(d, keep_through=keep["gtid"])
    assert plan.truncate == [{"file": first_cut["file"], "size": plan.truncate[0]["size"],
                              "new_size": first_cut["start"], "reason": "not held by the replica"}]
    later = sorted({t["file"] for t in trx if t["file"] > first_cut["file"]})
    assert [r["file"] for r in plan.remove] == later
    assert plan.index[-1].endswith(first_cut["file"])
    assert plan.retrieved_gtids == keep["gtid"]
    apply_plan(plan, backup_dir=tmp_path / "b", check_processes=False)
    again = plan_binlog_recovery(d, keep_through=keep["gtid"])
    assert again.nothing_to_do


def test_compare_prints_gtid_sets_as_ranges_and_says_when_nothing_is_shared(tmp_path):
    """Thousands of errant GTIDs are one short range, not one GTID after the other; a replica
    that shares nothing with the primary is said so, not "None"."""
    from fixtures.built_mysql import BinlogBuilder

    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    b = BinlogBuilder(server_id=7)
    for n in [*range(1, 2001), *range(2003, 2011)]:
        b.transaction(f"{u}:{n}")
    other = b.write(tmp_path / "binlog.000001")
    primary = store.materialize("replication-gtid") / "primary"
    r = CliRunner().invoke(main, ["compare", str(primary), str(other)])
    assert r.exit_code == 1
    lines = r.output.splitlines()
    assert "last transaction every side has: none in common" in r.output and "None" not in r.output
    [rep] = [line for line in lines if line.startswith("replica ")]
    assert f"errant: {u}:1-2000:2003-2010 (2008)" in rep
    assert "on the primary only (un-acknowledged): 0-1-1..3014 (3014, from mariadb-bin.000001@" in r.output
    assert max(len(line) for line in lines) < 200
    res = compare(expand_paths([primary]), [[other]])
    assert res["last_common"] is None and res["replicas"][0]["errant_count"] == 2008
    # a replica that lacks two of the primary's files in the middle: what it misses, as one range
    trx = store.manifest("replication-gtid")["primary"]["transactions"]
    gone = [t["gtid"] for t in trx if t["file"] in ("mariadb-bin.000003", "mariadb-bin.000004")]
    part = [p for p in expand_paths([primary]) if p.name not in ("mariadb-bin.000003", "mariadb-bin.000004")]
    res = compare(expand_paths([primary]), [part])
    assert res["replicas"][0]["missing_count"] == len(gone)
    assert res["replicas"][0]["missing_ranges"] == f"{gone[0]}..{gone[-1].rsplit('-', 1)[1]}"


def test_ranges_text_is_canonical():
    from binlogkit.gtid import ranges_text

    assert ranges_text(["0-1-5", "0-1-3", "0-1-4", "1-2-9", "0-2-1"]) == "0-1-3..5,0-2-1,1-2-9"
    assert ranges_text([]) == ""
    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    assert ranges_text([f"{u}:4", f"{u}:3", "0-1-1"]) == f"{u}:3-4,0-1-1"


def test_recover_binlog_replica_is_a_pull_folder(tmp_path):
    """``--replica`` given a folder of binlogs and their index (``binlogkit pull``'s, the
    acknowledging member of a semisync primary): the primary is kept through what its complete
    transactions hold (a torn transaction at its end, as a kill leaves it, is not held)."""
    src = store.materialize("replication-gtid") / "primary"
    d = tmp_path / "primary"
    shutil.copytree(src, d)
    trx = store.manifest("replication-gtid")["primary"]["transactions"]
    keep, first_cut = trx[1500], trx[1501]
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    names = sorted({t["file"] for t in trx if t["file"] <= first_cut["file"]})
    for n in names[:-1]:
        shutil.copy(src / n, pulled / n)
    (pulled / names[-1]).write_bytes((src / names[-1]).read_bytes()[:first_cut["start"] + 100])
    (pulled / "mariadb-bin.index").write_text("".join(f"./{n}\n" for n in names))
    plan = plan_binlog_recovery(d, replica=pulled)
    assert plan.warnings == [f"the replica holds {keep['gtid']}"]
    assert [(t["file"], t["new_size"]) for t in plan.truncate] == [(first_cut["file"], first_cut["start"])]
    assert plan.retrieved_gtids == keep["gtid"]
    out = CliRunner().invoke(main, ["recover", "--binlog", str(d), "--replica", str(pulled)])
    assert out.exit_code == 1 and f"cut trx         : {first_cut['gtid']} at" in out.output, out.output


def test_recover_binlog_replica_relay_logs_purged_mysql(tmp_path):
    """A MySQL replica whose applied relay logs were purged (relay_log_purge, the default): its
    remaining relay log starts with Previous_gtids (what it retrieved before) and holds only the
    last transactions. What it holds is both: the primary is cut after them, never at its first
    transaction."""
    from fixtures.built_mysql import BinlogBuilder

    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    primary, relay = tmp_path / "primary", tmp_path / "replica"
    primary.mkdir()
    relay.mkdir()
    b = BinlogBuilder(server_id=1)
    b.previous_gtids("")
    starts = {n: b.transaction(f"{u}:{n}") for n in range(1, 11)}
    b.write(primary / "binlog.000001")
    (primary / "binlog.index").write_text("./binlog.000001\n")
    r = BinlogBuilder(server_id=2, relay=True)
    r.previous_gtids(f"{u}:1-6")
    for n in (7, 8):
        r.transaction(f"{u}:{n}")
    r.write(relay / "relay-bin.000005")
    (relay / "relay-bin.index").write_text("./relay-bin.000005\n")
    plan = plan_binlog_recovery(primary, replica=relay)
    assert plan.warnings == [f"the replica holds {u}:1-8"]
    assert [(t["file"], t["new_size"]) for t in plan.truncate] == [("binlog.000001", starts[9])]
    assert plan.retrieved_gtids == f"{u}:1-8"

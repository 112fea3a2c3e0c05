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

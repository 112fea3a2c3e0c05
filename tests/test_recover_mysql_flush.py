"""recover on a MySQL 9.7 relay log begun by FLUSH RELAY LOGS (found by ``make soak
KIND=mysql-9.7``): the file opens with the replica's own Format_description and Previous_gtids
(flag RELAY_LOG; Previous_gtids' end_log_pos is a relay offset) and the source's
Format_description, with no Rotate from the source. Ground truth: fixtures/mysql-9.7/
flush-relay-logs, the relay logs of a real replica killed -9 inside a transaction; the
partial transaction's source offset is where the primary's own binlog has that GTID."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from binlogkit.positions import WRAP
from binlogkit.recover import apply_plan, plan_recovery

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mysql-9.7" / "flush-relay-logs"


def test_the_replicas_own_events_do_not_move_the_source_position(tmp_path):
    d = tmp_path / "relay"
    shutil.copytree(FIX / "relay", d)
    p = json.loads((FIX / "manifest.json").read_text())["partial_transaction"]
    plan = plan_recovery(d)
    assert plan.partial_transaction["gtid"] == p["gtid"]
    assert (plan.partial_transaction["file"], plan.partial_transaction["offset"]) == (p["relay_file"], p["relay_start"])
    # before the fix: binlog.000001:4294986451 (19155 + 2**32) and a "past 4 GiB" warning
    assert plan.next_source == {"file": p["source_file"], "position": p["source_start"]} and p["source_start"] < WRAP
    assert not any("4 GiB" in w for w in plan.warnings)
    assert f"SOURCE_LOG_POS={p['source_start']}" in plan.mysql["file_position_statement"]
    apply_plan(plan)
    assert (d / p["relay_file"]).stat().st_size == p["relay_start"]
    assert plan_recovery(d).nothing_to_do


def test_only_the_crash_safe_index_left(tmp_path):
    """fixtures/mysql-9.7/crash-safe-index: killed while the index was being replaced (only
    relay-bin.index_crash_safe on disk); recover refused it before ("found none")."""
    src = FIX.parent / "crash-safe-index"
    d = tmp_path / "relay"
    shutil.copytree(src / "relay", d)
    m = json.loads((src / "manifest.json").read_text())
    assert not (d / "relay-bin.index").exists()
    plan = plan_recovery(d)
    assert plan.relay_index == "relay-bin.index"
    assert any("relay-bin.index_crash_safe" in w for w in plan.warnings)
    assert plan.partial_transaction is None and plan.truncate == []
    assert plan.next_source is not None and plan.next_source["file"] == "binlog.000001"
    apply_plan(plan)
    # MySQL renames the crash-safe list into place at startup: it is left as it was
    assert (d / "relay-bin.index_crash_safe").read_text().split() == m["index_crash_safe"]
    assert plan_recovery(d).nothing_to_do

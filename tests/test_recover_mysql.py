"""recover on MySQL 8.0.23+, whose connection and applier metadata live in tables (no info files).

Ground truth: fixtures/mysql-9.7/crash-partial-{gtid,position} — relay logs of real MySQL 9.7.4
replicas killed -9 with part of a transaction received; each manifest holds what the server
itself did on restart (its relay log sanitizer's cut, Read_Source_Log_Pos, Retrieved_Gtid_Set)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.recover import apply_plan, plan_recovery

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mysql-9.7"
SETS = ["crash-partial-gtid", "crash-partial-position"]


def copy(tmp_path: Path, name: str) -> tuple[Path, dict]:
    d = tmp_path / name
    shutil.copytree(FIX / name / "relay", d)
    return d, json.loads((FIX / name / "manifest.json").read_text())


@pytest.mark.parametrize("name", SETS)
def test_the_plan_is_what_mysql_itself_did(tmp_path, name):
    d, m = copy(tmp_path, name)
    plan = plan_recovery(d)
    p, after = m["partial_transaction"], m["server_after_restart"]
    assert plan.metadata == "tables" and plan.mode == "unknown" and plan.flavor == "mysql"
    assert plan.partial_transaction["gtid"] == p["gtid"]
    assert (plan.partial_transaction["file"], plan.partial_transaction["offset"]) == (p["relay_file"], p["relay_start"])
    # the cut = the one MySQL 9.7's relay log sanitizer made at startup
    assert plan.truncate == [{"file": p["relay_file"], "size": (d / p["relay_file"]).stat().st_size,
                              "new_size": after["relay-bin.000002_size"], "reason": "partial transaction"}]
    assert plan.next_source == {"file": p["source_file"], "position": after["Read_Source_Log_Pos"]}
    assert plan.retrieved_gtids == after["Retrieved_Gtid_Set"]
    # nothing refers to info files, and no SOURCE_LOG_POS statement for an auto-position replica
    assert plan.master_info is None and plan.relay_log_info is None and plan.change_source_sql is None
    assert plan.mysql["auto_position"] == "START REPLICA;"
    assert plan.mysql["partial_transaction"] == p["gtid"]


def test_the_file_position_statement(tmp_path):
    d, m = copy(tmp_path, "crash-partial-gtid")
    src = m["partial_transaction"]
    uuid = m["source_uuid"]
    # the replica committed everything complete (its gtid_executed at the kill): purging loses nothing
    plan = plan_recovery(d, applied_gtids=m["replica_gtid_executed_at_kill"])
    assert plan.mysql["all_applied"] and plan.mysql["applied_prefix"] == f"{uuid}:22"
    assert plan.mysql["file_position_statement"] == (
        f"CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='{src['source_file']}', SOURCE_LOG_POS={src['source_start']};")
    # the applier lagged (committed up to :21): the relay logs keep :22, RELAY_LOG_FILE/POS point after :21
    plan = plan_recovery(d, applied_gtids=f"{uuid}:1-21")
    stmt = plan.mysql["file_position_statement"]
    assert not plan.mysql["all_applied"] and plan.mysql["applied_prefix"] == f"{uuid}:21"
    assert stmt.startswith(f"CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='{src['source_file']}', "
                           f"SOURCE_LOG_POS={src['source_start']}, RELAY_LOG_FILE='relay-bin.000002', RELAY_LOG_POS=")
    pos = int(stmt.rsplit("=", 1)[1].rstrip(";"))
    assert 4 < pos < src["relay_start"]
    # nothing says how far the applier got: the values to read from SHOW REPLICA STATUS
    plan = plan_recovery(d)
    assert plan.mysql["applied_prefix"] is None
    assert plan.mysql["file_position_statement"].endswith(
        "RELAY_LOG_FILE='<Relay_Log_File>', RELAY_LOG_POS=<Relay_Log_Pos>;")


def test_apply_writes_no_info_file(tmp_path):
    d, m = copy(tmp_path, "crash-partial-gtid")
    before = sorted(p.name for p in d.iterdir())
    plan = plan_recovery(d)
    apply_plan(plan)
    assert sorted(p.name for p in d.iterdir()) == before  # no master.info / relay-log.info appears
    assert (d / "relay-bin.000002").stat().st_size == m["server_after_restart"]["relay-bin.000002_size"]
    again = plan_recovery(d)
    assert again.nothing_to_do and again.mysql["partial_transaction"] is None


def test_cli_answers_per_mode(tmp_path):
    d, m = copy(tmp_path, "crash-partial-gtid")
    run = CliRunner()
    out = run.invoke(main, ["recover", str(d)]).output
    assert "MySQL, SOURCE_AUTO_POSITION=1 (relay_log_recovery ON or OFF): run START REPLICA; nothing else." in out
    assert f"Retrieved_Gtid_Set is {m['server_after_restart']['Retrieved_Gtid_Set']}" in out
    assert "error 1776" in out and "MySQL, SOURCE_AUTO_POSITION=0" in out
    assert "run on the replica: CHANGE" not in out
    gtid = run.invoke(main, ["recover", "--mode", "gtid", str(d)]).output
    assert "SOURCE_AUTO_POSITION=1" in gtid and "SOURCE_AUTO_POSITION=0" not in gtid
    assert "STOP REPLICA; CHANGE" not in gtid
    pos = run.invoke(main, ["recover", "--mode", "position", str(d)]).output
    assert "SOURCE_AUTO_POSITION=1" not in pos and "STOP REPLICA; CHANGE REPLICATION SOURCE TO" in pos

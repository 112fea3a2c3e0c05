"""End to end with real servers: crash a replica with SIGKILL, repair its relay directory with
binlogkit, restart it with relay_log_recovery=0, and compare its data with the primary's. On
MariaDB 10.11 (the host's) and 11.8 (the lab's sid chroot); MySQL 9.7 keeps its replica metadata
in tables, its recovery is proven in test_recover_mysql*.py."""

from __future__ import annotations

import pytest

from fixtures.lab.build import crash_and_recover

pytestmark = pytest.mark.server


POINTS = [("torn", False), ("rotation-small", False), ("rotation", False), ("partial", True), ("torn", True)]
KINDS = [pytest.param(None, id="mariadb-10.11"),
         pytest.param("mariadb-11.8", id="mariadb-11.8", marks=pytest.mark.kind("mariadb-11.8"))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("point,gtid", POINTS)
def test_replica_resumes_with_nothing_lost_or_doubled(tmp_path, point, gtid, kind):
    r = crash_and_recover(tmp_path, point=point, gtid=gtid, kind=kind)
    assert r["outcome"] == "caught_up", r["status"]
    assert r["data_matches_primary"], r["tables"]
    assert r["error_log"] == []
    assert r["second_plan_nothing_to_do"]
    plan = r["plan"]
    assert plan["retrieved_gtids"] == r["truth"]["last_complete_transaction"]["gtid"]
    if gtid:  # where the partial transaction starts in the primary's binlog (no 4 GiB wrap on 11.8)
        want = r["truth"]["next_source_position_gtid_mode"]
        assert (plan["next_source"]["file"], plan["next_source"]["position"]) == (want["file"], want["pos"])
    if not gtid:
        # only what was missing is fetched again: the new relay log starts where the plan said
        assert r["first_source_requested"] == plan["next_source"]
    # the next steps the plan prints, as this run followed them (relay_log_recovery=0,
    # skip_slave_start, the check, START SLAVE)
    from binlogkit.recover.plan import Plan
    from binlogkit.recover.render import lines

    text = "\n".join(lines(Plan.from_json(plan)))
    assert "MariaDB, after recover --apply: start the server with relay_log_recovery=OFF" in text
    st = r["status_before_start"]
    if gtid:
        assert "START SLAVE; (MASTER_USE_GTID) the replica asks the primary by GTID" in text
    else:
        ns = f"{plan['next_source']['file']}:{plan['next_source']['position']}"
        assert f"Master_Log_File / Read_Master_Log_Pos {ns}" in text
        assert f"{st['Master_Log_File']}:{st['Read_Master_Log_Pos']}" == ns, st

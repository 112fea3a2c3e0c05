"""The failover's pure parts (``export.lake.failover``): a table's ``GtidFloor`` in the place of
its position, the mirror's state over the checkpoint and its tables, and the checks of a new
primary's GTID state (transactions the mirror holds that it lacks; transactions it purged that
the mirror lacks). Lab proof: tests/test_lake_follow_failover.py."""

from __future__ import annotations

from binlogkit.export.lake.failover import GtidFloor, at, check_primary, mirror_state, previous_source
from binlogkit.export.lake.props import order_key

A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
B = "4f22fa47-71ca-11e1-9e33-c80aa9429563"
WHERE = "127.0.0.1:3306 (server_id 2)"


def test_a_floor_orders_transactions_by_gtid_whatever_their_file():
    f = GtidFloor(f"{A}:1-20,{B}:1-3")
    held = at(order_key("binlog.000009", 500), f"{B}:3")
    new = at(order_key("binlog.000001", 4), f"{B}:4")
    old = at(order_key("binlog.000001", 4), f"{A}:7")
    assert held <= f and not held > f
    assert new > f and not new <= f
    assert old <= f
    assert at(order_key("binlog.000001", 4), None) > f      # no GTID: not held
    m = GtidFloor("0-1-20,1-2-7")
    assert at(("x",), "0-2-20") <= m and at(("x",), "0-2-21") > m and at(("x",), "2-1-1") > m


def test_the_mirror_state_joins_the_checkpoint_and_tables_past_it():
    assert mirror_state(f"{A}:1-20", [f"{A}:1-22", f"{A}:1-20,{B}:1", ""]) == f"{A}:1-22,{B}:1"
    assert mirror_state("0-1-20", ["0-1-25", "1-2-3", ""]) == "0-1-25,1-2-3"


def test_a_new_primary_behind_the_mirror_is_named():
    p = {"flavor": "mysql", "executed": f"{A}:1-18,{B}:1-5", "purged": "", "where": WHERE}
    bad = check_primary(f"{A}:1-20", p)
    assert bad["kind"] == "errant_on_mirror" and bad["gtids"] == f"{A}:19-20"
    assert check_primary(f"{A}:1-18", p) is None
    m = {"flavor": "mariadb", "executed": "0-1-18,0-2-30", "purged": "", "where": WHERE}
    bad = check_primary("0-1-20", m)
    assert bad["kind"] == "errant_on_mirror" and bad["gtids"] == "0-1-19..0-1-20"
    assert check_primary("0-1-18", m) is None and check_primary("0-2-29", m) is None
    assert check_primary("0-3-5", m)["gtids"] == "0-3-1..0-3-5"


def test_a_new_primary_that_purged_what_the_mirror_lacks_is_named():
    p = {"flavor": "mysql", "executed": f"{A}:1-30,{B}:1-5", "purged": f"{A}:1-25", "where": WHERE}
    bad = check_primary(f"{A}:1-20", p)
    assert bad["kind"] == "purged_on_primary" and bad["gtids"] == f"{A}:21-25"
    assert check_primary(f"{A}:1-25", p) is None


def test_the_previous_source_from_the_checkpoint_else_pulls_folder(tmp_path):
    assert previous_source({"source": 7}, None) == 7
    (tmp_path / ".binlogkit-pull.json").write_text('{"primary_server_id": 3, "base": "binlog"}')
    assert previous_source({"file": "binlog.000001"}, str(tmp_path)) == 3
    assert previous_source(None, str(tmp_path / "none")) is None

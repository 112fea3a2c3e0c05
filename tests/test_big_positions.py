"""Positions past 4 GiB (issue 22): relay logs holding a > 4 GiB transaction, built on the fly
(sparse: no disk to speak of), give exact 64-bit source positions, and recover's plan says
what a replica in each mode can do with them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from binlogkit.api import transactions
from binlogkit.positions import WRAP, SourceClock, reachable_by_dump
from binlogkit.recover import plan_recovery
from fixtures import bigrelay

CMD = [sys.executable, "-m", "binlogkit.cli"]


@given(start=st.integers(4, 1 << 40),
       steps=st.lists(st.tuples(st.integers(19, 1 << 30), st.integers(0, (1 << 32) - (1 << 30) - 1)), max_size=60))
@settings(max_examples=300, deadline=None)
def test_the_clock_unwraps_any_stream_with_gaps_under_4_gib(start, steps):
    """Whatever the sizes and the gaps (events the source did not send), the 64-bit end comes
    back from the 32-bit end_log_pos."""
    clock = SourceClock("f", start)
    pos = start
    for size, gap in steps:
        pos += gap + size
        assert clock.unwrap(pos % WRAP or WRAP, size) % WRAP == pos % WRAP
        assert clock.end == pos or pos % WRAP == 0


def test_artificial_events_do_not_move_the_clock():
    c = SourceClock("f", WRAP + 100)
    assert c.unwrap(0, 50) == 0 and c.end == WRAP + 100
    assert reachable_by_dump(WRAP - 1) and not reachable_by_dump(WRAP)


class _Built(dict):
    """Relay directories built on first use (each takes seconds: 4.2 GB of CRC32)."""

    def __init__(self, base: Path) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, key):
        cut, gtid = key
        d = self.base / f"{cut}-{'gtid' if gtid else 'pos'}"
        self[key] = (d, bigrelay.build(d, cut=cut, gtid=gtid))
        return self[key]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return _Built(tmp_path_factory.mktemp("big"))


def test_transactions_report_64_bit_source_positions(big):
    d, truth = big[("after_xid", False)]
    trx = list(transactions([d], relay=True))
    t = trx[-1]
    assert t.gtid == "0-1-2" and t.complete
    assert t.source_start == truth["big_start"]["source"]
    assert t.source_end == truth["big_end"]["source"] > WRAP
    assert t.source_end - t.source_start == t.bytes  # no contradiction between size and positions


@pytest.mark.parametrize("cut", ["inside", "after_xid"])
def test_position_mode_past_4_gib_is_exact_and_says_the_dump_cannot_reach_it(big, cut):
    d, truth = big[(cut, False)]
    plan = plan_recovery(d)
    want = truth["last_whole_event_source_end"] if cut == "inside" else truth["big_end"]["source"]
    assert plan.next_source == {"file": bigrelay.SOURCE, "position": want} and want > WRAP
    assert plan.master_info == plan.next_source
    assert plan.position_unreachable
    assert any("past 4 GiB" in w and "MASTER_USE_GTID=slave_pos" in w for w in plan.warnings)
    r = subprocess.run(CMD + ["recover", "--json", str(d)], capture_output=True, text=True)
    assert r.returncode == 1 and json.loads(r.stdout)["position_unreachable"] is True


def test_position_mode_after_the_sources_rotate_resumes_at_the_next_file(big):
    d, truth = big[("after_rotate", False)]
    plan = plan_recovery(d)
    assert plan.next_source == {"file": truth["next_file"], "position": 4}
    assert not plan.position_unreachable


@pytest.mark.parametrize("cut", ["inside", "after_xid"])
def test_gtid_mode_needs_no_file_position(big, cut):
    d, truth = big[(cut, True)]
    plan = plan_recovery(d)
    assert not plan.position_unreachable
    if cut == "inside":  # cut back to the start of the partial transaction: below 4 GiB
        assert plan.truncate[0]["new_size"] == truth["big_start"]["relay_offset"]
        assert plan.next_source["position"] == truth["big_start"]["source"]
        assert plan.retrieved_gtids == "0-1-1"
    else:
        assert plan.retrieved_gtids == "0-1-2"


def test_apply_past_4_gib_writes_the_exact_position_and_exits_1(big):
    d, truth = big[("after_xid", False)]
    r = subprocess.run(CMD + ["recover", "--apply", str(d)], capture_output=True, text=True)
    assert r.returncode == 1 and "cannot resume in file/position mode" in r.stderr, r.stderr
    lines = (d / "master.info").read_text().split("\n")
    assert (lines[1], int(lines[2])) == (bigrelay.SOURCE, truth["big_end"]["source"])
    again = subprocess.run(CMD + ["recover", str(d)], capture_output=True, text=True)
    assert again.returncode == 1 and "nothing to do" in again.stdout and "past 4 GiB" in again.stdout

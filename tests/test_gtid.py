"""GTID values: the algebra against a naive set-of-integers model, text round trips, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binlogkit.errors import BinlogError, GtidError
from binlogkit.gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet, order_violations

UUIDS = ["3e11fa47-71ca-11e1-9e33-c80aa9429562", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"]
TAGS = ["", "alpha", "b_2"]

gtid_items = st.tuples(st.sampled_from(UUIDS), st.sampled_from(TAGS), st.integers(1, 60))
naive_sets = st.frozensets(gtid_items, max_size=40)


def build(naive) -> MysqlGtidSet:
    return MysqlGtidSet.of(MysqlGtid(u, n, t) for u, t, n in naive)


def as_naive(s: MysqlGtidSet) -> frozenset:
    return frozenset((g.uuid, g.tag, g.gno) for g in s)


@settings(max_examples=300)
@given(naive_sets, naive_sets)
def test_algebra_matches_naive_model(a, b):
    A, B = build(a), build(b)
    assert as_naive(A | B) == a | b
    assert as_naive(A & B) == a & b
    assert as_naive(A - B) == a - b
    assert (A <= B) == (a <= b)
    assert len(A) == len(a) == A.count()
    for u, t, n in list(a)[:5]:
        assert MysqlGtid(u, n, t) in A
    assert (A == B) == (a == b)


@settings(max_examples=300)
@given(naive_sets)
def test_text_round_trip_and_canonical_form(a):
    A = build(a)
    text = str(A)
    assert MysqlGtidSet.parse(text) == A
    assert str(MysqlGtidSet.parse(text)) == text
    # SHOW REPLICA STATUS style: newlines after commas, upper-case uuids
    shown = text.replace(",", ",\n").upper()
    assert MysqlGtidSet.parse(shown) == A
    # intervals are kept merged and sorted
    for ivs in A.intervals().values():
        assert all(ivs[i][1] + 1 < ivs[i + 1][0] for i in range(len(ivs) - 1))


def test_tagged_and_untagged_never_collapse():
    s = MysqlGtidSet.parse(f"{UUIDS[0]}:1-3:alpha:1-3")
    assert len(s) == 6
    assert str(s) == f"{UUIDS[0]}:1-3:alpha:1-3"
    assert f"{UUIDS[0]}:alpha:2" in s and f"{UUIDS[0]}:2" in s
    assert f"{UUIDS[0]}:beta:2" not in s


@pytest.mark.parametrize("text,part", [
    ("nonsense:1", "nonsense"), (f"{UUIDS[0]}:0", "0"), (f"{UUIDS[0]}:5-3", "5-3"),
    (f"{UUIDS[0]}:1-x", "1-x"), (f"{UUIDS[0]}", UUIDS[0]), (f"{UUIDS[0]}:1,,{UUIDS[1]}:2", None),
    (f"{UUIDS[0]}:9tag:1", "9tag"),
])
def test_bad_text_names_the_part(text, part):
    with pytest.raises(GtidError) as info:
        MysqlGtidSet.parse(text)
    assert isinstance(info.value, BinlogError)
    if part is not None:
        assert info.value.part == part


def test_previous_gtids_binary_is_end_exclusive():
    s = MysqlGtidSet.from_previous_gtids([{"sid": UUIDS[0], "tag": "", "intervals": [[1, 7], [9, 10]]}])
    assert str(s) == f"{UUIDS[0]}:1-6:9"


# --- MariaDB ------------------------------------------------------------------------------------
mgtids = st.builds(MariadbGtid, st.integers(0, 3), st.integers(1, 3), st.integers(0, 50))


@given(st.lists(mgtids, max_size=20))
def test_position_round_trip_and_advance(gs):
    pos = GtidPos()
    for g in gs:
        pos = pos.advance(g)
        assert pos.get(g.domain_id) == g
    assert GtidPos.parse(str(pos)) == pos
    assert GtidPos.parse(str(pos).replace(",", ",\n ")) == pos
    assert len(pos) == len({g.domain_id for g in gs})


@given(st.lists(mgtids, max_size=30))
def test_order_violations_against_naive_rule(gs):
    bad = order_violations(gs)
    last, want = {}, []
    for g in gs:
        if g.domain_id in last and g.seq_no <= last[g.domain_id].seq_no:
            want.append((g, last[g.domain_id]))
        else:
            last[g.domain_id] = g
    assert bad == want


def test_gtid_list_keeps_highest_per_domain():
    pos = GtidPos.from_gtid_list(["0-1-5", "0-2-9", "1-1-3"])
    assert str(pos) == "0-2-9,1-1-3"
    assert pos.covers(MariadbGtid(0, 1, 9)) and not pos.covers(MariadbGtid(1, 1, 4))


@pytest.mark.parametrize("text", ["0-1", "a-1-2", "0-1-2-3", "0-1-99999999999999999999999", "0-1-5,0-2-6"])
def test_bad_mariadb_text(text):
    with pytest.raises(GtidError):
        GtidPos.parse(text)

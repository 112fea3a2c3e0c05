"""Audit on the lab's real archives and on copies with injected faults."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from click.testing import CliRunner

from binlogkit import BinlogError, open_binlog
from binlogkit.audit import file_summary, merge, run_local
from binlogkit.cli import main
from fixtures import store
from ring_sets import KINDS


def kinds(result, severity=None):
    return sorted({f["kind"] for f in result["findings"] if severity is None or f["severity"] == severity})


def primary_copy(tmp_path) -> Path:
    d = tmp_path / "primary"
    shutil.copytree(store.materialize("replication-gtid") / "primary", d)
    return d


@pytest.mark.parametrize("name", ["replication-gtid", "replication-position-semisync", "compressed-events"])
def test_clean_archives_have_no_findings(name):
    r = run_local([store.materialize(name)], jobs=2)
    assert r["findings"] == [] and r["counts"]["error"] == 0
    primary = [s for n, s in r["summary"].items() if n.endswith("primary/mariadb-bin")][0]
    assert primary["gtids_covered"] == store.manifest(name)["primary"]["master_status"]["gtid_binlog_pos"]


@pytest.mark.parametrize("kind", KINDS)
def test_ring_duplicates_exactly_where_the_manifest_says(ring_set, kind):
    m, off = ring_set("ring-duplicates-off", kind)
    r = run_local([off], jobs=2)
    errors = [f for f in r["findings"] if f["severity"] == "error"]
    assert {f["kind"] for f in errors} == {"duplicate_gtid"}
    assert sorted(f["gtids"][0] for f in errors) == sorted(m["C_binlog_duplicate_gtids"])
    assert all("/C/binlog/" in f["file"] for f in errors)
    assert errors and m["C_binlog_duplicate_gtids"]  # gtid_ignore_duplicates=OFF: C logged some twice
    m_on, on_dir = ring_set("ring-duplicates-on", kind)
    on = run_local([on_dir], jobs=2)
    assert on["counts"]["error"] == 0
    # both connections received A's transactions: the second copy is flagged, never an error
    warned = {f["gtids"][0] for f in on["findings"] if f["kind"] == "duplicate_gtid"}
    assert warned == set(m_on["C_relay_gtids"]["a"]) & set(m_on["C_relay_gtids"]["b"]) != set()


@pytest.mark.parametrize("name", [s for s in store.set_names() if s.startswith("crash-")])
def test_crash_snapshots(name):
    truth = store.manifest(name)["truth"]
    r = run_local([store.materialize(name) / "relay"], jobs=1, live=True)
    assert r["counts"]["error"] == 0
    f = {x["kind"]: x for x in r["findings"]}
    assert f["partial_transaction"]["gtids"] == [truth["partial_transaction"]["gtid"]]
    assert f["partial_transaction"]["offset"] == truth["partial_transaction"]["start_offset"]
    src = f["partial_transaction"]["source"]
    assert src["position"] == truth["partial_transaction"]["source_start"]
    assert src["file"] in (None, truth["partial_transaction"]["source_file"])  # None: its Rotate was purged
    if truth["torn"]:
        assert f["torn_event"]["offset"] == truth["torn"][0]["offset"] and f["torn_event"]["severity"] == "warning"
    if truth["dangling_rotate"]:
        assert f["missing_file"]["offset"] == truth["dangling_rotate"]["offset"]


def test_deleted_middle_file(tmp_path):
    d = primary_copy(tmp_path)
    (d / "mariadb-bin.000005").unlink()
    r = run_local([d], jobs=2)
    assert kinds(r, "error") == ["gtid_gap", "missing_file", "rotate_mismatch"]
    gap = next(f for f in r["findings"] if f["kind"] == "gtid_gap")
    lost = [t["gtid"] for t in store.manifest("replication-gtid")["primary"]["transactions"]
            if t["file"] == "mariadb-bin.000005"]
    assert gap["detail"].startswith(f"domain 0: seq_no {lost[0].split('-')[2]}..{lost[-1].split('-')[2]} missing")


def test_flipped_byte_and_cut_file(tmp_path):
    d = primary_copy(tmp_path)
    events = list(open_binlog(str(d / "mariadb-bin.000003")))
    victim = events[100]
    raw = bytearray((d / "mariadb-bin.000003").read_bytes())
    raw[victim.offset + 21] ^= 0xFF
    (d / "mariadb-bin.000003").write_bytes(bytes(raw))
    cut = list(open_binlog(str(d / "mariadb-bin.000006")))[50]
    with open(d / "mariadb-bin.000006", "r+b") as fh:
        fh.truncate(cut.offset + 10)
    r = run_local([d], jobs=2)
    errs = {(f["kind"], Path(f["file"]).name if f["file"] else None, f["offset"]) for f in r["findings"]
            if f["severity"] == "error"}
    assert ("checksum_mismatch", "mariadb-bin.000003", victim.offset) in errs
    assert ("torn_event", "mariadb-bin.000006", cut.offset) in errs
    assert "partial_transaction" in kinds(r, "error") and "gtid_gap" in kinds(r, "error")


def test_engines_agree_and_manifests_are_json(tmp_path):
    src = store.materialize("ring-duplicates-off")
    a = run_local([src], jobs=1)
    b = run_local([src], jobs=2)
    assert a["findings"] == b["findings"]
    m = file_summary(next((src / "C" / "binlog").glob("mariadb-bin.0*")))
    assert json.loads(json.dumps(m)) == m
    assert merge([m])["files"] == 1


def test_cli_exit_codes_and_output(tmp_path):
    runner = CliRunner()
    clean = runner.invoke(main, ["audit", str(store.materialize("replication-gtid") / "primary")])
    assert clean.exit_code == 0 and "0 errors" in clean.output
    bad = runner.invoke(main, ["audit", "--json", "--output", str(tmp_path / "out"),
                               str(store.materialize("ring-duplicates-off"))])
    assert bad.exit_code == 1
    doc = json.loads(bad.output)
    assert doc["counts"]["error"] == 6
    assert json.loads((tmp_path / "out" / "findings.json").read_text()) == doc["findings"]
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(tmp_path / "out" / "findings.parquet").num_rows == len(doc["findings"])
    assert runner.invoke(main, ["audit", "/nonexistent"]).exit_code == 2


@pytest.mark.parametrize("seed", [7, 11, 23])
def test_generated_archive_faults_are_all_found_and_nothing_else(tmp_path, seed):
    """The fault-injecting generator: recall = precision = 100 % (local engine)."""
    from fixtures.faults import generate

    m = generate(tmp_path / "arch", files=10, trx_per_file=120, seed=seed)
    r = run_local([tmp_path / "arch"], jobs=2)
    got = {(f["kind"], f["severity"], f["file"] and Path(f["file"]).name, f["offset"]) for f in r["findings"]}
    want = {(e["kind"], e["severity"], e["file"], e["offset"]) for e in m["expected"]}
    assert got == want
    assert {e["fault"] for e in m["expected"]} == {"delete_file", "cut_transaction", "drop_gtids", "duplicate_gtid",
                                                   "incident", "flip_byte", "rotate_missing"}


def test_generated_archive_without_faults_is_clean(tmp_path):
    from fixtures.faults import generate

    generate(tmp_path / "arch", files=5, trx_per_file=80, faults=())
    r = run_local([tmp_path / "arch"], jobs=2)
    assert r["findings"] == []
    (s,) = r["summary"].values()
    assert s["gtids_covered"] == "0-1-400" and s["files"] == 5


@pytest.mark.parametrize("name", ["crash-torn-gtid", "crash-torn-position"])
def test_torn_tail_fails_closed_unless_live(tmp_path, name):
    """A torn tail on a series' last file may be a live server's: said so, exit 1 by default,
    a warning (exit 0) with --live / --may-be-active."""
    relay = store.materialize(name) / "relay"
    last = sorted(relay.glob("relay-bin.0*"))[-1]
    runner = CliRunner()
    closed = runner.invoke(main, ["audit", "--json", str(last)])
    assert closed.exit_code == 1
    torn = [f for f in json.loads(closed.output)["findings"] if f["kind"] == "torn_event"]
    assert len(torn) == 1 and torn[0]["severity"] == "error" and "live server" in torn[0]["detail"]
    assert "--live" in torn[0]["detail"]
    for flag in ("--live", "--may-be-active"):
        live = runner.invoke(main, ["audit", "--json", flag, str(last)])
        assert live.exit_code == 0, live.output
        torn = [f for f in json.loads(live.output)["findings"] if f["kind"] == "torn_event"]
        assert torn[0]["severity"] == "warning"
    # a torn event in a file that is not the last of its series is lost data whatever --live says
    r = run_local([relay], jobs=1, live=True)
    assert [f["severity"] for f in r["findings"] if f["kind"] == "torn_event"] == ["warning"]


def test_cut_single_binlog_exits_1(tmp_path):
    d = primary_copy(tmp_path)
    f = d / "mariadb-bin.000002"
    cut = list(open_binlog(str(f)))[20]
    with open(f, "r+b") as fh:
        fh.truncate(cut.offset + 7)
    res = CliRunner().invoke(main, ["audit", str(f)])
    assert res.exit_code == 1 and "torn_event" in res.output and f"mariadb-bin.000002@{cut.offset}" in res.output


def test_missing_file_place_is_named(tmp_path):
    d = primary_copy(tmp_path)
    (d / "mariadb-bin.000005").unlink()
    res = CliRunner().invoke(main, ["audit", str(d)])
    assert res.exit_code == 1
    assert "None@None" not in res.output and "None" not in res.output.split("GTIDs covered", 1)[1]
    line = next(ln for ln in res.output.splitlines() if ln.startswith("error    missing_file"))
    assert "mariadb-bin.000005 missing, between .000004 and .000006" in line


def test_summary_size_does_not_grow_with_transactions(tmp_path):
    from fixtures.faults import generate

    sizes = []
    for n in (50, 500, 2000):
        generate(tmp_path / str(n), files=3, trx_per_file=n, faults=())
        s = file_summary(tmp_path / str(n) / "mariadb-bin.000002")
        assert s["transactions"] == n and s["maria"]["all"] == {"0-1": [[n + 1, 2 * n]]}
        sizes.append(len(json.dumps(s)))
    assert max(sizes) - min(sizes) < 40  # only the digits of the numbers differ


def test_summary_transactions_agree_with_grouper(tmp_path):
    """The per-file pass finds the same transactions (start, GTID, completeness) as
    ``transactions.Grouper`` on every lab file and on generated files with every fault."""
    from binlogkit.audit.engine import audit_paths
    from binlogkit.reading.files import open_input
    from binlogkit.transactions import Grouper
    from fixtures.faults import generate

    generate(tmp_path / "gen", files=10, trx_per_file=60, seed=3)
    files = audit_paths([store.materialize(n) for n in store.set_names()] + [tmp_path / "gen"])
    assert len(files) > 60
    damaged = []
    for f in files:
        seen = []
        file_summary(f, observe=lambda gtid, kind, offset, complete: seen.append((gtid, kind, offset, complete)))
        g, want = Grouper(), []
        try:
            with open_input(f) as fh:
                for t in g.feed_file(f, fh, verify=False):
                    want.append((t.gtid, t.kind, t.start_offset, t.complete))
        except BinlogError:
            damaged.append(f)
        want += [(t.gtid, t.kind, t.start_offset, t.complete) for t in g.finish()]
        assert seen == want, f
    assert any("crash-torn" in f for f in damaged)


def test_what_is_shown_stays_bounded_when_one_series_is_huge(tmp_path):
    """A MySQL series with 1,500 holes (every other gno missing): each hole is a gtid_gap finding,
    the series' GTID set text is cut at an interval boundary (ending in "...", so it never parses
    as a smaller set) and its intervals counted; --max-findings / --max-series keep what is shown
    bounded while the counts cover everything, and --output still writes every finding."""
    from binlogkit.audit.merge import COVERED_MAX
    from binlogkit.gtid import MysqlGtidSet
    from fixtures.built_mysql import BinlogBuilder

    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    for k in range(3):  # three servers, one series each
        d = tmp_path / "arch" / f"s{k}"
        d.mkdir(parents=True)
        b = BinlogBuilder(server_id=k + 1)
        b.previous_gtids(MysqlGtidSet.parse(f"{u}:1"))
        for n in range(3, 3002, 2) if k == 0 else range(2, 12):
            b.transaction(f"{u}:{n}")
        b.write(d / "binlog.000001")
    full = run_local([tmp_path / "arch"], jobs=1)
    huge = full["summary"][str(tmp_path / "arch" / "s0" / "binlog")]
    assert huge["gtid_intervals"] == 1501 and full["counts"]["error"] == 1500 == len(full["findings"])
    text = huge["gtids_covered"]
    assert len(text) <= COVERED_MAX + 4 and text.endswith(":...")
    shown = MysqlGtidSet.parse(text[:-4])
    assert len(shown.intervals()[(u, "")]) < 1501 and list(shown.intervals()[(u, "")][:3]) == [(1, 1), (3, 3), (5, 5)]
    small = full["summary"][str(tmp_path / "arch" / "s1" / "binlog")]
    assert small["gtids_covered"] == f"{u}:1-11" and small["gtid_intervals"] == 1
    assert full["series"] == 3 and full["series_omitted"] == 0 and full["findings_omitted"] == 0

    res = CliRunner().invoke(main, ["audit", "--json", "--max-findings", "7", "--max-series", "1",
                                    "--output", str(tmp_path / "out"), str(tmp_path / "arch")])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    assert doc["findings"] == full["findings"][:7] and doc["findings_omitted"] == 1493
    assert list(doc["summary"]) == [str(tmp_path / "arch" / "s0" / "binlog")] and doc["series_omitted"] == 2
    assert doc["counts"] == full["counts"] and doc["series"] == 3
    assert len(json.loads((tmp_path / "out" / "findings.json").read_text())) == 1500
    assert run_local([tmp_path / "arch"], jobs=2, max_findings=7, max_series=1) == doc
    text = CliRunner().invoke(main, ["audit", "--max-series", "2", str(tmp_path / "arch")]).output
    assert "... and 1 more series" in text and "more (--json" not in text  # every finding shown
    assert sum(1 for line in text.splitlines() if line.startswith("error    gtid_gap")) == 1500
    # the GTID set is wrapped, never cut: its lines joined give the whole text
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("s0/binlog"))
    pieces = [lines[i].split(None, 3)[3]]
    pieces += [line.strip() for line in lines[i + 1:] if line.startswith(" ")]
    note = " (1,501 intervals in all; each hole is a gtid_gap finding)"  # the record's cut said
    assert "".join(pieces).replace(" ", "") == (huge["gtids_covered"] + note).replace(" ", "")
    assert max(len(p) for p in pieces) <= 60 and huge["gtids_covered"].endswith("...")
    limited = CliRunner().invoke(main, ["audit", "--max-findings", "5", str(tmp_path / "arch")]).output
    assert "... and 1,495 more (--json or --output for all)" in limited
    every = CliRunner().invoke(main, ["audit", "--max-findings", "0", "--json", str(tmp_path / "arch")]).output
    assert json.loads(every)["findings"] == full["findings"]  # 0: all


def test_output_is_written_safely(tmp_path):
    """--output replaces its files atomically through safeio: a link planted under one of their
    names is refused, never written through; what was there before a refusal is untouched."""
    arch = primary_copy(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (out / "summary.json").symlink_to(victim)
    res = CliRunner().invoke(main, ["audit", "--output", str(out), str(arch)])
    assert res.exit_code == 2 and "not a regular file" in res.output and victim.read_text() == "keep"
    assert not [p.name for p in out.iterdir() if ".binlogkit-" in p.name]  # no temporary left
    (out / "summary.json").unlink()
    res = CliRunner().invoke(main, ["audit", "--output", str(out), str(arch)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "summary.json").read_text())["counts"]["error"] == 0
    assert json.loads((out / "findings.json").read_text()) == []
    assert (out / "findings.json").stat().st_mode & 0o777 == 0o644


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab:, -1", max_size=300), st.integers(min_value=1, max_value=80))
def test_the_text_table_wraps_and_never_cuts(text, width):
    from binlogkit.audit.render import _GTIDS, wrap

    import re

    for breaks, lines in ((" ,", wrap(text, width)), (" ,:", wrap(text, width, _GTIDS))):
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # every character kept
        for line in lines:  # a line over the width is one piece that could not be broken
            assert len(line) <= width or not re.search(f"[{breaks}]", line.rstrip(breaks))

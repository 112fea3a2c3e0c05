"""The summary merge against the sequential rules it replaces.

The reference below is the audit's specification written the simple way: every transaction of
a series, in order, through one GTID state (``transactions.Grouper`` finds the transactions).
The audit itself never sees a transaction list: per-file summaries, interval algebra and, where
a file reaches back into the state before it, a scan of that file with the state as context.
Both must give the same findings — on hypothesis-made MariaDB series written as real binlogs
(several domains and servers, gaps, repeats, disorder, split into files) and on relay archives.
"""

from __future__ import annotations

import shutil
import zlib
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlogkit.audit import run_local
from binlogkit.audit.engine import audit_paths
from binlogkit.audit.summary import series_key
from binlogkit.errors import BinlogError
from binlogkit.reading.files import open_input
from binlogkit.gtid import MariadbGtid
from binlogkit.transactions import Grouper
from fixtures import store
from fixtures.faults import Writer, load_template

GTID_KINDS = {"duplicate_gtid", "out_of_order_gtid", "gtid_gap"}


def reference(paths) -> set[tuple]:
    """GTID findings of the archive by one sequential pass per series (the pre-summary merge)."""
    series: dict[tuple, list] = defaultdict(list)
    for f in audit_paths(paths):
        d, base, n = series_key(f)
        series[(d, base)].append((n, f))
    out = set()
    relay_first: dict[str, dict] = defaultdict(dict)
    per_series = {}
    for (d, base), files in sorted(series.items()):
        files.sort()
        name = f"{d}/{base}"
        trx, first_list, relay = [], None, False
        for _n, f in files:
            g = Grouper()
            try:
                with open_input(f) as fh:
                    for t in g.feed_file(f, fh, verify=False):
                        trx.append((f, t))
            except BinlogError:
                pass
            trx += [(f, t) for t in g.finish()]
            if first_list is None:
                first_list = g.files[0].gtid_list or []
            relay |= g.files[0].relay
        last = {}
        for x in map(MariadbGtid.parse, first_list):
            if x.domain_id not in last or x.seq_no > last[x.domain_id].seq_no:
                last[x.domain_id] = x
        seen = set()
        for f, t in trx:
            if t.kind != "mariadb":
                continue
            x = MariadbGtid.parse(t.gtid)
            prev = last.get(x.domain_id)
            if x in seen:
                out.add(("duplicate_gtid", f, t.start_offset, (t.gtid,)))
            elif prev is not None and x.seq_no <= prev.seq_no:
                out.add(("out_of_order_gtid", f, t.start_offset, (t.gtid, str(prev))))
            elif prev is not None and x.seq_no > prev.seq_no + 1:
                out.add(("gtid_gap", f, t.start_offset, (str(prev), t.gtid)))
            seen.add(x)
            if prev is None or x.seq_no > prev.seq_no:
                last[x.domain_id] = x
        per_series[name] = (d, relay, trx)
        if relay:
            for f, t in trx:
                if t.gtid and t.complete:
                    relay_first[d].setdefault(t.gtid, name)
    for name, (d, relay, trx) in sorted(per_series.items()):
        if relay:
            for f, t in trx:
                owner = relay_first[d].get(t.gtid) if t.gtid else None
                if owner and owner != name:
                    out.add(("duplicate_gtid", f, t.start_offset, (t.gtid,)))
    return out


def found(result) -> set[tuple]:
    return {(f["kind"], f["file"], f["offset"], tuple(f["gtids"])) for f in result["findings"]
            if f["kind"] in GTID_KINDS}


TEMPLATE = None


def write_series(folder: Path, files: list[list[tuple[int, int, int]]], gtid_list) -> None:
    """Real binlogs ``folder/mariadb-bin.000001..`` holding the given (domain, server, seq) GTIDs."""
    global TEMPLATE
    TEMPLATE = TEMPLATE or load_template()
    folder.mkdir(parents=True)
    for i, triples in enumerate(files, 1):
        w = Writer(TEMPLATE)
        w.start(gtid_list if i == 1 else [], f"mariadb-bin.{i:06d}")
        for k, (d, s, n) in enumerate(triples):
            at = w.transaction(k, n)
            size = int.from_bytes(w.buf[at + 9:at + 13], "little")
            ev = bytearray(w.buf[at:at + size])
            ev[5:9] = s.to_bytes(4, "little")
            ev[27:31] = d.to_bytes(4, "little")
            ev[-4:] = zlib.crc32(bytes(ev[:-4])).to_bytes(4, "little")
            w.buf[at:at + size] = ev
        w.rotate(f"mariadb-bin.{i + 1:06d}")
        (folder / f"mariadb-bin.{i:06d}").write_bytes(bytes(w.buf))


@st.composite
def series(draw):
    """GTID streams as servers and mistakes make them: mostly the next seq_no, with skips,
    repeats of earlier GTIDs, steps back, other domains and servers."""
    out, seen, cur = [], [], {0: 0, 1: 0}
    for _ in range(draw(st.integers(1, 40))):
        op = draw(st.sampled_from(["next"] * 6 + ["skip", "repeat", "back", "other_server"]))
        d = draw(st.sampled_from([0, 0, 0, 1]))
        if op == "repeat" and seen:
            g = draw(st.sampled_from(seen))
        elif op == "back" and cur[d] > 2:
            g = (d, 1, draw(st.integers(1, cur[d] - 1)))
        else:
            cur[d] += draw(st.integers(2, 4)) if op == "skip" else 1
            g = (d, 2 if op == "other_server" else 1, cur[d])
        out.append(g)
        seen.append(g)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(out) - 1)), max_size=4))))
    parts, prev = [], 0
    for c in cuts + [len(out)]:
        if c > prev:
            parts.append(out[prev:c])
            prev = c
    gtid_list = draw(st.sampled_from([[], [(0, 1, 0)], [(0, 1, 3)], [(0, 1, 2), (1, 1, 5)]]))
    return parts, gtid_list


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(series())
def test_summary_merge_equals_sequential_rules(tmp_path_factory, s):
    parts, gtid_list = s
    folder = tmp_path_factory.mktemp("series") / "binlog"
    write_series(folder, parts, gtid_list)
    want = reference([folder])
    assert found(run_local([folder], jobs=1)) == want


def test_relay_connections_and_repeated_files_equal_sequential_rules(tmp_path):
    """Three connections of one replica (one a copy of another), and a series whose files
    come twice: every GTID finding across connections and files, at the right offsets."""
    ring = tmp_path / "ring"
    shutil.copytree(store.materialize("ring-duplicates-on"), ring)
    relay = ring / "C" / "relay"
    for f in relay.glob("relay-bin-a.0*"):
        shutil.copy(f, relay / f.name.replace("-a.", "-c."))
    twice = tmp_path / "twice"
    twice.mkdir()
    src = sorted((store.materialize("replication-gtid") / "primary").glob("mariadb-bin.0*"))
    for i, f in enumerate(src + src[2:5]):
        shutil.copy(f, twice / f"mariadb-bin.{i + 1:06d}")
    for paths in ([ring], [twice]):
        want = reference(paths)
        assert len(want) > 100
        assert found(run_local(paths, jobs=2)) == want


@pytest.mark.parametrize("files", [10, 1000, 20_000])
def test_merge_work_grows_with_files_not_transactions(files):
    """Synthetic summaries (``bench/audit_archive.synthetic``): a clean series of N files merges
    into no finding, covering exactly the GTIDs of the files; the plan asks for no rescan."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from audit_archive import synthetic

    from binlogkit.audit.merge import merge_directory, plan_directory

    sums = synthetic(files, trx_per_file=50_000, series=1)
    assert plan_directory(sums) == {}
    findings, summary = merge_directory(sums)
    assert findings == []
    (s,) = summary.values()
    assert s["files"] == files and s["gtids_covered"] == f"0-1-{files * 50_000}"


_finding = st.fixed_dictionaries({
    "kind": st.sampled_from(["gtid_gap", "checksum_mismatch", "torn_event"]),
    "severity": st.sampled_from(["error", "warning", "info"]),
    "file": st.one_of(st.none(), st.sampled_from(["a/x.000001", "a/x.000002", "b/y.000001"])),
    "offset": st.one_of(st.none(), st.integers(4, 1 << 40)),
    "series": st.one_of(st.none(), st.sampled_from(["a/x", "b/y"])),
})


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(st.tuples(st.lists(_finding, max_size=12),
                                st.dictionaries(st.text("abcdef/", min_size=1, max_size=6), st.integers(), max_size=6)),
                      max_size=12),
       limit=st.one_of(st.none(), st.integers(0, 20)), max_series=st.one_of(st.none(), st.integers(0, 10)))
def test_bounded_results_keep_exactly_the_first(parts, limit, max_series):
    """merge.Results with limits (what the local parent keeps: at most twice the limits at a
    time) gives the first findings in report order and the first series by name — the same
    document as keeping everything and cutting at the end."""
    from binlogkit.audit.merge import combine, limit as cut

    parts = [([dict(f, tag=(i, j)) for j, f in enumerate(found)], summ) for i, (found, summ) in enumerate(parts)]
    full = combine(parts, files=3, bytes_=7)
    assert full["counts"]["error"] + full["counts"]["warning"] + full["counts"]["info"] == len(full["findings"])
    bounded = combine(parts, files=3, bytes_=7, limit=limit, max_series=max_series)
    assert bounded == cut(full, max_findings=limit, max_series=max_series)
    if limit is not None:
        assert len(bounded["findings"]) == min(limit, len(full["findings"]))

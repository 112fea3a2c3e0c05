"""A relay directory that holds a range of the source's binlog twice (issue 28, point 8).

The crash-rotation position sets (a file/position replica killed at a relay-log rotation) have
master.info behind their relay log; ``fixtures.restart`` adds the relay log that the replica's
restart at master.info's position writes (the source's real events, fetched a second time).
Audit (both engines' code path), transactions and recover must name that range; no fixture set
and no corpus relay log may give one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.api import transactions
from binlogkit.audit import run_local
from binlogkit.spark.jobs import audit as job
from binlogkit.audit.merge import by_directory, merge
from binlogkit.audit.summary import file_summary
from binlogkit.cli import main
from binlogkit.recover.plan import plan_recovery
from fixtures import restart, store

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.fixture(scope="module", params=restart.SETS)
def restarted(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("restart") / request.param
    return d, restart.build(request.param, d)


def _dups(result: dict) -> list[dict]:
    return [f for f in result["findings"] if f["kind"] == "duplicated_range"]


def test_audit_names_the_range_held_twice(restarted):
    d, truth = restarted
    r = CliRunner().invoke(main, ["audit", "--json", str(d)])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    [f] = _dups(doc)
    assert f["severity"] == "error"
    assert f["source"] == {"file": truth["source_file"], "position": truth["start"]}
    assert f"{truth['source_file']}:{truth['start']}-{truth['end']}" in f["detail"]
    assert truth["first"] in f["detail"] and truth["again"] in f["detail"]
    assert (Path(f["file"]).name, f["offset"]) == (truth["again"], truth["again_rotate_offset"])
    # without the restarted relay log: the crash alone holds nothing twice
    (d / truth["again"]).rename(d.parent / f"{d.name}-aside")
    try:
        assert _dups(run_local([d], jobs=1)) == []
    finally:
        (d.parent / f"{d.name}-aside").rename(d / truth["again"])


def test_spark_job_functions_find_it_too(restarted):
    """The Spark job's executor functions (per-file pass, plan, rescan, per-directory merge),
    run here without a session: the same finding as the local engine."""
    d, truth = restarted
    files = sorted(str(p) for p in d.glob("relay-bin.0*"))
    summaries = [s for _d, s in job._summaries([(f, 0) for f in files])]
    # summaries stay compact: a few source runs per file, no per-event lists
    assert all(len(s["source_runs"]) <= 2 for s in summaries)
    assert len(json.dumps(summaries)) < 20_000
    found = []
    for directory, group in by_directory(summaries).items():
        again = [job._again(item)[1] for item in job._plan((directory, group))]
        found += job._merge(False)((directory, ([group], again)))[0]
    local = run_local([d], jobs=1)
    assert [f for f in found if f["kind"] == "duplicated_range"] == _dups(local)
    assert len(_dups(local)) == 1


def test_transactions_cut_at_the_restart_and_mark_the_repeat(restarted):
    d, truth = restarted
    got = list(transactions([d / "relay-bin.index"]))
    again = [t for t in got if Path(t.start_file).name == truth["again"]]
    before = [t for t in got if Path(t.start_file).name != truth["again"]]
    # the transaction open at the restart ends there, incomplete, in the old relay log
    assert not before[-1].complete and Path(before[-1].end_file).name == truth["first"]
    assert before[-1].source_end == truth["end"]
    assert all(t.repeats is None for t in before)
    marked = [t for t in again if t.repeats]
    assert marked and marked[0] is again[0]
    assert marked[0].repeats["start"] == truth["start"] and marked[-1].repeats["end"] == truth["end"]
    assert all(t.repeats["source_file"] == truth["source_file"] for t in marked)
    assert all(t.repeats is None for t in again[len(marked):])
    # no transaction spans the restart; the new stream's ones name the source file
    assert all(Path(t.start_file).name == Path(t.end_file).name or t in before for t in got)
    assert all(t.source_file == truth["source_file"] for t in again)
    r = CliRunner().invoke(main, ["transactions", str(d)])
    assert f"REPEATS {truth['source_file']}:{truth['start']}-" in r.output


def test_recover_names_it(restarted):
    d, truth = restarted
    plan = plan_recovery(d)
    hits = [w for w in plan.warnings if w.startswith("duplicated source range")]
    assert len(hits) == 1
    assert f"{truth['source_file']}:{truth['start']}-{truth['end']}" in hits[0]


def _relay_dirs() -> list[Path]:
    out = []
    for name in store.set_names():
        root = store.materialize(name)
        out += sorted({p.parent for p in root.rglob("*.0*") if p.is_file()})
    if CORPUS.is_dir():
        out += sorted({p.parent for p in CORPUS.rglob("*.0*") if p.is_file()})
    return out


def test_no_false_positive_on_any_fixture_set_or_corpus_folder():
    seen = 0
    for d in _relay_dirs():
        files = sorted(str(p) for p in d.iterdir() if p.is_file() and p.name.rsplit(".", 1)[-1].isdigit())
        summaries = [file_summary(f) for f in files]
        seen += sum(1 for s in summaries if s["source_runs"])
        assert _dups(merge(summaries)) == [], d
        if any(s["relay"] for s in summaries):
            for f in files:
                try:
                    assert all(t.repeats is None for t in transactions([f])), f
                except Exception as exc:  # a damaged corpus file: its own tests cover it
                    if not hasattr(exc, "offset"):
                        raise
    assert seen > 50  # relay logs were read, not skipped

"""The spark-submit job on a real local SparkSession: the same result as the local engine (the
merge runs on executors), every finding written as Parquet, the driver given only the first N.
The standalone-cluster run is tests/test_spark_cluster.py."""

from __future__ import annotations

import json
import shutil

import pytest

pyspark = pytest.importorskip("pyspark")

from binlogkit import open_binlog  # noqa: E402
from binlogkit.audit import run_local  # noqa: E402
from binlogkit.spark.jobs import audit as job  # noqa: E402
from fixtures import store  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    s = job.session("local[2]")
    yield s
    s.stop()


def test_spark_job_equals_local_engine(spark, tmp_path, capsys):
    archive = tmp_path / "archive"
    shutil.copytree(store.materialize("ring-duplicates-off"), archive / "ring")
    shutil.copytree(store.materialize("replication-gtid") / "primary", archive / "primary")
    victim = archive / "primary" / "mariadb-bin.000004"
    ev = list(open_binlog(str(victim)))[77]
    raw = bytearray(victim.read_bytes())
    raw[ev.offset + 20] ^= 0x11
    victim.write_bytes(bytes(raw))
    (archive / "primary" / "mariadb-bin.000009").unlink()
    rc = job.main(spark, [str(archive), "--output", str(tmp_path / "out"), "--json"])
    printed = json.loads(capsys.readouterr().out)
    local = run_local([archive], jobs=2)
    assert printed == local  # findings in the same order, per-series summaries, counts
    assert rc == 1
    kinds = {f["kind"] for f in local["findings"]}
    assert {"checksum_mismatch", "missing_file", "duplicate_gtid", "gtid_gap"} <= kinds
    import pyarrow.parquet as pq
    table = pq.read_table(tmp_path / "out" / "findings.parquet")
    assert table.num_rows == len(local["findings"])
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["counts"] == local["counts"]


def test_spark_job_finds_every_generated_fault(spark, tmp_path, capsys):
    from pathlib import Path

    from fixtures.faults import generate

    m = generate(tmp_path / "arch", files=8, trx_per_file=100, seed=5)
    job.main(spark, [str(tmp_path / "arch"), "--json"])
    printed = json.loads(capsys.readouterr().out)
    got = {(f["kind"], f["severity"], f["file"] and Path(f["file"]).name, f["offset"]) for f in printed["findings"]}
    assert got == {(e["kind"], e["severity"], e["file"], e["offset"]) for e in m["expected"]}


def test_driver_gets_the_first_n_and_parquet_has_all(spark, tmp_path, capsys):
    from fixtures.faults import generate

    generate(tmp_path / "arch", files=8, trx_per_file=60, seed=9)
    (tmp_path / "arch" / "second").mkdir()  # a second series, so that one can be left out
    shutil.copy(store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001",
                tmp_path / "arch" / "second")
    local = run_local([tmp_path / "arch"], jobs=1)
    assert local["series"] == 2
    rc = job.main(spark, [str(tmp_path / "arch"), "--json", "--max-findings", "3", "--max-series", "1",
                          "--output", str(tmp_path / "o")])
    printed = json.loads(capsys.readouterr().out)
    assert rc == 1 and printed == run_local([tmp_path / "arch"], jobs=2, max_findings=3, max_series=1)
    assert printed["findings"] == local["findings"][:3] and printed["series_omitted"] == 1
    assert printed["findings_omitted"] == len(local["findings"]) - 3 and printed["counts"] == local["counts"]
    import pyarrow.parquet as pq
    rows = pq.read_table(tmp_path / "o" / "findings.parquet").to_pylist()
    assert [(r["kind"], r["file"], r["offset"], r["place"]) for r in rows] == \
        [(f["kind"], f["file"], f["offset"], f["place"]) for f in local["findings"]]
    series = pq.read_table(tmp_path / "o" / "series.parquet").to_pylist()
    # every series, written by executors (the report's digests go to report.html, not to Parquet)
    assert {r.pop("series"): r for r in series} == {
        n: {k: v for k, v in s.items() if k not in ("timeline", "coverage")} for n, s in local["summary"].items()}
    page = (tmp_path / "o" / "report.html").read_text()  # the driver's HTML report (binlogkit/report)
    assert page.startswith("<!DOCTYPE html>") and page.count('data-kind="') >= 1
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["series"] == 2 and list(summary["summary"]) == list(local["summary"])[:1]
    job.main(spark, [str(tmp_path / "arch"), "--max-findings", "2"])
    text = capsys.readouterr().out
    assert "None@None" not in text and f"and {len(local['findings']) - 2:,} more" in text


def test_files_are_dealt_into_a_bounded_number_of_tasks_of_equal_work():
    sizes = [(f"f{i}", 10_000 - i * 7) for i in range(1000)]
    deal = job.deal_files(sizes, 64)
    assert len(deal) == 64 and sorted(x for d in deal for x in d) == sorted(sizes)
    work = [sum(s for _p, s in d) for d in deal]
    assert max(work) - min(work) <= 10_000  # at most one file's worth apart
    assert job.deal_files(sizes[:5], 64) == [[x] for x in sizes[:5]]  # few files: one task each


def test_spark_job_zero_means_all_and_finds_a_duplicated_source_range(spark, tmp_path, capsys):
    """--max-findings 0 / --max-series 0: every finding and series' record reaches the driver
    (as the local engine gives them); a relay directory holding a source range twice is named by
    the Spark job as by the local engine."""
    from fixtures import restart
    from fixtures.faults import generate

    truth = restart.build("crash-rotation-small-position", tmp_path / "arch" / "relay")
    generate(tmp_path / "arch" / "faulty", trx_per_file=20)
    rc = job.main(spark, [str(tmp_path / "arch"), "--json", "--max-findings", "0", "--max-series", "0"])
    printed = json.loads(capsys.readouterr().out)
    local = run_local([tmp_path / "arch"], jobs=1)
    assert rc == 1 and printed == local
    assert printed["findings_omitted"] == 0 and len(printed["findings"]) == sum(printed["counts"].values())
    [dup] = [f for f in printed["findings"] if f["kind"] == "duplicated_range"]
    assert dup["source"] == {"file": truth["source_file"], "position": truth["start"]}

"""The spark-submit export job splits big files into ranges of whole transactions, as the data
source does (``spark.files.split``; ``spark.ranges.InRange``: a range owns the transactions that
begin in it): its tasks, run as executors run them (``export_file``, in this process) and
through the job on Spark local[2], give the local export's rows, table by table, and its
counts (files, bytes, transactions, filtered out, rows per table), with and without filters.
Before, the job ran one task per file whatever its size."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from binlogkit.export import export  # noqa: E402
from binlogkit.export.changes import Filters  # noqa: E402
from binlogkit.spark.jobs import export as job  # noqa: E402
from fixtures import store  # noqa: E402

SPLIT = 8192   # the fixture files (30-120 KB) in several ranges each


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("arch")
    shutil.copytree(store.materialize("replication-gtid") / "primary", root / "lab")
    shutil.copytree(store.materialize("row-types-full-metadata") / "primary", root / "types")
    return sorted(str(p) for p in root.rglob("mariadb-bin.0*"))


def _rows(out: Path) -> dict:
    import pyarrow.dataset as ds

    got = {}
    for folder in sorted(out.glob("db=*/table=*")):
        rows = ds.dataset(str(folder), format="parquet", partitioning="hive").to_table().to_pylist()
        got[folder.relative_to(out).as_posix()] = sorted(rows, key=lambda r: (r["file"], r["offset"], r["row_index"]))
    return got


def _by_tasks(paths: list[str], out: Path, spec: dict) -> tuple[list, dict]:
    tasks = job.plan(paths, SPLIT)
    one = partial(job.export_file, output=str(out), spec=spec, row_group_rows=50_000)
    tables, _schemas, totals = job.merge([one((t.index, t)) for t in tasks])
    return tasks, {"tables": tables, **totals}


SAME = ("files", "bytes", "transactions", "filtered_out", "rolled_back", "xa_prepared")


@pytest.mark.parametrize("spec", [{}, {"gtids": "0-1-100"}, {"tables": ["types.*"]}],
                         ids=["all", "gtids", "tables"])
def test_ranges_give_the_local_exports_rows_and_counts(archive, tmp_path, spec):
    full = {"tables": [], "start": None, "stop": None, "gtids": None, "exclude_gtids": None, **spec}
    tasks, got = _by_tasks(archive, tmp_path / "job", full)
    ranged = [t for t in tasks if not t.whole()]
    assert len(ranged) > len({t.name for t in ranged}) > 3      # files really split, several ranges each
    assert [t.index for t in tasks] == list(range(len(tasks)))
    local = export(archive, str(tmp_path / "local"), filters=job._filters(full))
    assert {k: got[k] for k in SAME} == {k: local[k] for k in SAME}
    assert got["tables"] == local["tables"] and got["incomplete"] == [] and got["problems"] == []
    mine, theirs = _rows(tmp_path / "job"), _rows(tmp_path / "local")
    assert mine == theirs and sum(map(len, mine.values())) > 0


def test_a_whole_file_below_split_bytes_is_one_task(archive):
    tasks = job.plan(archive, 0)
    assert all(t.whole() for t in tasks) and sorted(t.name for t in tasks) == archive


def test_the_job_on_spark_with_ranges_equals_the_local_export(archive, tmp_path, capsys):
    pytest.importorskip("pyspark")
    from binlogkit.spark.jobs import audit

    spark = audit.session("local[2]")
    try:
        rc = job.main(spark, [*archive, "--output", str(tmp_path / "spark"), "--json", "--split-bytes", str(SPLIT)])
    finally:
        spark.stop()
    assert rc == 0, capsys.readouterr().err
    local = export(archive, str(tmp_path / "local"), filters=Filters())
    assert _rows(tmp_path / "spark") == _rows(tmp_path / "local")
    parts = list((tmp_path / "spark").rglob("part-*.parquet"))
    assert len({p.name.split("-")[1] for p in parts}) > len(archive)    # more tasks than files wrote parts
    assert local["transactions"] > 0

"""The data source's ``changes`` table on the bench binlog (``make bench-data``: ~1 GB, one
file read as 16 ranges of whole transactions) equals ``binlogkit export``'s Parquet of it, row
for row: each table typed (``changes_table``) and the long form. Skips without the bench file
(``BINLOGKIT_BENCH_FILE`` names another). About a minute of CPU; ``make bench-spark-changes``
prints the CPU figures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(os.environ.get("BINLOGKIT_BENCH_FILE") or ROOT / "bench" / "data" / "mariadb-bin.000001")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    if not BENCH.is_file():
        pytest.skip(f"no bench binlog at {BENCH} (make bench-data)")
    from binlogkit.export import export

    out = tmp_path_factory.mktemp("bench-export") / "out"
    export([str(BENCH)], str(out))
    return out


def _read(**options):
    from binlogkit.spark.source import BinlogDataSource

    ds = BinlogDataSource({"path": str(BENCH), "table": "changes", **options})
    r = ds.reader(ds.schema())
    parts = r.partitions()
    return parts, pa.Table.from_batches([rb for p in parts for rb in r.read(p)], schema=r.target)


def _tables(out: Path) -> list[tuple[str, str, list[Path]]]:
    return [(d.parent.name.split("=", 1)[1], d.name.split("=", 1)[1], sorted(d.rglob("*.parquet")))
            for d in sorted(out.glob("db=*/table=*"))]


def _sorted(t, keys):
    return t.sort_by([(k, "ascending") for k in keys])


def test_typed_changes_of_the_bench_file_equal_the_export(exported):
    from binlogkit.spark.tables import align, typed_schema

    found = _tables(exported)
    assert found
    for db, table, files in found:
        want = [pq.read_table(f) for f in files]
        target = typed_schema(want[0].schema)
        exp = pa.Table.from_batches([align(rb, target) for t in want for rb in t.to_batches()], schema=target)
        parts, got = _read(changes_table=f"{db}.{table}")
        assert len(parts) > 8 and any(not p.task.whole() for p in parts)   # ranges of the one big file
        keys = ("file", "offset", "row_index")
        assert got.num_rows == exp.num_rows > 0, (db, table)
        assert _sorted(got, keys).equals(_sorted(exp, keys)), (db, table)


def test_long_changes_of_the_bench_file_equal_the_export(exported):
    """Long form: the images by C (``_rowarrow.json_objects``) against the export's Parquet
    turned into the long form by the reference path (Arrow compute joins, itself held equal to
    one ``json.dumps`` per image in tests/test_spark_source.py)."""
    from binlogkit.spark.tables import long_batch, schema

    want = []
    for db, table, files in _tables(exported):
        for f in files:
            want += [long_batch(rb, db, table, c_mod=None) for rb in pq.ParquetFile(f).iter_batches(1 << 16)]
    exp = pa.Table.from_batches(want, schema=schema("changes"))
    _, got = _read()
    keys = ("db", "table", "file", "offset", "row_index")
    assert got.num_rows == exp.num_rows > 0
    assert _sorted(got, keys).equals(_sorted(exp, keys))

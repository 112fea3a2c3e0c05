"""The export job on a real Spark standalone cluster (issue 21, proof 2, local paths): a master
and two 1-core workers on 127.0.0.1 from the installed pyspark (``scripts/spark_cluster.py``),
``spark-submit --master spark://… binlogkit/spark/jobs/export.py ARCHIVE --output DIR``; executors
write the parts. DuckDB and Spark read the dataset; its rows and types equal those of the
one-process export of the same archive."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")
duckdb = pytest.importorskip("duckdb")
pq = pytest.importorskip("pyarrow.parquet")

from binlogkit.export import export  # noqa: E402
from fixtures import store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cluster(spark_standalone):
    return spark_standalone


def _tables(out: Path) -> dict:
    """table folder -> (Arrow schema per version, rows sorted in binlog order)."""
    import pyarrow.dataset as ds

    got = {}
    for folder in sorted(out.glob("db=*/table=*")):
        schemas = {str(pq.read_schema(p).remove_metadata()) for p in folder.rglob("*.parquet")}
        rows = ds.dataset(str(folder), format="parquet", partitioning="hive").to_table().to_pylist()
        got[folder.relative_to(out).as_posix()] = (schemas, sorted(rows, key=lambda r: (r["file"], r["offset"],
                                                                                         r["row_index"])))
    return got


def test_export_job_on_a_standalone_cluster_equals_the_local_engine(cluster, tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(store.materialize("replication-gtid") / "primary", archive / "lab")
    shutil.copytree(store.materialize("row-types-full-metadata") / "primary", archive / "types")
    files = sorted(str(p) for p in archive.rglob("mariadb-bin.0*"))
    local = export(files, str(tmp_path / "local"))
    spark_submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", TZ="UTC")
    out = tmp_path / "spark"
    p = subprocess.run([str(spark_submit), "--master", cluster.master_url, "--conf", "spark.executor.memory=512m",
                        "--conf", "spark.ui.enabled=false", str(ROOT / "binlogkit" / "spark" / "jobs" / "export.py"),
                        *files, "--output", str(out), "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    printed = json.loads(p.stdout[p.stdout.index("{"):])
    marker = json.loads((out / "_SUCCESS").read_text())
    assert printed == marker and marker["engine"] == "spark"
    same = ("files", "bytes", "transactions", "rows", "tables", "statements", "schema_versions", "problems",
            "incomplete", "rolled_back")
    assert {k: marker[k] for k in same} == {k: local[k] for k in same}
    # rows and types equal the local engine's (part names differ: one task per input file)
    assert _tables(out) == _tables(tmp_path / "local")
    assert pq.read_table(out / "_schemas").to_pylist() == pq.read_table(tmp_path / "local" / "_schemas").to_pylist()
    assert (sorted(pq.read_table(out / "_statements").to_pylist(), key=lambda r: (r["file"], r["offset"]))
            == sorted(pq.read_table(tmp_path / "local" / "_statements").to_pylist(),
                      key=lambda r: (r["file"], r["offset"])))
    # DuckDB reads it
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*), sum(after_c2) FROM read_parquet('{out}/db=lab/table=small/*/*.parquet', "
                    "hive_partitioning = true, union_by_name = true)").fetchone()
    m = con.execute(f"SELECT count(*), sum(after_c2) FROM read_parquet('{tmp_path}/local/db=lab/table=small/*/*.parquet', "
                    "hive_partitioning = true, union_by_name = true)").fetchone()
    assert n == m and n[0] == sum(local["tables"]["lab.small"].values())
    # ... and Spark SQL (on the cluster) reads it back
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(cluster.master_url).appName("export-read")
             .config("spark.executor.memory", "512m").config("spark.ui.enabled", "false").getOrCreate())
    try:
        df = spark.read.parquet(str(out / "db=types" / "table=ints"))
        df.createOrReplaceTempView("ints")
        got = spark.sql("SELECT op, count(*) AS n, max(after_bu) AS bu FROM ints GROUP BY op ORDER BY op").collect()
        assert {r["op"]: r["n"] for r in got} == {k: v for k, v in local["tables"]["types.ints"].items() if v}
        assert max(int(r["bu"] or 0) for r in got) == 18446744073709551615   # uint64 read as DECIMAL(20,0)
    finally:
        spark.stop()
    # the files were written on both workers' executors, not by the driver
    for i in range(2):
        assert list((cluster.folder / f"work{i}").glob("app-*/*/stderr")), f"worker {i} ran no executor"


def test_export_job_on_the_cluster_reads_and_writes_s3(cluster, s3_server, tmp_path):
    """Proof 2, object-storage half: the archive in a real S3 server (SeaweedFS); the job on the
    standalone cluster reads it from ``s3://`` and its executors write the dataset to ``s3://``
    (the AWS variables reach them as spark.executorEnv); downloaded, its rows and types equal
    the one-process export of the local files, and DuckDB reads it."""
    from binlogkit.reading import storage

    archive = tmp_path / "archive"
    shutil.copytree(store.materialize("replication-gtid") / "primary", archive / "lab")
    shutil.copytree(store.materialize("row-types-full-metadata") / "primary", archive / "types")
    local = export(sorted(str(p) for p in archive.rglob("mariadb-bin.0*")), str(tmp_path / "local"))
    s3_server.make_bucket("exportproof")
    fs = storage.filesystem("s3://exportproof/")[0]
    for f in sorted(archive.rglob("*")):
        if f.is_file():
            fs.put_file(str(f), f"exportproof/archive/{f.relative_to(archive).as_posix()}")
    storage.forget()
    spark_submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    aws = s3_server.env()
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", TZ="UTC", **aws)
    executor_env = [a for k, v in aws.items() for a in ("--conf", f"spark.executorEnv.{k}={v}")]
    p = subprocess.run([str(spark_submit), "--master", cluster.master_url, "--conf", "spark.executor.memory=512m",
                        "--conf", "spark.ui.enabled=false", *executor_env,
                        str(ROOT / "binlogkit" / "spark" / "jobs" / "export.py"), "s3://exportproof/archive/lab/",
                        "s3://exportproof/archive/types/", "--output", "s3://exportproof/out", "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    storage.forget()
    got = tmp_path / "from-s3"
    fs.get("exportproof/out/", str(got), recursive=True)
    marker = json.loads((got / "_SUCCESS").read_text())
    assert marker["engine"] == "spark"
    same = ("transactions", "rows", "tables", "statements", "schema_versions", "problems", "incomplete",
            "rolled_back")
    assert {k: marker[k] for k in same} == {k: local[k] for k in same}
    assert _tables(got) == _tables(tmp_path / "local")
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{got}/db=lab/table=small/*/*.parquet', "
                    "hive_partitioning = true, union_by_name = true)").fetchone()
    assert n[0] == sum(local["tables"]["lab.small"].values()) > 0

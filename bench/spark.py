"""The ``binlog`` Spark data source against the local engine on the same files, in one run
(issue 32): rows/s and MB/s of the ``changes`` and ``events`` tables read on a standalone
cluster of 2 one-core workers, next to the local export (``binlogkit.export.export``) and the
local decode (``api.decode_files``, what ``decode --json`` runs for these files) in one process; and
``events`` with ``fields=false`` (header fields only, no body decoded: the C column filler) on the
cluster and, through the same reader without Spark, in one process; ``transactions`` on the
cluster against ``transactions.group_files`` (what ``binlogkit transactions`` walks); and each
table through the reader every executor runs (``spark.tables.batches``), in one process (its
CPU time: the per-core cost without Spark's).

    make bench-spark          # or: python bench/spark.py [--files 8] [--trx-per-file 4000]

The archive is a clean MariaDB series made by ``fixtures.faults.generate`` (real 10.11 events
cloned with new GTIDs). The local runs give wall and CPU time (user+sys of the process: what a
shared machine disturbs least); the Spark runs give wall time of ``df.count()`` over every
column (the cluster's executors are other processes), after a warm-up query that starts the
executors' Python workers. MB: stored bytes of the files.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

SPARK = r"""
import json, sys, time
from pyspark.sql import SparkSession
a = json.loads(sys.argv[1])
spark = (SparkSession.builder.master(a["master"]).appName("bench-spark").config("spark.executor.memory", "1g")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.executorEnv.PYTHONPATH", a["root"]).getOrCreate())
from binlogkit.spark import register
register(spark)
spark.read.format("binlog").option("table", "summaries").load(a["path"]).count()   # warm-up: workers up
out = {}
for table, fields in (("changes", "true"), ("events", "true"), ("events", "false"), ("transactions", "true")):
    t = time.perf_counter()
    n = spark.read.format("binlog").option("table", table).option("fields", fields).load(a["path"]).count()
    out[table if fields == "true" else "events_headers"] = {"rows": n, "seconds": time.perf_counter() - t}
print(json.dumps(out))
spark.stop()
"""


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def local(files: list[str], scratch: Path) -> dict:
    from binlogkit.api import decode_files
    from binlogkit.export import export

    out = {}
    t, c = time.perf_counter(), cpu()
    s = export(files, str(scratch / "export"))
    out["changes"] = {"rows": s["rows"], "seconds": time.perf_counter() - t, "cpu": cpu() - c}
    t, c = time.perf_counter(), cpu()
    n = sum(1 for _ in decode_files(files, payloads=True))
    out["events"] = {"rows": n, "seconds": time.perf_counter() - t, "cpu": cpu() - c}
    from binlogkit.spark.files import plan_files
    from binlogkit.spark.tables import Query, batches

    t, c = time.perf_counter(), cpu()   # the data source's own reader, one process, no Spark
    n = sum(b.num_rows for task in plan_files(files) for b in batches(Query("events", fields=False), task))
    out["events_headers"] = {"rows": n, "seconds": time.perf_counter() - t, "cpu": cpu() - c}
    from binlogkit.transactions import group_files

    t, c = time.perf_counter(), cpu()   # what `binlogkit transactions` walks
    n = sum(1 for _ in group_files(files))
    out["transactions"] = {"rows": n, "seconds": time.perf_counter() - t, "cpu": cpu() - c}
    for table in ("changes", "events", "transactions"):   # the reader each executor runs, one process
        t, c = time.perf_counter(), cpu()
        n = sum(b.num_rows for task in plan_files(files) for b in batches(Query(table), task))
        out[table + "_reader"] = {"rows": n, "seconds": time.perf_counter() - t, "cpu": cpu() - c}
    return out


def on_cluster(path: Path, scratch: Path) -> dict:
    import spark_cluster

    if not spark_cluster.java_ok():
        return {}
    c = spark_cluster.start(scratch / "cluster", workers=2, cores=1, memory="1g")
    try:
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(ROOT))
        p = subprocess.run([sys.executable, "-c", SPARK, json.dumps({"master": c.master_url, "path": str(path),
                                                                      "root": str(ROOT)})],
                           capture_output=True, text=True, env=env, timeout=3600)
        if p.returncode != 0:
            raise SystemExit(p.stderr[-3000:])
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        c.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--trx-per-file", type=int, default=4000)
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args()
    from fixtures.faults import generate

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        scratch = Path(tmp)
        archive = scratch / "archive"
        generate(archive, files=args.files, trx_per_file=args.trx_per_file, seed=1, faults=(), clock=1_800_000_000)
        files = sorted(str(p) for p in archive.glob("mariadb-bin.0*"))
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        print(f"archive: {len(files)} files, {mb:.1f} MB; load average at the start {os.getloadavg()[0]:.1f} "
              f"(1 min), {os.getloadavg()[1]:.1f} (5 min)")
        here = local(files, scratch)
        there = {} if args.no_spark else on_cluster(archive, scratch)
        doc = {"files": len(files), "mb": mb, "local": here, "spark_2_workers": there}
        print(f"load average at the end {os.getloadavg()[0]:.1f} (1 min), {os.getloadavg()[1]:.1f} (5 min)")
        for table in ("changes", "events", "events_headers", "transactions"):
            for name, res, key in (("local, 1 process", here, table), ("reader, 1 process", here, table + "_reader"),
                                   ("spark, 2 workers", there, table)):
                r = res.get(key)
                if not r:
                    continue
                extra = f", cpu {r['cpu']:.1f} s" if "cpu" in r else ""
                print(f"{table:14s} {name:17s} {r['rows']:>9,} rows in {r['seconds']:6.1f} s: "
                      f"{r['rows'] / r['seconds']:>9,.0f} rows/s, {mb / r['seconds']:6.2f} MB/s{extra}")
        print(json.dumps(doc))


if __name__ == "__main__":
    main()

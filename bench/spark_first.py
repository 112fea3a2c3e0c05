"""Spark's fixed cost of the binlog data source: a fresh local[2] session per run, then the
time to the first result of each table's first query (``count()`` over the lab archive) and of
the same query again (warm), and what ``register()`` costs. Wall times, with load averages
(the machine is shared).

    python bench/spark_first.py ARCHIVE [--master local[2]] [--json]

ARCHIVE: the docs' lab archive (``python -m fixtures.docs_data archive DIR``: DIR/archive).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _baseline():
    """A Python data source of one row per file and nothing of binlogkit's: what any Python
    data source's first query costs (the planning worker, the Python workers, Arrow to the JVM)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Reader(DataSourceReader):
        def __init__(self, path):
            self.path = path

        def partitions(self):
            return [InputPartition(name) for name in sorted(os.listdir(self.path))]

        def read(self, partition):
            yield (partition.value,)

    class Baseline(DataSource):
        @classmethod
        def name(cls):
            return "baseline"

        def schema(self):
            return "file string"

        def reader(self, schema):
            return Reader(self.options["path"])

    return Baseline


def one(archive: str, master: str, table: str) -> dict:
    """A fresh session: start, register, first query, the same again."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    load0 = os.getloadavg()
    t0 = time.monotonic()
    spark = (SparkSession.builder.master(master).appName("bench-spark-first")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.executorEnv.PYTHONPATH", str(ROOT)).getOrCreate())
    spark.range(1).count()   # Spark's own start-up: the JVM, a first job
    t1 = time.monotonic()
    if table == "baseline":   # Spark's own cost of a first Python data source query: a one-row source
        spark.dataSource.register(_baseline())
        fmt = "baseline"
    else:
        from binlogkit.spark import register

        register(spark)
        fmt = "binlog"
    t2 = time.monotonic()
    n = spark.read.format(fmt).option("table", table).load(archive).count()
    t3 = time.monotonic()
    spark.read.format(fmt).option("table", table).load(archive).count()
    t4 = time.monotonic()
    spark.stop()
    return {"table": table, "rows": n, "spark_start": round(t1 - t0, 2), "register": round(t2 - t1, 2),
            "first_query": round(t3 - t2, 2), "warm_query": round(t4 - t3, 2),
            "load_before": [round(x, 1) for x in load0], "load_after": [round(x, 1) for x in os.getloadavg()]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("archive")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--table", action="append")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if len(a.table or ()) == 1:
        print(json.dumps(one(a.archive, a.master, a.table[0])))
        return 0
    import subprocess

    rows = []
    for t in a.table or ("baseline", "events", "transactions", "changes"):   # each table in a fresh process: a fresh session
        p = subprocess.run([sys.executable, __file__, a.archive, "--master", a.master, "--table", t],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if p.returncode:
            print(p.stderr[-3000:], file=sys.stderr)
            return 1
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'table':<13} {'rows':>8} {'spark start':>11} {'register':>8} {'first query':>11} {'warm':>6}  load")
        for r in rows:
            print(f"{r['table']:<13} {r['rows']:>8,} {r['spark_start']:>10.2f}s {r['register']:>7.2f}s "
                  f"{r['first_query']:>10.2f}s {r['warm_query']:>5.2f}s  {r['load_before'][0]}->{r['load_after'][0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ``binlog`` data source's ``changes`` table against ``binlogkit export`` on the bench
binlog, by CPU time (user+sys of each run's process: what a shared machine disturbs least),
back to back in one run: the export of the file, then every partition of the data source's
typed ``changes`` of one table (``changes_table``) and of the long form read in one process
(``BinlogDataSource(...).reader(...).read(p)``, as an executor reads each). The goals: typed at
most 1.25x the export's CPU, long form at most 1.5x. ``--check``: the typed rows also compared
with the export's Parquet of that table, row for row. ``--spark``: the warm ``count()`` of both
forms in Spark local[2] (wall time), against the export's wall time; ``--spark-forms
typed,floor`` also counts the same number of typed rows served from memory (slices of one real
batch, no walk): the floor Spark's Python data source hand-over puts under any such count.

    make bench-spark-changes      # or: python bench/spark_changes.py [--file F] [--table bench.s] [--check] [--spark]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "data" / "mariadb-bin.000001"

READ = r"""
import json, sys
from binlogkit.spark.source import BinlogDataSource
a = json.loads(sys.argv[1])
opts = {"path": a["file"], "table": "changes"}
if a["table"]:
    opts["changes_table"] = a["table"]
ds = BinlogDataSource(opts)
r = ds.reader(ds.schema())
parts = r.partitions()
n = sum(rb.num_rows for p in parts for rb in r.read(p))
print(json.dumps({"rows": n, "partitions": len(parts)}))
"""


SPARK = r"""
import json, os, sys, time
from pyspark.sql import SparkSession
a = json.loads(sys.argv[1])
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
spark = (SparkSession.builder.master("local[2]").appName("bench-spark-changes")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
from binlogkit.spark import register
register(spark)
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


class FloorReader(DataSourceReader):
    # the typed form's rows with no walk: each partition yields as many rows as the real one,
    # slices of one real batch kept in the Python worker (made by the first, cold count)

    def __init__(self, opts, schema):
        from binlogkit.spark.source import BinlogDataSource
        self.opts, self.real = opts, BinlogDataSource(opts).reader(schema)

    def partitions(self):
        from binlogkit.spark.source import BinlogDataSource
        parts = self.real.partitions()
        sizes = BinlogDataSource.floor_sizes = getattr(BinlogDataSource, "floor_sizes", {})
        key = (self.opts["path"], self.opts["changes_table"])
        if key not in sizes:    # the rows of each partition: counted once, here (the planner)
            sizes[key] = [sum(b.num_rows for b in self.real.read(p)) for p in parts]
        return [InputPartition((i, n)) for i, n in enumerate(sizes[key])]

    def read(self, partition):
        from binlogkit.spark.source import BinlogDataSource
        kept = BinlogDataSource.floor_batch = getattr(BinlogDataSource, "floor_batch", None)
        if kept is None:
            kept = BinlogDataSource.floor_batch = next(iter(self.real.read(self.real.partitions()[0])))
        left = partition.value[1]
        while left > 0:
            b = kept.slice(0, min(left, kept.num_rows))
            left -= b.num_rows
            yield b


class Floor(DataSource):
    @classmethod
    def name(cls):
        return "binlogfloor"

    def schema(self):
        from binlogkit.spark.source import BinlogDataSource
        return BinlogDataSource(dict(self.options)).schema()

    def reader(self, schema):
        return FloorReader(dict(self.options), schema)


spark.dataSource.register(Floor)
out = {}
for form, opts in (("typed", {"changes_table": a["table"]}), ("long", {}),
                   ("floor", {"changes_table": a["table"]})):
    if form not in a["forms"]:
        continue
    def count():
        r = spark.read.format("binlogfloor" if form == "floor" else "binlog").option("table", "changes")
        for k, v in opts.items():
            r = r.option(k, v)
        t = time.perf_counter()
        n = r.load(a["file"]).count()
        return n, time.perf_counter() - t
    _, cold = count()          # the first: the Python workers start
    n, warm = count()
    n, again = count()
    out[form] = {"rows": n, "cold": round(cold, 2), "warm": round(min(warm, again), 2)}
print(json.dumps(out))
spark.stop()
"""


def timed(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(CPU seconds of the child, wall seconds, its standard output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ...: exit {p.returncode}\n{p.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, p.stdout


def check(file: str, table: str, out: Path) -> int:
    """The typed rows of ``table`` equal those of the export's Parquet (``out``), row for row."""
    sys.path.insert(0, str(ROOT))
    import pyarrow.parquet as pq

    from binlogkit.spark.source import BinlogDataSource
    from binlogkit.spark.tables import align, typed_schema

    db, name = table.split(".", 1)
    parts = sorted((out / f"db={db}" / f"table={name}").rglob("*.parquet"))
    want = [pq.read_table(p) for p in parts]
    target = typed_schema(want[0].schema)
    ds = BinlogDataSource({"path": file, "table": "changes", "changes_table": table})
    r = ds.reader(ds.schema())
    key = ("file", "offset", "row_index")
    import pyarrow as pa

    got = pa.Table.from_batches([rb for p in r.partitions() for rb in r.read(p)]).sort_by([(k, "ascending") for k in key])
    exp = pa.Table.from_batches([align(rb, target) for t in want for rb in t.to_batches()]).sort_by(
        [(k, "ascending") for k in key])
    if not got.equals(exp):
        raise SystemExit(f"typed changes of {table}: {got.num_rows} rows differ from the export's {exp.num_rows}")
    return got.num_rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(BENCH))
    ap.add_argument("--table", default="bench.s", help="the typed form's table (changes_table)")
    ap.add_argument("--check", action="store_true", help="also compare the typed rows with the export's Parquet")
    ap.add_argument("--skip", default="", help="comma-separated: export, typed, long")
    ap.add_argument("--spark", action="store_true",
                    help="also Spark local[2]: warm count() of both forms, against the export's wall time")
    ap.add_argument("--spark-forms", default="typed,long",
                    help="the forms --spark counts: typed, long, and floor (the typed form's rows served from "
                         "memory, no walk: what Spark's hand-over alone costs)")
    a = ap.parse_args(argv)
    if not Path(a.file).exists():
        print(f"no {a.file}: make bench-data first", file=sys.stderr)
        return 2
    # bytecode cached and stdout buffered, as an installed package runs (bench/run.py's USER_ENV)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "binlogkit")], env=env, check=False,
                   stdout=subprocess.DEVNULL)
    py = sys.executable
    skip = set(filter(None, a.skip.split(",")))
    scratch = Path(tempfile.mkdtemp(prefix="bench-spark-changes-"))
    out: dict = {"file": a.file, "mb": round(os.path.getsize(a.file) / 1e6), "load_before": os.getloadavg()}
    try:
        if "export" not in skip:
            c, w, _ = timed([py, "-m", "binlogkit", "export", a.file, "-o", str(scratch / "export")], env)
            out["export"] = {"cpu": round(c, 2), "wall": round(w, 2)}
        for form, table in (("typed", a.table), ("long", "")):
            if form in skip:
                continue
            c, w, text = timed([py, "-c", READ, json.dumps({"file": a.file, "table": table})], env)
            out[form] = {"cpu": round(c, 2), "wall": round(w, 2), **json.loads(text.splitlines()[-1])}
            if "export" in out:
                out[form]["x_export"] = round(c / out["export"]["cpu"], 2)
        if a.spark:
            forms = a.spark_forms.split(",")
            _, _, text = timed([py, "-c", SPARK, json.dumps({"file": a.file, "table": a.table, "forms": forms})], env)
            out["spark_local2"] = json.loads(text.splitlines()[-1])
            if "export" in out:
                for v in out["spark_local2"].values():
                    v["warm_x_export_wall"] = round(v["warm"] / out["export"]["wall"], 2)
        out["load_after"] = os.getloadavg()
        out["goals"] = {"typed": 1.25, "long": 1.5}
        print(json.dumps(out, indent=1))
        if a.check and "export" in out:
            n = check(a.file, a.table, scratch / "export")
            print(f"check: the typed changes of {a.table} equal the export's Parquet ({n:,} rows)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Sizing figures for docs/spark.md ("Sizing on paper"), measured on this machine:

* ``cpu``: the CPU time (user+sys) of one process reading every partition of a binlog as each
  table (``BinlogDataSource(...).reader(...).read(p)``, what an executor runs per partition),
  and so the row changes per second per core of each table (the file's row changes, counted by
  the ``changes`` table, over that table's CPU seconds). ``--partitions K``: the first K
  partitions only (ranges of whole transactions of a big file).
* ``plan``: the driver's planning of N small files (symlinks to one fixture binlog in a
  temporary folder): the peak RSS of the process that plans (``schema()``, ``reader()``,
  ``partitions()``, the partitions pickled as Spark ships them), against the same process
  before it, and the pickled plan's size.

Each measurement runs in a child process of its own; the load average is printed with it.

    python bench/spark_sizing.py cpu FILE [--partitions K]
    python bench/spark_sizing.py plan [--files 10000] [--file FIXTURE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

READ = r"""
import json, resource, sys
from binlogkit.spark.source import BinlogDataSource
a = json.loads(sys.argv[1])
ds = BinlogDataSource(a["opts"])
r = ds.reader(ds.schema())
parts = r.partitions()[: a["k"] or None]
u0 = resource.getrusage(resource.RUSAGE_SELF)
n = sum(rb.num_rows for p in parts for rb in r.read(p))
u1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
print(json.dumps({"rows": n, "partitions": len(parts), "cpu": cpu}))
"""

PLAN = r"""
import json, pickle, resource, sys
a = json.loads(sys.argv[1])
from binlogkit.spark.source import BinlogDataSource
import pyspark.sql.datasource, pyarrow   # what the planning worker has before it plans
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ds = BinlogDataSource({"path": a["dir"], "table": a["table"]})
r = ds.reader(ds.schema())
parts = r.partitions()
blob = pickle.dumps((r, parts))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"files": len(parts), "rss_before_kb": before, "rss_after_kb": after,
                  "pickled_bytes": len(blob)}))
"""

TABLES = (("events", {"table": "events"}), ("events fields=false", {"table": "events", "fields": "false"}),
          ("transactions", {"table": "transactions"}), ("changes (long form)", {"table": "changes"}),
          ("changes (typed, one table)", {"table": "changes", "changes_table": None}), ("summaries", {"table": "summaries"}))


def _child(code: str, arg: dict) -> dict:
    p = subprocess.run([sys.executable, "-c", code, json.dumps(arg)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=3600)
    if p.returncode:
        raise SystemExit(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def cpu(path: str, k: int, typed: str) -> None:
    load0 = os.getloadavg()
    res = {}
    for name, opts in TABLES:
        opts = dict(opts, path=path)
        if "changes_table" in opts:
            opts["changes_table"] = typed
        res[name] = _child(READ, {"opts": opts, "k": k})
        print(f"{name:<28} {res[name]['rows']:>11,} rows {res[name]['cpu']:>7.2f} s CPU", flush=True)
    changes = res["changes (long form)"]["rows"]
    print(f"\n{changes:,} row changes in {res['events']['partitions']} partitions; load {load0} -> {os.getloadavg()}")
    for name, r in res.items():
        print(f"{name:<28} {changes / r['cpu']:>12,.0f} row changes/s per core ({r['rows'] / r['cpu']:,.0f} rows/s)")


def plan(n: int, fixture: str, table: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.abspath(fixture)
        for i in range(1, n + 1):
            os.symlink(src, os.path.join(d, f"mariadb-bin.{i:06d}"))
        load0 = os.getloadavg()
        small = _child(PLAN, {"dir": d, "table": table}) if n <= 10 else None
        r = _child(PLAN, {"dir": d, "table": table})
        print(json.dumps({"table": table, **r, "rss_growth_mb": round((r["rss_after_kb"] - r["rss_before_kb"]) / 1024, 1),
                          "load": [load0, os.getloadavg()], **({"small": small} if small else {})}))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cpu")
    c.add_argument("file")
    c.add_argument("--partitions", type=int, default=0)
    c.add_argument("--typed", default="bench.s", help="changes_table of the typed form")
    p = sub.add_parser("plan")
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--file", default=str(ROOT / "fixtures" / "mariadb-10.11" / "row-types-full-metadata" / "primary"))
    p.add_argument("--table", default="events")
    a = ap.parse_args(argv)
    if a.what == "cpu":
        cpu(a.file, a.partitions, a.typed)
    else:
        f = a.file
        if os.path.isdir(f):
            f = sorted(str(x) for x in Path(f).glob("mariadb-bin.0*") if not x.name.endswith(".xz"))[0]
        plan(a.files, f, a.table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

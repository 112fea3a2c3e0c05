"""Audit throughput on a large archive: ``python bench/audit_archive.py [--gb 20] [--no-spark]``.

The archive is laid out from real lab files without copying bytes: N series, each holding the
1 GB lab binlog (``make bench-data``) as a symlink, plus the small binlogs of the
``replication-gtid`` fixture as further series, for at least 100 files in all. Prints the
local engine with 1 and 2 workers and the Spark job in local[2], in GB/s, and a projection to a
cluster from the measured per-core rate.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=int, default=20)
    ap.add_argument("--no-spark", action="store_true")
    args = ap.parse_args(argv)
    big = ROOT / "bench" / "data" / "mariadb-bin.000001"
    if not big.exists():
        print("run `make bench-data` first", file=sys.stderr)
        return 2
    from binlogkit.audit import run_local
    from fixtures import store

    small = sorted((store.materialize("replication-gtid") / "primary").glob("mariadb-bin.0*"))
    with tempfile.TemporaryDirectory() as tmp:
        n_big = max(1, round(args.gb * 1e9 / big.stat().st_size))
        for k in range(n_big):
            d = Path(tmp) / f"big{k:03d}"
            d.mkdir()
            (d / "mariadb-bin.000001").symlink_to(big)
        k = 0
        files = n_big
        while files < 100:
            d = Path(tmp) / f"small{k:03d}"
            d.mkdir()
            for f in small:
                (d / f.name).symlink_to(f)
                files += 1
            k += 1
        total = n_big * big.stat().st_size + k * sum(f.stat().st_size for f in small)
        gb = total / 1e9
        print(f"archive: {files} files, {gb:.1f} GB ({n_big} x the 1 GB lab binlog, {k} small series)")
        rate1 = None
        for jobs in (1, 2):
            t = time.perf_counter()
            r = run_local([tmp], jobs=jobs)
            dt = time.perf_counter() - t
            rate1 = rate1 or gb / dt
            print(f"local engine, {jobs} worker(s): {dt:.1f} s = {gb / dt:.2f} GB/s  "
                  f"({r['counts']['error']} errors, {r['counts']['warning']} warnings)")
        if not args.no_spark:
            from binlogkit.audit import job
            t = time.perf_counter()
            spark = job.session("local[2]")
            ts = time.perf_counter() - t
            runs = []
            for _ in range(2):  # the first run also starts the Python workers
                t = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    job.main(spark, [tmp])
                runs.append(time.perf_counter() - t)
            spark.stop()
            print(f"Spark local[2]: session start {ts:.1f} s, first run {runs[0]:.1f} s, second {runs[1]:.1f} s "
                  f"= {gb / runs[1]:.2f} GB/s")
        print(f"projection: one core audits {rate1:.2f} GB/s; a cluster of N cores ~ {rate1:.2f}*N GB/s "
              "while files outnumber cores (one partition per file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

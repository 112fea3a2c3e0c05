"""Mirror benchmark: ``binlogkit export --format iceberg|delta --mirror`` of the
benchmark binlog next to ``mariadb-binlog -v`` and the Parquet export on the same file, in the
same run: CPU seconds (user+sys of the child), row changes per CPU second and peak RSS; then,
per format, the wall time of the local mirror build against the Spark backfill
(``--engine spark``: ``SPARK_MASTER``, default local[2], ``standalone`` or ``--cluster``: a master
and two 1-core workers started here; the JVM's CPU is not a child's), and the two warehouses
compared table by table (rows and commit properties).

    make bench-mirror            # or: python bench/mirror.py [FILE] [--formats iceberg,delta] [--no-spark]

The benchmark binlog has no FULL metadata: ``--schema`` gives the tables' names and primary
keys (fixtures/lab/bench_data.py's CREATE TABLEs). Each command runs once as a subprocess,
writing under a scratch folder that is removed after.
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
BIN = Path(sys.executable).parent
SCHEMA = ("CREATE TABLE bench.s (id INT AUTO_INCREMENT PRIMARY KEY, k INT, v VARCHAR(255));\n"
          "CREATE TABLE bench.b (id INT PRIMARY KEY, b LONGBLOB);\n")


def measured(cmd: list[str]) -> tuple[float, int, int, str]:
    """(CPU seconds user+sys, peak RSS KiB, exit code, stdout) of one run in a fresh child."""
    code = ("import resource,subprocess,sys;"
            "r=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.DEVNULL);"
            "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "sys.stderr.write(r.stdout.decode(errors='replace')[-20000:]);"
            "print(u.ru_utime+u.ru_stime, u.ru_maxrss, r.returncode)")
    p = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True)
    cpu, rss, rc = p.stdout.split()
    return float(cpu), int(rss), int(rc), p.stderr


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default=str(ROOT / "bench" / "data" / "mariadb-bin.000001"))
    ap.add_argument("--formats", default="iceberg,delta")
    ap.add_argument("--batch-transactions", default="5000")
    ap.add_argument("--no-spark", action="store_true", help="without the Spark backfill")
    ap.add_argument("--cluster", action="store_true",
                    help="the Spark backfill on a standalone cluster started here (a master and two 1-core workers "
                         "on 127.0.0.1, scripts/spark_cluster.py; also SPARK_MASTER=standalone)")
    args = ap.parse_args(argv)
    path = Path(args.file)
    mb = path.stat().st_size / 1e6
    bk = str(BIN / "binlogkit")
    oracle = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    with tempfile.TemporaryDirectory(prefix="bench-mirror-", dir=ROOT / "bench") as tmp:
        scratch = Path(tmp)
        (scratch / "schema.sql").write_text(SCHEMA)
        rows = None
        print(f"{path} ({mb:,.0f} MB); load average {_load()}")
        print(f"{'command':<44} {'CPU s':>8} {'rows/CPU s':>12} {'peak RSS MB':>12}")
        if oracle:
            cpu, rss, _rc, _ = measured([oracle, "-v", "--base64-output=decode-rows", str(path)])
            print(f"{'mariadb-binlog -v (to /dev/null)':<44} {cpu:>8.1f} {'':>12} {rss / 1024:>12.0f}")
        cpu, rss, rc, out = measured([bk, "export", str(path), "-o", str(scratch / "parquet"), "--json",
                                      "--schema", str(scratch / "schema.sql")])
        rows = json.loads(out)["rows"] if rc in (0, 1) else None
        print(f"{'binlogkit export (parquet)':<44} {cpu:>8.1f} {(rows or 0) / cpu:>12,.0f} {rss / 1024:>12.0f}")
        walls = []
        master = os.environ.get("SPARK_MASTER", "local[2]")
        cluster = None
        if not args.no_spark and (args.cluster or master == "standalone"):
            sys.path.insert(0, str(ROOT / "scripts"))
            import spark_cluster

            # the workers (and the executors they start) take this environment: PYTHONPATH included
            cluster = spark_cluster.start(scratch / "cluster", workers=2, cores=1)
            master = cluster.master_url
            print(f"standalone cluster {master}: a master and 2 workers x 1 core on 127.0.0.1")
        if not args.no_spark:
            print(f"Spark's class-data archive: {_archive()}")
        try:
            _formats(args, path, scratch, bk, master, walls)
        finally:
            if cluster is not None:
                cluster.stop()
        for fmt, wall, swall, master, sp in walls:
            print(f"{fmt}: local mirror build {wall:.1f} s wall; Spark backfill ({master}) {swall:.1f} s wall "
                  f"({swall / wall:.2f}x; {sp['rows']:,} row changes, {sp['partitions']} partitions, "
                  f"{sp['data_files']} data files{', stopped: ' + sp['cut']['kind'] if sp.get('cut') else ''})")
            print(f"  the backfill's job {sp['seconds']:.1f} s (Spark's start runs beside its planning; the rest: the "
                  "process's own start and Spark's stop): "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in (sp.get("phases") or {}).items()))
        print(f"load average at the end {_load()}")
    return 0


def _formats(args, path: Path, scratch: Path, bk: str, master: str, walls: list) -> None:
    """Per format: the local mirror build, then the Spark backfill of the same file (``walls``)."""
    for fmt in args.formats.split(","):
        t0 = time.monotonic()
        cpu, rss, rc, out = measured([bk, "export", str(path), "-o", str(scratch / fmt), "--format", fmt,
                                      "--mirror", "--json", "--schema", str(scratch / "schema.sql"),
                                      "--batch-transactions", args.batch_transactions])
        wall = time.monotonic() - t0
        if rc not in (0, 1):
            print(f"{fmt}: failed (exit {rc})")
            continue
        s = json.loads(out)
        print(f"{'binlogkit export --format ' + fmt + ' --mirror':<44} {cpu:>8.1f} {s['rows'] / cpu:>12,.0f} "
              f"{rss / 1024:>12.0f}   ({s['rows']:,} row changes, {s['commits']} table commits, "
              f"{s['transactions']:,} transactions)")
        if args.no_spark:
            continue
        t0 = time.monotonic()
        _cpu, _rss, rc, out = measured([bk, "export", str(path), "-o", str(scratch / (fmt + "-spark")), "--format",
                                        fmt, "--mirror", "--json", "--schema", str(scratch / "schema.sql"),
                                        "--engine", "spark", "--spark-master", master])
        swall = time.monotonic() - t0
        if rc not in (0, 1):
            print(f"{fmt} --engine spark: failed (exit {rc})")
            continue
        sp = json.loads(out)
        walls.append((fmt, wall, swall, master, sp))
        print(f"{fmt}: the Spark-built warehouse against the local one: {compare(fmt, scratch)}")


KEPT = ("binlogkit.gtid", "binlogkit.file", "binlogkit.position", "binlogkit.commit_time", "binlogkit.gtid_state")


def compare(fmt: str, scratch: Path) -> str:
    """The two warehouses of ``fmt`` (local, ``-spark``) table by table: rows (sorted by change
    coordinates, or by ``id``) and commit properties; what differs, or "equal"."""
    sys.path.insert(0, str(ROOT))
    from binlogkit.export.lake.mirror import open_sink

    a, b = open_sink(fmt, str(scratch / fmt)), open_sink(fmt, str(scratch / (fmt + "-spark")))
    names = sorted(a.table_names())
    if names != sorted(b.table_names()):
        return f"DIFFERENT tables: {names} / {sorted(b.table_names())}"
    out = []
    for db, n in names:
        x, y = a.read(db, n), b.read(db, n)
        cols = x.column_names
        order = [(c, "ascending") for c in (["file", "offset", "row_index"] if "row_index" in cols else ["id"])]
        x, y = x.sort_by(order), y.select(cols).sort_by(order)
        if not (x.schema == y.schema and x.equals(y)):
            out.append(f"{db}.{n} rows DIFFERENT ({x.num_rows} / {y.num_rows})")
        if {k: (a.recorded(db, n) or {}).get(k) for k in KEPT} != {k: (b.recorded(db, n) or {}).get(k) for k in KEPT}:
            out.append(f"{db}.{n} commit properties DIFFERENT")
    return "; ".join(out) if out else f"equal ({len(names)} tables, rows and commit properties)"


def _archive() -> str:
    """The drivers' class-data archive (``spark.start.cds_options``): there, or made now by a
    Spark start of its own (the first start on a machine writes it, tens of seconds more, once)."""
    sys.path.insert(0, str(ROOT))
    from binlogkit.spark import start

    folder = start.cds_folder()
    path = start.archive_path(folder) if folder is not None else None
    if path is None:
        return "off"
    start.cds_options()   # (takes one a run before finished)
    if path.exists():
        return f"there ({path})"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "from binlogkit.spark import start; start.context('local[1]').stop()"],
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    for _ in range(600):   # the JVM writes it at its exit, after the Python that started it
        start.cds_options()
        if path.exists():
            break
        time.sleep(0.1)
    return f"made now in {time.monotonic() - t0:.0f} s ({path})" if path.exists() else "not made"


def _load() -> str:
    """The 1, 5 and 15 minute load averages: CPU seconds are comparable under load, wall time is not."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())

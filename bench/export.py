"""Export benchmark (issue 21, proof 5): ``binlogkit export`` of the benchmark binlog to Parquet
in one process next to ``mariadb-binlog -v`` on the same file (same run), rows/s per core, peak
RSS, and the Spark job on a standalone cluster of 2 one-core workers.

    make bench-export            # or: python bench/export.py [FILE] [--no-spark]

Each command runs once as a subprocess (output to /dev/null; the export writes its dataset to a
scratch folder under bench/data), with the file in the page cache (a warm-up read first). First
a CPU-time table (the figure on a shared machine): mariadb-binlog -v, export by the C Arrow path
(``binlogkit._rowarrow``) and by the Python path (``BINLOGKIT_NO_ROWARROW=1``), interleaved
``--runs`` times, best of each. The exports run with their bytecode compiled and cached (as an
installed package runs; ``PYTHONDONTWRITEBYTECODE`` dropped, as ``bench/run.py`` does): else
every run compiles binlogkit's modules from source first, 0.15-0.2 s of CPU that no user pays.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from run import USER_ENV, plain_read, timed_rss  # noqa: E402


def spark_rate(path: Path, scratch: Path) -> None:
    """The export job on a standalone cluster (2 workers x 1 core) over two inputs (the benchmark
    file twice, by symlink: one task each)."""
    import pyspark

    import spark_cluster

    if not spark_cluster.java_ok():
        print("spark: no Java runtime; skipped")
        return
    archive = scratch / "two"
    for k in range(2):
        (archive / f"s{k}").mkdir(parents=True)
        (archive / f"s{k}" / "mariadb-bin.000001").symlink_to(path.resolve())
    cluster = spark_cluster.start(scratch / "cluster", workers=2, cores=1)
    try:
        submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                   SPARK_LOCAL_IP="127.0.0.1")
        out = scratch / "spark-out"
        t = time.perf_counter()
        p = subprocess.run([str(submit), "--master", cluster.master_url, "--conf", "spark.executor.memory=1g",
                            "--conf", "spark.ui.enabled=false", str(ROOT / "binlogkit" / "spark" / "jobs" / "export.py"),
                            str(archive / "s0" / "mariadb-bin.000001"), str(archive / "s1" / "mariadb-bin.000001"),
                            "--output", str(out), "--json"], capture_output=True, text=True, env=env)
        dt = time.perf_counter() - t
        if p.returncode not in (0, 1):
            print(f"spark job failed (exit {p.returncode}): {p.stderr[-2000:]}")
            return
        s = json.loads(p.stdout[p.stdout.index("{"):])
        print(f"spark job, 2 workers x 1 core: {s['rows']:,} rows ({2 * path.stat().st_size / 1e6:,.0f} MB) in "
              f"{dt:.1f} s wall (spark-submit included; the job itself {s['seconds']:.1f} s) = "
              f"{s['rows'] / s['seconds']:,.0f} rows/s, {s['rows'] / s['seconds'] / 2:,.0f} rows/s per core")
    finally:
        cluster.stop()


def timed_cpu(cmd: list[str], env: dict | None = None) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + sys), peak RSS (KiB) and exit code of one run in a fresh
    child: on a shared machine the CPU time is the figure to compare."""
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(time.perf_counter()-t, u.ru_utime+u.ru_stime, u.ru_maxrss, r.returncode)")
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True,
                         env=env).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), int(out[3])


def cpu_table(path: Path, oracle: str, scratch: Path, runs: int) -> None:
    """mariadb-binlog -v, export by the C Arrow path and export by the Python path
    (BINLOGKIT_NO_ROWARROW=1), interleaved ``runs`` times; the best CPU time of each."""
    mb = path.stat().st_size / 1e6
    here = dict(USER_ENV, PYTHONPATH=str(ROOT))   # bytecode cached, as an installed package runs
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "binlogkit")], env=here, check=False,
                   stdout=subprocess.DEVNULL)
    cmds = [("mariadb-binlog -v", [oracle, "-v", "--base64-output=decode-rows", str(path)], None),
            ("export, C Arrow path", [sys.executable, "-m", "binlogkit", "export", str(path), "--output",
                                     str(scratch / "c")], here),
            ("export, Python path", [sys.executable, "-m", "binlogkit", "export", str(path), "--output",
                                    str(scratch / "py")], dict(here, BINLOGKIT_NO_ROWARROW="1"))]
    best: dict[str, tuple] = {}
    for _ in range(runs):
        for name, cmd, env in cmds:
            got = timed_cpu(cmd, env)
            if name not in best or got[1] < best[name][1]:
                best[name] = got
    rows = json.loads((scratch / "c" / "_SUCCESS").read_text())["rows"] if (scratch / "c" / "_SUCCESS").exists() else 0
    ref = best["mariadb-binlog -v"][1]
    print(f"\nCPU time (user + sys), best of {runs} interleaved runs; load average {os.getloadavg()[0]:.1f}")
    print(f"{'command':<28} {'CPU s':>7} {'wall s':>7} {'rows/s (CPU)':>13} {'MB/s (CPU)':>11} {'peak RSS MB':>12} "
          f"{'vs oracle':>10}")
    for name, (wall, cpu, rss, rc) in best.items():
        rate = f"{rows / cpu:,.0f}" if "export" in name else "-"
        print(f"{name:<28} {cpu:>7.2f} {wall:>7.2f} {rate:>13} {mb / cpu:>11.0f} {rss / 1024:>12.0f} "
              f"{cpu / ref:>10.2f}" + (f"  (exit {rc})" if rc else ""))
    print(f"export: {rows:,} row changes; goal <= 1.0 x mariadb-binlog -v (stretch 0.5 x)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "bench" / "data" / "mariadb-bin.000001")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--runs", type=int, default=3, help="interleaved runs of the CPU-time table (0: skip it)")
    args = ap.parse_args(argv)
    path = args.file
    if not path.exists():
        print("no benchmark data: run `make bench-data` first (a ~1 GB binlog from a real server)", file=sys.stderr)
        return 2
    oracle = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    os.environ["PYTHONPATH"] = str(ROOT)  # this tree's binlogkit, whatever the venv installed
    bk = [sys.executable, "-m", "binlogkit"]
    mb = path.stat().st_size / 1e6
    plain_read(path)
    print(f"file: {path} ({mb:,.0f} MB); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          "(a shared machine: other jobs run beside this)")
    (ROOT / "bench" / "data").mkdir(parents=True, exist_ok=True)  # scratch here: the input's folder may be read-only
    with tempfile.TemporaryDirectory(dir=ROOT / "bench" / "data") as tmp:
        scratch = Path(tmp)
        t_o, rss_o, _ = timed_rss([oracle, "-v", "--base64-output=decode-rows", str(path)])
        if args.runs:
            cpu_table(path, oracle, scratch, args.runs)
        out = scratch / "out"
        t_e, rss_e, rc = timed_rss([*bk, "export", str(path), "--output", str(out)])
        s = json.loads((out / "_SUCCESS").read_text()) if (out / "_SUCCESS").exists() else {"rows": 0}
        size = sum(f.stat().st_size for f in out.rglob("*.parquet"))
        print(f"{'command':<40} {'seconds':>8} {'MB/s':>7} {'peak RSS MB':>12} {'vs oracle':>10}")
        print(f"{'mariadb-binlog -v (to /dev/null)':<40} {t_o:>8.2f} {mb / t_o:>7.0f} {rss_o / 1024:>12.0f} {1:>10.2f}")
        print(f"{'binlogkit export (Parquet)':<40} {t_e:>8.2f} {mb / t_e:>7.0f} {rss_e / 1024:>12.0f} "
              f"{t_e / t_o:>10.2f}" + (f"  (exit {rc})" if rc else ""))
        print(f"export: {s['rows']:,} row changes, {s['rows'] / t_e:,.0f} rows/s on one core; "
              f"{size / 1e6:,.0f} MB of Parquet (snappy); goal: <= 1.0 x mariadb-binlog -v, peak RSS <= 300 MB")
        if not args.no_spark:
            try:
                spark_rate(path, scratch)
            except ImportError:
                print("spark: pyspark is not installed (pip install -e '.[spark]')")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Audit benchmarks: ``python bench/audit_archive.py [--gb 20] [--big-gb 100] [--no-spark] [--merge-files N]``.

1. **Throughput** on a ``--gb`` archive laid out from real lab files without copying bytes: N
   series, each holding the 1 GB lab binlog (``make bench-data``) as a symlink, plus the small
   binlogs of the ``replication-gtid`` fixture as further series, 100 files at least. The local
   engine with 1 and 2 workers, ``binlogkit verify`` over the same files with the same workers,
   and the Spark job in local[2] (after session start), in GB/s; a projection to 100 TB.
2. **Memory** on a ``--big-gb`` archive (same layout): peak RSS of the local engine's parent
   process and of the Spark driver (its JVM and its Python), each run in a child process of its
   own and measured by ``getrusage(RUSAGE_CHILDREN)`` / the JVM's /proc status.
3. **Merge** over synthetic summaries standing for ``--merge-files`` files of 1 GiB (100,000 =
   100 TB): time and peak memory (tracemalloc) of ``plan_directory`` + ``merge_directory``, for
   a growing number of files and of findings, with the transactions per file changed too.

Every figure is printed with what was measured; the machine may be shared (2 cores, others
running): the script says the load average at the start.
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
sys.path.insert(0, str(ROOT))
BIG = ROOT / "bench" / "data" / "mariadb-bin.000001"


# --- synthetic summaries ---------------------------------------------------------------------

def synthetic(files: int, *, trx_per_file: int = 50_000, series: int = 1, findings_every: int = 0,
              size: int = 1 << 30) -> list[dict]:
    """Summaries as ``file_summary`` makes them for clean 1 GiB MariaDB binlogs, ``series``
    series sharing ``files``; every ``findings_every``-th file has a bad checksum and a GTID gap
    after it (0: none)."""
    out = []
    per = files // series
    for k in range(series):
        seq = 0
        for i in range(1, per + 1):
            gap = findings_every and i % findings_every == 0
            if gap:
                seq += 7
            a, b = seq + 1, seq + trx_per_file
            name = f"/archive/s{k:05d}/mariadb-bin.{i:06d}"
            src = {"file": f"mariadb-bin.{i:06d}", "position": 330}
            out.append({
                "file": name, "directory": f"/archive/s{k:05d}", "base": "mariadb-bin", "number": i,
                "size": size, "problem": None, "relay": False, "server_version": "10.11.19-MariaDB-log",
                "flavor": "mariadb", "events": trx_per_file * 7, "end_offset": size, "checksummed": trx_per_file * 7,
                "first_timestamp": 1_700_000_000 + i, "last_timestamp": 1_700_000_100 + i,
                "bad_checksums": [size // 2] if gap else [], "incidents": [], "unknown_events": [],
                "position_breaks": [],
                "end_rotate": None if i == per else {"offset": size - 50, "target": f"mariadb-bin.{i + 1:06d}",
                                                     "position": 4, "relay": False, "server_id": 1},
                "previous_gtids": None, "gtid_list": [f"0-1-{seq}"] if seq else [], "server_ids": [1],
                "transactions": trx_per_file, "head": {"continuation": False}, "tail": None, "interrupted": [],
                "maria": {"all": {"0-1": [[a, b]]}, "first": {"0": [f"0-1-{a}", 330, src, a]},
                          "high": {"0": [f"0-1-{b}", b]}},
                "mysql": None, "complete": {"0-1": [[a, b]]}, "gtid_anomalies": [],
            })
            seq = b
    return out


def bench_merge(files: int, findings_every: int, trx_per_file: int) -> dict:
    import tracemalloc

    from binlogkit.audit.merge import by_directory, combine, merge_directory, plan_directory

    tracemalloc.start()
    sums = synthetic(files, trx_per_file=trx_per_file, series=max(1, files // 1000), findings_every=findings_every)
    held = tracemalloc.get_traced_memory()[0]  # the summaries, as the merge receives them
    tracemalloc.reset_peak()
    t = time.perf_counter()
    parts = []
    for _d, group in by_directory(sums).items():
        assert not plan_directory(group)
        parts.append(merge_directory(group))
    result = combine(parts, files=len(sums), bytes_=sum(s["size"] for s in sums))
    dt = time.perf_counter() - t
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"files": files, "trx_per_file": trx_per_file, "findings": sum(result["counts"].values()),
            "seconds": dt, "peak_mb": peak / 1e6, "held_mb": held / 1e6, "summaries_mb": len(json.dumps(sums)) / 1e6}


# --- archives of symlinks ----------------------------------------------------------------------

def layout(tmp: Path, gb: float) -> tuple[int, float]:
    """Symlinks to the 1 GB lab binlog, one series each, plus small series up to 100 files."""
    from fixtures import store

    small = sorted((store.materialize("replication-gtid") / "primary").glob("mariadb-bin.0*"))
    n_big = max(1, round(gb * 1e9 / BIG.stat().st_size))
    for k in range(n_big):
        d = tmp / f"big{k:03d}"
        d.mkdir()
        (d / "mariadb-bin.000001").symlink_to(BIG)
    k, files = 0, n_big
    while files < 100:
        d = tmp / f"small{k:03d}"
        d.mkdir()
        for f in small:
            (d / f.name).symlink_to(f)
            files += 1
        k += 1
    total = n_big * BIG.stat().st_size + k * sum(f.stat().st_size for f in small)
    return files, total / 1e9


CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
what, archive = sys.argv[1], sys.argv[2]
t = time.perf_counter()
if what == "local":
    from binlogkit.audit import run_local
    r = run_local([archive], jobs=int(sys.argv[3]))
    out = {{"counts": r["counts"], "files": r["files"]}}
elif what == "verify":
    from concurrent.futures import ProcessPoolExecutor
    from binlogkit.audit.engine import audit_paths
    from binlogkit.scan import scan
    files = audit_paths([archive])
    with ProcessPoolExecutor(int(sys.argv[3])) as pool:
        bad = sum(not r.ok for r in pool.map(scan, files, chunksize=1))
    out = {{"bad": bad}}
else:
    from binlogkit.audit import job
    import io, contextlib, threading
    spark = job.session("local[" + sys.argv[3] + "]")
    t0 = time.perf_counter()
    jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    peak = [0]
    def watch():
        while True:
            try:
                for line in open(f"/proc/{{jvm_pid}}/status"):
                    if line.startswith("VmHWM:"):
                        peak[0] = max(peak[0], int(line.split()[1]))
            except OSError:
                return
            time.sleep(0.5)
    threading.Thread(target=watch, daemon=True).start()
    runs = []
    for _ in range(int(sys.argv[4])):
        t1 = time.perf_counter()
        r = job.audit(spark, [archive])
        runs.append(time.perf_counter() - t1)
    time.sleep(0.6)
    out = {{"counts": r["counts"], "session": t0 - t, "runs": runs, "jvm_hwm_mb": peak[0] / 1024}}
    spark.stop()
out["seconds"] = time.perf_counter() - t
out["self_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def child(*args: str) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), *args], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"bench child {args} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=20, help="throughput archive (GB)")
    ap.add_argument("--big-gb", type=float, default=100, help="memory archive (GB); 0 skips it")
    ap.add_argument("--merge-files", type=int, default=100_000)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--only", choices=["throughput", "memory", "merge"])
    args = ap.parse_args(argv)
    if not BIG.exists() and args.only != "merge":
        print("run `make bench-data` first", file=sys.stderr)
        return 2
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start "
          "(a shared machine: figures vary with other users' load)")
    if args.only in (None, "throughput"):
        with tempfile.TemporaryDirectory() as tmp:
            files, gb = layout(Path(tmp), args.gb)
            print(f"\n== throughput: {files} files, {gb:.1f} GB ({round(args.gb)} x the 1 GB lab binlog, symlinked)")
            subprocess.run(["cat", str(BIG)], stdout=subprocess.DEVNULL)  # page cache warm
            rate = {}
            for jobs in (1, 2):
                v = child("verify", tmp, str(jobs))
                a = child("local", tmp, str(jobs))
                rate[jobs] = gb / a["seconds"]
                print(f"{jobs} worker(s): verify {v['seconds']:.1f} s ({gb / v['seconds']:.2f} GB/s), audit "
                      f"{a['seconds']:.1f} s ({gb / a['seconds']:.2f} GB/s) = {a['seconds'] / v['seconds']:.2f}x verify "
                      f"(goal <= 1.3x); {a['counts']['error']} errors")
            if not args.no_spark:
                s = child("spark", tmp, "2", "2")
                best = min(s["runs"])
                print(f"Spark local[2]: session start {s['session']:.1f} s, runs {', '.join(f'{x:.1f}' for x in s['runs'])} s "
                      f"-> {gb / best:.2f} GB/s = {best / (gb / rate[2]):.2f}x the local engine with 2 workers (goal <= 1.2x)")
            per_core = rate[1]
            print(f"projection: one core audits {per_core:.2f} GB/s; 100 TB on 64 cores ~ "
                  f"{100e3 / (per_core * 64) / 3600:.1f} h (files outnumber cores; largest first)")
    if args.only in (None, "memory") and args.big_gb:
        with tempfile.TemporaryDirectory() as tmp:
            files, gb = layout(Path(tmp), args.big_gb)
            print(f"\n== memory: {files} files, {gb:.1f} GB (symlinks)")
            a = child("local", tmp, "2")
            print(f"local engine (2 workers): parent peak RSS {a['self_maxrss_mb']:.0f} MB (goal <= 300 MB), "
                  f"{a['seconds']:.0f} s = {gb / a['seconds']:.2f} GB/s")
            if not args.no_spark:
                s = child("spark", tmp, "2", "1")
                print(f"Spark local[2] driver: Python peak RSS {s['self_maxrss_mb']:.0f} MB, JVM peak RSS "
                      f"{s['jvm_hwm_mb']:.0f} MB (goal <= 300 MB each; in local mode the JVM hosts the executors too), "
                      f"{s['runs'][0]:.0f} s = {gb / s['runs'][0]:.2f} GB/s")
    if args.only in (None, "merge"):
        print("\n== merge over synthetic summaries (1 GiB per file; one series per 1000 files)")
        n = args.merge_files
        for files, every, trx in [(n // 100, 0, 50_000), (n // 10, 0, 50_000), (n, 0, 50_000), (n, 0, 5_000_000),
                                  (n, 100, 50_000), (n, 10, 50_000)]:
            r = bench_merge(files, every, trx)
            print(f"{r['files']:>7,} files ({r['files'] / 1024:,.0f} TiB), {r['trx_per_file']:>9,} trx/file, "
                  f"{r['findings']:>6,} findings: {r['seconds']:6.1f} s; summaries held {r['held_mb']:5.0f} MB "
                  f"(as JSON {r['summaries_mb']:.0f} MB), peak with the merge {r['peak_mb']:5.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

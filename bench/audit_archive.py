"""Audit benchmarks: ``python bench/audit_archive.py [--gb 20] [--big-gb 100] [--no-spark] [--merge-files N]``.

1. **Throughput** on a ``--gb`` archive laid out from real lab files without copying bytes: N
   series, each holding the 1 GB lab binlog (``make bench-data``) as a symlink, plus the small
   binlogs of the ``replication-gtid`` fixture as further series, 100 files at least. The local
   engine with 1 and 2 workers, ``binlogkit verify`` over the same files with the same workers,
   and the Spark job in local[2] (after session start), in GB/s; a projection to 100 TB.
2. **Memory**: peak RSS of the local engine's parent (``getrusage`` in its own child process)
   and of the Spark driver on a real standalone cluster (a master and two 1-core workers on
   127.0.0.1, ``spark-submit`` in client mode; the driver's JVM and Python read from /proc
   VmHWM), on three archives of the same layout: ``--big-gb`` / 10 and ``--big-gb`` with the
   same 100 files (bytes x10), and 1000 small files (files x10).
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


def bench_merge(files: int, findings_every: int, trx_per_file: int, series: int | None = None) -> dict:
    import tracemalloc

    from binlogkit.audit.merge import by_directory, combine, merge_directory, plan_directory

    tracemalloc.start()
    series = series or max(1, files // 1000)
    sums = synthetic(files, trx_per_file=trx_per_file, series=series, findings_every=findings_every)
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
    return {"files": files, "series": series, "trx_per_file": trx_per_file, "findings": sum(result["counts"].values()),
            "seconds": dt, "peak_mb": peak / 1e6, "held_mb": held / 1e6, "summaries_mb": len(json.dumps(sums)) / 1e6}


# --- archives of symlinks ----------------------------------------------------------------------

def layout(tmp: Path, gb: float, min_files: int = 100) -> tuple[int, float]:
    """Symlinks to the 1 GB lab binlog, one series each, plus small series (the 16 binlogs of the
    replication-gtid fixture each) up to ``min_files`` files."""
    from fixtures import store

    small = sorted((store.materialize("replication-gtid") / "primary").glob("mariadb-bin.0*"))
    n_big = round(gb * 1e9 / BIG.stat().st_size)
    for k in range(n_big):
        d = tmp / f"big{k:03d}"
        d.mkdir()
        (d / "mariadb-bin.000001").symlink_to(BIG)
    k, files = 0, n_big
    while files < min_files:
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
    from binlogkit.reading.scan import scan
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


def _hwm_kb(pid: int) -> int:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/*/stat)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
                parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return out


def cluster_run(master: str, zip_: Path, archive: str, out: Path) -> dict:
    """spark-submit of the job on the standalone cluster (client mode: the driver runs here,
    executors on the workers; the driver's heap capped at 512 MB, Spark's smallest); the peak
    RSS (VmHWM) of the driver's JVM and of its Python, polled from /proc every 0.2 s until they
    end."""
    import pyspark

    submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    t = time.perf_counter()
    log, res = out.parent / f"{out.name}.log", out.parent / f"{out.name}.json"
    with open(log, "wb") as err, open(res, "wb") as stdout:  # files, not pipes: Spark logs a lot
        p = subprocess.Popen([str(submit), "--master", master, "--py-files", str(zip_), "--driver-memory", "512m",
                              "--conf", "spark.ui.enabled=false", "--conf", "spark.executor.memory=512m",
                              str(ROOT / "binlogkit" / "spark" / "jobs" / "audit.py"), archive, "--output", str(out), "--json"],
                             stdout=stdout, stderr=err, env=env, cwd=out.parent)
    peak: dict[int, tuple[str, int]] = {}
    while p.poll() is None:
        for pid in _tree(p.pid):
            try:
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            kind = "jvm" if exe == "java" else "python" if exe.startswith("python") else None
            if kind:
                peak[pid] = (kind, max(peak.get(pid, (kind, 0))[1], _hwm_kb(pid)))
        time.sleep(0.2)
    dt = time.perf_counter() - t
    stdout = res.read_text()
    if p.returncode not in (0, 1):
        raise SystemExit(f"spark-submit failed ({p.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
    doc = json.loads(stdout[stdout.index("{"):])
    mb = {k: max([v for kk, v in peak.values() if kk == k] + [0]) / 1024 for k in ("jvm", "python")}
    return {"seconds": dt, "jvm_mb": mb["jvm"], "python_mb": mb["python"], "counts": doc["counts"],
            "files": doc["files"], "result_kb": len(stdout) / 1024}


def child(*args: str) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), *args], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"bench child {args} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def memory(big_gb: float, *, spark: bool = True) -> None:
    """Peak RSS of the local engine's parent and of the Spark driver (standalone cluster: a
    master and two 1-core workers on this machine) on three archives: ``big_gb`` / 10 and
    ``big_gb`` with the same number of files (bytes x10), and 1000 small files (files x10)."""
    sizes = [("1x", big_gb / 10, 100), ("10x bytes", big_gb, 100), ("10x files", 0, 1000)]
    rows = []
    with tempfile.TemporaryDirectory() as top:
        top = Path(top)
        archives = []
        for label, gb, n in sizes:
            d = top / label.replace(" ", "-")
            d.mkdir()
            files, real_gb = layout(d, gb, n)
            archives.append((label, d, files, real_gb))
        print(f"\n== memory: peak RSS of the process that gathers the results, archives of symlinks")
        for label, d, files, gb in archives:
            a = child("local", str(d), "2")
            rows.append((label, files, gb, a))
            print(f"local engine (2 workers), {label:>9}: {files:>5} files, {gb:6.1f} GB: parent peak RSS "
                  f"{a['self_maxrss_mb']:4.0f} MB, {a['seconds']:5.0f} s ({gb / a['seconds']:.2f} GB/s)")
        if not spark:
            return
        sys.path.insert(0, str(ROOT / "scripts"))
        import spark_cluster

        from binlogkit.audit.pack import pack

        if not spark_cluster.java_ok():
            print("no Java runtime: the Spark cluster figures are skipped")
            return
        c = spark_cluster.start(top / "cluster", workers=2, cores=1)
        try:
            zip_ = pack(top / "binlogkit-audit.zip")
            for (label, d, files, gb), (_l, _f, _g, a) in zip(archives, rows):
                r = cluster_run(c.master_url, zip_, str(d), top / f"out-{d.name}")
                assert r["counts"] == a["counts"], (r["counts"], a["counts"])
                print(f"Spark standalone (2 x 1 core), {label:>9}: {files:>5} files, {gb:6.1f} GB: driver JVM peak RSS "
                      f"{r['jvm_mb']:4.0f} MB, driver Python {r['python_mb']:3.0f} MB, result {r['result_kb']:.0f} KB, "
                      f"{r['seconds']:5.0f} s ({gb / r['seconds']:.2f} GB/s, JVM start-up included)")
        finally:
            c.stop()
    print("goal: <= 300 MB each, and no growth with bytes (1x -> 10x bytes)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gb", type=float, default=20, help="throughput archive (GB)")
    ap.add_argument("--big-gb", type=float, default=100, help="memory archive (GB); 0 skips it")
    ap.add_argument("--merge-files", type=int, default=100_000)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--only", choices=["throughput", "memory", "merge"])
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # figures as they come, also through make | tee
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
        memory(args.big_gb, spark=not args.no_spark)
    if args.only in (None, "merge"):
        print("\n== merge over synthetic summaries (1 GiB per file; one series, in its own directory, per 1000 "
              "files; the last row: all in one series, what one executor merges for a single huge server)")
        n = args.merge_files
        for files, every, trx, series in [(n // 100, 0, 50_000, None), (n // 10, 0, 50_000, None), (n, 0, 50_000, None),
                                          (n, 0, 5_000_000, None), (n, 100, 50_000, None), (n, 10, 50_000, None),
                                          (n, 0, 50_000, 1)]:
            r = bench_merge(files, every, trx, series)
            print(f"{r['files']:>7,} files ({r['files'] / 1024:,.0f} TiB) in {r['series']:>3} series, "
                  f"{r['trx_per_file']:>9,} trx/file, "
                  f"{r['findings']:>6,} findings: {r['seconds']:6.1f} s; summaries held {r['held_mb']:5.0f} MB "
                  f"(as JSON {r['summaries_mb']:.0f} MB), peak with the merge {r['peak_mb']:5.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

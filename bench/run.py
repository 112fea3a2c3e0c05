"""Benchmarks: binlogkit against mariadb-binlog and against a plain read of the same bytes.

    make bench                 # makes bench/data first if missing (a ~1 GB binlog, real server)
    python bench/run.py [FILE] [--quick]

Every command runs as a subprocess writing to /dev/null, so times include start-up and output
formatting; the best of ``--repeat`` runs is kept, with the file in the page cache (a warm-up
read comes first). Peak RSS is the child's ru_maxrss. Ratios are computed in the same run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def plain_read(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass


def run(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one subprocess run, output to /dev/null (the RSS is
    that child's own, from wait4)."""
    t = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
    dt = time.perf_counter() - t
    return dt, usage.ru_maxrss


# what a user's shell does not set: unbuffered stdout changes how much Python writes at a time
USER_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}
SMALL = ROOT / "fixtures" / "samples" / "mariadb-11.8" / "mariadb-bin.000001"   # 64 KB: start-up


def cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) of one subprocess run, output to /dev/null: on a shared
    machine the measure to compare (wall time moves with the load). Bytecode compiled and
    stdout buffered, as an installed package runs."""
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull, env=USER_ENV)
        _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def cpu_table(title: str, cmds: dict[str, list[str]], repeat: int) -> dict[str, float]:
    """CPU time (user+sys) of each command, interleaved runs, the best of each, printed against
    the first command (the server's tool) and the last (a plain read, cat), with the load
    average; returns the best times."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            times[name].append(cpu(cmd))
    best_of = {name: min(t) for name, t in times.items()}
    names = list(cmds)
    ref, read = best_of[names[0]], best_of[names[-1]]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{title}, CPU time (user+sys), best of {repeat} interleaved runs; load average {load}")
    print(f"{'command':<46} {'CPU s':>8} {'vs tool':>8} {'vs read':>8}  runs")
    for name, t in best_of.items():
        runs = " ".join(f"{x:.2f}" for x in times[name])
        print(f"{name:<46} {t:>8.2f} {t / ref:>8.2f} {t / read if read else 0:>8.1f}  {runs}")
    return best_of


def replay_bench(path: Path, bk: str, oracle: str, repeat: int) -> float:
    """Replayable decode (the default: BINLOG blocks) against the server's tool's default and a
    plain read (cat), CPU time, interleaved runs, the best of each; the issue's goal is
    binlogkit / tool <= 0.5; the start-up part is binlogkit's time on a 64 KB file. Returns that
    ratio."""
    cmds = {"mariadb-binlog FILE": [oracle, str(path)],
            "binlogkit decode FILE": [bk, "decode", str(path)],
            "binlogkit decode FILE (no C loop)": ["env", "BINLOGKIT_NO_FASTDECODE=1", bk, "decode", str(path)],
            "binlogkit decode SMALL (start-up)": [bk, "decode", str(SMALL)],
            "cat FILE (plain read)": ["cat", str(path)]}
    best_of = cpu_table("replayable decode", cmds, repeat)
    ratio = best_of["binlogkit decode FILE"] / best_of["mariadb-binlog FILE"]
    print(f"replayable decode / mariadb-binlog (CPU): {ratio:.2f} (goal <= 0.5)", flush=True)
    return ratio


def verbose_bench(path: Path, bk: str, oracle: str, repeat: int, slow: bool = True) -> float:
    """decode -v (replayable, the `###` rows after each BINLOG block, as the tool's -v) and -vv
    (the type comments too, against the tool's -vv), and decode --json -v (the listing's JSON lines
    with rows, written in the C loop), against `mariadb-binlog -v` and a plain read, CPU time,
    interleaved runs; the issue's goals: decode -v / tool <= 0.5, decode --json -v <= 1.
    ``slow``: the Python path's decode -v too (BINLOGKIT_NO_FASTDECODE). Returns that ratio."""
    cmds = {"mariadb-binlog -v FILE": [oracle, "-v", str(path)],
            "mariadb-binlog -vv FILE": [oracle, "-vv", str(path)],
            "binlogkit decode -v FILE": [bk, "decode", "-v", str(path)],
            "binlogkit decode -vv FILE": [bk, "decode", "-vv", str(path)],
            "binlogkit decode --json -v FILE": [bk, "decode", "--json", "-v", str(path)]}
    if slow:
        cmds["binlogkit decode -v FILE (no C loop)"] = ["env", "BINLOGKIT_NO_FASTDECODE=1", bk, "decode", "-v", str(path)]
    cmds["cat FILE (plain read)"] = ["cat", str(path)]
    best_of = cpu_table("decode -v", cmds, repeat)
    ref = best_of["mariadb-binlog -v FILE"]
    ratio = best_of["binlogkit decode -v FILE"] / ref
    print(f"decode -v / mariadb-binlog -v (CPU): {ratio:.2f} (goal <= 0.5); "
          f"decode -vv / mariadb-binlog -vv: "
          f"{best_of['binlogkit decode -vv FILE'] / best_of['mariadb-binlog -vv FILE']:.2f}; "
          f"decode --json -v / mariadb-binlog -v: {best_of['binlogkit decode --json -v FILE'] / ref:.2f}", flush=True)
    return ratio


def best(cmd: list[str], repeat: int) -> tuple[float, int]:
    runs = [run(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def rss_of(cmd: list[str]) -> int:
    """Peak RSS of one run, measured in a fresh child so earlier children do not mask it."""
    code = ("import resource,subprocess,os,sys;"
            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True).stdout
    return int(out.strip() or 0)


def timed_rss(cmd: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) and exit code of one run, in a fresh child (long commands:
    run once)."""
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def flashback_bench(path: Path, bk: str, oracle: str, mb: float) -> None:
    """The undo of every row change of the file (its DDL left out), once each: binlogkit's binlog
    output next to mariadb-binlog --flashback (base64 BINLOG statements to /dev/null). (--sql needs
    binlog_row_metadata=FULL, which the benchmark binlog does not have.)"""
    import tempfile

    with tempfile.TemporaryDirectory(dir=ROOT / "bench" / "data") as tmp:
        runs = [("mariadb-binlog --flashback", [oracle, "--flashback", str(path)]),
                ("binlogkit flashback", [bk, "flashback", str(path), "--skip-statements", "--no-check-later",
                                        "-o", f"{tmp}/undo.bin"])]
        print(f"\nflashback of the whole file ({mb:,.0f} MB), one run each")
        print(f"{'command':<42} {'seconds':>8} {'MB/s':>7} {'peak RSS MB':>12} {'vs oracle':>10}")
        ref = None
        for name, cmd in runs:
            t, rss, rc = timed_rss(cmd)
            ref = ref or t
            print(f"{name:<42} {t:>8.2f} {mb / t:>7.0f} {rss / 1024:>12.0f} {t / ref:>10.2f}"
                  + (f"  (exit {rc})" if rc else ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "bench" / "data" / "mariadb-bin.000001")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--decode-only", action="store_true",
                    help="only the decode / verify lines (and decode_files rows/s), not transactions, recover, audit")
    ap.add_argument("--quick", action="store_true", help="first 100 MB only")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark measurement")
    ap.add_argument("--quick-rows", action="store_true", help="skip decode -v and decode -v --json")
    ap.add_argument("--no-flashback", action="store_true", help="skip the flashback of the whole file")
    ap.add_argument("--replay-only", action="store_true",
                    help="only replayable decode vs mariadb-binlog and a plain read (CPU time)")
    ap.add_argument("--verbose-only", action="store_true",
                    help="only decode -v / -vv / --json -v vs mariadb-binlog -v and a plain read (CPU time)")
    ap.add_argument("--no-slow-rows", action="store_true", help="skip decode -v in pure Python and decode -v --json")
    args = ap.parse_args(argv)
    path = args.file
    if not path.exists():
        print("no benchmark data: run `make bench-data` first (a ~1 GB binlog from a real server)", file=sys.stderr)
        return 2
    oracle = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    bk = str(BIN / "binlogkit") if (BIN / "binlogkit").exists() else "binlogkit"
    mb = path.stat().st_size / 1e6
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "binlogkit")], env=USER_ENV, check=False)
    plain_read(path)
    t0 = time.perf_counter()
    plain_read(path)
    t_read = time.perf_counter() - t0
    rows = []
    if not args.verbose_only:
        replay_bench(path, bk, oracle, max(args.repeat, 3))
    if not args.replay_only:
        verbose_bench(path, bk, oracle, max(args.repeat, 3), slow=not args.no_slow_rows)
    if args.replay_only or args.verbose_only:
        return 0

    def line(name, cmd, ref=None):
        t, rss = best(cmd, args.repeat)
        rows.append((name, t, rss, ref))
        vs = f"{t / ref:.2f}" if ref else "-"
        print(f"  measured: {name:<42} {t:8.2f} s  {rss / 1024:6.0f} MB  vs oracle {vs}", flush=True)
        return t

    t_verify_o = line("mariadb-binlog --verify-binlog-checksum", [oracle, "--verify-binlog-checksum", str(path)])
    t_default_o = line("mariadb-binlog", [oracle, str(path)])
    t_verbose_o = None if args.quick_rows else line("mariadb-binlog -v", [oracle, "-v", "--base64-output=decode-rows", str(path)])
    # C loop (binlogkit/_fastdecode.c) vs the Python path with only the row-text accelerator
    # (BINLOGKIT_NO_FASTDECODE: the state before it) vs no C at all (BINLOGKIT_PURE_PYTHON)
    before = ["env", "BINLOGKIT_NO_FASTDECODE=1", bk]
    pure = ["env", "BINLOGKIT_PURE_PYTHON=1", bk]
    t_verify = line("binlogkit verify", [bk, "verify", str(path)], t_verify_o)
    line("binlogkit verify (no C loop)", [*before, "verify", str(path)], t_verify_o)
    # the default is replayable (BINLOG blocks, as mariadb-binlog's default); the listing is
    # --base64-output=decode-rows (the C loop), compared with the same default run of the tool
    line("binlogkit decode (replayable, default)", [bk, "decode", str(path)], t_default_o)
    line("binlogkit decode (replayable, no C loop)", [*before, "decode", str(path)], t_default_o)
    listing = "--base64-output=decode-rows"
    line("binlogkit decode --base64-output=decode-rows", [bk, "decode", listing, str(path)], t_default_o)
    line("binlogkit decode --base64-output=decode-rows (no C loop)", [*before, "decode", listing, str(path)], t_default_o)
    line("binlogkit decode --base64-output=decode-rows (pure Python)", [*pure, "decode", listing, str(path)], t_default_o)
    line("binlogkit decode --json", [bk, "decode", "--json", str(path)], t_default_o)
    line("binlogkit decode --json (no C loop)", [*before, "decode", "--json", str(path)], t_default_o)
    line("binlogkit decode --json (pure Python)", [*pure, "decode", "--json", str(path)], t_default_o)
    t_trx = None if args.decode_only else line("binlogkit transactions --json", [bk, "transactions", "--json", str(path)], t_verify_o)
    if t_verbose_o is not None:
        line("binlogkit decode -v", [bk, "decode", "--base64-output=decode-rows", "-v", str(path)], t_verbose_o)
        line("binlogkit decode -v (no C loop)", [*before, "decode", "--base64-output=decode-rows", "-v", str(path)],
             t_verbose_o)
        if not args.no_slow_rows:
            line("binlogkit decode -v (pure Python)", [*pure, "decode", "--base64-output=decode-rows", "-v", str(path)],
                 t_verbose_o)
            line("binlogkit decode -v --json", [bk, "decode", "-v", "--json", str(path)], t_verbose_o)
    print(f"file: {path} ({mb:,.0f} MB); plain read {t_read:.3f} s ({mb / t_read:,.0f} MB/s)")
    print(f"{'command':<42} {'seconds':>8} {'MB/s':>7} {'peak RSS MB':>12} {'vs read':>8} {'vs oracle':>10}")
    for name, t, rss, ref in rows:
        vs = f"{t / ref:.2f}" if ref else "-"
        print(f"{name:<42} {t:>8.2f} {mb / t:>7.0f} {rss / 1024:>12.0f} {t / t_read:>8.1f} {vs:>10}")
    sys.path.insert(0, str(ROOT))
    from binlogkit.api import decode_files

    def rows_per_second():
        n = 0
        for ev in decode_files([path], rows=True):
            n += len(getattr(ev, "rows", None) or ())
        return n
    t = time.perf_counter()
    n_rows = rows_per_second()
    t = time.perf_counter() - t
    print(f"in-process: decode_files(rows=True) {n_rows:,} rows in {t:.2f} s = {n_rows / t:,.0f} rows/s")
    if args.decode_only:
        return 0
    print(f"transactions / verify (commands, with output): {t_trx / t_verify:.2f}")
    if not args.no_flashback:
        flashback_bench(path, bk, oracle, mb)
    from binlogkit.reading.scan import scan
    from binlogkit.transactions import group_files

    def inproc(fn):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)
    t_scan = inproc(lambda: scan(path))
    t_group = inproc(lambda: sum(1 for _ in group_files([path])))
    print(f"in-process: scan {t_scan:.2f} s, transaction grouping {t_group:.2f} s, "
          f"grouping / scan {t_group / t_scan:.2f} (goal <= 1.5)")
    # recover: a relay directory whose tail file is the benchmark file
    import tempfile

    from binlogkit.recover import plan_recovery
    with tempfile.TemporaryDirectory() as tmp:
        relay = Path(tmp)
        (relay / "relay-bin.000001").symlink_to(path.resolve())
        (relay / "relay-bin.index").write_text("./relay-bin.000001\n")
        t_rec = inproc(lambda: plan_recovery(relay, mode="position"))
    print(f"recover plan over a {mb / 1000:.2f} GB relay log: {t_rec:.2f} s = {t_rec / (mb / 1000):.2f} s per GB "
          f"(goal <= 1 s per GB)")
    # audit: an archive of 4 series whose files are the benchmark file (symlinks)
    from binlogkit.audit import run_local
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(4):
            d = Path(tmp) / f"server{k}"
            d.mkdir()
            (d / "mariadb-bin.000001").symlink_to(path.resolve())
        gb = 4 * mb / 1000
        for jobs in (1, 2):
            t_aud = inproc(lambda: run_local([tmp], jobs=jobs))
            print(f"audit, local engine, {jobs} worker(s): {gb:.1f} GB in {t_aud:.2f} s = {gb / t_aud:.2f} GB/s")
        if not args.no_spark:
            try:
                from binlogkit.spark.jobs import audit as job
                t0 = time.perf_counter()
                spark = job.session("local[2]")
                t_start = time.perf_counter() - t0
                import contextlib, io
                t1 = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    job.main(spark, [tmp])
                t_sp = time.perf_counter() - t1
                spark.stop()
                print(f"audit, Spark local[2]: {t_sp:.2f} s after a {t_start:.1f} s session start "
                      f"= {gb / t_sp:.2f} GB/s")
            except ImportError:
                print("audit, Spark: pyspark is not installed (pip install -e '.[spark]')")
    return 0


if __name__ == "__main__":
    sys.exit(main())

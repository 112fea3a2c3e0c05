"""``make bench-pull``: ``binlogkit pull --until-end`` against ``mariadb-binlog
--read-from-remote-server --raw`` pulling the same binlog from the same real server over
loopback, in the same run.

    python bench/pull.py [FILE] [--repeat 3]
    python bench/pull.py --make-mb 256     # build a smaller binlog with the bench-data workload
    python bench/pull.py --kind mysql-9.7 --mysql-mb 200   # a MySQL 9.7 primary (its own binlog)

The server is a lab ``mariadbd`` whose datadir is given FILE as its first binlog (copied in
before it starts; it then opens a second, empty one). Each client writes into a fresh folder on
the same disk; the clients take turns, ``--repeat`` rounds; every copy is checked with cmp.
With ``--kind mysql-9.7`` the primary is the lab's MySQL 9.7 (its chroot), which cannot serve
a MariaDB binlog: it writes its own first (``--mysql-mb``: 1 MB blob rows and batches of small
rows, row-based, GTIDs on), then rotates; the oracle is the chroot's ``mysqlbinlog --raw``, and
both clients log in as ``repl`` (caching_sha2_password) and take TLS as they do by default.
Each run's wall time and the client's CPU time (user+sys of the child process, from
``wait4``) are kept; the medians are printed with the ratio to mariadb-binlog's. On a shared
machine the CPU ratio is the one to trust (the wall time includes waiting for the disk, for the
server and for the other processes); the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.lab.pull_lab import password_file, pull_cmd  # noqa: E402
from fixtures.lab.kinds import kind as kind_of  # noqa: E402
from fixtures.lab.topology import REPL_PASSWORD, REPL_USER, Lab, first_binlog, grant_replication  # noqa: E402


def mysql_workload(p, mb: int) -> None:
    """About ``mb`` MB of binlog on a MySQL primary: 1 MB blob rows (one a transaction) and
    batches of 1,000 small rows, then a rotation (the first file closed, as the bench file is)."""
    p.execute("CREATE DATABASE IF NOT EXISTS bench",
              "CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, s VARCHAR(64), b LONGBLOB)")
    small = ",".join(f"({i}, 'row {i} of a batch of small rows', NULL)" for i in range(1000))
    for i in range(mb * 3 // 4):
        p.execute(f"INSERT INTO bench.t (k, s, b) VALUES ({i}, 'blob', REPEAT(LPAD({i}, 64, 'x'), 16384))")
        if i % 3 == 0:
            p.execute(f"INSERT INTO bench.t (k, s, b) VALUES {small}")
    p.execute("FLUSH BINARY LOGS")


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one run of ``cmd``."""
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped: Popen must not wait again
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {err.read().decode(errors='replace')[-2000:]}")
    return dt, usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "bench" / "data" / "mariadb-bin.000001")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bytecode", action="store_true",
                    help="let the pull children read and write compiled bytecode (in a folder of their own, "
                         "PYTHONPYCACHEPREFIX), as an installed package does, even where the environment sets "
                         "PYTHONDONTWRITEBYTECODE (this machine does: binlogkit is then compiled at every start)")
    ap.add_argument("--base-tree", type=Path,
                    help="also run pull from this checkout (another revision, its C modules built): "
                         "rows 'base ...', in turns with the others, for a before/after in one run")
    ap.add_argument("--only", help="comma-separated labels' first words after 'binlogkit pull' (off,trx,none)")
    ap.add_argument("--make-mb", type=int, help="build a binlog of this size first (bench-data workload)")
    ap.add_argument("--kind", default="mariadb-10.11", help="the lab server kind (fixtures/lab/kinds.py)")
    ap.add_argument("--mysql-mb", type=int, default=200, help="with a MySQL kind: MB of binlog it writes first")
    args = ap.parse_args(argv)
    kind = kind_of(args.kind)
    if kind.flavor == "mysql":
        if not kind.available():
            print(f"no {kind.name} chroot: scripts/lab-chroot.sh {kind.name}", file=sys.stderr)
            return 2
        work = Path(tempfile.mkdtemp(prefix="bench-pull-", dir=kind.lab_dir()))   # the chroot sees it
        os.chmod(work, 0o755)
        try:
            return run_mysql(args, kind, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix="binlogkit-bench-pull-"))
    try:
        src = args.file
        write_rate = None
        if args.make_mb:
            from fixtures.lab.bench_data import make_bench_data

            out = ROOT / "bench" / f"data-{args.make_mb}mb"   # kept (not committed) for the next run
            t = time.perf_counter()
            fresh = not (out / "bench-data.json").exists()
            src = make_bench_data(out, args.make_mb)
            if fresh:
                write_rate = src.stat().st_size / 1e6 / (time.perf_counter() - t)
        if not src.exists():
            print("no benchmark data: run `make bench-data` first, or give --make-mb N", file=sys.stderr)
            return 2
        mb = src.stat().st_size / 1e6
        with Lab(work / "lab") as lab:
            p = lab.server("bench-primary", 1, max_binlog_size=1 << 30)
            p.install()
            shutil.copy(src, p.datadir / "mariadb-bin.000001")
            (p.datadir / "mariadb-bin.index").write_text("./mariadb-bin.000001\n")
            p.start()
            grant_replication(p)
            version = p.var("version")
            pw = password_file(work)
            oracle = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
            with open(p.datadir / "mariadb-bin.000001", "rb") as fh:  # page cache warm
                while fh.read(1 << 24):
                    pass
            clients = [
                ("mariadb-binlog --raw", lambda d: [oracle, "--read-from-remote-server", "--raw", "--host=127.0.0.1",
                                                    f"--port={p.port}", f"--user={REPL_USER}",
                                                    f"--password={REPL_PASSWORD}", f"--result-file={d}/",
                                                    "mariadb-bin.000001"]),
            ] + [(f"binlogkit pull --sync {mode}",
                  lambda d, mode=mode: pull_cmd(p, Path(d), "--until-end", "--sync", mode, pwfile=pw))
                 for mode in (args.only.split(",") if args.only else ["none", "off", "trx"])]
            if args.base_tree:
                clients += [(f"base pull --sync {mode}",
                             lambda d, mode=mode: pull_cmd(p, Path(d), "--until-end", "--sync", mode, pwfile=pw))
                            for mode in (args.only.split(",") if args.only else ["off", "trx"]) if mode != "none"]
            runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in clients}
            env = None
            if args.bytecode:
                env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
                env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
                timed(clients[1][1](str(work / "warm")), env)   # compiles once
                shutil.rmtree(work / "warm")
            loads = [os.getloadavg()[0]]
            for i in range(args.repeat):
                for label, make in clients:
                    d = work / f"out-{i}"
                    d.mkdir()
                    base = label.startswith("base ")
                    cenv = dict(env or os.environ, PYTHONPATH=str(args.base_tree)) if base else env
                    runs[label].append(timed(make(str(d)), cenv if "pull" in label else None,
                                             args.base_tree if base else ROOT))
                    same = filecmp.cmp(src, d / "mariadb-bin.000001", shallow=False)
                    if not same and "pull" in label:
                        # the copy's Format_description keeps the in-use flag of the primary's
                        # active file only; 000001 is closed on the server, so it must be equal
                        raise SystemExit(f"{label}: the copy differs from the primary's file")
                    shutil.rmtree(d)
                loads.append(os.getloadavg()[0])
        compiled = ("bytecode cached" if args.bytecode or not os.environ.get("PYTHONDONTWRITEBYTECODE")
                    else "PYTHONDONTWRITEBYTECODE set: binlogkit compiled at each start")
        head = (f"pulling {mb:,.0f} MB over loopback from MariaDB {version}; {args.repeat} runs each, medians; "
                f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs; {compiled}")
        if write_rate:
            head += f"\nthe primary wrote this binlog at {write_rate:,.1f} MB/s (the bench-data workload)"
        report(runs, head, mb)   # the first client, mariadb-binlog --raw, is the reference
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_mysql(args, kind, work: Path) -> int:
    """The same turns against a MySQL primary that wrote its own binlog (``--mysql-mb``)."""
    with Lab(work / "lab", kind=kind) as lab:
        p = lab.server("bench-primary", 1, max_binlog_size=1 << 30)
        p.start()
        grant_replication(p)
        t = time.perf_counter()
        mysql_workload(p, args.mysql_mb)
        made = time.perf_counter() - t
        name = first_binlog(p)
        src = p.datadir / name
        mb = src.stat().st_size / 1e6
        version = p.var("version")
        pw = password_file(work)
        oracle = kind.binary(kind.binlog_tool)
        with open(src, "rb") as fh:
            while fh.read(1 << 24):
                pass
        clients = [
            (f"{Path(oracle).name} --raw", lambda d: kind.argv(
                oracle, "--read-from-remote-server", "--raw", "--host=127.0.0.1", f"--port={p.port}",
                f"--user={REPL_USER}", f"--password={REPL_PASSWORD}", f"--result-file={kind.inner(Path(d))}/", name)),
        ] + [(f"binlogkit pull --sync {mode}",
              lambda d, mode=mode: pull_cmd(p, Path(d), "--until-end", "--sync", mode, pwfile=pw))
             for mode in (args.only.split(",") if args.only else ["none", "off", "trx"])]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} if args.bytecode else None
        if env is not None:
            env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
            timed(clients[1][1](str(work / "warm")), env)
            shutil.rmtree(work / "warm")
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in clients}
        loads = [os.getloadavg()[0]]
        for i in range(args.repeat):
            for label, make in clients:
                d = work / f"out-{i}"
                d.mkdir()
                os.chmod(d, 0o777)
                runs[label].append(timed(make(str(d)), env if "pull" in label else None))
                if not filecmp.cmp(src, d / name, shallow=False):
                    raise SystemExit(f"{label}: the copy differs from the primary's file")
                shutil.rmtree(d)
            loads.append(os.getloadavg()[0])
    report(runs, f"pulling {mb:,.0f} MB over loopback (TLS) from MySQL {version} (written in {made:.0f} s); "
                 f"{args.repeat} runs each, medians; load average (1 min) {min(loads):.1f}-{max(loads):.1f} on "
                 f"{os.cpu_count()} CPUs; " + ("bytecode cached" if args.bytecode else "as the environment says"), mb)
    return 0


def report(runs: dict[str, list[tuple[float, float]]], head: str, mb: float) -> None:
    ref = next(iter(runs))
    ref_wall = statistics.median(w for w, _ in runs[ref])
    ref_cpu = statistics.median(c for _, c in runs[ref])
    print(head)
    print(f"{'client':28s} {'wall s':>7s} {'MB/s':>7s} {'x':>6s} {'CPU s':>7s} {'x':>6s}   runs (wall/CPU)")
    for label, rs in runs.items():
        wall = statistics.median(w for w, _ in rs)
        cpu = statistics.median(c for _, c in rs)
        each = " ".join(f"{w:.2f}/{c:.2f}" for w, c in rs)
        print(f"{label:28s} {wall:7.2f} {mb / wall:7.1f} {wall / ref_wall:6.2f} {cpu:7.2f} {cpu / ref_cpu:6.2f}   {each}")
    ours = {label.split()[-1]: statistics.median(c for _, c in rs) / ref_cpu
            for label, rs in runs.items() if label.startswith("binlogkit pull --sync")}
    if ours:   # issue 34's goal, on the CPU column (the one to read on a shared machine)
        print("goal pull <= 1.2x the CPU of " + ref + ": " + ", ".join(
            f"--sync {mode} {x:.2f}x ({'met' if x <= 1.2 else 'not met'})" for mode, x in ours.items()))


if __name__ == "__main__":
    sys.exit(main())

"""``make bench-pull``: ``binlogkit pull --until-end`` against ``mariadb-binlog
--read-from-remote-server --raw`` pulling the same binlog from the same real server over
loopback, in the same run.

    python bench/pull.py [FILE] [--repeat 2]
    python bench/pull.py --make-mb 256     # build a smaller binlog with the bench-data workload

The server is a lab ``mariadbd`` whose datadir is given FILE as its first binlog (copied in
before it starts; it then opens a second, empty one). Each client writes into a fresh folder on
the same disk; the best of ``--repeat`` runs is kept; every copy is checked with cmp.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.lab.pull_lab import password_file, pull_cmd  # noqa: E402
from fixtures.lab.topology import REPL_PASSWORD, REPL_USER, Lab, grant_replication  # noqa: E402


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({res.returncode}): {res.stderr[-2000:]}")
    return dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "bench" / "data" / "mariadb-bin.000001")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--make-mb", type=int, help="build a binlog of this size first (bench-data workload)")
    args = ap.parse_args(argv)
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
            rows = {}
            for label, make in [
                ("mariadb-binlog --raw", lambda d: [oracle, "--read-from-remote-server", "--raw", "--host=127.0.0.1",
                                                    f"--port={p.port}", f"--user={REPL_USER}",
                                                    f"--password={REPL_PASSWORD}", f"--result-file={d}/",
                                                    "mariadb-bin.000001"]),
                ("binlogkit pull --sync off", lambda d: pull_cmd(p, Path(d), "--until-end", "--sync", "off",
                                                                 pwfile=pw)),
                ("binlogkit pull --sync trx", lambda d: pull_cmd(p, Path(d), "--until-end", "--sync", "trx",
                                                                 pwfile=pw)),
            ]:
                times = []
                for i in range(args.repeat):
                    d = work / f"out-{len(rows)}-{i}"
                    d.mkdir()
                    times.append(timed(make(str(d))))
                    same = filecmp.cmp(src, d / "mariadb-bin.000001", shallow=False)
                    if not same and "pull" in label:
                        # the copy's Format_description keeps the in-use flag of the primary's
                        # active file only; 000001 is closed on the server, so it must be equal
                        raise SystemExit(f"{label}: the copy differs from the primary's file")
                    shutil.rmtree(d)
                rows[label] = min(times)
        ref = rows["mariadb-binlog --raw"]
        print(f"pulling {mb:,.0f} MB over loopback from MariaDB {version}")
        if write_rate:
            print(f"the primary wrote this binlog at {write_rate:,.1f} MB/s (the bench-data workload)")
        print(f"{'client':28s} {'seconds':>8s} {'MB/s':>8s} {'x mariadb-binlog':>17s}")
        for label, t in rows.items():
            print(f"{label:28s} {t:8.2f} {mb / t:8.1f} {t / ref:17.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

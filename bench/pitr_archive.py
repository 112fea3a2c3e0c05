"""How long `binlogkit pitr` plans, and how much memory it holds, as the archive grows.

    python bench/pitr_archive.py --files 50 200 --trx-per-file 3000      # make bench-pitr

Archives are clean MariaDB series written by ``fixtures.faults.generate`` (no faults; real
10.11 events cloned with new GTIDs, one second per transaction). For each size, three plans run
in a fresh process each (wall time; CPU time of it and its pool's workers, which a shared
machine disturbs less; its own peak RSS and that of its workers, ``ru_maxrss``):

* ``whole``:  from the first file to the last transaction (every file summarised, first and
  last file scanned),
* ``middle``: two files in the middle, by GTIDs (heads bisected, 2 files summarised),
* ``time``:   to a time in the middle, from the first file (the stop file found by bisection).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, sys, time
from binlogkit.pitr import From, Until, plan_pitr
args = json.loads(sys.argv[1])
t = time.perf_counter()
doc = plan_pitr([args["archive"]], From(**args["from"]), Until(**args["until"]), jobs=args["jobs"])
dt = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
rss = max(me.ru_maxrss, kids.ru_maxrss)
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"seconds": dt, "cpu": cpu, "rss_kb": rss, "reachable": doc["reachable"], "files": len(doc["files"]),
                  "transactions": doc["transactions"], "bytes": doc["bytes"]}))
"""


def make_archive(out: Path, files: int, trx: int, clock: int) -> None:
    """Written by a separate process: a child's ru_maxrss starts from its forking parent's RSS
    (Linux keeps the high-water mark across exec), so the bench's own process stays small."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[5]); from fixtures.faults import generate; "
            "generate(Path(sys.argv[1]), files=int(sys.argv[2]), trx_per_file=int(sys.argv[3]), seed=1, faults=(), "
            "clock=int(sys.argv[4]))")
    subprocess.run([sys.executable, "-c", code, str(out), str(files), str(trx), str(clock), str(ROOT)], check=True)


def run(archive: Path, frm: dict, until: dict, jobs: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"archive": str(archive), "from": frm,
                                                                    "until": until, "jobs": jobs})],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, nargs="*", default=[50, 200])
    ap.add_argument("--trx-per-file", type=int, default=3000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--big-file-trx", type=int, nargs="*", default=[],
                    help="also: one file of N transactions each, planned from its top to its last GTID "
                         "(memory must not grow with N)")
    a = ap.parse_args()

    clock = 1_795_000_000
    big_files(a.big_file_trx, a.jobs)
    for n in a.files:
        with tempfile.TemporaryDirectory(prefix="binlogkit-bench-pitr-") as tmp:
            arch = Path(tmp) / "archive"
            t = time.perf_counter()
            make_archive(arch, n, a.trx_per_file, clock)
            made = time.perf_counter() - t
            size = sum(f.stat().st_size for f in arch.glob("mariadb-bin.0*"))
            total = n * a.trx_per_file
            mid = n // 2
            cases = {
                "whole": ({"file": "mariadb-bin.000001", "position": 4}, {"gtids": f"0-1-{total}"}),
                "middle": ({"gtids": f"0-1-{(mid - 1) * a.trx_per_file}", "origin": "gtid"},
                           {"gtids": f"0-1-{(mid + 1) * a.trx_per_file}"}),
                "time": ({"file": "mariadb-bin.000001", "position": 4}, {"timestamp": clock + total // 2 + 7}),
            }
            print(f"archive: {n} files, {size / 1e6:,.0f} MB, {total:,} transactions (made in {made:.0f} s)")
            for name, (frm, until) in cases.items():
                r = run(arch, frm, until, a.jobs)
                print(f"  {name:<7} {r['seconds']:6.2f} s wall {r['cpu']:6.2f} s CPU  peak RSS {r['rss_kb'] / 1024:6.1f} MB  "
                      f"files {r['files']:>4}  transactions {r['transactions']:>9,}  bytes {r['bytes']:>13,}  "
                      f"reachable {r['reachable']}")


def big_files(sizes: list[int], jobs: int) -> None:
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="binlogkit-bench-pitr-") as tmp:
            arch = Path(tmp) / "archive"
            make_archive(arch, 2, n, 1_795_000_000)
            size = (arch / "mariadb-bin.000001").stat().st_size
            r = run(arch, {"file": "mariadb-bin.000001", "position": 4}, {"gtids": f"0-1-{n}"}, jobs)
            print(f"one file of {n:,} transactions ({size / 1e6:,.0f} MB): {r['seconds']:6.2f} s wall "
                  f"{r['cpu']:6.2f} s CPU  peak RSS {r['rss_kb'] / 1024:6.1f} MB  transactions {r['transactions']:,}")


if __name__ == "__main__":
    main()

"""Benchmarks: binlogkit against mariadb-binlog and against a plain read of the same bytes.

    make bench            # uses bench/data (make bench-data makes the ~1 GB binlog)
    python bench/run.py [FILE...]

Prints wall time, MB/s and ratios. Each measurement is the best of ``--repeat`` runs, with the
file in the page cache (a warm-up read comes first), so the ratios compare CPU work.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from binlogkit import open_binlog  # noqa: E402


def plain_read(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += len(chunk)
    return n


def binlogkit_walk(path: Path) -> int:
    return sum(1 for _ in open_binlog(str(path)))


def mariadb_binlog(path: Path) -> int:
    exe = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    with open(os.devnull, "wb") as devnull:
        subprocess.run([exe, "--skip-gtid-strict-mode", str(path)], stdout=devnull, stderr=devnull, check=False)
    return 0


def best(fn, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    files = args.files or sorted((ROOT / "bench" / "data").glob("mariadb-bin.0*"))
    if not files:
        print("no benchmark data: run `make bench-data` first (a ~1 GB binlog from a real server)",
              file=sys.stderr)
        return 2
    have_oracle = bool(shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog"))
    print(f"{'file':<28} {'MB':>8} {'read s':>8} {'walk s':>8} {'walk MB/s':>10} {'oracle s':>9} "
          f"{'walk/read':>10} {'walk/oracle':>12}")
    for path in files:
        size = path.stat().st_size / 1e6
        plain_read(path)
        t_read = best(plain_read, path, args.repeat)
        t_walk = best(binlogkit_walk, path, args.repeat)
        t_orc = best(mariadb_binlog, path, 1) if have_oracle else float("nan")
        print(f"{path.name:<28} {size:>8.1f} {t_read:>8.3f} {t_walk:>8.3f} {size / t_walk:>10.0f} "
              f"{t_orc:>9.3f} {t_walk / t_read:>10.1f} {t_walk / t_orc:>12.3f}")
    print("walk = binlogkit's reader: frame every event and verify its CRC32 (no body decoding);"
          " oracle = mariadb-binlog FILE > /dev/null")
    return 0


if __name__ == "__main__":
    sys.exit(main())

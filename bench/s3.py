"""Audit over object storage vs local disk: ``python bench/s3.py [--mb 400] [--jobs 2] [--sweep]``.

A clean archive of ``--mb`` MB (one generated series of two ~19 MB binlogs, ``fixtures.faults``,
repeated in as many folders as needed: one series per folder; hard links on disk) is audited
by ``binlogkit audit --jobs N --json`` from local disk and from a SeaweedFS S3 server on
loopback (``fixtures/lab/s3.py``) holding the same files, in the same run, alternately, best of
``--rounds``. Prints MB/s both ways and the ratio (goal: S3 >= 50 % of local). ``--sweep``
also tries other read-ahead settings (``BINLOGKIT_S3_BLOCK`` / ``BINLOGKIT_S3_CACHE``).

The machine may be shared (2 cores, other jobs): the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_archive(base: Path, mb: int) -> tuple[Path, int]:
    from fixtures.faults import generate

    seed = base / "seed"
    generate(seed, files=2, trx_per_file=60_000, faults=())
    (seed / "faults.json").unlink()
    one = sum(f.stat().st_size for f in seed.iterdir())
    copies = max(1, round(mb * 1e6 / one))
    arch = base / "archive"
    for k in range(copies):
        d = arch / f"s{k:03d}"
        d.mkdir(parents=True)
        for f in seed.iterdir():
            os.link(f, d / f.name)
    return arch, one * copies


def audit(target: str, jobs: int, env: dict) -> float:
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "binlogkit.cli", "audit", "--jobs", str(jobs), "--json", target],
                         capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"audit {target} exited {res.returncode}: {res.stderr[-2000:]}")
    doc = json.loads(res.stdout)
    assert doc["counts"]["error"] == 0 and doc["files"] > 0, doc["counts"]
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=400)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args()
    from fixtures.lab.s3 import SeaweedS3

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="binlogkit-bench-s3-") as tmp:
        arch, size = make_archive(Path(tmp), args.mb)
        with SeaweedS3(Path(tmp) / "seaweedfs") as server:
            env = dict(os.environ, **server.env())
            os.environ.update(server.env())
            server.make_bucket("bench")
            import s3fs

            fs = s3fs.S3FileSystem(default_block_size=64 << 20)
            t = time.perf_counter()
            for f in sorted(arch.rglob("mariadb-bin.*")):
                fs.put_file(str(f), f"bench/archive/{f.relative_to(arch).as_posix()}")
            up = time.perf_counter() - t
            print(f"archive: {size / 1e6:.0f} MB in {len(list(arch.iterdir()))} series; "
                  f"uploaded in {up:.1f} s ({size / 1e6 / up:.0f} MB/s)", flush=True)
            settings = [(None, None)]
            if args.sweep:
                settings += [(str(b << 20), c) for b in (2, 8, 32) for c in ("background", "readahead", "bytes")]
            url = "s3://bench/archive/"
            audit(str(arch), args.jobs, env)  # page cache warm for both sides
            for block, cache in settings:
                e = dict(env)
                if block:
                    e.update(BINLOGKIT_S3_BLOCK=block, BINLOGKIT_S3_CACHE=cache)
                local = s3 = float("inf")
                for _ in range(args.rounds):
                    local = min(local, audit(str(arch), args.jobs, e))
                    s3 = min(s3, audit(url, args.jobs, e))
                what = f"block {int(block) >> 20} MiB, cache {cache}" if block else "defaults"
                print(f"audit --jobs {args.jobs} [{what}]: local {size / 1e6 / local:.1f} MB/s ({local:.2f} s), "
                      f"S3 {size / 1e6 / s3:.1f} MB/s ({s3:.2f} s), S3/local = {local / s3:.0%}  "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()

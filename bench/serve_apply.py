"""A replica rebuilt from scratch catching up from the archive through ``binlogkit serve`` with
parallel apply (MariaDB ``slave_parallel_threads=4``, optimistic), against ``binlogkit decode
ARCHIVE | mariadb`` into another fresh server: both times, both servers' tables checked equal
to the primary's.

    python bench/serve_apply.py [--trx 5000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.lab import workload  # noqa: E402
from fixtures.lab.pull_lab import primary_binlogs, settle, start_primary  # noqa: E402
from fixtures.lab.replay_campaign import client_argv  # noqa: E402
from fixtures.lab.serve_lab import ServeProcess, checksums, point_replica  # noqa: E402
from fixtures.lab.topology import Lab, wait_replica  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trx", type=int, default=5000)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-apply-"))
    try:
        with Lab(tmp / "lab") as lab:
            p = start_primary(lab)
            workload.multi(p)
            workload.small(p, a.trx, start=100_000)
            settle(p)
            names = primary_binlogs(p)
            archive = tmp / "archive"
            archive.mkdir()
            for n in names:
                shutil.copy(p.datadir / n, archive / n)
            size = sum((archive / n).stat().st_size for n in names)
            target = p.var("gtid_binlog_pos")
            want = checksums(p)
            serve = ServeProcess(archive, tmp)
            try:
                r = lab.server("parallel", 2, slave_parallel_threads=4, slave_parallel_mode="optimistic").start()
                t0 = time.monotonic()
                point_replica(r, serve.port, gtid=True, cert=None)
                res = wait_replica(r, gtid_target=target, timeout=1800)
                t_serve = time.monotonic() - t0
                assert res["outcome"] == "caught_up", res
            finally:
                serve.stop()
            assert checksums(r) == want
            b = lab.server("piped", 3).start()
            t0 = time.monotonic()
            dec = subprocess.Popen([sys.executable, "-m", "binlogkit", "decode", *[str(archive / n) for n in names]],
                                   stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            cli = subprocess.run(client_argv(b), stdin=dec.stdout, capture_output=True)
            dec.wait()
            t_pipe = time.monotonic() - t0
            assert dec.returncode == 0 and cli.returncode == 0, cli.stderr[-1000:]
            assert checksums(b) == want
            print(f"{size / 1e6:.1f} MB, {a.trx} small transactions, "
                  f"load {os.getloadavg()[0]:.2f}")
            print(f"  serve -> replica, slave_parallel_threads=4 (optimistic): {t_serve:.2f} s")
            print(f"  binlogkit decode | mariadb:                            {t_pipe:.2f} s")
            print(f"  ratio serve / pipe: {t_serve / t_pipe:.2f}x; both servers' tables equal the primary's")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Follower benchmark: ``binlogkit export --follow`` keeping a Delta (or Iceberg) mirror of a lab
primary that takes a steady stream of row changes, fed by ``binlogkit pull``.

    make bench-follow       # or: python bench/follow.py [--rate 5000] [--seconds 60] [--format delta]

The host's MariaDB (fixtures/lab; binlog_row_metadata=FULL, 16 MB binlogs) takes multi-row
transactions (50 rows each: inserts, then updates of earlier rows) at ``--rate`` row changes per
second from one client; ``binlogkit pull`` copies its binlogs into a folder; the follower
(``--commit-interval 5``, ``--status-file``) applies them. The status file is sampled every 0.5 s:
its ``lag_seconds`` (how old the oldest transaction read but not committed is) gives p50 / p99 /
max. pull's own delay (primary -> folder) is not in it. At the end the follower gets SIGTERM; its
CPU (user+sys, from wait4) per row change is compared with a plain ``export`` of the same folder
(the local export's CPU per row change: a process of its own, start-up included, as the
follower's), once with its default batches (1,000 transactions) and once with as many batches as
the follower made (``--batch-transactions`` = the follower's transactions per batch: the same
commits, what the follower does beyond them). Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def load(server, rate: int, seconds: float, achieved: dict, halt: threading.Event) -> None:
    """``rate`` row changes per second for ``seconds``: transactions of 50 rows."""
    per = 50
    with server.connect() as conn, conn.cursor() as cur:
        t0 = time.monotonic()
        n, i = 0, 0
        while not halt.is_set() and time.monotonic() - t0 < seconds:
            if i % 3 == 2 and i > 3:
                lo = (i // 3 // 3 * 3) * per      # an insert transaction's rows (those of i % 3 != 2)
                cur.execute("UPDATE bench.t SET k = k + 1, v = CONCAT('u', id) WHERE id BETWEEN %s AND %s",
                            (lo, lo + per - 1))
            else:
                values = ",".join(f"({i * per + j}, {j}, 'row-{i}-{j}')" for j in range(per))
                cur.execute(f"INSERT INTO bench.t VALUES {values}")
            n += max(cur.rowcount, 0)       # the rows the statement changed
            conn.commit()
            i += 1
            ahead = n / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)
        achieved.update(rows=n, seconds=time.monotonic() - t0)


def pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))], 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--format", default="delta", choices=["delta", "iceberg"])
    args = ap.parse_args(argv)

    from fixtures.lab import Lab
    from fixtures.lab.pull_lab import kill9, start_primary, start_pull

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp, Lab(Path(tmp) / "lab") as lab:
        base = Path(tmp)
        folder, wh, status = base / "pulled", base / "wh", base / "status.json"
        primary = start_primary(lab, binlog_row_metadata="FULL", max_binlog_size=16 << 20)
        primary.execute("CREATE DATABASE bench", "CREATE TABLE bench.t (id INT PRIMARY KEY, k INT, v VARCHAR(64))")
        pull = start_pull(primary, folder)
        follower = subprocess.Popen([sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(wh),
                                     "--format", args.format, "--mirror", "--follow", "--commit-interval", "5",
                                     "--status-file", str(status), "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env)
        achieved: dict = {}
        halt = threading.Event()
        t = threading.Thread(target=load, args=(primary, args.rate, args.seconds, achieved, halt))
        t.start()
        lags: list[float] = []
        while t.is_alive():
            time.sleep(0.5)
            try:
                lags.append(json.loads(status.read_text())["lag_seconds"])
            except (OSError, ValueError, KeyError):
                pass
        t.join()
        time.sleep(8)                  # the last commit interval, and pull's last writes
        follower.send_signal(signal.SIGTERM)
        out = follower.stdout.read() if follower.stdout else ""
        _pid, rc, usage = os.wait4(follower.pid, 0)
        follower.returncode = rc
        follow_cpu = usage.ru_utime + usage.ru_stime
        summary = json.loads(out) if out.strip() else {}
        kill9(pull)

        def export(name: str, *extra: str) -> tuple[float, int, int | None]:
            """A plain export of the folder: its CPU (user+sys), rows and commits."""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            plain = subprocess.run([sys.executable, "-m", "binlogkit", "export", str(folder), "-o", str(base / name),
                                    "--format", args.format, "--mirror", "--json", *extra], capture_output=True,
                                   text=True, cwd=ROOT, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            doc = json.loads(plain.stdout) if plain.stdout.strip() else {}
            return ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), doc.get("rows", 0),
                    doc.get("commits"))
        # its default batches (1,000 transactions), then as many batches as the follower made
        plain_cpu, plain_rows, plain_commits = export("plain")
        per = max(1, -(-summary.get("transactions", 0) // max(1, summary.get("batches") or 1)))
        same_cpu, same_rows, same_commits = export("same", "--batch-transactions", str(per))
    rows = summary.get("rows", 0)
    doc = {"format": args.format, "target_rows_per_second": args.rate,
           "achieved_rows_per_second": round(achieved["rows"] / achieved["seconds"], 1),
           "seconds": round(achieved["seconds"], 1), "lag_samples": len(lags), "lag_p50": pct(lags, 50),
           "lag_p99": pct(lags, 99), "lag_max": max(lags) if lags else None,
           "follower_rows": rows, "follower_commits": summary.get("commits"), "follower_cpu_s": round(follow_cpu, 2),
           "follower_cpu_us_per_row": round(follow_cpu / rows * 1e6, 1) if rows else None,
           "export_rows": plain_rows, "export_commits": plain_commits, "export_cpu_s": round(plain_cpu, 2),
           "export_cpu_us_per_row": round(plain_cpu / plain_rows * 1e6, 1) if plain_rows else None,
           "export_same_batches_transactions": per, "export_same_batches_commits": same_commits,
           "export_same_batches_cpu_s": round(same_cpu, 2),
           "export_same_batches_cpu_us_per_row": round(same_cpu / same_rows * 1e6, 1) if same_rows else None}
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

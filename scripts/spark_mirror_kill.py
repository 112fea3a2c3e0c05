"""kill -9 of the Spark mirror backfill's driver, then a rerun: ``make spark-mirror-kill``.

For each trial, ``binlogkit export FIXTURE -o WH --format FMT --mirror --engine spark`` (local[2])
runs in its own session and is killed (SIGKILL to the driver and the JVM it started) at a
moment: ``cN`` when the N-th table commit appears on disk (Iceberg: a table's first new
metadata file, perhaps not yet in the catalog; Delta: a log entry), or after S seconds. Then,
with ``--rerun spark``, the backfill runs again (it commits the tables the killed run did not);
then the local run continues; the warehouse must equal a local build of the fixture, table by
table, row by row. Prints one line per trial; exit 1 when one differs.

    python scripts/spark_mirror_kill.py --format iceberg c1 c5 c13 [--rerun spark]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures import store  # noqa: E402


def rows(fmt: str, wh: Path) -> dict:
    from binlogkit.export.lake.mirror import open_sink

    sink = open_sink(fmt, str(wh))
    return {(d, n): sorted(repr(sorted(x.items())) for x in sink.read(d, n).to_pylist()) for d, n in sink.table_names()}


def main(argv=None) -> int:
    from binlogkit.export.lake import export_lake
    from binlogkit.export.lake.mirror import open_sink

    ap = argparse.ArgumentParser()
    ap.add_argument("moments", nargs="+", help="cN: at the N-th table commit; S: after S seconds")
    ap.add_argument("--format", dest="fmt", choices=("iceberg", "delta"), default="iceberg")
    ap.add_argument("--rerun", choices=("local", "spark"), default="local")
    a = ap.parse_args(argv)
    arch = str(store.materialize("row-types-full-metadata") / "primary")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "binlogkit", "export", arch, "--format", a.fmt, "--mirror", "--engine", "spark",
           "--spark-master", "local[2]", "--json"]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="spark-mirror-kill-") as tmp:
        base = Path(tmp)
        export_lake([arch], str(base / "local"), fmt=a.fmt, mirror=True)
        want = rows(a.fmt, base / "local")
        for i, moment in enumerate(a.moments):
            wh = base / f"t{i}"
            p = subprocess.Popen(cmd + ["-o", str(wh)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True, env=env)
            pattern = "types/*/metadata/00001-*.metadata.json" if a.fmt == "iceberg" else "types/*/_delta_log/*.json"
            if moment.startswith("c"):
                while p.poll() is None and len(list(wh.glob(pattern))) < int(moment[1:]):
                    time.sleep(0.01)
            else:
                time.sleep(float(moment))
            running = p.poll() is None
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            sink = open_sink(a.fmt, str(wh)) if wh.exists() else None
            committed = 0 if sink is None else sum(1 for d, n in sink.table_names() if sink.recorded(d, n))
            line = f"{moment}: {'killed' if running else 'finished first'}, {committed} tables committed"
            if a.rerun == "spark":
                r = subprocess.run(cmd + ["-o", str(wh)], capture_output=True, text=True, env=env)
                s = json.loads(r.stdout)
                line += (f"; backfill rerun exit {r.returncode}: {s['commits']} commits, "
                         f"{len(s['already_committed'])} left")
            export_lake([arch], str(wh), fmt=a.fmt, mirror=True)
            same = rows(a.fmt, wh) == want
            bad += not same
            print(f"{line}; then the local run: {'equal' if same else 'DIFFERENT'}", flush=True)
            shutil.rmtree(wh, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

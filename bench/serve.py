"""``binlogkit serve`` against the real primary: the time a replica's IO thread takes to fetch the
same binlogs (relay log written, SQL thread not started) from the primary and from serve over
the primary's files, in the same run, on loopback, TLS off on both sides.

    python bench/serve.py [--mb 100] [--repeat 3]
    python bench/serve.py --data bench/data [--repeat 3]     # make bench-data's ~1 GB binlog

The primary is a lab MariaDB 10.11 that writes ``--mb`` MB of binlog (1 MB rows and batches of
small rows, as bench-data's workload); two replicas take turns fetching it (RESET SLAVE between
rounds); wall times and their medians are printed with the ratio to the primary's (the goal:
at most 1.2x). With ``--data`` the binlogs of that folder (``make bench-data``: one ~1 GB file of
mixed events and a small one) become the primary's own (copied into its datadir before a
restart) and serve's archive, instead of ``--mb`` written ones. On a shared machine the numbers
move with the load (printed with them: the 1-minute load average before and after).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.lab import workload  # noqa: E402
from fixtures.lab.oracle import slave_status  # noqa: E402
from fixtures.lab.pull_lab import primary_binlogs, settle, start_primary  # noqa: E402
from fixtures.lab.serve_lab import ServeProcess  # noqa: E402
from fixtures.lab.topology import Lab  # noqa: E402


def fetch(replica, port: int, first: str, last: str, end: int) -> float:
    sql = replica.kind.sql
    replica.execute("STOP SLAVE", "RESET SLAVE ALL")
    replica.execute(sql.change("", host="127.0.0.1", port=port, user="repl", password="repl-pw", gtid=False,
                               file=first, pos=4), "CHANGE MASTER TO MASTER_SSL=0")
    t0 = time.monotonic()
    replica.execute(sql.start("", "IO_THREAD"))
    while True:
        st = slave_status(replica)
        at = st.get("Master_Log_File") or ""
        # past the last file counts too: the primary has a file after it (the one it opened at start)
        if at > last or (at == last and int(st.get("Read_Master_Log_Pos") or 0) >= end):
            return time.monotonic() - t0
        if st.get("Last_IO_Error"):
            raise RuntimeError(st["Last_IO_Error"])
        time.sleep(0.02)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, help="a folder of binlogs (bench/data of make bench-data) to serve")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))     # a timeout's TERM: the lab's servers stopped
    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-", dir=os.environ.get("BENCH_TMP")))
    load_before = os.getloadavg()[0]
    try:
        with Lab(tmp / "lab") as lab:
            p = start_primary(lab, max_binlog_size=(1 << 30) if a.data else 256 << 20)
            if a.data:
                adopt(p, a.data)
            else:
                done = 0
                while done < a.mb:
                    workload.big(p, rows=8, first_id=10_000 + done)
                    workload.small(p, 300, start=done * 10_000)
                    done += 9
                settle(p)
            names = primary_binlogs(p)
            if a.data:       # the restart's own new file is not part of what is measured
                names = [n for n in names if (a.data / n).exists()]
            last = names[-1]
            end = last_event_end(p.datadir / last)
            archive = tmp / "archive"
            archive.mkdir()
            for n in names:
                shutil.copy(p.datadir / n, archive / n)
            total = sum((archive / n).stat().st_size for n in names)
            serve = ServeProcess(archive, tmp)
            r = lab.server("replica", 2, relay_log_space_limit=0).start()
            times: dict[str, list[float]] = {"primary": [], "serve": []}
            try:
                for _ in range(a.repeat):
                    times["primary"].append(fetch(r, p.port, names[0], last, end))
                    times["serve"].append(fetch(r, serve.port, names[0], last, end))
                    print(f"  round: primary {times['primary'][-1]:.2f} s, serve {times['serve'][-1]:.2f} s, "
                          f"load {os.getloadavg()[0]:.2f}", flush=True)
            finally:
                serve.stop()
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{total / 1e6:.0f} MB in {len(names)} files, {a.repeat} rounds, "
                  f"load {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
            for k, v in times.items():
                print(f"  {k:8s} median {med[k]:.2f} s  ({', '.join(f'{x:.2f}' for x in v)})  "
                      f"{total / 1e6 / med[k]:.0f} MB/s")
            print(f"  serve / primary: {med['serve'] / med['primary']:.2f}x (goal: at most 1.2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def last_event_end(path: Path) -> int:
    """Where the file's last event other than a Stop ends: what a replica's Read_Master_Log_Pos
    reaches (a replica does not count a Stop event, from the primary or from serve)."""
    from binlogkit.constants import EventType
    from binlogkit.reading.reader import iter_raw_events

    end = 4
    with open(path, "rb") as fh:
        for e in iter_raw_events(fh, name=path.name):
            if e.type_code != EventType.STOP_EVENT:
                end = e.offset + e.event_size
    return end


def adopt(p, data: Path) -> None:
    """The folder's binlogs become the (stopped, then restarted) primary's own: its binlogs and
    index replaced by copies of them (the server then opens a new file after them)."""
    base = p.options["log_bin"]
    names = sorted(f.name for f in data.iterdir() if f.name.startswith(base + ".") and f.name[len(base) + 1:].isdigit())
    p.stop()
    for f in list(p.datadir.iterdir()):
        if f.name.startswith(base + "."):
            f.unlink()
    for n in names:
        shutil.copyfile(data / n, p.datadir / n)
    (p.datadir / f"{base}.index").write_text("".join(f"./{n}\n" for n in names))
    p.kind.chown_tree(p.datadir)
    p.start()


if __name__ == "__main__":
    raise SystemExit(main())

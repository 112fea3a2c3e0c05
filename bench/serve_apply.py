"""A replica rebuilt from a dump catching up from the archive through ``binlogkit serve`` with
parallel apply, against ``binlogkit decode`` of the same range piped into the kind's client.

The primary (a lab server of ``--kind``: the host's MariaDB 10.11 by default, or ``mysql-9.7`` /
``mariadb-11.8`` from their chroots) runs a first workload; a dump is taken with its coordinates
(``mysqldump --single-transaction --source-data=2 --set-gtid-purged=ON`` / ``mariadb-dump
--single-transaction --master-data=2 --gtid``); the workload goes on (``--trx`` small
transactions), the binlogs are flushed and copied into an archive folder. Two fresh servers load
the dump. Then, timed from the same point (the dump loaded, nothing applied yet):

- **serve**: the replica (MySQL ``replica_parallel_workers=4``, ``replica_preserve_commit_order``
  as the server has it, ``SOURCE_AUTO_POSITION=1``; MariaDB ``slave_parallel_threads=4``
  optimistic, ``MASTER_USE_GTID=slave_pos`` from the dump's ``gtid_slave_pos``) connects to
  ``binlogkit serve ARCHIVE`` over TLS (MySQL's replica will not send a caching_sha2 password
  in clear) and auto-positions from the dump's GTID state; the clock stops when
  its executed set covers the primary's.
- **pipe**: ``binlogkit decode --start-position=POS FILE...`` (the dump's file and position on)
  ``| mysql`` into the other server; the clock stops when the client exits.

Both servers' tables are checked equal to the primary's (CHECKSUM TABLE).

    python bench/serve_apply.py [--kind mysql-9.7] [--trx 20000] [--before 5000] [--workers 4]

The last lines also give ``binlogkit decode`` of the range alone (into /dev/null): what of the
pipe's time is the decoding.
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

from binlogkit.pitr import parse_backup_info  # noqa: E402
from fixtures.lab import workload  # noqa: E402
from fixtures.lab.clients import dump  # noqa: E402
from fixtures.lab.pull_lab import primary_binlogs, settle, start_primary  # noqa: E402
from fixtures.lab.replay_campaign import DUMP_COORDINATES, FLAVORS, client_argv, client_run  # noqa: E402
from fixtures.lab.serve_lab import ServeProcess, checksums, make_cert, point_replica  # noqa: E402
from fixtures.lab.topology import Lab, wait_replica  # noqa: E402

# per flavor: the parallel replica's options (MariaDB's names pass through the kind's renames
# untouched, MySQL's are its own) and how it is told the dump's GTID state before it connects
PARALLEL = {
    "mariadb": (lambda n: {"slave_parallel_threads": n, "slave_parallel_mode": "optimistic"},
                "slave_parallel_threads={n} (optimistic), MASTER_USE_GTID=slave_pos"),
    "mysql": (lambda n: {"replica_parallel_workers": n},
              "replica_parallel_workers={n}, SOURCE_AUTO_POSITION=1"),
}


def load_dump(server, backup: bytes) -> None:
    """A fresh server to the dump: binlogs and GTID state reset, the dump loaded (not binlogged)."""
    f = FLAVORS[server.kind.flavor]
    server.execute(*f.reset_target)
    client_run(server, f.dump_prefix + backup)


def dump_gtid_state(server, gtids: str | None) -> None:
    """MariaDB: the replica's gtid_slave_pos from the dump's (commented) line; MySQL's dump set
    GTID_PURGED itself."""
    if server.kind.flavor == "mariadb":
        if not gtids:
            raise SystemExit("the dump has no gtid_slave_pos line")
        server.execute(f"SET GLOBAL gtid_slave_pos='{gtids}'")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", default=None, help="lab server kind (default: the host's MariaDB)")
    ap.add_argument("--trx", type=int, default=20000, help="small transactions after the dump")
    ap.add_argument("--before", type=int, default=5000, help="small transactions before the dump")
    ap.add_argument("--workers", type=int, default=4,
                    help="the replica's applier threads (MariaDB 0 or MySQL 1: one applier, to compare)")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-apply-"))
    try:
        with Lab(tmp / "lab", kind=a.kind, keep=a.keep) as lab:
            k = lab.kind
            p = start_primary(lab)
            workload.multi(p)
            workload.small(p, a.before)
            backup = dump(p, "--single-transaction", *DUMP_COORDINATES[k.flavor], "--databases", "lab")
            point = parse_backup_info(backup[:1 << 20].decode("utf-8", "replace"))
            workload.small(p, a.trx, start=a.before)   # continues: its UPDATEs and DELETEs find rows
            p.execute("FLUSH BINARY LOGS")
            settle(p)
            names = primary_binlogs(p)
            archive = tmp / "archive"
            archive.mkdir()
            for n in names:
                shutil.copy(p.datadir / n, archive / n)
            rng = names[names.index(point.file):]
            size = sum((archive / n).stat().st_size for n in rng) - point.position
            target = p.var(k.sql.executed_var)
            want = checksums(p)

            options, label = PARALLEL[k.flavor]
            r = lab.server("parallel", 2, **options(a.workers)).start()
            b = lab.server("piped", 3).start()
            for s in (r, b):
                load_dump(s, backup)
            dump_gtid_state(r, point.gtids)
            workers = {v: r.var(v) for v in (("replica_parallel_workers", "replica_preserve_commit_order")
                                             if k.flavor == "mysql" else ("slave_parallel_threads",
                                                                          "slave_parallel_mode"))}

            cert, _key = tls = make_cert(lab.work / "tls")  # where a chroot replica reads its CA
            serve = ServeProcess(archive, tmp, tls=tls)
            try:
                load0 = os.getloadavg()[0]
                t0 = time.monotonic()
                point_replica(r, serve.port, gtid=True, cert=cert)
                res = wait_replica(r, gtid_target=target, timeout=1800)
                t_serve = time.monotonic() - t0
                assert res["outcome"] == "caught_up", (res, serve.text()[-2000:])
                started = next((ln.split(": ", 1)[1] for ln in serve.text().splitlines() if ": dump for " in ln), "?")
            finally:
                serve.stop()
            r.execute(k.sql.stop(""))
            assert checksums(r) == want, "the replica's tables differ from the primary's"

            load1 = os.getloadavg()[0]
            t0 = time.monotonic()
            dec = subprocess.Popen([sys.executable, "-m", "binlogkit", "decode", f"--start-position={point.position}",
                                    *[str(archive / n) for n in rng]],
                                   stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            cli = subprocess.run(client_argv(b), stdin=dec.stdout, capture_output=True)
            dec.wait()
            t_pipe = time.monotonic() - t0
            assert dec.returncode == 0 and cli.returncode == 0, cli.stderr[-1000:]
            assert checksums(b) == want, "the piped server's tables differ from the primary's"
            t0 = time.monotonic()   # where the pipe's time goes: decode alone
            subprocess.run([sys.executable, "-m", "binlogkit", "decode", f"--start-position={point.position}",
                            *[str(archive / n) for n in rng]], stdout=subprocess.DEVNULL, check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            t_decode = time.monotonic() - t0

            tool = Path(client_argv(b)[-4]).name  # [chroot ROOT] CLIENT --no-defaults --socket=S -uroot
            print(f"{k.name}: {a.before} small transactions before the dump, {a.trx} after; "
                  f"{size / 1e6:.1f} MB of binlog after the dump ({point.file}:{point.position} on, "
                  f"{len(rng)} files)")
            print(f"  load average (1 min) at the start: serve {load0:.2f}, pipe {load1:.2f}; {os.cpu_count()} CPUs")
            print(f"  serve -> replica, {label.format(n=a.workers)}: {t_serve:.2f} s")
            print(f"    (replica {workers}; serve: {started})")
            print(f"  binlogkit decode --start-position | {tool}: {t_pipe:.2f} s")
            print(f"    (binlogkit decode alone > /dev/null: {t_decode:.2f} s)")
            print(f"  ratio serve / pipe: {t_serve / t_pipe:.2f}x; both servers' tables equal the primary's")
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The file-facing entry points under fuzz, each run as a user runs it: the click command
in this process, on files written to a scratch folder, output thrown away.

An outcome is clean when the command exits 0, 1 or 2 (``sys.exit``) or click reports a usage
error; anything else escaping (a ``BinlogError`` included: a user would see a traceback) is a
crash. The audit's per-file pass is also called directly, because it is documented never to
raise for damaged input.
"""

from __future__ import annotations

import lzma
import os
import random
import shutil
import sys
import zlib
from pathlib import Path

from .mutate import mutate, mutate_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "mariadb-10.11"
CORPUS = Path(os.environ.get("FUZZ_CORPUS") or ROOT.parent / "shared" / "corpus")  # a copy of the tree elsewhere: say where
SEED_MAX = 2 << 10  # seeds are cut to whole events within this size: fast inputs


class Crash(Exception):
    """An outcome that is not clean; ``__cause__`` holds what escaped."""


def _cli():
    from binlogkit.cli import main

    return main


def run_cli(args: list[str]) -> int:
    """Run ``binlogkit ARGS``; the exit code, or ``Crash`` from whatever escaped."""
    import click

    main = _cli()
    out, err = sys.stdout, sys.stderr
    # as a terminal would: stdout strict UTF-8, stderr with backslash escapes (Python's defaults)
    with open(os.devnull, "w", encoding="utf-8") as null, \
            open(os.devnull, "w", encoding="utf-8", errors="backslashreplace") as null_err:
        sys.stdout, sys.stderr = null, null_err
        try:
            main.main(args=args, prog_name="binlogkit", standalone_mode=False)
            return 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            if code not in (0, 1, 2):
                raise Crash(f"exit code {code}") from exc
            return code
        except click.ClickException:
            return 2
        except click.exceptions.Exit as exc:
            return exc.exit_code
        except BaseException as exc:  # noqa: BLE001 - this is what a fuzzer is for
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise Crash(f"{type(exc).__name__}: {exc}"[:300]) from exc
        finally:
            sys.stdout, sys.stderr = out, err


# --- seeds ----------------------------------------------------------------------------------

def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return lzma.decompress(data) if path.suffix == ".xz" else data


def cut(data: bytes, limit: int = SEED_MAX, most: int = 40) -> list[bytes]:
    """A file as small seeds (small inputs run fast): its Format_description followed by a run
    of consecutive events, windows of at most ``limit`` bytes along the whole file (an event
    bigger than that alone in its window, up to 4 x ``limit``); at most ``most`` windows, spread
    evenly; the torn tail, if any, after the last one."""
    from .mutate import join, split

    events, tail = split(data)
    if len(events) < 2:
        return [data[:4 * limit]]
    if len(data) <= limit:
        return [data]
    fde, rest = events[0], events[1:]
    windows, cur, size = [], [], 0
    for e in rest:
        n = len(e.body) + 23
        if cur and size + n > limit:
            windows.append(cur)
            cur, size = [], 0
        if n <= 4 * limit:
            cur.append(e)
            size += n
    if cur:
        windows.append(cur)
    if len(windows) > most:
        step = len(windows) / most
        windows = [windows[int(i * step)] for i in range(most - 1)] + [windows[-1]]
    out = [join([fde] + w, fix_log_pos=False) for w in windows[:-1]]
    out.append(join([fde] + windows[-1], tail[:limit], fix_log_pos=False))
    return out


def seed_files() -> list[Path]:
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name.split(".")[-1] in {"xz"}
                   or p.is_file() and p.name[-6:].isdigit())
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.rglob("*") if p.is_file() and "expected" not in p.parts
                        and p.suffix not in {".md", ".result", ".txt"})
    return files


def built_seeds() -> list[bytes]:
    """MySQL 8.4-shaped files made with the codecs (``fixtures/built_mysql.py``): tagged and
    untagged GTIDs and Previous_gtids in both layouts (no server-written file here has tagged
    ones), and one file per damaged tagged Previous_gtids body of ``damaged_previous_gtids``,
    followed by a tagged transaction."""
    try:
        from fixtures.built_mysql import BinlogBuilder, damaged_previous_gtids
    except ImportError:  # the fixtures are not installed with the package
        return []
    from binlogkit.constants import EventType as T

    out = []
    u1, u2 = "896e7882-18fe-11ef-ab88-22222d34d411", "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    b = BinlogBuilder()
    b.previous_gtids(f"{u1}:1-5:7,{u2}:tag_a:1-3:tagb:9")
    b.transaction(f"{u1}:8")
    b.transaction(f"{u1}:tag_a:4")
    b.transaction(f"{u2}:tagb:10", complete=False)
    b.rotate("binlog.000002")
    out.append(bytes(b.data))
    r = BinlogBuilder(relay=True, server_id=2)
    r.previous_gtids(f"{u2}:x:1-2")
    r.transaction(f"{u2}:x:3")
    r.transaction(f"{u2}:4")
    out.append(bytes(r.data))
    for _what, body in damaged_previous_gtids():
        d = BinlogBuilder()
        d.add(T.PREVIOUS_GTIDS_LOG_EVENT, body)
        d.transaction(f"{u1}:t:6")
        out.append(bytes(d.data))
    return out


def load_seeds() -> list[bytes]:
    seeds, seen = [], set()
    for p in seed_files():
        try:
            data = _read(p)
        except (OSError, lzma.LZMAError):
            continue
        if not data.startswith(b"\xfebin"):
            continue
        for s in cut(data):
            h = zlib.crc32(s)
            if h not in seen:
                seen.add(h)
                seeds.append(s)
    built = built_seeds()
    # the built files are a tenth of the pool: few files, but the only tagged GTIDs here
    seeds += built * max(1, len(seeds) // (9 * len(built) or 1))
    return seeds


# --- targets --------------------------------------------------------------------------------

def _one(work: Path, data: bytes, name: str = "log-bin.000001") -> str:
    p = work / name
    p.write_bytes(data)
    return str(p)


def _two(work: Path, data: bytes, rnd: random.Random, others) -> list[str]:
    """The input as the second file of a series, after a mutant of itself (cross-file logic)."""
    first = mutate(data, rnd, others=others) if rnd.random() < 0.7 else data
    return [_one(work, first, "log-bin.000001"), _one(work, data, "log-bin.000002")]


def _rnd(data: bytes) -> random.Random:
    return random.Random(zlib.crc32(data))


def t_decode(work, data, others=None):
    return run_cli(["decode", _one(work, data)])


def t_decode_json(work, data, others=None):
    return run_cli(["decode", "--json", _one(work, data)])


def t_decode_v(work, data, others=None):
    return run_cli(["decode", "-v", _one(work, data)])


def t_decode_lenient(work, data, others=None):
    return run_cli(["decode", "--json", "-v", "--lenient", "--no-verify", _one(work, data)])


def t_verify(work, data, others=None):
    return run_cli(["verify", "--json", _one(work, data)])


def t_gtids(work, data, others=None):
    return run_cli(["gtids", "--json", *_two(work, data, _rnd(data), others)])


def t_transactions(work, data, others=None):
    return run_cli(["transactions", *_two(work, data, _rnd(data), others)])


def t_audit(work, data, others=None):
    from binlogkit.audit import file_summary

    d = work / "archive"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    files = _two(d, data, _rnd(data), others)
    try:
        file_summary(files[1])  # documented never to raise for damaged input
    except Exception as exc:  # noqa: BLE001
        raise Crash(f"file_summary: {type(exc).__name__}: {exc}"[:300]) from exc
    return run_cli(["audit", "--jobs", "1", "--json", str(d)])


def t_compare(work, data, others=None):
    a, b = _two(work, data, _rnd(data), others)
    return run_cli(["compare", b, a])


def t_incident(work, data, others=None):
    """``incident`` on a stopped server's binlog folder whose last binlog is the input: it must
    refuse damaged input (exit 2) or append the Incident + Rotate, never a traceback."""
    d, backup = work / "binlogs", work / "incident-backup"
    for x in (d, backup):
        shutil.rmtree(x, ignore_errors=True)
    d.mkdir()
    files = _two(d, data, _rnd(data), others)
    (d / "log-bin.index").write_text("".join(f"./{Path(f).name}\n" for f in files))
    return run_cli(["incident", str(d), "--backup-dir", str(backup), "--message", "fuzz"])


# recover: relay directories of the crash fixtures, the input as their last relay log
_TEMPLATES: list[dict] | None = None


def recover_templates() -> list[dict]:
    global _TEMPLATES
    if _TEMPLATES is None:
        _TEMPLATES = []
        for d in sorted(FIXTURES.glob("crash-*/relay")):
            files = {p.name.removesuffix(".xz"): _read(p) for p in d.iterdir() if p.is_file()}
            relays = sorted(n for n in files if n[-6:].isdigit())
            if relays:
                _TEMPLATES.append({"name": d.parent.name, "files": files, "last": relays[-1]})
    return _TEMPLATES


def recover_seeds() -> list[bytes]:
    out = []
    for t in recover_templates():
        for s in cut(t["files"][t["last"]]):
            out.append(s)
    return out


def t_recover(work, data, others=None):
    templates = recover_templates()
    if not templates:
        return 0
    ts = data[4:8]
    t = next((t for t in templates if t["files"][t["last"]][4:8] == ts), templates[0])
    rnd = _rnd(data)
    d = work / "relay"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir()
    for name, content in t["files"].items():
        if name == t["last"]:
            content = data
        elif not name[-6:].isdigit() and rnd.random() < 0.3:
            content = mutate_text(content, rnd)
        elif name[-6:].isdigit() and rnd.random() < 0.2:
            content = mutate(content, rnd)
        (d / name).write_bytes(content)
    args = ["recover", str(d), "--json"]
    if rnd.random() < 0.3:
        args += ["--mode", rnd.choice(["gtid", "position"])]
    return run_cli(args)


def t_export(work, data, others=None):
    """``export`` of a damaged series into a scratch folder: 0, 1 or 2, never a traceback; a
    run that says 0 or 1 leaves a whole dataset (``_SUCCESS`` written last)."""
    out = work / "export-out"
    code = run_cli(["export", *_two(work, data, _rnd(data), others), "--output", str(out), "--row-group-rows", "7"])
    if code in (0, 1) and not (out / "_SUCCESS").exists():
        raise Crash(f"export exited {code} without writing _SUCCESS")
    return code


def t_export_lake(work, data, others=None):
    """``export --format delta|iceberg`` (change tables, or ``--mirror`` current-state tables) of a
    damaged series into a scratch warehouse: 0, 1 or 2, never a traceback; run twice (a rerun
    continues from what the tables recorded) with the same outcome."""
    rnd = _rnd(data)
    out = work / "lake-out"
    shutil.rmtree(out, ignore_errors=True)
    args = ["export", *_two(work, data, rnd, others), "--output", str(out),
            "--format", rnd.choice(["delta", "delta", "iceberg"])]
    if rnd.random() < 0.7:
        args.append("--mirror")
    first = run_cli(args)
    again = run_cli(args)
    if again != first:
        raise Crash(f"export {' '.join(args[-3:])}: exit {first}, then {again} when run again")
    return first


def t_spark_tables(work, data, others=None):
    """What each Spark executor runs for ``spark.read.format("binlog")`` (``spark.tables.batches``,
    no session): on a damaged file, whole or a range of it, every table gives Arrow batches of its
    schema, or a ``BinlogError`` ends the read (the task fails naming the file); nothing else."""
    from binlogkit.errors import BinlogError
    from binlogkit.spark.files import FileTask
    from binlogkit.spark.tables import Query, batches, schema

    rnd = _rnd(data)
    path = _one(work, data)
    table = rnd.choice(["events", "transactions", "summaries", "changes"])
    start = stop = None
    if rnd.random() < 0.3:
        start = rnd.randrange(len(data) + 1)
        stop = start + rnd.randrange(len(data) + 1)
    q = Query(table, batch_rows=rnd.choice([1, 7, 1000]), fields=rnd.random() < 0.8)
    task = FileTask(0, path, len(data), str(work), start=start, stop=stop)
    try:
        for b in batches(q, task):
            if table != "changes" and b.schema != schema(table):
                raise Crash(f"{table}: a batch of another schema: {b.schema}")
    except BinlogError:
        return 1
    except Crash:
        raise
    except Exception as exc:  # noqa: BLE001 - this is what a fuzzer is for
        raise Crash(f"spark {table}: {type(exc).__name__}: {exc}"[:300]) from exc
    return 0


# --- pull: the replication protocol from a hostile primary -----------------------------------
PULL_NAMES = [b"/etc/cron.d/x.000002", b"../pwn.000002", b"sub/x.000002", b"log-bin.000002\x00x", b".hid.000002",
              b"log-bin.000002", b"log-bin.999999", b"other.000002", b"x" * 300 + b".000002", b"log-bin.\xff00002",
              b"log-bin.000001", b"", b".", b".."]


def _pull_stream(data: bytes, rnd: random.Random, *, semisync: bool) -> bytearray:
    """A dump stream a primary could send for ``data`` (a binlog, mutated), mutated again at the
    protocol level: Rotate names from PULL_NAMES or random bytes, more Rotates, heartbeats,
    error / EOF / OK packets, a continued 16 MiB packet (rarely, at most one: it costs 16 MB), sequence
    numbers, semisync headers, bytes of the framed stream."""
    from binlogkit.reading.events import build_event
    from binlogkit.pull.protocol import MAX_PAYLOAD, packet

    def rotate(name: bytes) -> bytes:
        return build_event(type_code=4, body=(4).to_bytes(8, "little") + name, timestamp=0, server_id=1, log_pos=0,
                           flags=0x20, checksum=rnd.random() < 0.8)

    events, at = [], 4
    while at + 19 <= len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little")
        if size < 19 or at + size > len(data):
            events.append(data[at:])
            break
        events.append(data[at:at + size])
        at += size
    first = rnd.choice(PULL_NAMES) if rnd.random() < 0.2 else b"log-bin.000001"
    msgs = [rotate(first)] + events
    for _ in range(rnd.randrange(3)):
        i = rnd.randrange(len(msgs) + 1)
        kind = rnd.random()
        if kind < 0.5:
            name = rnd.choice(PULL_NAMES) if rnd.random() < 0.7 else bytes(rnd.randrange(256) for _ in range(20))
            msgs.insert(i, rotate(name))
        elif kind < 0.8:
            msgs.insert(i, build_event(type_code=27, body=b"log-bin.000001", timestamp=0, server_id=1,
                                       log_pos=rnd.choice([0, 4, 1 << 31]), flags=0, checksum=True))
        else:
            msgs.insert(i, rnd.choice([b"\xff\xd4\x04#HY000gone", b"\xfe\x00\x00\x02\x00", b"\x00\x00\x00"]))
    out, seq, continued = bytearray(), 1, False
    for m in msgs:
        if m[:1] in (b"\xff", b"\xfe") or m == b"\x00\x00\x00":
            payload = m
        else:
            need = rnd.random() < 0.3
            payload = (b"\x00\xef" + bytes([need])) if semisync else b"\x00"
            payload += m
        if not continued and rnd.random() < 0.03:   # a continued packet: the event's header, then filler
            continued = True   # one per stream: the stream is the harness's memory, not pull's
            payload = payload + bytes(MAX_PAYLOAD - len(payload) % MAX_PAYLOAD + rnd.choice([0, 0, 5]))
        if rnd.random() < 0.02:
            seq = rnd.randrange(256)
        out += packet(payload, seq)
        seq = (seq + len(payload) // MAX_PAYLOAD + 1) & 0xFF
    if rnd.random() < 0.7:
        out += packet(b"\xfe\x00\x00\x02\x00", seq)
    for _ in range(rnd.randrange(3) if len(out) < 1 << 20 else 0):
        k = rnd.randrange(len(out))
        out[k] = rnd.randrange(256)
    return out   # not copied: a continued packet is 16 MiB of the harness's own memory


class _StreamConn:
    """The receiver's side of a connection, fed from bytes in random chunks (no socket)."""

    where = "fuzz"

    def __init__(self, data: bytes, rnd: random.Random, semisync: bool) -> None:
        from binlogkit.pull.protocol import Framer

        self.framer = Framer(semisync=semisync, seq=1)
        self.data, self.at, self.rnd = data, 0, rnd

    def read(self, timeout: float) -> int | None:
        if self.at >= len(self.data):
            return None
        chunk = self.data[self.at:self.at + self.rnd.choice([7, 4096, 1 << 20, 4 << 20])]
        self.at += len(chunk)
        self.framer.feed(chunk)
        return len(chunk)

    def ack(self, name: str, pos: int) -> None:
        self.framer.ack_sent()


def _outside(work: Path, d: Path) -> None:
    """Nothing made beside the pull folder, nothing in it but regular files of plain names."""
    import re
    import stat as st

    extra = [p.name for p in work.iterdir() if p != d]
    if extra:
        raise Crash(f"pull made {extra} outside its folder")
    for p in d.iterdir():
        mode = p.lstat().st_mode
        if not st.S_ISREG(mode) or not re.fullmatch(r"[^/\x00-\x1f]+", p.name):
            raise Crash(f"pull made {p.name!r} (mode {mode:o}) in its folder")


def t_pull(work, data, others=None):
    """The receiver of ``pull`` fed a mutated dump stream directly (no socket): it ends, or
    raises a typed BinlogError; a file only inside its folder; memory one packet."""
    from binlogkit.errors import BinlogError
    from binlogkit.pull.receiver import Receiver
    from binlogkit.pull.store import Store

    rnd = _rnd(data)
    semisync = rnd.random() < 0.3
    stream = _pull_stream(data, rnd, semisync=semisync)
    area = work / "pull"
    shutil.rmtree(area, ignore_errors=True)
    d = area / "d"
    d.mkdir(parents=True)
    store = Store(d)
    if rnd.random() < 0.7:
        store.claim(server_id=1, base="log-bin", flavor="mariadb", source="fuzz")
    conn = _StreamConn(stream, rnd, semisync)
    rx = Receiver(store, conn, sync=rnd.choice(["trx", "off", "3"]), semisync=semisync,  # type: ignore[arg-type]
                  stop=lambda: conn.at >= len(conn.data), max_event_size=rnd.choice([1 << 24, 1 << 30]))
    code = 0
    try:
        rx.run()
    except BinlogError:
        code = 2
    except Exception as exc:  # noqa: BLE001 - this is what a fuzzer is for
        raise Crash(f"{type(exc).__name__}: {exc}"[:300]) from exc
    finally:
        store.close()
    _outside(area, d)
    return code


def t_pull_server(work, data, others=None):
    """``binlogkit pull --until-end`` (the CLI, in this process) against the fake primary of
    fixtures/fake_primary.py sending a mutated dump stream, then hanging up: exit 0, 1 or 2
    within seconds, files only inside --dir."""
    import signal
    import time

    if str(ROOT) not in sys.path:   # fixtures/ beside the package (a run from the tree)
        sys.path.insert(0, str(ROOT))
    from fixtures.fake_primary import FakePrimary

    rnd = _rnd(data)
    stream = _pull_stream(data, rnd, semisync=False)
    area = work / "pull-server"
    shutil.rmtree(area, ignore_errors=True)
    area.mkdir()
    d = area / "d"

    def scenario(dump, _request):
        dump.raw(stream)
        dump.sock.shutdown(2)

    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    t0 = time.monotonic()
    try:
        with FakePrimary(scenario, linger_s=5) as fp:
            code = run_cli(["pull", "--host", "127.0.0.1", "--port", str(fp.port), "--user", "fuzz", "--server-id",
                            "99", "--dir", str(d), "--until-end", "--max-reconnects", "0", "--read-timeout", "2"])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
    if time.monotonic() - t0 > 15:
        raise Crash(f"pull took {time.monotonic() - t0:.0f}s against a server that hung up")
    if d.exists():
        _outside(area, d)
    return code


def gtid_index_seeds() -> list[bytes]:
    """MariaDB 11.8's GTID index files (``<binlog>.idx``) of the committed fixtures."""
    root = Path(__file__).resolve().parent.parent / "fixtures"
    return [p.read_bytes() for p in sorted(root.glob("**/*.idx")) if p.read_bytes()[:4] == b"\xfe\xfe\x0c\x01"]


def t_gtid_index(work, data, others=None):
    """A damaged ``.idx`` (named like the server names it) through verify, gtids and
    ``gtids --locate``: a verdict or a typed error, never a traceback."""
    f = _one(work, data, name="mariadb-bin.000001.idx")
    rnd = _rnd(data)
    worst = max(run_cli(["verify", "--json", f]), run_cli(["gtids", "--json", f]))
    return max(worst, run_cli(["gtids", "--json", "--locate", f"0-1-{rnd.randrange(1, 400)}", f]))


def t_compressed(work, data, others=None):
    """A binlog compressed (gzip, xz or bz2, by the input) and then damaged in its compressed
    bytes (cut or flipped): decode and verify end with a typed error or a verdict."""
    import bz2
    import gzip

    rnd = _rnd(data)
    suffix, pack = rnd.choice([(".gz", lambda b: gzip.compress(b, mtime=0)), (".xz", lzma.compress),
                               (".bz2", bz2.compress)])
    body = bytearray(pack(data))
    if rnd.random() < 0.5:
        del body[rnd.randrange(1, len(body)):]
    else:
        for _ in range(rnd.randrange(1, 4)):
            body[rnd.randrange(len(body))] ^= 1 << rnd.randrange(8)
    f = _one(work, bytes(body), name="log-bin.000001" + suffix)
    return max(run_cli(["decode", f]), run_cli(["verify", "--json", f]))


# --- serve: what a client sends ---------------------------------------------------------------

SERVE_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def serve_client_seeds() -> list[bytes]:
    """Sessions a replica opens with ``serve``, as framed packets, made by pull's own client
    code: an SSLRequest, a HandshakeResponse (each plugin), the queries MariaDB and MySQL
    replicas send (docs/serve.md), COM_REGISTER_SLAVE, each dump request, semisync acks, COM_QUIT."""
    from binlogkit.pull.auth import (CHARSET_UTF8MB4, CLIENT_FLAGS, caching_sha2_scramble, handshake_response,
                                     native_scramble, ssl_request)
    from binlogkit.pull.protocol import (binlog_dump, binlog_dump_gtid, mysql_gtid_dump, packet, register_slave,
                                         semisync_ack)

    nonce = bytes(range(65, 85))
    mariadb = ["SET NAMES latin1", "SELECT UNIX_TIMESTAMP()", "SHOW VARIABLES LIKE 'SERVER_ID'",
               "SET @master_heartbeat_period= 500000000", "SET @master_binlog_checksum= @@global.binlog_checksum",
               "SELECT @master_binlog_checksum", "SET @mariadb_slave_capability=4", "SELECT @@GLOBAL.gtid_domain_id",
               "SET @slave_connect_state='0-1-5,1-2-7'", "SET @slave_gtid_strict_mode=1",
               "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'", "SET @rpl_semi_sync_slave= 1"]
    mysql = ["SELECT UNIX_TIMESTAMP()", "SELECT @@GLOBAL.SERVER_ID",
             "SET @master_heartbeat_period = 1, @source_heartbeat_period = 1",
             "SET @master_binlog_checksum = @@global.binlog_checksum, @source_binlog_checksum = "
             "@@global.binlog_checksum", "SELECT @source_binlog_checksum", "SELECT @@GLOBAL.GTID_MODE",
             "SELECT @@GLOBAL.SERVER_UUID", f"SET @slave_uuid = '{SERVE_UUID}', @replica_uuid = '{SERVE_UUID}'",
             "SELECT @@global.rpl_semi_sync_source_enabled", "SET @rpl_semi_sync_replica = 1, @rpl_semi_sync_slave = 1"]
    out = []
    for plugin, scramble, queries, dump in (
            ("mysql_native_password", native_scramble, mariadb, binlog_dump(2, "mariadb-bin.000001", 4, flags=2)),
            ("caching_sha2_password", caching_sha2_scramble, mysql,
             mysql_gtid_dump(3, f"{SERVE_UUID}:1-5,{SERVE_UUID}:tag:1-2", 0)),
            ("dialog", native_scramble, mariadb[:3], binlog_dump_gtid(4, "binlog.000002", 120, flags=1))):
        for tls in (False, True):
            login = handshake_response(CLIENT_FLAGS, CLIENT_FLAGS, b"repl", plugin, scramble(b"pw", nonce),
                                       {"_client_name": "libmariadb", "program_name": "mariadbd"})
            s = packet(ssl_request(CLIENT_FLAGS, CHARSET_UTF8MB4), 1) + packet(login, 2) if tls else packet(login, 1)
            for q in queries:
                s += packet(b"\x03" + q.encode(), 0)
            s += packet(register_slave(2, host="replica", port=3306), 0) + packet(dump, 0)
            s += packet(semisync_ack("mariadb-bin.000001", 330), 0) + packet(semisync_ack("binlog.000002", 1 << 33), 0)
            out.append(s + packet(b"\x01", 0))
    return out


def _serve_payloads(data: bytes) -> list[bytes]:
    """The payloads of ``data`` read as packets (what a packet header announces past the end:
    the rest, as one payload)."""
    out, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at:at + 3], "little")
        out.append(data[at + 4:at + 4 + n])
        at += 4 + n
    return out


QUERY_TOKENS = [b"@@", b"@", b"'", b'"', b"\\", b",", b"=", b":=", b"(", b")", b"`", b"@@global.", b"LIMIT 1", b" AS ",
                b"UNIX_TIMESTAMP()", b"VERSION()", b"NULL", b"-", b".", b"%", b"_", b"\x00", b"\xff", b"0-1-5,0-2-6"]


def _mutate_query(q: bytes, rnd: random.Random) -> bytes:
    """A statement changed as text: a number made long (to 4,400 digits), a token inserted, a
    part repeated or cut."""
    import re

    r = rnd.random()
    if r < 0.3:
        nums = list(re.finditer(rb"\d+", q))
        if nums:
            m = rnd.choice(nums)
            return q[:m.start()] + b"9" * rnd.choice([1, 19, 20, 21, 41, 4400]) + q[m.end():]
    if r < 0.7:
        at = rnd.randint(0, len(q))
        return q[:at] + rnd.choice(QUERY_TOKENS) + q[at:]
    if r < 0.85 and q:
        a = rnd.randrange(len(q))
        b = rnd.randint(a, len(q))
        return q[:b] + q[a:b] * rnd.choice([2, 3, 50]) + q[b:]
    return q[:rnd.randint(0, len(q))]


def t_serve_client(work, data, others=None):
    """Every parser ``serve`` runs on what a client sends, fed each packet of a mutated session:
    the SSLRequest test, the HandshakeResponse, a query answered (with the user variables it
    set: a MariaDB GTID state parsed, the GTID start planned over a small archive), the dump
    requests, semisync acks, and the dump's back channel cut from the bytes in random pieces.
    Only the typed errors may come out (ProtocolError and the BinlogError tree; StartRefused,
    the server's 1236), never another exception."""
    from binlogkit.errors import BinlogError
    from binlogkit.gtid.mariadb import GtidPos, MariadbGtid
    from binlogkit.gtid.mysql import MysqlGtid, MysqlGtidSet
    from binlogkit.serve.queries import answer
    from binlogkit.serve.semisync import Packets, asked, parse_ack
    from binlogkit.serve.stream import FileGtids, StartRefused, parse_dump, plan_mariadb, plan_mysql
    from binlogkit.serve.wire import is_ssl_request, parse_response, scramble_ok

    rnd = _rnd(data)
    globals_ = {"server_id": 77, "server_uuid": SERVE_UUID, "binlog_checksum": "CRC32", "gtid_mode": "ON",
                "gtid_domain_id": 0, "version": "10.11.19-MariaDB-log", "rpl_semi_sync_master_enabled": True,
                "rpl_semi_sync_source_enabled": True}
    maria = [FileGtids("mariadb-bin.000001", "0-1-3", [(330, MariadbGtid(0, 1, 4)), (900, MariadbGtid(0, 1, 5))]),
             FileGtids("mariadb-bin.000002", "0-1-5", [(4, MariadbGtid(1, 2, 7))])]
    mine = MysqlGtid.parse(f"{SERVE_UUID}:3")
    mysql = [FileGtids("binlog.000001", f"{SERVE_UUID}:1-2", [(4, mine)])]
    session: dict = {}
    typed = 0

    def guarded(fn, *args):
        nonlocal typed
        try:
            return fn(*args)
        except (BinlogError, StartRefused):
            typed += 1
            return None
        except Exception as exc:  # noqa: BLE001 - this is what a fuzzer is for
            raise Crash(f"{fn.__name__}: {type(exc).__name__}: {exc}"[:300]) from exc

    for p in _serve_payloads(data):
        is_ssl_request(p)
        r = guarded(parse_response, p)
        if r is not None:
            guarded(scramble_ok, r.plugin, r.answer, b"pw", bytes(range(65, 85)))
        if p[:1] == b"\x03":
            if rnd.random() < 0.5:
                p = b"\x03" + _mutate_query(p[1:], rnd)
            replies = guarded(answer, p[1:].decode("utf-8", "replace"), globals_, session, lambda: 1234.0)
            if not isinstance(replies, list) or not all(isinstance(x, bytes) for x in replies):
                raise Crash(f"answer gave {type(replies).__name__}, not the reply packets")
            asked(session)
            state = session.get("slave_connect_state")
            if state is not None:
                pos = guarded(GtidPos.parse, str(state))
                if pos is not None:
                    guarded(plan_mariadb, pos, maria)
        d = guarded(parse_dump, p)
        if d is not None and d.gtids is not None:
            guarded(plan_mysql, d.gtids, mysql)
            guarded(MysqlGtidSet.parse, str(d.gtids))
        guarded(parse_ack, p)
    back, at = Packets(), 0
    while at < len(data):
        n = rnd.choice([1, 3, 7, 64, 4096])
        if guarded(back.feed, data[at:at + n]) is None:
            break
        at += n
    return 2 if typed else 0


TARGETS = {
    "decode": t_decode,
    "decode-json": t_decode_json,
    "decode-v": t_decode_v,
    "decode-lenient": t_decode_lenient,
    "verify": t_verify,
    "gtids": t_gtids,
    "transactions": t_transactions,
    "audit": t_audit,
    "compare": t_compare,
    "recover": t_recover,
    "incident": t_incident,
    "export": t_export,
    "export-lake": t_export_lake,
    "spark-tables": t_spark_tables,
    "pull": t_pull,
    "pull-server": t_pull_server,
    "gtid-index": t_gtid_index,
    "compressed": t_compressed,
    "serve-client": t_serve_client,
}


def seeds_for(target: str) -> list[bytes]:
    if target == "gtid-index":
        return gtid_index_seeds()
    if target == "serve-client":
        return serve_client_seeds()
    return recover_seeds() if target == "recover" else load_seeds()

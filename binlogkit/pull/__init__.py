"""``binlogkit pull``: a live, byte-identical copy of a primary's binlogs over the replication
protocol — crash-safe, resumable, and a lossless semisync receiver.

::

    protocol.py   pure: packets a replica sends, the framing of the dump stream, artificial events
    auth.py       pure: the login — TLS settings, SSLRequest, each auth plugin's answer, no clear password
    conn.py       the one connection: greeting, login, session settings (its own client), then the dump
                  read with recv_into into the framer's buffer
    store.py      the folder: lock, files, index, state, start-up repair (through binlogkit.writing.safeio)
    receiver.py   the loop: events in, files out, fsync, semisync acknowledgements

``pull(config)`` runs the command (reconnecting with backoff); ``iter_events(...)`` is the Python
API: the raw events of a live primary as the same ``RawEvent`` values the file reader yields.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Iterator

from ..flavor import Flavor
from .auth import PasswordRefused, SslMode, TlsError, TlsOptions
from .conn import Connection, ConnectionLost
from .protocol import (DEFAULT_MAX_EVENT, HostileServer, Joiner, ProtocolError, PullError, Stopped, check_name,
                       header, is_artificial, rotate_target)
from .receiver import Receiver
from .store import Repair, Store, split_name

if TYPE_CHECKING:
    from ..reading.reader import RawEvent


class PullConfig:
    """A pull's settings (``pull.settings.config`` makes them from the options). A plain class,
    not a dataclass: ``dataclasses`` (with ``inspect``) is kept off ``pull``'s start-up."""

    def __init__(self, host: str, port: int, user: str, password: str, server_id: int, dir: str,
                 start_file: str | None = None, start_position: int | None = None, gtid: str | None = None,
                 semisync: bool = False, sync: str = "trx", until_end: bool = False, heartbeat_s: float = 1.0,
                 connect_timeout: float = 10.0, read_timeout: float = 10.0, max_event_size: int = DEFAULT_MAX_EVENT,
                 max_reconnects: int | None = None, max_backoff_s: float = 30.0,
                 max_dump_position: int = 0xFFFFFFFF, tls: TlsOptions | None = None) -> None:
        self.host, self.port, self.user, self.password = host, port, user, password
        self.server_id, self.dir = server_id, dir
        self.start_file, self.start_position, self.gtid = start_file, start_position, gtid
        self.semisync, self.sync, self.until_end, self.heartbeat_s = semisync, sync, until_end, heartbeat_s
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout              # every read before the dump (greeting, login, queries)
        self.max_event_size = max_event_size
        self.max_reconnects = max_reconnects          # failed reconnects in a row before giving up (None: 10
                                                      # with until_end, no end otherwise)
        self.max_backoff_s = max_backoff_s
        self.max_dump_position = max_dump_position    # the largest position COM_BINLOG_DUMP can ask for
        self.tls = tls if tls is not None else TlsOptions()   # --ssl-mode & co.; PREFERRED as the mysql clients

    def __repr__(self) -> str:   # never the password
        return f"PullConfig({self.user}@{self.host}:{self.port}, server_id={self.server_id}, dir={self.dir!r})"


def _connect(cfg: PullConfig, stop: Callable[[], bool] = lambda: False) -> Connection:
    return Connection(cfg.host, cfg.port, cfg.user, cfg.password, connect_timeout=cfg.connect_timeout, tls=cfg.tls,
                      read_timeout=cfg.read_timeout, stop=stop, max_event_size=cfg.max_event_size)


def _first_file(cfg: PullConfig, gtid: str | None, stop: Callable[[], bool] = lambda: False) -> str:
    """The binlog file a dump starts in (from its first Rotate): a MariaDB GTID dump from
    ``gtid``, or a dump from file '' (the oldest binlog the primary has; SHOW BINARY LOGS needs
    a privilege a replication account may lack)."""
    conn = _connect(cfg, stop)
    try:
        # only its first Rotate is read: a small buffer (it grows for a longer packet)
        conn.start_dump(cfg.server_id, "", 4, gtid=gtid, heartbeat_s=cfg.heartbeat_s, non_block=True, room=1 << 16)
        deadline = time.monotonic() + max(cfg.read_timeout, 3 * cfg.heartbeat_s)
        while True:
            for msg in conn.messages():
                if msg.kind == "part":
                    raise HostileServer(f"{conn.where} began a dump with an event of 16 MiB or more, not a Rotate")
                if msg.kind == "error":
                    hint = " (error 1236: the binlog asked for is gone or unreadable on the primary)" \
                        if msg.code == 1236 else ""
                    raise PullError((f"the primary refused GTID position {gtid}: " if gtid else
                                     "the primary refused a dump from its oldest binlog: ") + msg.text + hint,
                                    code=msg.code)
                if msg.kind == "eof":
                    raise PullError(f"the primary has nothing after GTID position {gtid}" if gtid else
                                    f"{conn.where} has no binary logs (is log_bin on?)")
                if msg.kind == "event" and header(msg.data)[1] == 4:
                    return rotate_target(msg.data)[0]
            conn.wait_read(deadline, "the dump request with the Rotate naming its first file")
    finally:
        conn.close()


def _start_point(cfg: PullConfig, conn: Connection, rep: Repair, stop: Callable[[], bool]) -> tuple[str, int]:
    if rep.file is not None:
        if cfg.start_file or cfg.gtid:
            if cfg.start_file != rep.file or (cfg.start_position or 4) > rep.position:
                raise PullError("the folder already holds a pull; it resumes by itself at "
                                f"{rep.file}:{rep.position}: drop --start-file / --gtid (or use another folder)")
        return rep.file, rep.position
    if cfg.start_position not in (None, 4):
        raise PullError("--start-position must be 4: a copy starts every file at its first byte so that it is "
                        "byte-identical to the primary's (the events before the position come along)")
    if cfg.start_file:
        return check_name(cfg.start_file, "--start-file"), 4
    return _first_file(cfg, cfg.gtid, stop), 4


def _refuse_semisync_until_end(conn: Connection) -> None:
    """``--semisync --until-end`` is refused with a MariaDB primary (``binlogkit serve`` excepted).
    Ending a dump asked not to block, MariaDB takes a semisync replica off its acknowledgement
    listener and waits for that thread, which may sleep on the replicas' sockets: the dump
    thread then hangs ("Waiting to finalize termination", seen on 10.11 and 11.8), the end never
    comes, and every later dump with this server_id waits for it to die (a minute and more)."""
    if conn.flavor is not Flavor.MARIADB or conn.value("SELECT @@version_comment") == "binlogkit serve":
        return
    raise PullError(f"--semisync with --until-end: {conn.where} is MariaDB, whose dump thread hangs at the end "
                    "of a non-blocking dump with a semisync replica (and holds up this server_id's next dump): "
                    "leave out --until-end to acknowledge as a live replica, or --semisync to copy up to the end")


def pull(cfg: PullConfig, *, report: Callable[[dict], None] | None = None,
         stop: Callable[[], bool] = lambda: False) -> dict:
    """Run a pull into ``cfg.dir`` until the end (``until_end``) or until ``stop()``. Reports
    dicts (``event``: repair, start, status, rotate, reconnect, done) through ``report``."""
    say = report or (lambda d: None)
    store = Store(cfg.dir, durable=cfg.sync != "none")
    try:
        rep = store.repair()
        if rep.cut_from is not None:
            say({"event": "repair", **rep.to_json()})
        receiver: Receiver | None = None
        connected, backoff, failed = False, 0.5, 0
        limit = cfg.max_reconnects if cfg.max_reconnects is not None else (10 if cfg.until_end else None)

        def stopped() -> dict:
            store.close_file()
            idle = {"file": store.name, "position": store.size, "bytes": 0, "events": 0, "transactions": 0,
                    "fsyncs": 0, "acks": 0}
            done = {**(receiver.status() if receiver else idle), "event": "done", "outcome": "stopped",
                    "reconnects": receiver.stats.reconnects if receiver else 0}
            say(done)
            return done

        while True:
            conn = None
            progress = (receiver.stats.events, receiver.stats.bytes) if receiver else None
            try:
                if stop():
                    return stopped()
                conn = _connect(cfg, stop)
                try:
                    primary_id = int(conn.value("SELECT @@server_id"))
                except (TypeError, ValueError):
                    raise HostileServer(f"{conn.where} answered SELECT @@server_id with no number") from None
                if not connected:
                    if primary_id == cfg.server_id:
                        raise PullError(f"--server-id {cfg.server_id} is the primary's own server_id: choose another")
                    try:
                        hosts = [r for r in conn.query("SHOW SLAVE HOSTS") if int(r[0]) == cfg.server_id]
                    except PullError:  # needs REPLICATION MASTER ADMIN; the dump then tells
                        hosts = []
                    if hosts:
                        raise PullError(f"server_id {cfg.server_id} is already used by a replica of {conn.where} "
                                        f"(host {hosts[0][1] or '?'}, port {hosts[0][2]}): choose another --server-id")
                    if cfg.until_end and cfg.semisync:
                        _refuse_semisync_until_end(conn)
                    file, pos = _start_point(cfg, conn, rep, stop)
                    store.claim(server_id=primary_id, base=split_name(file)[0], flavor=conn.flavor.value,
                                source=f"{cfg.host}:{cfg.port}")
                    if pos > 4:
                        store.open_file(file, pos)
                    say({"event": "start", "file": file, "position": pos, "server_version": conn.server_version,
                         "tls": conn.tls_version})
                else:
                    if store.state is None:  # claim() wrote it on the first connection
                        raise PullError("internal: the folder has no state after the first connection",
                                        file=str(store.path))
                    if primary_id != store.state.get("primary_server_id"):
                        raise PullError(f"{conn.where} is now server_id {primary_id}, not the primary this folder "
                                        f"copies ({store.state.get('primary_server_id')})")
                    if store.name is not None:
                        file, pos = store.name, store.size
                    say({"event": "reconnected", "file": file, "position": pos})
                # COM_BINLOG_DUMP carries a 32-bit position: past it, the file is asked for from
                # its start and the bytes the copy already has are compared, not written again
                dump_pos = pos if pos <= cfg.max_dump_position else 4
                if dump_pos != pos:
                    say({"event": "refetch", "file": file, "position": pos,
                         "reason": f"position {pos} does not fit the dump request's 32 bits: reading {file} "
                                   f"from 4 and checking the {pos - 4} bytes the copy has"})
                conn.start_dump(cfg.server_id, file, dump_pos, semisync=cfg.semisync, heartbeat_s=cfg.heartbeat_s,
                                non_block=cfg.until_end)
                connected = True
                if receiver is None:
                    receiver = Receiver(store, conn, sync=cfg.sync, semisync=cfg.semisync,
                                        heartbeat_s=cfg.heartbeat_s, report=say, stop=stop,
                                        max_event_size=cfg.max_event_size)
                else:
                    receiver.conn = conn
                    receiver.stats.reconnects += 1
                receiver.verify_from(dump_pos if dump_pos != pos else None)
                outcome = receiver.run()
                if outcome == "end" and not cfg.until_end:
                    # a blocking dump has no end: the primary ended it, shutting down (MariaDB
                    # and MySQL end their dump threads with an EOF packet so): wait, reconnect
                    raise ConnectionLost(f"{conn.where} ended the dump (shutting down?)")
                store.close_file()
                done = {**receiver.status(), "event": "done", "outcome": outcome}
                done["reconnects"] = receiver.stats.reconnects
                say(done)
                return done
            except Stopped:
                return stopped()
            except (ConnectionLost, ProtocolError) as exc:
                if not connected and receiver is None:
                    raise PullError(str(exc)) from None
                # the backoff (and the count of failures) starts again only once a dump brought
                # something: a primary that fails each dump at once is not retried every 0.5 s
                if receiver is not None and progress != (receiver.stats.events, receiver.stats.bytes):
                    backoff, failed = 0.5, 0
                failed += 1
                if limit is not None and failed > limit:
                    raise PullError(f"gave up after {limit} failed reconnects in a row (--max-reconnects); "
                                    f"the last: {exc}") from None
                say({"event": "reconnect", "reason": str(exc), "in_s": backoff})
                deadline = time.monotonic() + backoff
                while time.monotonic() < deadline:
                    if stop():
                        return stopped()
                    time.sleep(0.1)
                backoff = min(backoff * 2, cfg.max_backoff_s)
                connected = True
            finally:
                if conn is not None:
                    conn.close()
    finally:
        store.close()


def iter_events(host: str, port: int, user: str, password: str, *, server_id: int, file: str, position: int = 4,
                until_end: bool = True, semisync: bool = False, tls: TlsOptions | None = None,
                max_event_size: int = DEFAULT_MAX_EVENT) -> Iterator[RawEvent]:
    """The raw events of a live primary from ``file``:``position`` as ``RawEvent`` values (the
    same as the file reader's: offset, header fields, bytes, format in force, checksum checked).
    Artificial events are left out. With ``semisync`` every event the primary asks for is
    acknowledged as soon as it has been yielded and the caller asked for the next one. ``tls``:
    as ``PullConfig.tls`` (default PREFERRED)."""
    import zlib

    from ..codecs.format_description import fde_is_checksum_aware
    from ..reading.format import format_of_event
    from ..reading.reader import RawEvent, event_crc

    conn = Connection(host, port, user, password, tls=tls, max_event_size=max_event_size)
    joiner = Joiner()
    try:
        conn.start_dump(server_id, file, position, semisync=semisync, non_block=until_end)
        fmt, name, at = None, file, position
        while True:
            for part in conn.messages():
                msg = joiner.take(part)
                if msg is None:
                    continue
                if msg.kind == "eof":
                    return
                if msg.kind == "error":
                    raise PullError(f"the primary stopped the dump: {msg.text}", code=msg.code)
                ev = msg.data
                ts, code, sid, size, log_pos, flags = header(ev)
                if code == 4 and is_artificial(code, log_pos, flags):
                    name, at = rotate_target(ev)
                if code == 15:
                    aware = fde_is_checksum_aware(ev)
                    fmt = format_of_event(ev)
                    ok = event_crc(ev) == int.from_bytes(ev[-4:], "little") if aware else None
                else:
                    ok = (zlib.crc32(ev[:-4]) == int.from_bytes(ev[-4:], "little")) if fmt and fmt.len_checksum else None
                if is_artificial(code, log_pos, flags):
                    continue
                # log_pos 0: an event inside a MariaDB 11.8 transaction; it starts where the last one ended
                start = log_pos - size if log_pos else at
                at = start + size
                yield RawEvent(start, ts, code, sid, size, log_pos, flags, ev, fmt, ok, name)
                if msg.need_ack:
                    conn.ack(name, at)
            if conn.read(timeout=60.0) is None:
                raise ConnectionLost(f"{conn.where} sent nothing for 60 s")
    finally:
        conn.close()


__all__ = ["PullConfig", "PullError", "HostileServer", "pull", "iter_events", "Store", "Receiver", "TlsOptions",
           "SslMode", "TlsError", "PasswordRefused"]

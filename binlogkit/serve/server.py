"""The socket loop of ``serve``: one thread per replica connection, the login, the queries before
the dump, and the dump itself (events of the archive, waiting at the end with heartbeats).

Bounds per connection: a command before the dump at most ``MAX_COMMAND`` bytes, each read and
write at most ``timeout`` seconds (a client that stalls is dropped), the login at most
``LOGIN_ROUNDS`` packets, a client that sends garbage gets an error and is dropped; after the
dump starts a replica sends nothing but COM_QUIT and, when it asked for semisync, one
acknowledgement per flagged event (those are read and counted; anything else it sends is read
and dropped, at most ``MAX_AFTER_DUMP`` bytes in all). ``max_connections`` connections at once;
the next is refused with the server's 1040.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from ..constants import EventType as T
from ..errors import BinlogError, TruncatedEventError
from ..flavor import Flavor
from ..gtid.mariadb import GtidPos
from ..pull.conn import recv_exact
from ..pull.protocol import (BINLOG_DUMP_NON_BLOCK, BINLOG_SEND_ANNOTATE_ROWS_EVENT, COM_BINLOG_DUMP,
                             COM_BINLOG_DUMP_GTID, COM_REGISTER_SLAVE, MAX_PAYLOAD, ProtocolError, packet)
from ..reading.source import Input
from .archive import Archive, Head, gtid_of, name_of
from .queries import answer
from .semisync import ENABLED_VARS, HEAD, HEAD_ACK, Packets, TrxEnds, asked, parse_ack
from .stream import (USE_HEARTBEAT_EVENT_V2, Dump, Skipper, StartRefused, fake_rotate, heartbeat, heartbeat_v2,
                     mariadb_covered, parse_dump, plan_mariadb, plan_mysql, resent_fde)
from .wire import (CACHING_SHA2, ER_ACCESS_DENIED, ER_CON_COUNT, ER_HANDSHAKE, ER_MASTER_FATAL_ERROR_READING_BINLOG,
                   ER_UNKNOWN_COM, NATIVE, PLUGINS, auth_switch, eof, err, fast_auth_ok, greeting, is_ssl_request, ok,
                   parse_response, scramble_ok)

log = logging.getLogger("binlogkit.serve")

COM_QUIT, COM_QUERY, COM_PING = 0x01, 0x03, 0x0E
MAX_COMMAND = 1 << 20
MAX_AFTER_DUMP = 1 << 20
FLUSH_AT = 256 << 10          # the dump stream is sent in writes of about this size
LOGIN_ROUNDS = 4
POLL = 0.1


class Dropped(Exception):
    """The connection ends (closed, stalled, garbage): logged, never raised further."""


@dataclass
class Settings:
    archive: list[Input]
    user: str
    password: bytes = field(repr=False)
    bind: str = "127.0.0.1"
    port: int = 0
    server_id: int = 1
    heartbeat: float = 1.0
    timeout: float = 30.0
    max_connections: int = 16
    tls: Any = None                  # a server ssl.SSLContext, or None
    require_tls: bool = False        # refuse a login outside TLS
    server_uuid: str = ""


class Conn:
    """Packets of one client: sequence numbers kept, each read bounded in size and time."""

    def __init__(self, sock: socket.socket, peer: str, timeout: float) -> None:
        self.sock: Any = sock
        self.peer = peer
        self.seq = 0
        self.timeout = timeout
        self._out = bytearray()
        self.tls = False
        self.semisync = False                         # dump messages carry the 2-byte semisync header
        self.on_flush: Callable[[], None] | None = None   # called before each write of the dump stream
        sock.settimeout(timeout)

    def _exact(self, n: int) -> bytes:
        try:
            return recv_exact(self.sock, n, 1 << 16)
        except socket.timeout:
            raise Dropped(f"{self.peer}: nothing received within {self.timeout:g} s") from None
        except EOFError:
            raise Dropped(f"{self.peer} closed the connection") from None
        except OSError as exc:
            raise Dropped(f"{self.peer}: {exc}") from None

    def read(self, limit: int = MAX_COMMAND) -> bytes:
        head = self._exact(4)
        n = int.from_bytes(head[:3], "little")
        if head[3] != self.seq:
            raise Dropped(f"{self.peer}: packet {head[3]} out of sequence (expected {self.seq})")
        if n > limit or n == MAX_PAYLOAD:
            raise Dropped(f"{self.peer}: a packet of {n} bytes, more than the {limit} a command may have")
        self.seq = (self.seq + 1) & 0xFF
        return self._exact(n)

    def write(self, payload: bytes, *, buffered: bool = False) -> None:
        """One payload as packets; ``buffered``: kept until ``FLUSH_AT`` bytes are held or ``flush``
        (the dump stream: one send for many small events); anything unbuffered flushes first."""
        data = packet(payload, self.seq)
        self.seq = (self.seq + len(payload) // MAX_PAYLOAD + 1) & 0xFF
        if buffered:
            self._out += data
            if len(self._out) >= FLUSH_AT:
                self.flush()
            return
        self.flush()
        self._send(data)

    def event(self, ev: bytes, ack: bool = False) -> None:
        """One event of the dump stream (``0x00`` + the event; with ``semisync`` ``0x00 0xef
        flag``, ``ack``: an acknowledgement wanted, after which the sequence restarts at 1),
        buffered: its bytes copied once, into the buffer (an event of 16 MiB - 1 or more goes
        through ``packet``'s split)."""
        head = (HEAD_ACK if ack else HEAD) if self.semisync else b"\0"
        n = len(ev) + len(head)
        if n >= MAX_PAYLOAD:
            self.write(head + ev, buffered=True)
        else:
            out = self._out
            out += n.to_bytes(3, "little")
            out.append(self.seq)
            out += head
            out += ev
            self.seq = (self.seq + 1) & 0xFF
            if len(out) >= FLUSH_AT:
                self.flush()
        if ack:
            self.seq = 1

    def flush(self) -> None:
        if self.on_flush is not None:
            self.on_flush()
        if self._out:
            data, self._out = self._out, bytearray()
            self._send(data)

    def _send(self, data: bytes | bytearray) -> None:
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise Dropped(f"{self.peer}: did not take what was sent within {self.timeout:g} s") from None
        except OSError as exc:
            raise Dropped(f"{self.peer}: {exc}") from None

    def write_all(self, payloads: list[bytes]) -> None:
        for p in payloads:
            self.write(p)


def _nonce() -> bytes:
    return bytes(33 + b % 94 for b in os.urandom(20))   # printable, never NUL (as the servers make it)


class Server:
    """``serve``'s listener: ``start()`` binds, ``run()`` accepts until ``stop()``."""

    def __init__(self, settings: Settings, *, on_log: Callable[[str], None] | None = None) -> None:
        self.s = settings
        self.archive = Archive(settings.archive)
        self.say = on_log or (lambda line: log.info(line))
        self._stop = threading.Event()
        self._slots = threading.BoundedSemaphore(settings.max_connections)
        self._threads = 0
        self.sock: socket.socket | None = None
        self.head: Head | None = None
        self.uuid = settings.server_uuid or str(uuid.uuid5(uuid.NAMESPACE_OID, f"binlogkit-serve-{settings.server_id}"))

    # -- what serve says about itself -----------------------------------------------------------
    def _head(self) -> Head:
        files = self.archive.files()
        if not files:
            raise BinlogError("the archive holds no binlog file")
        return self.archive.head(files[0])

    def version(self) -> str:
        h = self.head
        assert h is not None
        v = h.version
        return "5.5.5-" + v if h.flavor is Flavor.MARIADB and not v.startswith("5.5.5-") else v

    def globals_(self) -> dict:
        h = self.head
        assert h is not None
        return {"server_id": self.s.server_id, "server_uuid": self.uuid, "binlog_checksum": "CRC32" if h.crc else "NONE",
                "gtid_mode": "ON", "enforce_gtid_consistency": "ON", "gtid_domain_id": 0, "log_bin": 1,
                "binlog_format": "ROW", "version": self.version().removeprefix("5.5.5-"),
                "version_comment": "binlogkit serve", "hostname": socket.gethostname(), "port": self.s.port,
                "server_id_bits": 32, "gtid_strict_mode": 1, "time_zone": "SYSTEM", "system_time_zone": "UTC",
                "lower_case_table_names": 0, "max_allowed_packet": 1 << 30, "net_write_timeout": int(self.s.timeout),
                "net_read_timeout": int(self.s.timeout),
                # semisync offered (a primary's plugin loaded and enabled): a replica that asks gets it
                **{k: True for k in (ENABLED_VARS if h.flavor is Flavor.MYSQL else ENABLED_VARS[:1])}}

    # -- the listener -----------------------------------------------------------------------------
    def start(self) -> int:
        self.head = self._head()
        fam = socket.AF_INET6 if ":" in self.s.bind else socket.AF_INET
        sock = socket.socket(fam, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.s.bind, self.s.port))
        sock.listen(64)
        sock.settimeout(POLL * 2)
        self.sock = sock
        self.port = sock.getsockname()[1]
        return self.port

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        assert self.sock is not None
        n = 0
        while not self._stop.is_set():
            try:
                client, addr = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self._stop.is_set():
                    break
                raise
            n += 1
            peer = f"{addr[0]}:{addr[1]}"
            if not self._slots.acquire(blocking=False):
                try:
                    client.settimeout(2)
                    client.sendall(packet(err(ER_CON_COUNT, "Too many connections"), 0))
                finally:
                    client.close()
                self.say(f"{peer}: refused, --max-connections {self.s.max_connections} reached")
                continue
            threading.Thread(target=self._serve, args=(client, peer, n), daemon=True).start()
        self.sock.close()

    def _serve(self, client: socket.socket, peer: str, thread_id: int) -> None:
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            Session(self, Conn(client, peer, self.s.timeout), thread_id).run()
        except Dropped as exc:
            self.say(str(exc))
        except Exception as exc:   # one connection's bug never ends the server: logged, dropped
            log.exception("connection %s", peer)
            self.say(f"{peer}: dropped after an internal error: {type(exc).__name__}: {exc}")
        finally:
            try:
                client.close()
            except OSError:
                pass
            self._slots.release()


class Session:
    def __init__(self, server: Server, conn: Conn, thread_id: int) -> None:
        self.server = server
        self.s = server.s
        self.c = conn
        self.thread_id = thread_id
        self.vars: dict = {}

    def run(self) -> None:
        if not self.login():
            return
        while True:
            self.c.seq = 0
            p = self.c.read()
            if not p:
                raise Dropped(f"{self.c.peer}: an empty command")
            cmd = p[0]
            if cmd == COM_QUIT:
                return
            if cmd == COM_QUERY:
                sql = p[1:].decode("utf-8", "replace")
                log.debug("%s: query %s", self.c.peer, sql)
                self.c.write_all(answer(sql, self.server.globals_(), self.vars))
            elif cmd == COM_PING:
                self.c.write(ok())
            elif cmd == COM_REGISTER_SLAVE:
                self.c.write(ok())
            elif cmd in (COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID):
                try:
                    d = parse_dump(p)
                except ProtocolError as exc:
                    self.c.write(err(ER_MASTER_FATAL_ERROR_READING_BINLOG, str(exc)))
                    return
                Dumper(self, d).run()
                return
            else:
                self.c.write(err(ER_UNKNOWN_COM, "Unknown command"))
                raise Dropped(f"{self.c.peer}: command {cmd:#04x}, which serve does not take: dropped")

    def login(self) -> bool:
        c = self.c
        nonce = _nonce()
        tls = self.s.tls is not None
        mine = CACHING_SHA2 if self.server.head is not None and self.server.head.flavor is Flavor.MYSQL else NATIVE
        c.write(greeting(self.server.version(), self.thread_id, nonce, mine, tls=tls))
        p = c.read(limit=8192)
        if is_ssl_request(p):
            if not tls:
                raise Dropped(f"{c.peer}: asked for TLS, which this serve has not (no --ssl-cert)")
            try:
                c.sock = self.s.tls.wrap_socket(c.sock, server_side=True)
                c.tls = True
            except OSError as exc:
                raise Dropped(f"{c.peer}: TLS handshake failed: {exc}") from None
            p = c.read(limit=8192)
        elif self.s.require_tls:
            c.write(err(ER_ACCESS_DENIED, "Connections using insecure transport are prohibited"))
            raise Dropped(f"{c.peer}: no TLS, which this serve requires: refused")
        try:
            r = parse_response(p)
        except ProtocolError as exc:
            c.write(err(ER_HANDSHAKE, "Bad handshake"))
            raise Dropped(f"{c.peer}: {exc}") from None
        plugin, answer_ = r.plugin or NATIVE, r.answer
        if plugin not in PLUGINS:     # the client's default is one serve does not check: switch it to ours
            plugin = mine
            c.write(auth_switch(plugin, nonce))
            answer_ = c.read(limit=1024)
        denied = f"Access denied for user '{r.user}'@'{c.peer.rsplit(':', 1)[0]}' (using password: " \
                 f"{'YES' if answer_ else 'NO'})"
        if r.user != self.s.user or not scramble_ok(plugin, answer_, self.s.password, nonce):
            c.write(err(ER_ACCESS_DENIED, denied))
            self.server.say(f"{c.peer}: login refused for user {r.user!r}")
            return False
        if plugin == CACHING_SHA2:
            c.write(fast_auth_ok())
        c.write(ok())
        self.server.say(f"{c.peer}: logged in as {r.user} ({plugin}{', TLS' if c.tls else ''})")
        return True


class Dumper:
    """One dump: from the requested place (file/position or the GTID start), event after event,
    across files, waiting at the end of the last one with heartbeats."""

    def __init__(self, session: Session, d: Dump) -> None:
        self.session = session
        self.server = session.server
        self.c = session.c
        self.d = d
        v = session.vars
        self.crc = bool(self.server.head and self.server.head.crc) and any(
            str(v.get(k) or "").upper() == "CRC32" for k in ("master_binlog_checksum", "source_binlog_checksum"))
        period_ns = next((v[k] for k in ("source_heartbeat_period", "master_heartbeat_period")
                          if isinstance(v.get(k), int) and v[k] > 0), None)
        self.period = period_ns / 1e9 if period_ns else self.server.s.heartbeat
        mysql = bool(self.server.head and self.server.head.flavor is Flavor.MYSQL)
        self.annotate = not mysql and bool(d.flags & BINLOG_SEND_ANNOTATE_ROWS_EVENT)
        self.beat = heartbeat_v2 if mysql and d.flags & USE_HEARTBEAT_EVENT_V2 else heartbeat
        self.sid = self.server.s.server_id
        self.got_after = 0
        # semisync: the header on every message, an ack wanted at each transaction's end, acks read
        self.semisync = asked(v)
        self.trx = TrxEnds()
        self.packets = Packets()
        self.flagged = 0
        self.acks = 0
        self.acked: tuple[str, int] | None = None
        self.wanted: tuple[str, int] | None = None      # the last event flagged: (file, end)
        if self.semisync:
            self.c.semisync = True
            self.c.on_flush = self.poll

    def fail(self, text: str) -> None:
        self.c.write(err(ER_MASTER_FATAL_ERROR_READING_BINLOG, text))
        self.server.say(f"{self.c.peer}: dump refused: {text}")

    def send(self, ev: bytes) -> None:
        self.c.event(ev)

    def send_trx(self, code: int, ev: bytes, name: str, end: int) -> None:
        """An event of the archive (ending at ``end`` of file ``name``): with semisync, the last
        of a transaction asks for an ack."""
        if not self.semisync:
            self.c.event(ev)
            return
        ack = self.trx.ends(code, ev, 4 if self.crc_of_file() else 0)
        if ack:
            self.flagged += 1
            self.wanted = (name, end)
        self.c.event(ev, ack)

    def linger(self) -> None:
        """After the end of a non-blocking dump: the acks still coming read (at most ``timeout``
        seconds, until the last event flagged is acknowledged or the replica closes), so a
        replica still writing what it got is not cut off by the close."""
        self.c.flush()
        deadline = time.monotonic() + self.server.s.timeout
        while self.wanted is not None and self.acked != self.wanted and time.monotonic() < deadline:
            if self.server._stop.is_set():
                return
            if select.select([self.c.sock], [], [], POLL)[0]:
                try:
                    got = self.c.sock.recv(1 << 14)
                except (OSError, socket.timeout):
                    return
                if not got:
                    return
                self.took(got)

    # -- what the replica sends during the dump -------------------------------------------------
    def took(self, got: bytes) -> None:
        """Bytes the replica sent during the dump: acknowledgements counted (with semisync), the
        rest counted against ``MAX_AFTER_DUMP``."""
        if not self.semisync:
            self.got_after += len(got)
        else:
            try:
                packets = self.packets.feed(got)
            except ProtocolError as exc:
                raise Dropped(f"{self.c.peer}: {exc}: dropped") from None
            for p in packets:
                if p[:1] == b"\xef" and self.acks < self.flagged:
                    try:
                        a = parse_ack(p)
                    except ProtocolError as exc:
                        raise Dropped(f"{self.c.peer}: {exc}: dropped") from None
                    self.acks += 1
                    self.acked = (a.file, a.position)
                    log.debug("%s: semisync ack %s:%d", self.c.peer, a.file, a.position)
                else:        # COM_QUIT (the replica closes next), or more acks than were asked for
                    self.got_after += len(p) + 4
        if self.got_after > MAX_AFTER_DUMP:
            raise Dropped(f"{self.c.peer}: {self.got_after} bytes sent during the dump: dropped")

    def poll(self) -> None:
        """What the replica sent, read without waiting (before each write of the stream: its
        acks never fill the socket while serve sends)."""
        sock = self.c.sock
        while getattr(sock, "pending", lambda: 0)() or select.select([sock], [], [], 0)[0]:
            try:
                got = sock.recv(1 << 14)
            except (OSError, socket.timeout) as exc:
                raise Dropped(f"{self.c.peer}: {exc}") from None
            if not got:
                raise Dropped(f"{self.c.peer} closed the connection")
            self.took(got)

    def ack_stat(self) -> str:
        if not self.semisync:
            return ""
        last = f", the last for {self.acked[0]}:{self.acked[1]}" if self.acked else ""
        return f" (semisync: {self.acks} acks of {self.flagged} asked{last})"

    def run(self) -> None:
        d = self.d
        files = self.server.archive.files()
        names = [name_of(f) for f in files]
        skipper = None
        state = self.session.vars.get("slave_connect_state")
        try:
            if d.gtids is not None or state is not None:
                summaries = [self.server.archive.gtids(f, last=i == len(files) - 1) for i, f in enumerate(files)]
                if d.gtids is not None:
                    have = d.gtids
                    start = plan_mysql(have, summaries)
                    skipper = Skipper(lambda g: g in have)
                    what = f"GTID set '{have}'"
                else:
                    pos = GtidPos.parse(str(state))
                    start = plan_mariadb(pos, summaries)
                    skipper = Skipper(mariadb_covered(pos))
                    what = f"GTID state '{pos}'"
                index, position = start
            else:
                name = d.file or (names[0] if names else "")
                if name not in names:
                    return self.fail("Could not find first log file name in binary log index file")
                index, position = names.index(name), max(d.position, 4)
                what = f"{name}:{position}"
        except StartRefused as exc:
            return self.fail(str(exc))
        except BinlogError as exc:
            return self.fail(f"binlogkit serve cannot read the archive: {exc}")
        self.server.say(f"{self.c.peer}: dump for server_id {d.server_id} from {what}: "
                        f"{names[index] if names else '-'}:{position}{', semisync' if self.semisync else ''}"
                        f"{', heartbeat v2' if self.beat is heartbeat_v2 else ''}")
        try:
            self.stream(files, index, position, skipper)
        except Dropped as exc:
            raise Dropped(f"{exc}{self.ack_stat()}") from None
        if self.semisync:
            self.server.say(f"{self.c.peer}: dump ended{self.ack_stat()}")

    def stream(self, files: list[Input], index: int, position: int, skipper: Skipper | None) -> None:
        inp = files[index]
        self.send(fake_rotate(name_of(inp), position, server_id=self.sid, crc=self.crc))
        start, fde_sent = position, False
        while True:
            names = [name_of(f) for f in files]
            last = name_of(inp) not in names or names.index(name_of(inp)) == len(names) - 1
            pos, whole = start, True
            # the size before the read: growth after it, even while the read is going, ends the
            # wait at once (a size taken after the read missed pull's last write when it landed
            # between the two, and the replica then waited for a growth that never came)
            seen = inp.size() if last else -1
            try:
                for off, data in self.server.archive.events(inp, start):
                    code = data[4]
                    if off == 4 and code == T.FORMAT_DESCRIPTION_EVENT:
                        crc = self.crc_of(data)
                        self.trx.format(data)
                        if not fde_sent:
                            fde_sent = True
                            self.send(resent_fde(data, crc) if start > 4 else data)
                        pos = max(pos, off + len(data))
                        continue
                    if off < start:
                        continue
                    pos = off + len(data)
                    if code == T.START_ENCRYPTION_EVENT:
                        continue       # the events are sent decrypted: a replica given it would decrypt them
                    if code == T.ANNOTATE_ROWS_EVENT and not self.annotate:
                        continue
                    if skipper is not None:
                        g = gtid_of(code, int.from_bytes(data[5:9], "little"), data, self.crc_of_file(), off) \
                            if code in (T.GTID_EVENT, T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT) else None
                        if not skipper.keep(code, g):
                            continue
                    self.send_trx(code, data, name_of(inp), pos)
            except TruncatedEventError as exc:
                if not last:
                    return self.damaged(inp, exc)
                whole = False
            except BinlogError as exc:
                return self.damaged(inp, exc)
            start = pos
            if whole and not last:
                files = self.server.archive.files()
                names = [name_of(f) for f in files]
                inp = files[names.index(name_of(inp)) + 1]
                start, fde_sent = 4, False
                self.send(fake_rotate(name_of(inp), 4, server_id=self.sid, crc=self.crc))
                continue
            if whole and self.d.flags & BINLOG_DUMP_NON_BLOCK:
                self.c.write(eof())
                if self.semisync:
                    self.linger()
                return
            start = self.wait(inp, start, files, seen)
            files = self.server.archive.files()

    def damaged(self, inp: Input, exc: BinlogError) -> None:
        off = getattr(exc, "offset", None)
        self.server.say(f"{self.c.peer}: {inp.name} is damaged at offset {off}: {exc} (nothing of it sent)")
        from ..errors import ChecksumError

        what = ("binlog truncated in the middle of event; consider out of disk space on master"
                if isinstance(exc, TruncatedEventError) else "event read from binlog did not pass crc check"
                if isinstance(exc, ChecksumError) else "bogus data in log event")
        self.fail(f"{what}; the last event read from '{name_of(inp)}' at {off} ({str(exc)[:200]})")

    _file_crc: bool | None = None

    def crc_of(self, fde: bytes) -> bool:
        from ..reading.framing import checksum_on

        self._file_crc = checksum_on(fde)
        return self._file_crc

    def crc_of_file(self) -> bool:
        return bool(self._file_crc) if self._file_crc is not None else bool(self.server.head and self.server.head.crc)

    def wait(self, inp: Input, pos: int, files: list[Input], size: int) -> int:
        """Wait at ``pos`` of ``inp`` until the file is no longer ``size`` bytes (its size before
        the read that reached ``pos``) or a file follows ``files`` (listed before that read); a
        heartbeat every period; the replica's closing noticed. Returns the offset to read from."""
        self.c.flush()
        if inp.size() != size or len(self.server.archive.files()) != len(files):
            return pos
        beat = time.monotonic() + self.period
        look = time.monotonic() + POLL
        while True:
            if self.server._stop.is_set():
                raise Dropped(f"{self.c.peer}: serve is stopping")
            r, _, _ = select.select([self.c.sock], [], [], POLL)
            if r:
                try:
                    got = self.c.sock.recv(1 << 14)
                except (OSError, socket.timeout) as exc:
                    raise Dropped(f"{self.c.peer}: {exc}") from None
                if not got:
                    raise Dropped(f"{self.c.peer} closed the connection")
                self.took(got)
            now = time.monotonic()
            if now >= look:      # a stat (a HEAD for a URL) and a listing: every POLL locally, every period for a URL
                look = now + (max(self.period, 1.0) if inp.is_url else POLL)
                if inp.size() != size or len(self.server.archive.files()) != len(files):
                    return pos
            if time.monotonic() >= beat:
                self.send(self.beat(name_of(inp), pos, server_id=self.sid, crc=self.crc))
                self.c.flush()
                beat = time.monotonic() + self.period

"""One replication connection: the greeting, the login (``auth.Login``), the session settings and
the dump stream, over a socket of its own (no MySQL client library: a few queries need no more
than the text protocol, and PyMySQL's import was a fifth of pull's start-up). The dump stream
is read in large ``recv_into`` reads straight into the framer's buffer (``protocol.Framer``),
not one library call per event. The only I/O of the protocol layer.

TLS as ``--ssl-mode`` says (SSLRequest after the greeting, then the socket wrapped by ``ssl``),
and no password where it can be read. From the dump on the stream is read through the
connection's socket, the TLS one when there is TLS: the C loop of ``receiver`` only ever sees
the framer's buffer, never the socket."""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from typing import Any, Callable

from ..flavor import Flavor
from .auth import (CHARSET_UTF8MB4, CLIENT_FLAGS, CLIENT_LOCAL_FILES, CLIENT_SSL, MAX_ROUNDS, Login, TlsError,
                   TlsOptions, handshake_response, parse_greeting, ssl_context, ssl_request, use_tls)
from .protocol import (BINLOG_DUMP_NON_BLOCK, DEFAULT_MAX_EVENT, ER_ACCESS_DENIED, MAX_PAYLOAD, PROTOCOLS, READ_ROOM,
                       Framer, HostileServer, Message, ProtocolError, PullError, Stopped, binlog_dump, column_type,
                       is_eof, packet, parse_error, read_lenenc, register_slave, semisync_ack, text_row)

TLS_TURN = 4 << 20         # what one turn reads of the TLS records already arrived
MAX_REPLY = 64 << 20       # one reply to a command before the dump (pull's are a few rows): bounded
COM_QUIT, COM_QUERY = 0x01, 0x03
SERVER_MORE_RESULTS_EXISTS = 0x0008
# what a reply that does not parse raises in the readers below, besides ProtocolError
_PARSE_ERRORS = (ValueError, IndexError, KeyError, TypeError, struct.error, UnicodeError, OverflowError)


def recv_exact(sock, n: int, chunk: int = 1 << 20) -> bytes:
    """``n`` bytes from ``sock`` (reads of at most ``chunk``): ``EOFError`` when the peer closes
    first; the socket's own ``socket.timeout`` / ``OSError`` pass through, for the caller to name."""
    out = bytearray()
    while len(out) < n:
        got = sock.recv(min(n - len(out), chunk))
        if not got:
            raise EOFError
        out += got
    return bytes(out)


class ConnectionLost(PullError):
    """The connection dropped or went silent (no heartbeat): reconnect and resume."""


class _ServerError(PullError):
    """An ERR packet in answer to the login or a query (``code`` the server's)."""


class _Wire:
    """Packets before the dump: each read bounded by ``timeout`` (the socket's), the bytes of one
    reply by ``MAX_REPLY`` (a server answering with 16 MiB - 1 packets for ever is refused), the
    sequence numbers checked. No read-ahead: the dump stream's first bytes stay in the socket."""

    def __init__(self, sock: Any, where: str) -> None:
        self.sock = sock
        self.where = where
        self.seq = 0
        self.left = MAX_REPLY

    def _exact(self, n: int) -> bytes:
        self.left -= n
        if self.left < 0:
            raise HostileServer(f"a reply of more than {MAX_REPLY} bytes to a command before the dump "
                                f"(pull's queries return a few rows): refused")
        try:
            return recv_exact(self.sock, n)
        except socket.timeout:
            raise ConnectionLost(f"{self.where} did not answer within the read timeout") from None
        except EOFError:
            raise ConnectionLost(f"{self.where} closed the connection") from None
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None

    def read(self) -> bytes:
        """One payload (continued packets joined, within the bound)."""
        parts = []
        while True:
            head = self._exact(4)
            n = int.from_bytes(head[:3], "little")
            if head[3] != self.seq:
                raise ProtocolError(f"{self.where} sent packet {head[3]}, expected {self.seq}")
            self.seq = (self.seq + 1) & 0xFF
            parts.append(self._exact(n))
            if n < MAX_PAYLOAD:
                return b"".join(parts)

    def write(self, payload: bytes) -> None:
        data = packet(payload, self.seq)
        self.seq = (self.seq + (len(payload) // MAX_PAYLOAD) + 1) & 0xFF
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise ConnectionLost(f"{self.where} did not take what was sent within the timeout") from None
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None

    def command(self, payload: bytes) -> None:
        self.seq, self.left = 0, MAX_REPLY
        self.write(payload)

    def check(self, payload: bytes) -> bytes:
        if payload[:1] == b"\xff":
            code, text = parse_error(payload)
            raise _ServerError(text, code=code)
        return payload


class Connection:
    """A logged-in session on the primary; ``start_dump`` turns it into a dump stream."""

    def __init__(self, host: str, port: int, user: str, password: str, *, connect_timeout: float = 10.0,
                 tls: TlsOptions | None = None, read_timeout: float = 10.0, stop: Callable[[], bool] | None = None,
                 max_event_size: int = DEFAULT_MAX_EVENT) -> None:
        self.host, self.port = host, port
        self.where = f"{host}:{port}"
        self.read_timeout = read_timeout
        self.max_event_size = max_event_size
        self._stop = stop or (lambda: False)
        self._tls_opts = tls or TlsOptions()
        self._raw: socket.socket | None = None   # the TCP socket (for a shutdown from another thread)
        self._sock: Any = None                   # the session's socket: the TLS one after an upgrade
        self.sock: Any = None                    # the dump stream's, from start_dump on
        self.framer: Framer | None = None
        self.tls = False
        self.tls_version: str | None = None
        self.server_version = ""
        self.flavor = Flavor.MARIADB
        try:
            self._wait("the login", connect_timeout + read_timeout, self._login, user, password.encode(),
                       connect_timeout)
        except _ServerError as exc:
            self._close_quietly()
            if exc.code == ER_ACCESS_DENIED:
                raise PullError(f"{self.where} refused the login: {exc}", code=exc.code) from None
            raise PullError(f"{self.where}: {exc}", code=exc.code) from None
        except _PARSE_ERRORS as exc:
            self._close_quietly()
            raise ProtocolError(f"{self.where} sent a greeting or login reply that does not parse "
                                f"({type(exc).__name__}: {exc})") from None
        except BaseException:
            self._close_quietly()
            raise

    def _login(self, user: str, password: bytes, connect_timeout: float) -> None:
        try:
            # an ASCII name as bytes (getaddrinfo takes them; typeshed says str): no IDNA codec (encodings.idna,
            # stringprep, unicodedata were imported for it at every start); a name IDNA refuses is an OSError
            host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
            raw = socket.create_connection((host, self.port), timeout=connect_timeout)  # type: ignore[arg-type]
        except (OSError, socket.timeout) as exc:
            raise ConnectionLost(f"cannot connect to {self.where}: {getattr(exc, 'strerror', None) or exc}") from None
        self._raw = self._sock = raw
        if raw.family in (socket.AF_INET, socket.AF_INET6):
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        raw.settimeout(self.read_timeout)
        wire = self._wire = _Wire(raw, self.where)
        hello = wire.check(wire.read())
        greeting = parse_greeting(hello, self.where)
        self.server_version = greeting.version.removeprefix("5.5.5-")   # MariaDB's protocol prefix
        self.flavor = Flavor.of_server_version(greeting.version)
        tls = self._tls_opts
        flags = CLIENT_FLAGS & ~CLIENT_LOCAL_FILES
        on = use_tls(tls.mode, bool(greeting.capabilities & CLIENT_SSL), self.where)
        if on:
            import ssl

            ctx = ssl_context(tls)
            assert ctx is not None   # use_tls is False with DISABLED
            wire.write(ssl_request(flags, CHARSET_UTF8MB4))
            flags |= CLIENT_SSL
            try:
                wire.sock = self._sock = ctx.wrap_socket(raw, server_hostname=self.host)
            except ssl.SSLCertVerificationError as exc:
                raise TlsError(f"{self.where}: the server's certificate does not check out ({exc.verify_message}; "
                               f"--ssl-mode {tls.mode.value}): refused") from None
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionError) as exc:
                # the server closed the connection in the handshake (going down, or starting
                # up): a lost connection, retried as any, not a TLS refusal
                raise ConnectionLost(f"{self.where} closed the connection in the TLS handshake ({exc})") from None
            except (ssl.SSLError, OSError) as exc:
                raise TlsError(f"{self.where}: the TLS handshake failed: {exc}") from None
            self.tls, self.tls_version = True, self._sock.version()   # "TLSv1.3"
        key = None
        if tls.server_public_key:
            try:
                with open(tls.server_public_key, "rb") as fh:
                    key = fh.read(1 << 16)
            except OSError as exc:
                raise TlsError(f"cannot read --server-public-key {tls.server_public_key}: "
                               f"{exc.strerror or exc}") from None
        login = Login(password, tls=on, where=self.where, public_key=key, get_public_key=tls.get_server_public_key)
        plugin, answer = login.first(greeting.plugin, greeting.nonce)
        attrs = {"_client_name": "binlogkit", "_pid": str(os.getpid()), "program_name": "binlogkit pull"}
        wire.write(handshake_response(flags, greeting.capabilities, user.encode(), plugin, answer, attrs))
        for _ in range(MAX_ROUNDS):
            payload = wire.check(wire.read())   # an ERR packet raises (1045...)
            if payload[:1] == b"\0":
                return
            out = login.reply(payload)
            if out is not None:
                wire.write(out)
        raise PullError(f"{self.where}: the login did not end after {MAX_ROUNDS} packets")

    def _wait(self, what: str, timeout: float, fn: Callable, *args):
        """``fn(*args)`` (an exchange that blocks on the server) in a thread of its own, while this
        one answers ``stop()`` (a signal) within 0.1 s and bounds the whole exchange to ``timeout``
        seconds (each read has its own timeout, but a server that trickles a byte at a time would
        keep it going): either shuts the socket down, which ends the call."""
        box: dict = {}

        def run() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # handed to the waiting thread, raised there
                box["exc"] = exc

        t = threading.Thread(target=run, name="binlogkit-pull-wait", daemon=True)
        t.start()
        deadline = time.monotonic() + timeout
        while t.is_alive():
            t.join(0.1)
            if not t.is_alive():
                break
            if self._stop():
                self._shutdown()
                raise Stopped(f"stopped while waiting for {self.where} ({what})")
            if time.monotonic() > deadline:
                self._shutdown()
                raise ConnectionLost(f"{self.where} did not complete {what} within {timeout:g} s")
        if "exc" in box:
            raise box["exc"]
        return box.get("value")

    def _shutdown(self) -> None:
        sock = self._sock if self._sock is not None else self._raw
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _stream(self) -> tuple[socket.socket, Framer]:
        """The socket and framer of the dump stream, which exist from ``start_dump`` on."""
        if self.sock is None or self.framer is None:
            raise PullError(f"{self.where}: the dump stream is used before start_dump")
        return self.sock, self.framer

    # -- SQL before the dump ----------------------------------------------------------------
    def _query(self, sql: str) -> list[tuple]:
        """COM_QUERY and its text result set (rows of the first result; any further result the
        server says follows is read and dropped). A LOCAL INFILE request (0xfb) is refused."""
        wire = self._wire
        wire.command(bytes([COM_QUERY]) + sql.encode())
        first = wire.check(wire.read())
        rows: list[tuple] = []
        keep = True   # rows of the first result only
        while True:
            if first[:1] == b"\0":   # OK: no result set
                status = self._ok_status(first)
            elif first[:1] == b"\xfb":
                raise HostileServer(f"{self.where} answered {sql!r} with a request for a LOCAL INFILE (a file of this "
                                    "host): refused, pull never sends a file")
            else:
                ncols, at = read_lenenc(first, 0)
                if not ncols or at != len(first):
                    raise ProtocolError(f"a result set header {first[:9].hex()} that does not parse")
                types = [column_type(wire.check(wire.read())) for _ in range(ncols)]
                if not is_eof(wire.check(wire.read())):
                    raise ProtocolError("no EOF packet after the column definitions")
                while True:
                    row = wire.check(wire.read())
                    if is_eof(row):
                        status = int.from_bytes(row[3:5], "little") if len(row) >= 5 else 0
                        break
                    if keep:
                        rows.append(text_row(row, types))
                keep = False
            if not status & SERVER_MORE_RESULTS_EXISTS:
                return rows
            first = wire.check(wire.read())

    @staticmethod
    def _ok_status(ok: bytes) -> int:
        """The status flags of an OK packet (0x00 affected_rows last_insert_id status:2 ...)."""
        _n, at = read_lenenc(ok, 1)
        _n, at = read_lenenc(ok, at)
        return int.from_bytes(ok[at:at + 2], "little")

    def query(self, sql: str) -> list[tuple]:
        try:
            return self._wait(sql, self.read_timeout, self._query, sql)
        except _ServerError as exc:
            raise PullError(f"{self.where}: {sql}: {exc}", code=exc.code) from None
        except _PARSE_ERRORS as exc:
            raise ProtocolError(f"{self.where} sent a reply to {sql!r} that does not parse "
                                f"({type(exc).__name__}: {exc})") from None

    def value(self, sql: str):
        rows = self.query(sql)
        return rows[0][0] if rows else None

    # -- the dump ----------------------------------------------------------------------------
    def start_dump(self, server_id: int, file: str, position: int, *, semisync: bool = False,
                   heartbeat_s: float = 1.0, non_block: bool = False, gtid: str | None = None,
                   report_host: str = "", report_port: int = 0, room: int = READ_ROOM) -> None:
        """Register and ask for the dump; ``room``: the framer's buffer (``Framer``)."""
        proto = PROTOCOLS[self.flavor]
        for sql in proto.session_sql(heartbeat_s=heartbeat_s, semisync=semisync):
            self.query(sql)
        if gtid is not None and proto.gtid_start_sql is not None:
            for sql in proto.gtid_start_sql(gtid):
                self.query(sql)
            file, position = "", 4
        self.sock = self._sock   # after the login and the queries: the stream is the framer's from here
        self.sock.settimeout(None)
        self.framer = Framer(semisync=semisync, seq=1, max_packet=self.max_event_size + 3, room=room)
        self._send(register_slave(server_id, host=report_host, port=report_port))
        msg = self._one()
        if msg.kind == "error":
            raise PullError(f"{self.where} refused COM_REGISTER_SLAVE: {msg.text}", code=msg.code)
        flags = proto.dump_flags | (BINLOG_DUMP_NON_BLOCK if non_block else 0)
        self.framer.expect_sequence(1)
        self._send(proto.gtid_dump(server_id, gtid, flags) if gtid is not None and proto.gtid_dump is not None
                   else binlog_dump(server_id, file, position, flags=flags))

    def _send(self, payload: bytes) -> None:
        sock, _framer = self._stream()
        try:
            sock.settimeout(self.read_timeout)
            sock.sendall(packet(payload, 0))
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None

    def _one(self) -> Message:
        _sock, framer = self._stream()
        deadline = time.monotonic() + self.read_timeout
        while True:
            for msg in framer.messages():
                if msg.kind == "part":
                    raise HostileServer(f"{self.where} answered COM_REGISTER_SLAVE with a packet of 16 MiB")
                return msg
            self.wait_read(deadline, "COM_REGISTER_SLAVE")

    def wait_read(self, deadline: float, what: str) -> int:
        """Read into the framer, answering ``stop()`` every 0.5 s, until ``deadline``."""
        while True:
            if self._stop():
                raise Stopped(f"stopped while waiting for {self.where} ({what})")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConnectionLost(f"{self.where} did not answer {what} within {self.read_timeout:g} s")
            got = self.read(timeout=min(0.5, left))
            if got is not None:
                return got

    def read(self, timeout: float) -> int | None:
        """Read what the socket has into the framer's buffer (``Framer.fill``: up to its free space,
        4 MiB or more); None on timeout."""
        sock, framer = self._stream()
        sock.settimeout(timeout)
        try:
            got = framer.fill(sock.recv_into)
        except socket.timeout:
            return None
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None
        if not got:
            raise ConnectionLost(f"{self.where} closed the connection")
        if self.tls:
            got += self._more_records(sock, framer)
        return got

    def _more_records(self, sock: Any, framer: Framer) -> int:
        """A TLS socket gives one record (16 KiB at most) per read: the records already arrived
        are read too, without waiting (else each 16 KiB is a turn of the receiver's loop)."""
        import ssl

        got = 0
        sock.settimeout(0.0)
        try:
            while got < TLS_TURN:
                n = framer.fill(sock.recv_into, more=True)
                if n <= 0:   # the buffer is full (-1), or the peer closed (0: the next read says so)
                    break
                got += n
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError, socket.timeout):
            pass   # nothing more without waiting (the next read waits, with its timeout)
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None
        return got

    def messages(self):
        return self._stream()[1].messages()

    def ack(self, file: str, position: int) -> None:
        self._send(semisync_ack(file, position))
        self._stream()[1].ack_sent()

    def close(self) -> None:
        """COM_QUIT when the session is still one of commands, then the socket closed."""
        if self.sock is None and self._sock is not None:
            try:
                self._sock.settimeout(1.0)
                self._wire.command(bytes([COM_QUIT]))
            except Exception:  # closing a dead connection: nothing to tell
                pass
        self._close_quietly()

    def _close_quietly(self) -> None:
        for s in (self._sock, self._raw):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self._sock = self._raw = None


def binary_logs(conn: Connection) -> list[tuple[str, int]]:
    return [(r[0], int(r[1])) for r in conn.query("SHOW BINARY LOGS")]


__all__ = ["Connection", "ConnectionLost", "ProtocolError", "TlsError", "TlsOptions", "binary_logs"]

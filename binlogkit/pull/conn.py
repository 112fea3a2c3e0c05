"""One replication connection: login and session settings through PyMySQL, then the dump
stream read in large socket reads and framed by ``protocol.Framer`` (not one library call per
event). The only I/O of the protocol layer.

The login itself is ours (``auth.Login`` through PyMySQL's one hook, ``_request_authentication``):
TLS as ``--ssl-mode`` says (SSLRequest after the greeting, then the socket wrapped by ``ssl``),
and no password where it can be read. PyMySQL never holds the password. From the dump on the
stream is read through the connection's socket, the TLS one when there is TLS: the C loop of
``receiver`` only ever sees the framer's buffer, never the socket."""

from __future__ import annotations

import socket
import ssl
import struct
import sys
import threading
import time
from typing import Any, Callable

from ..codecs.common import pack_int
from ..flavor import Flavor
from .auth import MAX_PACKET, MAX_ROUNDS, Login, TlsError, TlsOptions, ssl_context, ssl_request, use_tls
from .protocol import (BINLOG_DUMP_NON_BLOCK, DEFAULT_MAX_EVENT, ER_ACCESS_DENIED, PROTOCOLS, Framer,
                       HostileServer, Message, ProtocolError, PullError, Stopped, binlog_dump, packet,
                       register_slave, semisync_ack)

READ_SIZE = 4 << 20
MAX_REPLY = 64 << 20       # one reply to a command before the dump (pull's are a few rows): bounded
# what PyMySQL raises on a reply that does not parse (a hostile or broken server), besides its own
_PARSE_ERRORS = (ValueError, IndexError, KeyError, TypeError, AttributeError, struct.error, RuntimeError,
                 UnicodeError, OverflowError)


class ConnectionLost(PullError):
    """The connection dropped or went silent (no heartbeat): reconnect and resume."""


def _pymysql():
    """PyMySQL, imported without the ``cryptography`` its ``_auth`` module imports eagerly (0.045 s
    of CPU with bytecode cached, a quarter of pull's start-up): the only function of PyMySQL that
    uses it, ``_auth.sha2_rsa_encrypt`` (the password under RSA without TLS), is reached only
    through PyMySQL's login, which pull replaces by ``auth.Login`` (that imports cryptography
    itself when a key is needed). The function is wrapped to import cryptography on its first
    call, so that PyMySQL used for anything else in the same process is whole."""
    if sys.modules.get("pymysql") is not None:   # (None: made unimportable, the ImportError below)
        return sys.modules["pymysql"]
    blocked = "cryptography" not in sys.modules
    if blocked:
        sys.modules["cryptography"] = None  # type: ignore[assignment]   # an ImportError in PyMySQL's try
    try:
        import pymysql
    except ImportError:
        pymysql = None
    finally:
        if blocked and sys.modules.get("cryptography", 0) is None:
            del sys.modules["cryptography"]
    if pymysql is None and blocked:  # a PyMySQL that needs cryptography at import: the plain import
        for name in [m for m, mod in sys.modules.items() if mod is not None and m.split(".")[0] == "pymysql"]:
            del sys.modules[name]
        try:
            import pymysql
        except ImportError:
            pymysql = None
    if pymysql is None:
        raise PullError("binlogkit pull needs PyMySQL: pip install 'binlogkit[pull]'")
    auth = sys.modules.get("pymysql._auth")
    if blocked and auth is not None and not getattr(auth, "_have_cryptography", True):
        _rsa_later(auth)
    return pymysql


def _rsa_later(auth) -> None:
    """``auth.sha2_rsa_encrypt`` imports cryptography (what PyMySQL's module import would have)
    on its first call."""
    eager = auth.sha2_rsa_encrypt

    def sha2_rsa_encrypt(password, salt, public_key):
        try:
            from cryptography.hazmat.backends import default_backend
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
        except ImportError:
            pass   # PyMySQL's own "cryptography is required" error
        else:
            auth.default_backend, auth.hashes, auth.serialization, auth.padding = (default_backend, hashes,
                                                                                  serialization, padding)
            auth._have_cryptography = True
            auth.sha2_rsa_encrypt = eager
        return eager(password, salt, public_key)

    auth.sha2_rsa_encrypt = sha2_rsa_encrypt


_SESSION: type | None = None


def _session_class() -> type:
    """PyMySQL's connection with the login replaced by ``auth.Login`` and a bound on the bytes of
    one reply (PyMySQL joins continued packets in memory, and a server answering a query with
    16 MiB - 1 packets for ever would grow it without end; the time a reply may take is bounded by
    ``Connection._wait``). Made once, on first use: PyMySQL is imported only when pull runs."""
    global _SESSION
    if _SESSION is not None:
        return _SESSION
    _pymysql()
    from pymysql.charset import charset_by_name
    from pymysql.connections import Connection as PyMySQLConnection
    from pymysql.constants import CLIENT

    class Session(PyMySQLConnection):
        bk_password = b""
        bk_tls = TlsOptions()
        bk_where = ""
        bk_tls_on = False
        _sock: Any   # PyMySQL's socket (an annotation only: PyMySQL sets it)
        _bk_left = MAX_REPLY

        def connect(self, sock=None):
            self._bk_left = MAX_REPLY
            return super().connect(sock)

        def _execute_command(self, command, sql):
            self._bk_left = MAX_REPLY
            return super()._execute_command(command, sql)

        def _read_bytes(self, num_bytes):
            self._bk_left -= num_bytes
            if self._bk_left < 0:
                self._force_close()
                raise HostileServer(f"a reply of more than {MAX_REPLY} bytes to a command before the dump "
                                    f"(pull's queries return a few rows): refused")
            return super()._read_bytes(num_bytes)

        def _request_authentication(self) -> None:
            tls, where = self.bk_tls, self.bk_where
            flags = self.client_flag | CLIENT.MULTI_RESULTS
            charset = charset_by_name(self.charset).id
            on = use_tls(tls.mode, bool(self.server_capabilities & CLIENT.SSL), where)
            if on:
                ctx = ssl_context(tls)
                assert ctx is not None   # use_tls is False with DISABLED
                self.write_packet(ssl_request(flags, charset))
                flags |= CLIENT.SSL
                try:
                    self._sock = ctx.wrap_socket(self._sock, server_hostname=self.host)
                except ssl.SSLCertVerificationError as exc:
                    raise TlsError(f"{where}: the server's certificate does not check out ({exc.verify_message}; "
                                   f"--ssl-mode {tls.mode.value}): refused") from None
                except (ssl.SSLError, OSError) as exc:
                    raise TlsError(f"{where}: the TLS handshake failed: {exc}") from None
                self._rfile = self._sock.makefile("rb")
                self._secure = True
            self.bk_tls_on = on
            key = None
            if tls.server_public_key:
                try:
                    with open(tls.server_public_key, "rb") as fh:
                        key = fh.read(1 << 16)
                except OSError as exc:
                    raise TlsError(f"cannot read --server-public-key {tls.server_public_key}: "
                                   f"{exc.strerror or exc}") from None
            login = Login(self.bk_password, tls=on, where=where, public_key=key,
                          get_public_key=tls.get_server_public_key)
            plugin, answer = login.first(self._auth_plugin_name or "", self.salt or b"")
            user = self.user.encode(self.encoding) if isinstance(self.user, str) else self.user
            data = struct.pack("<IIB23x", flags, MAX_PACKET, charset) + user + b"\0"
            if self.server_capabilities & CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA:
                data += _lenenc(len(answer)) + answer
            else:
                data += bytes([len(answer)]) + answer
            if self.server_capabilities & CLIENT.PLUGIN_AUTH:
                data += plugin.encode() + b"\0"
            if self.server_capabilities & CLIENT.CONNECT_ATTRS:
                attrs = b"".join(_lenenc(len(x)) + x for kv in getattr(self, "_connect_attrs", {}).items()
                                 for x in (kv[0].encode(), kv[1].encode()))
                data += _lenenc(len(attrs)) + attrs
            self.write_packet(data)
            for _ in range(MAX_ROUNDS):
                payload = self._read_packet().get_all_data()   # an ERR packet raises (1045...)
                if payload[:1] == b"\0":
                    return
                out = login.reply(payload)
                if out is not None:
                    self.write_packet(out)
            raise PullError(f"{where}: the login did not end after {MAX_ROUNDS} packets")

    _SESSION = Session
    return Session


_lenenc = pack_int   # the protocol's length-encoded integer is the binlog's packed integer


class Connection:
    """A logged-in session on the primary; ``start_dump`` turns it into a dump stream."""

    def __init__(self, host: str, port: int, user: str, password: str, *, connect_timeout: float = 10.0,
                 tls: TlsOptions | None = None, read_timeout: float = 10.0, stop: Callable[[], bool] | None = None,
                 max_event_size: int = DEFAULT_MAX_EVENT) -> None:
        pymysql = _pymysql()
        self.where = f"{host}:{port}"
        self.read_timeout = read_timeout
        self.max_event_size = max_event_size
        self._stop = stop or (lambda: False)
        self.sock: socket.socket | None = None
        try:
            self.conn = _session_class()(host=host, port=port, user=user, password="", autocommit=True,
                                         connect_timeout=connect_timeout, charset="utf8mb4", ssl_disabled=True,
                                         defer_connect=True, read_timeout=read_timeout, write_timeout=read_timeout)
            self.conn.bk_password = password.encode()
            self.conn.bk_tls = tls or TlsOptions()
            self.conn.bk_where = self.where
            self._wait("the login", connect_timeout + read_timeout, self.conn.connect)
        except _PARSE_ERRORS as exc:
            raise ProtocolError(f"{self.where} sent a greeting or login reply that does not parse "
                                f"({type(exc).__name__}: {exc})") from None
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else None
            text = exc.args[1] if len(exc.args) > 1 else str(exc)
            if code == ER_ACCESS_DENIED:
                raise PullError(f"{self.where} refused the login: {text}", code=code) from None
            if code in (2003, 2006, 2013):
                raise ConnectionLost(f"cannot connect to {self.where}: {text}", code=code) from None
            raise PullError(f"{self.where}: {text}", code=code) from None
        version = self.conn.get_server_info() or ""
        self.server_version = version.removeprefix("5.5.5-")   # MariaDB's protocol prefix
        self.flavor = Flavor.of_server_version(version)
        self.framer: Framer | None = None
        self.tls = bool(self.conn.bk_tls_on)   # the session runs inside TLS
        self.tls_version: str | None = self.conn._sock.version() if self.tls else None   # "TLSv1.3"

    def _wait(self, what: str, timeout: float, fn: Callable, *args):
        """``fn(*args)`` (a PyMySQL call that blocks on the server) in a thread of its own, while
        this one answers ``stop()`` (a signal) within 0.1 s and bounds the whole exchange to
        ``timeout`` seconds (each read of PyMySQL has its own timeout, but a server that trickles
        a byte at a time would keep it going): either shuts the socket down, which ends the call."""
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
        sock = getattr(self.conn, "_sock", None) if hasattr(self, "conn") else None
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
    def query(self, sql: str) -> list[tuple]:
        pymysql = _pymysql()
        def run() -> list[tuple]:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall() or [])

        try:
            return self._wait(sql, self.read_timeout, run)
        except RuntimeError as exc:
            if "LOAD_LOCAL" in str(exc) or "local_infile" in str(exc):
                raise HostileServer(f"{self.where} answered {sql!r} with a request for a LOCAL INFILE (a file of this "
                                    "host): refused, pull never sends a file") from None
            raise ProtocolError(f"{self.where} sent a reply to {sql!r} that does not parse ({exc})") from None
        except _PARSE_ERRORS as exc:
            raise ProtocolError(f"{self.where} sent a reply to {sql!r} that does not parse "
                                f"({type(exc).__name__}: {exc})") from None
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            raise PullError(f"{self.where}: {sql}: {exc.args[1] if len(exc.args) > 1 else exc}", code=code) from None

    def value(self, sql: str):
        rows = self.query(sql)
        return rows[0][0] if rows else None

    # -- the dump ----------------------------------------------------------------------------
    def start_dump(self, server_id: int, file: str, position: int, *, semisync: bool = False,
                   heartbeat_s: float = 1.0, non_block: bool = False, gtid: str | None = None,
                   report_host: str = "", report_port: int = 0) -> None:
        proto = PROTOCOLS[self.flavor]
        for sql in proto.session_sql(heartbeat_s=heartbeat_s, semisync=semisync):
            self.query(sql)
        if gtid is not None and proto.gtid_start_sql is not None:
            for sql in proto.gtid_start_sql(gtid):
                self.query(sql)
            file, position = "", 4
        self.sock = self.conn._sock  # PyMySQL's socket after login: the stream is ours from here
        self.sock.settimeout(None)
        self.framer = Framer(semisync=semisync, seq=1, max_packet=self.max_event_size + 3)
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
        """Read what the socket has (up to 4 MiB) into the framer; None on timeout."""
        sock, framer = self._stream()
        sock.settimeout(timeout)
        try:
            chunk = sock.recv(READ_SIZE)
        except socket.timeout:
            return None
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None
        if not chunk:
            raise ConnectionLost(f"{self.where} closed the connection")
        framer.feed(chunk)
        return len(chunk)

    def messages(self):
        return self._stream()[1].messages()

    def ack(self, file: str, position: int) -> None:
        self._send(semisync_ack(file, position))
        self._stream()[1].ack_sent()

    def close(self) -> None:
        try:
            if self.sock is None:   # no dump started: a plain COM_QUIT, and PyMySQL closes its (TLS) socket
                self.conn.close()
                return
            self.sock.close()
            self.conn._sock = None
            self.conn.close()
        except Exception:  # closing a dead connection: nothing to tell
            pass


def binary_logs(conn: Connection) -> list[tuple[str, int]]:
    return [(r[0], int(r[1])) for r in conn.query("SHOW BINARY LOGS")]


__all__ = ["Connection", "ConnectionLost", "ProtocolError", "TlsError", "TlsOptions", "binary_logs"]

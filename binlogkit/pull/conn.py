"""One replication connection: login and session settings through PyMySQL, then the dump
stream read in large socket reads and framed by ``protocol.Framer`` (not one library call per
event). The only I/O of the protocol layer."""

from __future__ import annotations

import socket

from ..flavor import Flavor
from .protocol import (BINLOG_DUMP_NON_BLOCK, ER_ACCESS_DENIED, PROTOCOLS, Framer, Message, ProtocolError,
                       PullError, binlog_dump, packet, register_slave, semisync_ack)

READ_SIZE = 4 << 20


class ConnectionLost(PullError):
    """The connection dropped or went silent (no heartbeat): reconnect and resume."""


def _pymysql():
    try:
        import pymysql
    except ImportError:
        raise PullError("binlogkit pull needs PyMySQL: pip install 'binlogkit[pull]'") from None
    return pymysql


class Connection:
    """A logged-in session on the primary; ``start_dump`` turns it into a dump stream."""

    def __init__(self, host: str, port: int, user: str, password: str, *, connect_timeout: float = 10.0) -> None:
        pymysql = _pymysql()
        self.where = f"{host}:{port}"
        try:
            self.conn = pymysql.connect(host=host, port=port, user=user, password=password, autocommit=True,
                                        connect_timeout=connect_timeout, charset="utf8mb4")
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
        self.flavor = Flavor.MARIADB if "mariadb" in version.lower() else Flavor.MYSQL
        self.framer: Framer | None = None
        self.sock: socket.socket | None = None

    def _stream(self) -> tuple[socket.socket, Framer]:
        """The socket and framer of the dump stream, which exist from ``start_dump`` on."""
        if self.sock is None or self.framer is None:
            raise PullError(f"{self.where}: the dump stream is used before start_dump")
        return self.sock, self.framer

    # -- SQL before the dump ----------------------------------------------------------------
    def query(self, sql: str) -> list[tuple]:
        pymysql = _pymysql()
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall() or [])
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
        if gtid is not None:
            if proto.gtid_start_sql is None:
                raise PullError(f"--gtid with a {self.flavor.value} primary needs COM_BINLOG_DUMP_GTID, not wired to "
                                "the command yet: start with --start-file")
            for sql in proto.gtid_start_sql(gtid):
                self.query(sql)
            file, position = "", 4
        self.sock = self.conn._sock  # PyMySQL's socket after login: the stream is ours from here
        self.sock.settimeout(None)
        self.framer = Framer(semisync=semisync, seq=1)
        self._send(register_slave(server_id, host=report_host, port=report_port))
        msg = self._one()
        if msg.kind == "error":
            raise PullError(f"{self.where} refused COM_REGISTER_SLAVE: {msg.text}", code=msg.code)
        flags = proto.dump_flags | (BINLOG_DUMP_NON_BLOCK if non_block else 0)
        self.framer.expect_sequence(1)
        self._send(binlog_dump(server_id, file, position, flags=flags))

    def _send(self, payload: bytes) -> None:
        sock, _framer = self._stream()
        try:
            sock.sendall(packet(payload, 0))
        except OSError as exc:
            raise ConnectionLost(f"{self.where}: {exc.strerror or exc}") from None

    def _one(self) -> Message:
        _sock, framer = self._stream()
        while True:
            for msg in framer.messages():
                return msg
            got = self.read(timeout=30.0)
            if got is None:
                raise ConnectionLost(f"{self.where} did not answer COM_REGISTER_SLAVE")

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
            if self.sock is not None:
                self.sock.close()
            self.conn._sock = None
            self.conn.close()
        except Exception:  # closing a dead connection: nothing to tell
            pass


def binary_logs(conn: Connection) -> list[tuple[str, int]]:
    return [(r[0], int(r[1])) for r in conn.query("SHOW BINARY LOGS")]


__all__ = ["Connection", "ConnectionLost", "ProtocolError", "binary_logs"]

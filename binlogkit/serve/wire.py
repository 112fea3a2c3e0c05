"""The server side of the client/server protocol, pure: the greeting a primary sends, the
HandshakeResponse a replica answers with, checking its scramble, OK / ERR / EOF packets and text
result sets. Framing (``packet``), length-encoded integers and the scrambles are pull's
(``pull.protocol``, ``pull.auth``): the client side of the same exchange.

Layouts (MariaDB ``sql/sql_acl.cc``, mysql-server ``sql/auth/sql_authentication.cc``;
integers little-endian)::

    greeting (protocol 10)  10 version NUL thread_id:4 nonce[0:8] 0 caps_lo:2 charset:1 status:2
                            caps_hi:2 len_nonce:1 (21) reserved:10 (MariaDB: 6 zero + caps_ext:4)
                            nonce[8:20] NUL plugin NUL
    SSLRequest              caps:4 max_packet:4 charset:1 filler:23          (32 bytes, CLIENT_SSL)
    HandshakeResponse41     caps:4 max_packet:4 charset:1 filler:23 user NUL
                            answer (lenenc, or len:1) [database NUL] [plugin NUL] [attrs]
    OK                      0x00 affected (lenenc) insert_id (lenenc) status:2 warnings:2
    ERR                     0xff code:2 '#' sqlstate:5 message
    EOF                     0xfe warnings:2 status:2
    AuthSwitchRequest       0xfe plugin NUL nonce NUL
    AuthMoreData            0x01 data       (caching_sha2_password: 0x03 fast auth ok)
    result set              column count (lenenc), a ColumnDefinition41 per column, EOF, rows
                            (a lenenc string per value, 0xfb NULL), EOF
"""

from __future__ import annotations

import hmac
import struct
from typing import NamedTuple

from ..pull.auth import (AUTH_MORE_DATA, AUTH_SWITCH, CHARSET_UTF8MB4, CLIENT_CONNECT_ATTRS, CLIENT_LONG_FLAG,
                         CLIENT_LONG_PASSWORD, CLIENT_MULTI_RESULTS, CLIENT_PLUGIN_AUTH,
                         CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, CLIENT_PROTOCOL_41, CLIENT_SECURE_CONNECTION,
                         CLIENT_SSL, CLIENT_TRANSACTIONS, SHA2_FAST_AUTH_OK, caching_sha2_scramble, lenenc,
                         native_scramble)
from ..pull.protocol import ProtocolError, read_lenenc

CLIENT_CONNECT_WITH_DB = 0x8
CLIENT_DEPRECATE_EOF = 0x1000000
SERVER_STATUS_AUTOCOMMIT = 0x0002
# what serve offers: never LOCAL INFILE, never DEPRECATE_EOF (result sets end with EOF packets)
SERVER_CAPS = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41
               | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
               | CLIENT_CONNECT_ATTRS | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
NATIVE = "mysql_native_password"
CACHING_SHA2 = "caching_sha2_password"
PLUGINS = (NATIVE, CACHING_SHA2)          # both answer a scramble of the same 20-byte nonce
SSL_REQUEST_SIZE = 32

ER_ACCESS_DENIED = 1045
ER_UNKNOWN_COM = 1047
ER_NOT_SUPPORTED_AUTH_MODE = 1251
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_PARSE = 1064
ER_CON_COUNT = 1040
ER_HANDSHAKE = 1043
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
SQLSTATES = {ER_ACCESS_DENIED: "28000", ER_UNKNOWN_COM: "08S01", ER_NOT_SUPPORTED_AUTH_MODE: "08004",
             ER_UNKNOWN_SYSTEM_VARIABLE: "HY000", ER_PARSE: "42000", ER_CON_COUNT: "08004", ER_HANDSHAKE: "08S01",
             ER_MASTER_FATAL_ERROR_READING_BINLOG: "HY000"}

TYPE_LONGLONG = 8
TYPE_VAR_STRING = 253


def greeting(version: str, thread_id: int, nonce: bytes, plugin: str, *, tls: bool) -> bytes:
    """The Initial Handshake of protocol 10; ``nonce`` 20 bytes without NUL (none in it)."""
    if len(nonce) != 20 or b"\0" in nonce:
        raise ValueError("a greeting's nonce is 20 bytes, none of them NUL")
    caps = SERVER_CAPS | (CLIENT_SSL if tls else 0)
    return (b"\x0a" + version.encode() + b"\0" + struct.pack("<I", thread_id & 0xFFFFFFFF) + nonce[:8] + b"\0"
            + struct.pack("<HBHHB", caps & 0xFFFF, CHARSET_UTF8MB4, SERVER_STATUS_AUTOCOMMIT, caps >> 16, 21)
            + bytes(10) + nonce[8:] + b"\0" + plugin.encode() + b"\0")


def is_ssl_request(payload: bytes) -> bool:
    return len(payload) == SSL_REQUEST_SIZE and bool(int.from_bytes(payload[:4], "little") & CLIENT_SSL)


class Response(NamedTuple):
    """What a replica's HandshakeResponse41 says."""

    caps: int
    user: str
    answer: bytes
    plugin: str
    attrs: dict[str, str]


def parse_response(p: bytes) -> Response:
    """A HandshakeResponse41 (protocol 4.1 only: an older client is refused). ProtocolError when
    it does not parse."""
    try:
        caps, _max, _cs = struct.unpack_from("<IIB", p)
        if not caps & CLIENT_PROTOCOL_41:
            raise ProtocolError("a client that does not speak protocol 4.1")
        at = 32
        end = p.index(b"\0", at)
        user = p[at:end].decode("utf-8")
        at = end + 1
        if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
            n, at = read_lenenc(p, at)
        else:
            n, at = p[at], at + 1
        answer = p[at:at + (n or 0)]
        if len(answer) != (n or 0):
            raise ProtocolError("a HandshakeResponse whose answer runs past its packet")
        at += n or 0
        if caps & CLIENT_CONNECT_WITH_DB and at < len(p):
            at = p.index(b"\0", at) + 1
        plugin = ""
        if caps & CLIENT_PLUGIN_AUTH and at < len(p):
            end = p.index(b"\0", at)
            plugin = p[at:end].decode("ascii")
            at = end + 1
        attrs: dict[str, str] = {}
        if caps & CLIENT_CONNECT_ATTRS and at < len(p):
            total, at = read_lenenc(p, at)
            stop = at + (total or 0)
            while at < stop:
                kv = []
                for _ in range(2):
                    n, at = read_lenenc(p, at)
                    kv.append(p[at:at + (n or 0)].decode("utf-8", "replace"))
                    at += n or 0
                attrs[kv[0]] = kv[1]
        return Response(caps, user, bytes(answer), plugin, attrs)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError) as exc:
        raise ProtocolError(f"a HandshakeResponse that does not parse ({type(exc).__name__})") from None


def scramble_ok(plugin: str, answer: bytes, password: bytes, nonce: bytes) -> bool:
    """Whether ``answer`` is the scramble ``plugin`` makes of ``password`` with ``nonce``
    (constant-time compare; an empty password is an empty answer)."""
    if plugin == NATIVE:
        want = native_scramble(password, nonce)
    elif plugin == CACHING_SHA2:
        want = caching_sha2_scramble(password, nonce)
    else:
        return False
    return hmac.compare_digest(want, answer)


def auth_switch(plugin: str, nonce: bytes) -> bytes:
    return bytes([AUTH_SWITCH]) + plugin.encode() + b"\0" + nonce + b"\0"


def fast_auth_ok() -> bytes:
    return bytes([AUTH_MORE_DATA, SHA2_FAST_AUTH_OK])


def ok(affected: int = 0) -> bytes:
    return b"\x00" + lenenc(affected) + lenenc(0) + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT, 0)


def err(code: int, message: str) -> bytes:
    return (b"\xff" + struct.pack("<H", code) + b"#" + SQLSTATES.get(code, "HY000").encode()
            + message.encode("utf-8", "replace")[:512])


def eof() -> bytes:
    return b"\xfe" + struct.pack("<HH", 0, SERVER_STATUS_AUTOCOMMIT)


def _lenstr(b: bytes) -> bytes:
    return lenenc(len(b)) + b


def column(name: str, type_code: int) -> bytes:
    """A ColumnDefinition41: catalog def, no schema/table, ``name`` (as both names)."""
    n = name.encode()
    length = 21 if type_code == TYPE_LONGLONG else 1024
    return (_lenstr(b"def") + _lenstr(b"") + _lenstr(b"") + _lenstr(b"") + _lenstr(n) + _lenstr(n)
            + b"\x0c" + struct.pack("<HIBHB", CHARSET_UTF8MB4 if type_code != TYPE_LONGLONG else 63, length,
                                    type_code, 0, 0) + b"\0\0")


def result_set(names: list[str], rows: list[tuple]) -> list[bytes]:
    """The payloads of a text result set (ints as LONGLONG columns, the rest as strings, None NULL)."""
    types = []
    for i in range(len(names)):
        vals = [r[i] for r in rows if r[i] is not None]
        types.append(TYPE_LONGLONG if vals and all(isinstance(v, int) for v in vals) else TYPE_VAR_STRING)
    out = [lenenc(len(names))] + [column(n, t) for n, t in zip(names, types)] + [eof()]
    for r in rows:
        out.append(b"".join(b"\xfb" if v is None else _lenstr(str(v).encode()) for v in r))
    return out + [eof()]


__all__ = ["greeting", "is_ssl_request", "Response", "parse_response", "scramble_ok", "auth_switch", "fast_auth_ok",
           "ok", "err", "eof", "column", "result_set", "NATIVE", "CACHING_SHA2", "PLUGINS"]

"""The login of ``pull``, pure: TLS settings, the SSLRequest, and what a replica answers to each
authentication plugin — never the password where it can be read on the wire.

Layouts (MySQL ``sql-common/client.cc``, ``sql/auth/sha2_password.cc``; MariaDB
``sql/sql_acl.cc``, ``plugin/auth_pam``; integers little-endian)::

    SSLRequest          capabilities:4 (with CLIENT_SSL) max_packet:4 charset:1 filler:23
                        (then the TLS handshake; the HandshakeResponse follows inside TLS)
    AuthSwitchRequest   0xfe plugin_name NUL plugin_data           (the nonce, NUL-terminated)
    AuthMoreData        0x01 data                                  (caching_sha2: 0x03 fast auth
                                                                    ok, 0x04 full auth wanted;
                                                                    or a PEM public key)
    dialog question     type:1 prompt                              (type & 0x06 == 4: a password
                                                                    question; type & 1: the last)

What each plugin gets (``Login.first`` / ``Login.reply``)::

    mysql_native_password   SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))
    caching_sha2_password   SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce); on "full auth":
                            pw NUL inside TLS, else RSA-OAEP(pw NUL XOR nonce) with the server's
                            public key (pinned, or asked for when allowed), else refused
    sha256_password         as caching_sha2's full auth
    mysql_clear_password    pw NUL inside TLS, else refused
    dialog (PAM)            pw NUL to each password question inside TLS, else refused
    anything else           refused (binlogkit cannot answer it)

An empty password is sent as the plugin's empty answer: there is nothing to read.
"""

from __future__ import annotations

import enum
import hashlib
import struct
from typing import TYPE_CHECKING, NamedTuple

from ..codecs.packed import pack_int
from .protocol import ProtocolError, PullError

if TYPE_CHECKING:
    import ssl

CLIENT_SSL = 0x0800
MAX_PACKET = 0xFFFFFF

AUTH_SWITCH = 0xFE
AUTH_MORE_DATA = 0x01
SHA2_FAST_AUTH_OK = 0x03
SHA2_FULL_AUTH = 0x04
SHA2_REQUEST_PUBLIC_KEY = 0x02
SHA256_REQUEST_PUBLIC_KEY = 0x01
DIALOG_PASSWORD_QUESTION = 0x04

CLEAR_TEXT_PLUGINS = frozenset({"mysql_clear_password", "dialog"})
MAX_ROUNDS = 8   # packets of a login: a switch, a key, a few dialog questions


class SslMode(str, enum.Enum):
    """``--ssl-mode`` as the mysql clients take it."""

    DISABLED = "DISABLED"
    PREFERRED = "PREFERRED"             # TLS when the server offers it, certificate not checked
    REQUIRED = "REQUIRED"               # TLS or refuse, certificate not checked
    VERIFY_CA = "VERIFY_CA"             # and the certificate chain checked against --ssl-ca
    VERIFY_IDENTITY = "VERIFY_IDENTITY"  # and the host name checked against the certificate

    @property
    def required(self) -> bool:
        return self not in (SslMode.DISABLED, SslMode.PREFERRED)


class TlsError(PullError):
    """TLS was required and could not be had: the server has none, the handshake failed, or its
    certificate does not check out (chain or host name). Never retried, never downgraded."""


class PasswordRefused(PullError):
    """The server asked for the password in a form readable on the wire (clear text, or RSA to a
    key that nothing vouches for) on a connection without TLS: not answered."""


class TlsOptions(NamedTuple):
    """``--ssl-mode``, ``--ssl-ca``, ``--ssl-cert``, ``--ssl-key``, ``--server-public-key`` and
    ``--get-server-public-key``; paths as given (read when a connection is made)."""

    mode: SslMode = SslMode.PREFERRED
    ca: str | None = None
    cert: str | None = None
    key: str | None = None
    server_public_key: str | None = None
    get_server_public_key: bool = False


def ssl_context(opts: TlsOptions) -> "ssl.SSLContext | None":
    """The client context of ``opts`` (None with DISABLED); TLS 1.2 at least. ``ssl`` is imported
    here, when a connection is upgraded (0.03 s of a start-up that has no use for it otherwise)."""
    if opts.mode is SslMode.DISABLED:
        return None
    import ssl
    verify = opts.mode in (SslMode.VERIFY_CA, SslMode.VERIFY_IDENTITY)
    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = opts.mode is SslMode.VERIFY_IDENTITY
        ctx.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
        if verify:
            if opts.ca:
                ctx.load_verify_locations(cafile=opts.ca)
            else:
                ctx.load_default_certs()
        if opts.cert or opts.key:
            if not opts.cert:
                raise TlsError("--ssl-key needs --ssl-cert (the client certificate it belongs to)")
            ctx.load_cert_chain(opts.cert, opts.key)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise TlsError(f"cannot use the TLS files given (--ssl-ca/--ssl-cert/--ssl-key): {exc}") from None
    return ctx


def use_tls(mode: SslMode, server_has_tls: bool, where: str) -> bool:
    """Whether to upgrade this connection; refuses a required TLS the server does not offer."""
    if mode is SslMode.DISABLED:
        return False
    if not server_has_tls:
        if mode.required:
            raise TlsError(f"{where} does not offer TLS and --ssl-mode is {mode.value}: refused")
        return False
    return True


def ssl_request(capabilities: int, charset: int) -> bytes:
    return struct.pack("<IIB23x", capabilities | CLIENT_SSL, MAX_PACKET, charset)


# -- the greeting and the HandshakeResponse (protocol 10) -------------------------------------------
CLIENT_LONG_PASSWORD = 0x1
CLIENT_LONG_FLAG = 0x4
CLIENT_LOCAL_FILES = 0x80
CLIENT_PROTOCOL_41 = 0x200
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_MULTI_RESULTS = 0x20000
CLIENT_PLUGIN_AUTH = 0x80000
CLIENT_CONNECT_ATTRS = 0x100000
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000
# what a replica announces (as PyMySQL did): never CLIENT_LOCAL_FILES (a LOCAL INFILE request is
# refused) nor CLIENT_DEPRECATE_EOF (result sets end with an EOF packet); CLIENT_SSL when upgrading
CLIENT_FLAGS = (CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
                | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_ATTRS
                | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
CHARSET_UTF8MB4 = 45   # utf8mb4_general_ci, on MariaDB and MySQL


class Greeting(NamedTuple):
    """The server's Initial Handshake (protocol 10)."""

    version: str
    capabilities: int
    nonce: bytes       # auth-plugin-data, both parts, without the trailing NUL
    plugin: str        # "" when the server names none


def parse_greeting(p: bytes, where: str) -> Greeting:
    """``protocol:1 (10) version NUL thread_id:4 nonce1:8 0 caps_lo:2 [charset:1 status:2 caps_hi:2
    len_nonce:1 reserved:10 nonce2 (max(12, len_nonce - 9)) NUL plugin NUL]`` (an ERR packet is the
    caller's). ProtocolError for anything else."""
    if not p or p[0] != 10:
        raise ProtocolError(f"{where} sent a greeting of protocol {p[0] if p else None}, not 10")
    end = p.find(b"\0", 1)
    if end < 0 or len(p) < end + 1 + 4 + 8 + 1 + 2:
        raise ProtocolError(f"{where} sent a greeting that does not parse (too short)")
    version = p[1:end].decode("utf-8", "replace")
    at = end + 1 + 4
    nonce = p[at:at + 8]
    at += 9
    caps = int.from_bytes(p[at:at + 2], "little")
    at += 2
    plugin = ""
    if len(p) >= at + 16:
        caps |= int.from_bytes(p[at + 3:at + 5], "little") << 16
        n = p[at + 5]
        at += 16
        if caps & CLIENT_SECURE_CONNECTION:   # as PyMySQL reads it: 12 or more bytes, then a NUL
            take = max(12, n - 9)
            nonce += p[at:at + take]
            at += take + 1
        if caps & CLIENT_PLUGIN_AUTH:
            plugin = p[at:].split(b"\0", 1)[0].decode("ascii", "replace")
    if not caps & CLIENT_PROTOCOL_41:
        raise ProtocolError(f"{where} does not speak protocol 4.1 (a server older than 4.1)")
    return Greeting(version, caps, nonce, plugin)


lenenc = pack_int  # the protocol's length-encoded integer is the binlog's packed integer


def handshake_response(flags: int, server_caps: int, user: bytes, plugin: str, answer: bytes,
                       attrs: dict[str, str]) -> bytes:
    """HandshakeResponse41: ``flags:4 max_packet:4 charset:1 filler:23 user NUL answer [plugin NUL]
    [attrs]`` (the answer length-encoded when the server takes that, else one byte)."""
    data = struct.pack("<IIB23x", flags, MAX_PACKET, CHARSET_UTF8MB4) + user + b"\0"
    if server_caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        data += lenenc(len(answer)) + answer
    else:
        data += bytes([len(answer)]) + answer
    if server_caps & CLIENT_PLUGIN_AUTH:
        data += plugin.encode() + b"\0"
    if server_caps & CLIENT_CONNECT_ATTRS:
        kv = b"".join(lenenc(len(x)) + x for k, v in attrs.items() for x in (k.encode(), v.encode()))
        data += lenenc(len(kv)) + kv
    return data


def native_scramble(password: bytes, nonce: bytes) -> bytes:
    """mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))."""
    if not password:
        return b""
    h1 = hashlib.sha1(password).digest()
    h3 = hashlib.sha1(nonce[:20] + hashlib.sha1(h1).digest()).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


def caching_sha2_scramble(password: bytes, nonce: bytes) -> bytes:
    """SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)."""
    if not password:
        return b""
    h1 = hashlib.sha256(password).digest()
    h2 = hashlib.sha256(hashlib.sha256(h1).digest() + nonce[:20]).digest()
    return bytes(a ^ b for a, b in zip(h1, h2))


def rsa_encrypt_password(password: bytes, nonce: bytes, pem: bytes) -> bytes:
    """RSA-OAEP (SHA-1, as the servers' RSA_PKCS1_OAEP_PADDING) of ``pw NUL`` XOR the nonce."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise PullError(f"the server's public key is not a PEM RSA key: {exc}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise PullError("the server's public key is not an RSA key")
    plain = password + b"\0"
    mixed = bytes(b ^ nonce[i % len(nonce)] for i, b in enumerate(plain)) if nonce else plain
    try:
        return key.encrypt(mixed, padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
    except ValueError as exc:   # a password longer than the key can hold
        raise PullError(f"cannot encrypt the password to the server's key: {exc}") from None


class Login:
    """The client side of one login, a state machine over the server's packets: ``first`` gives
    (plugin, answer) for the HandshakeResponse, ``reply`` the answer to each later packet (None:
    send nothing, read on). Raises ``PasswordRefused`` rather than put the password readable
    on the wire; ``tls`` says whether the connection is inside TLS."""

    def __init__(self, password: bytes, *, tls: bool, where: str, public_key: bytes | None = None,
                 get_public_key: bool = False) -> None:
        self.password = password
        self.tls = tls
        self.where = where
        self.public_key = public_key
        self.get_public_key = get_public_key
        self.plugin = ""
        self.nonce = b""
        self.switches = 0
        self._awaiting_key = False

    # -- the first answer and a switch -------------------------------------------------------
    def first(self, plugin: str, nonce: bytes) -> tuple[str, bytes]:
        self.plugin, self.nonce = plugin or "mysql_native_password", nonce[:20]
        return self.plugin, self._answer_for(self.plugin, self.nonce, initial=True)

    def _answer_for(self, plugin: str, nonce: bytes, *, initial: bool) -> bytes:
        pw = self.password
        if plugin == "mysql_native_password":
            return native_scramble(pw, nonce)
        if plugin == "caching_sha2_password":
            return caching_sha2_scramble(pw, nonce)
        if plugin == "sha256_password":
            return self._full_auth(SHA256_REQUEST_PUBLIC_KEY)
        if plugin == "mysql_clear_password":
            return self._clear(plugin)
        if plugin == "dialog":
            if initial:   # nothing asked yet: the questions follow the switch
                return b""
            return self._dialog(nonce)
        if initial:      # a greeting naming a plugin we cannot speak: let the server switch us
            self.plugin = "mysql_native_password"
            return native_scramble(pw, nonce)
        raise PasswordRefused(f"{self.where} asks for authentication plugin {plugin!r}, which binlogkit pull "
                              "does not speak: refused")

    def _clear(self, plugin: str) -> bytes:
        if not self.password:
            return b"\0"
        if not self.tls:
            raise PasswordRefused(f"{self.where} asked for the password in clear text ({plugin}) on a connection "
                                  "without TLS: refused (use --ssl-mode REQUIRED or VERIFY_IDENTITY)")
        return self.password + b"\0"

    def _dialog(self, question: bytes) -> bytes:
        kind = question[0] if question else 0
        if (kind & 0x06) != DIALOG_PASSWORD_QUESTION:
            raise PasswordRefused(f"{self.where} asks a dialog question that is not for the password "
                                  f"({question[1:80].decode('utf-8', 'replace')!r}): binlogkit pull cannot answer it")
        return self._clear("dialog")

    def _full_auth(self, request_key: int) -> bytes:
        """The password for caching_sha2's full authentication and sha256_password."""
        if not self.password:
            return b"\0"
        if self.tls:
            return self.password + b"\0"
        if self.public_key is not None:
            return rsa_encrypt_password(self.password, self.nonce, self.public_key)
        if self.get_public_key:
            self._awaiting_key = True
            return bytes([request_key])
        raise PasswordRefused(f"{self.where} wants the password itself ({self.plugin} full authentication) on a "
                              "connection without TLS: refused (use TLS, or give the server's RSA key with "
                              "--server-public-key, or allow asking for it with --get-server-public-key)")

    # -- later packets -----------------------------------------------------------------------
    def reply(self, payload: bytes) -> bytes | None:
        if not payload:
            raise PullError(f"{self.where} sent an empty packet during the login")
        first = payload[0]
        if first == AUTH_SWITCH:
            self.switches += 1
            if self.switches > 2:
                raise PullError(f"{self.where} switched authentication plugins {self.switches} times: refused")
            if len(payload) == 1:   # pre-4.1 "use the old password hash": a broken hash, refused
                raise PasswordRefused(f"{self.where} asks for the pre-4.1 password hash (mysql_old_password): refused")
            name, _, data = payload[1:].partition(b"\0")
            plugin = name.decode("ascii", "replace")
            self.plugin, self._awaiting_key = plugin, False
            if plugin == "dialog":
                return self._answer_for(plugin, data, initial=False)
            self.nonce = data[:-1] if data.endswith(b"\0") else data
            self.nonce = self.nonce[:20]
            return self._answer_for(plugin, self.nonce, initial=False)
        if self.plugin == "dialog" and first not in (0x00, 0xFF):
            return self._dialog(payload)
        if first == AUTH_MORE_DATA:
            data = payload[1:]
            if self._awaiting_key:
                self._awaiting_key = False
                return rsa_encrypt_password(self.password, self.nonce, data)
            if self.plugin == "caching_sha2_password" and data[:1] == bytes([SHA2_FAST_AUTH_OK]):
                return None
            if self.plugin == "caching_sha2_password" and data[:1] == bytes([SHA2_FULL_AUTH]):
                return self._full_auth(SHA2_REQUEST_PUBLIC_KEY)
            raise PullError(f"{self.where} sent plugin data {data[:8].hex()} that {self.plugin} does not expect")
        raise PullError(f"{self.where} sent a packet of type {first:#04x} during the login")


__all__ = ["SslMode", "TlsOptions", "TlsError", "PasswordRefused", "Login", "ssl_context", "use_tls",
           "ssl_request", "Greeting", "parse_greeting", "handshake_response", "lenenc", "native_scramble",
           "caching_sha2_scramble", "rsa_encrypt_password"]

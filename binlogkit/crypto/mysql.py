"""MySQL ``binlog_encryption=ON`` (8.0.14+): the 512-byte file header, the keyring, AES-CTR.

Read from the MySQL source (sql/rpl_log_encryption.cc ``Rpl_encryption_header_v1``,
sql/binlog_istream.cc ``Binlog_encryption_istream``, sql/stream_cipher.cc ``Aes_ctr_cipher``,
plugin/keyring ``Buffered_file_io`` / ``Key::xor_data``); no MySQL server runs here, so this is
proven by round trip only (docs/encryption.md says what is unproven).

The file::

    0     4    magic fd 62 69 6e
    4     1    version 1
    5..512     fields, each a type byte then its value, ended by type 0, zero-padded:
               1 key id     (1 length byte, then the keyring key id, e.g.
                             "MySQLReplicationKey_<server_uuid>_<seqno>")
               2 encrypted file password (32 bytes: AES-256-CBC, no padding, under the
                             replication master key from the keyring, IV field 3)
               3 IV for the file password (16 bytes)
    512   ...  the binlog (magic fe 62 69 6e, events) in AES-256-CTR

The CTR key and IV come from the file password by OpenSSL's EVP_BytesToKey(aes-256-ctr,
SHA-512, no salt, 1 round): SHA-512(password) = key (32) | iv (16) | ...; the last 8 bytes of
the IV are replaced by the big-endian block counter (stream offset / 16). Stream offsets (and so
every event position, end_log_pos and the positions replicas use) count from the first byte
after the header: file offset = position + 512.
"""

from __future__ import annotations

import hashlib
import io
import json
import os

from ..errors import DecryptionError, FormatError, KeyFileError, KeyRequiredError

MAGIC = b"\xfdbin"
HEADER_SIZE = 512
VERSION = 1
FIELD_KEY_ID, FIELD_PASSWORD, FIELD_IV = 1, 2, 3
LEN_PASSWORD, LEN_IV = 32, 16
LEGACY_MAGIC = b"Keyring file version:2.0"
LEGACY_EOF = b"EOF"
OBFUSCATOR = b"*305=Ljt0*!@$Hnm(*-9-w;:"  # keyring_file's Key::xor_data


# --- the header -------------------------------------------------------------------------

def parse_header(header: bytes) -> tuple[str, bytes, bytes]:
    """(key id, encrypted file password, IV) of a 512-byte header; ``FormatError`` naming
    what is wrong (at offset 0: the header lies before the binlog stream's position 0)."""
    if len(header) < HEADER_SIZE:
        raise FormatError(f"MySQL encryption header is {len(header)} bytes, expected {HEADER_SIZE}", offset=0,
                          field="encryption_header")
    if header[:4] != MAGIC:
        raise FormatError("not a MySQL encrypted binlog (magic)", offset=0, field="magic")
    if header[4] != VERSION:
        raise FormatError(f"MySQL encryption header version {header[4]}: only version 1 exists", offset=0,
                          field="version")
    key_id = password = iv = None
    at = 5
    while at < HEADER_SIZE:
        kind = header[at]
        at += 1
        if kind == 0:
            break
        if kind == FIELD_KEY_ID:
            n = header[at] if at < HEADER_SIZE else 0
            value, at = header[at + 1:at + 1 + n], at + 1 + n
            if at > HEADER_SIZE or not n:
                raise FormatError("MySQL encryption header: the key id field runs past the header", offset=0,
                                  field="key_id")
            try:
                key_id = value.decode("ascii")
            except UnicodeDecodeError:
                raise FormatError("MySQL encryption header: the key id is not text", offset=0,
                                  field="key_id") from None
        elif kind == FIELD_PASSWORD:
            password, at = header[at:at + LEN_PASSWORD], at + LEN_PASSWORD
        elif kind == FIELD_IV:
            iv, at = header[at:at + LEN_IV], at + LEN_IV
        else:
            raise FormatError(f"MySQL encryption header: unknown field type {kind}", offset=0,
                              field="encryption_header")
        if at > HEADER_SIZE:
            raise FormatError("MySQL encryption header: a field runs past the header", offset=0,
                              field="encryption_header")
    if key_id is None or password is None or iv is None:
        missing = [n for n, v in (("key id", key_id), ("file password", password), ("IV", iv)) if v is None]
        raise FormatError(f"MySQL encryption header lacks its {', '.join(missing)}", offset=0,
                          field="encryption_header")
    return key_id, bytes(password), bytes(iv)


def build_header(key_id: str, encrypted_password: bytes, iv: bytes) -> bytes:
    kid = key_id.encode("ascii")
    body = (MAGIC + bytes([VERSION, FIELD_KEY_ID, len(kid)]) + kid + bytes([FIELD_PASSWORD]) + encrypted_password
            + bytes([FIELD_IV]) + iv + b"\0")
    if len(body) > HEADER_SIZE:
        raise FormatError("key id too long for the 512-byte header")
    return body.ljust(HEADER_SIZE, b"\0")


def _cbc(key: bytes, iv: bytes, data: bytes, encrypt: bool) -> bytes:
    from .aes import aes

    Cipher, algorithms, modes = aes()
    c = Cipher(algorithms.AES(key), modes.CBC(iv))
    return (c.encryptor() if encrypt else c.decryptor()).update(data)


def file_key_iv(password: bytes) -> tuple[bytes, bytes]:
    """AES-256-CTR key and the IV's first 8 bytes from a file password (EVP_BytesToKey, SHA-512)."""
    d = hashlib.sha512(password).digest()
    return d[:32], d[32:40]


def _ctr_iv(prefix: bytes, offset: int) -> bytes:
    return prefix + (offset // 16).to_bytes(8, "big")


def _ctr_at(key: bytes, prefix: bytes, offset: int):
    """The AES-256-CTR context at stream ``offset`` (the counter is the offset's 16-byte block)."""
    from .aes import aes

    Cipher, algorithms, modes = aes()
    ctx = Cipher(algorithms.AES(key), modes.CTR(_ctr_iv(prefix, offset))).decryptor()
    if offset % 16:
        ctx.update(bytes(offset % 16))
    return ctx


class StreamCipher:
    """Encrypts bytes written at a stream offset of a MySQL encrypted file, as the server does:
    CTR, so the keystream at that offset (the same one that decrypts them)."""

    def __init__(self, key: bytes, prefix: bytes) -> None:
        self._key, self._prefix = key, prefix

    def encrypt(self, data: bytes, at: int) -> bytes:
        return _ctr_at(self._key, self._prefix, at).update(data)


class DecryptingReader(io.RawIOBase):
    """The plaintext binlog stream of a MySQL encrypted file: reads the file after its header
    and decrypts with AES-256-CTR at the right counter. Offsets are stream offsets."""

    def __init__(self, raw, key: bytes, iv_prefix: bytes) -> None:
        self._raw = raw
        self._key = key
        self._prefix = iv_prefix
        self._pos = 0
        self._dec = self._at(0)

    def _at(self, offset: int):
        return _ctr_at(self._key, self._prefix, offset)

    def cipher(self) -> "StreamCipher":
        """What encrypts bytes appended to this file (binlogkit incident writes its events so)."""
        return StreamCipher(self._key, self._prefix)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._raw.seekable())

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """To stream ``offset`` (CTR: the counter is derived from it), for readers that go back
        (flashback reads transactions backwards); the file itself must be seekable."""
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence == io.SEEK_END:
            offset += self._raw.seek(0, io.SEEK_END) - HEADER_SIZE
        if offset < 0:
            raise ValueError(f"negative seek position {offset}")
        self._raw.seek(HEADER_SIZE + offset)
        self._pos = offset
        self._dec = self._at(offset)
        return offset

    def readinto(self, b) -> int:
        n = self._raw.readinto(b)
        if n:
            mv = memoryview(b)[:n]
            mv[:] = self._dec.update(mv)
            self._pos += n
        return n or 0

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._pos += len(data)
        return self._dec.update(data)


# --- keyrings -------------------------------------------------------------------------

def parse_keyring_json(data: bytes, *, name: str = "") -> dict[str, bytes]:
    """component_keyring_file: ``{"version": "1.0", "elements": [{"user", "data_id",
    "data_type", "data" (hex), "extension"}]}``. Keys by data_id."""
    try:
        doc = json.loads(data)
        elements = doc["elements"]
        out = {}
        for e in elements:
            out[str(e["data_id"])] = bytes.fromhex(e["data"])
        return out
    except (ValueError, KeyError, TypeError):
        raise KeyFileError(f"{name}: not a component_keyring_file JSON keyring "
                           "(version, elements: user, data_id, data_type, hex data)") from None


def parse_keyring_legacy(data: bytes, *, name: str = "") -> dict[str, bytes]:
    """keyring_file (the plugin): "Keyring file version:2.0", then per key five 8-byte lengths
    (record size, key id, key type, user id, key), the strings, the key XOR-obfuscated, padding
    to 8 bytes; then "EOF" and a SHA-256 digest."""
    if not data.startswith(LEGACY_MAGIC):
        raise KeyFileError(f"{name}: not a keyring_file keyring (no 'Keyring file version:2.0')")
    at, end = len(LEGACY_MAGIC), len(data) - len(LEGACY_EOF) - 32
    if end < at or data[end:end + 3] != LEGACY_EOF:
        raise KeyFileError(f"{name}: keyring_file keyring without its EOF tag and digest (truncated?)")
    out = {}
    while at < end:
        if end - at < 40:
            raise KeyFileError(f"{name}: keyring_file record at byte {at} is torn")
        pod, lid, ltype, luser, lkey = (int.from_bytes(data[at + 8 * i:at + 8 * i + 8], "little") for i in range(5))
        if pod < 40 + lid + ltype + luser + lkey or at + pod > end:
            raise KeyFileError(f"{name}: keyring_file record at byte {at} has impossible lengths")
        p = at + 40
        key_id = data[p:p + lid].decode("utf-8", "replace")
        p += lid + ltype + luser
        key = bytes(b ^ OBFUSCATOR[i % len(OBFUSCATOR)] for i, b in enumerate(data[p:p + lkey]))
        out[key_id] = key
        at += pod
    return out


def build_keyring_legacy(keys: dict[str, bytes]) -> bytes:
    """The bytes keyring_file writes for ``keys`` (AES type, empty user): for tests."""
    out = bytearray(LEGACY_MAGIC)
    for kid, key in keys.items():
        k, t = kid.encode(), b"AES"
        size = 40 + len(k) + len(t) + len(key)
        pod = size + (-size % 8)
        out += b"".join(x.to_bytes(8, "little") for x in (pod, len(k), len(t), 0, len(key)))
        out += k + t + bytes(b ^ OBFUSCATOR[i % len(OBFUSCATOR)] for i, b in enumerate(key))
        out += bytes(pod - size)
    return bytes(out) + LEGACY_EOF + hashlib.sha256(bytes(out)).digest()


def build_keyring_json(keys: dict[str, bytes]) -> bytes:
    return json.dumps({"version": "1.0", "elements": [
        {"user": "", "data_id": k, "data_type": "AES", "data": v.hex(), "extension": []} for k, v in keys.items()]},
        indent=1).encode()


def load_keyring(path: str) -> dict[str, bytes]:
    """Either keyring layout, told apart by its first bytes."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(16 << 20)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the keyring: {exc.strerror}") from None
    if data.startswith(LEGACY_MAGIC):
        return parse_keyring_legacy(data, name=path)
    return parse_keyring_json(data, name=path)


# --- reading and writing ---------------------------------------------------------------

def open_decrypted(fh, keys, header_rest: bytes | None = None):
    """``fh`` positioned after the 4-byte magic of a MySQL encrypted file: read the header,
    unwrap the file password with the keyring's master key, return the plaintext stream (at
    stream offset 0: the binlog magic comes next). Without the key: ``KeyRequiredError``."""
    header = MAGIC + (header_rest if header_rest is not None else fh.read(HEADER_SIZE - 4))
    key_id, enc_password, iv = parse_header(header)
    master = keys.mysql.get(key_id) if keys is not None else None
    if master is None:
        have = f"{keys.source} has no key {key_id}" if keys is not None and keys.source else "no keyring was given"
        raise KeyRequiredError(
            f"encrypted (MySQL binlog_encryption): needs the replication master key {key_id}; {have}: pass "
            "--keyring-file FILE (the server's component_keyring_file or keyring_file)",
            key_id=key_id, key_version=None, offset=0, event_type=None)
    if len(master) != 32:
        raise KeyFileError(f"{keys.source}: key {key_id} is {len(master) * 8} bits, the replication master key "
                           "is AES-256")
    password = _cbc(master, iv, enc_password, encrypt=False)
    key, prefix = file_key_iv(password)
    stream = DecryptingReader(fh, key, prefix)
    if stream.read(4) != b"\xfebin":
        raise DecryptionError(f"wrong key, or damaged header: the MySQL encrypted file does not decrypt to a "
                              f"binlog with key {key_id} from {keys.source}", offset=0)
    return stream


def encrypt_file(plain: bytes, key_id: str, master_key: bytes, *, password: bytes | None = None,
                 iv: bytes | None = None) -> bytes:
    """A whole plaintext binlog encrypted the way MySQL writes it (the codecs' build side: for
    tests and for making fixtures where no MySQL server exists)."""
    password = password or os.urandom(LEN_PASSWORD)
    iv = iv or os.urandom(LEN_IV)
    from .aes import aes

    Cipher, algorithms, modes = aes()
    key, prefix = file_key_iv(password)
    enc = Cipher(algorithms.AES(key), modes.CTR(_ctr_iv(prefix, 0))).encryptor().update(plain)
    return build_header(key_id, _cbc(master_key, iv, password, encrypt=True), iv) + enc

"""Key files: MariaDB ``file_key_management`` (plain or encrypted) and the key value ``Keys``.

file_key_management format (``plugin/file_key_management/parser.cc``)::

    # comment
    1;770A8A65DA156D24EE2A093277530142          <- key id ; 32, 48 or 64 hex digits
    2;4D92199549E0F2EF009B4160F3582E5528A11A45017F3EF8

Every key has version 1 (the plugin knows no other). An encrypted key file is what
``openssl enc -aes-256-cbc -md sha1 -pass pass:SECRET`` writes::

    "Salted__" (8) | salt (8) | AES-256-CBC ciphertext, PKCS#7 padded

with key and IV from OpenSSL's EVP_BytesToKey(aes-256-cbc, SHA1, salt, SECRET, 1 round), as
the plugin derives them for ``file_key_management_filekey``. The secret comes from a file or
the environment, never from the command line alone (a command line is visible to every user).
"""

from __future__ import annotations

import enum
import hashlib
import os
import stat
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import KeyFileError

SALTED = b"Salted__"


class Cipher(str, enum.Enum):
    """AES mode a MariaDB server encrypts with (``file_key_management_encryption_algorithm``)."""

    CBC = "AES_CBC"
    CTR = "AES_CTR"


@dataclass(frozen=True)
class KeySpec:
    """Where the keys are: paths and the cipher, never key bytes. This is what crosses to audit
    worker processes and Spark executors, which load the keys themselves (``load``); the secret
    of an encrypted key file comes from ``secret_file`` or the executor's
    ``BINLOGKIT_KEY_FILE_SECRET``."""

    key_file: str | None = None
    secret_file: str | None = None
    cipher: str | None = None
    keyring_file: str | None = None

    def load(self, resolve=None) -> "Keys | None":
        """The keys (cached per process). ``resolve`` maps a path that does not exist here to
        one that does (e.g. ``SparkFiles.get`` for files shipped with ``--files``)."""
        paths = [self.key_file, self.secret_file, self.keyring_file]
        if resolve is not None:
            paths = [resolve(p) if p and not os.path.exists(p) else p for p in paths]
        return _load_cached(paths[0], paths[1], self.cipher, paths[2])


@dataclass(frozen=True)
class Keys:
    """The one key value passed to readers and writers, like the format: never global.

    ``mariadb``: key id -> key bytes (version 1) from a file_key_management file;
    ``mysql``: keyring key id -> key bytes; ``cipher``: the MariaDB cipher when the user fixed
    it (None: found by which one yields sound events). ``source`` names the file(s), for errors.
    Its ``repr`` and ``str`` never show key bytes.
    """

    mariadb: Mapping[int, bytes] = field(default_factory=dict, repr=False)
    mysql: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    cipher: Cipher | None = None
    source: str = ""
    spec: KeySpec | None = None

    def __repr__(self) -> str:
        return (f"Keys(source={self.source!r}, mariadb_ids={sorted(self.mariadb)}, "
                f"mysql_ids={len(self.mysql)}, cipher={self.cipher and self.cipher.value})")

    __str__ = __repr__

    def mariadb_key(self, key_id: int, version: int) -> bytes | None:
        """The key a MariaDB file names by id and version (file_key_management: version 1)."""
        if version != 1:
            return None
        return self.mariadb.get(key_id)


def evp_bytes_to_key(secret: bytes, salt: bytes, key_len: int = 32, iv_len: int = 16) -> tuple[bytes, bytes]:
    """OpenSSL's EVP_BytesToKey with SHA1 and one round (what file_key_management uses)."""
    out, prev = b"", b""
    while len(out) < key_len + iv_len:
        prev = hashlib.sha1(prev + secret + salt).digest()
        out += prev
    return out[:key_len], out[key_len:key_len + iv_len]


def decrypt_key_file(data: bytes, secret: bytes, *, name: str = "") -> bytes:
    """The plaintext of an OpenSSL "Salted__" AES-256-CBC key file."""
    from cryptography.hazmat.primitives.ciphers import Cipher as _C, algorithms, modes

    if len(data) < 32 or not data.startswith(SALTED) or (len(data) - 16) % 16:
        raise KeyFileError(f"{name}: not an OpenSSL 'Salted__' encrypted key file (or truncated)")
    key, iv = evp_bytes_to_key(secret, data[8:16])
    dec = _C(algorithms.AES(key), modes.CBC(iv)).decryptor()
    plain = dec.update(data[16:]) + dec.finalize()
    pad = plain[-1]
    if not 1 <= pad <= 16 or plain[-pad:] != bytes([pad]) * pad:
        raise KeyFileError(f"{name}: the key file does not decrypt with the secret given (wrong secret?)")
    return plain[:-pad]


def parse_key_file(text: bytes, *, name: str = "") -> dict[int, bytes]:
    """Key lines as file_key_management's ``Parser::parse_line`` reads them: blanks and ``#``
    lines are comments; otherwise digits (the id, 1..2^32-1), ``;``, then 16, 24 or 32 bytes of
    hex; whatever follows the hex digits on the line is ignored; a later line with the same id
    wins. Key id 1 must be there. Errors name the line and column, never the content (it may
    hold a key)."""
    keys: dict[int, bytes] = {}
    hexdigits = b"0123456789abcdefABCDEF"
    for no, line in enumerate(text.split(b"\n"), 1):
        p = 0
        while p < len(line) and line[p:p + 1].isspace():
            p += 1
        if p == len(line) or line[p:p + 1] == b"#":
            continue

        def bad(reason: str, col: int) -> KeyFileError:
            return KeyFileError(f"{name}: {reason} at line {no}, column {col + 1} (not 'id;hexkey'; an "
                                "encrypted key file needs its secret)")

        start = p
        while p < len(line) and line[p:p + 1].isdigit():
            p += 1
        if p == start:
            raise bad("syntax error", p)
        key_id = int(line[start:p])
        if not 1 <= key_id <= 0xFFFFFFFF:
            raise bad("invalid key id", p)
        if line[p:p + 1] != b";":
            raise bad("syntax error", p)
        p += 1
        start = p
        while (p + 1 < len(line) and line[p] in hexdigits and line[p + 1] in hexdigits and (p - start) // 2 < 32):
            p += 2
        key = bytes.fromhex(line[start:p].decode("ascii"))
        if (p < len(line) and line[p] in hexdigits) or len(key) not in (16, 24, 32):
            raise bad("invalid key (128-, 192- or 256-bit hex)", p)
        keys[key_id] = key
    if 1 not in keys:
        raise KeyFileError(f"{name}: system key id 1 is missing (binlogs use key id 1)")
    return keys


def read_secret(secret_file: str | None, env: Mapping[str, str] | None = None) -> bytes | None:
    """The key-file secret: the file's content (one trailing newline dropped), else the
    ``BINLOGKIT_KEY_FILE_SECRET`` environment variable, else None."""
    env = os.environ if env is None else env
    if secret_file:
        with open(secret_file, "rb") as fh:
            data = fh.read(4096)
        return data.rstrip(b"\r\n")
    value = env.get("BINLOGKIT_KEY_FILE_SECRET")
    return value.encode() if value else None


def loose_permissions(path: str) -> bool:
    """Whether other users may read the file (a key file should be 0600 or 0640)."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def load_keys(key_file: str | None = None, *, secret_file: str | None = None, cipher: str | None = None,
              keyring_file: str | None = None, env: Mapping[str, str] | None = None) -> Keys | None:
    """The ``Keys`` for the options given (None when no key source was named).

    ``key_file`` falls back to ``BINLOGKIT_KEY_FILE``. An encrypted key file needs the secret
    from ``secret_file`` or ``BINLOGKIT_KEY_FILE_SECRET``. Errors are ``KeyFileError`` and
    never quote key material.
    """
    env = os.environ if env is None else env
    key_file = key_file or env.get("BINLOGKIT_KEY_FILE") or None
    mariadb: dict[int, bytes] = {}
    mysql: dict[str, bytes] = {}
    names = []
    if key_file:
        try:
            with open(key_file, "rb") as fh:
                data = fh.read(1 << 20)
        except OSError as exc:
            raise KeyFileError(f"{key_file}: cannot read the key file: {exc.strerror}") from None
        if data.startswith(SALTED):
            try:
                secret = read_secret(secret_file, env)
            except OSError as exc:
                raise KeyFileError(f"{secret_file}: cannot read the secret file: {exc.strerror}") from None
            if secret is None:
                raise KeyFileError(f"{key_file}: the key file is encrypted: give its secret with "
                                   "--key-file-secret-file FILE or BINLOGKIT_KEY_FILE_SECRET")
            data = decrypt_key_file(data, secret, name=key_file)
        mariadb = parse_key_file(data, name=key_file)
        names.append(key_file)
    if keyring_file:
        from .mysql import load_keyring

        mysql = load_keyring(keyring_file)
        names.append(keyring_file)
    if not names:
        return None
    try:
        chosen = Cipher(cipher.upper().replace("-", "_")) if cipher else None
    except ValueError:
        raise KeyFileError(f"unknown cipher {cipher!r}: AES_CBC or AES_CTR") from None
    spec = KeySpec(key_file=os.path.abspath(key_file) if key_file else None,
                   secret_file=os.path.abspath(secret_file) if secret_file else None,
                   cipher=chosen and chosen.value,
                   keyring_file=os.path.abspath(keyring_file) if keyring_file else None)
    return Keys(mariadb=mariadb, mysql=mysql, cipher=chosen, source=", ".join(names), spec=spec)


_CACHE: dict = {}


def _load_cached(key_file, secret_file, cipher, keyring_file) -> Keys | None:
    """One load per process and spec (audit workers read many files with the same keys)."""
    k = (key_file, secret_file, cipher, keyring_file)
    if k not in _CACHE:
        _CACHE[k] = load_keys(key_file, secret_file=secret_file, cipher=cipher, keyring_file=keyring_file)
    return _CACHE[k]

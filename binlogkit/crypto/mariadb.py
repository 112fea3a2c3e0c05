"""MariaDB ``encrypt_binlog=ON``: how each event is encrypted, and how to undo it.

Source: sql/log_event.cc (``Log_event::read_log_event``, ``Binlog_crypt_data``),
sql/log_event_server.cc (``Log_event_writer::write_header`` / ``encrypt_and_write`` /
``maybe_write_event_len``), mysys_ssl/my_crypt.cc (``MyCTX_nopad``),
plugin/file_key_management (key id 1 = ENCRYPTION_KEY_SYSTEM_DATA, version 1).

The file starts in clear: magic, Format_description, then Start_encryption (type 164):

======  ====  ============  ====================================================
offset  len   field         meaning
======  ====  ============  ====================================================
0       1     scheme        1 (the only scheme)
1       4     key_version   version of key id 1 (file_key_management: 1)
5       12    nonce         random per file
======  ====  ============  ====================================================

Every later event is encrypted on its own, with key id 1 at ``key_version``, no padding, and
IV = nonce (12) || the event's file offset (4, little-endian). The writer moves the timestamp
into the event_len slot, encrypts bytes 4..end (checksum included: the CRC is over the
plaintext), then stores ciphertext[5:9] first, ciphertext[0:5], event_len **in clear** at
offset 9 (so the file can be framed without the key), and ciphertext[9:]::

    plain P  = ev[4:9] | ev[0:4] | ev[13:]            (len = event_len - 4)
    C        = AES(key, IV, P)
    on disk  = C[5:9] | C[0:5] | event_len | C[9:]

AES-CBC without padding encrypts whole blocks in CBC and XORs a last partial block with
AES-ECB(key, IV) (``MyCTX_nopad::finish``: the *original* IV); AES-CTR is OpenSSL's CTR (a
128-bit big-endian counter). Which of the two a server used is not in the file: the first
encrypted event tells (only the right one gives its CRC32, or a sane header without checksums).
"""

from __future__ import annotations

import zlib
from typing import Any

from ..errors import DecryptionError, FormatError, KeyRequiredError
from .aes import aes
from .keys import Cipher, Keys

SCHEME = 1
KEY_ID = 1  # ENCRYPTION_KEY_SYSTEM_DATA: the key binlogs and relay logs use
LEN_NONCE = 12
LEN_START_ENCRYPTION_BODY = 1 + 4 + LEN_NONCE


def parse_start_encryption(body: bytes, offset: int | None = None) -> tuple[int, int, bytes]:
    """(scheme, key_version, nonce) of a Start_encryption body (header and CRC removed)."""
    if len(body) != LEN_START_ENCRYPTION_BODY:
        raise FormatError(f"Start_encryption body is {len(body)} bytes, expected {LEN_START_ENCRYPTION_BODY}",
                          offset=offset, event_type="START_ENCRYPTION_EVENT")
    return body[0], int.from_bytes(body[1:5], "little"), bytes(body[5:])


def _crypt(cipher: Cipher, key: bytes, iv: bytes, data, encrypt: bool) -> bytes:
    _Cipher, algorithms, modes = aes()
    aes_ = algorithms.AES(key)
    if cipher is Cipher.CTR:
        c = _Cipher(aes_, modes.CTR(iv))
        return (c.encryptor() if encrypt else c.decryptor()).update(data)
    n = len(data)
    full = n - n % 16
    c = _Cipher(aes_, modes.CBC(iv))
    out = (c.encryptor() if encrypt else c.decryptor()).update(data[:full]) if full else b""
    if full == n:
        return out
    mask = _Cipher(aes_, modes.ECB()).encryptor().update(iv)
    tail = bytes(a ^ b for a, b in zip(data[full:], mask))
    return out + tail


class EventCipher:
    """Decrypts (and encrypts) the events of one file after its Start_encryption.

    ``cipher`` None: the first ``decrypt_into`` finds it (CBC, then CTR) by the event's CRC32
    (``crc_on``) or, without checksums, by a sane header; ``found`` then holds it.
    """

    def __init__(self, key: bytes, nonce: bytes, cipher: Cipher | None, *, key_version: int = 1,
                 source: str = "") -> None:
        self._key = key
        self.nonce = nonce
        self.cipher = cipher
        self.key_version = key_version
        self.source = source
        self.checked = False  # the first encrypted event proved key and cipher
        self._ctx: tuple[Any, Any, Any, Any, Any] | None = None  # ECB encryptor, CTR decryptor, AES, Cipher, modes
        self._bufs: dict[int, bytearray] = {}

    def __repr__(self) -> str:
        return f"EventCipher(cipher={self.cipher and self.cipher.value}, key_version={self.key_version})"

    def describe(self) -> str:
        return f"MariaDB {self.cipher.value if self.cipher else 'cipher unknown'}, key id {KEY_ID} version {self.key_version}"

    def iv(self, offset: int) -> bytes:
        return self.nonce + (offset & 0xFFFFFFFF).to_bytes(4, "little")

    def _decrypt(self, cipher: Cipher, ev, offset: int) -> bytearray:
        n = len(ev)
        src = bytearray(ev[4:])
        src[5:9] = ev[0:4]  # the 4 bytes stored first go back to their place (file offset 9..13)
        plain = _crypt(cipher, self._key, self.iv(offset), src, encrypt=False)
        out = bytearray(n)
        out[4:] = plain
        out[0:4] = plain[5:9]  # the timestamp rode in the event_len slot
        out[9:13] = n.to_bytes(4, "little")
        return out

    def decrypt_into(self, ev: memoryview, offset: int, crc_on: bool) -> None:
        """Replace the encrypted event ``ev`` (its whole bytes, at file ``offset``) by its plaintext.

        The first event of the file decides key and cipher: no candidate giving a sound event
        raises ``DecryptionError`` (wrong key, or that event is damaged)."""
        if self.checked:
            if self.cipher is None:  # checked is only ever set together with the cipher
                raise DecryptionError("internal: the key was checked but its cipher is unknown", offset=offset)
            ev[:] = self._decrypt(self.cipher, ev, offset)
            return
        for cipher in ([self.cipher] if self.cipher else [Cipher.CBC, Cipher.CTR]):
            plain = self._decrypt(cipher, ev, offset)
            if _sound(plain, crc_on):
                self.cipher, self.checked = cipher, True
                ev[:] = plain
                return
        tried = self.cipher.value if self.cipher else "AES_CBC nor AES_CTR"
        raise DecryptionError(
            f"wrong key, or damaged event: the encrypted event does not decrypt to a sound event with "
            f"key id {KEY_ID} version {self.key_version} from {self.source or 'the key file'} "
            f"({'neither ' if not self.cipher else ''}{tried})", offset=offset)

    def decrypt_run(self, mv: memoryview, rel: int, filled: int, offset: int, crc_on: bool) -> int:
        """Decrypt in place the whole encrypted event at ``mv[rel:]`` (file ``offset``) and
        every whole event after it in ``mv[:filled]``; returns how many bytes are now clear.

        Creating a cipher context costs more than decrypting a small event, and so does letting
        OpenSSL allocate a large output (page faults): runs go through a few reused contexts
        into reused buffers (``update_into``), one OpenSSL call for many events:

        * CBC: the events' full blocks, each event's IV placed as a block in front of them, in
          one AES-CBC decryption (an IV block's own output is dropped: it only chains); the
          partial last blocks XOR AES-ECB(IV) (``MyCTX_nopad``), the IVs encrypted in one call.
        * CTR: events under ``SMALL`` bytes: their counter blocks in one AES-ECB call, XORed with
          the ciphertext by ``_xor_blocks``; larger ones (or whose counter carries past its last
          byte) one CTR run each on the reused context (``reset_nonce``).

        Framing reads only the clear event_len (bytes 9..13), so a damaged length just ends the
        run: the framing loop then reports it."""
        start = rel
        if not self.checked:
            n = int.from_bytes(mv[rel + 9:rel + 13], "little")
            self.decrypt_into(mv[rel:rel + n], offset, crc_on)
            rel += n
        batch: list[tuple[int, int, int]] = []  # (rel, size, file offset)
        while rel + 13 <= filled:
            n = int.from_bytes(mv[rel + 9:rel + 13], "little")
            if n < 23 or rel + n > filled:
                break
            batch.append((rel, n, offset + rel - start))
            rel += n
        if batch:
            (self._ctr_batch if self.cipher is Cipher.CTR else self._cbc_batch)(mv, batch)
        return rel - start

    def _contexts(self):
        if self._ctx is None:
            _Cipher, algorithms, modes = aes()
            a = algorithms.AES(self._key)
            self._ctx = (_Cipher(a, modes.ECB()).encryptor(), _Cipher(a, modes.CTR(bytes(16))).decryptor(), a,
                         _Cipher, modes)
        return self._ctx

    def _into(self, ctx, data, slot: int) -> memoryview:
        """``ctx.update(data)`` into reused buffer ``slot``, in 256 KiB steps."""
        n = len(data)
        buf = self._bufs.get(slot)
        if buf is None or len(buf) < n + 16:
            buf = self._bufs[slot] = bytearray(max(n + 16, 1 << 16))
        out, src = memoryview(buf), memoryview(data)
        for k in range(0, n, STEP):
            ctx.update_into(src[k:k + STEP], out[k:k + STEP + 16])
        return out[:n]

    def _scratch(self, slot: int, n: int) -> memoryview:
        buf = self._bufs.get(slot)
        if buf is None or len(buf) < n + 16:
            buf = self._bufs[slot] = bytearray(max(n + 16, 1 << 16))
        return memoryview(buf)

    @staticmethod
    def _gather(dst: memoryview, p: int, mv: memoryview, r: int, n: int) -> None:
        """The ciphertext of the event at ``mv[r:r+n]`` into ``dst[p:]`` (n - 4 bytes): on disk
        it is C[5:9] | C[0:5] | event_len | C[9:], so moving the first 4 bytes over event_len
        (known: n) leaves C at mv[r+4:r+n]."""
        mv[r + 9:r + 13] = mv[r:r + 4]
        dst[p:p + n - 4] = mv[r + 4:r + n]

    @staticmethod
    def _fix(mv: memoryview, r: int, n: int) -> None:
        """mv[r+4:r+n] holds the plaintext P: put the timestamp (P[5:9]) back and event_len."""
        mv[r:r + 4] = mv[r + 9:r + 13]
        mv[r + 9:r + 13] = n.to_bytes(4, "little")

    def _cbc_batch(self, mv: memoryview, batch) -> None:
        ecb, _ctr, a, _Cipher, modes = self._contexts()
        total = sum(16 + n for _r, n, _at in batch)
        src = self._scratch(7, total)
        p, tails, ivs = 0, [], []
        for r, n, at in batch:
            iv = self.iv(at)
            src[p:p + 16] = iv
            self._gather(src, p + 16, mv, r, n)
            full = (n - 4) & ~15
            if full < n - 4:
                tails.append(bytes(src[p + 16 + full:p + 12 + n]))
                ivs.append(iv)
            p += 16 + full  # the next IV block overwrites this event's partial tail (kept above)
        clear = self._into(_Cipher(a, modes.CBC(bytes(16))).decryptor(), src[:p], 0)
        masks = self._into(ecb, b"".join(ivs), 1) if ivs else b""
        p, t = 0, 0
        for r, n, _at in batch:
            full = (n - 4) & ~15
            mv[r + 4:r + 4 + full] = clear[p + 16:p + 16 + full]
            p += 16 + full
            if full < n - 4:
                k = n - 4 - full
                tail = tails[t]
                mv[r + 4 + full:r + n] = (int.from_bytes(tail, "little")
                                          ^ int.from_bytes(masks[16 * t:16 * t + k], "little")).to_bytes(k, "little")
                t += 1
            self._fix(mv, r, n)

    def _ctr_batch(self, mv: memoryview, batch) -> None:
        ecb, ctr, _a, _Cipher, _modes = self._contexts()
        counters, small = [], []
        out = self._scratch(8, STEP + 16)
        for r, n, at in batch:
            iv = self.iv(at)
            blocks = (n - 4 + 15) >> 4
            if n - 4 >= SMALL or iv[15] + blocks > 256:  # a run of its own on the reused context
                mv[r + 9:r + 13] = mv[r:r + 4]
                ctr.reset_nonce(iv)
                if n - 4 <= STEP:
                    ctr.update_into(mv[r + 4:r + n], out[:n + 12])
                    mv[r + 4:r + n] = out[:n - 4]
                else:
                    mv[r + 4:r + n] = self._into(ctr, bytes(mv[r + 4:r + n]), 2)
                mv[r:r + 4] = mv[r + 9:r + 13]
                mv[r + 9:r + 13] = n.to_bytes(4, "little")
                continue
            c = bytearray(iv * blocks)
            c[15::16] = bytes(range(iv[15], iv[15] + blocks))
            counters.append(c)
            small.append((r, n, blocks << 4))
        if small:
            total = sum(b for _r, _n, b in small)
            src = self._scratch(7, total)
            p = 0
            for r, n, b in small:
                self._gather(src, p, mv, r, n)
                src[p + n - 4:p + b] = bytes(b - (n - 4))
                p += b
            clear = _xor_blocks(src[:total], self._into(ecb, b"".join(counters), 3), self)
            p = 0
            for r, n, b in small:
                mv[r + 4:r + n] = clear[p:p + n - 4]
                self._fix(mv, r, n)
                p += b

    def encrypt(self, event: bytes, offset: int) -> bytes:
        """The bytes a server writes for plaintext ``event`` placed at file ``offset``."""
        if self.cipher is None:
            raise DecryptionError("the cipher of this file is not known yet (no encrypted event read)")
        n = len(event)
        plain = bytes(event[4:9]) + bytes(event[0:4]) + bytes(event[13:])
        c = _crypt(self.cipher, self._key, self.iv(offset), plain, encrypt=True)
        return c[5:9] + c[0:5] + n.to_bytes(4, "little") + c[9:]


STEP = 256 << 10  # bytes per OpenSSL call into a reused buffer
SMALL = 512  # CTR: smaller events are batched (a context run costs more than their bytes)


def _xor_blocks(a: bytes | bytearray | memoryview, b, ec: "EventCipher") -> memoryview:
    """a XOR b for equal, block-aligned lengths, at OpenSSL speed (Python has no fast XOR of
    byte strings): CBC decryption of the interleaved blocks b0, E(a0), b1, E(a1), ... yields
    D(E(ak)) XOR bk = ak XOR bk at every second block."""
    ecb, _ctr, a_, _Cipher, modes = ec._contexts()
    n = len(a)
    ea = ec._into(ecb, a, 4).cast("Q")  # (a may be a view of a scratch buffer: read it first)
    buf = ec._bufs.get(5)
    if buf is None or len(buf) < 2 * n:
        buf = ec._bufs[5] = bytearray(max(2 * n, 1 << 16))
    m = memoryview(buf)[:2 * n].cast("Q")
    bq = memoryview(b).cast("Q")
    m[0::4], m[1::4], m[2::4], m[3::4] = bq[0::2], bq[1::2], ea[0::2], ea[1::2]
    dec = ec._into(_Cipher(a_, modes.CBC(bytes(16))).decryptor(), m.cast("B"), 6).cast("Q")
    out = bytearray(n)
    o = memoryview(out).cast("Q")
    o[0::2], o[1::2] = dec[2::4], dec[3::4]
    return memoryview(out)


def _sound(plain: bytearray, crc_on: bool) -> bool:
    if crc_on:
        return len(plain) >= 23 and zlib.crc32(memoryview(plain)[:-4]) == int.from_bytes(plain[-4:], "little")
    # no checksums: a known type code and only defined header flag bits
    from ..constants import EventType

    try:
        EventType(plain[4])
    except ValueError:
        return False
    return int.from_bytes(plain[17:19], "little") < 0x4000


def decrypted_copy(event: memoryview | bytes, crc_on: bool) -> bool:
    """Whether the first event after a Start_encryption is already plaintext: a copy of an
    encrypted binlog that its server decrypted on the way out (``mariadb-binlog
    --read-from-remote-server --raw`` keeps the Start_encryption and writes plain events after
    it). Only a checksummed event can say so (its CRC32 covers the plaintext: an encrypted
    event matches by chance once in 2**32); without checksums the file is taken as encrypted."""
    return crc_on and _sound(bytearray(event), True)


def cipher_for(start_body: bytes, keys: Keys | None, *, offset: int) -> EventCipher:
    """The ``EventCipher`` for a file whose Start_encryption has ``start_body``.

    No key for it: ``KeyRequiredError`` naming the key id and version and the option."""
    aes()
    scheme, version, nonce = parse_start_encryption(start_body, offset)
    if scheme != SCHEME:
        raise FormatError(f"Start_encryption scheme {scheme}: only scheme 1 exists",
                          offset=offset, event_type="START_ENCRYPTION_EVENT", field="scheme")
    key = keys.mariadb_key(KEY_ID, version) if keys is not None else None
    if keys is None or key is None:
        have = f"{keys.source} has no key id {KEY_ID} at version {version}" if keys is not None and keys.source \
            else "no key was given"
        raise KeyRequiredError(
            f"encrypted (MariaDB encrypt_binlog, from offset {offset}): needs key id {KEY_ID} version {version}; "
            f"{have}: pass --key-file FILE (or BINLOGKIT_KEY_FILE) with the server's file_key_management file",
            key_id=KEY_ID, key_version=version, offset=offset, event_type="START_ENCRYPTION_EVENT")
    return EventCipher(key, nonce, keys.cipher, key_version=version, source=keys.source)

"""The build side of MariaDB ``encrypt_binlog``: an encrypted copy of a plaintext binlog, as a
server with ``encrypt_binlog=ON`` writes it (benchmarks, tests). Kept out of ``crypto.mariadb``,
which the framing loop calls, so that reading never imports the writers (no import circle)."""

from __future__ import annotations

from ..errors import FormatError
from .keys import Cipher
from .mariadb import SCHEME, EventCipher


def encrypt_binlog(src, dst, key: bytes, cipher: Cipher, *, nonce: bytes, key_version: int = 1) -> int:
    """Write to ``dst`` the plaintext MariaDB binlog ``src`` (binary streams) as a server with
    ``encrypt_binlog=ON`` would have written it: the Format_description, a Start_encryption,
    then every event moved by the Start_encryption's size (end_log_pos and CRC32 rewritten) and
    encrypted at its new offset. The codecs' build side of this module: for benchmarks (an
    encrypted copy of any binlog) and tests. Returns the events written. Memory: one event."""
    from ..constants import BINLOG_MAGIC, EventType
    from ..reading.events import build_event
    from ..reading.reader import iter_raw_events

    ec = EventCipher(key, nonce, cipher, key_version=key_version)
    ec.checked = True
    dst.write(BINLOG_MAGIC)
    at, shift, n = 4, 0, 0
    for raw in iter_raw_events(src, name=getattr(src, "name", "<stream>")):
        checksum = raw.format.len_checksum > 0 if raw.format is not None else False
        if raw.type_code == EventType.START_ENCRYPTION_EVENT:
            raise FormatError("the source binlog is already encrypted", offset=raw.offset)
        if n == 0:  # the Format_description stays in clear; Start_encryption follows it
            body = bytes([SCHEME]) + key_version.to_bytes(4, "little") + nonce
            size = 19 + len(body) + (4 if checksum else 0)
            start = build_event(type_code=EventType.START_ENCRYPTION_EVENT, body=body, timestamp=raw.timestamp,
                                server_id=raw.server_id, log_pos=raw.end_offset + size, flags=0, checksum=checksum)
            dst.write(raw.data)
            dst.write(start)
            at, shift = raw.end_offset + len(start), len(start)
        else:
            log_pos = raw.log_pos + shift if raw.log_pos else 0
            plain = build_event(type_code=raw.type_code, body=raw.body, timestamp=raw.timestamp,
                                server_id=raw.server_id, log_pos=log_pos & 0xFFFFFFFF, flags=raw.flags,
                                checksum=checksum)
            dst.write(ec.encrypt(plain, at))
            at += len(plain)
        n += 1
    return n

"""Streaming reader: cuts raw events out of a binlog or relay log and checks their CRC32.

The reader frames; it does not decode bodies (that is a separate, pure call). It keeps the
format in force (the last Format_description seen: relay logs carry several) and verifies each
event's checksum as that format announces. Memory stays bounded by the largest event.

Checksum rule: CRC32 (zlib's, the same polynomial as ``crcmod.predefined 'crc-32'``) over the
whole event minus its last 4 bytes. MySQL computes the FDE's CRC with LOG_EVENT_BINLOG_IN_USE_F
cleared, so the flag a crashed or open binlog still carries must be cleared before checking.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .codecs.format_description import fde_is_checksum_aware
from .codecs.header import HEADER_STRUCT, LEN_HEADER, OFS_FLAGS
from .constants import (BINLOG_MAGIC, LEN_CHECKSUM, LEN_MAGIC, EventFlag, EventType,
                        event_type_name)
from .errors import (BadMagicError, ChecksumError, EventSizeError, TruncatedEventError,
                     UnsupportedFormatError)
from .format import Format, v3_format

MYSQL_ENCRYPTED_MAGIC = b"\xfdbin"
_CHUNK = 1 << 20
# Servers cap an event at max_allowed_packet (at most 1 GiB); a bigger event_size is damage,
# and must not make the reader try to buffer gigabytes.
MAX_EVENT_SIZE = (1 << 30) + (1 << 16)


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One event as framed from a file: where it is, its header, its bytes."""

    offset: int
    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    data: bytes  # the whole event, header and checksum included
    format: Format | None  # the format in force for this event (for an FDE: its own)
    checksum_ok: bool | None  # None: no checksum to verify
    file: str | None = None  # the name the reader was given

    @property
    def type_name(self) -> str:
        return event_type_name(self.type_code)

    @property
    def end_offset(self) -> int:
        return self.offset + self.event_size

    @property
    def len_checksum(self) -> int:
        if self.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
            return LEN_CHECKSUM if fde_is_checksum_aware(self.data) else 0
        return self.format.len_checksum if self.format else 0

    @property
    def len_header(self) -> int:
        """Common header length: 19, or what the FDE in force announces (MDEV-4645 files: 23+).
        The FDE itself is always read with 19."""
        if self.type_code == EventType.FORMAT_DESCRIPTION_EVENT or self.format is None:
            return LEN_HEADER
        return max(LEN_HEADER, self.format.header_length)

    @property
    def body(self) -> bytes:
        """Bytes between the common header and the checksum: the window a codec parses."""
        return self.data[self.len_header:self.event_size - self.len_checksum]


def event_crc(data: bytes) -> int:
    """CRC32 an event's last 4 bytes should hold (FDE in-use flag cleared, as MySQL does)."""
    flags = data[OFS_FLAGS]
    if data[4] == EventType.FORMAT_DESCRIPTION_EVENT and flags & EventFlag.BINLOG_IN_USE:
        head = data[:OFS_FLAGS] + bytes([flags & ~EventFlag.BINLOG_IN_USE & 0xFF])
        return zlib.crc32(data[OFS_FLAGS + 1:-LEN_CHECKSUM], zlib.crc32(head))
    return zlib.crc32(memoryview(data)[:-LEN_CHECKSUM])


def iter_raw_events(stream: BinaryIO, *, name: str = "<stream>", verify: bool = True) -> Iterator[RawEvent]:
    """Yield every event of a binlog/relay-log stream positioned at byte 0.

    Raises a ``BinlogError`` subclass naming file and offset on bad magic, a torn event
    (``TruncatedEventError``), an impossible size or a checksum mismatch (when ``verify``).
    """
    magic = stream.read(LEN_MAGIC)
    if magic != BINLOG_MAGIC:
        if magic == MYSQL_ENCRYPTED_MAGIC:
            raise UnsupportedFormatError("MySQL encrypted binlog (magic fd 62 69 6e): the events "
                                         "cannot be read without the keyring", file=name, offset=0)
        raise BadMagicError(f"not a binlog: starts with {magic!r}, expected {BINLOG_MAGIC!r}",
                            file=name, offset=0)
    buf = b""
    pos = 0  # position of buf[0] in the file
    at = LEN_MAGIC
    fmt: Format | None = None
    eof = False
    encrypted_at: int | None = None
    while True:
        if encrypted_at is not None:
            if at < pos + len(buf) or stream.read(1):
                raise UnsupportedFormatError(
                    f"the rest of the file is encrypted (Start_encryption at offset {encrypted_at}); "
                    "it cannot be read without the server's keys", file=name, offset=at)
            return
        rel = at - pos
        if len(buf) - rel < LEN_HEADER and not eof:
            buf = buf[rel:] + stream.read(_CHUNK)
            pos, rel = at, 0
            if len(buf) < LEN_HEADER:
                more = stream.read(_CHUNK)
                buf += more
                eof = not more
        left = len(buf) - rel
        if left == 0:
            return
        if left < LEN_HEADER:
            raise TruncatedEventError(f"torn event header: {left} bytes where 19 are needed",
                                      file=name, offset=at)
        ts, code, sid, size, log_pos, flags = HEADER_STRUCT.unpack_from(buf, rel)
        tname = event_type_name(code)
        if size < LEN_HEADER:
            raise EventSizeError(f"event_size {size} is smaller than the 19-byte header",
                                 file=name, offset=at, event_type=tname)
        if size > MAX_EVENT_SIZE:
            raise EventSizeError(f"event_size {size} is larger than any server writes (1 GiB)",
                                 file=name, offset=at, event_type=tname)
        if left < size:
            buf = buf[rel:]
            pos, rel = at, 0
            while len(buf) < size:
                more = stream.read(min(max(_CHUNK, size - len(buf)), 64 * _CHUNK))
                if not more:
                    raise TruncatedEventError(
                        f"torn event: event_size {size} but only {len(buf)} bytes left in the file",
                        file=name, offset=at, event_type=tname)
                buf += more
        data = bytes(buf[rel:rel + size])
        if code == EventType.FORMAT_DESCRIPTION_EVENT:
            aware = fde_is_checksum_aware(data)
            body = data[LEN_HEADER:size - (LEN_CHECKSUM if aware else 0)]
            try:
                fmt = Format.from_fde_body(body)
            except Exception as exc:
                if hasattr(exc, "with_context"):
                    raise exc.with_context(file=name, offset=at)
                raise
            has_crc = aware  # a checksum-aware FDE carries a valid CRC32 even when its alg is OFF
        else:
            if code == EventType.START_EVENT_V3 and fmt is None:
                fmt = v3_format(data[LEN_HEADER + 2:LEN_HEADER + 52].split(b"\x00", 1)[0].decode("ascii", "replace"))
            has_crc = fmt is not None and fmt.len_checksum > 0
        ok = None
        if has_crc:
            if size < LEN_HEADER + LEN_CHECKSUM:
                raise EventSizeError(f"event_size {size} leaves no room for the checksum",
                                     file=name, offset=at, event_type=tname)
            stored = int.from_bytes(data[-LEN_CHECKSUM:], "little")
            actual = event_crc(data)
            ok = stored == actual
            if not ok and verify:
                raise ChecksumError(f"CRC32 mismatch: stored {stored:#010x}, computed {actual:#010x}",
                                    expected=stored, actual=actual, file=name, offset=at, event_type=tname)
        yield RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, name)
        if code == EventType.START_ENCRYPTION_EVENT:
            encrypted_at = at
        at += size

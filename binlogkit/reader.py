"""Streaming reader: cuts raw events out of a binlog or relay log and checks their CRC32.

The reader frames (with ``framing.walk_events``, the one framing loop) and hands out ``RawEvent``
values; it does not decode bodies (that is a separate, pure call). It keeps the format in force
(the last Format_description seen: relay logs carry several). Memory stays bounded by the
largest event plus a 4 MiB window.

Checksum rule: CRC32 (zlib's, the same polynomial as ``crcmod.predefined 'crc-32'``) over the
whole event minus its last 4 bytes. MySQL computes the FDE's CRC with LOG_EVENT_BINLOG_IN_USE_F
cleared, so the flag a crashed or open binlog still carries must be cleared before checking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .codecs.format_description import fde_is_checksum_aware
from .codecs.header import LEN_HEADER
from .constants import LEN_CHECKSUM, EventType, event_type_name
from .errors import BinlogError
from .format import Format, v3_format
from .framing import MAX_EVENT_SIZE, MYSQL_ENCRYPTED_MAGIC, event_crc, walk_events  # noqa: F401  (re-exported)


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
    payload_offset: int | None = None  # events inside a Transaction_payload: where it starts
    inner_offset: int | None = None  # ... and where this event sits in its uncompressed bytes

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


def iter_raw_events(stream: BinaryIO, *, name: str = "<stream>", verify: bool = True,
                    keys=None) -> Iterator[RawEvent]:
    """Yield every event of a binlog/relay-log stream positioned at byte 0.

    Raises a ``BinlogError`` subclass naming file and offset on bad magic, a torn event
    (``TruncatedEventError``), an impossible size or a checksum mismatch (when ``verify``;
    otherwise the event comes with ``checksum_ok=False``). Framing is ``framing.walk_events``;
    encrypted events come out decrypted with ``keys`` (a ``crypto.Keys``).
    """
    fmt: Format | None = None
    try:
        for at, code, ts, sid, size, log_pos, flags, data, ok in walk_events(stream, verify=verify, want=None, keys=keys):
            if code == EventType.FORMAT_DESCRIPTION_EVENT:
                aware = fde_is_checksum_aware(data)
                try:
                    fmt = Format.from_fde_body(data[LEN_HEADER:size - (LEN_CHECKSUM if aware else 0)])
                except BinlogError as exc:
                    raise exc.with_context(offset=at)
            elif code == EventType.START_EVENT_V3 and fmt is None:
                fmt = v3_format(data[LEN_HEADER + 2:LEN_HEADER + 52].split(b"\x00", 1)[0].decode("ascii", "replace"))
            yield RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, name)
    except BinlogError as exc:
        exc.__traceback__ = None
        raise exc.with_context(file=name)

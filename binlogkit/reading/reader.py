"""Streaming reader: cuts raw events out of a binlog or relay log and checks their CRC32.

The reader takes the frames of the one opener (``source``: the one framing loop, the format in
force attached: the last Format_description seen, relay logs carry several) and hands out
``RawEvent`` values; it does not decode bodies (that is a separate, pure call). Memory stays bounded by the
largest event plus a 4 MiB window.

Checksum rule: CRC32 (zlib's, the same polynomial as ``crcmod.predefined 'crc-32'``) over the
whole event minus its last 4 bytes. MySQL computes the FDE's CRC with LOG_EVENT_BINLOG_IN_USE_F
cleared, so the flag a crashed or open binlog still carries must be cleared before checking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import BinaryIO, Generator, Iterator

from ..codecs.format_description import fde_is_checksum_aware
from ..codecs.header import LEN_HEADER
from ..constants import LEN_CHECKSUM, EventType, event_type_name
from ..errors import BinlogError
from .format import Format
from .framing import MAX_EVENT_SIZE, MYSQL_ENCRYPTED_MAGIC, Frame, event_crc  # noqa: F401  (re-exported)
from .source import Input, as_input, frames_of_stream


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


def _raw_events(frames: Iterator[Frame], name: str) -> Generator[RawEvent, None, None]:
    try:
        for f in frames:
            yield RawEvent(f.offset, f.timestamp, f.type_code, f.server_id, f.event_size, f.log_pos, f.flags,
                           f.data, f.format, f.checksum_ok, name)  # want=None: data is set
    except BinlogError as exc:
        exc.__traceback__ = None
        raise exc.with_context(file=name)


def read_events(inp: Input | str | os.PathLike) -> Generator[RawEvent, None, None]:
    """Every event of an ``Input`` (``source.Input``: path or URL, keys, verify; a plain path is
    an Input without keys) as a ``RawEvent``; errors as ``iter_raw_events`` raises them, naming
    the input."""
    inp = as_input(inp)
    return _raw_events(inp.frames(want=None), inp.name)


def iter_raw_events(stream: BinaryIO, *, name: str = "<stream>", verify: bool = True,
                    keys=None) -> Iterator[RawEvent]:
    """Yield every event of a binlog/relay-log stream positioned at byte 0.

    Raises a ``BinlogError`` subclass naming file and offset on bad magic, a torn event
    (``TruncatedEventError``), an impossible size or a checksum mismatch (when ``verify``;
    otherwise the event comes with ``checksum_ok=False``). Framing is ``source.frames_of_stream``
    (the one framing loop, with the Format attached); encrypted events come out decrypted with
    ``keys`` (a ``crypto.Keys``). For a path or URL: ``read_events(Input(path, ...))``.
    """
    return _raw_events(frames_of_stream(stream, verify=verify, want=None, keys=keys), name)

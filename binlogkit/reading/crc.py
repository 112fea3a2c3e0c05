"""The CRC32 function of the hot loops: ISA-L's when ``isal`` is installed (the ``fast`` extra;
the same polynomial and results as zlib's, several times faster), else zlib's."""

from __future__ import annotations

import zlib
from typing import Callable

from ..constants import LEN_CHECKSUM, OFS_FLAGS, EventFlag, EventType

CRC32: Callable[..., int]
try:
    from isal.isal_zlib import crc32 as CRC32
except ImportError:
    CRC32 = zlib.crc32



def event_crc(data: bytes) -> int:
    """CRC32 an event's last 4 bytes should hold (FDE in-use flag cleared, as MySQL does)."""
    flags = data[OFS_FLAGS]
    if data[4] == EventType.FORMAT_DESCRIPTION_EVENT and flags & EventFlag.BINLOG_IN_USE:
        head = data[:OFS_FLAGS] + bytes([flags & ~EventFlag.BINLOG_IN_USE & 0xFF])
        return zlib.crc32(data[OFS_FLAGS + 1:-LEN_CHECKSUM], zlib.crc32(head))
    return zlib.crc32(memoryview(data)[:-LEN_CHECKSUM])


__all__ = ["CRC32", "event_crc"]

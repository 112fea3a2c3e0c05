"""MariaDB compressed events (Query_compressed 165, *_ROWS_COMPRESSED 166-171).

The compressed part (the query text, or the row images) starts with one byte ``0x80 | n``
(n = 1..4, bytes of the uncompressed length, big-endian), then that length, then zlib data.
Source: MariaDB ``sql/log_event.cc`` binlog_buf_uncompress.
"""

from __future__ import annotations

import zlib


def uncompress(data: bytes) -> bytes:
    """The block's bytes; ``ValueError`` for a bad header, damaged zlib data or a wrong length."""
    if not data:
        raise ValueError("empty compressed block")
    head = data[0]
    if head & 0x80 == 0 or not 1 <= head & 0x07 <= 4:
        raise ValueError(f"bad compressed-block header byte {head:#04x}")
    n = head & 0x07
    if len(data) < 1 + n:
        raise ValueError("compressed block shorter than its length field")
    length = int.from_bytes(data[1:1 + n], "big")
    try:  # never more than the header announces (+1 to see that it lied)
        out = zlib.decompressobj().decompress(data[1 + n:], length + 1)
    except zlib.error as exc:
        raise ValueError(f"compressed block: {exc}") from None
    if len(out) != length:
        raise ValueError(f"compressed block: header says {length} bytes, got "
                         f"{'more' if len(out) > length else len(out)}")
    return out

"""MariaDB compressed events (Query_compressed 165, *_ROWS_COMPRESSED 166-171).

The compressed part (the query text, or the row images) starts with one byte ``0x80 | n``
(n = 1..4, bytes of the uncompressed length, big-endian), then that length, then zlib data.
Source: MariaDB ``sql/log_event.cc`` binlog_buf_uncompress.
"""

from __future__ import annotations

import zlib


def uncompress(data: bytes) -> bytes:
    if not data:
        raise ValueError("empty compressed block")
    head = data[0]
    if head & 0x80 == 0 or not 1 <= head & 0x07 <= 4:
        raise ValueError(f"bad compressed-block header byte {head:#04x}")
    n = head & 0x07
    length = int.from_bytes(data[1:1 + n], "big")
    out = zlib.decompress(data[1 + n:])
    if len(out) != length:
        raise ValueError(f"compressed block: header says {length} bytes, got {len(out)}")
    return out

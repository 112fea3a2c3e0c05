"""The C accelerator's interface (``binlogkit/_fastdecode.c``; see ``binlogkit/reading/fastdecode.py``)."""

from typing import Any, Callable

def walk(buf: bytearray, rel: int, filled: int, at: int, opts: int, crc: Callable[[bytes, int], int], cfg: bytes,
         names: tuple[bytes | None, ...] | dict[int, bytes] | None, prefix: bytes, /) -> tuple[int, int, int, int, bytes, Any, int, int]:
    """-> (status, rel, filled, at, text, info, events, checksummed). ``info`` depends on the
    status: PYTHON ``(code, timestamp, server_id, size, log_pos, flags, checksum_ok)``, TABLEMAP /
    ROWS ``(code, table_id, body_start, body_end, mark)``; with O_REPLAY (``names``: table id ->
    column types + 2-byte metadata) ROWS ``(code, table_id, body_start, body_end, header_at,
    b64_at, stmt_end, rows)`` (rows -1: not counted), else None."""
    ...

"""The C accelerator's interface (``binlogkit/_fastdecode.c``; see ``binlogkit/reading/fastdecode.py``)."""

from typing import Any, Callable

def walk(buf: bytearray, rel: int, filled: int, at: int, opts: int, crc: Callable[[bytes, int], int], cfg: bytes,
         names: tuple[bytes | None, ...] | dict[int, bytes] | None, prefix: bytes, /) -> tuple[int, int, int, int, bytes, Any, int, int]:
    """-> (status, rel, filled, at, text, info, events, checksummed). ``info`` depends on the
    status: PYTHON ``(code, timestamp, server_id, size, log_pos, flags, checksum_ok)``, TABLEMAP /
    ROWS ``(code, table_id, body_start, body_end, mark)``, else None."""
    ...

def b64(data: bytes, simd: bool = True, /) -> bytes:
    """A BINLOG block's base64 (76-character lines), for the tests."""
    ...

class Replayer:
    """The replayable printer's state the C loop keeps (``reading.fastdecode._Lender``)."""

    rows: int
    allow_parallel: int
    domain_id: int
    server_id: int
    skip_replication: int
    gtid_flags2: int
    in_trx: int
    gtid_pending: int
    tables: dict[int, bytes]
    maps: dict[int, tuple[bytes, int]]
    notes: bytes
    out_fd: int
    direct_min: int
    plans: dict[bytes, tuple[bytes, bytes, bytes, tuple[bytes, ...] | None, bool] | None]
    vtables: dict[int, tuple[bytes, bytes, bytes, tuple[bytes, ...] | None, bool] | None]

    def walk(self, buf: bytearray, rel: int, filled: int, at: int, opts: int, crc: Callable[[bytes], int],
             cfg: bytes, /) -> tuple[int, int, int, bytes, Any]:
        """-> (status, rel, at, text, info); info on PYTHON: ``(code, timestamp, server_id, size,
        log_pos, flags, checksum_ok)``, else None."""
        ...

    def take(self) -> tuple[bytes, bytes, bytes | None, bytes | None]:
        """The held statement: header lines, base64 blocks, Annotate_rows lines, -v rows (cleared)."""
        ...

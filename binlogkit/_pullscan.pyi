"""The C accelerator's interface (``binlogkit/_pullscan.c``; used by ``binlogkit/pull/receiver.py``)."""

from typing import Callable

def bind_crc(path: str, probe: bytes, expect: int, /) -> bool:
    """ISA-L's crc32_gzip_refl from the loaded library ``path`` for ``run(..., crc=None)``, kept
    only if its CRC32 of ``probe`` is ``expect``."""
    ...

def run(buf: bytearray, pos: int, end: int, seq: int, semisync: bool, crc_on: bool, at: int, state: int,
        query_phl: int, crc: Callable[[memoryview], int] | None, /) -> tuple[int, int, int, int, int, int, int, int]:
    """-> (pos, seq, at, taken, events, transactions, last_timestamp, state): the packets of
    buf[pos:end] that need no decision, their events moved down over the packet headers into
    buf[pos:pos + taken] (in place); it stops at the first packet it does not settle."""
    ...

def summary(buf: bytearray, rel: int, filled: int, at: int, crc_on: bool, state: int, query_phl: int, known: bytes,
            have_cur: bool, cur_fast: bool, cur_seq: int, cur_at: int, cur_src: int, domain: int, server_id: int,
            uuid: bytes, last: int, complete_end: int, crc: Callable[[memoryview], int], /
            ) -> tuple[int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int]:
    """-> (status, rel, at, events, checksummed, first_ts, last_ts, state, have_cur, cur_fast, cur_seq,
    cur_at, cur_src, last, complete_end, transactions, opened): audit's per-file pass over the
    events of buf[rel:filled] it settles (``audit/summary.py``'s ``_FastWalk``); status 1: the next
    event is the Python path's, 0: the window ends."""
    ...

"""The C accelerator's interface (``binlogkit/_pullscan.c``; used by ``binlogkit/pull/receiver.py``)."""

from typing import Callable

def run(buf: bytearray, pos: int, seq: int, semisync: bool, crc_on: bool, at: int, state: int, query_phl: int,
        crc: Callable[[memoryview], int], /) -> tuple[int, int, int, bytes, int, int, int, int]:
    """-> (pos, seq, at, data, events, transactions, last_timestamp, state): the packets of
    buf[pos:] that need no decision, their events joined in ``data``; it stops at the first
    packet it does not settle."""
    ...

"""The fast scan path: walk event headers over mmap with one precompiled struct, verify CRC32,
and return a verdict — no Python object per event unless asked for.

Used by ``verify``; the walk itself is the one opener's (``source.Input.frames``). Agrees with ``reader.iter_raw_events``
on every file (tested): same event boundaries, same first problem at the same offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from ..errors import BinlogError
from .framing import Frame
from .source import Input, as_input

if TYPE_CHECKING:
    from ..crypto.mariadb import EventCipher


@dataclass
class ScanResult:
    path: str
    size: int
    events: int = 0
    checksummed: int = 0
    end_offset: int = 4  # end of the last whole, verified event
    problem: BinlogError | None = None
    type_counts: dict[int, int] = field(default_factory=dict)
    encryption: str | None = None  # e.g. "MariaDB AES_CBC, key id 1 version 1"
    cipher: EventCipher | None = field(default=None, repr=False)  # the crypto.mariadb.EventCipher that read it

    @property
    def ok(self) -> bool:
        return self.problem is None


def scan(path: Input | str | os.PathLike, *, verify: bool = True, count_types: bool = False,
         progress=None) -> ScanResult:
    """Walk every event of the input (an ``Input``: its keys; or a path read with this
    ``verify``); stop at the first problem and record it."""
    inp = as_input(path, verify=verify)
    compressed = inp.compression is not None
    res = ScanResult(inp.name, 0 if compressed else inp.size())
    try:
        _walk(inp, res, count_types, progress)
    except BinlogError as exc:
        exc.__traceback__ = None
        res.problem = exc.with_context(file=inp.name)
    if compressed:
        res.size = res.end_offset  # decompressed bytes up to the last whole event
    return res


def _walk(inp: Input, res: ScanResult, count_types: bool, progress) -> None:
    notes: dict = {}
    try:
        _walk_counting(inp.frames(notes=notes, records=False), res, count_types, progress)
    finally:
        c = notes.get("cipher")
        if c is not None and c.cipher is not None:
            res.encryption = c.describe()
            res.cipher = c


def _walk_counting(frames: Iterator[Frame], res: ScanResult, count_types: bool, progress) -> None:
    counts = res.type_counts
    next_tick = 64 << 20
    for at, code, _ts, _sid, ev_size, _pos, _flags, _data, ok, _fmt in frames:  # bare tuples: the hot loop
        res.events += 1
        res.checksummed += ok is not None
        res.end_offset = at + ev_size
        if count_types:
            counts[code] = counts.get(code, 0) + 1
        if progress is not None and res.end_offset >= next_tick:
            progress(res.end_offset)
            next_tick = res.end_offset + (64 << 20)

"""The fast scan path: walk event headers over mmap with one precompiled struct, verify CRC32,
and return a verdict — no Python object per event unless asked for.

Used by ``verify``; the walk itself is ``framing.walk_events``. Agrees with ``reader.iter_raw_events``
on every file (tested): same event boundaries, same first problem at the same offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import BinlogError
from .framing import walk_events

if TYPE_CHECKING:
    from .crypto.mariadb import EventCipher


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


def scan(path: str | os.PathLike, *, verify: bool = True, count_types: bool = False,
         progress=None, keys=None) -> ScanResult:
    """Walk every event of the file at ``path``; stop at the first problem and record it."""
    from .files import OPENERS, input_size, open_input

    path = os.fspath(path)
    compressed = os.path.splitext(path)[1] in OPENERS
    res = ScanResult(path, 0 if compressed else input_size(path))
    with open_input(path) as fh:
        try:
            _walk(fh, res, verify, count_types, progress, keys)
        except BinlogError as exc:
            exc.__traceback__ = None
            res.problem = exc.with_context(file=path)
    if compressed:
        res.size = res.end_offset  # decompressed bytes up to the last whole event
    return res


def _walk(fh, res: ScanResult, verify: bool, count_types: bool, progress, keys=None) -> None:
    notes: dict = {}
    try:
        _walk_counting(fh, res, verify, count_types, progress, keys, notes)
    finally:
        c = notes.get("cipher")
        if c is not None and c.cipher is not None:
            res.encryption = c.describe()
            res.cipher = c


def _walk_counting(fh, res, verify, count_types, progress, keys, notes) -> None:
    counts = res.type_counts
    next_tick = 64 << 20
    for at, code, _ts, _sid, ev_size, _pos, _flags, _data, ok in walk_events(fh, verify=verify, keys=keys,
                                                                             notes=notes):
        res.events += 1
        res.checksummed += ok is not None
        res.end_offset = at + ev_size
        if count_types:
            counts[code] = counts.get(code, 0) + 1
        if progress is not None and res.end_offset >= next_tick:
            progress(res.end_offset)
            next_tick = res.end_offset + (64 << 20)

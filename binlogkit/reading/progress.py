"""Progress on stderr, only when stderr is a terminal. ``Progress``: one file's percentage, fed
offsets by the loop reading it (decode's and verify's C loops). ``watching``: a command's reading:
which input is
being read (its number among the command's inputs) and how far into it, redrawn at most five
times a second, erased when the command is done. Nothing is written to a pipe or a file, so
scripts and ``--json`` readers never see it.

One ``watching(inputs, label)`` around a command's run; every ``Input.frames`` opened inside it
reads through ``watched``, a thin reader that reports its position once per MiB read (the
stored bytes: an archive's compressed offset). A command that reads a file twice (a plan, then
the work) shows both passes. Nothing is done, and nothing is listed, when stderr is not a
terminal; ``watched`` is then the stream itself. ``BINLOGKIT_PROGRESS_MIN_BYTES``: inputs
smaller than this in total (32 MiB by default) show nothing (the decode and verify commands'
own progress takes the same setting).
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator

from ..errors import BinlogError
from .files import expand_paths, input_size

_CURRENT: ContextVar["Watch | None"] = ContextVar("binlogkit_progress", default=None)
STEP = 1 << 20          # bytes read between two looks at the clock
EVERY = 0.2             # seconds between two redraws


def min_bytes() -> int:
    return int(os.environ.get("BINLOGKIT_PROGRESS_MIN_BYTES", 32 << 20))


class _Line:
    """A line redrawn in place (``\r``), padded over a longer one before it, erased at the end."""

    def __init__(self, out: Any) -> None:
        self.out = out
        self.width = 0

    def draw(self, text: str) -> None:
        self.out.write("\r" + text + " " * max(0, self.width - len(text)))
        self.out.flush()
        self.width = len(text)

    def erase(self) -> None:
        if self.width:
            self.out.write("\r" + " " * self.width + "\r")
            self.out.flush()
            self.width = 0


class Progress:
    """One file's progress (``label: NN%``), drawn at each call with the offset reached; only
    when stderr is a terminal and ``total`` is over ``BINLOGKIT_PROGRESS_MIN_BYTES``."""

    def __init__(self, total: int, label: str) -> None:
        self.on = _isatty(sys.stderr) and total > min_bytes()   # small inputs: no noise
        self.total, self.label = total, label
        self.line = _Line(sys.stderr)

    def __call__(self, done: int) -> None:
        if self.on:
            self.line.draw(f"{self.label}: {done * 100 // max(1, self.total):3d}%")

    def close(self) -> None:
        self.line.erase()


class Watch:
    """The line on stderr for one command's run."""

    def __init__(self, names: list[str], label: str, out: Any) -> None:
        self.number = {n: i + 1 for i, n in enumerate(names)}
        self.count, self.label = len(names), label
        self.line = _Line(out)
        self.last = 0.0

    def show(self, name: str, done: int, size: int) -> None:
        now = time.monotonic()
        if now - self.last < EVERY:
            return
        self.last = now
        i = self.number.get(name)
        where = f"file {i} of {self.count}: " if i is not None and self.count > 1 else ""
        base = name.rstrip("/").rsplit("/", 1)[-1]
        far = f"{min(100, done * 100 // size):3d}%" if size > 0 else f"{done >> 20} MiB"
        self.line.draw(f"{self.label}: {where}{base} {far}")

    def close(self) -> None:
        self.line.erase()


@contextmanager
def watching(inputs: Iterable[Any], label: str, out: Any = None, *, enabled: bool = True) -> Iterator[None]:
    """Progress for the reads inside (``inputs``: the command's paths or ``Input`` values,
    expanded as it reads them: folders, ``.index`` files). Only when ``out`` (stderr) is a
    terminal and the inputs weigh ``BINLOGKIT_PROGRESS_MIN_BYTES`` or more; ``enabled=False``
    (a command writing its lines to the same terminal): never."""
    out = out if out is not None else sys.stderr
    watch = None
    if enabled and _isatty(out):
        try:
            found = [os.fspath(p) for p in expand_paths([os.fspath(i) for i in inputs])]
            if sum(input_size(p) for p in found) >= max(1, min_bytes()):
                watch = Watch(found, label, out)
        except (OSError, ValueError, BinlogError):
            watch = None     # the command itself says what is wrong with its inputs
    token = _CURRENT.set(watch)
    try:
        yield
    finally:
        _CURRENT.reset(token)
        if watch is not None:
            watch.close()


def _isatty(out: Any) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


def finished(name: str, size: Callable[[], int]) -> None:
    """A file read elsewhere (a worker process: the watch is this process's) is done: shown as
    read whole, so a pool's run moves the line file by file. ``size``: asked only when a watch
    is on."""
    watch = _CURRENT.get()
    if watch is not None:
        watch.last = 0.0
        whole = size()
        watch.show(name, whole, whole)


def watched(fh: Any, name: str, size: Callable[[], int]) -> Any:
    """``fh`` reporting its position to the current watch, or ``fh`` itself when none
    (``size``, the file's stored size, asked only then)."""
    watch = _CURRENT.get()
    if watch is None:
        return fh
    return _Watched(fh, watch, name, size())


class _Watched:
    """A reader that passes everything to the stream it wraps and, once per ``STEP`` bytes
    read, shows how far into its file the stored bytes are."""

    def __init__(self, fh: Any, watch: Watch, name: str, size: int) -> None:
        self._fh, self._watch, self._name, self._size = fh, watch, name, size
        under = getattr(fh, "_under", None)     # an archive: its compressed offset
        self._tell = under.tell if under is not None else fh.tell
        self._read = 0
        self._next = STEP

    def _count(self, n: int) -> None:
        self._read += n
        if self._read >= self._next:
            self._next = self._read + STEP
            try:
                at = self._tell()
            except (OSError, ValueError):
                return
            self._watch.show(self._name, at, self._size)

    def readinto(self, b: Any) -> int:
        n = self._fh.readinto(b)
        if n:
            self._count(n)
        return n

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(n)
        if data:
            self._count(len(data))
        return data

    def read1(self, n: int = -1) -> bytes:
        data = self._fh.read1(n)
        if data:
            self._count(len(data))
        return data

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._fh, attr)

    def __enter__(self) -> "_Watched":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._fh)

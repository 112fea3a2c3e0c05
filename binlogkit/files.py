"""Opening inputs: the one place that turns a path into a read-only byte stream.

Plain files are opened unbuffered (the readers keep their own large buffers); archives
compressed as ``.xz``/``.lzma``, ``.gz`` or ``.bz2`` are decompressed as streams. Nothing here
ever opens a file for writing.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import PurePath
from typing import BinaryIO

OPENERS = {".xz": lzma.open, ".lzma": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def open_input(path: str | os.PathLike) -> BinaryIO:
    opener = OPENERS.get(PurePath(os.fspath(path)).suffix)
    if opener is not None:
        return opener(path, "rb")
    return open(path, "rb", buffering=0)

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
from typing import Any, BinaryIO, Callable

OPENERS: dict[str, Callable[..., Any]] = {".xz": lzma.open, ".lzma": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def is_url(path: str | os.PathLike) -> bool:
    return "://" in os.fspath(path)


def open_input(path: str | os.PathLike) -> BinaryIO:
    """A read-only byte stream: local files, archives, or URLs (``hdfs://``, ``s3a://``, ...)
    through fsspec when it is installed."""
    if is_url(path):
        from ._optional import need

        fsspec = need("fsspec", "reading URLs")  # optional: only needed for remote archives
        return fsspec.open(os.fspath(path), "rb", compression="infer").open()
    opener = OPENERS.get(PurePath(os.fspath(path)).suffix)
    if opener is not None:
        return opener(path, "rb")
    return open(path, "rb", buffering=0)


def input_size(path: str | os.PathLike) -> int:
    """Size in bytes of a file as stored (compressed size for archives)."""
    if is_url(path):
        from ._optional import need

        fsspec = need("fsspec", "reading URLs")
        fs, p = fsspec.core.url_to_fs(os.fspath(path))
        return int(fs.size(p))
    return os.path.getsize(path)

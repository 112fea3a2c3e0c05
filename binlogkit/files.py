"""Opening inputs: the one place that turns a path into a read-only byte stream.

Plain files are opened unbuffered (the readers keep their own large buffers); archives
compressed as ``.xz``/``.lzma``, ``.gz`` or ``.bz2`` are decompressed as streams. URLs
(``s3://bucket/prefix``, any fsspec URL) go to ``binlogkit.storage``: objects read in large
ranges with read-ahead, prefixes expanded like local folders. Nothing here ever opens a file
for writing.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path, PurePath
from typing import Any, BinaryIO, Callable, Iterable, Union

from .storage import Url, is_url

InputPath = Union[Path, Url]  # what expand_paths gives: local paths, or URLs kept as text

OPENERS: dict[str, Callable[..., Any]] = {".xz": lzma.open, ".lzma": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


def open_input(path: str | os.PathLike) -> BinaryIO:
    """A read-only byte stream: local files, archives, or URLs (``s3://``, ``hdfs://``, ...)
    through ``binlogkit.storage`` (the 's3' extra: fsspec, s3fs)."""
    if is_url(path):
        from . import storage

        return storage.open_read(os.fspath(path))
    opener = OPENERS.get(PurePath(os.fspath(path)).suffix)
    if opener is not None:
        return opener(path, "rb")
    return open(path, "rb", buffering=0)


def input_size(path: str | os.PathLike) -> int:
    """Size in bytes of a file as stored (compressed size for archives)."""
    if is_url(path):
        from . import storage

        return storage.size(os.fspath(path))
    return os.path.getsize(path)


COMPRESSED_SUFFIXES = (".xz", ".gz", ".bz2", ".lzma")


def _resolve(path: Path) -> Path:
    """``path``, or its compressed twin (``path.xz`` ...) when only that exists (archives)."""
    if path.exists():
        return path
    for suffix in COMPRESSED_SUFFIXES:
        twin = path.with_name(path.name + suffix)
        if twin.exists():
            return twin
    return path


def _is_log_name(p: Path) -> bool:
    name = p.name
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return Path(name).suffix[1:].isdigit()


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[InputPath]:
    """Files in order: an ``.index`` file stands for the logs it lists (relative to itself); a
    directory for its index files' logs, or else for its files named like ``NAME.000123``.
    URLs likewise (``storage.expand``: a prefix is a folder), returned as ``storage.Url``.
    MariaDB GTID index files named explicitly (``mariadb-bin.*`` matches them) are left out."""
    out: list[InputPath] = []
    for arg in paths:
        if is_url(arg):
            from . import storage

            out += [Url(u) for u in storage.expand(os.fspath(arg))]
            continue
        p = Path(arg)
        if p.is_dir():
            indexes = sorted(p.glob("*.index"))
            if indexes:
                out += expand_paths(indexes)
            else:
                out += sorted(f for f in p.iterdir() if f.is_file() and _is_log_name(f))
            continue
        if p.suffix == ".index" and p.is_file():
            for line in p.read_text().splitlines():
                line = line.strip()
                if line:
                    name = Path(line)
                    out.append(_resolve(name if name.is_absolute() else p.parent / name.name))
        elif not is_gtid_index_file(p):  # MariaDB 11.4+ writes NAME.000001.idx beside each binlog
            out.append(p)
    return out


def is_gtid_index_file(p: InputPath) -> bool:
    """A local ``.idx`` file that starts with the magic of MariaDB's GTID index
    (``binlogkit.gtid.index``): not a binlog, skipped where binlogs are expected."""
    if not isinstance(p, Path) or p.suffix != ".idx":
        return False
    from .gtid.index import is_gtid_index

    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return is_gtid_index(head) or (head == b"" and p.with_suffix("").exists())  # the hot binlog's (empty) index

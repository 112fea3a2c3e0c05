"""Names: the compressed suffixes, the binlog / relay log-name rule and ``.index`` files, once.

* ``COMPRESSED_SUFFIXES`` / ``CODEC_NAMES``: the archive suffixes binlogkit reads as streams,
  and the codec each one is (``compression.OPENERS`` opens them).
* ``is_log_name``: a binlog or relay log is named ``BASE.NNNNNN`` (digits after the last dot),
  whatever compression suffix follows; ``strip_compressed`` drops that suffix.
* ``read_index``: what a local ``.index`` file lists (``IndexListing``); ``index_lines`` and
  ``twin`` are the rules it shares with the object-storage reader (``storage.expand``).

Pure names and one text file read: no binlog is opened here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Callable

COMPRESSED_SUFFIXES = (".xz", ".gz", ".bz2", ".lzma")
CODEC_NAMES = {".xz": "xz", ".lzma": "lzma", ".gz": "gzip", ".bz2": "bzip2"}


def compressed_suffix(name: str | os.PathLike) -> str | None:
    """The archive suffix ``name`` ends with (``".gz"``...), or None."""
    suffix = PurePath(os.fspath(name)).suffix
    return suffix if suffix in CODEC_NAMES else None


def compression_of(name: str | os.PathLike) -> str | None:
    """The archive codec ``name`` says (``"xz"``, ``"lzma"``, ``"gzip"``, ``"bzip2"``), or None."""
    suffix = compressed_suffix(name)
    return CODEC_NAMES[suffix] if suffix else None


def strip_compressed(name: str) -> str:
    """``name`` without its archive suffixes (``mysql-bin.000001.gz`` -> ``mysql-bin.000001``)."""
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def is_log_name(name: str | os.PathLike) -> bool:
    """Named like a binlog or relay log: ``BASE.NNNNNN`` (archive suffix ignored). ``name`` is a
    base name, a path or an object-storage URL (its last component is what counts)."""
    text = os.fspath(name).rstrip("/").rsplit("/", 1)[-1]
    return PurePosixPath(strip_compressed(text)).suffix[1:].isdigit()


def index_lines(text: str) -> list[str]:
    """The entries of an ``.index`` file's text, as written (blank lines dropped)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def twin(name: str, exists: Callable[[str], bool]) -> str:
    """``name``, or its compressed twin (``name.xz``...) when only that ``exists``."""
    if exists(name):
        return name
    return next((name + s for s in COMPRESSED_SUFFIXES if exists(name + s)), name)


def _resolve(path: Path) -> Path:
    """``path``, or its compressed twin (``path.xz`` ...) when only that exists (archives)."""
    if path.exists() or path.is_symlink():
        return path
    for suffix in COMPRESSED_SUFFIXES:
        other = path.with_name(path.name + suffix)
        if other.exists():
            return other
    return path


@dataclass(frozen=True)
class IndexListing:
    """What an ``.index`` file stands for: ``files`` in its order (each resolved: the compressed
    twin when only that exists; the path may not exist: a missing file), ``listed`` the lines as
    written, and ``elsewhere`` True when it was written on another host (absolute paths that do
    not exist here, their files beside the index) and its entries were read beside it."""

    index: Path
    files: list[Path]
    listed: list[str]
    elsewhere: bool

    def note(self) -> str:
        return (f"{self.index} lists paths that do not exist here (written on another host: "
                f"{self.listed[0]}...); its files are read by name beside it")


def read_index(index: str | os.PathLike) -> IndexListing:
    """The logs a local ``.index`` lists. A relative entry (``./mariadb-bin.000001``, as servers
    write them) is the file of that name beside the index; an absolute one is itself when it
    exists here (or its compressed twin). When absolute entries do not exist here but files of
    their names are beside the index (an index copied from another host with its files), every
    absolute entry not found as written is read beside the index, and ``elsewhere`` says so.
    This is the one place that resolves local index entries: every command reads through it."""
    index = Path(index)
    here = index.parent
    listed = index_lines(index.read_text(errors="surrogateescape"))
    as_written: list[Path] = []
    for line in listed:
        name = Path(line)
        as_written.append(_resolve(name) if name.is_absolute() else _resolve(here / name.name))
    absent = [i for i, (line, p) in enumerate(zip(listed, as_written))
              if Path(line).is_absolute() and not (p.exists() or p.is_symlink())]
    elsewhere = any(_resolve(here / Path(listed[i]).name).exists() for i in absent)
    files = list(as_written)
    if elsewhere:
        for i in absent:
            files[i] = _resolve(here / Path(listed[i]).name)
    return IndexListing(index, files, listed, elsewhere)

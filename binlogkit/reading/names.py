"""Names: the compressed suffixes, the binlog / relay log-name rule and ``.index`` files, once.

* ``COMPRESSED_SUFFIXES`` / ``CODEC_NAMES``: the archive suffixes binlogkit reads as streams,
  and the codec each one is (``compression.OPENERS`` opens them).
* ``is_log_name``: a binlog or relay log is named ``BASE.NNNNNN`` (digits after the last dot),
  whatever compression suffix follows; ``strip_compressed`` drops that suffix.
* ``read_index``: what a local ``.index`` file lists (``IndexListing``): the files of the
  names it lists, in its own folder; ``index_lines``, ``entry_name`` and ``twin`` are the rules
  it shares with the object-storage reader (``storage.expand``).
* ``series_of`` / ``in_binlog_order``: the order every command reads its inputs in (series
  base name, then number), each file once, whatever order they were given in.

Pure names and one text file read: no binlog is opened here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from typing import Callable, Hashable, Iterable, TypeVar

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


def series_of(name: str | os.PathLike) -> tuple[str, int] | None:
    """(series base name, number) of a log named ``BASE.NNNNNN`` (archive suffix ignored; a path
    or URL: its last component), or None for another name."""
    text = strip_compressed(os.fspath(name).rstrip("/").rsplit("/", 1)[-1])
    base, _, number = text.rpartition(".")
    return (base, int(number)) if base and number.isdigit() else None


T = TypeVar("T")


def in_binlog_order(items: Iterable[T], name: Callable[[T], str], same: Callable[[T], Hashable]) -> list[T]:
    """``items`` in binlog order, each file once: the order given never matters. Logs
    (``BASE.NNNNNN``) by series base name, then number, then folder; files named otherwise
    after them, in the order given. ``same`` says which items are one file (the first given is
    kept: a file named twice, through a folder and by name, or beside its compressed twin)."""
    seen: set[Hashable] = set()
    logs: list[tuple[tuple[str, int, str], T]] = []
    others: list[T] = []
    for x in items:
        key = same(x)
        if key in seen:
            continue
        seen.add(key)
        text = name(x)
        s = series_of(text)
        if s is None:
            others.append(x)
        else:
            logs.append(((s[0], s[1], text.rstrip("/").rpartition("/")[0]), x))
    logs.sort(key=lambda kx: kx[0])
    return [x for _k, x in logs] + others


def index_lines(text: str) -> list[str]:
    """The entries of an ``.index`` file's text, as written (blank lines dropped)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def twin(name: str, exists: Callable[[str], bool]) -> str:
    """``name``, or its compressed twin (``name.xz``...) when only that ``exists``."""
    if exists(name):
        return name
    return next((name + s for s in COMPRESSED_SUFFIXES if exists(name + s)), name)


def entry_name(line: str) -> str:
    """The file name an ``.index`` line stands for: its last component (``./b.000001``,
    ``/var/lib/mysql/b.000001`` and ``C:\\data\\b.000001`` all name ``b.000001``)."""
    return line.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _resolve(path: Path) -> Path:
    """``path``, or its compressed twin (``path.xz`` ...) when only that exists (archives)."""
    return Path(twin(str(path), lambda n: os.path.lexists(n)))


@dataclass(frozen=True)
class IndexListing:
    """What an ``.index`` file stands for: ``files`` in its order, each the file of the entry's
    name in the index's own folder (the compressed twin when only that exists; the path may not
    exist: a missing file), ``listed`` the lines as written, and ``elsewhere`` True when some
    absolute entry names another folder (the index was copied with its files, or written on
    another host): those entries were read by name beside the index all the same."""

    index: Path
    files: list[Path]
    listed: list[str]
    elsewhere: bool

    def note(self) -> str:
        other = next((line for line in self.listed if _other_folder(line, self.index.parent)), self.listed[0])
        return (f"{self.index} lists files in another folder ({other}...); they are read by name beside it, "
                f"in its own folder (nothing outside it is opened)")


def _other_folder(line: str, here: Path) -> bool:
    """An absolute entry whose folder is not ``here`` (links resolved)."""
    entry = PurePath(line)
    return entry.is_absolute() and os.path.realpath(entry.parent) != os.path.realpath(here)


def read_index(index: str | os.PathLike) -> IndexListing:
    """The logs a local ``.index`` lists: each entry is the file of its name (``entry_name``) in
    the index's own folder, relative (``./mariadb-bin.000001``, as servers write them) or
    absolute (``log-bin=/abs/path/b`` writes ``/abs/path/b.000001``) alike, or its compressed
    twin there. An index means the files of its folder: an absolute entry naming another folder
    (the live server's, when the folder is a copy) is never opened there; a name the folder
    lacks is a missing file. ``elsewhere`` says an entry named another folder. This is the one
    place that resolves local index entries: every command reads through it."""
    index = Path(index)
    here = index.parent
    listed = index_lines(index.read_text(errors="surrogateescape"))
    files = [_resolve(here / entry_name(line)) for line in listed]
    elsewhere = any(_other_folder(line, here) for line in listed)
    return IndexListing(index, files, listed, elsewhere)


_NUM = re.compile(r"^(.*)\.(\d+)$")


def series_key(path: str) -> tuple[str, str, int]:
    """(directory, base name, number) of ``dir/base.000123`` (compression suffix ignored); an
    object-storage URL's directory is its prefix, kept as a URL."""
    if "://" in path:
        parent, _, name = path.rstrip("/").rpartition("/")
    else:
        p = Path(path)
        parent, name = str(p.parent), p.name
    m = _NUM.match(strip_compressed(name))
    if not m:
        return parent, name, -1
    return parent, m.group(1), int(m.group(2))

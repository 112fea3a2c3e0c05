"""Stored bytes: a path or URL turned into a read-only byte stream, and paths into the files
they stand for. Commands open no input with it: they read through ``reading.source`` (an
``Input`` and its ``frames()``), which opens with ``open_input`` below.

Plain files are opened unbuffered (the readers keep their own large buffers); archives
compressed as ``.xz``/``.lzma``, ``.gz`` or ``.bz2`` are decompressed as streams. URLs
(``s3://bucket/prefix``, any fsspec URL) go to ``binlogkit.reading.storage``: objects read in large
ranges with read-ahead, prefixes expanded like local folders. Nothing here ever opens a file
for writing.

Fail closed, for every command at once:

* only regular files are read: a FIFO, a device, a socket (or a link to one) is refused with
  ``NotRegularFileError`` before a byte is read (opening a FIFO alone would block), in
  arguments, in folders and in what an ``.index`` lists (``check_regular``, and the opener
  itself checks the descriptor it got). ``-`` is standard input, for the commands that stream.
* an archive that does not decompress (corrupt data, a bad CRC, cut short) raises
  ``CompressionError`` naming the file and the decompressed offset reached; the framing loop
  adds the event being read. Never ``LZMAError`` / ``EOFError`` / ``BadGzipFile``.
* a folder, or an ``.index`` in it, means the files in that folder: an index's entries are
  the files of their names beside it (``read_index``), absolute or not, so a copied folder
  whose index names the live server's files is read from the copy, and nothing outside the
  folder named is opened; the caller is told once when an index names another folder
  (``expand_paths(..., notes=)``).
* the order given never matters: the files are read in binlog order (series base name, then
  number), each file once (``binlog_order``).
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from pathlib import Path, PurePath
from typing import BinaryIO, Iterable, Union, cast

from .compression import CODEC_NAMES, OPENERS, Decompressed
from ..errors import NotRegularFileError
from .names import (COMPRESSED_SUFFIXES, IndexListing, in_binlog_order, is_log_name, read_index,  # noqa: F401  (re-exported)
                    strip_compressed)
from .storage import Url, is_url

InputPath = Union[Path, Url]  # what expand_paths gives: local paths, or URLs kept as text

STDIN = "-"  # standard input, for the commands that stream it (decode)


def what_is(mode: int) -> str:
    """What a file of this ``st_mode`` is, for people."""
    for test, text in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a regular file")):
        if test(mode):
            return text
    return "not a regular file"


def _refusal(path: str | os.PathLike, mode: int) -> NotRegularFileError:
    what = what_is(mode)
    link = f" (a link to {os.path.realpath(path)})" if os.path.islink(path) else ""
    return NotRegularFileError(f"is {what}{link}, not a regular file: refused (binlogkit reads only regular files; "
                               "'-' is standard input where a command streams it)", what=what, file=str(path))


def check_regular(path: str | os.PathLike) -> None:
    """Raise ``NotRegularFileError`` unless ``path`` (links followed) is a regular file; a path
    that does not exist is left to the caller (its own message)."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise _refusal(path, st.st_mode)


def _regular_opener(path: str, flags: int) -> int:
    """``open``'s opener: O_NONBLOCK so a FIFO does not block the open, then the descriptor
    itself is checked (no race between a check and the open)."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refusal(path, st.st_mode)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike, buffering: int = -1) -> BinaryIO:
    """A local regular file opened read-only; anything else is ``NotRegularFileError``."""
    return open(os.fspath(path), "rb", buffering=buffering, opener=_regular_opener)


def open_input(path: str | os.PathLike) -> BinaryIO:
    """A read-only byte stream: local regular files, archives, ``-`` (standard input), or URLs
    (``s3://``, ``hdfs://``, ...) through ``binlogkit.reading.storage`` (the 's3' extra: fsspec, s3fs).
    A FIFO, a device or a socket is ``NotRegularFileError``; an archive that does not decompress
    fails with ``CompressionError`` as it is read."""
    if is_url(path):
        from . import storage

        return storage.open_read(os.fspath(path))
    text = os.fspath(path)
    if text == STDIN:
        return cast(BinaryIO, open(sys.stdin.fileno(), "rb", buffering=0, closefd=False))
    suffix = PurePath(text).suffix
    opener = OPENERS.get(suffix)
    if opener is not None:
        under = open_regular(text)
        try:
            return cast(BinaryIO, Decompressed(opener(under, "rb"), under, str(text), CODEC_NAMES[suffix]))
        except BaseException:
            under.close()
            raise
    return open_regular(text, buffering=0)


def input_size(path: str | os.PathLike) -> int:
    """Size in bytes of a file as stored (compressed size for archives; 0 for standard input)."""
    if is_url(path):
        from . import storage

        return storage.size(os.fspath(path))
    if os.fspath(path) == STDIN:
        return 0
    return os.path.getsize(path)


def same_file(path: str | os.PathLike) -> tuple[str, str]:
    """What makes two inputs one file (``names.in_binlog_order``): the folder (links resolved)
    and the name without its archive suffix; a URL by its text. ``a/b.000001``,
    ``./a/b.000001`` and ``a/b.000001.xz`` are one file."""
    text = os.fspath(path)
    if is_url(text) or text == STDIN:
        return "", strip_compressed(text)
    folder, _, name = text.rpartition("/")
    return os.path.realpath(folder or "."), strip_compressed(name)


def binlog_order(paths: Iterable[InputPath]) -> list[InputPath]:
    """``paths`` in binlog order, each file once (``names.in_binlog_order``)."""
    return in_binlog_order(paths, lambda p: os.fspath(p), same_file)


def expand_paths(paths: Iterable[str | os.PathLike], *, notes: list[str] | None = None) -> list[InputPath]:
    """The files the arguments stand for, in binlog order (series base name, then number: the
    order given never matters), each file once. A folder stands for its files: the logs its
    ``.index`` files list, each by name in that folder (``read_index``: never a file elsewhere,
    a name the folder lacks is a missing file, returned as it would be there), and its other
    entries named like ``NAME.000123`` (whatever they are: a FIFO so named is refused when
    opened, not skipped). An ``.index`` given stands for the files it lists in its folder. A
    file given by name is itself. URLs likewise (``storage.expand``: a prefix is a folder),
    returned as ``storage.Url``; ``-`` stays itself (standard input). ``notes`` (a list)
    receives one line per index that names another folder and per folder holding logs its
    index does not list. MariaDB GTID index files named explicitly (``mariadb-bin.*`` matches
    them) are left out."""
    out: list[InputPath] = []
    for arg in paths:
        if is_url(arg):
            from . import storage

            out += [Url(u) for u in storage.expand(os.fspath(arg))]
            continue
        p = Path(arg)
        if p.is_dir():
            out += _folder(p, notes)
        elif p.suffix == ".index" and p.is_file():
            listing = read_index(p)
            if listing.elsewhere and notes is not None:
                notes.append(listing.note())
            out += listing.files
        elif not is_gtid_index_file(p):  # MariaDB 11.4+ writes NAME.000001.idx beside each binlog
            out.append(p)
    return binlog_order(out)


def _folder(p: Path, notes: list[str] | None) -> list[Path]:
    """A folder's logs: what its indexes list (by name, in it), then its other log-named
    entries (a plain file before its compressed twin: the one kept)."""
    listed: list[Path] = []
    for index in sorted(f for f in p.glob("*.index") if not f.is_dir()):
        listing = read_index(index)
        if listing.elsewhere and notes is not None:
            notes.append(listing.note())
        listed += listing.files
    names = {strip_compressed(f.name) for f in listed}
    rest = sorted((f for f in p.iterdir() if not f.is_dir() and is_log_name(f.name)),
                  key=lambda f: (strip_compressed(f.name), f.name))
    unlisted = [f for f in rest if strip_compressed(f.name) not in names]
    if listed and unlisted and notes is not None:
        notes.append(f"{p} holds {len(unlisted)} file(s) named like logs that its index does not list "
                     f"({unlisted[0].name}...): read too")
    return listed + unlisted


def is_gtid_index_file(p: InputPath) -> bool:
    """A local ``.idx`` file that starts with the magic of MariaDB's GTID index
    (``binlogkit.gtid.index``): not a binlog, skipped where binlogs are expected."""
    if not isinstance(p, Path) or p.suffix != ".idx" or not p.is_file():  # never open a FIFO so named
        return False
    from ..gtid.index import is_gtid_index

    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return is_gtid_index(head) or (head == b"" and p.with_suffix("").exists())  # the hot binlog's (empty) index


def refuse_irregular(paths: Iterable[str | os.PathLike]) -> None:
    """``NotRegularFileError`` for the first local path that exists and is not a regular file
    (``-`` and URLs pass): the up-front check of the commands, over the expanded inputs."""
    for p in paths:
        if is_url(p) or os.fspath(p) == STDIN:
            continue
        check_regular(p)

"""One source of events: the input value and the one opener every command reads through.

An ``Input`` is built once, at the edge (the CLI, an API call, a Spark task): the path or URL,
the keys for encrypted files and whether checksums are verified. Its compression is what its
name says (``names.compression_of``). Everything below reads it the same way::

    Input(path, keys=keys).frames(want=...)   ->  Frame records (framing.Frame: offset, header
                                                  fields, bytes when wanted, checksum verdict,
                                                  the Format in force)
    inputs([Input(path, keys), ...])          ->  [Input, ...]: .index files, folders, prefixes
                                                  expanded (files.expand_paths), each keeping
                                                  its argument's keys; in binlog order, each
                                                  file once

The layers under it, each in one place::

    stored bytes     files.open_input: local file, ``-``, URL (storage), archive (compression)
    container        CONTAINERS below: what the first 4 bytes say the stream is. A MySQL
                     ``binlog_encryption`` file is unwrapped into the plaintext binlog stream;
                     a new container (MariaDB's InnoDB-stored binlog) is one more entry here
    events           framing.walk_events: the one framing loop (CRC32, MariaDB per-event
                     decryption, the FDE -> Format step: format.format_of_event)

The C loop (``fastdecode``) reads the same opened, unwrapped stream (``Input.open_binlog``)
and hands anything irregular back to ``Input.frames``; audit's C loop rides inside the framing
loop instead (``Input.frames(taker=...)``: handed the window between two frames, it takes the
events it settles). No Python object is made per event beyond the ``Frame`` tuple, and no bytes
object unless its type is in ``want``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator, Union

from ..constants import BINLOG_MAGIC
from ..errors import BadMagicError, BinlogError
from .files import expand_paths, input_size, open_input, same_file
from .framing import MYSQL_ENCRYPTED_MAGIC, Frame, Taker, walk_events
from .storage import Url, is_url
from .names import compression_of, in_binlog_order
from .progress import watched

if TYPE_CHECKING:
    from ..crypto.keys import Keys, KeySpec

__all__ = ["CONTAINERS", "CONTAINER_HEADER_SIZES", "Frame", "Input", "as_input", "frames_of_stream", "inputs", "stored_offset"]

InputPath = Union[Path, Url, str]
Want = Union[frozenset[int], set[int], None]


def _mysql_encrypted(fh: BinaryIO, keys: Keys | None) -> BinaryIO:
    """MySQL ``binlog_encryption``: the file header unwraps the file password with the
    keyring's master key; the plaintext stream follows (after its own binlog magic)."""
    from ..crypto.mysql import open_decrypted

    return open_decrypted(fh, keys)


# Containers: a stream whose first 4 bytes are a key here is unwrapped by its function
# (stream after those 4 bytes, keys) into a binlog stream positioned after the binlog magic.
CONTAINERS: dict[bytes, Callable[[BinaryIO, Any], BinaryIO]] = {
    MYSQL_ENCRYPTED_MAGIC: _mysql_encrypted,
}
# bytes a container stores before the stream's byte 0: stream offset + this = file offset (MySQL
# binlog_encryption: the 512-byte header, AES-CTR after it, ``crypto/mysql.py``)
CONTAINER_HEADER_SIZES: dict[bytes, int] = {
    MYSQL_ENCRYPTED_MAGIC: 512,
}


def stored_offset(path: str | os.PathLike, offset: int) -> int:
    """Where stream offset ``offset`` (what every reader reports: event offsets, positions) is in
    the local file ``path``: the same, or past its container's header. Writers that cut or append
    to a file (recover, incident) work in these."""
    with open(path, "rb") as fh:
        return offset + CONTAINER_HEADER_SIZES.get(fh.read(4), 0)


def binlog_stream(fh: BinaryIO, keys: Keys | None = None) -> BinaryIO:
    """``fh`` (at byte 0) as a binlog event stream positioned after the binlog magic: the
    containers unwrapped; anything else is ``BadMagicError`` (``formats.not_a_binlog`` says
    what the file is when it is known)."""
    magic = fh.read(4)
    unwrap = CONTAINERS.get(magic)
    if unwrap is not None:
        return unwrap(fh, keys)
    if magic != BINLOG_MAGIC:
        if not magic:
            raise BadMagicError("empty file", offset=0)
        from .formats import not_a_binlog

        raise not_a_binlog(magic, fh.read(60))
    return fh


def frames_of_stream(fh: BinaryIO, *, verify: bool = True, want: Want = frozenset(), keys: Keys | None = None,
                     notes: dict | None = None, records: bool = True, taker: Taker | None = None,
                     start: int | None = None, stop: int | None = None) -> Iterator[Frame]:
    """The frames of an open stream at byte 0 (``Input.frames`` for a stream a caller opened:
    standard input, bytes in memory). Errors carry no file name: the caller adds it."""
    return walk_events(binlog_stream(fh, keys), verify=verify, want=want, keys=keys, notes=notes, records=records,
                       taker=taker, start=start, stop=stop)


@dataclass(frozen=True)
class Input:
    """One input: a local path, ``-`` (standard input) or an object-storage URL, with the keys
    its encrypted events need (a ``crypto.Keys``, or a ``crypto.KeySpec`` loaded where it is
    read: worker processes get the spec, never key bytes) and whether checksums are verified.
    Build it once at the edge; pass it down as the one value that says how to read."""

    path: InputPath
    keys: Keys | KeySpec | None = field(default=None, repr=False)
    verify: bool = True
    start: int | None = None   # read the head, then from this offset on (``frames(start=)``), by default
    stop: int | None = None    # ... and up to this offset (an event boundary: ``frames(stop=)``), by default

    @property
    def name(self) -> str:
        return os.fspath(self.path)

    def __fspath__(self) -> str:
        """Its name, where a path is asked for (``Path(input).name``); what reads it takes the
        Input itself (``as_input``), keys and all."""
        return self.name

    @property
    def basename(self) -> str:
        """The file or object name, without its folder or prefix."""
        return self.name.rstrip("/").rsplit("/", 1)[-1]

    @property
    def is_url(self) -> bool:
        return is_url(self.path)

    @property
    def compression(self) -> str | None:
        """The archive codec its name says (``"xz"``, ``"gzip"``, ``"bzip2"``, ``"lzma"``), or None."""
        return compression_of(self.name)

    def loaded_keys(self) -> Keys | None:
        """The keys, a ``KeySpec`` loaded here."""
        from ..crypto.keys import KeySpec

        return self.keys.load() if isinstance(self.keys, KeySpec) else self.keys

    def size(self) -> int:
        """Bytes as stored (compressed size for archives; 0 for standard input)."""
        return input_size(self.path)

    def plain(self) -> bool:
        """Not compressed: an object-storage URL, or a local regular file (what the C loop takes);
        not an Input read from an offset or up to one (``start``, ``stop``: only ``frames`` honours
        them)."""
        if self.compression is not None or self.start is not None or self.stop is not None:
            return False
        return self.is_url or Path(self.path).is_file()

    def open(self) -> BinaryIO:
        """The stored bytes, decompressed (``files.open_input``): read-only, at byte 0."""
        return open_input(self.path)

    def frames(self, *, want: Want = frozenset(), verify: bool | None = None, notes: dict | None = None,
               records: bool = True, taker: Taker | None = None, start: int | None = None,
               stop: int | None = None) -> Iterator[Frame]:
        """Every event of the input, framed, with its ``Format`` (see ``framing.Frame``):
        bytes only for the types in ``want`` (every event: None). ``verify`` overrides the
        input's own. ``records=False``: bare tuples of the same fields, for hot loops that
        unpack them. ``taker``: a C loop handed the window between two frames, which takes the
        events it settles itself (``framing.walk_events``). ``start``: the file's head (its
        Format_description, and a Start_encryption after it), then the events from that offset
        on (an event boundary: a range of whole transactions; ``seek`` where the stream can);
        the input's own ``start`` when not given. ``stop``: the frames before that offset (an
        event boundary: a transaction's first event), the input's own ``stop`` when not given. A
        ``BinlogError`` names this input's file."""
        keys = self.loaded_keys()
        with self.open() as stored:
            fh = watched(stored, self.name, self.size)
            try:
                yield from frames_of_stream(fh, verify=self.verify if verify is None else verify, want=want,
                                            keys=keys, notes=notes, records=records, taker=taker,
                                            start=self.start if start is None else start,
                                            stop=self.stop if stop is None else stop)
            except BinlogError as exc:
                raise exc.with_context(file=self.name)

    def with_options(self, **changes: Any) -> Input:
        return replace(self, **changes)

    def expand(self, notes: list[str] | None = None) -> list[Input]:
        """The Inputs of the logs this one stands for, as a path does (``files.expand_paths``:
        ``.index`` files, folders, URL prefixes), each read with this one's keys and verify. An
        object already found (a ``storage.Url``) and ``-`` stand for themselves."""
        if isinstance(self.path, Url) or self.name == "-":
            return [self]
        return [replace(self, path=f) for f in expand_paths([self.path], notes=notes)]

    def alongside(self, x: Input | str | os.PathLike) -> Input:
        """``x`` (a path beside this input: a replica's folder, its binlog index) read with this
        input's keys, checksums verified; ``x`` itself when it is an ``Input``."""
        return x if isinstance(x, Input) else replace(as_input(x), keys=self.keys)

    def for_worker(self) -> Input:
        """This input for another process (a worker, a Spark task): keys as their ``KeySpec``
        (paths, loaded there), never key bytes. Keys made in code have no spec: None."""
        from ..crypto.keys import KeySpec

        if self.keys is None or isinstance(self.keys, KeySpec):
            return self
        return replace(self, keys=self.keys.spec)


def as_input(x: Input | str | os.PathLike, *, verify: bool = True) -> Input:
    """``x`` itself when it is an ``Input``, else an ``Input`` of that path (no keys: they come
    with an ``Input`` built at the edge)."""
    return x if isinstance(x, Input) else Input(x if isinstance(x, (Path, Url)) else os.fspath(x), None, verify)


def inputs(paths: Iterable[Input | str | os.PathLike], *, verify: bool = True,
           notes: list[str] | None = None) -> list[Input]:
    """The inputs the arguments stand for: ``.index`` files, folders and URL prefixes expanded
    (``files.expand_paths``: a folder or an index in it means the files in that folder); an
    ``Input`` given keeps its options (``Input.expand``: a local folder or index becomes its
    logs, each with those options). In binlog order whatever the order given, each file once
    (``files.binlog_order``: the first argument naming it gives its options)."""
    out: list[Input] = []
    for p in paths:
        if isinstance(p, Input):
            out += p.expand(notes)
        else:
            out += [Input(f, None, verify) for f in expand_paths([p], notes=notes)]
    return in_binlog_order(out, lambda i: i.name, lambda i: (same_file(i.path), i.start))

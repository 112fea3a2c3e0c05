"""The archive ``serve`` reads: its files (``reading.source.inputs``: folders, ``.index`` files,
compressed, encrypted, ``s3://`` prefixes, listed again as a ``pull`` folder grows), each file's
head (Format_description: version, checksum) and GTIDs, and the events of a file from an offset,
whole events only. The only file I/O of the command.

A file still being written (the last of a ``pull`` folder) ends where its last whole event ends:
a torn tail is not an error there but "nothing more yet"; in any file but the last a torn or
damaged event is a ``BinlogError`` naming file and offset, and nothing of it is sent.
"""

from __future__ import annotations

import threading
from typing import Iterator, NamedTuple

from ..boundary import read_gtid
from ..constants import EventType as T
from ..errors import BinlogError, TruncatedEventError
from ..flavor import Flavor
from ..reading.framing import checksum_on
from ..reading.names import strip_compressed
from ..reading.source import Input, inputs
from .stream import GTID_OPENERS, FileGtids

_HEAD_TYPES = frozenset({T.PREVIOUS_GTIDS_LOG_EVENT, T.GTID_LIST_EVENT})
_GTID_WANT = frozenset(GTID_OPENERS | _HEAD_TYPES)


class Head(NamedTuple):
    fde: bytes
    version: str
    flavor: Flavor
    crc: bool


def _version(fde: bytes) -> str:
    return fde[19 + 2:19 + 52].split(b"\0", 1)[0].decode("ascii", "replace")


def name_of(inp: Input) -> str:
    """The binlog name a file stands for (``mariadb-bin.000001.xz`` serves ``mariadb-bin.000001``)."""
    return strip_compressed(inp.basename)


def gtid_of(code: int, server_id: int, data: bytes, crc: bool, offset: int) -> object | None:
    body = data[19:-4] if crc else data[19:]
    return read_gtid(code, server_id, body, offset)[0]


class Archive:
    """The archive given on the command line (``Input`` values: keys and all)."""

    def __init__(self, args: list[Input]) -> None:
        self.args = args
        self._lock = threading.Lock()
        self._gtids: dict[str, tuple[int, FileGtids]] = {}

    def files(self) -> list[Input]:
        """The archive's files now, in binlog order (listed again at every call)."""
        return inputs(self.args)

    def head(self, inp: Input) -> Head:
        for f in inp.frames(want=frozenset()):
            if f.type_code != T.FORMAT_DESCRIPTION_EVENT:
                break
            v = _version(f.data)
            return Head(f.data, v, Flavor.of_server_version(v), checksum_on(f.data))
        raise BinlogError("the file does not start with a Format_description event", file=inp.name, offset=4)

    def gtids(self, inp: Input, *, last: bool) -> FileGtids:
        """The file's GTIDs (cached by size: a file that grew is read again; the last file's
        torn tail ends it quietly)."""
        size = inp.size()
        with self._lock:
            hit = self._gtids.get(inp.name)
        if hit is not None and hit[0] == size:
            return hit[1]
        from ..transactions import gtid_list_strings

        head = ""
        out: list[tuple[int, object]] = []
        crc = False
        try:
            for f in inp.frames(want=_GTID_WANT):
                code = f.type_code
                if code == T.FORMAT_DESCRIPTION_EVENT:
                    crc = checksum_on(f.data)
                elif code == T.PREVIOUS_GTIDS_LOG_EVENT:
                    from ..codecs.gtid import decode_previous_gtids
                    from ..gtid.mysql import MysqlGtidSet

                    body = f.data[19:-4] if crc else f.data[19:]
                    head = str(MysqlGtidSet.from_previous_gtids(decode_previous_gtids(body)))
                elif code == T.GTID_LIST_EVENT:
                    if not out:
                        body = f.data[19:-4] if crc else f.data[19:]
                        head = ",".join(gtid_list_strings(body, f.offset))
                elif code in GTID_OPENERS:
                    g = gtid_of(code, f.server_id, f.data, crc, f.offset)
                    if g is not None:
                        out.append((f.offset, g))
        except TruncatedEventError:
            if not last:
                raise
        fg = FileGtids(name_of(inp), head, out)
        with self._lock:
            self._gtids[inp.name] = (size, fg)
        return fg

    def events(self, inp: Input, start: int) -> Iterator[tuple[int, bytes]]:
        """(offset, whole event) of the file's head (its Format_description, offset 4) and then of
        every event from ``start`` on, as far as whole events go (``TruncatedEventError`` at a torn
        tail: the caller decides whether the file is still being written)."""
        for f in inp.frames(want=None, start=start if start > 4 else None):
            yield f.offset, f.data

"""An input of the undo, opened read-only and read one event at a time at any offset.

The undo walks each transaction forward once (headers), then reads its rows events again, last
first: it seeks. Encrypted inputs are decrypted here, an event at a time, with the user's
``crypto.Keys`` (never a plaintext copy on disk):

* MariaDB ``encrypt_binlog``: the Format_description and the Start_encryption after it are in
  clear; every later event is decrypted on its own (``crypto.mariadb.EventCipher``: the IV is
  the file offset, so any event can be read alone). Only ``event_len`` is in clear in such an
  event, so its header is known only once the whole event is decrypted.
* MySQL ``binlog_encryption``: the plaintext stream after the 512-byte header, AES-CTR, seekable
  (``crypto.mysql.DecryptingReader.seek``); offsets are stream offsets, as every reader gives.

Without the key the open fails with ``KeyRequiredError`` (what the framing raises too).
"""

from __future__ import annotations

import os
from typing import IO

from ..codecs.header import HEADER_STRUCT, LEN_HEADER
from ..constants import LEN_CHECKSUM, EventType as T
from ..crypto.keys import Keys
from ..errors import BodyLengthError
from ..reading.format import Format
from ..reading.framing import checksum_on
from ..reading.reader import RawEvent
from ..reading.source import Input, binlog_stream

Header = tuple[int, int, int, int, int, int]  # timestamp, type code, server id, event size, log_pos, flags


class EventFile:
    """An ``Input`` (a local, seekable file) for event reads at any offset; ``close()`` when done.
    Its container (a MySQL encrypted file) is unwrapped by the one opener (``source.binlog_stream``)."""

    def __init__(self, inp: Input) -> None:
        from ..crypto.mariadb import EventCipher

        from ..reading.files import open_regular

        keys = inp.loaded_keys()
        fh = open_regular(inp.path)  # a FIFO or a device: NotRegularFileError, never a wait
        self._fh: IO[bytes] = fh
        self._cipher: EventCipher | None = None
        self._clear_until = 0   # MariaDB: events from here on are encrypted
        self._crc_on = False
        try:
            self._fh = binlog_stream(fh, keys)
            if self._fh is fh:  # no container: offsets are the file's; MariaDB encrypts per event
                self._mariadb_encryption(keys)
        except BaseException:
            fh.close()
            raise

    def _mariadb_encryption(self, keys: Keys | None) -> None:
        """A Start_encryption right after the first Format_description: the cipher for what follows."""
        fde = self._read(4, LEN_HEADER)
        if len(fde) < LEN_HEADER or fde[4] != T.FORMAT_DESCRIPTION_EVENT:
            return  # not a binlog v4: the plan's reader has said so already
        size = HEADER_STRUCT.unpack(fde)[3]
        self._crc_on = checksum_on(self._read(4, size))
        at = 4 + size
        head = self._read(at, LEN_HEADER)
        if len(head) < LEN_HEADER or head[4] != T.START_ENCRYPTION_EVENT:
            return
        from ..crypto.mariadb import cipher_for

        enc_size = HEADER_STRUCT.unpack(head)[3]
        data = self._read(at, enc_size)
        body = data[LEN_HEADER:len(data) - (LEN_CHECKSUM if self._crc_on else 0)]
        self._cipher = cipher_for(body, keys, offset=at)
        self._clear_until = at + enc_size

    def _read(self, at: int, n: int) -> bytes:
        self._fh.seek(at)
        return self._fh.read(n)

    def header(self, at: int, name: str) -> Header:
        """The header fields of the event at ``at`` (an encrypted event is read whole for them)."""
        if self._cipher is not None and at >= self._clear_until:
            data = self.data(at, name)
        else:
            data = self._read(at, LEN_HEADER)
            if len(data) < LEN_HEADER:
                raise BodyLengthError("the input ended inside a transaction it had when planned", file=name,
                                      offset=at)
        return HEADER_STRUCT.unpack_from(data)

    def data(self, at: int, name: str) -> bytes:
        """The whole event at ``at``, in clear."""
        head = self._read(at, LEN_HEADER)
        if len(head) < LEN_HEADER:
            raise BodyLengthError("the input ended inside an event it had when planned", file=name, offset=at)
        size = HEADER_STRUCT.unpack(head)[3]  # event_len is in clear in a MariaDB encrypted event too
        data = head + self._fh.read(size - LEN_HEADER) if size > LEN_HEADER else head
        if len(data) != size:
            raise BodyLengthError("the input ended inside an event it had when planned", file=name, offset=at)
        if self._cipher is not None and at >= self._clear_until:
            buf = bytearray(data)
            self._cipher.decrypt_into(memoryview(buf), at, self._crc_on)  # a wrong key: DecryptionError here
            return bytes(buf)
        return data

    def event(self, at: int, fmt: Format, name: str) -> RawEvent:
        data = self.data(at, name)
        ts, code, sid, size, log_pos, flags = HEADER_STRUCT.unpack_from(data)
        return RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, None, name)

    def size(self) -> int:
        """The end of the input (of its plaintext stream for a MySQL encrypted file)."""
        return self._fh.seek(0, os.SEEK_END)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> EventFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Semisynchronous replication, the primary's side, pure: whether a replica asked for it, the
2-byte header of each dump message, which events ask for an acknowledgement, and the replica's
acknowledgements read back.

What the servers do (MariaDB ``sql/semisync_master.cc``, mysql-server
``plugin/semisync/semisync_source.cc``; the replica's side: ``pull.protocol``)::

    the replica asks      SELECT @@global.rpl_semi_sync_source_enabled (MySQL; then ..._master_...)
                          or SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled' (MariaDB): an
                          unknown variable / no row is a primary without semisync (the replica
                          goes on asynchronously); then SET @rpl_semi_sync_slave = 1 (MySQL 8.0.26+
                          also @rpl_semi_sync_replica = 1)
    dump message          0x00 0xef flag:1 event        every event of the dump (artificial ones and
                                                         heartbeats too); flag 0x01: ack wanted
    after a flagged event the primary's packet counter restarts: the next packet is sequence 1
                          (the replica sent its ack with sequence 0 and reads on from 1)
    acknowledgement       0xef position:8 file_name     the replica's own packet, sequence 0, sent
                                                         after the flagged event is in its relay log;
                                                         position: where the event ends in the file

A primary flags the end of a transaction a committing client waits for. ``serve`` has no
clients: it flags the last event of every transaction it sends (the acknowledgements prove the
exchange and say how far each replica has what), never an artificial event or a heartbeat.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..boundary import DECIDING, OPEN, STANDALONE, ends, step
from ..constants import EventType as T
from ..pull.protocol import SEMISYNC_MAGIC, SEMISYNC_NEED_ACK, ProtocolError

# the session variables a replica sets to ask for semisync (MariaDB / MySQL < 8.0.26; MySQL 8.0.26+)
ASKED_BY = ("rpl_semi_sync_slave", "rpl_semi_sync_replica")
# the variables a replica probes for a primary with semisync (MariaDB and old MySQL; MySQL 8.0.26+)
ENABLED_VARS = ("rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled")

HEAD = bytes([0, SEMISYNC_MAGIC, 0])                     # a dump message's start, no ack wanted
HEAD_ACK = bytes([0, SEMISYNC_MAGIC, SEMISYNC_NEED_ACK])  # ... ack wanted
FN_REFLEN = 512                                          # the servers' longest file name
MAX_ACK = 1 + 8 + FN_REFLEN                              # the longest acknowledgement payload
_BOUNDARY_CODES = frozenset(int(c) for c in DECIDING)
_QUERY_PHL_AT = 19 + 2 + 50 + 4 + 1 + (T.QUERY_EVENT - 1)   # in a Format_description: header, binlog
                                                            # version, server version, created, header length


def asked(session: dict) -> bool:
    """Whether the replica's session variables ask for semisync (``SET @rpl_semi_sync_slave = 1``)."""
    for name in ASKED_BY:
        v = session.get(name)
        if v is not None and v not in (0, "0", "", "OFF", "off"):
            return True
    return False


class Ack(NamedTuple):
    """One acknowledgement: the replica has ``file`` up to ``position``."""

    file: str
    position: int


def parse_ack(payload: bytes) -> Ack:
    """A semisync acknowledgement ``0xef position:8 file_name``; ProtocolError when it is not one."""
    if len(payload) < 10 or payload[0] != SEMISYNC_MAGIC:
        raise ProtocolError(f"not a semisync acknowledgement ({len(payload)} bytes, first "
                            f"{payload[:1].hex() or 'none'})")
    if len(payload) > MAX_ACK:
        raise ProtocolError(f"a semisync acknowledgement of {len(payload)} bytes (a file name of at most "
                            f"{FN_REFLEN})")
    position, = struct.unpack_from("<Q", payload, 1)
    try:
        name = payload[9:].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("a semisync acknowledgement whose file name is not UTF-8") from None
    if "\0" in name or "/" in name:
        raise ProtocolError(f"a semisync acknowledgement naming {name[:80]!r}, not a binlog file name")
    return Ack(name, position)


class Packets:
    """The packets a replica sends during its dump, cut out of what arrives in any pieces: only
    short ones are expected (acknowledgements, COM_QUIT); a packet announcing more than
    ``MAX_ACK`` bytes is garbage (ProtocolError). Holds one partial packet at most."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf
        buf += data
        out = []
        while len(buf) >= 4:
            n = int.from_bytes(buf[:3], "little")
            if n > MAX_ACK:
                raise ProtocolError(f"a packet of {n} bytes during the dump (a replica sends only "
                                    "acknowledgements and COM_QUIT)")
            if len(buf) < 4 + n:
                break
            out.append(bytes(buf[4:4 + n]))
            del buf[:4 + n]
        return out


class TrxEnds:
    """Says which event ends a transaction (``binlogkit.boundary.step``, its state kept here)."""

    def __init__(self) -> None:
        self.state = 0
        self.query_phl = 13

    def format(self, fde: bytes) -> None:
        """A file's Format_description: its Query post-header length from now on."""
        if len(fde) > _QUERY_PHL_AT:
            self.query_phl = fde[_QUERY_PHL_AT]

    def ends(self, code: int, event: bytes, len_checksum: int) -> bool:
        if code not in _BOUNDARY_CODES and self.state & (OPEN | STANDALONE) == OPEN:   # rows...: the common case
            return False
        self.state, decision = step(self.state, code, event[19:len(event) - len_checksum], self.query_phl)
        return ends(decision)


__all__ = ["ASKED_BY", "ENABLED_VARS", "HEAD", "HEAD_ACK", "MAX_ACK", "Ack", "Packets", "TrxEnds", "asked",
           "parse_ack"]

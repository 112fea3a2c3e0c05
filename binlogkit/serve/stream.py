"""The dump stream, pure: the artificial events a primary makes up for it, the COM_BINLOG_DUMP /
COM_BINLOG_DUMP_GTID requests parsed, and where a GTID dump starts (``plan_mariadb``,
``plan_mysql``) over the archive's per-file GTID summaries.

Artificial events (never in a file; ``sql/rpl_source.cc`` / MariaDB ``sql/sql_repl.cc``)::

    Rotate             at the start of every file sent: log_pos 0, LOG_EVENT_ARTIFICIAL_F,
                       body position:8 + name (+ CRC32 when the checksum was negotiated)
    Format_description when a dump starts inside a file (position > 4): the file's own with
                       log_pos 0 and LOG_EVENT_BINLOG_IN_USE_F cleared (its CRC32 recomputed)
    Heartbeat          while waiting at the end: log_pos the position reached, body the file name
    Heartbeat_v2       the same, to a MySQL replica whose dump request has USE_HEARTBEAT_EVENT_V2
                       (type 41; MySQL 8.0.26+ replicas ask for it): body the fields
                       1 file name, 2 position (packed int), 0 end (``codecs.payload``); log_pos
                       the position's low 32 bits

A MariaDB file's Start_encryption is never sent: its events go out decrypted (a replica given it
would try to decrypt them; MariaDB tolerates the hole in positions, as MaxScale's binlog router
relies on too). A GTID start is a position in the archive where no transaction is cut: the first transaction
the replica lacks; transactions it has that come later are left out whole (``Skipper``).
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from ..constants import EventFlag, EventType as T
from ..gtid.mariadb import GtidPos, MariadbGtid
from ..gtid.mysql import MysqlGtidSet
from ..pull.auth import lenenc
from ..pull.protocol import BINLOG_THROUGH_GTID, COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID, ProtocolError

HEADER = struct.Struct("<IBIIIH")
LOG_POS_AT = 13
FLAGS_AT = 17
# events that belong to a file, not to a transaction: they end the skipping of a transaction
FILE_LEVEL = frozenset({T.ROTATE_EVENT, T.FORMAT_DESCRIPTION_EVENT, T.STOP_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT,
                        T.GTID_LIST_EVENT, T.BINLOG_CHECKPOINT_EVENT, T.START_ENCRYPTION_EVENT})
GTID_OPENERS = frozenset({T.GTID_EVENT, T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT})


def event(type_code: int, body: bytes, *, server_id: int, log_pos: int, flags: int, crc: bool,
          timestamp: int = 0) -> bytes:
    size = 19 + len(body) + (4 if crc else 0)
    ev = HEADER.pack(timestamp, type_code, server_id, size, log_pos & 0xFFFFFFFF, flags) + body
    return ev + zlib.crc32(ev).to_bytes(4, "little") if crc else ev


def fake_rotate(name: str, position: int, *, server_id: int, crc: bool) -> bytes:
    return event(T.ROTATE_EVENT, struct.pack("<Q", position) + name.encode(), server_id=server_id, log_pos=0,
                 flags=EventFlag.ARTIFICIAL, crc=crc)


def heartbeat(name: str, position: int, *, server_id: int, crc: bool) -> bytes:
    return event(T.HEARTBEAT_LOG_EVENT, name.encode(), server_id=server_id, log_pos=position, flags=0, crc=crc)


USE_HEARTBEAT_EVENT_V2 = 0x02   # a MySQL dump request's flag (MariaDB's same bit: BINLOG_SEND_ANNOTATE_ROWS_EVENT)


def heartbeat_v2(name: str, position: int, *, server_id: int, crc: bool) -> bytes:
    """MySQL's Heartbeat_log_event_v2 (``Binlog_sender::send_heartbeat_event_v2``)."""
    n, p = name.encode(), lenenc(position)
    body = lenenc(1) + lenenc(len(n)) + n + lenenc(2) + lenenc(len(p)) + p + lenenc(0)
    return event(T.HEARTBEAT_LOG_EVENT_V2, body, server_id=server_id, log_pos=position, flags=0, crc=crc)


def resent_fde(fde: bytes, crc: bool) -> bytes:
    """The file's Format_description re-sent at a start inside the file: log_pos 0, not in use."""
    b = bytearray(fde)
    b[LOG_POS_AT:LOG_POS_AT + 4] = bytes(4)
    flags = int.from_bytes(b[FLAGS_AT:FLAGS_AT + 2], "little") & ~int(EventFlag.BINLOG_IN_USE)
    b[FLAGS_AT:FLAGS_AT + 2] = flags.to_bytes(2, "little")
    if crc:
        b[-4:] = zlib.crc32(b[:-4]).to_bytes(4, "little")
    return bytes(b)


# -- the requests ----------------------------------------------------------------------------------
class Dump(NamedTuple):
    """A dump request: from ``file`` ('' = the archive's first) at ``position``, or after a GTID
    set (MySQL's ``gtids``; MariaDB's comes from ``@slave_connect_state``)."""

    file: str
    position: int
    flags: int
    server_id: int
    gtids: MysqlGtidSet | None = None


def parse_dump(p: bytes) -> Dump:
    """COM_BINLOG_DUMP ``0x12 position:4 flags:2 server_id:4 file`` or COM_BINLOG_DUMP_GTID
    ``0x1e flags:2 server_id:4 len_name:4 name position:8 [len:4 sids]`` (``pull.protocol``)."""
    try:
        if p[0] == COM_BINLOG_DUMP:
            pos, flags, sid = struct.unpack_from("<IHI", p, 1)
            return Dump(p[11:].decode("utf-8"), pos, flags, sid)
        if p[0] == COM_BINLOG_DUMP_GTID:
            flags, sid, n = struct.unpack_from("<HII", p, 1)
            name = p[11:11 + n].decode("utf-8")
            pos, = struct.unpack_from("<Q", p, 11 + n)
            gtids = None
            if flags & BINLOG_THROUGH_GTID or len(p) >= 23 + n:   # a MySQL replica sends the set without the flag
                m, = struct.unpack_from("<I", p, 19 + n)
                data = p[23 + n:23 + n + m]
                if len(data) != m:
                    raise ProtocolError("a COM_BINLOG_DUMP_GTID whose GTID set runs past its packet")
                gtids = MysqlGtidSet.decode(data)
            return Dump(name, pos, flags, sid, gtids)
    except (struct.error, UnicodeDecodeError, IndexError, ValueError) as exc:
        raise ProtocolError(f"a dump request that does not parse ({type(exc).__name__}: {exc})") from None
    raise ProtocolError(f"command {p[:1].hex()} is not a dump request")


# -- GTID starts ----------------------------------------------------------------------------------
class FileGtids(NamedTuple):
    """One archive file's GTIDs: the set before it (MySQL Previous_gtids / MariaDB Gtid_list,
    as text; '' none) and (offset of the GTID event, GTID) of each transaction, in order."""

    name: str
    head: str
    gtids: list[tuple[int, object]]


class Start(NamedTuple):
    """Where a GTID dump starts: the file's index in the archive and the offset (a transaction's
    GTID event, or 4); the transactions the replica has after it are left out (``Skipper``)."""

    file_index: int
    position: int


class StartRefused(Exception):
    """The archive cannot serve this GTID state: the server's 1236 text."""


MARIADB_PURGED = ("Could not find GTID state requested by slave in any binlog files. Probably the slave state is "
                  "too old and required binlog files have been purged.")


def plan_mariadb(state: GtidPos, files: list[FileGtids]) -> Start:
    """MariaDB's GTID start for ``@slave_connect_state`` = ``state``: every domain's position must
    be a GTID of the archive, or the state the archive starts from (its first Gtid_list); a
    domain the archive starts inside without the replica having it is purged. The start is the
    first transaction ``state`` does not cover."""
    if not files:
        raise StartRefused(MARIADB_PURGED)
    first = GtidPos.from_gtid_list(x for x in files[0].head.split(",") if x) if files[0].head else GtidPos()
    seen: dict[tuple[int, int, int], bool] = {}
    highest: dict[int, int] = {}
    for f in files:
        for _off, g in f.gtids:
            assert isinstance(g, MariadbGtid)
            seen[(g.domain_id, g.server_id, g.seq_no)] = True
            highest[g.domain_id] = max(highest.get(g.domain_id, 0), g.seq_no)
    for g in state:
        if (g.domain_id, g.server_id, g.seq_no) in seen or first.get(g.domain_id) == g:
            continue
        base = first.get(g.domain_id)
        if base is not None and base.seq_no > g.seq_no:
            raise StartRefused(MARIADB_PURGED)
        if highest.get(g.domain_id, -1) > g.seq_no:
            raise StartRefused(f"Connecting slave requested to start from GTID {g}, which is not in the master's binlog. "
                               "Since the master's binlog contains GTIDs with higher sequence numbers, it probably "
                               "means that the slave has diverged due to executing extra erroneous transactions")
        raise StartRefused(f"Connecting slave requested to start from GTID {g}, which is not in the master's binlog")
    for base in first:
        if state.get(base.domain_id) is None and base.seq_no > 0:
            raise StartRefused(MARIADB_PURGED)
    for i, f in enumerate(files):
        for off, g in f.gtids:
            if not state.covers(g):  # type: ignore[arg-type]
                return Start(i, off)
    return Start(len(files) - 1, 4)


def mariadb_covered(state: GtidPos):
    return lambda g: isinstance(g, MariadbGtid) and state.covers(g)


def plan_mysql(have: MysqlGtidSet, files: list[FileGtids]) -> Start:
    """MySQL's auto-positioning for a replica holding ``have``: what the archive purged (its first
    Previous_gtids) must be in ``have``; ``have`` must hold nothing of an archive's server (uuid)
    that the archive lacks; the start is the top of the file holding the first transaction not in
    ``have`` (those of the file it holds are left out by the ``Skipper``)."""
    if not files:
        raise StartRefused("Could not find first log file name in binary log index file")
    purged = MysqlGtidSet.parse(files[0].head)
    missing = purged - have
    if missing:
        raise StartRefused("Cannot replicate because the source purged required binary logs. Replicate the missing "
                           "transactions from elsewhere, or provision a new replica from backup. Consider increasing "
                           "the source's binary log expiration period. The GTID set sent by the replica is "
                           f"'{have}', and the missing transactions are '{missing}'.")
    from ..gtid.mysql import MysqlGtid

    every = purged | MysqlGtidSet.of(g for f in files for _o, g in f.gtids if isinstance(g, MysqlGtid))
    servers = {k for k in every._m}
    extra = MysqlGtidSet({k: v for k, v in (have - every)._m.items() if k in servers})
    if extra:
        raise StartRefused("Replica has more GTIDs than the source has, using the source's SERVER_UUID. This may "
                           "indicate that the end of the binary log was truncated or that the last binary log file "
                           "was lost, e.g., after a power or disk failure when sync_binlog != 1. The source may or "
                           "may not have rolled back transactions that were already replicated to the replica. "
                           "Suggest to replicate any transactions that source has rolled back from replica to source, "
                           "and/or commit empty transactions on source to account for transactions that have been "
                           f"committed on source but are not included in GTID_EXECUTED. (extra: '{extra}')")
    for i, f in enumerate(files):   # from the top of that file, as the source does (find_first_log): a MySQL
        for _off, g in f.gtids:      # replica given a start inside a file with a GTID set aborts (bad_alloc)
            if not (isinstance(g, MysqlGtid) and g in have):
                return Start(i, 4)
    return Start(len(files) - 1, 4)


class Skipper:
    """Leaves out the transactions ``covered`` says the replica has: from such a transaction's
    GTID event up to the next GTID event or file-level event. ``keep(type_code, gtid)`` per
    event (``gtid`` only for GTID events)."""

    def __init__(self, covered) -> None:
        self.covered = covered
        self.skipping = False

    def keep(self, type_code: int, gtid: object | None) -> bool:
        if type_code in GTID_OPENERS:
            self.skipping = gtid is not None and bool(self.covered(gtid))
        elif type_code in FILE_LEVEL:
            self.skipping = False
        return not self.skipping


__all__ = ["event", "fake_rotate", "heartbeat", "heartbeat_v2", "USE_HEARTBEAT_EVENT_V2", "resent_fde", "Dump",
           "parse_dump", "FileGtids", "Start", "StartRefused", "plan_mariadb", "plan_mysql", "mariadb_covered",
           "Skipper"]

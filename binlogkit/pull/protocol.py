"""The replication protocol, pure: packets a replica sends, and the framing of the dump stream.

Layouts (MariaDB ``sql/sql_repl.cc``, ``sql/semisync_slave.cc``; mysql-server
``sql/rpl_source.cc``, ``sql/rpl_replica.cc``; integers little-endian)::

    packet              len_payload:3  sequence:1  payload            (payload < 0xffffff; a payload
                                                                    of exactly 0xffffff continues
                                                                    in the next packet)
    COM_REGISTER_SLAVE  0x15 server_id:4 len_host:1 host len_user:1 user len_password:1 password
                        port:2 rpl_recovery_rank:4 master_id:4
    COM_BINLOG_DUMP     0x12 position:4 flags:2 server_id:4 file_name (to the end)
    COM_BINLOG_DUMP_GTID (MySQL)
                        0x1e flags:2 server_id:4 len_name:4 name position:8
                        [flags & BINLOG_THROUGH_GTID: len_sids:4 encoded GTID set]
    dump message        0x00 [semisync: 0xef flag:1] event          (an event, header first)
                        0xfe ... (< 9 bytes)                         end of a non-blocking dump
                        0xff code:2 '#' sqlstate:5 message           error (e.g. 1236)
    semisync ack        0xef position:8 file_name                    (its own command: sequence 0)

``position`` in the ack is the end of the event the primary flagged (its end_log_pos); the
primary releases every commit waiting at or before it.

Artificial events the primary makes up for the stream and that are never in its files: the
Rotate at the start of every file it switches to (``log_pos`` 0 or LOG_EVENT_ARTIFICIAL_F), the
Format_description re-sent when a dump starts inside a file (``log_pos`` 0) and, from a MariaDB
primary whose binlogs are encrypted, the file's Start_encryption re-sent after it (``log_pos`` 0;
the one at the top of the file, with its real ``log_pos``, is written: the copy keeps the file's
offsets, its events in clear after it), MariaDB's Gtid_list when a GTID dump starts, and
heartbeats (types 27 and 41).
"""

from __future__ import annotations

import re
import struct
import zlib
from typing import Callable, NamedTuple

from ..constants import HEARTBEAT_TYPES as HEARTBEATS, EventFlag, EventType as T
from ..errors import BinlogError
from ..flavor import Flavor

COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15
COM_BINLOG_DUMP_GTID = 0x1E

BINLOG_DUMP_NON_BLOCK = 0x01
BINLOG_SEND_ANNOTATE_ROWS_EVENT = 0x02     # MariaDB: without it Annotate_rows are left out
BINLOG_THROUGH_GTID = 0x04                 # MySQL COM_BINLOG_DUMP_GTID

SEMISYNC_MAGIC = 0xEF
SEMISYNC_NEED_ACK = 0x01
MARIA_SLAVE_CAPABILITY_MINE = 4            # GTID events, Binlog_checkpoint, holes tolerated

MAX_PAYLOAD = 0xFFFFFF
LEN_PACKET_HEADER = 4

ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
ER_ACCESS_DENIED = 1045

_HEADER = struct.Struct("<IBIIIH")   # timestamp type_code server_id event_size log_pos flags


class PullError(BinlogError):
    """``pull`` cannot go on: the primary refused, or the folder does not match it. ``code`` is
    the server's error number when it sent one."""

    def __init__(self, message: str, *, code: int | None = None, **ctx):
        super().__init__(message, **ctx)
        self.code = code


class ProtocolError(PullError):
    """The byte stream does not follow the replication protocol (a broken connection or peer)."""


class HostileServer(PullError):
    """The server sent what no primary sends and what a copy must never act on: a file name
    that is not a plain base name, a packet or event past ``--max-event-size``, a request for a
    LOCAL INFILE, a reply that does not parse. Never retried (a reconnect would get the same):
    the run stops, exit 2."""


class Stopped(PullError):
    """A signal (``stop()``) arrived while waiting for the server: not an error, the run ends."""


MAX_NAME = 255                  # NAME_MAX: a binlog base name the folder can hold
DEFAULT_MAX_EVENT = 1 << 30     # max_allowed_packet's largest value: what a server can send
MIN_MAX_EVENT = 1 << 24         # an event under 16 MiB comes in one packet: a lower limit means nothing
_NAME = re.compile(r"[^/\x00-\x1f\x7f]+\.\d{6,}")


def check_name(raw: bytes | str, what: str = "a Rotate") -> str:
    """A binlog file name from the wire (or the command line), as text, when it is a plain
    base name ``BASE.NNNNNN`` that can only land inside the output folder: no ``/``, no NUL nor
    control character, not hidden (``.``), valid UTF-8, at most 255 bytes. Else HostileServer."""
    b = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else bytes(raw)
    shown = b[:80].decode("utf-8", "backslashreplace")   # printed with repr: NUL and controls escaped
    if not b or len(b) > MAX_NAME:
        raise HostileServer(f"{what} names a file of {len(b)} bytes ({shown!r}): refused, a binlog name has "
                            f"1 to {MAX_NAME}")
    try:
        name = b.decode("utf-8")
    except UnicodeDecodeError:
        raise HostileServer(f"{what} names a file that is not UTF-8 ({shown!r}): refused") from None
    if b"\x00" in b:
        raise HostileServer(f"{what} names a file with a NUL byte ({shown!r}): refused")
    if "/" in name or name.startswith(".") or not _NAME.fullmatch(name):
        raise HostileServer(f"{what} names {shown!r}, not a plain binlog file name (BASE.NNNNNN, no '/', "
                            "not hidden, no control character): refused, a copy writes only inside --dir")
    return name


# -- what a replica sends -------------------------------------------------------------------------
def packet(payload: bytes, seq: int = 0) -> bytes:
    """One command as protocol packets (split at 16 MiB - 1, with an empty packet after an exact
    multiple, as the protocol requires)."""
    out = bytearray()
    view = memoryview(payload)
    while True:
        part = view[:MAX_PAYLOAD]
        out += len(part).to_bytes(3, "little") + bytes([seq & 0xFF]) + part
        seq += 1
        view = view[MAX_PAYLOAD:]
        if len(part) < MAX_PAYLOAD:
            return bytes(out)


def _short(text: bytes, what: str) -> bytes:
    if len(text) > 255:
        raise PullError(f"{what} longer than 255 bytes")
    return bytes([len(text)]) + text


def register_slave(server_id: int, *, host: str = "", user: str = "", password: str = "", port: int = 0) -> bytes:
    return (bytes([COM_REGISTER_SLAVE]) + struct.pack("<I", server_id) + _short(host.encode(), "host")
            + _short(user.encode(), "user") + _short(password.encode(), "password")
            + struct.pack("<HII", port, 0, 0))


def binlog_dump(server_id: int, file: str, position: int, *, flags: int = 0) -> bytes:
    if not 0 <= position <= 0xFFFFFFFF:
        raise PullError(f"COM_BINLOG_DUMP takes a 32-bit position, not {position}")
    return bytes([COM_BINLOG_DUMP]) + struct.pack("<IHI", position, flags, server_id) + file.encode()


def binlog_dump_gtid(server_id: int, file: str, position: int, *, flags: int = 0, sids: bytes | None = None) -> bytes:
    """MySQL's COM_BINLOG_DUMP_GTID; ``sids`` is the GTID set in its binary encoding."""
    name = file.encode()
    out = bytes([COM_BINLOG_DUMP_GTID]) + struct.pack("<HII", flags | (BINLOG_THROUGH_GTID if sids is not None else 0),
                                                      server_id, len(name)) + name + struct.pack("<Q", position)
    if sids is not None:
        out += struct.pack("<I", len(sids)) + sids
    return out


def semisync_ack(file: str, position: int) -> bytes:
    return bytes([SEMISYNC_MAGIC]) + struct.pack("<Q", position) + file.encode()


def native_password_scramble(password: str, salt: bytes) -> bytes:
    """mysql_native_password: SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))) (for tests of our framing)."""
    if not password:
        return b""
    import hashlib

    h1 = hashlib.sha1(password.encode()).digest()
    h2 = hashlib.sha1(h1).digest()
    h3 = hashlib.sha1(salt[:20] + h2).digest()
    return bytes(a ^ b for a, b in zip(h1, h3))


def mariadb_gtid_start_sql(position: str) -> list[str]:
    """Statements that make a MariaDB dump start after GTID position ``position`` (``file`` ''
    and position 4 in the dump command then)."""
    from ..gtid import GtidPos

    try:
        text = str(GtidPos.parse(position)) if position.strip() else ""
    except BinlogError as exc:
        raise PullError(f"--gtid {position!r} is not a MariaDB GTID position (domain-server-seq,...): {exc}") from None
    return [f"SET @slave_connect_state = '{text}'", "SET @slave_gtid_strict_mode = 1",
            "SET @slave_gtid_ignore_duplicates = 0"]


def mysql_gtid_dump(server_id: int, gtid_set: str, flags: int) -> bytes:
    """MySQL's GTID auto-positioning: COM_BINLOG_DUMP_GTID from file '' and position 4 with the
    set the replica already holds; the source starts with the oldest binlog whose
    Previous_gtids is inside the set and leaves out every transaction in it (``sql/rpl_source.cc``
    ``com_binlog_dump_gtid``, ``find_first_log``). The set is sent in the Previous_gtids encoding,
    the tagged layout when it holds a tagged GTID (MySQL 8.4+ reads both)."""
    from ..gtid.mysql import MysqlGtidSet

    try:
        sids = MysqlGtidSet.parse(gtid_set).encode()
    except BinlogError as exc:
        raise PullError(f"--gtid {gtid_set!r} is not a MySQL GTID set (uuid[:tag]:1-100,...): {exc}") from None
    return binlog_dump_gtid(server_id, "", 4, flags=flags, sids=sids)


# -- what the flavors want to hear before a dump ---------------------------------------------------
class FlavorProtocol(NamedTuple):
    """Session settings a replica of this flavor announces before dumping. Declared once."""

    flavor: Flavor
    checksum_vars: tuple[str, ...]
    heartbeat_vars: tuple[str, ...]
    semisync_vars: tuple[str, ...]
    extra: tuple[str, ...]
    dump_flags: int
    # a GTID start: statements before a plain COM_BINLOG_DUMP (MariaDB), or a dump command of
    # its own (MySQL: server_id, GTID set, flags -> payload); exactly one of them per flavor
    gtid_start_sql: Callable[[str], list[str]] | None = None
    gtid_dump: Callable[[int, str, int], bytes] | None = None

    def session_sql(self, *, heartbeat_s: float, semisync: bool) -> list[str]:
        sql = [f"SET {v} = @@global.binlog_checksum" for v in self.checksum_vars]
        sql += [f"SET {v} = {int(heartbeat_s * 1e9)}" for v in self.heartbeat_vars]
        if semisync:
            sql += [f"SET {v} = 1" for v in self.semisync_vars]
        return sql + list(self.extra)


PROTOCOLS = {
    Flavor.MARIADB: FlavorProtocol(
        Flavor.MARIADB,
        checksum_vars=("@master_binlog_checksum",),
        heartbeat_vars=("@master_heartbeat_period",),
        semisync_vars=("@rpl_semi_sync_slave",),
        extra=(f"SET @mariadb_slave_capability = {MARIA_SLAVE_CAPABILITY_MINE}",),
        dump_flags=BINLOG_SEND_ANNOTATE_ROWS_EVENT,
        gtid_start_sql=mariadb_gtid_start_sql),
    Flavor.MYSQL: FlavorProtocol(
        Flavor.MYSQL,
        checksum_vars=("@master_binlog_checksum", "@source_binlog_checksum"),
        heartbeat_vars=("@master_heartbeat_period", "@source_heartbeat_period"),
        semisync_vars=("@rpl_semi_sync_slave", "@rpl_semi_sync_replica"),
        extra=(),
        dump_flags=0,
        gtid_dump=mysql_gtid_dump),
}


# -- replies to a query before the dump (text protocol) -------------------------------------------
_INT_TYPES = frozenset({1, 2, 3, 8, 9, 13})   # TINY SHORT LONG LONGLONG INT24 YEAR: given as int


def read_lenenc(b: bytes, at: int) -> tuple[int | None, int]:
    """(value, next offset) of a length-encoded integer at ``at``; None for 0xfb (NULL)."""
    first = b[at]
    if first < 0xFB:
        return first, at + 1
    if first == 0xFB:
        return None, at + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if width is None or at + 1 + width > len(b):
        raise ProtocolError(f"a length-encoded integer starting {first:#04x} that does not parse")
    return int.from_bytes(b[at + 1:at + 1 + width], "little"), at + 1 + width


def column_type(definition: bytes) -> int:
    """The type byte of a ColumnDefinition41 (six length-encoded strings, then 0x0c charset:2
    length:4 type:1 ...)."""
    at = 0
    for _ in range(6):
        n, at = read_lenenc(definition, at)
        at += n or 0
    if at + 8 > len(definition):
        raise ProtocolError("a column definition too short for its type")
    return definition[at + 7]


def text_row(payload: bytes, types: list[int]) -> tuple:
    """One row of a text result set: a length-encoded string per column (0xfb: NULL), integer
    columns as int, the others as str."""
    out: list = []
    at = 0
    for t in types:
        if at >= len(payload):
            raise ProtocolError("a row shorter than its columns")
        n, at = read_lenenc(payload, at)
        if n is None:
            out.append(None)
            continue
        raw = payload[at:at + n]
        if len(raw) != n:
            raise ProtocolError("a row value that runs past its packet")
        at += n
        out.append(int(raw) if t in _INT_TYPES else raw.decode("utf-8", "replace"))
    if at != len(payload):
        raise ProtocolError("a row longer than its columns")
    return tuple(out)


def is_eof(payload: bytes) -> bool:
    return payload[:1] == b"\xfe" and len(payload) < 9


# -- the dump stream ---------------------------------------------------------------------------
class Message(NamedTuple):
    """One dump message: an event (``kind`` "event"), the end of a non-blocking dump ("eof"),
    an OK ("ok", after COM_REGISTER_SLAVE) or an error ("error"). An event of 16 MiB - 1 bytes
    or more comes as "part" messages, one per packet (the first starts with the event header,
    ``more`` is False on the last): never joined here, so that it can go to disk as it arrives.
    A tuple: one is made per event."""

    kind: str
    data: bytes = b""
    need_ack: bool = False
    code: int | None = None
    text: str = ""
    more: bool = False      # "part": another part of the same event follows


def parse_error(payload: bytes) -> tuple[int, str]:
    """(code, message) of an ERR packet payload (0xff code:2 ['#' sqlstate:5] message)."""
    if len(payload) < 3:
        return 0, "malformed error packet"
    code = int.from_bytes(payload[1:3], "little")
    rest = payload[3:]
    if rest[:1] == b"#":
        rest = rest[6:]
    return code, rest.decode("utf-8", "replace")


READ_ROOM = 4 << 20      # the framer's buffer: what one read may fill
MIN_ROOM = 1 << 20       # ... and at least this much free before a read


class Framer:
    """Cuts dump messages out of bytes as they arrive. ``feed`` takes any chunk, ``fill`` reads
    straight into the buffer (``recv_into``: no new object per read); ``messages`` yields every
    message complete so far. A payload of 16 MiB - 1 and the packets that continue it come out
    as "part" messages (held by nobody here: memory stays one packet whatever the chain), the
    whole chain at most ``max_packet`` bytes; sequence numbers are checked.

    The bytes are ``_mem[pos:end]`` of a buffer reused from read to read (what was consumed is
    dropped by moving the rest to the front). ``lent``: a view of ``_mem`` before ``pos`` is
    queued for writing (the events ``_pullscan.run`` left in place): until its owner clears
    it, nothing before ``pos`` is overwritten (a new buffer is taken instead)."""

    def __init__(self, *, semisync: bool = False, seq: int = 1, max_packet: int = DEFAULT_MAX_EVENT + 3,
                 room: int = READ_ROOM) -> None:
        self.semisync = semisync
        self._mem = bytearray(room)   # (a short dump asks for less: 4 MiB zeroed are ~1,000 page faults)
        self.end = 0
        self.lent = False
        self.pos = 0
        self.seq = seq
        self.max_packet = max_packet
        self._chain: int | None = None   # bytes of the continued payload so far (None: not in one)
        self.bytes_in = 0
        self.reset_allowed = False

    def expect_sequence(self, seq: int) -> None:
        self.seq = seq

    def ack_sent(self) -> None:
        """A semisync acknowledgement (sequence 0) went out. The primary reads it on the dump
        connection's own NET, which resets its packet counter: from some packet after this one
        (as soon as its ack thread has read the reply) the dump stream's sequence restarts at 1.
        A primary may also restart it right after the flagged event, before the ack is sent
        (MySQL's source does: ``readSlaveReply``; ``serve`` too): a flagged event allows it as well."""
        self.reset_allowed = True

    @property
    def buf(self) -> memoryview:
        """The bytes held (a view: the tests' measure of what is held)."""
        return memoryview(self._mem)[:self.end]

    def _room(self, want: int) -> None:
        """At least ``want`` bytes free after ``end``: the unread rest moved to the front of the
        buffer (or into a larger one, for a packet longer than it; or a new one while ``lent``)."""
        mem, pos, end = self._mem, self.pos, self.end
        if len(mem) - end >= want:
            return
        keep = end - pos
        need = keep + want
        if need <= len(mem) and not self.lent:
            mem[:keep] = mem[pos:end]    # same length: a memmove, the buffer stays
        else:
            new = bytearray(max(need, min(2 * len(mem), need + READ_ROOM)) if need > len(mem) else len(mem))
            new[:keep] = mem[pos:end]
            self._mem = new
            self.lent = False            # the lent views keep the old buffer alive
        self.pos, self.end = 0, keep

    def feed(self, chunk) -> None:
        n = len(chunk)
        self._room(n)
        self._mem[self.end:self.end + n] = chunk
        self.end += n
        self.bytes_in += n

    def fill(self, recv_into, *, more: bool = False) -> int:
        """One ``recv_into`` (a socket's) into the free space of the buffer, made at least
        ``MIN_ROOM`` (and the whole of a packet whose header has arrived); its count, 0 at EOF.
        ``more``: a further read of the same turn, into the space left only (-1: under 16 KiB left)."""
        if more:
            if len(self._mem) - self.end < 1 << 14:
                return -1
            with memoryview(self._mem) as mv:
                n = recv_into(mv[self.end:])
            self.end += n
            self.bytes_in += n
            return n
        pos, end = self.pos, self.end
        if pos == end and not self.lent:
            self.pos = self.end = pos = end = 0
        want = min(MIN_ROOM, len(self._mem) // 2)
        if end - pos >= LEN_PACKET_HEADER:
            mem = self._mem
            want = max(want, LEN_PACKET_HEADER + (mem[pos] | mem[pos + 1] << 8 | mem[pos + 2] << 16) - (end - pos))
        self._room(want)
        with memoryview(self._mem) as mv:
            n = recv_into(mv[self.end:])
        self.end += n
        self.bytes_in += n
        return n

    def messages(self):
        buf, pos = self._mem, self.pos
        end = self.end
        semisync = self.semisync
        mv = memoryview(buf)   # released before the next feed (finally): bytes(mv[a:b]) is one copy
        try:
            while end - pos >= LEN_PACKET_HEADER:
                n = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
                if end - pos < LEN_PACKET_HEADER + n:
                    break
                seq = buf[pos + 3]
                if seq != self.seq:
                    if not (self.reset_allowed and seq == 1):
                        raise ProtocolError(f"packet out of sequence: {seq}, expected {self.seq}")
                    self.reset_allowed = False
                self.seq = (seq + 1) & 0xFF
                start = pos + LEN_PACKET_HEADER
                pos = start + n
                if n == MAX_PAYLOAD or self._chain is not None:
                    self.pos = pos
                    yield self._part(mv[start:pos], n == MAX_PAYLOAD)
                    continue
                self.pos = pos
                # the common case, one packet: the event cut out of the buffer with one copy
                if n >= 20 and buf[start] == 0 and not (semisync and buf[start + 1] != SEMISYNC_MAGIC):
                    if semisync:
                        need_ack = bool(buf[start + 2] & SEMISYNC_NEED_ACK)
                        if need_ack:   # the next packet may be sequence 1 (ack_sent)
                            self.reset_allowed = True
                        yield Message("event", bytes(mv[start + 3:pos]), need_ack)
                    else:
                        yield Message("event", bytes(mv[start + 1:pos]))
                    continue
                yield self._message(bytes(mv[start:pos]))
        finally:
            self.pos = pos
            mv.release()

    def next_message(self) -> Message | None:
        """The next complete message, or None until more bytes are fed."""
        pos, left, mem = self.pos, self.end - self.pos, self._mem
        if left < LEN_PACKET_HEADER or left < LEN_PACKET_HEADER + (mem[pos] | mem[pos + 1] << 8 | mem[pos + 2] << 16):
            return None   # no whole packet (the common case after the C loop): no generator made for it
        gen = self.messages()
        try:
            return next(gen, None)
        finally:
            gen.close()

    def _part(self, payload: memoryview, more: bool) -> Message:
        """One packet of a continued payload: the first must be an event (an error or OK is never
        16 MiB), the chain at most ``max_packet`` bytes."""
        n = len(payload)
        need_ack = False
        if self._chain is None:
            if payload[0] != 0x00:
                raise HostileServer(f"a {payload[0]:#04x} packet of 16 MiB or more in the dump stream (only an "
                                    "event is ever that long)")
            skip = 1
            if self.semisync:
                if payload[1] != SEMISYNC_MAGIC:
                    raise ProtocolError(f"semisync header missing: {payload[1]:#04x} where 0xef is expected")
                need_ack, skip = bool(payload[2] & SEMISYNC_NEED_ACK), 3
                self.reset_allowed = self.reset_allowed or need_ack
            self._chain = 0
            payload = payload[skip:]
        self._chain += n
        if self._chain > self.max_packet:
            raise HostileServer(f"a packet of more than {self.max_packet} bytes (continued packets of 16 MiB - 1 "
                                "with no end): refused, see --max-event-size")
        if not more:
            self._chain = None
        return Message("part", bytes(payload), need_ack, more=more)

    def _message(self, payload: bytes) -> Message:
        if not payload:
            raise ProtocolError("empty packet in the dump stream")
        first = payload[0]
        if first == 0xFF:
            code, text = parse_error(payload)
            return Message("error", code=code, text=text)
        if first == 0xFE and len(payload) < 9:
            return Message("eof")
        if first != 0x00:
            raise ProtocolError(f"unexpected packet type {first:#04x} in the dump stream")
        if len(payload) < 1 + 19:  # OK of COM_REGISTER_SLAVE: too short to be an event
            return Message("ok", payload)
        if self.semisync:
            if payload[1] != SEMISYNC_MAGIC:
                raise ProtocolError(f"semisync header missing: {payload[1]:#04x} where 0xef is expected")
            need_ack = bool(payload[2] & SEMISYNC_NEED_ACK)
            self.reset_allowed = self.reset_allowed or need_ack
            return Message("event", payload[3:], need_ack=need_ack)
        return Message("event", payload[1:])


class Joiner:
    """Joins "part" messages back into one "event" message (the Python API's events are bytes;
    ``pull`` itself streams parts to disk). Holds one event at most, ``Framer.max_packet``."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._ack = False

    def take(self, msg: Message) -> Message | None:
        if msg.kind != "part":
            return msg
        if not self._parts:
            self._ack = msg.need_ack
        self._parts.append(msg.data)
        if msg.more:
            return None
        data, self._parts = b"".join(self._parts), []
        return Message("event", data, self._ack)


# -- events ---------------------------------------------------------------------------------------
def header(event: bytes) -> tuple[int, int, int, int, int, int]:
    """(timestamp, type_code, server_id, event_size, log_pos, flags) of an event's common header."""
    if len(event) < 19:
        raise ProtocolError(f"an event of {len(event)} bytes, shorter than its 19-byte header")
    return _HEADER.unpack_from(event)


def is_artificial(type_code: int, log_pos: int, flags: int) -> bool:
    """Whether the primary made this event up for the stream (never written into a file): a
    heartbeat, an event flagged ``LOG_EVENT_ARTIFICIAL_F`` (the fake Rotate, MariaDB's fake
    Gtid_list), or a Format_description, Rotate or Start_encryption with ``log_pos`` 0 (the
    Format_description re-sent when a dump starts inside a file, and after it, from a MariaDB
    ``encrypt_binlog`` primary, the file's Start_encryption). Any other event with ``log_pos`` 0 is real:
    MariaDB 11.8 (``binlog_legacy_event_pos=OFF``, the default) writes ``end_log_pos`` 0 in the
    events inside a transaction, between its GTID event and its commit event."""
    return type_code in HEARTBEATS or bool(flags & EventFlag.ARTIFICIAL) or (log_pos == 0 and type_code in (4, 15, 164))


def rotate_target(event: bytes) -> tuple[str, int]:
    """(file name, position) a Rotate names; its body: position:8 then the name, and a CRC32
    when its last 4 bytes are the CRC32 of the rest (the first fake Rotate comes before any
    Format_description says whether checksums are on). The name must be a plain base name
    (``check_name``): HostileServer else."""
    body = event[19:]
    if len(body) > 12 and zlib.crc32(event[:-4]) == int.from_bytes(event[-4:], "little"):
        body = body[:-4]
    if len(body) < 8:
        raise ProtocolError("a Rotate event too short for its position")
    return check_name(body[8:]), int.from_bytes(body[:8], "little")

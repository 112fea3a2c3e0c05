"""The receiver loop: dump messages in, the primary's files out, fsync, acknowledge.

Rules, per event of the stream:

* artificial events (fake Rotate, the Format_description re-sent at a dump that starts inside a
  file, fake Gtid_list, heartbeats) are never written; a fake Rotate naming another file closes
  the current one (in-use flag cleared, fsync) and starts the named one;
* every written event must end where its header says (``log_pos`` = bytes in the file after it,
  modulo 2^32) and pass its CRC32: a copy that does not line up with the primary stops;
* the Format_description at the top of a file is written with LOG_EVENT_BINLOG_IN_USE_F set
  (the primary's active file carries it); the flag is cleared when the primary moves on;
* fsync: ``trx`` — every read that brought a transaction's last event is synced before the next
  read; ``N`` — after N events; ``off`` — at rotation and exit only; ``none`` — never (the
  binlogs are left to the page cache, as ``mariadb-binlog --raw`` leaves them; ``settings``
  refuses it with ``--semisync``). A semisync acknowledgement is always sent after the fsync of
  the file that holds the acknowledged event, never before, whatever ``sync`` says.
"""

from __future__ import annotations

import struct
import time
import zlib
from typing import Callable, Protocol

from .._optional import load_c
from ..constants import HEARTBEAT_TYPES, OFS_FLAGS, QUERY_TYPES, EventFlag, EventType as T
from ..errors import ChecksumError
from ..flavor import fde_is_checksum_aware
from ..reading.crc import CRC32, event_crc
from ..boundary import DECIDING, OPEN, STANDALONE, ends, step
from .conn import Connection, ConnectionLost
from .protocol import (DEFAULT_MAX_EVENT, ER_MASTER_FATAL_ERROR_READING_BINLOG, HostileServer, ProtocolError,
                       PullError, header, rotate_target)
from .store import Store

# plain ints for the per-event path (an IntEnum operation costs a Python call)
_BOUNDARY_CODES = frozenset(int(c) for c in DECIDING)
_HEARTBEAT_CODES = frozenset(int(c) for c in HEARTBEAT_TYPES)
_ARTIFICIAL = int(EventFlag.ARTIFICIAL)
_FDE, _ROTATE = int(T.FORMAT_DESCRIPTION_EVENT), int(T.ROTATE_EVENT)
_START_ENC = int(T.START_ENCRYPTION_EVENT)
_HEADER = struct.Struct("<IBIIIH")


class _CScan(Protocol):
    """What is used of the C module (``_pullscan.pyi``): tests swap in None."""

    def bind_crc(self, path: str, probe: bytes, expect: int, /) -> bool: ...

    def run(self, buf: bytearray, pos: int, end: int, seq: int, semisync: bool, crc_on: bool, at: int, state: int,
            query_phl: int, crc: Callable[[memoryview], int] | None, /
            ) -> tuple[int, int, int, int, int, int, int, int]: ...


_pullscan: _CScan | None = load_c("_pullscan", "BINLOGKIT_NO_PULLSCAN")


def _bind_crc(scan: _CScan | None) -> Callable[[memoryview], int] | None:
    """The ``crc`` the C loop is given: None when it calls ISA-L's CRC32 itself (``bind_crc``
    found it in the ``isal_zlib`` that ``reading.crc`` loaded, and it gives zlib's answer on a
    probe), else ``CRC32``, called once per event."""
    import sys

    path = getattr(sys.modules.get("isal.isal_zlib"), "__file__", None)
    if scan is None or CRC32 is zlib.crc32 or not path:
        return CRC32
    probe = bytes(range(256)) * 5 + b"binlogkit"
    return None if scan.bind_crc(path, probe, zlib.crc32(probe)) else CRC32


_SCAN_CRCS: dict[int, Callable[[memoryview], int] | None] = {}   # id(module) -> its crc (tests swap modules)


def _scan_crc(scan: _CScan) -> Callable[[memoryview], int] | None:
    key = id(scan)
    if key not in _SCAN_CRCS:
        _SCAN_CRCS[key] = _bind_crc(scan)
    return _SCAN_CRCS[key]


_OFS_QUERY_PHL = 19 + 2 + 50 + 4 + 1 + T.QUERY_EVENT - 1   # the Query post-header length in an FDE


def _query_phl(fde: bytes) -> int:
    """The Query event's post-header length a Format_description announces (its table must
    reach that far: a shorter one is no Format_description a server writes)."""
    if len(fde) <= _OFS_QUERY_PHL + 4:
        raise PullError(f"a Format_description of {len(fde)} bytes, too short for its table of post-header "
                        "lengths", event_type="FORMAT_DESCRIPTION_EVENT")
    return fde[_OFS_QUERY_PHL]


class Boundary:
    """Says when an event ends a transaction: ``binlogkit.boundary.step`` over the stream, its
    state kept here (``_pullscan.c`` takes and gives back the same state bits)."""

    def __init__(self) -> None:
        self.state = 0
        self.query_phl = 13

    def ends(self, code: int, event: bytes, len_checksum: int) -> bool:
        if code not in _BOUNDARY_CODES and self.state & (OPEN | STANDALONE) == OPEN:   # rows...: the common case
            return False
        self.state, decision = step(self.state, code, event[19:len(event) - len_checksum], self.query_phl)
        return ends(decision)


class _Big:
    """An event of 16 MiB or more arriving in parts, written (or compared) as they come."""

    def __init__(self, at: int, size: int, code: int, ts: int, need_ack: bool, head: bytes, verify: bool) -> None:
        self.at = at                # its offset in the file
        self.size = size            # event_size
        self.code = code
        self.ts = ts
        self.need_ack = need_ack
        self.head = head            # the first part (what Boundary reads of a big Query)
        self.verify = verify        # compared with the copy (a file read again), not written
        self.got = 0
        self.crc = 0
        self.tail = b""             # the last 4 bytes so far: the CRC32 when the event is whole


class Stats:
    """The receiver's counts. (Plain classes here and in ``store``, ``auth``, ``protocol``: no
    ``dataclasses`` on ``pull``'s start-up path, whose import and class making cost ~10 ms.)"""

    def __init__(self) -> None:
        self.bytes = 0
        self.events = 0
        self.transactions = 0
        self.fsyncs = 0
        self.acks = 0
        self.reconnects = 0
        self.last_event_ts = 0
        self.caught_up = False
        self.started = time.monotonic()


class Receiver:
    """Writes one dump stream into the store. ``sync``: "trx", "off", "none" or a number of events."""

    def __init__(self, store: Store, conn: Connection, *, sync: str | int = "trx", semisync: bool = False,
                 heartbeat_s: float = 1.0, report: Callable[[dict], None] | None = None,
                 stop: Callable[[], bool] = lambda: False, max_event_size: int = DEFAULT_MAX_EVENT) -> None:
        self.store, self.conn = store, conn
        self.sync_every = None if sync in ("trx", "off", "none") else int(sync)
        self.sync_trx = sync == "trx"
        self.sync_none = sync == "none"
        self.semisync = semisync
        self.heartbeat_s = heartbeat_s
        self.report = report or (lambda d: None)
        self.stop = stop
        self.stats = Stats()
        self.crc_on = False
        self.boundary = Boundary()
        self._out: list = []        # events received, not yet written (joined once per read)
        self._out_len = 0
        self._pending_ack: tuple[str, int] | None = None
        self._dirty_trx = False
        self._unsynced_events = 0
        self._expect_fde_check: bytes | None = None
        self._verify_at: int | None = None
        self.max_event_size = max_event_size
        self._big: _Big | None = None

    def verify_from(self, position: int | None) -> None:
        """The dump restarts the current file at ``position`` (4), before the copy's end: the
        events up to the copy's end are compared with the copy, not written (resume past 4 GiB)."""
        self._verify_at = position

    # -- helpers ------------------------------------------------------------------------------
    def _flush(self) -> None:
        if self._out:
            self.store.write_parts(self._out)
            self._out.clear()
            self._out_len = 0
        f = self.conn.framer
        if f is not None:
            f.lent = False   # the views of its buffer are written and dropped

    def _sync(self) -> None:
        self._flush()
        if not self.sync_none or self._pending_ack is not None:   # an acknowledgement: always durable
            self.store.sync()
            self.stats.fsyncs += 1
        self._dirty_trx = False
        self._unsynced_events = 0
        if self._pending_ack is not None:
            name, pos = self._pending_ack
            self._pending_ack = None
            self.conn.ack(name, pos)
            self.stats.acks += 1

    def _switch(self, name: str, position: int) -> None:
        if self.store.name == name:
            if self._verify_at is not None and position == self._verify_at:
                return
            if position != self.store.size:
                raise PullError(f"the primary resumes {name} at {position}, the copy is at {self.store.size}",
                                file=str(self.store.path / name))
            return
        if self.store.name is not None:
            self._sync()
            self.store.finish_file()
            self.report({"event": "rotate", "file": name})
        if position != 4:
            raise PullError(f"the primary starts {name} at {position}; a copy must start a file at 4",
                            file=str(self.store.path / name))
        self.store.open_file(name, 4)

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> str:
        """Receive until the end of a non-blocking dump ("end") or until ``stop()`` ("stopped")."""
        conn, last_rx = self.conn, time.monotonic()
        dead_after = max(3 * self.heartbeat_s, 5.0)
        next_report = time.monotonic() + 1.0
        try:
            while True:
                got = conn.read(timeout=min(0.5, self.heartbeat_s))
                now = time.monotonic()
                if got is None:
                    if self._dirty_trx or self._pending_ack or self._out:
                        self._sync()
                    if self.stop():
                        return "stopped"
                    if now - last_rx > dead_after:
                        raise ConnectionLost(f"{conn.where}: no event nor heartbeat for {now - last_rx:.0f}s")
                    continue
                last_rx = now
                framer = conn.framer
                while True:
                    if _pullscan is not None:
                        self._fast_run()
                    msg = framer.next_message() if framer is not None else None
                    if msg is None:
                        break
                    if msg.kind == "event":
                        self._event(msg.data, msg.need_ack)
                    elif msg.kind == "part":
                        self._part(msg.data, msg.need_ack, msg.more)
                    elif msg.kind == "eof":
                        self._sync()
                        return "end"
                    elif msg.kind == "error":
                        code = msg.code
                        hint = ""
                        if code == ER_MASTER_FATAL_ERROR_READING_BINLOG:
                            hint = " (error 1236: the binlog asked for is gone or unreadable on the primary)"
                        raise PullError(f"the primary stopped the dump: {msg.text}{hint}", code=code)
                    else:
                        raise ProtocolError(f"unexpected {msg.kind} packet in the dump stream")
                if self._pending_ack is not None or (self.sync_trx and self._dirty_trx) or (
                        self.sync_every is not None and self._unsynced_events >= self.sync_every):
                    self._sync()
                else:
                    self._flush()
                if now >= next_report:
                    next_report = now + 1.0
                    self.report(self.status())
                if self.stop():
                    self._sync()
                    return "stopped"
        finally:
            try:
                self._flush()
                big, self._big = self._big, None
                if big is not None and not big.verify:   # a big event cut short: not in the copy
                    self.store.truncate_to(big.at)
            except OSError:
                pass

    def _fast_run(self) -> None:
        """The C loop over the events that need no decision (``_pullscan.c``): it stops at the
        first packet it does not settle, which ``_event`` then reads (the reference path)."""
        f = self.conn.framer
        if _pullscan is None or f is None or f._chain is not None or self._verify_at is not None \
                or self.store.name is None:
            return
        b = self.boundary
        first, mem = f.pos, f._mem
        pos, seq, _at, taken, n, ended, ts, state = _pullscan.run(
            mem, first, f.end, f.seq, f.semisync, self.crc_on, self.store.size + self._out_len, b.state, b.query_phl,
            _scan_crc(_pullscan))
        if not n:
            return
        f.pos, f.seq = pos, seq
        b.state = state
        self.stats.caught_up = False
        f.lent = True    # written from the framer's buffer by the next _flush, before the next read
        self._took(memoryview(mem)[first:first + taken], n, ended, ts)

    def _took(self, data: bytes | memoryview, events: int, ends: int, ts: int) -> None:
        """``events`` events (``data``, their bytes) queued for the copy, ``ends`` of them the
        last of a transaction: the one bookkeeping of the C loop and of ``_event``."""
        self._out.append(data)
        self._out_len += len(data)
        st = self.stats
        st.bytes += len(data)
        st.events += events
        st.last_event_ts = ts or st.last_event_ts
        self._unsynced_events += events
        if ends:
            st.transactions += ends
            self._dirty_trx = True

    def status(self) -> dict:
        s = self.stats
        lag = 0 if s.caught_up else (max(0, int(time.time()) - s.last_event_ts) if s.last_event_ts else None)
        return {"event": "status", "file": self.store.name, "position": self.store.size + self._out_len,
                "bytes": s.bytes, "events": s.events, "transactions": s.transactions, "fsyncs": s.fsyncs,
                "acks": s.acks, "lag_s": lag, "elapsed_s": round(time.monotonic() - s.started, 3)}

    def _event(self, ev: bytes, need_ack: bool) -> None:
        if len(ev) < 19:
            header(ev)   # raises the typed error
        ts, code, sid, size, log_pos, flags = _HEADER.unpack_from(ev)
        if size != len(ev):
            raise ProtocolError(f"event_size {size} but the packet holds {len(ev)} bytes")
        # protocol.is_artificial: a real event may have log_pos 0 (inside a MariaDB 11.8 transaction)
        # a Start_encryption with log_pos 0: re-sent after the Format_description at a dump that
        # starts inside an encrypted file (MariaDB); the file's own is in the copy already
        if flags & _ARTIFICIAL or code in _HEARTBEAT_CODES or (log_pos == 0 and code in (_FDE, _ROTATE, _START_ENC)):
            if code == _ROTATE:
                name, pos = rotate_target(ev)
                self._switch(name, pos)
            elif code == _FDE:
                self._check_fde(ev)
            elif code in _HEARTBEAT_CODES:
                self.stats.caught_up = True
            if need_ack:
                raise ProtocolError("the primary asks an acknowledgement for an artificial event")
            return
        self.stats.caught_up = False
        if self.store.name is None:
            raise ProtocolError("an event before any Rotate named its file")
        if self._verify_at is not None:
            self._compare(ev, code, size, log_pos, need_ack)
            return
        at = self.store.size + self._out_len
        if code == _FDE:
            if at != 4:
                raise PullError(f"a Format_description at {at}, not at the top of the file",
                                file=self.store.name, offset=at)
            aware = fde_is_checksum_aware(ev)
            self.crc_on = aware and ev[-5] == 1
            if aware and event_crc(ev) != int.from_bytes(ev[-4:], "little"):
                raise ChecksumError("CRC32 mismatch in the Format_description received", file=self.store.name,
                                    offset=at, event_type="FORMAT_DESCRIPTION_EVENT")
            self.boundary.query_phl = _query_phl(ev)
            flagged = bytearray(ev)
            flagged[OFS_FLAGS] |= EventFlag.BINLOG_IN_USE   # as the primary's own active file
            ev = bytes(flagged)
        elif self.crc_on and CRC32(memoryview(ev)[:-4]) != int.from_bytes(ev[-4:], "little"):
            raise ChecksumError("CRC32 mismatch in an event received", file=self.store.name, offset=at,
                                event_type=str(code))
        end = at + size
        if log_pos != end & 0xFFFFFFFF and (log_pos or code == _FDE):   # 0: inside a MariaDB 11.8 transaction
            raise PullError(f"event ends at {end} in the copy but at {log_pos} on the primary: the copy does not "
                            "line up with the primary's file", file=self.store.name, offset=at)
        self._took(ev, 1, int(self.boundary.ends(code, ev, 4 if self.crc_on else 0)), ts)
        if need_ack:
            self._pending_ack = (self.store.name, end)

    def _part(self, data: bytes, need_ack: bool, more: bool) -> None:
        """A part of an event of 16 MiB or more: the first part's header is checked as
        ``_event`` checks a whole event's, then the parts go to the file (or are compared with
        the copy) as they come; the CRC32 and the size are checked at the last. An event cut
        short leaves nothing in the copy (``run`` truncates it back)."""
        big = self._big
        if big is None:
            ts, code, _sid, size, log_pos, flags = header(data)
            if size > self.max_event_size:
                raise HostileServer(f"an event of {size} bytes, more than --max-event-size {self.max_event_size}: "
                                    "refused", file=self.store.name, event_type=str(code))
            if flags & _ARTIFICIAL or code in _HEARTBEAT_CODES or code in (_FDE, _ROTATE):
                raise HostileServer(f"a type {code} event of {size} bytes (artificial, a Format_description or a "
                                    "Rotate): no primary sends one of 16 MiB", file=self.store.name)
            if self.store.name is None:
                raise ProtocolError("an event before any Rotate named its file")
            verify = self._verify_at is not None
            at = self._verify_at if self._verify_at is not None else self.store.size + self._out_len
            end = at + size
            if (log_pos and log_pos != end & 0xFFFFFFFF) or (verify and end > self.store.size):
                raise PullError(f"event ends at {end} in the copy but at {log_pos} on the primary: the copy does not "
                                "line up with the primary's file", file=self.store.name, offset=at)
            self._flush()
            self.stats.caught_up = False
            big = self._big = _Big(at, size, code, ts, need_ack, data[:1 << 16], verify)
        if big.got + len(data) > big.size:
            raise HostileServer(f"the packets of an event of event_size {big.size} run past it",
                                file=self.store.name, offset=big.at)
        if big.verify:
            if self.store.pread(big.at + big.got, len(data)) != data:
                raise PullError(f"{self.store.name} in the folder differs from the primary's at {big.at}: not the "
                                "same file", file=str(self.store.path / str(self.store.name)), offset=big.at)
        else:
            self.store.write(data)
        # the CRC32 of all but the last 4 bytes, which arrive last
        if len(data) >= 4:
            big.crc = zlib.crc32(memoryview(data)[:-4], zlib.crc32(big.tail, big.crc))
            big.tail = data[-4:]
        else:
            joined = big.tail + data
            big.crc = zlib.crc32(joined[:-4], big.crc) if len(joined) > 4 else big.crc
            big.tail = joined[-4:]
        big.got += len(data)
        if more:
            return
        self._big = None
        if big.got != big.size:
            if not big.verify:
                self.store.truncate_to(big.at)
            raise ProtocolError(f"event_size {big.size} but the packets hold {big.got} bytes",
                                file=self.store.name, offset=big.at)
        if self.crc_on and big.crc != int.from_bytes(big.tail, "little"):
            if not big.verify:
                self.store.truncate_to(big.at)
            raise ChecksumError("CRC32 mismatch in an event received", file=self.store.name, offset=big.at,
                                event_type=str(big.code))
        ends = int(self.boundary.ends(big.code, big.head, 0))
        end = big.at + big.size
        if big.verify:
            self._verify_at = None if end == self.store.size else end
        else:
            st = self.stats
            st.bytes += big.size
            st.events += 1
            st.last_event_ts = big.ts or st.last_event_ts
            self._unsynced_events += 1
            if ends:
                st.transactions += 1
                self._dirty_trx = True
        if big.need_ack:
            self._pending_ack = (str(self.store.name), end)

    def _compare(self, ev: bytes, code: int, size: int, log_pos: int, need_ack: bool) -> None:
        """An event the copy already holds (a file read again from its start): it must be the
        same bytes at the same offset (the Format_description's in-use flag aside)."""
        at, name = self._verify_at, self.store.name
        if at is None or name is None:  # _event calls this only while verifying, in a named file
            raise ProtocolError("internal: an event compared with the copy outside a verified file")
        end = at + size
        if (log_pos and log_pos != end & 0xFFFFFFFF) or end > self.store.size:
            raise PullError(f"the primary's event at {at} ends at {log_pos}, not where the copy's events do",
                            file=str(self.store.path / name), offset=at)
        ours: bytes | bytearray = self.store.pread(at, size)
        theirs: bytes | bytearray = ev
        if code == T.FORMAT_DESCRIPTION_EVENT:
            self.crc_on = fde_is_checksum_aware(ev) and ev[-5] == 1
            self.boundary.query_phl = _query_phl(ev)
            ours, theirs = bytearray(ours), bytearray(ev)
            ours[OFS_FLAGS] &= ~EventFlag.BINLOG_IN_USE & 0xFF
            theirs[OFS_FLAGS] &= ~EventFlag.BINLOG_IN_USE & 0xFF
        if bytes(ours) != bytes(theirs):
            raise PullError(f"{name} in the folder differs from the primary's at {at}: not the same file",
                            file=str(self.store.path / name), offset=at)
        self.boundary.ends(code, ev, 4 if self.crc_on else 0)
        self._verify_at = None if end == self.store.size else end
        if need_ack:
            self._pending_ack = (name, end)

    def _check_fde(self, ev: bytes) -> None:
        """The Format_description re-sent for a dump starting inside a file must be the one at the
        top of our copy (same server, version, creation time): else the folder is another server's."""
        name = self.store.name
        ours = self.store.fde_of(name) if name else None
        if ours is None:
            return
        a, b = bytes(ours), bytes(ev)
        # the re-sent copy differs in log_pos (0), flags, ``created`` (zeroed) and so its CRC32
        created = 19 + 2 + 50
        if len(a) != len(b) or a[:13] != b[:13] or a[19:created] != b[19:created] or a[created + 4:-4] != b[created + 4:-4]:
            raise PullError(f"{name} in the folder is not the primary's {name}: their Format_description events "
                            "differ (another server, or a file made again)", file=str(self.store.path / name))
        self.crc_on = fde_is_checksum_aware(b) and b[-5] == 1
        self.boundary.query_phl = _query_phl(b)


__all__ = ["Boundary", "Receiver", "Stats", "ConnectionLost"]

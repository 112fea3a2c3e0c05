"""Writing into binlog sets: append events the way the server writes them.

``BinlogAppender`` is the Python writer API for tooling that writes binlogs or relay logs:
events are built by the codecs (event_size, end_log_pos and CRC32 computed under the file's own
Format_description: its flavor, header length and checksum algorithm), and the file is replaced
atomically (copy, append, fsync, rename, fsync the directory). ``record_incident`` uses it to
mark a gap the way seed 000 asks: an Incident event, then a Rotate to the next file name, so the
log after the gap starts clean in a new file.
"""

from __future__ import annotations

import contextlib
import os
import time
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..constants import EventFlag, EventType as T
from ..errors import DecryptionError, KeyFileError, KeyRequiredError, PartialWrite, WriteRefused
from ..reading.events import build_event
from ..flavor import Flavor
from ..reading.format import Format
from .safeio import Backup, SafeDir, copy_range, refuse_if_in_use, remove_leftovers, write_all
from ..reading.reader import MYSQL_ENCRYPTED_MAGIC
from ..reading.scan import scan
from ..reading.source import CONTAINER_HEADER_SIZES, Input, as_input, binlog_stream

if TYPE_CHECKING:
    from ..crypto.mariadb import EventCipher
    from ..crypto.mysql import StreamCipher

INCIDENT_CODES = {"NONE": 0, "LOST_EVENTS": 1, "NEW_INCIDENT": 2}


@dataclass
class Appended:
    file: str
    offsets: list[int]
    new_size: int                      # the file's size now (bytes on disk; offsets are stream offsets)
    next_file: str | None
    backup: str | None = None          # the folder holding the verified copy of the file before
    already: bool = False              # nothing written: the file already ended so
    cleaned: list[str] = field(default_factory=list)  # leftovers of a killed earlier run, removed first
    gtid: str | None = None            # MySQL: the GTID of the incident's transaction (ANONYMOUS with gtid_mode=OFF)


def _last_file(binlog_dir: Path, index: str | None) -> tuple[Path, Path]:
    idx = Path(index) if index else None
    if idx is None:
        cands = [p for p in binlog_dir.glob("*.index") if "relay" not in p.name]
        if len(cands) != 1:
            raise WriteRefused(f"cannot tell which binlog index to use in {binlog_dir} "
                               f"({[p.name for p in cands] or 'none'}); pass --index", file=str(binlog_dir))
        idx = cands[0]
    lines = [l.strip() for l in idx.read_text().splitlines() if l.strip()]
    if not lines:
        raise WriteRefused("the binlog index is empty", file=str(idx))
    return idx, idx.parent / Path(lines[-1]).name


def _next_name(name: str) -> str:
    base, num = name.rsplit(".", 1)
    return f"{base}.{int(num) + 1:0{len(num)}d}"


class BinlogAppender:
    """Append whole events to the last file of a stopped server's binlog set.

    ``commit`` holds the folder's lock, refuses while any process has one of its files open (by
    device and inode), backs the file up (verified) into a fresh folder beside it, writes the new
    file under an exclusive temporary name with the old one's owner, group and mode, and renames
    it over the old one. A link as the last binlog is refused unless ``follow_links``."""

    def __init__(self, binlog_dir: Input | str | os.PathLike, *, index: str | None = None,
                 check_processes: bool = True, backup_dir: str | os.PathLike | None = None,
                 follow_links: bool = False, held: SafeDir | None = None):
        src = as_input(binlog_dir)  # the folder, with the keys its encrypted binlogs need
        self.dir = Path(src.path)
        self.index, self.file = _last_file(self.dir, index)
        self.input = src.with_options(path=str(self.file))  # the last binlog, read with those keys
        self.check_processes = check_processes
        self.backup_dir = backup_dir
        self.follow_links = follow_links
        self.held = held  # the folder, locked by the caller
        with SafeDir(self.dir) as d:
            t = d.target(self.file.name, follow_links=follow_links)
            if t is None:
                raise WriteRefused(f"{self.file.name} is in the index but not on disk", file=str(self.file))
            if check_processes:
                refuse_if_in_use(d, extra=[t] if t.dir is not d else [])
            if t.dir is not d:
                t.dir.close()
        with open(self.file, "rb") as fh:
            magic = fh.read(4)
        # what the file stores before the stream's byte 0 (MySQL binlog_encryption: its header);
        # offsets and sizes below are stream offsets, as every reader and the server count them
        self.header_size = CONTAINER_HEADER_SIZES.get(magic, 0)
        res = scan(self.input, count_types=True)
        if res.problem is not None:
            if isinstance(res.problem, (KeyRequiredError, KeyFileError, DecryptionError)):
                raise WriteRefused(res.problem.message, file=str(self.file))
            raise WriteRefused(f"{self.file.name} is damaged ({res.problem.message} at {res.problem.offset}): "
                               "repair it first (binlogkit recover)", file=str(self.file))
        from ..reading.reader import read_events

        first = next(iter(read_events(self.input)), None)
        if first is None:  # the magic alone: a server never leaves that after a clean stop
            raise WriteRefused(f"{self.file.name} holds no event (only the binlog magic): nothing to append to",
                               file=str(self.file))
        if first.type_code != T.FORMAT_DESCRIPTION_EVENT or first.format is None:
            raise WriteRefused("the last binlog does not start with a Format_description", file=str(self.file))
        if first.flags & EventFlag.BINLOG_IN_USE:
            raise WriteRefused(f"{self.file.name} is still marked in use: the server did not stop cleanly; "
                               "let it run its crash recovery first", file=str(self.file))
        self.format: Format = first.format
        self.server_id = first.server_id
        self.size = res.end_offset
        # encrypted file: events are written encrypted, as the server does
        self.cipher: EventCipher | StreamCipher | None = res.cipher
        if self.cipher is None and res.type_counts.get(T.START_ENCRYPTION_EVENT):
            self.cipher = _cipher_without_events(self.input)
        if magic == MYSQL_ENCRYPTED_MAGIC:  # the whole stream is AES-CTR under the file's own key
            with open(self.file, "rb") as fh:
                from ..crypto.mysql import DecryptingReader

                stream = binlog_stream(fh, self.input.loaded_keys())
                self.cipher = stream.cipher() if isinstance(stream, DecryptingReader) else None
        self.pending: list[tuple[int, bytes]] = []

    def add(self, type_code: int, body: bytes, *, flags: int = 0, timestamp: int | None = None) -> int:
        """Queue one event; returns the offset it will have."""
        at = self.size + sum(len(d) for _, d in self.pending)
        checksum = self.format.len_checksum > 0
        size = 19 + len(body) + (4 if checksum else 0)
        data = build_event(type_code=type_code, body=body, timestamp=int(timestamp or time.time()),
                           server_id=self.server_id, log_pos=(at + size) & 0xFFFFFFFF, flags=flags,
                           checksum=checksum)
        if self.cipher is not None:
            data = self.cipher.encrypt(data, at)
        self.pending.append((at, data))
        return at

    def commit(self) -> Appended:
        """Write the queued events: lock, back up (verified), copy + append into an exclusive
        temporary file with the original's owner and mode, fsync, rename over, fsync the folder."""
        d = self.held or SafeDir(self.dir)
        try:
            with contextlib.nullcontext() if self.held else d.locked():
                t = d.target(self.file.name, follow_links=self.follow_links)
                if t is None:
                    raise WriteRefused(f"{self.file.name} disappeared", file=str(self.file))
                if self.check_processes:
                    refuse_if_in_use(d, extra=[t] if t.dir is not d else [])
                if t.st.st_size != self.size + self.header_size:
                    raise WriteRefused(f"{self.file.name} is {t.st.st_size} bytes, it was {self.size + self.header_size} "
                                       "when read: "
                                       "is a server writing it?", file=str(self.file))
                t.dir.check_writable(t)
                backup = Backup.beside(d, "incident", self.backup_dir)
                try:
                    backup.copy(t)
                    backup.finish()
                finally:
                    backup.close()
                pending = list(self.pending)

                def write(fd: int) -> None:
                    src = os.open(t.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=t.dir.fd)
                    try:
                        copy_range(src, fd, self.size + self.header_size)
                    finally:
                        os.close(src)
                    for _, data in pending:
                        write_all(fd, data)

                try:
                    t.dir.replace(t.name, write)
                except OSError as exc:
                    raise PartialWrite(f"writing the new {t.name} failed: {exc.strerror}; the file is unchanged "
                                       f"(a copy is in {backup.path})", file=str(self.file),
                                       backup=str(backup.path)) from None
                if t.dir is not d:
                    t.dir.close()
        finally:
            if not self.held:
                d.close()
        offsets = [at for at, _ in self.pending]
        self.size += sum(len(x) for _, x in self.pending)
        self.pending = []
        return Appended(str(self.file), offsets, self.size + self.header_size, None, str(backup.path))


def _cipher_without_events(inp: Input) -> EventCipher | None:
    """The cipher of an encrypted file that has no encrypted event yet: only ``--cipher`` can
    say which (the file does not record it)."""
    from ..reading.reader import read_events
    from ..crypto.mariadb import cipher_for

    path = Path(inp.name)
    for raw in read_events(inp):
        if raw.type_code == T.START_ENCRYPTION_EVENT:
            c = cipher_for(raw.body, inp.loaded_keys(), offset=raw.offset)
            if c.cipher is None:
                raise WriteRefused(f"{path.name} is encrypted but holds no encrypted event yet, so the cipher is "
                                   "unknown: pass --cipher (the server's file_key_management_encryption_algorithm)",
                                   file=str(path))
            c.checked = True
            return c
    return None


def _last_two(inp: Input | str | os.PathLike) -> list[tuple[int, bytes, int]]:
    """(type code, body, offset) of the file's last two events (an ``Input``, or a plain path)."""
    from ..reading.reader import read_events

    last: list[tuple[int, bytes, int]] = []
    for raw in read_events(inp):
        last = (last + [(raw.type_code, raw.body, raw.offset)])[-2:]
    return last


def record_incident(binlog_dir: Input | str | os.PathLike, *, code: int | str = "LOST_EVENTS", message: str = "",
                    index: str | None = None, check_processes: bool = True,
                    backup_dir: str | os.PathLike | None = None, follow_links: bool = False,
                    cleaned: list[str] | None = None, gtid: str = "auto") -> Appended:
    """Append Incident(code, message) and a Rotate to the next file name to the last binlog of
    a stopped server. The server starts that next file itself when it starts again.
    Idempotent: when the file already ends with an Incident and that Rotate, nothing is written.
    What a killed earlier run left is removed first (``Appended.cleaned``, and ``cleaned`` when
    given: filled before any refusal).
    ``binlog_dir`` may be an ``Input`` of the folder: an encrypted binlog is read with its keys
    and the two events are written encrypted.

    On MySQL the Incident is a transaction of its own, as the server writes it: a Gtid event
    first (``gtid``: ``auto`` = the server's uuid and its next gno; ``UUID:GNO``; ``none`` to
    leave it out), or an Anonymous_gtid when the binlog has no GTIDs (gtid_mode=OFF)."""
    if isinstance(code, str) and not code.isdigit() and code.upper() not in INCIDENT_CODES:
        raise WriteRefused(f"unknown incident code {code.upper()!r}")
    if isinstance(code, str):
        code = INCIDENT_CODES[code.upper()] if not code.isdigit() else int(code)
    msg = message.encode("utf-8")
    if len(msg) > 255:
        raise WriteRefused("an Incident message holds at most 255 bytes")
    src = as_input(binlog_dir)
    with SafeDir(Path(src.path)) as d, d.locked():  # held from the first read to the last write
        # a run killed mid-copy left its temporary file (a full copy of the last binlog) and
        # perhaps a backup folder whose copy equals the file: remove them before anything else
        gone = remove_leftovers(d, "incident", lambda n: _BINLOG_NAME.fullmatch(n) is not None)
        if cleaned is not None:  # the caller's list: told even when the run is then refused
            cleaned += gone
        done = _record_incident(d, src, code, msg, index, check_processes, backup_dir, follow_links, gtid)
        done.cleaned = gone
        return done


_BINLOG_NAME = re.compile(r".+\.\d{6,}")


def _record_incident(d: SafeDir, binlog_dir: Input, code: int, msg: bytes, index, check_processes, backup_dir,
                     follow_links, gtid: str = "auto") -> Appended:
    w = BinlogAppender(binlog_dir, index=index, check_processes=check_processes, backup_dir=backup_dir,
                       follow_links=follow_links, held=d)
    nxt = _next_name(w.file.name)
    last = _last_two(w.input)
    body = code.to_bytes(2, "little") + bytes([len(msg)]) + msg
    if len(last) == 2 and last[0][0] == T.INCIDENT_EVENT and last[1][0] == T.ROTATE_EVENT:
        # an earlier run wrote a marker and the server has not started since
        if last[0][1] == body and last[1][1].endswith(nxt.encode()):
            return Appended(str(w.file), [last[0][2], last[1][2]], w.size + w.header_size, nxt, None, already=True)
        raise WriteRefused(f"{w.file.name} already ends with another Incident and a Rotate (at {last[0][2]}): "
                           "start the server once, or restore the file from the backup, before marking "
                           "another incident", file=str(w.file))
    wrap = _INCIDENT_TRANSACTION.get(w.format.flavor)
    gtid_text = None
    now_us = time.time_ns() // 1000
    flags = 0
    if wrap is not None:
        gtid_text, flags = wrap(w, body, gtid, now_us)
    w.add(T.INCIDENT_EVENT, body, flags=flags, timestamp=now_us // 1_000_000)
    w.add(T.ROTATE_EVENT, (4).to_bytes(8, "little") + nxt.encode(), timestamp=now_us // 1_000_000)
    done = w.commit()
    done.next_file = nxt
    done.gtid = gtid_text
    return done


def _mysql_incident(w: BinlogAppender, body: bytes, gtid: str, now_us: int) -> tuple[str | None, int]:
    """MySQL: the Incident as a transaction of its own, opened by a Gtid (or Anonymous_gtid)
    event, as the server writes it (binlogkit/incident.py); returns (the GTID, the Incident's
    header flags)."""
    from ..reading.reader import read_events
    from .incident import NO_FILTER_F, choose_gtid, gtid_body, read_file_gtids, server_uuid

    if gtid == "none":
        return None, NO_FILTER_F
    facts = read_file_gtids(read_events(w.input), w.server_id, file=str(w.file),
                            strict=gtid == "auto")
    chosen = choose_gtid(facts, wanted=gtid, uuid_from_datadir=server_uuid(w.file.parent), file=str(w.file))
    incident_size = 19 + len(body) + w.format.len_checksum
    tc, gbody = gtid_body(chosen, facts=facts, fmt=w.format, incident_size=incident_size, commit_us=now_us)
    w.add(tc, gbody, timestamp=now_us // 1_000_000)
    return (f"{chosen[0]}:{chosen[1]}" if chosen else "ANONYMOUS"), NO_FILTER_F


#: what a flavor writes around an Incident (MariaDB: nothing, the Incident stands alone)
_INCIDENT_TRANSACTION = {Flavor.MYSQL: _mysql_incident}

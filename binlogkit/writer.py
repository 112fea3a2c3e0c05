"""Writing into binlog sets: append events the way the server writes them.

``BinlogAppender`` is the Python writer API for tooling that writes binlogs or relay logs:
events are built by the codecs (event_size, end_log_pos and CRC32 computed under the file's own
Format_description: its flavor, header length and checksum algorithm), and the file is replaced
atomically (copy, append, fsync, rename, fsync the directory). ``record_incident`` uses it to
mark a gap the way seed 000 asks: an Incident event, then a Rotate to the next file name, so the
log after the gap starts clean in a new file.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .constants import EventFlag, EventType as T
from .errors import BinlogError
from .events import build_event
from .scan import scan

INCIDENT_CODES = {"NONE": 0, "LOST_EVENTS": 1, "NEW_INCIDENT": 2}


class WriteRefused(BinlogError):
    """The set cannot be written safely (server running, crashed, torn, unknown layout)."""


@dataclass
class Appended:
    file: str
    offsets: list[int]
    new_size: int
    next_file: str | None


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
    """Append whole events to the last file of a stopped server's binlog set."""

    def __init__(self, binlog_dir: str | os.PathLike, *, index: str | None = None, check_processes: bool = True):
        self.dir = Path(binlog_dir)
        self.index, self.file = _last_file(self.dir, index)
        if check_processes:
            from .recover.apply import processes_using

            pids = processes_using(self.dir)
            if pids:
                raise WriteRefused(f"process(es) {pids} have files of {self.dir} open: stop the server first",
                                   file=str(self.dir))
        res = scan(self.file)
        if not res.ok:
            raise WriteRefused(f"{self.file.name} is damaged ({res.problem.message} at {res.problem.offset}): "
                               "repair it first (binlogkit recover)", file=str(self.file))
        from . import open_binlog

        first = next(iter(open_binlog(str(self.file))))
        if first.type_code != T.FORMAT_DESCRIPTION_EVENT:
            raise WriteRefused("the last binlog does not start with a Format_description", file=str(self.file))
        if first.flags & EventFlag.BINLOG_IN_USE:
            raise WriteRefused(f"{self.file.name} is still marked in use: the server did not stop cleanly; "
                               "let it run its crash recovery first", file=str(self.file))
        self.format = first.format
        self.server_id = first.server_id
        self.size = res.end_offset
        self.pending: list[tuple[int, bytes]] = []

    def add(self, type_code: int, body: bytes, *, flags: int = 0, timestamp: int | None = None) -> int:
        """Queue one event; returns the offset it will have."""
        at = self.size + sum(len(d) for _, d in self.pending)
        checksum = self.format.len_checksum > 0
        size = 19 + len(body) + (4 if checksum else 0)
        data = build_event(type_code=type_code, body=body, timestamp=int(timestamp or time.time()),
                           server_id=self.server_id, log_pos=(at + size) & 0xFFFFFFFF, flags=flags,
                           checksum=checksum)
        self.pending.append((at, data))
        return at

    def commit(self) -> Appended:
        """Write the queued events: copy, append, fsync, rename over the file, fsync the folder."""
        tmp = self.file.with_name(self.file.name + ".binlogkit-tmp")
        shutil.copy2(self.file, tmp)
        with open(tmp, "r+b") as fh:
            fh.truncate(self.size)
            fh.seek(self.size)
            for _, data in self.pending:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.file)
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        offsets = [at for at, _ in self.pending]
        self.size += sum(len(d) for _, d in self.pending)
        self.pending = []
        return Appended(str(self.file), offsets, self.size, None)


def record_incident(binlog_dir: str | os.PathLike, *, code: int | str = "LOST_EVENTS", message: str = "",
                    index: str | None = None, check_processes: bool = True) -> Appended:
    """Append Incident(code, message) and a Rotate to the next file name to the last binlog of
    a stopped server. The server starts that next file itself when it starts again."""
    if isinstance(code, str):
        code = INCIDENT_CODES[code.upper()] if not code.isdigit() else int(code)
    msg = message.encode("utf-8")
    if len(msg) > 255:
        raise WriteRefused("an Incident message holds at most 255 bytes")
    w = BinlogAppender(binlog_dir, index=index, check_processes=check_processes)
    nxt = _next_name(w.file.name)
    w.add(T.INCIDENT_EVENT, code.to_bytes(2, "little") + bytes([len(msg)]) + msg)
    w.add(T.ROTATE_EVENT, (4).to_bytes(8, "little") + nxt.encode())
    done = w.commit()
    done.next_file = nxt
    return done

"""How decode's events are written: JSON lines, or mysqlbinlog-like text as bytes in ~1 MiB
writes (row values written as stored), Transaction_payload's inner events between markers,
progress on stderr when it is a terminal and the output goes elsewhere."""

from __future__ import annotations

import json
import os
from typing import Callable

from ..constants import EventType
from ..reading.decoder import Problem
from ..reading.progress import Progress
from ..render import render_text

PAYLOAD = int(EventType.TRANSACTION_PAYLOAD_EVENT)
START, END = "# Start of compressed events!\n", "# End of compressed events!\n"


def event_json(ev) -> dict:
    raw = ev.raw
    doc = {"file": raw.file, "offset": raw.offset, "end_offset": raw.end_offset, "type": raw.type_name,
           "type_code": raw.type_code, "name": ev.name, "timestamp": raw.timestamp,
           "server_id": raw.server_id, "event_size": raw.event_size, "log_pos": raw.log_pos,
           "flags": raw.flags, "checksum_ok": raw.checksum_ok, "fields": ev.fields}
    if raw.payload_offset is not None:  # inside a Transaction_payload: offset is the payload's end
        doc["end_offset"] = raw.offset
        doc["payload_offset"] = raw.payload_offset
        doc["inner_offset"] = raw.inner_offset
    if ev.rows is not None:
        from ..rowvalues import rows_json
        doc["table"] = f"{ev.table.db}.{ev.table.name}"
        if ev.table.primary_key is not None:  # from binlog_row_metadata=FULL
            doc["primary_key"] = [ev.table.column_name(i) for i in ev.table.primary_key]
        doc["rows"] = rows_json(ev.rows, ev.table)
    return doc


class _Sink:
    """Text as bytes, gathered into ~1 MiB writes; a stream without a byte buffer: as text."""

    def __init__(self, out) -> None:
        self.out, self.sink, self.size = out, getattr(out, "buffer", None), 0
        self.pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self.sink is None:
            self.out.write(data.decode("utf-8", "surrogateescape"))
            return
        if len(data) > 1 << 16:  # big images: written as they are, not copied again
            self.drain()
            self.sink.write(data)
            return
        self.pending.append(data)
        self.size += len(data)
        if self.size > 1 << 20:
            self.drain()

    def drain(self) -> None:
        if self.sink is not None and self.pending:
            self.sink.write(b"".join(self.pending))
            self.pending.clear()
            self.size = 0

    def flush(self) -> None:
        self.drain()
        (self.sink or self.out).flush()


class _Watch:
    """Progress through each plain file, updated every 1024 events (when ``on``)."""

    def __init__(self, on: bool) -> None:
        self.on, self.count = on, 0
        self.file: str | None = None
        self.prog: Progress | None = None

    def __call__(self, item) -> None:
        self.count += 1
        if not self.on or self.count & 1023:
            return
        if item.raw.file != self.file:
            self.close()
            name = self.file = item.raw.file or ""
            plain = name and not name.endswith((".xz", ".gz", ".bz2")) and os.path.isfile(name)
            self.prog = Progress(os.path.getsize(name) if plain else 0, f"decode {os.path.basename(name)}")
        assert self.prog is not None
        self.prog(item.raw.offset)

    def close(self) -> None:
        if self.prog is not None:
            self.prog.close()


def write_events(items, out, *, as_json: bool, utc: bool, watch: bool,
                 on_problem: Callable[[Problem], bool]) -> None:
    """Write ``items`` (``decoding.events``) to ``out``. A ``Problem`` is handed to
    ``on_problem`` after everything before it was written; False stops. An ``OSError`` is
    raised after what was decoded before it was written out."""
    sink = _Sink(out)  # text and JSON lines alike as bytes (JSON: ASCII, json.dumps' ensure_ascii)
    see = _Watch(watch)
    in_payload = False  # text: the inner events of a Transaction_payload sit between markers
    try:
        for item in items:
            if type(item) is bytes:  # events fastdecode rendered, text or JSON lines
                sink.write(item)
                continue
            if isinstance(item, Problem):
                sink.flush()
                out.flush()
                if not on_problem(item):
                    break
                continue
            see(item)
            if as_json:
                sink.write((json.dumps(event_json(item), default=str) + "\n").encode("ascii"))
                continue
            text = render_text(item, utc)
            inner = item.raw.payload_offset is not None
            if in_payload and not inner:
                text = END + text
            if item.raw.type_code == PAYLOAD:
                text += START
            in_payload = (in_payload and inner) or item.raw.type_code == PAYLOAD  # markers in pairs
            sink.write(text.encode("utf-8", "surrogateescape"))
            if item.rows_text is not None:
                sink.write(item.rows_text)
        see.close()
        if in_payload and not as_json:
            sink.write(END.encode())
        sink.flush()
    except BrokenPipeError:
        raise
    except OSError:
        try:  # what was decoded before the failure is still written
            sink.flush()
        except OSError:
            pass
        raise


def write_replay(chunks, out) -> None:
    """Write ``decoding.replay_chunks``: text as UTF-8 (row values keep their bytes through
    surrogate escapes), the C loop's ASCII bytes as they are; then flush. When ``out`` has a
    descriptor (a file or a pipe), the C loop writes its text there itself
    (``fastdecode.ReplayChunks.direct``), ``out`` flushed before each of its writes."""
    sink = getattr(out, "buffer", None)
    direct = getattr(chunks, "direct", None)
    if direct is not None:
        try:
            fd = out.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: a StringIO, click's runner
            fd = -1
        if fd >= 0:
            direct(fd, out.flush)
    for text in chunks:
        if not text:
            continue
        if isinstance(text, bytes):
            if sink is not None:
                sink.write(text)
            else:
                out.write(text.decode("ascii"))
        elif sink is not None:
            sink.write(text.encode("utf-8", "surrogateescape"))
        else:
            out.write(text)
    out.flush()

"""The decode command's room: which decode path serves a request (``events``), and how its
events are written (``render.write_events``, with progress on a terminal)."""

from __future__ import annotations

from datetime import datetime
from typing import Iterator

from ..constants import EventType


def event_types(values: tuple[str, ...]) -> set[int] | None:
    """Event type names (QUERY, XID, GTID, WRITE_ROWS_EVENT...) or codes, repeated or
    comma-separated, as a set of codes; ``ValueError`` names one that is not a type."""
    if not values:
        return None
    out = set()
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if part.isdigit():
                out.add(int(part))
                continue
            key = part.upper()
            matches = [t for t in EventType if key in (t.name, t.name.replace("_LOG_EVENT", "").replace("_EVENT", ""))
                       or t.name == key + "_EVENT" or t.name == key + "_LOG_EVENT"]
            if not matches:
                raise ValueError(f"unknown event type {part!r} (try QUERY, XID, GTID, ROTATE, 162...)")
            out.update(matches)
    return out


def events(inputs, *, start_position: int | None = None, stop_position: int | None = None,
           start_datetime: datetime | None = None, stop_datetime: datetime | None = None,
           types: set[int] | None = None, include_gtids=None, exclude_gtids=None, verify: bool = True,
           strict: bool = True, rows: bool = False, as_json: bool = False, utc: bool = True,
           column_types: dict | None = None, progress=None) -> Iterator:
    """What ``binlogkit decode`` prints, in order: bytes the C loop rendered already (text or
    JSON lines: plain files, no filter, no key), else ``Event`` and ``Problem`` values
    (``api.decode_files``, payload events included). ``inputs``: paths or ``Input`` values (their
    keys read encrypted files; ``verify`` applies to all). ``rows``: decode row images (as their
    text lines for text output). ``progress(name, total)``: a callable per file (C loop)."""
    from ..reading import fastdecode
    from ..reading.source import Input
    from ..api import decode_files

    inputs = [i.with_options(verify=verify) if isinstance(i, Input) else i for i in inputs]
    keys = any(isinstance(i, Input) and i.keys is not None for i in inputs)

    filters = (start_position, stop_position, start_datetime, stop_datetime, include_gtids, exclude_gtids)
    row_mode = rows and ("text" if not as_json else True)
    if not keys and fastdecode.usable(utc=utc, filters=bool(types) or any(f is not None for f in filters)):
        return fastdecode.decode_fast(inputs, verify=verify, strict=strict, column_types=column_types,
                                      rows=row_mode, as_json=as_json, progress=progress)
    return decode_files(inputs, start_position=start_position, stop_position=stop_position,
                        start_datetime=start_datetime, stop_datetime=stop_datetime, types=types, verify=verify,
                        strict=strict, include_gtids=include_gtids, exclude_gtids=exclude_gtids, rows=row_mode,
                        column_types=column_types, payloads=True)

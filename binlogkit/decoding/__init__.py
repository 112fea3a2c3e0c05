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
    row_mode = rows and (("types" if rows >= 2 else "text") if not as_json else True)  # -vv: type comments
    # JSON lines hold no local time (times as seconds): the C loop serves them in any zone
    if not keys and fastdecode.usable(utc=as_json or utc or local_is_utc(),
                                      filters=bool(types) or any(f is not None for f in filters)):
        return fastdecode.decode_fast(inputs, verify=verify, strict=strict, column_types=column_types,
                                      rows=row_mode, as_json=as_json, progress=progress)
    return decode_files(inputs, start_position=start_position, stop_position=stop_position,
                        start_datetime=start_datetime, stop_datetime=stop_datetime, types=types, verify=verify,
                        strict=strict, include_gtids=include_gtids, exclude_gtids=exclude_gtids, rows=row_mode,
                        column_types=column_types, payloads=True)


def local_is_utc() -> bool:
    """Whether local time is UTC here (then the C loop, which prints UTC, prints local time too)."""
    import time

    return time.timezone == 0 and (not time.daylight or time.altzone == 0)


def replay_chunks(replay, inputs, *, verify: bool = True, column_types: dict | None = None, progress=None,
                  **filters) -> Iterator[str | bytes]:
    """``replay_text``'s chunks, from the C loop (``fastdecode.replay_fast``: rows events as
    bytes, byte-identical to the reference) where it serves these options and files, else from
    ``replay_text`` itself. ``filters``: ``replay_text``'s position, time and GTID filters."""
    from ..reading import fastdecode

    if fastdecode.replay_usable(replay, filters=any(v is not None for v in filters.values())):
        return fastdecode.replay_fast(replay, inputs, verify=verify, column_types=column_types, progress=progress)
    return replay_text(replay, inputs, verify=verify, strict=True, column_types=column_types, progress=progress,
                       **filters)


def replay_text(replay, inputs, *, start_position: int | None = None, stop_position: int | None = None,
                start_datetime: datetime | None = None, stop_datetime: datetime | None = None,
                include_gtids=None, exclude_gtids=None, verify: bool = True, strict: bool = True,
                column_types: dict | None = None, progress=None) -> Iterator[str]:
    """``decode``'s replayable text (``replay``: a ``decoding.replay.Replay``), chunk by chunk, with
    mysqlbinlog's filters: ``start_position`` in the first file and ``stop_position`` in the last
    (the first event starting at or after it ends the output); the Format_description is always
    printed; events before ``start_datetime`` are skipped until the first one at or after it, and
    the first event at or after ``stop_datetime`` ends the output. A damaged input ends it too
    (``Replay.fail``: the open transaction rolled back, the reason in ``replay.problems``).
    ``progress(name, total)``: a callable per file, given the offset reached every 256 events."""
    from dataclasses import replace

    from ..api import decode_files
    from ..reading.decoder import Problem
    from ..reading.source import Input, inputs as expand
    from ..transactions import GTID_TYPES, OUTSIDE
    from .replay import TOOLS

    files = expand([i.with_options(verify=verify) if isinstance(i, Input) else i for i in inputs], verify=verify)
    t0 = start_datetime.timestamp() if start_datetime else None
    t1 = stop_datetime.timestamp() if stop_datetime else None
    fde = int(EventType.FORMAT_DESCRIPTION_EVENT)
    pgtids = int(EventType.PREVIOUS_GTIDS_LOG_EVENT)
    gtid_filter = include_gtids is not None or exclude_gtids is not None
    for n, inp in enumerate(files):
        first, last = n == 0, n == len(files) - 1
        prog = None
        if progress is not None:
            try:
                prog = progress(inp.basename, inp.size())
            except (OSError, ValueError):  # a stream: no total
                prog = None
        count = 0
        held, held_at = None, 0
        keep = True  # the GTID filters: mysqlbinlog prints `# at` for each event of a transaction it skips
        for ev in decode_files([inp], verify=verify, strict=strict, column_types=column_types,
                               rows="types" if replay.opts.verbose >= 2 else "text",
                               payloads=True):
            if isinstance(ev, Problem):
                yield replay.fail(None, str(ev.error), file=ev.path, offset=getattr(ev.error, "offset", None),
                                  error=ev.error)
                yield replay.close()
                return
            raw = ev.raw
            t = raw.type_code
            outer = raw.payload_offset is None
            count += 1
            if held is not None:  # mysqlbinlog shows the FD `# at` the end of the header events after it
                if t == pgtids and raw.offset < (start_position or 0):
                    held_at = raw.end_offset
                    continue
                yield replay.feed(replace(held, raw=replace(held.raw, offset=held_at)))
                held = None
            if (t == fde and first and start_position is not None and raw.format is not None
                    and TOOLS[raw.format.flavor].fd_at_after_headers):
                held, held_at = ev, raw.end_offset
                continue
            if prog is not None and not count & 255:
                prog(raw.offset)
            if t != fde and outer:
                if first and start_position is not None and raw.offset < start_position:
                    continue
                if t0 is not None and raw.timestamp < t0:
                    continue
                t0 = None  # from the first event at or after it, everything (as the tools)
            if outer and ((t1 is not None and raw.timestamp >= t1)
                          or (last and stop_position is not None and raw.offset >= stop_position)):
                yield replay.close("--stop-position / --stop-datetime falls inside a transaction")
                return
            if gtid_filter:
                if t in GTID_TYPES:
                    g = ev.fields.get("gtid")
                    keep = ((include_gtids is None or (g is not None and include_gtids(g)))
                            and (exclude_gtids is None or g is None or not exclude_gtids(g)))
                if not keep and t not in OUTSIDE:
                    if outer:
                        yield f"# at {raw.offset}\n"
                    continue
            try:
                text = replay.feed(ev)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                # an event whose fields do not fit its printer (damage the codecs let through): no
                # faithful replay from here; said on stderr, exit 1 (Replay.fail), never a traceback
                yield replay.fail(ev, f"the event does not print for replay ({type(exc).__name__}: {exc})")
                yield replay.close()
                return
            yield text
        if held is not None:
            yield replay.feed(replace(held, raw=replace(held.raw, offset=held_at)))
        if prog is not None and hasattr(prog, "close"):
            prog.close()
    yield replay.close()

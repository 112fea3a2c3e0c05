"""The per-file pass: one binlog or relay log in, one small manifest out. Pure but for reading
the file (read-only); checksums are checked and every mismatch is kept, not only the first."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import BinlogError
from ..files import OPENERS, input_size, open_input
from ..transactions import Grouper

_NUM = re.compile(r"^(.*)\.(\d+)$")


def series_key(path: str) -> tuple[str, str, int]:
    """(directory, base name, number) of ``dir/base.000123`` (compression suffix ignored)."""
    p = Path(path)
    name = p.name
    for suffix in OPENERS:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    m = _NUM.match(name)
    if not m:
        return str(p.parent), name, -1
    return str(p.parent), m.group(1), int(m.group(2))


def file_manifest(path: str | os.PathLike, keys=None) -> dict:
    """Everything the merge needs about one file; never raises for damaged input. ``keys``: a
    ``crypto.Keys``, or a ``crypto.KeySpec`` loaded here (worker processes, Spark executors)."""
    path = os.fspath(path)
    from ..crypto.keys import KeySpec

    if isinstance(keys, KeySpec):
        keys = keys.load()
    directory, base, number = series_key(path)
    g = Grouper()
    trx = []
    problem = None
    try:
        with open_input(path) as fh:
            for t in g.feed_file(path, fh, verify=False, keys=keys):
                trx.append(t)
    except BinlogError as exc:
        problem = {"kind": type(exc).__name__, "offset": exc.offset, "message": exc.message,
                   "event_type": exc.event_type}
    except OSError as exc:
        problem = {"kind": "OSError", "offset": None, "message": str(exc), "event_type": None}
    open_at_end = g.cur
    trx += list(g.finish())
    info = g.files[0] if g.files else None
    m = {
        "file": path, "directory": directory, "base": base, "number": number,
        "size": input_size(path), "problem": problem,
        "relay": bool(info and info.relay), "server_version": info.server_version if info else None,
        "flavor": g.fmt.flavor.value if g.fmt else None,
        "events": info.events if info else 0, "end_offset": info.end_offset if info else 4,
        "checksummed": info.checksummed if info else 0,
        "first_timestamp": info.first_timestamp if info else None,
        "last_timestamp": info.last_timestamp if info else None,
        "bad_checksums": info.bad_checksums if info else [],
        "incidents": info.incidents if info else [],
        "unknown_events": info.unknown_events if info else [],
        "position_breaks": info.position_breaks if info else [],
        "rotates": info.rotates if info else [],
        "previous_gtids": info.previous_gtids if info else None,
        "gtid_list": info.gtid_list if info else None,
        "server_ids": sorted(info.server_ids) if info else [],
        "transactions": [{"gtid": t.gtid, "offset": t.start_offset, "complete": t.complete, "kind": t.kind,
                          "server_id": t.server_id, "source_file": t.source_file, "source_start": t.source_start,
                          "first_timestamp": t.first_timestamp}
                         for t in trx],
        "starts_inside_transaction": bool(trx) and trx[0].kind == "continuation",
        "open_at_end": open_at_end is not None,
    }
    return m

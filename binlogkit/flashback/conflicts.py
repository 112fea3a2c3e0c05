"""Later changes to the rows a flashback puts back: a warning, found in the inputs themselves.

The undo of an insert deletes the inserted row, the undo of an update finds the row as the
update left it: both expect the row image the range produced. When a transaction *after* the
range (in the same inputs) changed or deleted such a row, replaying the undo overwrites that
later change (the server finds the row by its primary key and does not compare the rest of
the image) or, in a table without a key, stops on it (error 1032, row not found): both seen on a
real MariaDB (test_flashback_e2e). So the flashback remembers the images its undo expects (a 64-bit hash each, per
table) and reads the rest of the inputs after the range: every later Update_rows / Delete_rows
before image of those tables that equals one is reported (GTID or position, table, rows).

Memory stays bounded: past ``CAP`` images the remaining tables are only tracked by name, and any
later update or delete of them is reported as a possible conflict ("table-level"). Later inserts
(a new row with the key of a row the undo re-inserts) are not detected: that needs the key,
which the images alone do not name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..codecs.header import LEN_HEADER
from ..constants import EventType as T
from ..errors import BinlogError
from ..reading.events import decode, payload_events
from ..rowvalues.tables import table_from_map
from .invert import COMPRESSED, ROWS_TYPES, UNDO_TYPE, all_columns, split_rows
from .source import EventFile

if TYPE_CHECKING:
    from ..reading.source import Input

CAP = 1_000_000        # hashes kept: about 70 MB of Python ints in sets at most
SHOWN = 20             # later changes listed; the rest counted
DELETE_KINDS = {code for code, (_undo, kind) in UNDO_TYPE.items() if kind == "d"}
UPDATE_KINDS = {code for code, (_undo, kind) in UNDO_TYPE.items() if kind == "u"}
GTID_TYPES = {T.GTID_EVENT, T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT}


@dataclass
class Expected:
    """The row images the undo expects to find, by table (``db.table``)."""
    images: dict[str, set[int]] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)   # over the cap: any later change counts
    count: int = 0

    def add(self, out) -> None:
        """Remember what the undo rows event ``out`` (``undo.Out``) expects to find."""
        from .sql import WRITES

        if out.rows is None or out.type_code in WRITES:   # the undo of a delete finds nothing
            return
        name = f"{out.table.db}.{out.table.name}"
        if name in self.whole:
            return
        if self.count + len(out.rows) > CAP:
            self.whole.add(name)
            self.images.pop(name, None)
            return
        s = self.images.setdefault(name, set())
        for image, _other in out.rows:
            s.add(hash(image))
        self.count += len(out.rows)

    def __bool__(self) -> bool:
        return bool(self.images or self.whole)


def later_changes(files: list[str], local: dict[str, Input], fmt, start_file: int, start: int,
                  expected: Expected) -> dict:
    """Scan ``files[start_file:]`` from ``start`` (the end of the last undone transaction) to the
    end; what changed rows the undo expects (see the module docstring)."""
    found: list[dict] = []
    total = 0
    note = None
    for k in range(start_file, len(files)):
        name = files[k]
        try:
            with EventFile(local[name]) as fh:
                for hit in _scan(fh, name, start if k == start_file else 4, fmt, expected):
                    total += 1
                    if len(found) < SHOWN:
                        found.append(hit)
        except BinlogError as exc:
            note = f"not checked past {name} offset {exc.offset}: {exc.message}"
            break
    return {"conflicts": found, "total": total, "note": note}


def _scan(fh: EventFile, name: str, at: int, fmt, expected: Expected):
    maps: dict[int, object] = {}
    gtid = None
    size = fh.size()
    while at + LEN_HEADER <= size:
        raw = fh.event(at, fmt, name)
        at += raw.event_size
        events = payload_events(decode(raw)) if raw.type_code == T.TRANSACTION_PAYLOAD_EVENT else (raw,)
        for ev in events:
            code = ev.type_code
            if code in GTID_TYPES:
                gtid = decode(ev).fields.get("gtid")
            elif code == T.TABLE_MAP_EVENT:
                table = table_from_map(decode(ev).parsed, fmt.flavor)
                maps[table.table_id] = table
            elif code in ROWS_TYPES and (code in DELETE_KINDS or code in UPDATE_KINDS):
                hit = _rows_hit(decode(ev).parsed, code, maps, expected)
                if hit:
                    yield {"file": name, "offset": raw.offset, "gtid": gtid, **hit}


def _rows_hit(p, code: int, maps: dict, expected: Expected) -> dict | None:
    table = maps.get(p["table_id"])
    if table is None:
        return None
    name = f"{table.db}.{table.name}"
    if name in expected.whole:
        return {"table": name, "rows": None}
    images = expected.images.get(name)
    if not images:
        return None
    after = p["columns_after_image"]
    if (not all_columns(p["columns_before_image"], p["width"]) or (after is not None and not all_columns(after, p["width"]))
            or p["width"] != len(table.columns)):
        return {"table": name, "rows": None}    # MINIMAL later images: cannot compare, may be a conflict
    data = bytes(p["rows"])
    if code in COMPRESSED:
        from ..codecs.compression import uncompress
        data = uncompress(data)
    rows = split_rows(table, data, code in UPDATE_KINDS)
    n = sum(1 for before, _after in rows if hash(before) in images)
    return {"table": name, "rows": n} if n else None

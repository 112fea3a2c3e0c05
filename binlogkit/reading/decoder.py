"""Decoding one framed event at a time, with the state kept across events (the table maps in
force for row images), and the ``Problem`` a damaged input yields. Shared by ``api.decode_files``
and the C decode loop (``fastdecode``), which both import it from here (no import circle)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

from ..constants import QUERY_TYPES, EventType
from ..errors import BinlogError
from .events import Event, decode


@dataclass(frozen=True)
class Problem:
    """A damaged or unreadable input, met while decoding: everything before it was yielded.

    ``decode_files`` yields it among the events, so it answers what a loop over events reads
    without a trap: ``rows``, ``table`` and ``rows_text`` are None, ``fields`` is
    empty, ``name`` is ``"PROBLEM"``, ``offset`` / ``event_type`` are the error's. Check
    ``isinstance(x, Problem)`` (or ``x.problem``, True here, False on an ``Event``) to tell."""

    path: str
    error: BinlogError

    name: ClassVar[str] = "PROBLEM"
    problem: ClassVar[bool] = True
    rows: ClassVar[None] = None
    table: ClassVar[None] = None
    rows_text: ClassVar[None] = None
    fields: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    @property
    def offset(self) -> int | None:
        return self.error.offset

    @property
    def event_type(self) -> str | None:
        return self.error.event_type

    def __str__(self) -> str:
        return str(self.error)


class EventDecoder:
    """What ``decode_files`` does with each framed event, with the state it keeps across events
    (the table maps in force for row images): shared by ``decode_files`` and the accelerated
    ``decode`` path (``binlogkit.reading.fastdecode``), so both decode an event the same way."""

    def __init__(self, *, strict: bool = True, rows: bool | str = False, column_types=None) -> None:
        self.strict, self.rows, self.column_types = strict, rows, column_types
        self.tables: dict = {}  # table id -> Table, from the last table map
        self.known: dict = {}  # (flavor, table map body) -> Table
        self.alter: tuple | None = None  # (file, offset of the next event, phase, id): a two-phase ALTER's GTID
        self.failed = False

    def register(self, raw):
        """A table map, decoded once: its Table kept for the rows events that follow."""
        from ..rowvalues import table_from_map

        tm = decode(raw, strict=self.strict)
        if tm.parsed is None:  # kept as bytes (no codec): no table to register
            return tm
        flavor = raw.format.flavor if raw.format else None
        key = (flavor, raw.body)  # servers repeat a table's map before every statement
        table = self.known.get(key)
        if table is None:
            if len(self.known) > 4096:
                self.known.clear()
            table = self.known[key] = table_from_map(tm.parsed, flavor, self.column_types)
        self.tables[tm.parsed["table_id"]] = table
        return tm

    def one(self, raw, tm=None):
        from dataclasses import replace

        from ..rowvalues import ROWS_TYPES, decode_rows, verbose_text

        ev = tm if tm is not None else decode(raw, strict=self.strict)
        code = raw.type_code
        if code == _MARIADB_GTID or (self.alter is not None and code in _QUERIES):
            ev = self._two_phase_alter(raw, ev)
        rows = self.rows
        if rows and raw.type_code in ROWS_TYPES and ev.parsed is not None:
            table = self.tables.get(ev.parsed["table_id"])
            if table is not None and rows in ("text", "types"):  # types: -vv, the type comments too
                ev = Event(raw, ev.codec, ev.parsed, ev.fields, None, table,
                           verbose_text(table, ev.parsed, raw.type_code, types=rows == "types"))
            elif table is not None:
                ev = replace(ev, rows=decode_rows(table, ev.parsed, raw.type_code), table=table)
        return ev

    def _two_phase_alter(self, raw, ev):
        """MariaDB's binlog_alter_two_phase: a GTID whose flags_extra says START / COMMIT /
        ROLLBACK ALTER marks the Query right after it (``fields["two_phase_alter"]``, and
        ``alter_id``: the START ALTER's seq_no), which ``render`` comments out but for COMMIT."""
        if raw.type_code == _MARIADB_GTID:
            phase = alter_phase(ev.fields)
            self.alter = None if phase is None else (raw.file, raw.end_offset, phase, ev.fields.get("sa_seq_no"))
            return ev
        file, at, phase, alter_id = self.alter  # type: ignore[misc]  # one() checked it is set
        self.alter = None
        if raw.file != file or raw.offset != at or ev.parsed is None:
            return ev
        fields = dict(ev.fields, two_phase_alter=phase)
        if alter_id is not None:
            fields["alter_id"] = alter_id
        return Event(raw, ev.codec, ev.parsed, fields, ev.rows, ev.table, ev.rows_text)

    def each(self, raw, path: str, *, types: set[int] | None = None, payloads: bool = False):
        """The event (a ``Problem`` where it does not decode), then with ``payloads`` the events
        inside a Transaction_payload; ``failed`` says whether one did not decode."""
        from .events import payload_events

        todo = [raw]  # a Transaction_payload adds the events inside it, shown right after it
        self.failed = False
        for r in todo:
            try:
                tm = self.register(r) if self.rows and r.type_code == 19 else None
                shown = not types or r.type_code in types
                expand = payloads and r is raw and r.type_code == _PAYLOAD
                if not (shown or expand):
                    if r.type_code == _MARIADB_GTID:  # not shown, still marks a two-phase ALTER's Query
                        self._two_phase_alter(r, decode(r, strict=self.strict))
                    continue
                ev = self.one(r, tm)
                if expand:
                    todo.extend(_inner(i, raw) for i in payload_events(ev))
            except BinlogError as exc:
                yield Problem(path, exc.with_context(file=path, offset=r.offset, event_type=r.type_name))
                self.failed = True
                if self.strict:
                    return
                continue
            if shown:
                yield ev


_PAYLOAD = int(EventType.TRANSACTION_PAYLOAD_EVENT)  # an int: compared for every event
_MARIADB_GTID = int(EventType.GTID_EVENT)
_QUERIES = frozenset(int(c) for c in QUERY_TYPES)
# MariaDB Gtid_log_event flags_extra (sql/log_event.h): FL_START_ALTER_E1 2, FL_COMMIT_ALTER_E1 4,
# FL_ROLLBACK_ALTER_E1 8 (the last two followed by sa_seq_no, the START ALTER's seq_no)
ALTER_PHASES = ((2, "START"), (4, "COMMIT"), (8, "ROLLBACK"))


def alter_phase(gtid_fields: dict) -> str | None:
    """"START" / "COMMIT" / "ROLLBACK" for the GTID of a two-phase ALTER's event group, else None."""
    fx = gtid_fields.get("flags_extra") or 0
    return next((name for bit, name in ALTER_PHASES if fx & bit), None)


def _inner(inner, payload):
    """An event from inside a Transaction_payload, placed as mysqlbinlog places it: at the
    payload's end position (where a replica would resume), ``payload_offset`` saying where
    the payload starts and ``inner_offset`` where the event sits in the uncompressed bytes."""
    from dataclasses import replace

    return replace(inner, offset=payload.end_offset, log_pos=payload.end_offset, file=payload.file,
                   payload_offset=payload.offset, inner_offset=inner.offset)

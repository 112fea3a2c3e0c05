"""The committed row changes and statements of an archive, in binlog order.

One pass over each file's frames: the grouping scan (``transactions.Grouper``, the one
definition of where a transaction begins and ends) reads them, and the table maps, rows
events, Query events and MySQL Transaction_payloads among them are held in a
``Spool`` (memory up to 16 MB, then a temporary file: a 4 GB transaction takes 16 MB of memory)
until the grouping scan says how the transaction they belong to ended: committed
(Xid, COMMIT, a DDL) -> decoded and handed on; ROLLBACK, XA PREPARE (its XA COMMIT is a
separate group without rows) or no end at all -> dropped and counted. A damaged file: every
transaction that ended before the damage is handed on, the damage goes to the report, and the
next file starts afresh.

Yields ``Rows`` (one rows event's decoded rows with their transaction) and ``Statement``
(statement-format DML, DDL) values; the ``Report`` collects what was not exported.

The C walk (with ``binlogkit._rowarrow``): inside an open transaction of a binlog, the framing
loop's taker (``_rowarrow.take_plain``) frames the Table_map, rows, Annotate_rows and
Rows_query events in C and spools them as one ``_Run`` (the grouping scan's accounting of them
done in one step, ``_Walk._taker``); when the transaction commits, ``_rowarrow.replay_run``
appends the run's rows events straight to the export writer's builders (``sink``: the
``DatasetWriter``), and hands every event it does not settle exactly as the Python path would
to that path (``_Walk._event``). The Python path stays the reference: the files written are the
same (tests/test_rowarrow.py).
"""

from __future__ import annotations

from collections import deque
from contextlib import closing

import fnmatch
import os
import struct
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Callable, Generator, Iterator

from ..boundary import QUERY_TYPES, STANDALONE, classify
from ..codecs.fast import Irregular, rows as fast_rows, table_id as fast_table_id
from ..constants import EventType as T
from ..reading.decoder import EventDecoder, Problem
from ..errors import BinlogError
from ..reading.events import Event, decode
from ..codecs.header import HEADER_STRUCT, LEN_HEADER
from ..reading.crc import CRC32
from ..reading.format import Format
from ..reading.reader import RawEvent
from ..reading.source import Input, inputs
from ..rowvalues.arrowcols import C_ROWARROW, ArrowPlan, ImageRows, arrow_inputs, image_rows, plan as arrow_plan
from ..rowvalues.images import RawRows, decode_rows
from ..rowvalues.tables import DELETE, ROWS_TYPES, WRITE, Table
from ..transactions import BODIES, Grouper, Kind, Transaction
from . import ddl

# statements: Query events and Execute_load_query (LOAD DATA logged as a statement, its text a Query's)
STATEMENT_TYPES = QUERY_TYPES | {T.EXECUTE_LOAD_QUERY_EVENT}
KEPT = frozenset(ROWS_TYPES | STATEMENT_TYPES | {T.TABLE_MAP_EVENT, T.TRANSACTION_PAYLOAD_EVENT})
NOT_COMMITTED = {"ROLLBACK", "XA_ROLLBACK", "XA_PREPARE"}
WANT = BODIES | KEPT  # the frames whose bytes the pass needs: the grouping scan's and the kept
SPOOL_MEMORY = 16 << 20
_HEADER = HEADER_STRUCT.unpack_from
_HEAD = struct.Struct("<qIBIIIHi")  # offset, timestamp, type, server id, size, log_pos, flags, format no
_RUN = 0  # the type code of a ``_Run`` spooled on disk (no spooled event has it: they are ``KEPT``)


def op_of(type_code: int) -> str:
    return "insert" if type_code in WRITE else "delete" if type_code in DELETE else "update"


@dataclass
class Rows:
    table: Table
    type_code: int
    rows: list
    trx: Transaction
    file: str
    offset: int
    row_index: int       # of the first row, within the transaction
    size: int = 0        # bytes of the rows event: what its rows weigh in memory, about


@dataclass
class Statement:
    trx: Transaction
    file: str
    offset: int
    database: str
    sql: str
    timestamp: int = 0               # the Query event's: the statement's start time, seconds,
    usec: int | None = None          # and microseconds when the event says them
    time_zone: str | None = None     # the session's (Q_TIME_ZONE_CODE) when the event says it


@dataclass
class Report:
    files: int = 0
    bytes: int = 0
    transactions: int = 0          # committed and exported (inside the filters)
    filtered_out: int = 0          # committed, outside --start/--stop-datetime, --include/--exclude-gtids
    rolled_back: int = 0
    xa_prepared: int = 0
    incomplete: list[dict] = field(default_factory=list)   # no end: a partial transaction (archive's end)
    problems: list[dict] = field(default_factory=list)     # damage, undecodable rows

    def problem(self, exc: BinlogError, kind: str = "damage") -> None:
        self.problems.append({"kind": kind, "file": exc.file, "offset": exc.offset, "event": exc.event_type,
                              "error": type(exc).__name__, "message": exc.message})


class Spool:
    """Events of the open transaction, in memory up to ``limit`` bytes, then in a temporary file."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = SPOOL_MEMORY if limit is None else limit
        self.mem: list[RawEvent | _Run] = []
        self.size = 0
        self.disk: IO[bytes] | None = None
        self.formats: list[Format | None] = []

    def add(self, raw: RawEvent) -> None:
        if self.disk is None and self.size + raw.event_size <= self.limit:
            self.mem.append(raw)
            self.size += raw.event_size
            return
        self.disk_write(_HEAD.pack(raw.offset, raw.timestamp, raw.type_code, raw.server_id, raw.event_size,
                                   raw.log_pos, raw.flags, self._format_no(raw.format)), raw.data)

    def add_run(self, run: "_Run") -> None:
        """Events the C walk framed (``_Run``): in memory (the taker is handed the room left
        there), or once the spool is on disk, there as one record (``_RUN``: type code 0, which no
        spooled event has; the timestamp field says whether its events carry a checked CRC32),
        read back as a ``_Run``: the C walk replays it as it replays the runs in memory."""
        if self.disk is None:
            self.mem.append(run)
            self.size += run.size
            return
        self.disk_write(_HEAD.pack(run.at, int(run.crc_on), _RUN, 0, run.size, 0, 0, self._format_no(run.fmt)),
                        run.data)

    def _format_no(self, fmt: Format | None) -> int:
        if not self.formats or self.formats[-1] is not fmt:
            self.formats.append(fmt)
        return len(self.formats) - 1

    def disk_write(self, head: bytes, data: bytes) -> None:
        if self.disk is None:
            self.disk = tempfile.TemporaryFile(prefix="binlogkit-export-")
        self.disk.write(head)
        self.disk.write(data)

    def items(self, name: str) -> Iterator[Any]:
        """The spooled events in order: ``RawEvent`` values and the C walk's ``_Run`` values."""
        yield from self.mem
        if self.disk is not None:
            self.disk.seek(0)
            while True:
                head = self.disk.read(_HEAD.size)
                if not head:
                    break
                at, ts, code, sid, size, log_pos, flags, f = _HEAD.unpack(head)
                if code == _RUN:
                    yield _Run(at, self.disk.read(size), self.formats[f], bool(ts))
                    continue
                yield RawEvent(at, ts, code, sid, size, log_pos, flags, self.disk.read(size), self.formats[f],
                               None, name)

    def clear(self) -> None:
        self.mem, self.size = [], 0
        if self.disk is not None:
            self.disk.close()
            self.disk, self.formats = None, []


class _Run:
    """A run of Table_map and rows events (and the Annotate_rows / Rows_query among them, which
    the Python path does not spool) of the open transaction that the C walk
    (``_rowarrow.take_plain``) framed: their bytes, contiguous from offset ``at``, the format in
    force and whether they carry a (checked) CRC32."""

    __slots__ = ("at", "data", "fmt", "crc_on", "size")

    def __init__(self, at: int, data: bytes, fmt: Format | None, crc_on: bool) -> None:
        self.at, self.data, self.fmt, self.crc_on, self.size = at, data, fmt, crc_on, len(data)

    def events(self, name: str) -> Iterator[RawEvent]:
        """The run's kept events as ``RawEvent`` values, as the framing loop would have made them."""
        data, p, ok = self.data, 0, True if self.crc_on else None
        while p < len(data):
            ts, code, sid, size, log_pos, flags = _HEADER(data, p)
            if code in KEPT:  # (not Annotate_rows, Rows_query: the grouping scan's alone)
                yield RawEvent(self.at + p, ts, code, sid, size, log_pos, flags, data[p:p + size], self.fmt, ok, name)
            p += size


@dataclass(frozen=True)
class Filters:
    tables: tuple[str, ...] = ()                       # "db.table" patterns (shell wildcards)
    start: datetime | None = None
    stop: datetime | None = None
    gtids: Callable[[str], bool] | None = None
    schema: dict = field(default_factory=dict)         # ddl.index of a --schema file
    exclude_gtids: Callable[[str], bool] | None = None  # a transaction without a GTID is never excluded

    def table_wanted(self, table: Table) -> bool:
        if not self.tables:
            return True
        name = f"{table.db}.{table.name}"
        return any(fnmatch.fnmatchcase(name, p) for p in self.tables)

    def db_wanted(self, db: str) -> bool:
        return not self.tables or any(fnmatch.fnmatchcase(db, p.split(".", 1)[0]) for p in self.tables)

    def trx_owned(self, t: Transaction) -> bool:
        """Whether the walk owns ``t``: always, but for a walk of a range of a file (a Spark
        partition, ``spark.ranges.InRange``), which owns the transactions that begin in it and
        neither exports nor counts the one before it (from the event it starts at)."""
        return True

    def trx_wanted(self, t: Transaction) -> bool:
        if self.start is not None and t.first_timestamp < self.start.timestamp():
            return False
        if self.stop is not None and t.first_timestamp >= self.stop.timestamp():
            return False
        if self.gtids is not None and (t.gtid is None or not self.gtids(t.gtid)):
            return False
        if self.exclude_gtids is not None and t.gtid is not None and self.exclude_gtids(t.gtid):
            return False
        return True


class _Walk:
    """The state carried from file to file: the grouping scan, the decoder (table maps), the
    spool (a transaction may continue into the next file) and the file being read."""

    def __init__(self, filters: Filters, report: Report, take: Callable[[Rows], bool] | None = None,
                 sink: Any = None, keep: dict | None = None) -> None:
        self.filters, self.report, self.take = filters, report, take
        # the writer the C walk appends rows events to (``DatasetWriter``: ``c_target`` ...), with
        # its targets (id of a src Table -> the list ``_rowarrow.replay_run`` shares) of the day ``c_day``
        self.sink: Any = sink if take is not None and getattr(C_ROWARROW, "replay_run", None) is not None else None
        self.targets: dict = {}
        self.c_day: int | None = None
        self.c_fmt: tuple = (object(),)  # (format, replay_run's arguments of it)
        self.g = Grouper(keep_gtids=False)
        self.dec = _Decoder(strict=True, rows=True)
        self.spool = Spool()
        self.path = ""
        self.damaged = False
        self.applied: dict[int, Table] = {}
        self.scratch: dict[bytes, object] = {}  # widths -> a C Builder that counts rows (nothing kept)
        if keep is not None:    # what a walk before this one learnt (a follower's looks): table maps, builders
            self.dec.known = keep.setdefault("tables", self.dec.known)
            self.scratch = keep.setdefault("scratch", self.scratch)

    def reset(self) -> None:
        """After damage: the next file starts with no open transaction and no table maps."""
        for t in self.g.finish():
            if t.complete:
                continue
            self.report.problems.append({"kind": "cut", "file": t.start_file, "offset": t.start_offset,
                                         "event": None, "error": "Incomplete",
                                         "message": f"transaction {t.gtid or ''} cut by the damage: not exported"})
        self.g = Grouper(keep_gtids=False)
        self.dec = _Decoder(strict=True, rows=True)
        self.spool.clear()

    def finalize(self, t: Transaction) -> Iterator[Rows | Statement]:
        try:
            if not self.filters.trx_owned(t) or (t.kind == Kind.CONTINUATION and not t.complete):
                return
            if not t.complete:
                self.report.incomplete.append({"gtid": t.gtid, "file": t.start_file, "offset": t.start_offset,
                                               "end_offset": t.end_offset, "events": t.events})
                return
            seen = getattr(self.filters, "seen", None)   # told every complete transaction (a lake's GTID state)
            if seen is not None:
                seen(t)
            if t.terminator in NOT_COMMITTED:
                if t.terminator == "XA_PREPARE":
                    self.report.xa_prepared += 1
                else:
                    self.report.rolled_back += 1
                return
            if not self.filters.trx_wanted(t):
                self.report.filtered_out += 1
                return
            self.report.transactions += 1
            yield from self._replay(t)
        finally:
            self.spool.clear()

    def _table(self, table: Table) -> Table:
        if not self.filters.schema or table.column_names:
            return table
        out = self.applied.get(id(table))
        if out is None:
            if len(self.applied) > 4096:
                self.applied.clear()
            out = self.applied[id(table)] = ddl.apply(table, self.filters.schema)
            object.__setattr__(out, "_source", table)  # keeps ``table`` alive: its id stays its own
        return out

    def _replay(self, t: Transaction) -> Iterator[Rows | Statement]:
        row_index = 0
        sink, targets = self.sink, self.targets
        if sink is not None:
            day = t.last_timestamp // 86400
            if self.c_day != day:  # the targets are parts of one day
                targets.clear()
                self.c_day = day
        for item in self.spool.items(self.path):
            if type(item) is _Run:
                if sink is not None:
                    row_index = yield from self._replay_run(item, t, row_index)
                    continue
                raws: Any = item.events(self.path)
            else:
                raws = (item,)
            for raw in raws:
                for got in self._event(raw, t, row_index):
                    yield got
                    if isinstance(got, Rows):
                        row_index += len(got.rows)
                        if sink is not None:
                            self._target(got)
            if sink is not None:
                sink.c_refresh(targets)  # the Python path may have changed the writer's parts

    def _target(self, got: Rows) -> None:
        """After the Python path put a rows event into the writer's builder (``take``): its table's
        target for the C walk (``sink.c_target``), where the next events may go that way."""
        rows = got.rows
        if isinstance(rows, ImageRows) and rows.taken:
            target = self.sink.c_target(got)
            if target is not None:
                self.targets[id(rows.table)] = target  # (the target holds the table: its id stays)

    def _replay_run(self, run: _Run, t: Transaction, row_index: int) -> Generator[Rows | Statement, None, int]:
        """A ``_Run`` of a committed transaction through the C walk (``_rowarrow.replay_run``):
        the table maps met before and the rows events of tables with a target go straight into
        the writer's builders, with the writer's bookkeeping (``sink.c_apply``) and its flushes at
        the same events as event by event; any other event goes the Python way (``_event``), after
        which the targets that still hold are kept (``sink.c_refresh``) and its table's is made.
        Returns the row index after the run."""
        sink, targets = self.sink, self.targets
        fmt = run.fmt
        if self.c_fmt[0] is not fmt:
            phl = [(-1 if v is None else v) for v in ((fmt.post_header_length(c) if fmt else None)
                                                       for c in (_TABLE_MAP, _WRITE_V1, _WRITE_V2))]
            self.c_fmt = (fmt, max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER,
                          fmt.len_checksum if fmt else 0, *phl, fmt.flavor if fmt else None)
        _, hl, lc, phl_tm, phl_v1, phl_v2, flavor = self.c_fmt
        name = self.path
        consts = ("insert", "update", "delete", t.gtid, t.server_id, t.last_timestamp, name.rsplit("/", 1)[-1])
        data, p, replay = run.data, 0, C_ROWARROW.replay_run
        ok = True if run.crc_on else None
        while p < len(data):
            p, row_index, why, target = replay(data, p, hl, lc, phl_tm, phl_v1, phl_v2, flavor, self.dec.known,
                                               self.dec.tables, targets, consts, run.at, row_index, sink.c_state())
            sink.c_apply(targets)
            if why == 2:
                sink.c_flush(target)
                sink.c_refresh(targets, flushed=True)
            if why != 1:
                continue
            ts, code, sid, size, log_pos, flags = _HEADER(data, p)
            raw = RawEvent(run.at + p, ts, code, sid, size, log_pos, flags, data[p:p + size], fmt, ok, name)
            p += size
            for got in self._event(raw, t, row_index):
                yield got
                if isinstance(got, Rows):
                    row_index += len(got.rows)
                    self._target(got)
            sink.c_refresh(targets)  # the Python path may have changed the writer's parts
        return row_index

    def _event(self, raw: RawEvent, t: Transaction, row_index: int) -> Iterator[Rows | Statement]:
        """One spooled event of a committed transaction: its ``Rows`` (``row_index``: of its
        first row) or ``Statement``, what went wrong to the report."""
        lean = C_ROWARROW is not None
        name = raw.file or self.path
        if lean:  # the common events without the decoder's generic steps (the same outcome)
            code = raw.type_code
            if code == _TABLE_MAP and self._known_map(raw):
                return
            if code in LEAN_ROWS:
                got = self._lean_rows(raw, t, name, row_index)
                if isinstance(got, Rows):
                    yield got
                    return
                if got is _SKIP:
                    return
        for ev in self.dec.each(raw, name, payloads=True):
            if isinstance(ev, Problem):
                self.report.problem(ev.error, "rows")
                continue
            code = ev.raw.type_code
            if code in ROWS_TYPES and ev.table is not None:
                if not self.filters.table_wanted(ev.table):
                    continue
                if isinstance(ev.rows, RawRows):
                    self.report.problem(BinlogError(f"rows of `{ev.table.db}`.`{ev.table.name}` not decoded: "
                                                    f"{ev.rows.reason}", file=name, offset=ev.raw.offset,
                                                    event_type=ev.raw.type_name), "rows")
                    continue
                table = self._table(ev.table)
                if ev.rows is _LATER:
                    try:
                        rows = self._rows_of(ev, table)
                    except BinlogError as exc:
                        self.report.problem(exc.with_context(file=name, offset=ev.raw.offset,
                                                             event_type=ev.raw.type_name), "rows")
                        continue
                    if isinstance(rows, RawRows):
                        self.report.problem(BinlogError(f"rows of `{ev.table.db}`.`{ev.table.name}` not decoded: "
                                                        f"{rows.reason}", file=name, offset=ev.raw.offset,
                                                        event_type=ev.raw.type_name), "rows")
                        continue
                else:
                    rows = ev.rows or []
                yield Rows(table, code, rows, t, name, ev.raw.offset, row_index, ev.raw.event_size)
                row_index += len(rows)
            elif code in STATEMENT_TYPES:
                q = ev.fields.get("query", "")
                sql = q if isinstance(q, str) else bytes(q).decode("utf-8", "replace")
                if classify(sql[:32].strip().upper()) != "statement":
                    continue
                db = ev.fields.get("db", "")
                db = db if isinstance(db, str) else bytes(db).decode("utf-8", "replace")
                if self.filters.db_wanted(db):
                    sv = ev.fields.get("status_vars") or {}
                    usec = sv.get("microseconds", sv.get("hrnow"))
                    yield Statement(t, name, ev.raw.offset, db, sql, ev.raw.timestamp,
                                    usec if isinstance(usec, int) else None, sv.get("time_zone"))

    def _known_map(self, raw: RawEvent) -> bool:
        """A table map the decoder has met (servers repeat it before every statement): its
        Table registered under the event's table id, without decoding it again (the decoder's
        ``register`` outcome); False for a new one (the decoder's)."""
        fmt = raw.format
        body = raw.body
        table = self.dec.known.get((fmt.flavor if fmt else None, body))
        if table is None:
            return False
        try:
            table_id = fast_table_id(body, fmt.post_header_length(raw.type_code) if fmt else None)
        except Irregular:
            return False
        self.dec.tables[table_id] = table
        return True

    def _lean_rows(self, raw: RawEvent, t: Transaction, name: str, row_index: int) -> Rows | object | None:
        """A rows event whose images the C Arrow path takes whole, as ``Rows`` (``_SKIP``: its
        table is filtered out); None where anything is not plain (the decoder's path, which
        decodes it again and reports what went wrong)."""
        fmt = raw.format
        code = raw.type_code
        try:
            parsed = fast_rows(raw.body, code, fmt.post_header_length(code) if fmt else None)
        except Irregular:
            return None
        src = self.dec.tables.get(parsed["table_id"])
        if src is None:
            return None
        if not self.filters.table_wanted(src):
            return _SKIP
        table = self._table(src)
        try:
            if self.take is not None:  # the consumer's builder first: the images decoded once, not counted first
                ap = self._plan(table)
                args = None if ap is None else arrow_inputs(src, parsed, code, ap)
                if ap is not None and args is not None:
                    images: Any = ImageRows(src, parsed, code, -1, args, ap)
                    r = Rows(table, code, images, t, name, raw.offset, row_index, raw.event_size)
                    if self.take(r):
                        return r
            lazy = self._images(src, table, parsed, code)
        except BinlogError:
            return None
        if lazy is None:
            return None
        return Rows(table, code, lazy, t, name, raw.offset, row_index, raw.event_size)

    def _plan(self, table: Table) -> ArrowPlan | None:
        return self._cached(table)[0]

    def _images(self, src: Table, table: Table, fields, code: int):
        """``ImageRows`` of an event when C takes every image, else None (``table``: ``src``
        with the --schema file applied, whose layout the plan follows)."""
        ap, scratch = self._cached(table)
        if ap is None:
            return None
        return image_rows(src, fields, code, ap, scratch)

    def _cached(self, table: Table) -> tuple:
        """(the table's ArrowPlan or None, a scratch Builder of its widths that counts rows)."""
        cached = table.__dict__.get("_export_images")  # (plan, scratch builder), made once per table map
        if cached is None or cached[2] is not self.scratch:
            from .schema import layout

            lay = layout(table)
            ap = arrow_plan(table, [c.arrow for c in lay.columns])
            scratch = None
            if ap is not None:
                scratch = self.scratch.get(ap.widths)
                if scratch is None:
                    scratch = self.scratch[ap.widths] = C_ROWARROW.Builder(ap.widths)
            cached = (ap, scratch, self.scratch)
            object.__setattr__(table, "_export_images", cached)
        return cached[0], cached[1]

    def _rows_of(self, ev, table: Table):
        """The event's rows: kept as images for the C Arrow path (``ImageRows``) when its plan
        settles them, else decoded (``decode_rows``, the reference)."""
        lazy = self._images(ev.table, table, ev.parsed, ev.raw.type_code)
        return lazy if lazy is not None else decode_rows(ev.table, ev.parsed, ev.raw.type_code)

    def _taker(self, path: str, pending: deque, flush: Callable[[], None], fmt_box: list):
        """The framing loop's taker (``_rowarrow.take_plain``): inside an open transaction of a
        binlog (not a relay log: its source positions are the grouping scan's), the Table_map
        and rows events that follow are framed in C and spooled as one ``_Run``; the grouping
        scan's accounting of them (``FileInfo``, the transaction, the last event) is done here,
        in one step, as ``Grouper.feed_frames`` does it event by event. None without the C
        accelerator."""
        take = getattr(C_ROWARROW, "take_plain", None)
        if take is None:
            return None
        base = os.path.basename(path)
        spool = self.spool
        crc = CRC32

        def taker(buf: bytearray, rel: int, filled: int, at: int, crc_on: bool) -> tuple[int, int]:
            g = self.g
            t = g.cur
            if t is None or g.state & STANDALONE:
                return rel, at
            info = g.files[-1]
            if (info.relay if g.relay_forced is None else g.relay_forced) or not info.transactions:
                return rel, at  # a relay log; or a transaction from the file before (feed_frames' own_source)
            got = take(buf, rel, filled, at, crc_on, crc, spool.limit - spool.size if spool.disk is None else _ANY)
            k = got[2]
            if not k:
                return rel, at
            if pending:  # the frame before is placed (in the open transaction): spooled first
                flush()
            new_rel, end, _, first_ts, last_nz, last_ts, last_code, last_at, data = got
            spool.add_run(_Run(at, data, fmt_box[0], crc_on))
            info.events += k
            info.end_offset = end
            if crc_on:
                info.checksummed += k
            if last_nz >= 0:
                if info.first_timestamp is None:
                    info.first_timestamp = first_ts
                info.last_timestamp = last_nz
            g.last_whole = (path, end)
            g.last_event = {"file": path, "offset": last_at, "end": end, "type": last_code, "source_file": base,
                            "source_end": end}
            t.events += k
            t.bytes += end - at
            t.end_file, t.end_offset, t.last_timestamp = path, end, last_ts
            t.source_end = end
            return new_rel, end

        return taker

    def one_file(self, inp: Input) -> Iterator[Rows | Statement]:
        """One pass over the input's frames: the grouping scan reads them (``feed_frames``); a
        kept frame waits in ``pending`` until the scan has placed it (the transaction it closes,
        or the open one), then goes to the spool. One framing of the file where there were two
        (0.3 s of 3 s on the 210 MB bench binlog)."""
        path = inp.name
        self.path, self.damaged = path, False
        del self.g.files[1:]  # what the grouping scan keeps per file: the first (it asks) and the open one
        pending: deque = deque()
        kept = KEPT
        fmt_box: list = [None]  # the format in force (the last frame's): the taker's runs carry it
        taker = self._taker(path, pending, lambda: spool_until(None), fmt_box)

        def tap() -> Iterator[tuple]:
            for f in inp.frames(want=WANT, records=False, taker=taker):
                fmt_box[0] = f[9]
                if pending:  # the scan has placed the frame before: in the open transaction (the spool's)
                    spool_until(None)
                if f[1] in kept:
                    pending.append(f)
                yield f

        def spool_until(end: int | None) -> None:
            while pending and (end is None or pending[0][0] + pending[0][4] <= end):
                at, code, ts, sid, size, log_pos, flags, data, ok, fmt = pending.popleft()
                self.spool.add(RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, ok, path))

        with closing(self.g.feed_frames(path, tap())) as trx:
            try:
                for t in trx:
                    if t.end_file == path:  # else it ended in a file before: its events are spooled
                        spool_until(t.end_offset or 0)
                    yield from self.finalize(t)
            except BinlogError as exc:
                self.report.problem(exc.with_context(file=path))
                self.damaged = True
                return
            spool_until(None)


_ANY = 1 << 62     # the taker's room once the spool is on disk (a run is written there as it comes)
_LATER = object()  # a rows event's rows, left to _Walk._rows_of
_SKIP = object()   # a rows event of a table the filters leave out
_TABLE_MAP = int(T.TABLE_MAP_EVENT)
_WRITE_V1, _WRITE_V2 = int(T.WRITE_ROWS_EVENT_V1), int(T.WRITE_ROWS_EVENT)  # post-header lengths of v1 / v2
# the rows events ``_Walk._lean_rows`` takes: v1 and v2 write / update / delete (not pre-GA,
# MariaDB's compressed ones, MySQL's partial JSON updates: the decoder's path)
LEAN_ROWS = frozenset(int(c) for c in (T.WRITE_ROWS_EVENT_V1, T.UPDATE_ROWS_EVENT_V1, T.DELETE_ROWS_EVENT_V1,
                                       T.WRITE_ROWS_EVENT, T.UPDATE_ROWS_EVENT, T.DELETE_ROWS_EVENT))


class _Decoder(EventDecoder):
    """The decoder with table maps, leaving rows events' images undecoded (``_LATER``) when the
    C Arrow accelerator is built: ``_Walk._rows_of`` keeps them as images or decodes them."""

    def one(self, raw, tm=None):
        if C_ROWARROW is None or raw.type_code not in ROWS_TYPES or tm is not None:
            return super().one(raw, tm)
        ev = decode(raw, strict=self.strict)
        table = self.tables.get(ev.parsed["table_id"]) if ev.parsed is not None else None
        if table is None:
            return ev
        return Event(ev.raw, ev.codec, ev.parsed, ev.fields, _LATER, table, None)  # type: ignore[arg-type]


def committed_changes(paths, filters: Filters, report: Report, *,
                      take: Callable[[Rows], bool] | None = None, sink: Any = None,
                      keep: dict | None = None) -> Iterator[Rows | Statement]:
    """``Rows`` and ``Statement`` values of the committed transactions of ``paths`` (paths or
    ``Input`` values with their keys, expanded by ``files.expand_paths``), in binlog order; ``report`` gets what was not exported. An
    input that cannot be opened raises ``OSError`` (the caller's usage error).

    ``take``: the consumer's C Arrow builder, offered a rows event's images before they are
    counted (``DatasetWriter.take``): True when it appended them all (the ``ImageRows`` is then
    ``taken``, its ``n`` set, and the ``Rows`` comes next); False leaves them to the usual path
    (counted by C, or decoded in Python). Each image is then decoded once, not twice.

    ``sink``: the ``DatasetWriter`` whose ``take`` that is (with ``take`` only): the rows events
    the C walk settles go into its builders, with its bookkeeping, without a ``Rows`` value
    (``_Walk._replay_run``); what it writes is the same as from the ``Rows``.

    ``keep``: a dict the caller keeps from one call to the next over the same files (a
    follower's looks): the table maps decoded (by their bytes) and the counting builders are
    reused instead of made again by every call."""
    walk = _Walk(filters, report, take, sink, keep)
    for inp in inputs(paths):
        report.files += 1
        report.bytes += inp.size()
        yield from walk.one_file(inp)
        if walk.damaged:
            walk.reset()
    for t in walk.g.finish():
        yield from walk.finalize(t)


def checked_inputs(paths, *, series: str | None = None, one_series: bool = False) -> list[Input]:
    """The expanded inputs (paths, or ``Input`` values: their keys kept), in binlog order, each
    file once; ``OSError`` naming the first that does not exist or cannot be read;
    ``NotRegularFileError`` for a FIFO, a device or a socket (reading it could block).
    ``series``: only the files of that series (``BASE`` of ``BASE.NNNNNN``); ``one_series``
    (a mirror, which applies one server's changes in its order): inputs of several series, or
    of one series from several folders, are a ``UsageError`` naming them (``one_series_of``)."""
    from ..reading.files import input_size, is_url, refuse_irregular

    paths = list(paths)
    found = inputs(paths)
    if series is not None or one_series:
        found = one_series_of(found, series, one=one_series)
    out = [i.name for i in found]
    if not out:
        raise FileNotFoundError(f"no binlog or relay log in {', '.join(map(str, paths))}: looked for *.index files "
                                "and files named like NAME.000001 (also .xz, .gz, .bz2)")
    refuse_irregular(out)
    for p in out:
        if not is_url(p):
            if not os.path.isfile(p):
                raise FileNotFoundError(f"{p}: no such file")
            if not os.access(p, os.R_OK):
                raise PermissionError(f"{p}: not readable")
        else:
            input_size(p)
    return found


def one_series_of(found: list[Input], series: str | None, *, one: bool = True) -> list[Input]:
    """The inputs of one series: those of ``series`` when it is given (none: ``UsageError``
    naming the series there are), else ``found`` when ``one`` and they are one series of one
    folder (several: ``UsageError`` naming them and ``--series``)."""
    from ..errors import UsageError
    from ..reading.names import series_of, strip_compressed

    def base(i: Input) -> str | None:
        s = series_of(i.name)
        return s[0] if s else None

    def folder(i: Input) -> str:
        return i.name.rstrip("/").rpartition("/")[0] or "."

    bases: dict[str | None, list[Input]] = {}
    for i in found:
        bases.setdefault(base(i), []).append(i)
    held = ", ".join(f"{b} ({len(v)} file{'s' if len(v) != 1 else ''})"
                     for b, v in sorted(bases.items(), key=lambda kv: str(kv[0])) if b is not None)
    if series is not None:
        if series not in bases:
            raise UsageError(f"--series {series}: no file {series}.NNNNNN in the inputs (they hold: {held or 'no series'})")
        found = bases[series]
    elif one and None in bases and len(found) > 1:
        raise UsageError(f"{bases[None][0].name} is not named like a binlog (NAME.NNNNNN) and other files are given: "
                         "a mirror applies one server's changes in binlog order, which its name does not give")
    elif one and len(bases) > 1:
        raise UsageError(f"the inputs hold several binlog series: {held}; a mirror applies one server's changes "
                         "in its order: choose one with --series NAME (or give the files or the .index of one series)")
    if one:
        where: dict[str, list[str]] = {}
        for i in found:
            where.setdefault(strip_compressed(i.basename), []).append(folder(i))
        twice = next(((n, f) for n, f in sorted(where.items()) if len(f) > 1), None)
        if twice is not None:
            raise UsageError(f"{twice[0]} is given from several folders ({', '.join(twice[1])}): two servers' "
                             "series of one name, or two copies; a mirror reads one: give one folder")
    return found

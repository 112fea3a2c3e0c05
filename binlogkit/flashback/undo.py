"""One transaction in, its undo out: the events to write, built with the codecs.

An undo transaction is::

    Query BEGIN                        (the original's, or built; its GTID event is not carried: see below)
    Table_map   of the last rows event  \\
    undo of the last rows event          |  every rows event of the original, last first, each a
    Table_map   of the one before it     |  statement of its own (STMT_END_F) behind its table map
    undo of the one before it           /
    ...
    the original's terminator          (Xid with its xid, or Query COMMIT)

**No GTID events.** A flashback file is replayed by a client (``mariadb-binlog FILE | mariadb``,
``mysqlbinlog FILE | mysql``), which turns a GTID event into ``SET gtid_seq_no=N`` (MariaDB) or
``SET GTID_NEXT='uuid:N'`` / ``'ANONYMOUS'`` (MySQL). The original's GTID is already in the
server's history: MySQL would skip the undo as already applied, MariaDB would log a duplicate
(refused under ``gtid_strict_mode``). A new number cannot be chosen from the files either (the
server's history has moved on since), an ``ANONYMOUS`` one is refused by a gtid_mode=ON MySQL
(ERROR 1782) and a numbered one by a gtid_mode=OFF one (ERROR 1781). So the undo transactions
open with ``BEGIN`` and the server gives each the next GTID of its own (or none, gtid_mode=OFF),
as it does for any client transaction — the way ``mariadb-binlog --flashback`` leaves the
numbering to the server too.

MySQL needs one line more: the client-side ``BINLOG`` of the Format_description makes the
session's GTID_NEXT "not yet determined", and the first ``BEGIN`` without a GTID event before it
then runs as ANONYMOUS (ERROR 1782 under gtid_mode=ON). A MySQL undo binlog therefore holds one
Query event right after the Format_description, ``/*!50700 SET @@SESSION.GTID_NEXT='AUTOMATIC' */``
(``GTID_NEXT_AUTOMATIC``, ``flavor.replay_needs_gtid_next``): ``mysqlbinlog`` prints it as it is
and the server numbers what follows, under gtid_mode ON or OFF (``mysqlbinlog --skip-gtids``
prints the same line itself, and still works). Flashing back such a file passes over that line.

Annotate_rows / Rows_query (the original statement's text) are left out: they describe the
change, not its undo. Statement events (DDL, statement-format DML and their Intvar / Rand /
User_var preludes) are refused unless ``skip_statements``, and then left out.

The events of a transaction are walked forward once to find table maps, rows events and the
terminator (keeping only offsets), then the rows events are read again from the input one at
a time, last first: memory holds one event, whatever the size of the transaction. The rows
events inside a MySQL Transaction_payload cannot be read again from the input (they are
compressed): they are spilled to a temporary file past 32 MB (``_Spill``).
"""

from __future__ import annotations

import fnmatch
import re
import tempfile
from array import array
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Iterator

from ..boundary import QUERY_ENDS, classify, query_text, read_gtid
from ..codecs.header import HEADER_STRUCT
from ..codecs.statement import QueryBody
from ..constants import GTID_TYPES, PRELUDE, QUERY_TYPES, EventType as T
from ..errors import BinlogError, BodyLengthError
from ..reading.events import decode, payload_events
from ..reading.format import Format
from ..reading.reader import RawEvent
from ..rowvalues.tables import Table, table_from_map
from .invert import ROWS_TYPES, MinimalImage, invert_rows
from .plan import ROW_FORMAT, FlashbackRefused
from .source import EventFile

if TYPE_CHECKING:
    from ..reading.source import Input

DROPPED = {T.GTID_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.GTID_EVENT,
           T.ANNOTATE_ROWS_EVENT, T.ROWS_QUERY_LOG_EVENT, T.TRANSACTION_CONTEXT_EVENT,
           T.IGNORABLE_LOG_EVENT}


@dataclass(frozen=True)
class Out:
    """One event to write: type, body, and the header fields it keeps from the original."""
    type_code: int
    body: bytes
    timestamp: int
    server_id: int
    flags: int = 0
    rows: list | None = None      # undo rows event: [(image, other image)], for --sql
    table: Table | None = None
    gtid: str | None = None       # on an undo's BEGIN: the GTID of the transaction it undoes (--sql's comment)
    present: tuple[int, ...] | None = None   # undo rows event: the columns its images hold (None: all)


@dataclass(frozen=True)
class Filters:
    """--database and --table: a table is undone when its database is one of ``databases`` (if
    any are given) and its ``db.table`` matches one of ``tables`` (if any); shell wildcards."""
    databases: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()      # "db.table" patterns
    skip_statements: bool = False
    generated: frozenset[tuple[str, str, str]] = frozenset()   # (db, table, column): --generated

    def generated_of(self, table: Table) -> frozenset[str]:
        return frozenset(c for d, t, c in self.generated if (d, t) == (table.db, table.name))

    @property
    def filtered(self) -> bool:
        return bool(self.databases or self.tables)

    def wants(self, table: Table) -> bool:
        if self.databases and not any(fnmatch.fnmatchcase(table.db, d) for d in self.databases):
            return False
        name = f"{table.db}.{table.name}"
        return not self.tables or any(fnmatch.fnmatchcase(name, p) for p in self.tables)


def session_query(text: str, timestamp: int, server_id: int, fmt: Format) -> Out:
    """A Query event of ``text`` with no database and no status variables (a built ``BEGIN``,
    the ``GTID_NEXT`` line)."""
    body = QueryBody.build({"thread_id": 0, "exec_time": 0, "len_db": 0, "error_code": 0, "len_status_vars": 0,
                            "load": None, "post_header_extra": b"", "status_vars": b"", "db": b"",
                            "query": text.encode()},
                           len_body=0, type_code=T.QUERY_EVENT, post_header_len=fmt.post_header_length(T.QUERY_EVENT))
    return Out(T.QUERY_EVENT, body, timestamp, server_id)


def begin_query(timestamp: int, server_id: int, fmt: Format) -> Out:
    return session_query("BEGIN", timestamp, server_id, fmt)


# The one statement of a MySQL undo binlog outside its transactions, right after the
# Format_description (``flavor.replay_needs_gtid_next``): replayed by ``mysqlbinlog FILE | mysql``
# it lets the server give each undo transaction a GTID of its own (gtid_mode=ON) or none (OFF).
# In a versioned comment that MySQL 5.7 and later run, and MariaDB skips (it ignores /*!50700 to
# /*!99999: MySQL-only syntax): a MySQL undo replayed into a MariaDB server does not stop on it.
GTID_NEXT_AUTOMATIC = "/*!50700 SET @@SESSION.GTID_NEXT='AUTOMATIC' */"


def is_gtid_next_automatic(statement: str) -> bool:
    """Whether a statement is the GTID_NEXT line of an undo binlog (a session setting: no change)."""
    return " ".join(statement.split()) == GTID_NEXT_AUTOMATIC


def read_event(src: EventFile, at: int, fmt: Format, name: str) -> RawEvent:
    return src.event(at, fmt, name)


def _query_text(ev) -> str:
    q = ev.fields.get("query", "")
    return q if isinstance(q, str) else bytes(q).decode("utf-8", "replace")


def query_says(raw: RawEvent) -> str:
    """What a Query event means to the undo, by the boundary machine's words
    (``boundary.classify``): ``open`` (BEGIN), ``end`` (COMMIT, ROLLBACK; ROLLBACK TO too, as
    ever: a later terminator replaces it), ``xa`` (any XA statement: refused) or ``statement``."""
    phl = raw.format.post_header_length(T.QUERY_EVENT) if raw.format else None
    q = query_text(raw.body, raw.type_code, phl)
    if q.startswith("XA"):
        return "xa"
    said = classify(q)
    if said == "begin":
        return "open"
    if said in QUERY_ENDS or q.startswith("ROLLBACK"):
        return "end"
    return "statement"


def statement_text(fh: EventFile, name: str, start: int, end: int, fmt: Format) -> str:
    """The statement of a one-statement transaction at [start, end) (its first Query event that
    is not BEGIN), for the refusal that names it."""
    return statement_of(fh, name, start, end, fmt)[0][:1000]


def statement_of(fh: EventFile, name: str, start: int, end: int, fmt: Format) -> tuple[str, str]:
    """The whole statement of a one-statement transaction at [start, end) and its session's
    default database ("" when none)."""
    at = start
    while at < end:
        raw = read_event(fh, at, fmt, name)
        if raw.type_code in QUERY_TYPES:
            ev = decode(raw)
            q = _query_text(ev).strip()
            if not q.upper().startswith("BEGIN"):
                db = ev.fields.get("db", "")
                return q, db if isinstance(db, str) else bytes(db).decode("utf-8", "replace")
        at += raw.event_size
    return "?", ""


SPILL = 32 << 20   # rows events of a Transaction_payload kept in memory up to this, then in a temporary file


class _Spill:
    """The rows events of a transaction's Transaction_payload(s), read back last first: in a
    spooled temporary file (memory up to ``SPILL`` bytes, then disk), by a negative key."""

    def __init__(self) -> None:
        self.file: IO[bytes] | None = None
        self.at, self.size = array("q"), array("q")
        self.fmt: Format | None = None

    def add(self, raw: RawEvent) -> int:
        if self.file is None:
            self.file = tempfile.SpooledTemporaryFile(SPILL, prefix="binlogkit-flashback-")
        self.fmt = raw.format
        self.at.append(self.file.seek(0, 2))
        self.size.append(len(raw.data))
        self.file.write(raw.data)
        return -len(self.at)

    def get(self, key: int, outer: int, name: str) -> RawEvent:
        i = -key - 1
        if self.file is None:  # keys < 0 only come from add()
            raise BinlogError(f"internal: spilled rows event {key} asked for before any was spilled")
        self.file.seek(self.at[i])
        data = self.file.read(self.size[i])
        ts, code, sid, size, log_pos, flags = HEADER_STRUCT.unpack_from(data, 0)
        return RawEvent(outer, ts, code, sid, size, log_pos, flags, data, self.fmt, None, name)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class _Walk:
    """The forward walk of one transaction: table maps by id, rows events by offset (or, inside
    a Transaction_payload, spilled: ``_Spill``), the first timestamp and the terminator."""

    def __init__(self) -> None:
        self.maps: dict[int, tuple[bytes, Table, RawEvent]] = {}
        self.rows = array("q")            # offsets of rows events in the input; < 0: in the spill
        self.spill = _Spill()
        self.payload_at = 0               # the Transaction_payload's offset, for messages
        self.terminator: RawEvent | None = None
        self.timestamp = 0
        self.server_id = 0
        self.begin: RawEvent | None = None
        self.skipped: list[tuple[int, str]] = []   # (offset, text) of statements left out (skip_statements)
        self.gtid: str | None = None
        self.xa: list[tuple[int, str, str]] = []   # (offset, text, event type) of the XA statements

    def feed(self, raw: RawEvent, filters: Filters, *, inner: bool = False) -> None:
        code = raw.type_code
        if not self.timestamp:
            self.timestamp, self.server_id = raw.timestamp, raw.server_id
        if code in GTID_TYPES:
            value = read_gtid(code, raw.server_id, raw.body, raw.offset)[0]
            self.gtid = None if value is None else str(value)
        if code in DROPPED:
            return
        if code == T.TABLE_MAP_EVENT:
            ev = decode(raw)
            table = table_from_map(ev.parsed, raw.format.flavor if raw.format else None)
            self.maps[table.table_id] = (raw.body, table, raw)
            return
        if code in ROWS_TYPES:
            self.rows.append(self.spill.add(raw) if inner else raw.offset)
            return
        if code == T.XID_EVENT:
            self.terminator = raw
            return
        if code == T.TRANSACTION_PAYLOAD_EVENT:
            self.payload_at = raw.offset
            for inner_raw in payload_events(decode(raw)):   # decompressed whole by the payload codec
                self.feed(inner_raw, filters, inner=True)
            return
        if code in QUERY_TYPES:
            said = query_says(raw)
            if said == "open":
                self.begin = raw
                return
            if said == "end":
                self.terminator = raw
                return
            q = _query_text(decode(raw)).lstrip()
            if said == "xa":   # refused after the walk, unless it touches no filtered table (XaScope)
                self.xa.append((raw.offset, q, raw.type_name))
                return
            if filters.skip_statements:
                self.skipped.append((raw.offset, q[:1000]))
                return
            raise FlashbackRefused(f"a statement in the range cannot be undone from row images: {q[:200]!r} "
                                   f"(DDL or statement-format DML); --skip-statements leaves statements out; "
                                   f"{ROW_FORMAT}", offset=raw.offset, event_type=raw.type_name)
        if code in PRELUDE or code in (T.BEGIN_LOAD_QUERY_EVENT, T.EXECUTE_LOAD_QUERY_EVENT, T.APPEND_BLOCK_EVENT):
            if filters.skip_statements:
                if code == T.EXECUTE_LOAD_QUERY_EVENT:  # the LOAD DATA statement itself
                    self.skipped.append((raw.offset, _query_text(decode(raw)).strip()[:1000]))
                return
            raise FlashbackRefused(f"a {raw.type_name} event (part of a statement-format statement) is in the "
                                   f"range; --skip-statements leaves statements out; {ROW_FORMAT}",
                                   offset=raw.offset, event_type=raw.type_name)
        if code == T.XA_PREPARE_LOG_EVENT:
            self.xa.append((raw.offset, "XA PREPARE", raw.type_name))
            return
        # anything else inside a transaction (Rotate, heartbeats...) carries no change


_XID = re.compile(r"^XA\s+(?:START|BEGIN|END|PREPARE|COMMIT|ROLLBACK)\s+(.*?)(?:\s+(?:ONE\s+PHASE|JOIN|RESUME|"
                  r"SUSPEND(?:\s+FOR\s+MIGRATE)?))?\s*$", re.I | re.S)


def _xid(text: str) -> str | None:
    m = _XID.match(text.strip())
    return " ".join(m.group(1).split()) if m else None


class XaScope:
    """XA transactions in a filtered undo (--database / --table). An XA transaction cannot be
    flashed back; one whose rows touch no filtered table is left as it is (``apart``), and so is
    the XA COMMIT / ROLLBACK of such a one when both are in the range. A COMMIT / ROLLBACK is
    met first (the walk goes last first): it waits in ``pending`` for its PREPARE part; one
    still waiting at the end is refused (its rows are not in the range: they could be a
    filtered table's)."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, int, str, str]] = {}   # xid -> (file, offset, text, event type)
        self.apart: list[dict] = []

    def take(self, walk: "_Walk", filters: Filters, name: str, start: int, end: int) -> bool:
        """Whether the XA transaction of ``walk`` is left apart (else the caller refuses it)."""
        if not filters.filtered or any(filters.wants(t) for _b, t, _r in walk.maps.values()):
            return False
        xids = {x for _o, text, _t in walk.xa if (x := _xid(text)) is not None}
        if len(xids) != 1:
            return False
        xid = xids.pop()
        if walk.maps:                 # the PREPARE part (or ONE PHASE): its rows are other tables'
            self.pending.pop(xid, None)
        elif xid not in self.pending:
            off, text, kind = walk.xa[-1]
            self.pending[xid] = (name, off, text, kind)
        self.apart.append({"file": name, "start": start, "end": end, "gtid": walk.gtid,
                           "statement": "; ".join(text for _o, text, _t in walk.xa)[:1000]})
        return True

    def check(self) -> None:
        for name, off, text, kind in self.pending.values():
            raise FlashbackRefused(f"an XA transaction ({text[:60]!r}) cannot be flashed back, and the range does "
                                   "not hold the XA PREPARE part it ends, which could change a filtered table",
                                   file=name, offset=off, event_type=kind)


def undo_transaction(fh: EventFile, name: str, start: int, end: int, fmt: Format,
                     filters: Filters, skipped: list[dict] | None = None,
                     xa: XaScope | None = None) -> Iterator[Out]:
    """The events of the undo of the transaction at [start, end) of ``fh``. ``skipped`` gets
    the statements inside it that ``filters.skip_statements`` leaves out (file, start, end,
    gtid None, statement: as the one-statement transactions of ``Result.skipped``). An XA
    transaction is refused, unless ``xa`` leaves it apart (``XaScope``)."""
    walk = _Walk()
    at = start
    try:
        while at < end:
            ts, code, sid, size, _log_pos, _flags = fh.header(at, name)
            if code in ROWS_TYPES:   # only the offset for now; read again when its turn comes
                walk.rows.append(at)
                if not walk.timestamp:
                    walk.timestamp, walk.server_id = ts, sid
            else:
                walk.feed(read_event(fh, at, fmt, name), filters)
            at += size
        if walk.xa:
            if xa is None or not xa.take(walk, filters, name, start, end):
                off, text, kind = walk.xa[0]
                raise FlashbackRefused(f"an XA transaction ({text[:60]!r}) cannot be flashed back",
                                       offset=off, event_type=kind)
            return
        if skipped is not None:
            skipped += [{"file": name, "start": off, "end": end, "gtid": None, "statement": text}
                        for off, text in walk.skipped]
        if walk.terminator is None and walk.rows:
            raise FlashbackRefused("the transaction has no Xid or COMMIT: it cannot be undone as a whole",
                                   offset=start)
        first = True
        for i in range(len(walk.rows) - 1, -1, -1):
            key = walk.rows[i]
            raw = walk.spill.get(key, walk.payload_at, name) if key < 0 else read_event(fh, key, fmt, name)
            ev = decode(raw)
            if ev.parsed is None:  # only unknown (ignorable) event types decode to nothing
                raise BodyLengthError("rows event that does not decode", offset=raw.offset, event_type=raw.type_name)
            tid = ev.parsed["table_id"]
            if tid not in walk.maps:
                raise BodyLengthError(f"rows event for table id {tid} without a Table_map before it",
                                      offset=raw.offset, event_type=raw.type_name)
            map_body, table, map_raw = walk.maps[tid]
            if not filters.wants(table):
                continue
            try:
                code, undo_body, rows, present = invert_rows(ev.parsed, raw.type_code, table,
                                                             fmt.post_header_length(raw.type_code),
                                                             filters.generated_of(table))
            except MinimalImage as exc:
                raise FlashbackRefused(exc.message, offset=raw.offset, event_type=raw.type_name) from None
            if first:
                yield replace(begin_query(walk.timestamp, walk.server_id, fmt), gtid=walk.gtid) \
                    if walk.begin is None else \
                    Out(T.QUERY_EVENT, walk.begin.body, walk.begin.timestamp, walk.begin.server_id, gtid=walk.gtid)
                first = False
            yield Out(T.TABLE_MAP_EVENT, map_body, map_raw.timestamp, map_raw.server_id, map_raw.flags)
            yield Out(code, undo_body, raw.timestamp, raw.server_id, raw.flags, rows, table, present=present)
        if not first:
            t = walk.terminator
            if t is None:  # rows without a terminator were refused above
                raise FlashbackRefused("the transaction has no Xid or COMMIT: it cannot be undone as a whole",
                                       offset=start)
            yield Out(t.type_code, t.body, t.timestamp, t.server_id, t.flags)
    except BinlogError as exc:
        raise exc.with_context(file=name)
    finally:
        walk.spill.close()


def undo_plan(plan, local: dict[str, Input], fmt, filters, skipped: list[dict] | None = None,
              apart: list[dict] | None = None):
    """The undo of every transaction of ``plan``, last first: ``(file name, iterator of its undo
    events)`` (``undo_transaction``) per transaction. Each input is opened once, read-only, and every one
    is closed when the walk ends (close the generator: ``contextlib.closing``). ``keys``: for
    encrypted inputs (``source``). ``apart`` gets the XA transactions a filtered undo leaves as
    they are (``XaScope``); an XA COMMIT whose PREPARE part is not in the range is refused at the end."""
    handles: dict[str, EventFile] = {}
    xa = XaScope()
    try:
        for name, start, end in plan.reversed():
            fh = handles.get(name)
            if fh is None:
                fh = handles[name] = EventFile(local[name])
            yield name, undo_transaction(fh, name, start, end, fmt, filters, skipped, xa)
        xa.check()
        if apart is not None:
            apart += reversed(xa.apart)
    finally:
        for fh in handles.values():
            fh.close()

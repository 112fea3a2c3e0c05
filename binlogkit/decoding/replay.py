"""Replayable text: what ``mariadb-binlog FILE`` / ``mysqlbinlog FILE`` print by default, so that
``binlogkit decode FILE | mysql`` applies exactly what the binlog holds. Pure: events in, text
out; the session state the tools keep in their ``PRINT_EVENT_INFO`` (database, thread id,
flags2 options, sql_mode, character sets... printed again only when they change) is a
``Session`` value here.

Modelled line for line on the servers' own printers (MariaDB ``client/mysqlbinlog.cc`` +
``sql/log_event_client.cc``; MySQL ``client/mysqlbinlog.cc`` + ``sql/log_event.cc``):

- a preamble and ``DELIMITER /*!*/;``, then per event ``# at OFFSET`` and its header comment
  (``render.header_line``, the text the differential tests hold equal to the tools');
- the Format_description and every row event as ``BINLOG '…'`` base64 blocks: a statement's
  Table_map and rows events are joined into one block, closed by the event with STMT_END_F
  (the tools' head / body / tail caches); MariaDB's compressed rows events are printed
  inflated, as its tool does;
- the flavor's GTID statements, the query context when it changes, User_var / Intvar / Rand,
  XA, and the closing statements.

What differs between the flavors' tools is one ``Tool`` value per flavor in :data:`TOOLS`;
the common code looks the flavor up and never compares it. Where no faithful replay is
possible (an unknown event, LOAD DATA without its file, a damaged event, a file ending inside
a transaction) ``Replay.fail`` prints what is safe, ends the open transaction with ROLLBACK and
records the reason (``Replay.problems``); the command then exits 1.
"""

from __future__ import annotations

import binascii
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Callable

from ..constants import EventType as T
from ..flavor import Flavor, parse_server_version, status_vars_mariadb
from ..render import QUERY_SHOWS_XID, header_line, mysql_gtid_body

DELIM = "/*!*/;"
_NO_CRC = re.compile(r" CRC32 0x[0-9a-f]{8} ")

# flags of the common header (log_event.h)
LOG_EVENT_BINLOG_IN_USE_F = 0x1
LOG_EVENT_THREAD_SPECIFIC_F = 0x4
LOG_EVENT_SUPPRESS_USE_F = 0x8
LOG_EVENT_RELAY_LOG_F = 0x40
LOG_EVENT_SKIP_REPLICATION_F = 0x8000
STMT_END_F = 1

# Query flags2 bits (sql_priv.h OPTION_*), printed as session options in this order:
# (bit, variable, printed inverted)
_FLAGS2_COMMON = ((1 << 26, "foreign_key_checks", True), (1 << 14, "sql_auto_is_null", False),
                  (1 << 27, "unique_checks", True), (1 << 19, "autocommit", True))
_FLAGS2_MARIADB = ((1 << 15, "check_constraint_checks", True), (1 << 28, "sql_if_exists", False),
                   (1 << 24, "explicit_defaults_for_timestamp", False),
                   (1 << 29, "system_versioning_insert_history", False))

ROWS_TYPES = frozenset(int(t) for t in (
    T.WRITE_ROWS_EVENT, T.UPDATE_ROWS_EVENT, T.DELETE_ROWS_EVENT, T.WRITE_ROWS_EVENT_V1,
    T.UPDATE_ROWS_EVENT_V1, T.DELETE_ROWS_EVENT_V1, T.PARTIAL_UPDATE_ROWS_EVENT,
    T.WRITE_ROWS_COMPRESSED_EVENT, T.UPDATE_ROWS_COMPRESSED_EVENT, T.DELETE_ROWS_COMPRESSED_EVENT,
    T.WRITE_ROWS_COMPRESSED_EVENT_V1, T.UPDATE_ROWS_COMPRESSED_EVENT_V1, T.DELETE_ROWS_COMPRESSED_EVENT_V1,
    T.PRE_GA_WRITE_ROWS_EVENT, T.PRE_GA_UPDATE_ROWS_EVENT, T.PRE_GA_DELETE_ROWS_EVENT))
# MariaDB's compressed rows events -> the type its tool prints them as, inflated
INFLATED = {int(T.WRITE_ROWS_COMPRESSED_EVENT): int(T.WRITE_ROWS_EVENT),
            int(T.UPDATE_ROWS_COMPRESSED_EVENT): int(T.UPDATE_ROWS_EVENT),
            int(T.DELETE_ROWS_COMPRESSED_EVENT): int(T.DELETE_ROWS_EVENT),
            int(T.WRITE_ROWS_COMPRESSED_EVENT_V1): int(T.WRITE_ROWS_EVENT_V1),
            int(T.UPDATE_ROWS_COMPRESSED_EVENT_V1): int(T.UPDATE_ROWS_EVENT_V1),
            int(T.DELETE_ROWS_COMPRESSED_EVENT_V1): int(T.DELETE_ROWS_EVENT_V1)}
QUERY_TYPES = frozenset(int(t) for t in (T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT))
# events the tools print as a header comment only (nothing to replay)
COMMENT_ONLY = frozenset(int(t) for t in (
    T.ROTATE_EVENT, T.GTID_LIST_EVENT, T.BINLOG_CHECKPOINT_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT,
    T.STOP_EVENT, T.HEARTBEAT_LOG_EVENT, T.ROWS_QUERY_LOG_EVENT, T.VIEW_CHANGE_EVENT,
    T.TRANSACTION_CONTEXT_EVENT, T.HEARTBEAT_LOG_EVENT_V2, T.START_ENCRYPTION_EVENT,
    T.IGNORABLE_LOG_EVENT, T.TRANSACTION_PAYLOAD_EVENT))


def b64(data: bytes) -> str:
    """base64 as the tools' ``base64_encode`` writes it: 76-character lines, no final newline
    (one b2a_base64 call, then the line breaks: ``base64.encodebytes`` loops in Python)."""
    text = binascii.b2a_base64(data, newline=False).decode("ascii")
    if len(text) <= 76:
        return text
    return "\n".join([text[i:i + 76] for i in range(0, len(text), 76)])


def inflated_rows_event(ev) -> bytes:
    """A MariaDB compressed rows event as its tool prints it (``row_log_event_uncompress``):
    the same header with the uncompressed type and length, the row images inflated, a new
    CRC32 when the event had one."""
    from ..codecs.compression import uncompress

    raw = ev.raw
    data, lc = raw.data, raw.len_checksum
    rows = bytes(ev.parsed.rows)
    head = data[:len(data) - lc - len(rows)]
    body = uncompress(rows)
    size = len(head) + len(body) + lc
    out = bytearray(head + body)
    out[4] = INFLATED[raw.type_code]
    out[9:13] = size.to_bytes(4, "little")
    if lc:
        out += zlib.crc32(bytes(out)).to_bytes(4, "little")
    return bytes(out)


@dataclass
class Session:
    """What the tool has told the server so far (its ``PRINT_EVENT_INFO``)."""

    db: str = ""
    thread_id: int | None = None
    flags2: int | None = None
    sql_mode: int | None = None
    auto_increment: tuple[int, int] = (0, 0)
    charset: tuple | None = None
    time_zone: str = ""
    lc_time_names: int = -1
    charset_database: int = -1
    default_collation_for_utf8mb4: int | None = None
    sql_require_primary_key: int | None = None
    default_table_encryption: int | None = None
    allow_parallel: bool | None = None
    domain_id: int | None = None
    server_id: int | None = None
    skip_replication: int = 0
    gtid_flags2: int = 0
    printed_fd: bool = False


@dataclass(frozen=True)
class Tool:
    """One flavor's printer: the lines it opens and closes with, and the parts of events it
    prints its own way."""

    preamble: tuple[str, ...]
    closing: tuple[str, ...]
    flags2_of: Callable[[tuple[int, int, int]], tuple]  # the session options printed from Query flags2,
                                                    # by the file's server version
    query_context: Callable[["Replay", dict], list[str]]  # flavor-specific SET lines after the common ones
    charset_extra: Callable[["Replay", dict], list[str]]  # lines right after the character set ones
    row_count: bool                                 # `# Number of rows: N` after each statement's rows
    charset_client_name: bool                       # character_set_client printed as a name (MariaDB)
    fd_rollback: bool                               # ROLLBACK after a Format_description written at startup
    skip_replication: bool                          # `/*!50521 SET skip_replication=…*/` when the flag changes
    annotate_with_table_map: bool                   # Annotate_rows' header printed with the next Table_map
    table_map_notes: tuple[str, ...]                # comment lines under a Table_map's header
    rows_query_verbosity: int                       # Rows_query printed from this -v count on
    relay_fd_note: str                              # printed for a relay log's own Format_description
    gtid_next_closing: bool                         # `SET @@SESSION.GTID_NEXT= 'AUTOMATIC'` at the end
    rollback: str                                   # the tool's ROLLBACK of a transaction the input ends in
    skip_gtids_after_fd: str                        # with --skip-gtids, after the Format_description
    between_files: Callable[["Replay"], str]        # printed where one input file ends and the next begins
    skipped_after_gtid: str                         # --database skipped the statement a GTID was set for
    fd_at_after_headers: bool                       # with --start-position: the FD shown `# at` the end of
                                                    # the header events after it (mysqlbinlog), or at 4
    status_vars_mariadb: bool                       # Query status variables with MariaDB's codes (flavor.py's)
    query_shows_xid: bool                           # a Query's header shows `xid=` (render.QUERY_SHOWS_XID)


# --- charsets: names for `/*!\C name */` and MariaDB's character_set_client ----------------------
def charset_name(collation: int) -> str | None:
    from ..collations import CHARSET_OF

    return CHARSET_OF.get(collation)


# collation names the User_var statements need (``COLLATE `name```): the usual defaults
COLLATION_NAMES = {8: "latin1_swedish_ci", 47: "latin1_bin", 48: "latin1_general_ci", 11: "ascii_general_ci",
                   33: "utf8mb3_general_ci", 83: "utf8mb3_bin", 192: "utf8mb3_unicode_ci",
                   45: "utf8mb4_general_ci", 46: "utf8mb4_bin", 224: "utf8mb4_unicode_ci", 63: "binary",
                   255: "utf8mb4_0900_ai_ci", 309: "utf8mb4_0900_bin", 2304: "utf8mb4_uca1400_ai_ci"}


# --- MariaDB ------------------------------------------------------------------------------------
FL_STANDALONE, FL_GROUP_COMMIT_ID, FL_TRANSACTIONAL, FL_ALLOW_PARALLEL = 1, 2, 4, 8
FL_PREPARED_XA, FL_COMPLETED_XA = 0x40, 0x80


def _mariadb_gtid(rp: "Replay", ev) -> list[str]:
    f, s = ev.fields, rp.session
    flags2 = f.get("flags2", 0)
    out = []
    if not rp.opts.skip_gtids:
        allow = bool(flags2 & FL_ALLOW_PARALLEL)
        if s.allow_parallel is None or s.allow_parallel != allow:
            out.append(f"/*M!100101 SET @@session.skip_parallel_replication={int(not allow)}*/{DELIM}")
            s.allow_parallel = allow
        if s.domain_id != f["domain_id"]:
            out.append(f"/*M!100001 SET @@session.gtid_domain_id={f['domain_id']}*/{DELIM}")
            s.domain_id = f["domain_id"]
        if s.server_id != ev.raw.server_id:
            out.append(f"/*M!100001 SET @@session.server_id={ev.raw.server_id}*/{DELIM}")
            s.server_id = ev.raw.server_id
        out.append(f"/*M!100001 SET @@session.gtid_seq_no={f['seq_no']}*/{DELIM}")
    if flags2 & FL_PREPARED_XA:
        x = f["xid"]
        data = bytes.fromhex(x["data"])
        out.append(f"XA START X'{data[:x['len_gtrid']].hex()}',X'{data[x['len_gtrid']:].hex()}',{x['format_id']}{DELIM}")
    elif not flags2 & FL_STANDALONE:
        out += ["START TRANSACTION", DELIM]
    s.gtid_flags2 = flags2
    return out


# MariaDB 11's UCA 14.0.0 collations: ids 2048 + 256 * k per charset; the base id is ``_ai_ci``
_UCA1400 = {2048: "utf8mb3", 2304: "utf8mb4", 2560: "ucs2", 2816: "utf16", 3072: "utf32"}


def collation_name(cid: int) -> str | None:
    if cid in _UCA1400:
        return f"{_UCA1400[cid]}_uca1400_ai_ci"
    return COLLATION_NAMES.get(cid)


def _mariadb_query_context(rp: "Replay", sv: dict) -> list[str]:
    """MariaDB 11's Q_CHARACTER_SET_COLLATIONS, printed with every query that carries it
    (``charset=collation,...``)."""
    pairs = sv.get("character_set_collations")
    if not pairs:
        return []
    parts = []
    for cs, coll in pairs:
        a, b = charset_name(cs), collation_name(coll)
        if a is None or b is None:
            raise Unreplayable(f"character_set_collations names a collation binlogkit does not know ({coll})")
        parts.append(f"{a}={b}")
    return [f"SET @@session.character_set_collations='{','.join(parts)}'{DELIM}"]


class Unreplayable(Exception):
    """Raised inside a printer: the event cannot be printed faithfully (``Replay.fail``)."""


def _mariadb_flags2(version: tuple[int, int, int]) -> tuple:
    """The options mariadb-binlog prints: the four of every server, check_constraint_checks,
    sql_if_exists and explicit_defaults_for_timestamp when the file's server writes them (its
    ``options_written_to_bin_log``: MariaDB 10.5.2 on), and the insert-history option always."""
    check, if_exists, explicit, history = _FLAGS2_MARIADB
    return _FLAGS2_COMMON + ((check, if_exists, explicit, history) if version >= (10, 5, 2) else (check, history))


def _mariadb_next_file(rp: "Replay") -> str:
    """mariadb-binlog between two files: the delimiter set again, and a new session state (its
    PRINT_EVENT_INFO is per file: every SET is due again)."""
    rp.session = Session()
    return f"DELIMITER ;\nDELIMITER {DELIM}\n"


MARIADB_TOOL = Tool(
    preamble=("/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;", "/*!40019 SET @@session.max_delayed_threads=0*/;",
              "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;", "DELIMITER /*!*/;"),
    closing=("DELIMITER ;", "# End of log file", "ROLLBACK /* added by mysqlbinlog */;",
             "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;", "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;"),
    flags2_of=_mariadb_flags2,
    query_context=lambda rp, sv: [],
    charset_extra=_mariadb_query_context,
    row_count=True,
    charset_client_name=True,
    fd_rollback=True,
    skip_replication=True,
    annotate_with_table_map=True,
    table_map_notes=(),
    rows_query_verbosity=0,
    relay_fd_note="",
    gtid_next_closing=False,
    rollback="",
    skip_gtids_after_fd="",
    between_files=_mariadb_next_file,
    skipped_after_gtid="",
    fd_at_after_headers=False,
    status_vars_mariadb=status_vars_mariadb(Flavor.MARIADB),
    query_shows_xid=Flavor.MARIADB in QUERY_SHOWS_XID,
)


# --- MySQL --------------------------------------------------------------------------------------
def _mysql_gtid(rp: "Replay", ev) -> list[str]:
    f, t = ev.fields, ev.raw.type_code
    gtid = "ANONYMOUS" if t == T.ANONYMOUS_GTID_LOG_EVENT else f.get("gtid")
    rp.gtid_pending = True
    return mysql_gtid_body(f, gtid, rp.opts.utc, gtid_next=not rp.opts.skip_gtids)


def _mysql_query_context(rp: "Replay", sv: dict) -> list[str]:
    """mysqlbinlog's lines after collation_database: explicit_defaults_for_timestamp,
    sql_require_primary_key and default_table_encryption whenever the event carries them,
    default_collation_for_utf8mb4 when it changes."""
    s, out = rp.session, []
    v = sv.get("explicit_defaults_for_timestamp")
    if v is not None:
        out.append(f"SET @@session.explicit_defaults_for_timestamp={v}{DELIM}")
    v = sv.get("default_collation_for_utf8mb4")
    if v is not None and v != s.default_collation_for_utf8mb4:
        out.append(f"/*!80011 SET @@session.default_collation_for_utf8mb4={v}*//*!*/;")
        s.default_collation_for_utf8mb4 = v
    v = sv.get("sql_require_primary_key")
    if v is not None:
        out.append(f"/*!80013 SET @@session.sql_require_primary_key={v}*//*!*/;")
    v = sv.get("default_table_encryption")
    if v is not None:
        out.append(f"/*!80016 SET @@session.default_table_encryption={v}*//*!*/;")
    return out


def _mysql_next_file(rp: "Replay") -> str:
    """mysqlbinlog at the end of each file: GTID_NEXT back to AUTOMATIC (the session state is
    kept from file to file)."""
    return "" if rp.opts.skip_gtids else "SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by mysqlbinlog */ /*!*/;\n"


MYSQL_TOOL = Tool(
    preamble=("# The proper term is pseudo_replica_mode, but we use this compatibility alias",
              "# to make the statement usable on server versions 8.0.24 and older.",
              "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;",
              "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;", "DELIMITER /*!*/;"),
    closing=("DELIMITER ;", "# End of log file", "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;",
             "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;"),
    flags2_of=lambda version: _FLAGS2_COMMON,
    query_context=_mysql_query_context,
    charset_extra=lambda rp, sv: [],
    row_count=False,
    charset_client_name=False,
    fd_rollback=True,
    skip_replication=False,
    annotate_with_table_map=False,
    table_map_notes=("# has_generated_invisible_primary_key=0",),
    rows_query_verbosity=2,
    relay_fd_note="# This Format_description_event appears in a relay log and was generated by the replica thread.",
    gtid_next_closing=True,
    rollback="ROLLBACK /* added by mysqlbinlog */ /*!*/;",
    skip_gtids_after_fd="/*!50616 SET @@SESSION.GTID_NEXT='AUTOMATIC'*//*!*/;",
    between_files=_mysql_next_file,
    skipped_after_gtid="COMMIT /* added by mysqlbinlog *//*!*/;",
    fd_at_after_headers=True,
    status_vars_mariadb=status_vars_mariadb(Flavor.MYSQL),
    query_shows_xid=Flavor.MYSQL in QUERY_SHOWS_XID,
)

TOOLS: dict[Flavor, Tool] = {Flavor.MARIADB: MARIADB_TOOL, Flavor.MYSQL: MYSQL_TOOL}


def rewrite_pairs(specs) -> tuple[tuple[str, str], ...]:
    """``--rewrite-db FROM->TO`` values as (FROM, TO) pairs; ValueError names a malformed one."""
    pairs = []
    for spec in specs:
        src, sep, dst = spec.partition("->")
        if not sep or not src.strip() or not dst.strip():
            raise ValueError(f"--rewrite-db {spec!r}: give FROM->TO")
        pairs.append((src.strip(), dst.strip()))
    return tuple(pairs)


@dataclass(frozen=True)
class ReplayOptions:
    """decode's options with mysqlbinlog's meaning."""

    base64: str = "auto"            # auto | never (decode-rows is the plain renderer, render.py)
    verbose: int = 0                # -v / -vv: `###` row comments after each BINLOG block
    utc: bool = False               # local time, as the tools, unless asked
    skip_gtids: bool = False
    databases: tuple[str, ...] = ()  # --database, collected: any of them
    rewrite_db: tuple[tuple[str, str], ...] = ()


@dataclass
class Problem:
    """Why the output stopped being a faithful replay."""

    file: str | None
    offset: int | None
    event: str | None
    reason: str
    error: Exception | None = None  # the reader's error, when damage ended the input

    def __str__(self) -> str:
        where = f"{self.file or '?'}" + (f" at {self.offset}" if self.offset is not None else "")
        return f"{where}" + (f" ({self.event})" if self.event else "") + f": {self.reason}"


_TRANS_WORDS = ("BEGIN", "COMMIT")


def is_trans_keyword(query: str, xa: bool) -> bool:
    """Query_log_event::is_trans_keyword: BEGIN / COMMIT (or a prefix of them), SAVEPOINT,
    ROLLBACK; in an XA transaction, ``XA …``."""
    if xa:
        return query[:3].upper() == "XA "
    return (any(w.startswith(query) for w in _TRANS_WORDS if query)
            or query[:9].upper() == "SAVEPOINT" or query[:8].upper() == "ROLLBACK")


# what a fast printer (the C loop, ``reading.fastdecode``) is lent of the Session: -1 for None
LENT_SESSION = ("allow_parallel", "domain_id", "server_id", "skip_replication", "gtid_flags2")


class Replay:
    """Feed decoded events in order (``feed``), then ``close``; each returns text to write.

    A fast printer may print a stretch of events in its place: ``lend`` gives it the state it
    prints by, ``settle`` takes back what it changed (and a statement it holds) before the next
    event is fed here."""

    def __init__(self, opts: ReplayOptions = ReplayOptions()) -> None:
        self.opts = opts
        self.session = Session()
        self.tool: Tool | None = None
        self.version: tuple[int, int, int] = (0, 0, 0)
        self.head: list[str] = []     # headers of a statement's row events, not yet written
        self.body: list[str] = []     # their base64
        self.tail: list[str] = []     # their `###` rows
        self.rows_in_stmt = 0
        self.annotate: list[str] | None = None
        self.in_trx = False           # between START TRANSACTION / BEGIN / XA START and its end
        self.problems: list[Problem] = []
        self.started = False
        self.gtid_pending = False     # MySQL: a GTID_NEXT set, its transaction not begun
        self.ignored_maps: set[int] = set()
        self.open_file: str | None = None
        self.in_payload = False       # between a Transaction_payload and the end of its inner events
        self.payload_format = None    # its format, when it has CRC32s (its inner events get theirs)
        self.payload_at = 0

    # -- a fast printer's stretch --------------------------------------------------------------
    def lend(self) -> dict[str, int | bytes] | None:
        """The state a fast printer continues from: the Session values of ``LENT_SESSION``
        (-1 for None), ``in_trx``, ``gtid_pending`` and ``rows`` (the statement's row count),
        which it may change, and the query context (thread id, flags2, sql_mode, auto_increment,
        character sets, time zone...), which it only reads;
        None while this Replay is somewhere a fast printer does not model (not started, inside a
        Transaction_payload, a statement's row events or an Annotate_rows of its own held, a
        table filtered out by --database)."""
        if (not self.started or self.in_payload or self.head or self.body or self.tail
                or self.annotate is not None or self.ignored_maps):
            return None
        s = self.session
        state: dict[str, int | bytes] = {name: -1 if getattr(s, name) is None else int(getattr(s, name))
                                         for name in LENT_SESSION}
        state.update(in_trx=int(self.in_trx), gtid_pending=int(self.gtid_pending), rows=self.rows_in_stmt)
        # the query context, read only (a Query that would print it again is fed here)
        charset = s.charset if s.charset is not None and len(s.charset) == 3 else (-1, -1, -1)
        state.update(thread_id=-1 if s.thread_id is None else s.thread_id,
                     flags2=-1 if s.flags2 is None else s.flags2,
                     sql_mode=-1 if s.sql_mode is None or s.sql_mode >= 1 << 63 else s.sql_mode,
                     auto_increment_increment=s.auto_increment[0], auto_increment_offset=s.auto_increment[1],
                     charset_client=charset[0], collation_connection=charset[1], collation_server=charset[2],
                     lc_time_names=s.lc_time_names, charset_database=s.charset_database,
                     default_collation_for_utf8mb4=-1 if s.default_collation_for_utf8mb4 is None
                     else s.default_collation_for_utf8mb4,
                     time_zone=s.time_zone.encode("utf-8", "surrogateescape"))
        return state

    def settle(self, state: dict[str, int | bytes], *, head: list[str] | None = None, body: list[str] | None = None,
               annotate: list[str] | None = None, tail: list[str] | None = None) -> None:
        """Take back what ``lend`` gave that a fast printer may change, as it left it, and the
        statement it holds: its row events' header lines, base64 blocks and (-v) `###` rows not
        written yet, an Annotate_rows' lines held for the next Table_map (None: none)."""
        s = self.session
        v = {name: int(state[name]) for name in (*LENT_SESSION, "in_trx", "gtid_pending", "rows")}
        s.allow_parallel = None if v["allow_parallel"] < 0 else bool(v["allow_parallel"])
        s.domain_id = None if v["domain_id"] < 0 else v["domain_id"]
        s.server_id = None if v["server_id"] < 0 else v["server_id"]
        s.skip_replication, s.gtid_flags2 = v["skip_replication"], v["gtid_flags2"]
        self.in_trx, self.gtid_pending = bool(v["in_trx"]), bool(v["gtid_pending"])
        self.rows_in_stmt = v["rows"]
        self.head, self.body, self.annotate, self.tail = list(head or ()), list(body or ()), annotate, list(tail or ())

    # -- the frame ------------------------------------------------------------------------------
    def _begin(self, flavor: Flavor | None) -> str:
        self.tool = TOOLS[flavor or Flavor.MYSQL]
        self.started = True
        zone = "UTC" if self.opts.utc else (time.strftime("%Z") or "local time")
        return (f"# binlogkit decode: replayable output; times in {zone}\n"
                + "\n".join(self.tool.preamble) + "\n")

    def close(self, why: str = "the input ends inside a transaction (its COMMIT is not in the files)") -> str:
        """The closing statements (after a ROLLBACK of a transaction left open: ``why``)."""
        if self.in_trx:  # its unfinished statement is not replayed: ROLLBACK
            out = self.fail(None, why, file=self.open_file)
        else:
            out = self._flush_rows()
        if self.in_payload:
            out += "# End of compressed events.\n"
            self.in_payload = False
        if not self.started:
            return out
        tool = self.tool
        assert tool is not None
        if self.gtid_pending and not self.opts.skip_gtids:  # a GTID whose transaction is not in the files
            out += "BEGIN /*added by mysqlbinlog */ /*!*/;\nROLLBACK /* added by mysqlbinlog */ /*!*/;\n"
        if tool.gtid_next_closing and not self.opts.skip_gtids:
            out += "SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by mysqlbinlog */ /*!*/;\n"
        return out + "\n".join(tool.closing) + "\n"

    def fail(self, ev, reason: str, *, file: str | None = None, offset: int | None = None,
             error: Exception | None = None) -> str:
        """No faithful replay from here: the open transaction is rolled back, the reason kept."""
        raw = getattr(ev, "raw", None)
        self.problems.append(Problem(raw.file if raw is not None else file,
                                     raw.offset if raw is not None else offset,
                                     raw.type_name if raw is not None else None, reason, error))
        # a statement's row events not ended by STMT_END_F are not replayed: their headers only
        out = "".join(line + "\n" for line in self.head)
        self.head, self.body, self.tail, self.rows_in_stmt, self.annotate = [], [], [], 0, None
        if self.in_trx:
            self.in_trx = False
            tool = self.tool or MYSQL_TOOL
            said = " ".join(reason.replace("*/", "* /").split())  # one line, and it cannot close the comment
            return out + (tool.rollback or f"ROLLBACK /* binlogkit: {said} */{DELIM}") + "\n"
        return out

    # -- events ---------------------------------------------------------------------------------
    def feed(self, ev) -> str:
        raw = ev.raw
        t = raw.type_code
        fmt = raw.format
        out = ""
        if not self.started:
            out += self._begin(fmt.flavor if fmt is not None else None)
        if raw.file != self.open_file:
            if self.open_file is not None and self.tool is not None:
                out += self._flush_rows() + self.tool.between_files(self)
            self.open_file = raw.file
        inner = raw.payload_offset is not None
        if self.in_payload and not inner:
            out += "# End of compressed events.\n"
            self.in_payload = False
        if inner and self.payload_format is not None:
            ev = _with_crc(ev, self.payload_format, self.payload_at)
            raw = ev.raw
        if t == T.TRANSACTION_PAYLOAD_EVENT:
            self.payload_format = fmt if fmt is not None and fmt.len_checksum else None
            self.payload_at = raw.log_pos  # mysqlbinlog shows its inner events at the payload's end_log_pos
        if t == T.FORMAT_DESCRIPTION_EVENT:
            _flavor, self.version = parse_server_version(ev.fields.get("server_version", ""))
        at = f"# at {raw.offset}\n"
        if ev.codec is None:
            return out + at + header_line(ev, self.opts.utc) + "\n" + self.fail(
                ev, "an event binlogkit does not know: it cannot be replayed")
        if t == T.ANNOTATE_ROWS_EVENT and self.tool is not None and self.tool.annotate_with_table_map:
            self.annotate = [header_line(ev, self.opts.utc)] + [f"#Q> {line}" for line in _lines(ev.fields["query"])]
            return out + at
        if (t == T.TABLE_MAP_EVENT or t in ROWS_TYPES) and self.opts.base64 == "never":
            self.annotate = None
            return out + at + header_line(ev, self.opts.utc) + "\n" + self.fail(
                ev, "--base64-output=never, but the binlog holds row events (they replay only as BINLOG statements)")
        if t == T.TABLE_MAP_EVENT:
            return out + at + self._table_map(ev)
        if t in ROWS_TYPES:
            return out + at + self._rows(ev)
        out += self._flush_rows()
        if t in QUERY_TYPES:
            return out + self._query(ev, at)
        if t == T.EXECUTE_LOAD_QUERY_EVENT:
            return out + at + header_line(ev, self.opts.utc) + "\n" + self.fail(
                ev, "LOAD DATA from a file the binlog holds in Begin_load_query events: not replayed by binlogkit")
        if t in (T.LOAD_EVENT, T.NEW_LOAD_EVENT, T.CREATE_FILE_EVENT, T.EXEC_LOAD_EVENT):
            return out + at + header_line(ev, self.opts.utc) + "\n" + self.fail(
                ev, "a statement-format LOAD DATA without its file: it cannot be replayed")
        out += at + self._other(ev)
        if t == T.TRANSACTION_PAYLOAD_EVENT:
            out += "# Start of compressed events.\n"
            self.in_payload = True
        return out

    def _skip_repl(self, raw) -> str:
        if self.tool is None or not self.tool.skip_replication:
            return ""
        cur = int(bool(raw.flags & LOG_EVENT_SKIP_REPLICATION_F))
        if cur == self.session.skip_replication:
            return ""
        self.session.skip_replication = cur
        return f"/*!50521 SET skip_replication={cur}*/;\n"

    def _other(self, ev) -> str:
        raw, f, t, utc = ev.raw, ev.fields, ev.raw.type_code, self.opts.utc
        head = header_line(ev, utc) + "\n"
        if t == T.FORMAT_DESCRIPTION_EVENT and f.get("checksum_alg") != 1:
            # a Format_description of a file without checksums: the tools show no CRC32 for it
            head = _NO_CRC.sub(" ", head, count=1)
        tool = self.tool
        assert tool is not None
        if t == T.FORMAT_DESCRIPTION_EVENT:
            if raw.flags & LOG_EVENT_RELAY_LOG_F and tool.relay_fd_note:
                return head + tool.relay_fd_note + "\n"
            if raw.flags & LOG_EVENT_BINLOG_IN_USE_F:
                head += "# Warning: this binlog is either in use or was not closed properly.\n"
            if f.get("create_timestamp") and tool.fd_rollback:
                head += f"ROLLBACK{DELIM}\n"
                self.in_trx = False
            self.session.printed_fd = True
            if self.opts.base64 == "never":
                return head
            after = tool.skip_gtids_after_fd + "\n" if self.opts.skip_gtids and tool.skip_gtids_after_fd else ""
            return head + "BINLOG '\n" + b64(raw.data) + f"\n'{DELIM}\n" + after
        skip = self._skip_repl(raw) if t not in COMMENT_ONLY else ""
        if t == T.GTID_EVENT:  # the GTID printers go by event type (a damaged file may mix them)
            self.in_trx = not f.get("flags2", 0) & FL_STANDALONE
            return skip + head + "".join(line + "\n" for line in _mariadb_gtid(self, ev))
        if t in (T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT) \
                and self.opts.skip_gtids:  # mysqlbinlog --skip-gtids: these are not printed at all
            return ""
        if t in (T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT):
            return head + "".join(line + "\n" for line in _mysql_gtid(self, ev))
        if t == T.XID_EVENT:
            self.in_trx = self.gtid_pending = False
            return skip + head + f"COMMIT{DELIM}\n"
        if t == T.XA_PREPARE_LOG_EVENT:
            self.in_trx = False
            verb = "XA COMMIT" if f["one_phase"] else "XA PREPARE"
            return skip + head + f"{verb} {f['xid']}" + (" ONE PHASE" if f["one_phase"] else "") + f"\n{DELIM}\n"
        if t == T.INTVAR_EVENT:
            name = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}.get(f["kind"], "INVALID_INT")
            return skip + head + f"SET {name}={f['value']}{DELIM}\n"
        if t == T.RAND_EVENT:
            return skip + head + f"SET @@RAND_SEED1={f['seed1']}, @@RAND_SEED2={f['seed2']}{DELIM}\n"
        if t == T.USER_VAR_EVENT:
            text = _user_var(ev)
            if text is None:
                return skip + head + self.fail(ev, "a user variable whose collation binlogkit cannot name")
            return skip + head + text + "\n"
        if t == T.INCIDENT_EVENT:  # the tools' statement stops a replay here, on purpose
            self.problems.append(Problem(raw.file, raw.offset, raw.type_name,
                                         f"an Incident event ({f.get('incident_name')}): the source lost events here"))
            return (head.split("\t", 1)[0] + f"\n# Incident: {f.get('incident_name')}\n"
                    "RELOAD DATABASE; # Shall generate syntax error\n")
        if t == T.GTID_LIST_EVENT:  # one GTID per line, as Gtid_list_log_event::print
            return head.replace(",", ",\n# ")
        if t == T.PREVIOUS_GTIDS_LOG_EVENT:
            text = f["gtid_set"]
            return head + "".join(f"# {line}\n" for line in text.replace(",", ",\n").split("\n")) if text \
                else head + "# [empty]\n"
        if t == T.ROWS_QUERY_LOG_EVENT:
            if self.opts.verbose < tool.rows_query_verbosity:
                return ""
            return head + "".join(f"# {line}\n" for line in f["query"].split("\n"))
        if t == T.START_ENCRYPTION_EVENT:
            return head
        if t in COMMENT_ONLY or t in (T.APPEND_BLOCK_EVENT, T.DELETE_FILE_EVENT, T.BEGIN_LOAD_QUERY_EVENT):
            return head
        return head + self.fail(ev, "an event binlogkit cannot print for replay")

    # -- queries --------------------------------------------------------------------------------
    def _query(self, ev, at: str) -> str:
        raw, f, s = ev.raw, ev.fields, self.session
        pending, self.gtid_pending = self.gtid_pending, False
        tool = self.tool
        assert tool is not None
        query: str = f["query"]
        db: str = f.get("db") or ""
        xa = bool(s.gtid_flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA))
        trans = is_trans_keyword(query, xa)
        flags = raw.flags
        if not trans:
            if self.opts.databases and db not in self.opts.databases:
                # skipped: its `# at` only; mysqlbinlog first ends the GTID it set (COMMIT)
                close = tool.skipped_after_gtid + "\n" if pending and tool.skipped_after_gtid else ""
                return close + at
        else:
            flags |= LOG_EVENT_SUPPRESS_USE_F
        out = [at.rstrip("\n")]
        pre = self._skip_repl(raw)
        if pre:
            out.append(pre.rstrip("\n"))
        out.append(header_line(ev, self.opts.utc))
        # rewrite-db: the tool prints `use` of the new name itself and keeps the old one as "current"
        if not flags & LOG_EVENT_SUPPRESS_USE_F:
            to = dict(self.opts.rewrite_db).get(db)
            if to is not None and db and s.db != db:
                out.insert(1, f"use `{to}`{DELIM}")
                s.db = db
        sv = f.get("status_vars") or {}
        if flags & LOG_EVENT_SUPPRESS_USE_F:
            if not trans or not xa:
                if not is_trans_keyword(query, xa):
                    s.db = ""
        elif "db" in f and f.get("db") is not None:
            if db != s.db:
                s.db = db
                if db:
                    out.append(f"use {_ident(db)}{DELIM}")
        ts = f"SET TIMESTAMP={raw.timestamp}"
        usec = sv.get("hrnow", sv.get("microseconds"))
        if usec:
            ts += f".{usec:06d}"
        out.append(ts + DELIM)
        if s.thread_id is None or (raw.flags & LOG_EVENT_THREAD_SPECIFIC_F and f["thread_id"] != s.thread_id):
            out.append(f"SET @@session.pseudo_thread_id={f['thread_id']}{DELIM}")
            s.thread_id = f["thread_id"]
        # the phases of a two-phase ALTER carry flags2 0: mariadb-binlog 11.8 leaves the options be
        if "flags2" in sv and f.get("two_phase_alter") is None:
            flags2 = sv["flags2"]
            changed = ~0 if s.flags2 is None else s.flags2 ^ flags2
            if changed:
                opts = tool.flags2_of(self.version)
                parts = [f"@@session.{name}={int(not flags2 & bit) if inv else int(bool(flags2 & bit))}"
                         for bit, name, inv in opts if changed & bit]
                out.append("SET " + ", ".join(parts) + DELIM)
                s.flags2 = flags2
        if "sql_mode" in sv and (s.sql_mode is None or s.sql_mode != sv["sql_mode"]):
            out.append(f"SET @@session.sql_mode={sv['sql_mode']}{DELIM}")
            s.sql_mode = sv["sql_mode"]
        ai = tuple(sv.get("auto_increment", (1, 1)))
        if ai != s.auto_increment:
            out.append(f"SET @@session.auto_increment_increment={ai[0]}, @@session.auto_increment_offset={ai[1]}{DELIM}")
            s.auto_increment = ai
        if "charset" in sv and tuple(sv["charset"]) != s.charset:
            client, conn, server = sv["charset"]
            name = charset_name(client)
            out.append(f"/*!\\C {name} */{DELIM}" if name else "# Ignored (Unknown charset) ")
            shown = (name or "Unknown") if tool.charset_client_name else str(client)
            out.append(f"SET @@session.character_set_client={shown},@@session.collation_connection={conn},"
                       f"@@session.collation_server={server}{DELIM}")
            s.charset = tuple(sv["charset"])
        try:
            out += tool.charset_extra(self, sv)
        except Unreplayable as exc:
            return "\n".join(out) + "\n" + self.fail(ev, str(exc))
        tz = sv.get("time_zone")
        if tz and tz != s.time_zone:
            out.append(f"SET @@session.time_zone='{tz}'{DELIM}")
            s.time_zone = tz
        lc = sv.get("lc_time_names", 0)
        if lc != s.lc_time_names:
            out.append(f"SET @@session.lc_time_names={lc}{DELIM}")
            s.lc_time_names = lc
        cd = sv.get("charset_database", 0)
        if cd != s.charset_database:
            out.append(f"SET @@session.collation_database={cd if cd else 'DEFAULT'}{DELIM}")
            s.charset_database = cd
        out += tool.query_context(self, sv)
        phase = f.get("two_phase_alter")
        if phase is not None and self.opts.base64 != "never":
            comment = phase != "COMMIT"
            block = ("/*!100600 " if comment else "") + "BINLOG '\n" + b64(raw.data) + "\n"
            out.append(block + ("' */" if comment else "'") + DELIM)
            if self.opts.verbose:  # mariadb-binlog -v: the phase's statement after its BINLOG block
                out += [f"### {line}" for line in query.splitlines()]
        elif phase is not None and phase != "COMMIT":
            # no BINLOG statements: the ALTER runs once, as the statement of its COMMIT ALTER
            out += [f"### {line}" for line in query.splitlines()] + [f"# {phase} ALTER: not run here"]
        else:
            out += [query, DELIM]
        up = query.strip().upper()
        if up in ("BEGIN", "START TRANSACTION") or up.startswith("XA START"):
            self.in_trx = True
        elif up in ("COMMIT", "ROLLBACK") or up.startswith(("XA COMMIT", "XA ROLLBACK", "XA PREPARE")):
            self.in_trx = False
        elif not trans and self.in_trx and not s.gtid_flags2 & FL_TRANSACTIONAL and s.gtid_flags2 & FL_STANDALONE:
            self.in_trx = False
        return "\n".join(out) + "\n"

    # -- row events -----------------------------------------------------------------------------
    def _table_map(self, ev) -> str:
        f = ev.fields
        if self.opts.databases and f["db"] not in self.opts.databases:
            self.ignored_maps.add(f["table_id"])
            return ""
        if self.annotate is not None:
            self.head += self.annotate
            self.annotate = None
        data = ev.raw.data
        to = dict(self.opts.rewrite_db).get(f["db"])
        name = f"`{f['db']}`.`{f['table']}`"
        head = header_line(ev, self.opts.utc)
        if to is not None:
            data = _rewrite_table_map(ev, to)
            head = head.replace(name, f"`{to}`.`{f['table']}`", 1)
        self.body.append(b64(data))
        tool = self.tool
        assert tool is not None
        notes = () if self.opts.skip_gtids else tool.table_map_notes  # mysqlbinlog 9.7 --skip-gtids drops it too
        out = "\n".join(self.head + [head, *notes]) + "\n"  # Table_map::print writes its head cache out
        self.head = []
        return out

    def _rows(self, ev) -> str:
        raw, f = ev.raw, ev.fields
        end = bool(f["flags"] & STMT_END_F)
        if f["table_id"] in self.ignored_maps:
            if end:
                self.ignored_maps.clear()
                return self._flush_rows()
            return ""
        self.head.append(header_line(ev, self.opts.utc))
        data = inflated_rows_event(ev) if raw.type_code in INFLATED else raw.data
        self.body.append(b64(data))
        text = ev.rows_text
        if text is not None:  # a row's first line (values are quoted: no line break inside one)
            lines = b"\n" + text
            n = sum(lines.count(w) for w in (b"\n### INSERT INTO ", b"\n### UPDATE ", b"\n### DELETE FROM "))
            self.rows_in_stmt += n
            if self.opts.verbose:
                self.tail.append(text.decode("utf-8", "surrogateescape").rstrip("\n"))
        if end:
            self.ignored_maps.clear()
            return self._flush_rows()
        return ""

    def _flush_rows(self) -> str:
        if self.annotate is not None and not self.head:  # its rows were all filtered out
            self.annotate = None
        if not self.head and not self.body:
            return ""
        if not self.body:  # headers only (Annotate_rows' whose rows were filtered out)
            out, self.head = "\n".join(self.head) + "\n", []
            return out
        tool = self.tool
        assert tool is not None
        out = "".join(line + "\n" for line in self.head)
        if self.body and self.opts.base64 != "never":
            out += "\nBINLOG '\n" + "\n".join(self.body) + f"\n'{DELIM}\n"
        if self.tail:
            out += "\n".join(self.tail) + "\n"
        if tool.row_count:
            out += f"# Number of rows: {self.rows_in_stmt}\n"
        self.head, self.body, self.tail, self.rows_in_stmt = [], [], [], 0
        return out


def _with_crc(ev, fmt, at: int):
    """An event from inside a Transaction_payload as mysqlbinlog prints it: with the CRC32 the
    payload's format calls for (its length grown by 4), the checksum of the bytes it prints."""
    from dataclasses import replace

    raw = ev.raw
    data = bytearray(raw.data)
    size = len(data) + 4
    data[9:13] = size.to_bytes(4, "little")
    data += zlib.crc32(bytes(data)).to_bytes(4, "little")
    return replace(ev, raw=replace(raw, data=bytes(data), format=fmt, event_size=size, offset=at, log_pos=at))


def _lines(text: str) -> list[str]:
    """Annotate_rows' lines as its printer splits them (runs of \\r and \\n end a line)."""
    import re

    return [p for p in re.split(r"[\r\n]+", text) if p]


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _user_var(ev) -> str | None:
    """User_var_log_event::print: NULL, a real (%.14g), an integer (signed unless flagged
    UNSIGNED), a decimal, or a string as hex with its charset and collation."""
    p = ev.parsed
    name = "@" + _ident(bytes(p.name).decode("utf-8", "surrogateescape"))
    if p.is_null or p.value is None:
        return f"SET {name}:=NULL{DELIM}"
    kind, val = p.value.type, bytes(p.value.value)
    if kind == 1:
        import struct

        return f"SET {name}:={_g14(struct.unpack('<d', val[:8])[0])}{DELIM}"
    if kind == 2:
        unsigned = bool(p.flags and p.flags[0] & 1)
        n = int.from_bytes(val[:8], "little", signed=not unsigned)
        return f"SET {name}:={n}{DELIM}"
    if kind == 4:
        from ..codecs.newdecimal import read_decimal

        return f"SET {name}:={read_decimal(val[2:], 0, val[0], val[1])[0]}{DELIM}"
    cs, coll = charset_name(p.value.charset), COLLATION_NAMES.get(p.value.charset)
    if cs is None or coll is None:
        return None
    hexed = "0x" + val.hex().upper() if val else "''"
    return f"SET {name}:=_{cs} {hexed} COLLATE `{coll}`{DELIM}"


def _g14(x: float) -> str:
    return "%.14g" % x


def _rewrite_table_map(ev, to: str) -> bytes:
    """A Table_map with its database renamed (Table_map_log_event::rewrite_db): length byte,
    name, NUL, the event length updated; the checksum bytes kept as they were, as
    mariadb-binlog keeps them (a BINLOG statement's events are not checked against them)."""
    raw = ev.raw
    fmt = raw.format
    data, lc = raw.data, raw.len_checksum
    hl = fmt.header_length if fmt is not None else 19
    post = fmt.post_header_length(raw.type_code) if fmt is not None else 8
    p = hl + post
    old = data[p]
    new = to.encode()
    body = data[:p] + bytes([len(new)]) + new + b"\x00" + data[p + 1 + old + 1:len(data) - lc]
    out = bytearray(body)
    size = len(out) + lc
    out[9:13] = size.to_bytes(4, "little")
    return bytes(out) + data[len(data) - lc:]


__all__ = ["Replay", "ReplayOptions", "TOOLS", "Tool", "Session", "LENT_SESSION", "b64", "field"]

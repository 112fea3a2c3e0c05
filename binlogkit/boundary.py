"""The transaction-boundary machine: one pure step per event, the one copy of the rules.

``step(state, code, body, query_phl)`` takes the state of a stream between two events (an int
of the bits below), an event's type code and body (without header and checksum) and the
Query post-header length of the stream's format, and returns the next state and the decision:
``None`` (no boundary), :data:`GTID` (a GTID event opens the next transaction: one still open
ends there, incomplete), :data:`BEGIN`, or the terminator of the transaction the event ends,
complete (``XID``, ``COMMIT``, ``ROLLBACK``, ``XA_PREPARE``, ``XA_COMMIT``, ``XA_ROLLBACK``,
``PAYLOAD``, ``DDL``, ``STATEMENT``, ``STANDALONE``). It does no I/O and keeps nothing: the
callers (``transactions.Grouper``, ``audit.summary``, ``pull.receiver``, ``export.changes``)
keep the state they are given back, and the C loop of ``_pullscan.c`` uses the same bits
(``tests/test_boundary.py`` holds them equal).

State bits (``_pullscan.c`` defines the same values)::

    OPEN_GROUP 1  BEGIN (or a MariaDB GTID without FL_STANDALONE) opened a group: statements
                  stay inside until it ends
    STANDALONE 2  a MariaDB GTID with FL_STANDALONE: exactly one statement follows
    BY_GTID    4  the open transaction began at a GTID event (its statement ends it as DDL)
    OPEN       8  a transaction is open

Rules (flavor-neutral; each flavor's GTID event registers what it says, :data:`GTID_RULES`):

* MariaDB Gtid with FL_STANDALONE: exactly one statement follows (DDL); without it the Gtid
  event opens the group (no BEGIN follows) and it ends as below.
* MySQL Gtid / Anonymous_gtid / Gtid_tagged: ``BEGIN`` opens a group; a first statement that is
  not BEGIN is a single-statement (DDL) transaction; a Transaction_payload carries the group.
* A group ends at Xid, ``COMMIT``, ``ROLLBACK``, XA_prepare, ``XA COMMIT``/``XA ROLLBACK``.
* Without GTIDs (legacy files): ``BEGIN`` … end as above, or one statement with its Intvar /
  Rand / User_var prelude; any other event with no transaction open opens one.
* :data:`OUTSIDE` events (Rotate, Format_description, Stop, Gtid_list, Binlog_checkpoint,
  Previous_gtids, heartbeats, ...) are outside transactions and never end one.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Callable, NamedTuple, Union

from .codecs import compression
from .constants import (GTID_TYPES, LEN_COMMON_HEADER as LEN_HEADER, PRELUDE, QUERY_TYPES, EventType as T,
                        event_type_name)
from .errors import BinlogError, FormatError
from .flavor import Flavor

if TYPE_CHECKING:
    from .gtid.mariadb import MariadbGtid
    from .gtid.mysql import MysqlGtid
    from .reading.format import Format

    Gtid = Union[MysqlGtid, MariadbGtid]


def __getattr__(name: str):
    """``Gtid`` (the union of the flavors' GTID values) made on first use: the GTID classes are
    imported when a GTID is read, not with the step (``pull`` only steps)."""
    if name != "Gtid":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .gtid.mariadb import MariadbGtid
    from .gtid.mysql import MysqlGtid

    return Union[MysqlGtid, MariadbGtid]


OPEN_GROUP, STANDALONE, BY_GTID, OPEN = 1, 2, 4, 8

OUTSIDE = frozenset({T.ROTATE_EVENT, T.FORMAT_DESCRIPTION_EVENT, T.STOP_EVENT, T.GTID_LIST_EVENT,
                     T.BINLOG_CHECKPOINT_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT, T.HEARTBEAT_LOG_EVENT,
                     T.HEARTBEAT_LOG_EVENT_V2, T.START_ENCRYPTION_EVENT, T.INCIDENT_EVENT,
                     T.IGNORABLE_LOG_EVENT})
# events a standalone (MariaDB FL_STANDALONE) transaction's statement may bring before it
NOT_STANDALONE_END = PRELUDE | {T.ANNOTATE_ROWS_EVENT}
# the codes whose body the step reads; any other event only opens (no transaction open) or ends
# a standalone one
DECIDING = GTID_TYPES | QUERY_TYPES | {T.XID_EVENT, T.XA_PREPARE_LOG_EVENT, T.TRANSACTION_PAYLOAD_EVENT}

# decisions besides the terminators
GTID = "GTID"
BEGIN = "BEGIN"
# terminators a Query's words give
QUERY_ENDS = frozenset({"COMMIT", "ROLLBACK", "XA_COMMIT", "XA_ROLLBACK"})


class Kind(enum.StrEnum):
    """What opened a transaction (``Transaction.kind``; ``str()`` is today's text)."""

    MARIADB = "mariadb"
    MYSQL = "mysql"
    ANONYMOUS = "anonymous"        # a MySQL Anonymous_gtid (gtid_mode OFF)
    LEGACY = "legacy"              # no GTID event: BEGIN or a statement opened it
    CONTINUATION = "continuation"  # the stream began inside it

    @property
    def flavor(self) -> Flavor | None:
        return _KIND_FLAVOR.get(self)


_KIND_FLAVOR = {Kind.MARIADB: Flavor.MARIADB, Kind.MYSQL: Flavor.MYSQL, Kind.ANONYMOUS: Flavor.MYSQL}


def _statement(body: bytes, phl: int) -> bytes | None:
    """The statement of a plain v4 Query body (post-header ``thread_id:4 exec_time:4 len_db:1
    error_code:2 len_status_vars:2``, then the status variables, the db name, a NUL, the text),
    cut as ``codecs.fast.query`` cuts it (the same conditions; None where it is Irregular) and as
    ``_pullscan.c``'s ``query_is``: read here without that Construct module, whose import was a
    third of ``pull``'s start-up."""
    if phl != 13 or len(body) < 13:
        return None
    p = 13 + int.from_bytes(body[11:13], "little") + body[8]
    if p >= len(body) or body[p] != 0:
        return None
    return bytes(body[p + 1:])


def query_text(body: bytes, code: int, phl: int | None) -> str:
    """The first 32 characters of a Query (or compressed Query) body's statement, upper-cased
    and stripped: what :func:`classify` reads; "" when the body does not say."""
    text = _statement(body, 13 if phl is None else phl)
    if text is None:
        return ""
    if code == T.QUERY_COMPRESSED_EVENT:
        try:
            text = compression.uncompress(text)
        except ValueError:
            return ""
    return text[:32].decode("utf-8", "replace").strip().upper()


def classify(q: str) -> str:
    """What a statement's first words (upper case) say: ``begin``, one of :data:`QUERY_ENDS`,
    ``inside`` (XA END, SAVEPOINT, ROLLBACK TO) or ``statement``."""
    if q.startswith("BEGIN") or q.startswith("XA START") or q.startswith("XA BEGIN"):
        return "begin"
    if q.startswith("COMMIT"):
        return "COMMIT"
    if q.startswith("XA COMMIT"):
        return "XA_COMMIT"
    if q.startswith("XA ROLLBACK"):
        return "XA_ROLLBACK"
    if q.startswith("ROLLBACK") and not q.startswith("ROLLBACK TO"):
        return "ROLLBACK"
    if q.startswith("XA END") or q.startswith("SAVEPOINT") or q.startswith("ROLLBACK TO"):
        return "inside"
    return "statement"


# -- the flavors' GTID events: registered, not tested ----------------------------------------

class GtidRule(NamedTuple):
    """What one GTID event type says: the kind of transaction it opens, its GTID (None:
    anonymous) and standalone flag read from the body, and whether it opens the group itself."""

    kind: Kind
    read: Callable[[bytes, int], tuple[Gtid | None, bool]]   # (body, server_id) -> (gtid, standalone)
    opens_group: bool = False   # without FL_STANDALONE: the GTID event is the BEGIN (MariaDB)
    len_names: int = 0          # a shorter body names no GTID (its transaction ends as a STATEMENT)
    ofs_standalone: int | None = None   # the byte whose bit 0 is FL_STANDALONE (None: never standalone)


OFS_MARIADB_FLAGS2 = 12


def _mariadb_standalone(body: bytes) -> bool:
    return len(body) > OFS_MARIADB_FLAGS2 and bool(body[OFS_MARIADB_FLAGS2] & 1)   # flags2 & FL_STANDALONE


def _mariadb(body: bytes, server_id: int) -> tuple[Gtid | None, bool]:
    from .gtid.mariadb import MariadbGtid

    seq = int.from_bytes(body[0:8], "little")
    domain = int.from_bytes(body[8:12], "little")
    return MariadbGtid(domain, server_id, seq), _mariadb_standalone(body)


def _mysql(body: bytes, server_id: int) -> tuple[Gtid | None, bool]:
    from .gtid.mysql import MAX_GNO, MysqlGtid

    if len(body) < 25:
        return None, False
    gno = int.from_bytes(body[17:25], "little")
    if not 1 <= gno <= MAX_GNO:  # checked where it is read: the text must parse back
        raise FormatError(f"Gtid event: transaction number {gno} outside 1..{MAX_GNO}")
    from .codecs.common import uuid_text   # (Construct's module: not at import, pull's start-up has no use for it)

    return MysqlGtid(uuid_text(body[1:17]), gno), False


def _mysql_tagged(body: bytes, server_id: int) -> tuple[Gtid | None, bool]:
    """A ValueError on a damaged body (the caller types it); a GtidError when a field is out
    of range."""
    from .codecs.serialization import decode_tagged_gtid
    from .gtid.mysql import MysqlGtid

    gtid = decode_tagged_gtid(body).get("gtid")
    if gtid is None:
        raise ValueError("no uuid or no gno")
    return MysqlGtid.parse(gtid), False


def _anonymous(body: bytes, server_id: int) -> tuple[Gtid | None, bool]:
    return None, False


GTID_RULES: dict[int, GtidRule] = {
    T.GTID_EVENT: GtidRule(Kind.MARIADB, _mariadb, opens_group=True,
                              ofs_standalone=OFS_MARIADB_FLAGS2),
    T.GTID_LOG_EVENT: GtidRule(Kind.MYSQL, _mysql, len_names=25),
    T.GTID_TAGGED_LOG_EVENT: GtidRule(Kind.MYSQL, _mysql_tagged),
    T.ANONYMOUS_GTID_LOG_EVENT: GtidRule(Kind.ANONYMOUS, _anonymous),
}


def read_gtid(code: int, server_id: int, body: bytes, offset: int | None = None) -> tuple[Gtid | None, Kind, bool]:
    """(GTID or None, kind, standalone) of a GTID event's body (at ``offset``). A damaged body is
    a typed error naming the event, here for every caller (a tagged GTID's serialization
    raises ValueError deep inside)."""
    rule = GTID_RULES.get(code)
    if rule is None:
        return None, Kind.MYSQL, False
    try:
        gtid, standalone = rule.read(body, server_id)
    except BinlogError as exc:
        raise exc.with_context(offset=offset, event_type=event_type_name(code))
    except ValueError as exc:
        raise FormatError(f"{event_type_name(code)}: {exc}", offset=offset, event_type=event_type_name(code)) from None
    return gtid, rule.kind, standalone


# per GTID type code, from its rule: (len_names, the state without FL_STANDALONE, the byte of
# FL_STANDALONE or -1) as plain ints (an IntEnum or dataclass lookup per event costs)
_GTID_STATES = {int(code): (r.len_names, OPEN | (OPEN_GROUP if r.opens_group else 0),
                            -1 if r.ofs_standalone is None else r.ofs_standalone)
                for code, r in GTID_RULES.items()}


def gtid_state(code: int, body: bytes) -> int:
    """The state right after a GTID event of type ``code`` with this body."""
    rule = _GTID_STATES.get(code)
    if rule is None:
        return OPEN
    len_names, state, ofs = rule
    if len(body) >= len_names:
        state |= BY_GTID
    if 0 <= ofs < len(body) and body[ofs] & 1:
        return (state & ~OPEN_GROUP) | STANDALONE
    return state


_XID, _XA_PREPARE, _PAYLOAD = int(T.XID_EVENT), int(T.XA_PREPARE_LOG_EVENT), int(T.TRANSACTION_PAYLOAD_EVENT)
_OUTSIDE = frozenset(int(c) for c in OUTSIDE)
_GTIDS = frozenset(int(c) for c in GTID_TYPES)
_QUERIES = frozenset(int(c) for c in QUERY_TYPES)
_NOT_STANDALONE_END = frozenset(int(c) for c in NOT_STANDALONE_END)


# -- the step ----------------------------------------------------------------------------------

def step(state: int, code: int, body: bytes, query_phl: int | None = 13) -> tuple[int, str | None]:
    """The next state and the decision for one event (see the module docstring)."""
    if code == _XID:   # the most frequent decision first (no other rule looks at an Xid)
        return 0, "XID"
    if code in _OUTSIDE:
        return state, None
    if code in _GTIDS:
        return gtid_state(code, body), GTID
    if not state & OPEN:
        state = OPEN
    if code in _QUERIES:
        c = classify(query_text(body, code, query_phl))
        if c == "begin":
            return state | OPEN_GROUP, BEGIN
        if c in QUERY_ENDS:
            return 0, c
        if c == "statement" and not state & OPEN_GROUP:
            return 0, "DDL" if state & BY_GTID else "STATEMENT"
        return state, None
    if code == _XA_PREPARE:
        return 0, "XA_PREPARE"
    if code == _PAYLOAD:
        return (state, None) if state & OPEN_GROUP else (0, "PAYLOAD")
    if state & STANDALONE and code not in _NOT_STANDALONE_END:
        return 0, "STANDALONE"
    return state, None


def advance(state: int, code: int, data: bytes, fmt: Format | None) -> tuple[int, str | None]:
    """:func:`step` on a framed event (header, body, checksum) of a stream in format ``fmt``
    (None: none seen yet): the body cut out and the Query post-header length read from the
    format only for the codes whose body the step reads (GTID and Query events)."""
    if code == _XID:
        return 0, "XID"
    if code in _QUERIES or code in _GTIDS:
        if fmt is None:
            return step(state, code, data[LEN_HEADER:], None)
        body = data[max(LEN_HEADER, fmt.header_length):len(data) - fmt.len_checksum]
        return step(state, code, body, fmt.post_header_length(T.QUERY_EVENT))
    return step(state, code, b"")


def ends(decision: str | None) -> bool:
    """Whether a decision ends a transaction, complete."""
    return decision is not None and decision is not GTID and decision is not BEGIN


__all__ = ["BEGIN", "advance", "BY_GTID", "DECIDING", "GTID", "GTID_RULES", "GTID_TYPES", "Gtid", "GtidRule", "Kind",
           "NOT_STANDALONE_END", "OPEN", "OPEN_GROUP", "OUTSIDE", "PRELUDE", "QUERY_ENDS", "QUERY_TYPES",
           "STANDALONE", "classify", "ends", "gtid_state", "query_text", "read_gtid", "step"]

"""Which tables a transaction touches (``binlogkit transactions --tables``): the tables its
Table_map events name (those inside a MySQL Transaction_payload too) and the table of each of its
statements (DDL, statement-format DML: the first table the statement names, qualified by the
Query's default database; ``db.*`` for a statement on a whole database). Row bodies are never
decoded. ``TablesGrouper`` is the transactions walk that notes them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .boundary import QUERY_TYPES
from .constants import EventType as T
from .transactions import BODIES, Grouper, Transaction

#: the events whose bodies say which tables: Table_map, Query, and MySQL's Transaction_payload
WANT = BODIES | {T.TABLE_MAP_EVENT, T.TRANSACTION_PAYLOAD_EVENT}

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"({_NAME}(?:\s*\.\s*{_NAME})?)"
_LEAD = r"^\s*(?:/\*.*?\*/\s*|\#[^\n]*\n\s*|--[^\n]*\n\s*)*"
_TABLE_STATEMENTS = re.compile(_LEAD + r"""(?:
      (?:INSERT|REPLACE)(?:\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*\s+(?:INTO\s+)?
    | UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*\s+
    | DELETE(?:\s+(?:LOW_PRIORITY|QUICK|IGNORE))*\s+FROM\s+
    | (?:CREATE|ALTER|DROP|TRUNCATE|RENAME|OPTIMIZE|ANALYZE|REPAIR|CHECK)
      (?:\s+(?:OR\s+REPLACE|TEMPORARY|ONLINE|OFFLINE|IGNORE|DEFINER\s*=\s*\S+))*\s+TABLES?\s+
      (?:IF\s+(?:NOT\s+)?EXISTS\s+)?
    | (?:CREATE|ALTER|DROP)(?:\s+(?:OR\s+REPLACE|DEFINER\s*=\s*\S+|ALGORITHM\s*=\s*\w+|SQL\s+SECURITY\s+\w+))*
      \s+(?:VIEW|TRIGGER|SEQUENCE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?
    | CREATE(?:\s+(?:OR\s+REPLACE|UNIQUE|FULLTEXT|SPATIAL|ONLINE))*\s+INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+ON\s+
    | DROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?\S+\s+ON\s+
    )""" + _QUALIFIED, re.I | re.X | re.S)
_DATABASE_STATEMENTS = re.compile(_LEAD + r"(?:CREATE|ALTER|DROP)\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
                                  + f"({_NAME})", re.I | re.S)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def statement_table(db: str, text: str) -> str | None:
    """``db.table`` of the first table a statement names (``db``: the Query's default database,
    for an unqualified name), ``db.*`` for CREATE / ALTER / DROP DATABASE; None for a statement
    that names no table this reads (BEGIN, COMMIT, SET, XA ..., a stored routine)."""
    m = _TABLE_STATEMENTS.match(text)
    if m:
        parts = [_unquote(p.strip()) for p in re.findall(_NAME, m.group(1))]
        if len(parts) == 2:
            return f"{parts[0]}.{parts[1]}"
        return f"{db}.{parts[0]}" if db else parts[0]
    m = _DATABASE_STATEMENTS.match(text)
    if m:
        return f"{_unquote(m.group(1))}.*"
    return None


def table_map_table(body: bytes, phl: int | None) -> str | None:
    """``db.table`` of a Table_map body (post-header: table id, 6 bytes or 4 in the oldest
    format, then 2 flag bytes; then the length-prefixed, NUL-ended db and table names)."""
    p = 8 if phl == 8 or phl is None else 6
    try:
        n = body[p]
        db = body[p + 1:p + 1 + n]
        q = p + 2 + n
        m = body[q]
        table = body[q + 1:q + 1 + m]
    except IndexError:
        return None
    if len(table) != m:
        return None
    return f"{db.decode('utf-8', 'replace')}.{table.decode('utf-8', 'replace')}"


def query_table(body: bytes, code: int, phl: int | None) -> str | None:
    """The table of a Query event's statement (``statement_table``), or None."""
    from .codecs.compression import uncompress

    # a plain v4 Query body: thread_id:4 exec_time:4 len_db:1 error_code:2 len_status_vars:2, the
    # status variables, the db name, a NUL, the statement (as boundary.query_text reads it)
    if phl not in (None, 13) or len(body) < 13:
        return None
    p = 13 + int.from_bytes(body[11:13], "little")
    db = body[p:p + body[8]].decode("utf-8", "replace")
    p += body[8]
    if p >= len(body) or body[p] != 0:
        return None
    text = body[p + 1:]
    if code == T.QUERY_COMPRESSED_EVENT:
        try:
            text = uncompress(text)
        except ValueError:
            return None
    return statement_table(db, text[:4096].decode("utf-8", "replace"))


def payload_tables(at: int, code: int, ts: int, sid: int, size: int, log_pos: int, flags: int, data: bytes,
                   fmt: Any) -> list[str]:
    """The tables the Table_map events inside a MySQL Transaction_payload name."""
    from .reading.events import decode, payload_events
    from .reading.reader import RawEvent

    raw = RawEvent(at, ts, code, sid, size, log_pos, flags, data, fmt, None)
    out = []
    for inner in payload_events(decode(raw)):
        if inner.type_code == T.TABLE_MAP_EVENT:
            name = table_map_table(_body(inner.data, inner.format), _phl(inner.format, T.TABLE_MAP_EVENT))
            if name:
                out.append(name)
    return out


def _phl(fmt: Any, code: int) -> int | None:
    return fmt.post_header_length(code) if fmt is not None else None


def _body(data: bytes, fmt: Any) -> bytes:
    from .codecs.header import LEN_HEADER

    lc = fmt.len_checksum if fmt else 0
    hl = max(LEN_HEADER, fmt.header_length) if fmt else LEN_HEADER
    return data[hl:len(data) - lc]


@dataclass
class TablesTransaction(Transaction):
    """A transaction with the tables it touches, in the order first seen."""

    tables: list[str] = field(default_factory=list)


class TablesGrouper(Grouper):
    """The transactions walk (``Grouper``) that also notes each transaction's tables."""

    transaction_type = TablesTransaction

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._pending: list[str] = []  # seen before the walk opened the transaction they belong to

    def feed(self, inp):
        return self.feed_frames(inp.name, self._noting(inp.frames(want=WANT, records=False)))

    def _noting(self, frames: Iterable[Any]) -> Iterator[Any]:
        for f in frames:
            code = f[1]
            if code == T.TABLE_MAP_EVENT or code in QUERY_TYPES or code == T.TRANSACTION_PAYLOAD_EVENT:
                data, fmt = f[7], f[9]
                if data is not None:
                    names: list[str | None]
                    if code == T.TRANSACTION_PAYLOAD_EVENT:
                        names = [*payload_tables(f[0], code, f[2], f[3], f[4], f[5], f[6], data, fmt)]
                    elif code == T.TABLE_MAP_EVENT:
                        names = [table_map_table(_body(data, fmt), _phl(fmt, code))]
                    else:
                        names = [query_table(_body(data, fmt), code, _phl(fmt, code))]
                    for name in names:
                        if name:
                            self._note(name)
            yield f

    def _note(self, name: str) -> None:
        cur = self.cur
        into = cur.tables if isinstance(cur, TablesTransaction) else self._pending
        if name not in into:
            into.append(name)

    def _close(self, complete: bool, terminator: str | None) -> Transaction:
        cur = self.cur
        if isinstance(cur, TablesTransaction) and self._pending:
            cur.tables[:0] = [n for n in self._pending if n not in cur.tables]
            self._pending = []
        return super()._close(complete, terminator)

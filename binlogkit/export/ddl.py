"""Column names (and what else a table map without FULL metadata lacks: signedness, character
sets, ENUM / SET labels) from ``CREATE TABLE`` statements: the output of ``mariadb-dump
--no-data`` or ``SHOW CREATE TABLE`` (pure: text in, values out); and the column changes of
``ALTER TABLE``. Both are read by sqlglot's MySQL dialect (``dialect``: taught the geometry
subtypes and INET4/INET6), one parser for CREATE and ALTER here, for SQL dumps (lake.dump)
and for lakehouse mirrors' schema changes.

A statement is matched to a table map by database and table name; a ``CREATE TABLE`` without a
database (``mariadb-dump`` of one database, ``SHOW CREATE TABLE``) takes the database of the
last ``USE`` / ``-- Current Database:`` line, or matches the table name in any database. A
definition whose column count differs from the table map's is not used (the table changed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Iterable

from ..collations import BY_CHARSET
from ..rowvalues.tables import ENUM, SET, Table

BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
CHARACTER_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"}
# column types sqlglot's MySQL dialect lacks, as the token of a type it has (``dialect``)
GEOMETRY_SUBTYPES = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
                     "GEOMETRYCOLLECTION")


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str             # lower-case base type: int, varchar, enum, ... (the server's names)
    unsigned: bool
    charset: str | None   # for character columns: their own or the table's default
    labels: tuple[str, ...] | None  # ENUM / SET members
    default: Any = None   # the DEFAULT literal's value as text (None: no default or DEFAULT NULL)
    has_default: bool = False  # a constant DEFAULT (not NULL, not an expression)


@dataclass(frozen=True)
class TableDef:
    db: str | None
    name: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...] = ()     # column names (lakehouse mirrors key on them)


@lru_cache(maxsize=1)
def dialect():
    """sqlglot's MySQL dialect, taught the column types MySQL and MariaDB have and it lacks:
    the geometry subtypes (as GEOMETRY) and MariaDB's INET4 / INET6 (as IPV4 / IPV6).
    ``MissingDependency`` (an ImportError) without sqlglot."""
    from .._optional import need

    need("sqlglot", "CREATE / ALTER TABLE statements (export --schema, lakehouse mirrors, SQL dumps)",
         extra="export")
    import logging

    from sqlglot.dialects.mysql import MySQL
    from sqlglot.tokens import TokenType

    # "Falling back to parsing as a 'Command'" is the callers' business (a mirror stops at such a
    # statement when it names a mirrored table: ``effects``), not a warning for the user
    logging.getLogger("sqlglot").setLevel(logging.ERROR)

    class BinlogMySQL(MySQL):
        class Tokenizer(MySQL.Tokenizer):
            KEYWORDS = {**MySQL.Tokenizer.KEYWORDS, **{t: TokenType.GEOMETRY for t in GEOMETRY_SUBTYPES},
                        "INET6": TokenType.IPV6, "INET4": TokenType.IPV4}

    return BinlogMySQL()


def parse_create(sql: str):
    """A ``CREATE TABLE`` statement as sqlglot's expression (``dialect``); sqlglot's
    ParseError / TokenError when it is not one it can read."""
    import sqlglot
    from sqlglot import exp

    e = sqlglot.parse_one(sql, read=dialect())
    if not isinstance(e, exp.Create) or not isinstance(e.this, exp.Schema):
        raise sqlglot.errors.ParseError(f"not a CREATE TABLE with columns: {sql[:60]}")
    return e


def type_name(kind) -> tuple[str, bool]:
    """(the server's lower-case base type, unsigned) of a sqlglot ``DataType``."""
    text = kind.sql(dialect()).lower()
    words = text.split("(", 1)[0].split()
    base = {"ipv6": "inet6", "ipv4": "inet4"}.get(words[0], words[0]) if words else ""
    return base, "unsigned" in words or " unsigned" in text


def _name(node) -> str:
    return node.name if node is not None else ""


def _labels(kind) -> tuple[str, ...]:
    from sqlglot import exp

    return tuple(str(x.this) for x in kind.expressions if isinstance(x, exp.Literal) and x.is_string)


def _default_expr(c):
    """The DEFAULT of a sqlglot ``ColumnDef`` (an expression: a literal, NULL, a function...),
    None when it has none."""
    from sqlglot import exp

    for k in c.constraints:
        if isinstance(k.kind, exp.DefaultColumnConstraint):
            return k.kind.this
    return None


def _default(c) -> tuple[bool, Any]:
    """(a constant default, its text) of a sqlglot ``ColumnDef``."""
    from sqlglot import exp

    v = _default_expr(c)
    neg = isinstance(v, exp.Neg)
    if neg:
        v = v.this
    if isinstance(v, exp.Literal):
        return True, ("-" if neg else "") + str(v.this)
    return False, None      # none, NULL, CURRENT_TIMESTAMP, an expression: not a constant


def table_def(e, db: str | None) -> TableDef:
    """The ``TableDef`` of a parsed ``CREATE TABLE`` (``parse_create``); ``db``: the default
    database when the statement names none."""
    from sqlglot import exp

    tab = e.this.this
    props = e.args.get("properties")
    default_cs = None
    if props is not None:
        cs = next((p for p in props.expressions if isinstance(p, exp.CharacterSetProperty)), None)
        co = next((p for p in props.expressions if isinstance(p, exp.CollateProperty)), None)
        default_cs = (_name(cs.this).lower() if cs is not None else
                      _name(co.this).split("_")[0].lower() if co is not None else None)
    cols: list[ColumnDef] = []
    key: tuple[str, ...] = ()
    for part in e.this.expressions:
        if isinstance(part, exp.PrimaryKey):
            key = tuple(x.name for x in part.expressions)
            continue
        if not isinstance(part, exp.ColumnDef) or part.kind is None:
            continue
        ctype, unsigned = type_name(part.kind)
        own = next((k.kind for k in part.constraints if isinstance(k.kind, exp.CharacterSetColumnConstraint)), None)
        coll = next((k.kind for k in part.constraints if isinstance(k.kind, exp.CollateColumnConstraint)), None)
        charset = (_name(own.this).lower() if own is not None else
                   _name(coll.this).split("_")[0].lower() if coll is not None else None)
        if ctype in BINARY_TYPES:
            charset = "binary"
        elif ctype in CHARACTER_TYPES:
            charset = charset or default_cs
        else:
            charset = None if own is None and coll is None else charset
        labels = _labels(part.kind) if ctype in ("enum", "set") else None
        has_default, default = _default(part)
        cols.append(ColumnDef(part.name, ctype, unsigned, charset, labels, default, has_default))
        if any(isinstance(k.kind, exp.PrimaryKeyColumnConstraint) for k in part.constraints):
            key = (part.name,)
    return TableDef(tab.args["db"].name if tab.args.get("db") else db, tab.name, tuple(cols), key)


def _current_database(comment: str) -> str | None:
    """The database a dump's ``-- Current Database: `x``` comment names."""
    head, sep, rest = comment.partition("Current Database:")
    if not sep or head.strip():
        return None
    return rest.strip().strip("`").replace("``", "`") or None


def parse(text: str) -> list[TableDef]:
    """Every ``CREATE TABLE`` in ``text`` (a dump, ``--no-data`` or not, or ``SHOW CREATE
    TABLE`` output): statements are cut at sqlglot's tokens (quotes and comments kept whole),
    each ``CREATE [OR REPLACE] TABLE`` parsed by sqlglot; the default database is the last
    ``USE`` or ``-- Current Database:`` before it. Statements sqlglot cannot read are passed by."""
    import sqlglot
    from sqlglot.tokens import TokenType

    out: list[TableDef] = []
    db: str | None = None
    stmt: list = []
    try:
        tokens = dialect().tokenize(text)
    except sqlglot.errors.TokenError:
        return out
    for tok in tokens + [None]:
        if tok is not None:
            for c in tok.comments or ():
                db = _current_database(c) or db
            if tok.token_type != TokenType.SEMICOLON:
                stmt.append(tok)
                continue
        if not stmt:
            continue
        first, kinds = stmt[0], [t.token_type for t in stmt[:5]]
        if first.token_type == TokenType.USE and len(stmt) > 1:
            db = stmt[1].text
        elif first.token_type == TokenType.CREATE and TokenType.TABLE in kinds:
            try:
                out.append(table_def(parse_create(text[first.start:stmt[-1].end + 1]), db))
            except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
                pass
        stmt = []
    return out


def index(defs: list[TableDef]) -> dict[tuple[str | None, str], TableDef]:
    """(db, table) -> definition, and (None, table) for every table name (the last wins)."""
    out: dict[tuple[str | None, str], TableDef] = {}
    for d in defs:
        out[(d.db, d.name)] = d
        out[(None, d.name)] = d
    return out


def _collation(charset: str | None) -> int | None:
    if charset is None:
        return None
    if charset == "utf8":
        charset = "utf8mb3"
    ids = BY_CHARSET.get(charset)
    return ids[0] if ids else None


def apply(table: Table, defs: dict[tuple[str | None, str], TableDef]) -> Table:
    """``table`` with what its definition adds, when the map lacks names; else as it is."""
    if table.column_names:
        return table
    d = defs.get((table.db, table.name)) or defs.get((None, table.name))
    if d is None or len(d.columns) != len(table.columns):
        return table
    from ..rowvalues.tables import NUMERIC

    unsigned = frozenset(c.index for c, cd in zip(table.columns, d.columns) if cd.unsigned and c.type in NUMERIC)
    enums = {c.index: cd.labels for c, cd in zip(table.columns, d.columns) if c.real_type == ENUM and cd.labels}
    sets = {c.index: cd.labels for c, cd in zip(table.columns, d.columns) if c.real_type == SET and cd.labels}
    cols = tuple(replace(c, collation=_collation(cd.charset)) if c.is_character and c.collation is None else c
                 for c, cd in zip(table.columns, d.columns))
    names = [cd.name for cd in d.columns]
    key = table.primary_key
    if not key and d.primary_key and all(k in names for k in d.primary_key):
        key = tuple(names.index(k) for k in d.primary_key)
    out = replace(table, columns=cols, column_names=tuple(names), unsigned=unsigned,
                  enum_values=enums or None, set_values=sets or None, primary_key=key)
    object.__setattr__(out, "_names_from", "schema-file")
    return out


def load(path: str | Iterable[str] | None) -> dict[tuple[str | None, str], TableDef]:
    """``index(parse(...))`` of the file(s) ``--schema`` names (none: empty); ``UsageError`` when
    one holds no CREATE TABLE statement, or when two define the same table differently."""
    paths = [path] if isinstance(path, str) else list(path or ())
    if not paths:
        return {}
    from pathlib import Path

    from ..errors import UsageError

    defs: list[TableDef] = []
    where: dict[tuple[str | None, str], tuple[str, TableDef]] = {}
    for p in paths:
        found = parse(Path(p).read_text(errors="replace"))
        if not found:
            raise UsageError(f"--schema {p}: no CREATE TABLE statement in it")
        for d in found:
            seen = where.setdefault((d.db, d.name), (p, d))
            if seen[0] != p and seen[1] != d:
                name = f"{d.db}.{d.name}" if d.db else d.name
                raise UsageError(f"--schema: {name} is defined differently in {seen[0]} and {p}: give one definition")
        defs += found
    return index(defs)


@dataclass(frozen=True)
class Alter:
    """What an ``ALTER TABLE`` does to columns, by name (from sqlglot's MySQL parse)."""

    db: str | None
    table: str
    renames: tuple[tuple[str, str], ...] = ()      # (old, new): RENAME COLUMN, CHANGE old new
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    retyped: tuple[str, ...] = ()                  # MODIFY / CHANGE: the (new) names
    # ADD COLUMN: (name, sqlglot ColumnDef, the value existing rows get as text): its DEFAULT
    # constant, the statement's time (a StatementTime), or a NOT NULL column's implicit one (0,
    # '', the first ENUM label); none when NULL
    filled: tuple[tuple[str, Any, "str | StatementTime"], ...] = ()


def emptied(sql: str, db: str | None = None) -> list[tuple[str | None, str]]:
    """The (database, table) pairs a ``TRUNCATE [TABLE]`` or ``DROP TABLE`` statement leaves
    without rows (``db``: the statement's default database; None where neither names one), []
    for any other statement, a ``DROP TEMPORARY TABLE`` (never a replicated table) or one
    sqlglot cannot parse. A dropped table has no rows: a mirror of it is emptied, and a table
    made again under that name evolves it."""
    if not re.match(r"\s*(/\*.*?\*/\s*)*(TRUNCATE|DROP\s+TABLE)\b", sql, re.I | re.S):
        return []
    import sqlglot
    from sqlglot import exp

    try:
        e = sqlglot.parse_one(sql, read=dialect())
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return []
    if isinstance(e, exp.TruncateTable) and not e.args.get("is_database"):
        tables = list(e.expressions)
    elif isinstance(e, exp.Drop) and (e.args.get("kind") or "").upper() == "TABLE" and not e.args.get("temporary"):
        tables = list(e.args.get("tables") or [])
    else:
        return []
    return [(t.db or db, t.name) for t in tables if isinstance(t, exp.Table)]


def alter_text(sql: str) -> str:
    """An ``ALTER [ONLINE] [IGNORE] TABLE`` as sqlglot reads it: without ONLINE / IGNORE (how it
    runs, not what it does)."""
    return re.sub(r"^(\s*(?:/\*.*?\*/\s*)*ALTER\s+)(?:ONLINE\s+|IGNORE\s+)+", r"\1", sql, count=1, flags=re.I | re.S)


def alter(sql: str, db: str | None = None) -> Alter | None:
    """The column changes of an ``ALTER TABLE`` statement (``db``: the statement's default
    database), None for any other statement or one sqlglot cannot parse as MySQL.
    ``MissingDependency`` (an ImportError) without sqlglot."""
    if not re.match(r"\s*(/\*.*?\*/\s*)*ALTER\s+(ONLINE\s+|IGNORE\s+)*TABLE\b", sql, re.I | re.S):
        return None
    import sqlglot
    from sqlglot import exp

    try:
        e = sqlglot.parse_one(alter_text(sql), read=dialect())
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return None
    if not isinstance(e, exp.Alter) or not isinstance(e.this, exp.Table):
        return None
    renames, added, dropped, retyped = [], [], [], []
    filled: list = []
    for a in e.args.get("actions") or []:
        if isinstance(a, exp.RenameColumn):
            renames.append((a.this.name, a.args["to"].name))
        elif isinstance(a, exp.ColumnDef):
            added.append(a.name)
            value = fill_value(a)
            if value is not None:
                filled.append((a.name, a, value))
        elif isinstance(a, exp.Drop) and (a.args.get("kind") or "").upper() == "COLUMN":
            dropped += [c.name for c in a.args.get("tables") or []]
        elif type(a).__name__ == "ModifyColumn":
            new = a.this.name
            old = a.args.get("rename_from")
            if old is not None and old.name != new:
                renames.append((old.name, new))
            retyped.append(new)
    return Alter(e.this.args["db"].name if e.this.args.get("db") else db, e.this.name, tuple(renames),
                 tuple(added), tuple(dropped), tuple(retyped), tuple(filled))


_IMPLICIT = {**{t: "0" for t in ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double",
                                 "bit", "year")},
             **{t: "" for t in ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "binary",
                                "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "set")}}


@dataclass(frozen=True)
class StatementTime:
    """An added column whose default is the statement's own time (``CURRENT_TIMESTAMP``,
    ``NOW()``, ``LOCALTIME[STAMP]``, ``(now())``): the server fills existing rows with the
    ALTER's start time, which its Query event carries (seconds in the header; microseconds in
    ``Q_MICROSECONDS`` / MariaDB's ``Q_HRNOW``, written when a fractional default used them).
    ``fsp``: fractional digits kept; ``local``: a DATETIME (the session's time zone, from
    ``Q_TIME_ZONE_CODE``), else a TIMESTAMP (an instant, read as UTC)."""
    fsp: int
    local: bool
    date: bool = False     # a DATE (CURRENT_DATE, CURDATE()): the session's local date

    def text(self, seconds: int, usec: int | None, time_zone: str | None) -> str | None:
        """The value as the dump text the converters read, None when the event does not say it
        (fractional digits without the microseconds, a DATETIME in the server's ``SYSTEM``
        zone or a zone this machine does not know)."""
        from datetime import datetime, timedelta, timezone

        if (self.fsp and usec is None) or not 0 <= (usec or 0) < 1_000_000:
            return None
        at = datetime.fromtimestamp(seconds, timezone.utc) + timedelta(microseconds=usec or 0)
        if self.local:
            zone = _zone(time_zone)
            if zone is None:
                return None
            at = at.astimezone(zone)
        if self.date:
            return at.strftime("%Y-%m-%d")
        frac = f"{at.microsecond:06d}"[:self.fsp]
        return at.strftime("%Y-%m-%d %H:%M:%S") + (f".{frac}" if frac else "")


def _zone(name: str | None):
    """A session time zone as MySQL names it (``+02:00``, ``Europe/Paris``), None for
    ``SYSTEM`` (the server's, not in the binlog), none at all, or a name unknown here."""
    from datetime import timedelta, timezone

    if not name or name.upper() == "SYSTEM":
        return None
    m = re.fullmatch(r"([+-])(\d{1,2}):(\d{2})", name.strip())
    if m:
        off = timedelta(hours=int(m[2]), minutes=int(m[3]))
        if off >= timedelta(hours=24) or int(m[3]) > 59:
            return None      # not an offset a server takes (a damaged event)
        return timezone(-off if m[1] == "-" else off)
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (ValueError, OSError, KeyError):
        return None


_NOW_FUNCTIONS = {"NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP"}


def _statement_time(c) -> StatementTime | None:
    """A TIMESTAMP / DATETIME ``ColumnDef`` whose DEFAULT is the statement time (a DATE: its
    date, ``CURRENT_DATE``), else None."""
    from sqlglot import exp

    ctype, _ = type_name(c.kind) if c.kind is not None else ("", False)
    if ctype not in ("timestamp", "datetime", "date"):
        return None
    v = _default_expr(c)
    while isinstance(v, exp.Paren):
        v = v.this
    if ctype == "date":
        return StatementTime(0, True, date=True) if isinstance(v, exp.CurrentDate) else None
    if isinstance(v, (exp.CurrentTimestamp, exp.Localtime, exp.Localtimestamp)):
        args = [v.this] if v.this is not None else []
    elif isinstance(v, exp.Anonymous) and str(v.this).upper() in _NOW_FUNCTIONS:
        args = list(v.expressions)
    else:
        return None
    fn_fsp = int(args[0].name) if args and isinstance(args[0], exp.Literal) else 0
    col_fsp = int(c.kind.expressions[0].name) if c.kind.expressions else 0    # TIMESTAMP(n)
    return StatementTime(min(fn_fsp, col_fsp, 6), ctype == "datetime")


def fill_value(c) -> str | StatementTime | None:
    """The value (as text) the server gives existing rows for an added column (a sqlglot
    ``ColumnDef``): its constant DEFAULT, the statement's time for a temporal whose default is
    ``CURRENT_TIMESTAMP`` (a ``StatementTime``: the mirror reads it from the ALTER's event), or
    for a NOT NULL column without one the type's implicit default (0, the empty string, an
    ENUM's first label); None: NULL or not known (another expression default, a NOT NULL
    temporal: zero dates)."""
    from sqlglot import exp

    has_default, value = _default(c)
    if has_default:
        return value
    now = _statement_time(c)
    if now is not None:
        return now
    if c.kind is None or _default_expr(c) is not None:
        return None
    if not any(isinstance(k.kind, exp.NotNullColumnConstraint) and not k.kind.args.get("allow_null")
               for k in c.constraints):
        return None
    ctype, _unsigned = type_name(c.kind)
    if ctype == "enum":
        labels = _labels(c.kind)
        return labels[0] if labels else None
    return _IMPLICIT.get(ctype)

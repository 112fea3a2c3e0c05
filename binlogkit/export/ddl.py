"""Column names (and what else a table map without FULL metadata lacks: signedness, character
sets, ENUM / SET labels) from ``CREATE TABLE`` statements: the output of ``mariadb-dump
--no-data`` or ``SHOW CREATE TABLE`` (pure: text in, values out).

A statement is matched to a table map by database and table name; a ``CREATE TABLE`` without a
database (``mariadb-dump`` of one database, ``SHOW CREATE TABLE``) takes the database of the
last ``USE`` / ``-- Current Database:`` line, or matches the table name in any database. A
definition whose column count differs from the table map's is not used (the table changed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..collations import BY_CHARSET
from ..rowvalues.tables import ENUM, SET, Table

_CREATE = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                     r"(?:`((?:[^`]|``)+)`|(\w+))(?:\s*\.\s*(?:`((?:[^`]|``)+)`|(\w+)))?\s*\(", re.I)
_USE = re.compile(r"^(?:USE\s+`?([^`;\s]+)`?\s*;|--\s*Current Database:\s*`([^`]+)`)", re.I | re.M)
_COLUMN = re.compile(r"^\s*(?:`((?:[^`]|``)+)`|(\w+))\s+(\w+)(.*)$", re.S)
_CHARSET = re.compile(r"CHARACTER\s+SET\s+['`\"]?(\w+)|CHARSET\s*=?\s*['`\"]?(\w+)", re.I)
_COLLATE = re.compile(r"COLLATE\s*=?\s*['`\"]?(\w+)", re.I)
_PRIMARY = re.compile(r"^\s*(?:CONSTRAINT\s+(?:`[^`]*`|\w+)\s+)?PRIMARY\s+KEY\s*(?:USING\s+\w+\s*)?\((.*)\)", re.I | re.S)
_KEYWORDS = {"PRIMARY", "KEY", "UNIQUE", "INDEX", "CONSTRAINT", "FOREIGN", "FULLTEXT", "SPATIAL", "CHECK",
             "PERIOD", "SYSTEM"}
BINARY_TYPES = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str             # lower-case base type: int, varchar, enum, ...
    unsigned: bool
    charset: str | None   # for character columns: their own or the table's default
    labels: tuple[str, ...] | None  # ENUM / SET members


@dataclass(frozen=True)
class TableDef:
    db: str | None
    name: str
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...] = ()     # column names (lakehouse mirrors key on them)


def _split_top(body: str) -> list[str]:
    """Comma-separated parts of a parenthesised list, commas inside quotes or parentheses kept."""
    parts, depth, cur, quote = [], 0, [], ""
    i = 0
    while i < len(body):
        ch = body[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < len(body):
                cur.append(body[i + 1])
                i += 1
            elif ch == quote:
                if i + 1 < len(body) and body[i + 1] == quote:
                    cur.append(body[i + 1])
                    i += 1
                else:
                    quote = ""
        elif ch in "'\"`":
            quote = ch
            cur.append(ch)
        elif ch == "(":
            depth += 1
            cur.append(ch)
        elif ch == ")":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _body(text: str, start: int) -> tuple[str, int]:
    """The text inside the parenthesis that opens at ``start - 1``, and the position after it."""
    depth, i, quote = 1, start, ""
    while i < len(text) and depth:
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "`":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
    return text[start:i - 1], i


def _labels(spec: str) -> tuple[str, ...]:
    inner = spec[spec.index("(") + 1:spec.rindex(")")] if "(" in spec else ""
    out = []
    for part in _split_top(inner):
        p = part.strip()
        if len(p) >= 2 and p[0] == p[-1] == "'":
            out.append(p[1:-1].replace("''", "'").replace("\\\\", "\\"))
    return tuple(out)


def parse(text: str) -> list[TableDef]:
    """Every ``CREATE TABLE`` in ``text``."""
    out: list[TableDef] = []
    uses = [(m.start(), m.group(1) or m.group(2)) for m in _USE.finditer(text)]
    for m in _CREATE.finditer(text):
        a, b, c, d = m.groups()
        first = (a or b or "").replace("``", "`")
        second = (c or d)
        db, name = (first, second.replace("``", "`")) if second else (None, first)
        if db is None:
            db = next((u for at, u in reversed(uses) if at < m.start()), None)
        body, end = _body(text, m.end())
        tail = text[end:end + 400].split(";", 1)[0]
        cs = _CHARSET.search(tail)
        default_cs = (cs.group(1) or cs.group(2)).lower() if cs else None
        if default_cs is None:
            co = _COLLATE.search(tail)
            default_cs = co.group(1).split("_")[0].lower() if co else None
        cols = []
        key: tuple[str, ...] = ()
        for part in _split_top(body):
            pk = _PRIMARY.match(part)
            if pk:
                key = tuple(n.strip().strip("`").replace("``", "`").split("(")[0].strip("`")
                            for n in _split_top(pk.group(1)))
                continue
            cm = _COLUMN.match(part)
            if cm is None or (cm.group(2) or "").upper() in _KEYWORDS:
                continue
            cname = (cm.group(1) or cm.group(2) or "").replace("``", "`")
            ctype = cm.group(3).lower()
            rest = cm.group(4)
            own = _CHARSET.search(rest)
            charset = (own.group(1) or own.group(2)).lower() if own else None
            if charset is None:
                co = _COLLATE.search(rest)
                charset = co.group(1).split("_")[0].lower() if co else None
            if ctype in BINARY_TYPES:
                charset = "binary"
            elif ctype in ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"):
                charset = charset or default_cs
            labels = _labels(rest) if ctype in ("enum", "set") else None
            cols.append(ColumnDef(cname, ctype, bool(re.search(r"\bunsigned\b", rest, re.I)), charset, labels))
            if re.search(r"\bPRIMARY\s+KEY\b", rest, re.I):
                key = (cname,)
        out.append(TableDef(db, name, tuple(cols), key))
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


def load(path: str | None) -> dict[tuple[str | None, str], TableDef]:
    """``index(parse(...))`` of the file ``--schema`` names (none: empty); ``UsageError`` when it
    holds no CREATE TABLE statement."""
    if not path:
        return {}
    from pathlib import Path

    from ..errors import UsageError

    schema = index(parse(Path(path).read_text(errors="replace")))
    if not schema:
        raise UsageError(f"--schema {path}: no CREATE TABLE statement in it")
    return schema


@dataclass(frozen=True)
class Alter:
    """What an ``ALTER TABLE`` does to columns, by name (from sqlglot's MySQL parse)."""

    db: str | None
    table: str
    renames: tuple[tuple[str, str], ...] = ()      # (old, new): RENAME COLUMN, CHANGE old new
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    retyped: tuple[str, ...] = ()                  # MODIFY / CHANGE: the (new) names


def alter(sql: str, db: str | None = None) -> Alter | None:
    """The column changes of an ``ALTER TABLE`` statement (``db``: the statement's default
    database), None for any other statement or one sqlglot cannot parse as MySQL.
    ``MissingDependency`` (an ImportError) without sqlglot."""
    if not re.match(r"\s*(/\*.*?\*/\s*)*ALTER\s+(ONLINE\s+|IGNORE\s+)*TABLE\b", sql, re.I | re.S):
        return None
    from .._optional import need

    sqlglot = need("sqlglot", "schema changes of lakehouse mirrors", extra="lake")
    from sqlglot import exp

    try:
        e = sqlglot.parse_one(sql, read="mysql")
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(e, exp.Alter) or not isinstance(e.this, exp.Table):
        return None
    renames, added, dropped, retyped = [], [], [], []
    for a in e.args.get("actions") or []:
        if isinstance(a, exp.RenameColumn):
            renames.append((a.this.name, a.args["to"].name))
        elif isinstance(a, exp.ColumnDef):
            added.append(a.name)
        elif isinstance(a, exp.Drop) and (a.args.get("kind") or "").upper() == "COLUMN":
            dropped += [c.name for c in a.args.get("tables") or []]
        elif type(a).__name__ == "ModifyColumn":
            new = a.this.name
            old = a.args.get("rename_from")
            if old is not None and old.name != new:
                renames.append((old.name, new))
            retyped.append(new)
    return Alter(e.this.args["db"].name if e.this.args.get("db") else db, e.this.name, tuple(renames),
                 tuple(added), tuple(dropped), tuple(retyped))

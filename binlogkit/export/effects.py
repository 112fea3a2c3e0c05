"""What a logged statement does to the rows of tables, for a lakehouse mirror (pure: text in,
names out).

A mirror follows row events; a Query event is either harmless to it (users, grants, views,
routines, indexes, maintenance, CREATE TABLE without rows, column changes: ``ddl.alter``), or it
changes which rows a table holds. ``effects`` says which and on which tables:

- ``dml``: statement-format row changes (``binlog_format`` STATEMENT / MIXED: INSERT, UPDATE,
  DELETE, REPLACE, LOAD DATA, CREATE TABLE ... SELECT): rows the mirror never sees;
- ``renames``: RENAME TABLE (every pair, in order), ALTER TABLE ... RENAME [TO];
- ``emptied``: TRUNCATE (``truncate``: the tables stay), DROP TABLE (not TEMPORARY), CREATE OR
  REPLACE TABLE;
- ``databases``: DROP DATABASE / SCHEMA;
- ``unknown``: a statement that changes rows the mirror cannot follow (TRUNCATE / DROP /
  EXCHANGE / IMPORT / DISCARD PARTITION or TABLESPACE), and ``mentions``: the names in a
  statement sqlglot cannot read (or reads as a 'Command') that is not known harmless: the
  caller stops the mirror of each such name it mirrors, never ignores it;
- ``created``: CREATE TABLE (name, its primary key columns or None when not known, TEMPORARY,
  the table it is LIKE).

MariaDB's ``SET STATEMENT ... FOR s`` is ``s``; executable comments (``/*!40005 TEMPORARY */``)
are read as statement text.

A name is (database, table); the database is the statement's own or the session's default
(``db``; None when neither names one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Name = tuple  # (database or None, table)

_LEAD = r"\s*(?:/\*.*?\*/\s*|#[^\n]*\n\s*|--[^\n]*\n\s*)*"
_ID = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_NAME = rf"({_ID})(?:\s*\.\s*({_ID}))?"
# statements that never change a table's rows (first words, upper case)
_HARMLESS = re.compile(
    _LEAD + r"(?:GRANT|REVOKE|FLUSH|ANALYZE|OPTIMIZE|REPAIR|CHECK|CHECKSUM|SET\s+PASSWORD|SET\s+DEFAULT\s+ROLE|"
    r"(?:CREATE(?:\s+OR\s+REPLACE)?|DROP|ALTER|RENAME)\s+(?:USER|ROLE)|INSTALL|UNINSTALL|SAVEPOINT|RELEASE|"
    r"ALTER\s+(?:DATABASE|SCHEMA)|"
    r"(?:DROP|ALTER)\s+(?:DEFINER\s*=\s*\S+\s+)?(?:VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT|INDEX|SERVER)|"
    r"DROP\s+TEMPORARY\s+TABLE|"
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:ALGORITHM\s*=\s*\w+\s+)?(?:DEFINER\s*=\s*\S+\s+)?(?:SQL\s+SECURITY\s+\w+\s+)?"
    r"(?:AGGREGATE\s+)?(?:VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT|UNIQUE|FULLTEXT|SPATIAL|INDEX|SERVER|DATABASE|"
    r"SCHEMA|PACKAGE))\b", re.I | re.S)
_DML = re.compile(_LEAD + r"(INSERT|REPLACE|UPDATE|DELETE|LOAD\s+(?:DATA|XML))\b", re.I | re.S)
_INTO = re.compile(_LEAD + r"(?:INSERT|REPLACE)(?:\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*(?:\s+INTO)?\s+"
                   + _NAME, re.I | re.S)
_ONE_TABLE = re.compile(_LEAD + r"(?:UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*\s+" + _NAME + r"\s+SET\b|"
                        r"DELETE(?:\s+(?:LOW_PRIORITY|QUICK|IGNORE))*\s+FROM\s+" + _NAME +
                        r"\s*(?:$|;|WHERE\b|ORDER\b|LIMIT\b|RETURNING\b))", re.I | re.S)
_LOAD_INTO = re.compile(r"\bINTO\s+TABLE\s+" + _NAME, re.I | re.S)
_RENAME = re.compile(_LEAD + r"RENAME\s+TABLES?\s+(.*)$", re.I | re.S)
_PAIR = re.compile(rf"\s*{_NAME}\s+TO\s+{_NAME}\s*(?:,|$)", re.I | re.S)
_ALTER = re.compile(_LEAD + r"ALTER\s+(?:ONLINE\s+|IGNORE\s+)*TABLE\s+(?:IF\s+EXISTS\s+)?" + _NAME + r"\s*(.*)$",
                    re.I | re.S)
_ROWS_GONE = re.compile(r"\b(?:TRUNCATE|DROP|EXCHANGE|IMPORT|DISCARD)\s+(?:PARTITION|TABLESPACE)\b", re.I)
_WITH_TABLE = re.compile(r"\bWITH\s+TABLE\s+" + _NAME, re.I | re.S)
# partition maintenance that keeps every row (sqlglot reads these as a 'Command')
_KEEPS_ROWS = re.compile(r"(?:ADD|REORGANIZE|COALESCE|REBUILD|OPTIMIZE|ANALYZE|CHECK|REPAIR)\s+PARTITION\b|"
                         r"REMOVE\s+PARTITIONING\b|PARTITION\s+BY\b", re.I)
_TO_UTF8MB4 = re.compile(r"CONVERT\s+TO\s+(?:CHARACTER\s+SET|CHARSET)\s*=?\s*utf8mb4(?:\s+COLLATE\s*=?\s*\w+)?",
                         re.I)
_COLUMN_WORDS = re.compile(r"\b(?:RENAME|CHANGE|MODIFY|ALTER|DROP|ADD\s+COLUMN|CONVERT)\b", re.I)
_CREATE = re.compile(_LEAD + r"CREATE\s+(OR\s+REPLACE\s+)?(TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?" + _NAME,
                     re.I | re.S)
_LIKE = re.compile(r"\s*\(?\s*LIKE\s+" + _NAME, re.I | re.S)
_SELECT = re.compile(r"\bSELECT\b", re.I)
_WORD = re.compile(_NAME)
_EXECUTABLE = re.compile(r"/\*M?!\d*(.*?)\*/", re.S)
_SET_STATEMENT = re.compile(r"\s*SET\s+STATEMENT\b.*?\bFOR\s+", re.I | re.S)


@dataclass(frozen=True)
class Effects:
    dml: tuple[Name, ...] = ()
    renames: tuple[tuple[Name, Name], ...] = ()
    emptied: tuple[Name, ...] = ()
    databases: tuple[str, ...] = ()
    unknown: tuple[Name, ...] = ()
    mentions: tuple[Name, ...] = ()
    created: tuple[tuple[Name, tuple[str, ...] | None, bool, Name | None], ...] = ()   # (name, key, temporary, LIKE)
    truncate: bool = False      # ``emptied`` by TRUNCATE: the tables stay (not dropped)

    def __bool__(self) -> bool:
        return any((self.dml, self.renames, self.emptied, self.databases, self.unknown, self.mentions, self.created))


NONE = Effects()


def _unquote(part: str) -> str:
    return part[1:-1].replace("``", "`") if part.startswith("`") else part


def _name(m, at: int, db: str | None) -> Name:
    """(database, table) of ``_NAME`` groups ``at``, ``at + 1`` of a match."""
    a, b = m.group(at), m.group(at + 1)
    return (_unquote(a), _unquote(b)) if b else (db, _unquote(a))


def _strip_strings(sql: str) -> str:
    """``sql`` with its quoted strings and comments blanked, each character a space (the words left
    are names and keywords, at their places)."""
    return re.sub(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|/\*.*?\*/|#[^\n]*|--\s[^\n]*",
                  lambda m: " " * len(m.group(0)), sql, flags=re.S)


def mentions(sql: str, db: str | None) -> tuple[Name, ...]:
    """Every name the statement could mean a table by: each word, and each ``a.b`` pair."""
    out: list[Name] = []
    for m in _WORD.finditer(_strip_strings(sql)):
        if m.group(1)[0].isdigit() and not m.group(2):
            continue
        out.append(_name(m, 1, db))
    return tuple(dict.fromkeys(out))


def _tables(node, db: str | None) -> list[Name]:
    from sqlglot import exp

    if isinstance(node, exp.Schema):
        node = node.this
    if not isinstance(node, exp.Table) or not node.name:
        return []
    return [(node.db or db, node.name)]


def _dml_targets(sql: str, db: str | None, verb: str) -> tuple[Name, ...] | None:
    """The tables an INSERT / REPLACE / UPDATE / DELETE / LOAD DATA changes; None when it cannot
    tell (the caller falls back to every name the statement mentions)."""
    if verb in ("INSERT", "REPLACE"):
        m = _INTO.match(sql)
        return (_name(m, 1, db),) if m else None
    if verb.startswith("LOAD"):
        m = _LOAD_INTO.search(_strip_strings(sql))
        return (_name(m, 1, db),) if m else None
    m = _ONE_TABLE.match(sql)      # one table (most statements): without sqlglot's parse
    if m:
        return (_name(m, 1 if m.group(1) else 3, db),)
    import sqlglot
    from sqlglot import exp

    from .ddl import dialect

    try:
        e = sqlglot.parse_one(sql, read=dialect())
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return None
    if not isinstance(e, (exp.Update, exp.Delete)):
        return None
    try:
        return _join_targets(e, db)
    except (AttributeError, TypeError, KeyError):   # a damaged statement parsed oddly: its names instead
        return None


def _join_targets(e, db: str | None) -> tuple[Name, ...] | None:
    """The tables a parsed UPDATE / DELETE changes (``_dml_targets``)."""
    from sqlglot import exp

    this = e.this if isinstance(e.this, exp.Expression) else None
    joined = [this] + [j.this for j in (this.args.get("joins") or [])] if this is not None else []
    joined += [j.this for j in (e.args.get("joins") or [])]
    if isinstance(e, exp.Delete) and e.args.get("using"):
        joined += list(e.args["using"].expressions) if hasattr(e.args["using"], "expressions") else []
    by_alias = {}
    for t in joined:
        for n in _tables(t, db):
            by_alias[t.alias_or_name] = n
    if isinstance(e, exp.Delete) and e.args.get("tables"):
        out = [by_alias.get(t.name) or (t.db or db, t.name) for t in e.args["tables"] if isinstance(t, exp.Table)]
        return tuple(dict.fromkeys(out)) or None
    if isinstance(e, exp.Update) and len(by_alias) > 1:
        out = []
        for eq in e.expressions:
            col = eq.this if isinstance(eq, exp.EQ) else None
            if not isinstance(col, exp.Column) or not col.table or col.table not in by_alias:
                return tuple(dict.fromkeys(by_alias.values()))   # an unqualified column: any of them
            out.append(by_alias[col.table])
        return tuple(dict.fromkeys(out)) or None
    return tuple(dict.fromkeys(by_alias.values())) or None


def _renames(rest: str, db: str | None) -> tuple[tuple[Name, Name], ...] | None:
    pairs = []
    pos = 0
    text = rest.rstrip().rstrip(";")
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if not m:
            return None
        pairs.append((_name(m, 1, db), _name(m, 3, db)))
        pos = m.end()
    return tuple(pairs) or None


def _create(sql: str, db: str | None) -> Effects:
    """CREATE TABLE: a new table (its key when the definition says it), emptied when OR REPLACE,
    and statement-format rows when it is filled by a SELECT in the statement."""
    m = _CREATE.match(sql)
    if m is None:
        return Effects(mentions=mentions(sql, db))
    name = _name(m, 3, db)
    replace, temporary = bool(m.group(1)), bool(m.group(2))
    rest = sql[m.end():]
    like = _LIKE.match(rest)
    if like:
        return Effects(emptied=(name,) if replace else (), created=((name, None, temporary, _name(like, 1, db)),))
    key: tuple[str, ...] | None = None
    filled = False
    try:
        import sqlglot
        from sqlglot import exp

        from .ddl import dialect, table_def

        text = re.sub(r"\s+START\s+TRANSACTION\s*$", "", sql, flags=re.I)
        if not _SELECT.search(_strip_strings(text)):    # partitioning: sqlglot reads no PARTITION BY
            text = re.split(r"\bPARTITION\s+BY\b", text, maxsplit=1, flags=re.I)[0]
        e = sqlglot.parse_one(text, read=dialect())
        if isinstance(e, exp.Create):
            filled = e.args.get("expression") is not None
            if isinstance(e.this, exp.Schema):
                key = table_def(e, db).primary_key
        else:           # read as a 'Command': rows by its words
            filled = bool(_SELECT.search(_strip_strings(rest)))
    except Exception:   # noqa: BLE001 - an unreadable definition: its key unknown, rows by its words
        filled = bool(_SELECT.search(_strip_strings(rest)))
    emptied = (name,) if replace else ()
    created = ((name, key, temporary, None),)
    if filled and not temporary:
        return Effects(dml=(name,), emptied=emptied, created=created)
    return Effects(emptied=emptied, created=created)


def _alter(sql: str, db: str | None) -> Effects:
    """ALTER TABLE: a rename (RENAME [TO|AS] x), rows gone or exchanged (partitions, tablespaces:
    ``unknown``); column changes are ``ddl.alter``'s. A statement sqlglot cannot read that is
    not partition maintenance keeping every row: ``unknown`` for its table."""
    m = _ALTER.match(sql)
    if m is None:
        return Effects(mentions=mentions(sql, db))
    name = _name(m, 1, db)
    rest = _strip_strings(m.group(3))
    if re.match(_LEAD + r"ALTER\s+(?:ONLINE\s+)*IGNORE\b", sql, re.I | re.S):
        return Effects(unknown=(name,))     # MariaDB: a new unique key's duplicate rows deleted, unlogged
    if _ROWS_GONE.search(rest):
        other = _WITH_TABLE.search(rest)
        return Effects(unknown=(name,) + ((_name(other, 1, db),) if other else ()))
    import sqlglot
    from sqlglot import exp

    from .ddl import alter_text, dialect

    try:
        e = sqlglot.parse_one(alter_text(sql), read=dialect())
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        e = None
    if not isinstance(e, exp.Alter):
        if _KEEPS_ROWS.match(rest.strip()) and not _COLUMN_WORDS.search(rest):
            return NONE
        if _TO_UTF8MB4.fullmatch(rest.strip().rstrip(";").strip()):
            return NONE       # every character set converts into utf8mb4 without loss: the values stay
        return Effects(unknown=(name,))
    renames = []
    for a in e.args.get("actions") or []:
        if isinstance(a, exp.AlterRename):
            renames += [(name, t) for t in _tables(a.this, db)]
    return Effects(renames=tuple(renames[-1:]))


def effects(sql: str, db: str | None = None) -> Effects:
    """What ``sql`` (a Query event's statement; ``db``: its session's default database) does to
    the rows of which tables (see the module text). ``MissingDependency`` without sqlglot."""
    db = db or None
    if "/*!" in sql or "/*M!" in sql:     # executable comments are statement text: DROP /*!40005 TEMPORARY */ TABLE
        sql = _EXECUTABLE.sub(lambda m: " " + m.group(1) + " ", sql)
    m = _SET_STATEMENT.match(_strip_strings(sql))
    if m:
        return effects(sql[m.end():], db)     # MariaDB's SET STATEMENT var=value, ... FOR <statement>
    if _HARMLESS.match(sql):
        return NONE
    m = _DML.match(sql)
    if m:
        verb = re.sub(r"\s+", " ", m.group(1).upper())
        targets = _dml_targets(sql, db, verb)
        return Effects(dml=targets if targets is not None else mentions(sql, db))
    m = _RENAME.match(sql)
    if m:
        pairs = _renames(_strip_strings(m.group(1)), db)
        return Effects(renames=pairs) if pairs else Effects(mentions=mentions(sql, db))
    if re.match(_LEAD + r"ALTER\s", sql, re.I | re.S):
        return _alter(sql, db) if re.match(_LEAD + r"ALTER\s+(?:ONLINE\s+|IGNORE\s+)*TABLE\b", sql, re.I | re.S) \
            else Effects(mentions=mentions(sql, db))
    if re.match(_LEAD + r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\b", sql, re.I | re.S):
        return _create(sql, db)
    if re.match(_LEAD + r"CREATE\s+(?:OR\s+REPLACE\s+)?SEQUENCE\b", sql, re.I | re.S):
        return NONE    # a sequence is a one-row table of its own: never a mirror's (no primary key)
    if re.match(_LEAD + r"(?:TRUNCATE|DROP\s+TABLE)\b", sql, re.I | re.S):
        from .ddl import emptied

        gone = emptied(sql, db)
        if not gone:
            return Effects(mentions=mentions(sql, db))
        return Effects(emptied=tuple(gone), truncate=bool(re.match(_LEAD + r"TRUNCATE\b", sql, re.I | re.S)))
    m = re.match(_LEAD + r"DROP\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?(" + _ID + r")", sql, re.I | re.S)
    if m:
        return Effects(databases=(_unquote(m.group(1)),))
    if not re.sub(_LEAD, "", sql, count=1).strip() or re.match(r"\s*#", sql):
        return NONE    # a comment only (MariaDB's dummy events)
    if re.match(_LEAD + r"(?:CREATE\s+DATABASE|CREATE\s+SCHEMA|USE|SET|XA|BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION)\b",
                sql, re.I | re.S):
        return NONE
    return Effects(mentions=mentions(sql, db))


def shortened(sql: str, width: int = 80) -> str:
    """A statement on one line, at most ``width`` characters (… where cut)."""
    one = " ".join(sql.split())
    return one if len(one) <= width else one[:width - 1] + "…"

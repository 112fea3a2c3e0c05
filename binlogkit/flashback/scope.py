"""Which statements of a range block a filtered undo (pure: text in, answer out).

A statement (DDL, statement-format DML) cannot be undone from row images. With ``--table`` /
``--database`` the undo writes only the filtered tables' rows; a statement then matters only if
it could change what those tables hold or how their rows look. ``outside`` says when it cannot:

* it is DDL or an account / maintenance statement (first word CREATE, ALTER, DROP, RENAME,
  TRUNCATE, GRANT, REVOKE, FLUSH, ANALYZE, OPTIMIZE, REPAIR, CHECK, INSTALL, UNINSTALL) and not a
  ``CREATE TABLE ... SELECT`` (rows written by a statement);
* no name it could mean a table by (every word, every ``a.b`` pair, an unqualified word in the
  statement's default database) is one the filters take;
* it is no DROP DATABASE (or MariaDB's CREATE OR REPLACE DATABASE) of a database the filters
  take tables from (CREATE / ALTER DATABASE change no row: a table in a database created in the
  range was created in the range too).

Statement-format DML (INSERT, UPDATE, DELETE, LOAD DATA, a stored function's call) always blocks,
whatever table it names: a trigger or a function it runs can change the filtered tables, and a
statement-format binlog logs the statement alone, not those changes.
"""

from __future__ import annotations

import fnmatch
import re

from ..export.effects import mentions

_LEAD = r"\s*(?:/\*.*?\*/\s*|#[^\n]*\n\s*|--[^\n]*\n\s*)*"
_EXECUTABLE = re.compile(r"/\*M?!\d*(.*?)\*/", re.S)
_SET_STATEMENT = re.compile(r"\s*SET\s+STATEMENT\b.*?\bFOR\s+", re.I | re.S)
_DDL = re.compile(_LEAD + r"(?:CREATE|ALTER|DROP|RENAME|TRUNCATE|GRANT|REVOKE|FLUSH|ANALYZE|OPTIMIZE|REPAIR|CHECK|"
                  r"INSTALL|UNINSTALL)\b", re.I | re.S)
_CREATE_TABLE = re.compile(_LEAD + r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\b", re.I | re.S)
_SELECT = re.compile(r"\bSELECT\b", re.I)
_ID = r"(?:`(?:[^`]|``)+`|[\w$]+)"
# statements that remove a database's tables: DROP DATABASE, MariaDB's CREATE OR REPLACE DATABASE
_DROP_DATABASE = re.compile(_LEAD + r"(?:DROP|CREATE\s+OR\s+REPLACE)\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?("
                            + _ID + ")", re.I | re.S)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _takes(db: str, table: str, databases: tuple[str, ...], tables: tuple[str, ...]) -> bool:
    """Whether the filters (``Filters.wants``' rule) take ``db.table``."""
    if databases and not any(fnmatch.fnmatchcase(db, d) for d in databases):
        return False
    return not tables or any(fnmatch.fnmatchcase(f"{db}.{table}", p) for p in tables)


def _takes_from(db: str, databases: tuple[str, ...], tables: tuple[str, ...]) -> bool:
    """Whether the filters could take a table of database ``db``."""
    if databases and not any(fnmatch.fnmatchcase(db, d) for d in databases):
        return False
    return not tables or any(fnmatch.fnmatchcase(db, p.split(".", 1)[0]) for p in tables)


def outside(sql: str, db: str | None, databases: tuple[str, ...], tables: tuple[str, ...]) -> bool:
    """Whether statement ``sql`` (``db``: its session's default database) can change neither the
    rows nor the shape of any table the filters take (see the module text). With no filter, no
    statement is outside."""
    if not databases and not tables:
        return False
    if "/*!" in sql or "/*M!" in sql:     # executable comments are statement text
        sql = _EXECUTABLE.sub(lambda m: " " + m.group(1) + " ", sql)
    m = _SET_STATEMENT.match(sql)
    if m:
        sql = sql[m.end():]               # MariaDB's SET STATEMENT ... FOR <statement>
    if not _DDL.match(sql):
        return False
    if _CREATE_TABLE.match(sql) and _SELECT.search(sql):
        return False
    m = _DROP_DATABASE.match(sql)
    if m and _takes_from(_unquote(m.group(1)), databases, tables):
        return False
    return not any(d is not None and _takes(d, t, databases, tables) for d, t in mentions(sql, db or None))

"""The queries a replica sends before its dump, answered, pure: ``answer(sql, globals_, session)``
gives the reply payloads of one COM_QUERY.

What replicas send (captured from MariaDB 10.11 / 11.8 and MySQL 9.7 replicas, see
docs/serve.md)::

    SELECT UNIX_TIMESTAMP()                      SELECT @@GLOBAL.SERVER_ID
    SET @master_heartbeat_period= N              SET @master_binlog_checksum= @@global.binlog_checksum
    SELECT @master_binlog_checksum               SET @mariadb_slave_capability=4
    SET @slave_connect_state='0-1-5'             SET @slave_gtid_strict_mode=1
    SELECT @@GLOBAL.gtid_domain_id               SELECT @@GLOBAL.SERVER_UUID
    SET @source_heartbeat_period= N              SELECT @@GLOBAL.GTID_MODE    ...

The grammar taken is that of those statements: ``SET`` of user variables (``@name = value``,
comma-separated; a value is a number, a quoted string or a ``@@[global.]variable``), ``SELECT``
of a list of expressions (``UNIX_TIMESTAMP()``, ``@@[global.|session.]variable``, ``@user``,
literals; ``AS`` aliases and ``LIMIT 1`` allowed), ``SHOW [GLOBAL|SESSION] VARIABLES LIKE 'x'``
and ``SET NAMES``. An unknown system variable is the server's 1193; any other statement is
refused with 1235, never answered with made-up rows.
"""

from __future__ import annotations

import fnmatch
import re
import time
from typing import Callable

from .wire import ER_PARSE, ER_UNKNOWN_SYSTEM_VARIABLE, err, ok, result_set

ER_NOT_SUPPORTED_YET = 1235
MAX_USER_VARS = 64            # a session's user variables (a replica sets about ten)
MAX_VALUE = 1 << 16           # bytes of one user variable's value

_STRING = r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\""
_TOKEN = re.compile(rf"\s*(?:(?P<str>{_STRING})|(?P<num>-?\d+(?:\.\d+)?)|(?P<sys>@@(?:(?:global|session|local)\.)?"
                    r"`?[A-Za-z_][A-Za-z0-9_$]*`?)|(?P<user>@`?[A-Za-z_][A-Za-z0-9_$.]*`?)|(?P<fn>[A-Za-z_]+\(\s*\))"
                    r"|(?P<null>NULL\b))", re.IGNORECASE)


class QueryError(Exception):
    """A statement answered with an ERR packet (``code``, the server's text)."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


def _unquote(s: str) -> str:
    body = s[1:-1]
    if s[0] == "'":
        body = body.replace("''", "'")
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "0": "\0"}.get(m.group(1), m.group(1)), body)


def _value(sql: str, at: int, globals_: dict, session: dict, clock: Callable[[], float]) -> tuple[object, int, str]:
    """(value, next offset, the expression's text) of the expression at ``at``."""
    m = _TOKEN.match(sql, at)
    if not m:
        raise QueryError(ER_PARSE, f"You have an error in your SQL syntax near '{sql[at:at + 40].strip()}'")
    text = m.group(0).strip()
    if m.group("str") is not None:
        v: object = _unquote(m.group("str"))
    elif m.group("num") is not None:
        n = m.group("num")
        if len(n) > 40:   # no replica sends such a number (and int() refuses 4,300 digits)
            raise QueryError(ER_NOT_SUPPORTED_YET, f"binlogkit serve takes numbers of at most 40 characters "
                                                   f"(not one of {len(n)})")
        v = int(n) if "." not in n else n
    elif m.group("sys") is not None:
        name = m.group("sys")[2:].replace("`", "")
        name = name.split(".", 1)[1] if "." in name else name
        key = name.lower()
        if key not in globals_:
            raise QueryError(ER_UNKNOWN_SYSTEM_VARIABLE, f"Unknown system variable '{name}'")
        v = globals_[key]
        v = int(v) if isinstance(v, bool) else v      # a boolean variable selected: 1 / 0
    elif m.group("user") is not None:
        v = session.get(m.group("user")[1:].replace("`", "").lower())
    elif m.group("fn") is not None:
        fn = m.group("fn").split("(")[0].upper()
        if fn == "UNIX_TIMESTAMP":
            v = int(clock())
        elif fn == "VERSION" and "version" in globals_:
            v = globals_["version"]
        else:
            raise QueryError(ER_NOT_SUPPORTED_YET, f"binlogkit serve does not evaluate {fn}()")
    else:
        v = None
    return v, m.end(), text


def _set(sql: str, body_at: int, globals_: dict, session: dict, clock) -> list[bytes]:
    at = body_at
    if re.match(r"\s*NAMES\b", sql[at:], re.IGNORECASE):
        return [ok()]
    while True:
        m = re.compile(r"\s*@`?([A-Za-z_][A-Za-z0-9_$.]*)`?\s*:?=\s*").match(sql, at)
        if not m:
            raise QueryError(ER_NOT_SUPPORTED_YET, "binlogkit serve takes SET of user variables only "
                                                   f"(not '{sql[body_at:body_at + 60].strip()}')")
        name = m.group(1).lower()
        v, at, _ = _value(sql, m.end(), globals_, session, clock)
        if isinstance(v, str) and len(v) > MAX_VALUE:
            raise QueryError(ER_NOT_SUPPORTED_YET, f"a value of {len(v)} bytes for @{name}: refused")
        if name not in session and len(session) >= MAX_USER_VARS:
            raise QueryError(ER_NOT_SUPPORTED_YET, f"more than {MAX_USER_VARS} user variables: refused")
        session[name] = v
        rest = sql[at:].lstrip()
        if not rest:
            return [ok()]
        if rest[0] != ",":
            raise QueryError(ER_PARSE, f"You have an error in your SQL syntax near '{rest[:40]}'")
        at = len(sql) - len(rest) + 1


def _select(sql: str, body_at: int, globals_: dict, session: dict, clock) -> list[bytes]:
    names, values = [], []
    at = body_at
    while True:
        v, at, text = _value(sql, at, globals_, session, clock)
        m = re.compile(r"\s*(?:AS\s+)?(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)?", re.IGNORECASE).match(sql, at)
        alias = m.group(1) if m and m.group(1) and m.group(1).upper() != "LIMIT" else None
        if alias:
            at = m.end() if m else at
        names.append(alias.strip("`") if alias else text)
        values.append(v)
        rest = sql[at:].strip()
        if rest.startswith(","):
            at = len(sql) - len(rest) + 1
            continue
        if rest and not re.fullmatch(r"LIMIT\s+1", rest, re.IGNORECASE):
            raise QueryError(ER_NOT_SUPPORTED_YET, f"binlogkit serve does not answer '{sql[:80]}'")
        return result_set(names, [tuple(values)])


def _show_variables(pattern: str, globals_: dict) -> list[bytes]:
    pat = pattern.lower().replace("%", "*").replace("_", "?")
    rows = [(k, "" if v is None else ("ON" if v else "OFF") if isinstance(v, bool) else str(v))
            for k, v in sorted(globals_.items()) if fnmatch.fnmatchcase(k, pat)]
    return result_set(["Variable_name", "Value"], rows)


def answer(sql: str, globals_: dict, session: dict, clock: Callable[[], float] = time.time) -> list[bytes]:
    """The reply payloads of one query: OK, a result set, or an ERR packet. ``globals_``: the
    system variables serve answers (lower-case names); ``session``: the user variables, updated."""
    s = sql.strip().rstrip(";").strip()
    try:
        m = re.match(r"(SET|SELECT)\s+", s, re.IGNORECASE)
        if m and m.group(1).upper() == "SET":
            return _set(s, m.end(), globals_, session, clock)
        if m:
            return _select(s, m.end(), globals_, session, clock)
        m = re.fullmatch(r"SHOW\s+(?:GLOBAL\s+|SESSION\s+)?VARIABLES\s+LIKE\s+(" + _STRING + ")", s, re.IGNORECASE)
        if m:
            return _show_variables(_unquote(m.group(1)), globals_)
        raise QueryError(ER_NOT_SUPPORTED_YET, f"binlogkit serve does not answer '{s[:80]}'")
    except QueryError as exc:
        return [err(exc.code, str(exc))]


__all__ = ["answer", "QueryError"]

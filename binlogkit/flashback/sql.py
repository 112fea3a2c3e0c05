"""``flashback --sql``: the undo as SQL statements instead of a binlog.

One undo rows event becomes one statement per row, in the undo order (``invert``)::

    undo Delete_rows (the original inserted)   DELETE FROM `db`.`t` WHERE <key> LIMIT 1;
    undo Write_rows  (the original deleted)    INSERT INTO `db`.`t` (`c1`, ...) VALUES (...);
    undo Update_rows                           UPDATE `db`.`t` SET `c1`=..., ... WHERE <key> LIMIT 1;

the whole output **one transaction** (``BEGIN;`` first, ``COMMIT;`` last; each undo
transaction's statements after a ``-- undo of GTID`` comment, ``FILE:OFFSET`` without a GTID):
a statement that fails stops the
client, the connection closes with the transaction open and the server rolls it back — a failed
replay changes nothing (tables of a transactional engine). Column names come from the table
maps (``binlog_row_metadata=FULL``); without them the statements cannot be written and the
flashback is refused. ``<key>`` is the primary key when the table map names it, otherwise every
column but JSON and geometry ones (``IS NULL`` for NULL).

Generated columns: the table map does not say which columns are generated (neither flavor's
optional metadata has such a field), and their values are in the row images (MariaDB 11.8 leaves
them out: ``invert``, then the statements write the columns the images hold). MariaDB ignores a
value given for one, with a warning, under the script's non-strict ``sql_mode``; MySQL refuses it
(ERROR 3105) whatever the mode (``flavor.refuses_generated_column_values``). So for MySQL, the
first INSERT or UPDATE of each table is preceded by a check of ``information_schema`` that stops
the replay before it, naming the generated columns it would write (``generated_guard``);
``generated`` (``--generated DB.TABLE.COLUMN``) leaves those columns out of INSERT and SET.

Values are written so the server reads back exactly the logged bytes, whatever the session
character set: strings as ``_charset X'hex'`` (the column's character set from the table map;
plain ``X'hex'`` for binary columns or when the map does not say), FLOAT/DOUBLE in exponent
form (an exact double literal, not a DECIMAL one), TIMESTAMP as UTC text under the script's
``SET time_zone='+00:00'``, ENUM/SET as their index/bitmap numbers, BIT as ``b'...'``, geometry
as its stored bytes (SRID + WKB), MySQL JSON as ``CAST(... AS JSON)``,
VECTOR as ``STRING_TO_VECTOR('[...]')`` (each float32 as the shortest decimal that reads back
exact). The script sets a
non-strict ``sql_mode`` with ``NO_AUTO_VALUE_ON_ZERO`` and ``ALLOW_INVALID_DATES`` so that zero
dates and id 0 come back as they were (row events bypass the SQL mode; SQL does not).
"""

from __future__ import annotations

import os
from contextlib import closing

from ..collations import CHARSET_OF
from ..constants import EventType as T
from ..errors import BinlogError
from ..flavor import refuses_generated_column_values
from ..rowvalues.tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DECIMAL, DOUBLE, ENUM,
                                FLOAT, GEOMETRY, INT24, JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE,
                                NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY,
                                TINY_BLOB, VAR_STRING, VARCHAR, VECTOR, YEAR, Column, Table)
from ..rowvalues.values import reader
from .plan import FlashbackRefused, nothing

INT_BYTES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}
STRINGS = {VARCHAR, VAR_STRING, STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB}
NOT_IN_KEY = {JSON, GEOMETRY, VECTOR}
DELETES = {T.DELETE_ROWS_EVENT, T.DELETE_ROWS_EVENT_V1, T.PRE_GA_DELETE_ROWS_EVENT}
WRITES = {T.WRITE_ROWS_EVENT, T.WRITE_ROWS_EVENT_V1, T.PRE_GA_WRITE_ROWS_EVENT}

HEAD = ("-- binlogkit flashback: replay with `mariadb < FILE` or `mysql < FILE` (not --force): one transaction,\n"
        "-- committed by its last line; a statement that fails stops the client, and nothing is changed\n"
        "SET NAMES utf8mb4;\n"
        "SET SESSION time_zone = '+00:00';\n"
        "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION';\n")


GUARDED = ("-- the binlog does not say which columns are generated, and this server refuses values for them:\n"
           "-- before a table's first INSERT or UPDATE, a check stops the replay (nothing changed) when one is\n"
           "-- written; flashback --generated DB.TABLE.COLUMN leaves such a column out\n")


def ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _hex(raw: bytes | bytearray) -> str:
    return f"X'{raw.hex()}'"


def literal(col: Column, value, unsigned: bool) -> str:
    """The SQL literal of one decoded column value (``Value.value``) that reads back as the
    logged value."""
    t = col.real_type
    v = value.value
    if t in INT_BYTES:
        return str(v + (1 << 8 * INT_BYTES[t]) if unsigned and v < 0 else v)
    if t in (FLOAT, DOUBLE):
        return repr(float(v)) if "e" in repr(float(v)) else repr(float(v)) + "e0"
    if t in (NEWDECIMAL, DECIMAL):
        return format(v, "f")
    if t == YEAR:
        return str(v)
    if t in (ENUM, SET):
        return str(v)
    if t == BIT:
        return value.text
    if t in (DATE, NEWDATE):
        return value.text.replace(":", "-")
    if t in (DATETIME, DATETIME2, TIME, TIME2):
        return value.text
    if t in (TIMESTAMP, TIMESTAMP2):
        if isinstance(v, str):
            return f"'{v}'"
        if isinstance(v, float):      # out of datetime's range: seconds since the epoch
            return f"FROM_UNIXTIME({v})"
        frac = col.meta if t == TIMESTAMP2 else 0
        text = v.strftime("%Y-%m-%d %H:%M:%S") + (("." + f"{v.microsecond:06d}"[:frac]) if frac else "")
        return f"'{text}'"
    if t == JSON:
        return f"CAST(_utf8mb4 {_hex(v.encode('utf-8'))} AS JSON)"
    if t == VECTOR:  # each float32 as its shortest exact decimal: reads back as the same bytes
        return "STRING_TO_VECTOR('[" + ",".join(repr(f) for f in v) + "]')"
    if t == GEOMETRY:
        return _hex(v.srid.to_bytes(4, "little") + v.wkb)
    if t in STRINGS:
        raw = v if isinstance(v, (bytes, bytearray)) else str(v).encode("utf-8")
        cs = CHARSET_OF.get(col.collation) if col.collation not in (None, BINARY_COLLATION) else None
        return f"_{cs} {_hex(raw)}" if cs else _hex(raw)
    raise FlashbackRefused(f"column @{col.index + 1} has type {t}: --sql cannot write it")


def _text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def generated_guard(table: Table, written: list[str]) -> str:
    """Statements that stop the replay, before the first statement on ``table``, when the server
    has a generated column among the ``written`` ones: the binlog does not say which columns are
    generated, and MySQL refuses a value for one (ERROR 3105). The stop is an error naming the
    columns (setting ``sql_mode`` to an impossible value, ERROR 1231: plain SQL has no SIGNAL);
    the client stops there and the open transaction is rolled back."""
    names = ", ".join(_text(n) for n in written)
    return (f"SET @binlogkit_generated = (SELECT GROUP_CONCAT(CONCAT(TABLE_SCHEMA, '.', TABLE_NAME, '.', COLUMN_NAME) "
            f"SEPARATOR ' ') FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = {_text(table.db)} AND "
            f"TABLE_NAME = {_text(table.name)} AND COLUMN_NAME IN ({names}) AND GENERATION_EXPRESSION <> '');\n"
            "SET SESSION sql_mode = IF(@binlogkit_generated IS NULL, @@SESSION.sql_mode, CONCAT('binlogkit: generated "
            "column ', @binlogkit_generated, ' cannot be written: nothing was changed; run flashback again with "
            "--generated ', REPLACE(@binlogkit_generated, ' ', ' --generated ')));\n")


class _Writer:
    """Statements of one table, made once per table map. ``omit``: (db, table, column) of the
    generated columns left out of INSERT and SET (they stay in WHERE: they can be read).
    ``present``: the columns the images hold, when not all (generated ones left out: ``invert``)."""

    def __init__(self, table: Table, omit: frozenset[tuple[str, str, str]] = frozenset(),
                 present: tuple[int, ...] | None = None) -> None:
        if not table.column_names or len(table.column_names) != len(table.columns):
            raise FlashbackRefused(f"`{table.db}`.`{table.name}`: the binlog carries no column names "
                                   "(binlog_row_metadata=MINIMAL): --sql needs binlog_row_metadata=FULL; "
                                   "the binlog output (without --sql) does not")
        self.table = table
        self.name = f"{ident(table.db)}.{ident(table.name)}"
        self.cols = [ident(n) for n in table.column_names]
        self.present = list(range(len(table.columns))) if present is None else list(present)
        self.written = [i for i in self.present if (table.db, table.name, table.column_names[i]) not in omit]
        self.omitted = {(table.db, table.name, n) for n in table.column_names} & omit
        self.readers = [reader(table.columns[i]) for i in self.present]
        self.unsigned = [i in table.unsigned for i in range(len(table.columns))]
        pk = table.primary_key
        self.key = list(pk) if pk and set(pk) <= set(self.present) else \
            [i for i in self.present if table.columns[i].real_type not in NOT_IN_KEY]

    def values(self, image: bytes) -> list[str]:
        """The literal of each column of the table ('' for a column the image leaves out)."""
        n = len(self.readers)
        nb = (n + 7) // 8
        nulls = int.from_bytes(image[:nb], "little")
        p, out = nb, [""] * len(self.table.columns)
        for k, i in enumerate(self.present):
            if nulls >> k & 1:
                out[i] = "NULL"
            else:
                value, p = self.readers[k](image, p)
                out[i] = literal(self.table.columns[i], value, self.unsigned[i])
        return out

    def where(self, vals: list[str]) -> str:
        return " AND ".join(f"{self.cols[k]} IS NULL" if vals[k] == "NULL" else f"{self.cols[k]}={vals[k]}"
                            for k in self.key)

    def statements(self, undo_type: int, rows) -> list[str]:
        out = []
        for image, other in rows:
            vals = self.values(image)
            if undo_type in WRITES:
                out.append(f"INSERT INTO {self.name} ({', '.join(self.cols[k] for k in self.written)}) "
                           f"VALUES ({', '.join(vals[k] for k in self.written)});\n")
            elif undo_type in DELETES:
                out.append(f"DELETE FROM {self.name} WHERE {self.where(vals)} LIMIT 1;\n")
            else:   # update: image is the undo's before (what the row is now), other what it becomes
                new = self.values(other)
                sets = ", ".join(f"{self.cols[k]}={new[k]}" for k in self.written)
                out.append(f"UPDATE {self.name} SET {sets} WHERE {self.where(vals)} LIMIT 1;\n")
        return out


def produce_sql(plan, local: dict, fmt, filters, res, expected=None,
                omit: frozenset[tuple[str, str, str]] = frozenset()):
    """``produce(sink)`` writing the undo of ``plan`` as SQL (see the module docstring): one
    transaction, each undo transaction's statements after a comment naming it."""
    from .undo import undo_plan

    guard = refuses_generated_column_values(fmt.flavor)

    def produce(sink) -> None:
        sink.write((HEAD + (GUARDED if guard else "") + "BEGIN;\n").encode())
        writers: dict[tuple, _Writer] = {}
        guarded: set[tuple[str, str, tuple[int, ...]]] = set()
        unused = set(omit)
        with closing(undo_plan(plan, local, fmt, filters, res.skipped, res.outside)) as transactions:
            for (name, events), (_name, start, _end) in zip(transactions, plan.reversed()):
                opened, gtid = False, None
                for out in events:
                    if out.rows is None:
                        gtid = gtid or out.gtid   # the BEGIN carries it
                        continue
                    if not opened:
                        what = gtid or f"the transaction at {os.path.basename(name)}:{start}"
                        sink.write(f"-- undo of {what}\n".encode())
                        opened = True
                    t = out.table
                    if t is None:  # undo_transaction gives every undo rows event its table
                        raise BinlogError("internal: an undo rows event without its table", file=name)
                    key = (t.db, t.name, t.columns, t.column_names, t.primary_key, out.present)
                    w = writers.get(key)
                    if w is None:
                        if len(writers) > 1024:
                            writers.clear()
                        w = writers[key] = _Writer(t, omit, out.present)
                        unused.difference_update(w.omitted)
                    if guard and out.type_code not in DELETES and (t.db, t.name, tuple(w.written)) not in guarded:
                        guarded.add((t.db, t.name, tuple(w.written)))
                        sink.write(generated_guard(t, [t.column_names[k] for k in w.written]).encode())
                    for stmt in w.statements(out.type_code, out.rows):
                        sink.write(stmt.encode("utf-8"))
                    res.rows += len(out.rows)
                    res.events += 1
                    if expected is not None:
                        expected.add(out)
                res.undone += opened
        if not res.undone:
            raise FlashbackRefused(nothing(filters.filtered, len(res.skipped)))
        if unused:
            names = ", ".join(".".join(c) for c in sorted(unused))
            raise FlashbackRefused(f"--generated {names}: no such column in the tables the undo writes (names are "
                                   "case-sensitive, as the binlog's table maps give them): nothing written")
        sink.write(b"COMMIT;\n")
        res.bytes = sink.size
    return produce

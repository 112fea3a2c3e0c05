"""Start a mirror from a SQL dump (``mariadb-dump`` / ``mysqldump``, ``.sql``, ``.sql.gz``,
``.sql.xz``): every keyed table's rows become the first commit of its mirror ``DB.T``, at the
dump's coordinates (``pitr.backup.read_backup_info``: its ``CHANGE MASTER TO`` and
``gtid_slave_pos`` / ``GTID_PURGED`` lines).

The dump is read statement by statement (a statement ends at a line that ends with the
delimiter, as the dump tools write them; ``DELIMITER`` lines are followed) and each statement
is parsed by sqlglot (MySQL): ``CREATE TABLE`` gives the columns and the primary key, ``INSERT
... VALUES`` the rows, cut into batches of ``batch_rows`` rows, so memory holds one batch. Values
take the Arrow types the binlog path gives (``export.schema``'s table, with FULL metadata),
then ``types.to_lake``: a mirror started from a dump equals one built from the whole archive.

=====================================  =====================================================
statement                              done
=====================================  =====================================================
CREATE TABLE                           the table's columns and key (no key: not loaded)
INSERT [IGNORE] INTO t [(cols)] VALUES  rows of ``t``
SET, LOCK/UNLOCK TABLES, USE, DROP     skipped (harmless in a dump: session settings,
TABLE/VIEW, CREATE DATABASE/VIEW/      locks, the objects' definitions)
TRIGGER/PROCEDURE/FUNCTION/EVENT,
ALTER TABLE .. DISABLE/ENABLE KEYS,
START TRANSACTION, COMMIT, comments
anything else (UPDATE, DELETE,         ``DumpError`` naming the file and line: a change the
REPLACE, ALTER TABLE, LOAD DATA, ...)  load cannot apply
=====================================  =====================================================

Commits: a table's batches are appended without coordinates and its last commit carries them,
so a table counts as loaded only once it is whole; a run killed mid-table leaves a table
without coordinates, and the rerun loads it again as an upsert by key (no row twice).
TIMESTAMP values are read as UTC (the dump tools' default ``--tz-utc``).
"""

from __future__ import annotations

import datetime
import decimal
import io
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...errors import UsageError
from .props import PREFIX

BATCH_ROWS = 10_000
SUFFIXES = (".sql", ".sql.gz", ".sql.xz", ".sql.bz2")

_HARMLESS = re.compile(r"(SET|LOCK|UNLOCK|USE|DROP\s+(TABLE|VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT|DATABASE)|"
                       r"CREATE\s+(DATABASE|SCHEMA)|START\s+TRANSACTION|BEGIN|COMMIT|FLUSH|"
                       r"(CREATE|ALTER)\s+.*?\b(VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\b|"
                       r"ALTER\s+TABLE\s+\S+\s+(DISABLE|ENABLE)\s+KEYS)\b", re.I | re.S)
_CREATE = re.compile(r"CREATE\s+(OR\s+REPLACE\s+)?TABLE\b", re.I)
_INSERT = re.compile(r"INSERT\b", re.I)
_USE = re.compile(r"USE\s+`?([^`;\s]+)`?", re.I)
_VERSION_COMMENT = re.compile(r"--\s*Server version:?\s+(\S+)", re.I)
_DB_COMMENT = re.compile(r"--\s*(?:Current\s+Database:\s*`([^`]+)`|Host:.*\bDatabase:\s*(\S+))", re.I)
_COND = re.compile(r"^/\*M?!\d*\s*(.*?)\s*\*/$", re.S)


class DumpError(UsageError):
    """A SQL dump statement the mirror load cannot apply or parse; ``file`` and ``line`` (the
    statement's first line, 1-based) name it (exit 2)."""

    line: int | None = None


def is_dump(path: str) -> bool:
    return str(path).lower().endswith(SUFFIXES)


@dataclass
class Column:
    name: str
    types: list                       # Arrow types: the column's, then its __text companion when dated
    convert: Callable[[Any], tuple]   # a raw value -> (value[, text])


def statements(lines: Iterator[str]) -> Iterator[tuple[int, str]]:
    """(first line, text) of each statement (comments and blank lines between them dropped)."""
    delim, start = ";", 0
    buf: list[str] = []
    for no, line in enumerate(lines, 1):
        s = line.rstrip("\r\n")
        if not buf:
            t = s.strip()
            if not t or t.startswith("--") or t.startswith("#"):
                if t.startswith("--"):
                    yield no, t  # a comment: the database it names
                continue
            if t.startswith("/*") and t.endswith("*/"):
                continue  # a comment line with no statement after it (MariaDB's sandbox-mode line)
            if t.upper().startswith("DELIMITER "):
                delim = t.split(None, 1)[1].strip()
                continue
            start = no
        buf.append(s)
        if s.rstrip().endswith(delim):
            text = "\n".join(buf).rstrip()
            yield start, text[: -len(delim)].strip()
            buf = []
    if buf:
        yield start, "\n".join(buf).strip()


def _raw(e) -> Any:
    """A VALUES item as str (numbers and strings), bytes (0x.., _binary), ('bits', text) or None."""
    from sqlglot import exp

    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Literal):
        return str(e.this)
    if isinstance(e, exp.Neg):
        inner = _raw(e.this)
        return "-" + inner if isinstance(inner, str) else None
    if isinstance(e, exp.HexString):
        return bytes.fromhex(str(e.this))
    if isinstance(e, exp.BitString):
        return ("bits", str(e.this))
    if isinstance(e, exp.Introducer):
        inner = _raw(e.expression)
        return inner.encode("utf-8", "surrogateescape") if isinstance(inner, str) else inner
    if isinstance(e, exp.Column) and e.name.lower() == "0x":   # mysqldump --hex-blob's empty value
        return b""
    if isinstance(e, exp.Boolean):
        return "1" if e.this else "0"
    raise ValueError(f"value {e.sql('mysql')[:60]}")


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _bytes(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogateescape")


def _int(v) -> int:
    if isinstance(v, tuple):
        return int(v[1] or "0", 2)
    if isinstance(v, bytes):
        return int.from_bytes(v, "big")
    return int(v) if v.lstrip("-").isdigit() else int(decimal.Decimal(v))


def _stored(kind: str):
    """UUID / INET6 / INET4 text -> the bytes the binlog path gives (BINARY(n), padded):
    ``rowvalues.values.hinted`` backwards."""
    import ipaddress
    import uuid

    def conv(v) -> bytes:
        s = _text(v)
        raw = (uuid.UUID(s).bytes if kind == "uuid" else ipaddress.IPv4Address(s).packed if kind == "inet4"
               else ipaddress.IPv6Address(s).packed)
        return raw
    return conv


def _bit(v) -> int:
    """BIT: b'0101', 0x.., or the value's bytes as a string (mariadb-dump without --hex-blob)."""
    return _int(v) if isinstance(v, (tuple, bytes)) else int.from_bytes(_bytes(v), "big")


def _temporal(kind: str, tz):
    def conv(v):
        if v is None:
            return None, None
        s = _text(v)
        try:
            if kind == "date":
                return datetime.date.fromisoformat(s), None
            d = datetime.datetime.fromisoformat(s)
            return (d.replace(tzinfo=datetime.timezone.utc) if tz else d), None
        except ValueError:
            return None, s      # a zero or invalid date: null, and the server's text beside it
    return conv


def _time(v):
    s = _text(v)
    neg = s.startswith("-")
    h, m, sec = s.lstrip("-").split(":")
    whole, _, frac = sec.partition(".")
    us = ((int(h) * 60 + int(m)) * 60 + int(whole)) * 1_000_000 + int((frac + "000000")[:6])
    return datetime.timedelta(microseconds=-us if neg else us)


def _vector(v) -> list:
    """VECTOR: the dump's bytes (float32, little-endian) as the list MySQL's binlog path gives."""
    import struct

    raw = _bytes(v)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def column_of(c, flavor=None) -> Column:
    """The mirror column of a sqlglot ``ColumnDef`` (``export.schema.arrow_type``'s table);
    ``flavor``: the dumped server's (``-- Server version`` line), for the flavors' VECTOR."""
    from ...flavor import vector_is_floats

    import pyarrow as pa
    from sqlglot import exp

    name = c.name
    t = c.kind.this.name   # sqlglot's type name: INT, UINT, DECIMAL, ...
    args = [int(x.name) for x in c.kind.expressions if isinstance(x, exp.DataTypeParam) and x.name.isdigit()]
    one = lambda typ, f: Column(name, [typ], lambda v: (None if v is None else f(v),))  # noqa: E731
    ints = {'TINYINT': pa.int8(), 'UTINYINT': pa.uint8(), 'SMALLINT': pa.int16(), 'USMALLINT': pa.uint16(),
            'MEDIUMINT': pa.int32(), 'UMEDIUMINT': pa.uint32(), 'INT': pa.int32(), 'UINT': pa.uint32(),
            'BIGINT': pa.int64(), 'UBIGINT': pa.uint64()}
    if t in ('UUID', 'IPV6', 'IPV4'):   # MariaDB logs them as BINARY(n) (ddl.dialect: INET6 is IPV6)
        return one(pa.binary(), _stored({'UUID': "uuid", 'IPV6': "inet6", 'IPV4': "inet4"}[t]))
    if t in ints:
        return one(ints[t], _int)
    if t in ('DECIMAL', 'UDECIMAL'):
        p, s = (args + [10, 0][len(args):])[:2] if args else (10, 0)
        p = max(p, 1)
        return one(pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s), lambda v: decimal.Decimal(_text(v)))
    if t in ('FLOAT', 'UFLOAT'):
        return one(pa.float64() if args and args[0] > 24 and len(args) == 1 else pa.float32(), lambda v: float(_text(v)))
    if t in ('DOUBLE', 'UDOUBLE'):
        return one(pa.float64(), lambda v: float(_text(v)))
    if t == 'YEAR':
        return one(pa.uint16(), _int)
    if t in ('DATE', 'DATETIME', 'DATETIME64', 'TIMESTAMP', 'TIMESTAMPTZ'):
        fsp = args[0] if args and t != 'DATE' else 0
        unit = "ms" if fsp <= 3 else "us"
        tz = t in ('TIMESTAMP', 'TIMESTAMPTZ')
        typ = pa.date32() if t == 'DATE' else pa.timestamp(unit, tz="UTC" if tz else None)
        return Column(name, [typ, pa.string()], _temporal("date" if t == 'DATE' else "dt", tz))
    if t == 'TIME':
        return one(pa.duration("us"), _time)
    if t == 'BIT':
        return one(pa.uint64(), _bit)
    if t in ('GEOMETRY', 'GEOGRAPHY'):     # ddl.dialect: every geometry subtype is GEOMETRY
        return one(pa.binary(), lambda v: _bytes(v)[4:])   # the 4-byte SRID off: WKB, as the binlog path
    if t in ('BINARY', 'VARBINARY', 'BLOB', 'TINYBLOB', 'MEDIUMBLOB', 'LONGBLOB'):
        return one(pa.binary(), _bytes)
    charset = next((k for k in c.constraints if isinstance(k.kind, exp.CharacterSetColumnConstraint)), None)
    if charset is not None and charset.kind.this.name.lower() == "binary":
        return one(pa.binary(), _bytes)
    if t == "VECTOR":
        return one(pa.list_(pa.float32()), _vector) if vector_is_floats(flavor) else one(pa.binary(), _bytes)
    return one(pa.string(), _text)   # CHAR/VARCHAR/TEXT, ENUM/SET (labels), JSON


@dataclass
class TableLoad:
    db: str
    name: str
    columns: list
    key: list


def table_of(sql: str, db: str | None, flavor=None) -> TableLoad | None:
    """A ``CREATE TABLE`` statement as a load (None: no primary key, nothing to mirror)."""
    from sqlglot import exp

    from ..ddl import parse_create
    from ..schema import _safe

    e = parse_create(sql)
    schema = e.this
    tab = schema.this
    key: list[str] = []
    cols = []
    for part in schema.expressions:
        if isinstance(part, exp.ColumnDef):
            cols.append(column_of(part, flavor))
            if any(isinstance(k.kind, exp.PrimaryKeyColumnConstraint) for k in part.constraints):
                key = [part.name]
        elif isinstance(part, exp.PrimaryKey):
            key = [x.name for x in part.expressions]
    if not key:
        return None
    for c in cols:
        c.name = _safe(c.name)
    return TableLoad(tab.args["db"].name if tab.args.get("db") else db or "", tab.name, cols,
                     [_safe(k) for k in key])


def arrow_rows(t: TableLoad, rows: list[tuple]):
    """Converted rows as the mirror's lakehouse table."""
    import pyarrow as pa

    from .types import to_lake

    fields, arrays = [], []
    per = list(zip(*rows)) if rows else [()] * len(t.columns)
    for c, vals in zip(t.columns, per):
        outs = [c.convert(v) for v in vals]
        fields.append(pa.field(c.name, c.types[0]))
        arrays.append(pa.array([o[0] for o in outs], c.types[0]))
        if len(c.types) > 1:
            fields.append(pa.field(c.name + "__text", pa.string()))
            arrays.append(pa.array([o[1] for o in outs], pa.string()))
    return to_lake(pa.Table.from_arrays(arrays, schema=pa.schema(fields)))


def _open_text(path: str):
    from ...reading.files import open_input

    return io.TextIOWrapper(open_input(path), encoding="utf-8", errors="surrogateescape", newline="\n")


def load_dump(sink, path: str, props: dict, *, batch_rows: int = BATCH_ROWS, keep=None) -> dict:
    """Load the keyed tables of the dump ``path`` into their mirrors (``props``: the final
    commit's coordinates; ``keep(db, table)``: which tables, default all). Tables with
    coordinates already are not loaded again. Returns {"tables": [...], "rows": n, "no_key": [...]}."""
    import sqlglot
    from sqlglot import exp

    from ...flavor import Flavor
    from ..ddl import dialect

    out: dict = {"tables": [], "rows": 0, "no_key": []}
    db: str | None = None
    flavor: Flavor | None = None    # the dumped server's, from its "-- Server version" line
    cur: TableLoad | None = None
    skip = False
    resumed = False
    pending: list[tuple] = []
    committed = 0

    def commit(final: bool) -> None:
        nonlocal pending, committed
        assert cur is not None
        if not pending and not final:
            return
        rows = arrow_rows(cur, pending)
        p = dict(props) if final else {PREFIX + "snapshot": path, PREFIX + "loading": "1"}
        if resumed:   # an earlier run loaded part of this table: upsert by key
            keys = list(zip(*[rows[k].to_pylist() for k in cur.key]))
            sink.apply(cur.db, cur.name, cur.key, keys, rows, p)
        else:
            sink.append(cur.db, cur.name, rows, p)
        out["rows"] += rows.num_rows
        committed += rows.num_rows
        pending = []

    def close() -> None:
        nonlocal cur
        if cur is not None and not skip:
            commit(True)
            out["tables"].append(f"{cur.db}.{cur.name}")
        cur = None

    with _open_text(path) as fh:
        for line, sql in statements(fh):
            body = sql
            m = _COND.match(body)
            if m:
                body = m.group(1)
            try:
                if body.startswith("--"):
                    vm = _VERSION_COMMENT.match(body)
                    if vm:
                        flavor = Flavor.of_server_version(vm.group(1))
                    dm = _DB_COMMENT.match(body)
                    if dm:
                        db = dm.group(1) or dm.group(2).strip("`")
                    continue
                if _CREATE.match(body):
                    close()
                    t = table_of(body, db, flavor)
                    if t is None:
                        e = sqlglot.parse_one(body, read=dialect())
                        out["no_key"].append(f"{db}.{e.this.this.name}")
                        continue
                    cur, pending, committed = t, [], 0
                    wanted = keep is None or keep(t.db, t.name)
                    skip = not wanted or sink.recorded(t.db, t.name) is not None
                    resumed = not skip and sink.columns(t.db, t.name) is not None
                    continue
                if _INSERT.match(body):
                    e = sqlglot.parse_one(body, read=dialect())
                    if not isinstance(e, exp.Insert) or not isinstance(e.expression, exp.Values):
                        raise ValueError("an INSERT without VALUES")
                    target = e.this.this if isinstance(e.this, exp.Schema) else e.this
                    tdb = target.args["db"].name if target.args.get("db") else db
                    if cur is None or target.name != cur.name or (tdb or "") != cur.db:
                        if cur is None and f"{tdb}.{target.name}" in out["no_key"]:
                            continue
                        if cur is not None and f"{tdb}.{target.name}" in out["no_key"]:
                            continue
                        raise ValueError(f"rows of {tdb}.{target.name} outside its CREATE TABLE's section")
                    if skip:
                        continue
                    order = None
                    if isinstance(e.this, exp.Schema):
                        names = [c.name for c in e.this.expressions]
                        order = [names.index(c.name) if c.name in names else -1 for c in cur.columns]
                    for tup in e.expression.expressions:
                        vals = [_raw(x) for x in tup.expressions]
                        if order is not None:
                            vals = [vals[i] if i >= 0 else None for i in order]
                        elif len(vals) != len(cur.columns):
                            raise ValueError(f"{len(vals)} values for {len(cur.columns)} columns")
                        pending.append(tuple(vals))
                        if len(pending) >= batch_rows:
                            commit(False)
                    continue
                um = _USE.match(body)
                if um and body.split(None, 1)[0].upper() == "USE":
                    close()
                    db = um.group(1)
                    continue
                if _HARMLESS.match(body):
                    continue
                raise ValueError(f"a statement the load cannot apply: {body.splitlines()[0][:80]}")
            except (ValueError, ArithmeticError, sqlglot.errors.ParseError, sqlglot.errors.TokenError) as exc:
                err = DumpError(f"line {line}: {str(exc).splitlines()[0][:200]}", file=path)
                err.line = line
                raise err from None
        close()
    return out


def dump_point(path: str):
    """The dump's coordinates (``pitr.backup.BackupPoint``). ``mariadb-dump --master-data --gtid``
    prints the ``gtid_slave_pos`` line at the end of the file: when the head has no GTID, the
    file is scanned line by line (no parsing) for that line."""
    from ...pitr.backup import HEAD_BYTES, late_gtid, parse_backup_info

    with _open_text(path) as fh:
        head = fh.read(HEAD_BYTES)
    point = parse_backup_info(head, name=path)
    if point.gtids is None:
        with _open_text(path) as fh:
            point = late_gtid(point, head, fh, path)
    return point

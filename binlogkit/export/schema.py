"""Arrow types for the columns of a table map, and the converter from a decoded ``Value`` to
what pyarrow takes for that type (pure: no I/O).

=====================================  ==========================================================
column (table map type + metadata)     Arrow type
=====================================  ==========================================================
TINYINT .. BIGINT                      int8/16/32/64, uint8/16/32/64 when the metadata says
                                       unsigned (MEDIUMINT: int32 / uint32)
DECIMAL(p, s)                          decimal128(p, s), decimal256(p, s) when p > 38
FLOAT / DOUBLE                         float32 / float64
YEAR                                   uint16 (0 for the zero year)
DATE                                   date32
DATETIME(n)                            timestamp[ms | us] (n = 0-3 | 4-6: Parquet's units), no zone
TIMESTAMP(n)                           timestamp[ms | us, tz=UTC]
TIME(n)                                duration[us] (it spans -838:59:59 .. 838:59:59; Parquet has
                                       no duration type: readers without the Arrow schema, such
                                       as DuckDB and Spark, see int64 microseconds)
CHAR / VARCHAR / TEXT (charset known)  string (decoded from the column's own character set)
BINARY / VARBINARY / BLOB              binary
text without a known charset           binary (without FULL metadata or --schema the binlog
                                       cannot tell VARCHAR from VARBINARY)
ENUM / SET                             string (labels from the metadata or --schema), else the
                                       stored index (uint16) / bits (uint64)
JSON                                   string (a partial JSON update: the resulting document
                                       when the before image holds it, else null as a column
                                       a MINIMAL image leaves out)
BIT(n)                                 uint64
GEOMETRY                               binary (WKB, the 4-byte SRID dropped)
VECTOR (MySQL 9)                       list<float32>
UUID / INET6 / INET4 (by hint)         string
=====================================  ==========================================================

Zero and invalid dates (``0000-00-00``, ``2024-02-31`` under ALLOW_INVALID_DATES, the zero
TIMESTAMP) have no Arrow value: the column is null and its companion ``<column>__text`` (a
string column present for every DATE / DATETIME / TIMESTAMP column) holds the server's text.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, cast

from ..rowvalues.tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY,
                                INT24, JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT,
                                STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VAR_STRING, VARCHAR, VECTOR,
                                YEAR, Column, Table, charset_text, temporal_hint)
from ..errors import FormatError
from ..rowvalues.values import Geometry, JsonDiff, Value

INT_BITS = {TINY: 8, SHORT: 16, INT24: 24, LONG: 32, LONGLONG: 64}
TEXTUAL = (VARCHAR, VAR_STRING, STRING, BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB)
DATES = (DATE, NEWDATE, DATETIME, DATETIME2, TIMESTAMP, TIMESTAMP2)
META_COLUMNS = ("op", "gtid", "server_id", "commit_time", "file", "offset", "row_index", "schema_version")


@dataclass(frozen=True)
class ColumnSpec:
    """One table column as exported: its name, Arrow type (as text, for ``_schemas``), the
    SQL-ish type it came from, and whether it has a ``__text`` companion."""

    name: str
    arrow: str
    source: str
    text_companion: bool


def _unit(fsp: int) -> str:
    """Parquet's timestamp units: milliseconds up to 3 fractional digits, else microseconds."""
    return "ms" if fsp <= 3 else "us"


def fsp_of(col: Column) -> int:
    """Fractional digits of a temporal column: the metadata (TIME2 / DATETIME2 / TIMESTAMP2), a
    pre-10.1 hint, else 0."""
    if col.type in (TIME2, DATETIME2, TIMESTAMP2):
        return min(col.meta, 6)
    hint = temporal_hint(col.hint)
    return hint[1] if hint else 0


def arrow_type(table: Table, col: Column):
    """The Arrow type of ``col`` (see the module table)."""
    import pyarrow as pa

    t = col.type
    if col.hint in ("uuid", "inet6", "inet4"):
        return pa.string()
    if t in INT_BITS:
        bits = 32 if t == INT24 else INT_BITS[t]
        return getattr(pa, ("uint" if col.index in table.unsigned else "int") + str(bits))()
    if t == NEWDECIMAL:
        p, s = col.meta >> 8, col.meta & 0xFF
        p = max(p, 1)
        if p > 65 or s > 30 or s > p:   # a damaged Table_map: no server writes such a column
            raise FormatError(f"the Table_map of {table.db}.{table.name} gives column "
                              f"{table.column_name(col.index)} DECIMAL({p},{s}): not a MySQL/MariaDB "
                              "DECIMAL (precision <= 65, scale <= 30 and <= precision)",
                              event_type="TABLE_MAP_EVENT")
        return pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)
    if t == FLOAT:
        return pa.float32()
    if t == DOUBLE:
        return pa.float64()
    if t == YEAR:
        return pa.uint16()
    if t in (DATE, NEWDATE):
        return pa.date32()
    if t in (DATETIME, DATETIME2):
        return pa.timestamp(_unit(fsp_of(col)))
    if t in (TIMESTAMP, TIMESTAMP2):
        return pa.timestamp(_unit(fsp_of(col)), tz="UTC")
    if t in (TIME, TIME2):
        return pa.duration("us")  # Parquet has no duration: readers without the Arrow schema see int64 us
    if t == JSON:
        return pa.string()
    if t == BIT:
        return pa.uint64()
    if t == GEOMETRY:
        return pa.binary()
    if t == VECTOR:
        return pa.list_(pa.float32())
    real = col.real_type
    if real == ENUM:
        return pa.string() if (table.enum_values or {}).get(col.index) is not None else pa.uint16()
    if real == SET:
        return pa.string() if (table.set_values or {}).get(col.index) is not None else pa.uint64()
    if t in TEXTUAL:
        if col.collation is not None and col.collation != BINARY_COLLATION and _decodable(col):
            return pa.string()
        return pa.binary()
    return pa.binary()


def _decodable(col: Column) -> bool:
    return charset_text(col.collation, b"") is not None


def _text_of(col: Column) -> Callable[[Any], Any]:
    def text(x):
        raw = bytes(x)
        s = charset_text(col.collation, raw)
        return s if s is not None else raw.decode("utf-8", "replace")
    return text


def converter(table: Table, col: Column) -> tuple[Callable[[Value], Any] | None,
                                                 Callable[[Value], str | None] | None]:
    """(value -> Arrow input, value -> companion text or None), made once per table version; a
    converter of None: the decoded value as it is (the writer's fast path)."""
    t = col.type
    typ = arrow_type(table, col)
    name = str(typ)
    if t in INT_BITS and col.hint is None:
        if col.index in table.unsigned:
            wrap = 1 << INT_BITS[t]
            return (lambda v: v.value % wrap), None
        return None, None
    if t in DATES:
        want = datetime.date if t in (DATE, NEWDATE) else datetime.datetime

        def temporal(v: Value):
            return v.value if isinstance(v.value, want) else None

        zero = "0000-00-00 00:00:00" + ("." + "0" * fsp_of(col) if fsp_of(col) else "")

        def text(v: Value) -> str | None:
            """The server's text of a value Arrow cannot hold (zero or invalid dates)."""
            if isinstance(v.value, want):
                return None
            x = v.value
            if x == "0000-00-00 00:00:00":
                return zero  # the zero TIMESTAMP, with its fractional digits as the server shows it
            return x if isinstance(x, str) else v.text.strip("'")
        return temporal, text
    if name == "string" and t in TEXTUAL and col.real_type not in (ENUM, SET) and col.hint is None:
        dec = _text_of(col)
        return (lambda v: dec(v.value)), None
    if col.real_type == ENUM and name == "string":
        labels = (table.enum_values or {})[col.index]

        def enum(v: Value):
            x = v.value
            assert isinstance(x, int)
            return labels[x - 1] if 0 < x <= len(labels) else ""
        return enum, None
    if col.real_type == SET and name == "string":
        members = (table.set_values or {})[col.index]

        def set_(v: Value):
            x = v.value
            assert isinstance(x, int)
            return ",".join(s for b, s in enumerate(members) if x >> b & 1)
        return set_, None
    if t == VECTOR:
        return (lambda v: list(v.value)), None
    if t == GEOMETRY:
        return (lambda v: v.value.wkb if isinstance(v.value, Geometry) else None), None
    if t == JSON:
        def json_text(v: Value):
            x = v.value
            if isinstance(x, JsonDiff):  # partial update: the result when the before image held the document
                return x.result
            return x if isinstance(x, str) else bytes(cast(bytes, x)).decode("utf-8", "replace")
        return json_text, None
    if t == NEWDECIMAL:
        digits = max(col.meta >> 8, 1)

        def dec(v: Value):
            x = v.value
            if not isinstance(x, decimal.Decimal):
                return None
            if len(x.as_tuple().digits) > digits:   # a 4-byte group past 999999999: damaged bytes
                raise FormatError(f"{table.db}.{table.name}.{table.column_name(col.index)}: a DECIMAL"
                                  f"({col.meta >> 8},{col.meta & 0xFF}) value of {len(x.as_tuple().digits)} digits: "
                                  "the row image is damaged", event_type="ROWS_EVENT")
            return x
        return dec, None
    return None, None


def source_type(table: Table, col: Column) -> str:
    """A short SQL-ish name of the column's type as the binlog shows it (for ``_schemas``)."""
    names = {TINY: "TINYINT", SHORT: "SMALLINT", INT24: "MEDIUMINT", LONG: "INT", LONGLONG: "BIGINT",
             FLOAT: "FLOAT", DOUBLE: "DOUBLE", YEAR: "YEAR", DATE: "DATE", NEWDATE: "DATE", DATETIME: "DATETIME",
             DATETIME2: "DATETIME", TIMESTAMP: "TIMESTAMP", TIMESTAMP2: "TIMESTAMP", TIME: "TIME", TIME2: "TIME",
             JSON: "JSON", BIT: "BIT", GEOMETRY: "GEOMETRY", VECTOR: "VECTOR", VARCHAR: "VARCHAR", VAR_STRING: "VARCHAR",
             STRING: "CHAR", BLOB: "BLOB", TINY_BLOB: "TINYBLOB", MEDIUM_BLOB: "MEDIUMBLOB", LONG_BLOB: "LONGBLOB"}
    t = col.type
    if t == NEWDECIMAL:
        return f"DECIMAL({col.meta >> 8},{col.meta & 0xFF})"
    if col.real_type in (ENUM, SET):
        return "ENUM" if col.real_type == ENUM else "SET"
    base = names.get(t, f"type {t}")
    if t in INT_BITS and col.index in table.unsigned:
        base += " UNSIGNED"
    if t in (DATETIME2, TIMESTAMP2, TIME2) and col.meta:
        base += f"({col.meta})"
    if col.hint:
        base += f" as {col.hint}"
    return base


@dataclass(frozen=True)
class Layout:
    """A table version: the columns as exported, the Arrow schema of its change rows, a
    converter per column, and the version id (a hash of the layout: the same layout gets the
    same id in every process, so executors need no coordination)."""

    db: str
    table: str
    version: str
    names_from: str           # "metadata", "schema-file" or "positional"
    columns: tuple[ColumnSpec, ...]
    schema: Any               # pyarrow.Schema
    converters: tuple
    side_names: dict          # "before" / "after" -> the names of that side's columns (companions too)

    def describe(self) -> str:
        return json.dumps([{"name": c.name, "type": c.source, "arrow": c.arrow} for c in self.columns])


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "_"


def column_names(table: Table) -> tuple[list[str], str]:
    """Output names of the columns and where they came from: the table map's FULL metadata, the
    ``--schema`` file (merged into the Table by ``ddl.apply``), else ``c1, c2, ...``."""
    names = table.column_names
    n = len(table.columns)
    if names and len(names) >= n:
        src = table.__dict__.get("_names_from", "metadata")
        out, seen = [], set()
        for nm in names[:n]:
            s = _safe(nm)
            while s in seen:
                s += "_"
            seen.add(s)
            out.append(s)
        return out, src
    return [f"c{i + 1}" for i in range(n)], "positional"


def layout(table: Table) -> Layout:
    """The export layout of a table map (cached on the Table: made once per table map)."""
    cached = table.__dict__.get("_export_layout")
    if cached is not None:
        return cached
    import pyarrow as pa

    names, names_from = column_names(table)
    fields = [pa.field("op", pa.string()), pa.field("gtid", pa.string()), pa.field("server_id", pa.uint32()),
              pa.field("commit_time", pa.timestamp("s", tz="UTC")), pa.field("file", pa.string()),
              pa.field("offset", pa.int64()), pa.field("row_index", pa.int64()),
              pa.field("schema_version", pa.string())]
    specs, convs = [], []
    for col, name in zip(table.columns, names):
        typ = arrow_type(table, col)
        conv, text = converter(table, col)
        specs.append(ColumnSpec(name, str(typ), source_type(table, col), text is not None))
        convs.append((conv, text))
    for side in ("before", "after"):
        for spec, col in zip(specs, table.columns):
            fields.append(pa.field(f"{side}_{spec.name}", arrow_type(table, col)))
            if spec.text_companion:
                fields.append(pa.field(f"{side}_{spec.name}__text", pa.string()))
    digest = hashlib.sha256(json.dumps([table.db, table.name, names_from,
                                        [(s.name, s.arrow, s.source) for s in specs]]).encode()).hexdigest()[:12]
    meta = {b"binlogkit.db": table.db.encode(), b"binlogkit.table": table.name.encode(),
            b"binlogkit.schema_version": digest.encode(), b"binlogkit.column_names": names_from.encode(),
            b"binlogkit.columns": json.dumps([{"name": s.name, "type": s.source, "arrow": s.arrow}
                                              for s in specs]).encode()}
    sides = {side: [f.name for f in fields if f.name.startswith(side + "_")] for side in ("before", "after")}
    out = Layout(table.db, table.name, digest, names_from, tuple(specs), pa.schema(fields, metadata=meta),
                 tuple(convs), sides)
    object.__setattr__(table, "_export_layout", out)
    return out

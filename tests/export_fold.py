"""Folding an exported change table onto a snapshot, in SQL (DuckDB and Spark SQL), and the
server's own text for every value (the oracle the folded rows are compared with).

The fold, in binlog order (``file``, ``offset``, ``row_index``): an insert adds its after image,
a delete removes its before key, an update removes its before key and adds its after image.
As SQL: every change becomes one or two key events (an update: the removal of its before key,
then the addition of its after key); the last event of each key says whether the row is there
and with which image; keys without events keep their snapshot row.
"""

from __future__ import annotations

import datetime
import decimal
import json
import struct

# the key events of a change table (``{src}``: a relation of change rows), then the last per key
FOLD_SQL = """
WITH ev AS (
  SELECT before_id AS k, file, "offset", row_index, 0 AS sub, FALSE AS present, {cols_null}
    FROM {src} WHERE op IN ('delete', 'update')
  UNION ALL
  SELECT after_id AS k, file, "offset", row_index, 1 AS sub, TRUE AS present, {cols_after}
    FROM {src} WHERE op IN ('insert', 'update')
), last AS (
  SELECT *, row_number() OVER (PARTITION BY k ORDER BY file DESC, "offset" DESC, row_index DESC, sub DESC) AS rn
    FROM ev
)
SELECT k, present, {cols} FROM last WHERE rn = 1
"""


def fold_sql(src: str, columns: list[str], quote: str = '"') -> str:
    q = [f"{quote}{c}{quote}" for c in columns]
    return FOLD_SQL.format(src=src, cols_null=", ".join(f"NULL AS {c}" for c in q),
                           cols_after=", ".join(f"after_{c.strip(quote)} AS {c}" for c in q),
                           cols=", ".join(q)).replace('"offset"', f"{quote}offset{quote}")


# --- the server's text ---------------------------------------------------------------------------
BINARY = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
GEOMETRY = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
            "geometrycollection"}


def server_columns(srv, db: str, table: str) -> list[tuple[str, str, str]]:
    """(name, DATA_TYPE, COLUMN_TYPE) in column order."""
    return [(r["COLUMN_NAME"], r["DATA_TYPE"].lower(), r["COLUMN_TYPE"].lower()) for r in srv.query(
        "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=%s "
        "AND TABLE_NAME=%s ORDER BY ORDINAL_POSITION", (db, table))]


# a VECTOR column as the server's stored bytes (float32, little-endian; VECTOR_TO_STRING /
# VEC_ToText round to 6 digits): MySQL's export is a list<float32>, MariaDB's the logged bytes
VECTOR_TEXT = {"mysql": "HEX({})", "mariadb": "HEX({})"}


def select_text(cols: list[tuple[str, str, str]], flavor: str = "mariadb") -> str:
    """A SELECT list giving each column as the server's text."""
    out = []
    for name, dtype, _ctype in cols:
        c = f"`{name}`"
        if dtype == "vector":
            out.append(VECTOR_TEXT[flavor].format(c))
        elif dtype in BINARY:
            out.append(f"HEX({c})")
        elif dtype in GEOMETRY:
            out.append(f"HEX(ST_AsWKB({c}))")
        elif dtype == "float":
            out.append(f"CAST({c} AS DOUBLE)")
        elif dtype == "double":
            out.append(c)
        elif dtype == "bit":
            out.append(f"CAST({c} + 0 AS CHAR)")
        else:
            out.append(f"CAST({c} AS CHAR CHARACTER SET utf8mb4)")
    return ", ".join(f"{e} AS `{n}`" for e, (n, _d, _c) in zip(out, cols))


def server_rows(srv, db: str, table: str, cols) -> dict[str, tuple]:
    """id text -> the row as the server's text (one session in UTC)."""
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        kind = getattr(srv, "kind", None)
        cur.execute(f"SELECT {select_text(cols, kind.flavor if kind else 'mariadb')} FROM `{db}`.`{table}`")
        return {str(r[0]): tuple(_server_value(v, d) for v, (_n, d, _c) in zip(r, cols)) for r in cur.fetchall()}


def _canonical_json(text: str) -> str:
    """MySQL's JSON text, one spelling (key order and spaces are the server's choice)."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def _server_value(v, dtype: str = ""):
    if v is None:
        return None
    if dtype == "json":
        return _canonical_json(v.decode("utf-8") if isinstance(v, (bytes, bytearray)) else v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    return str(v)


def _fsp(ctype: str) -> int:
    return int(ctype[ctype.index("(") + 1:ctype.index(")")]) if "(" in ctype and ctype.split("(")[0] in (
        "time", "datetime", "timestamp") else 0


def _frac(us: int, n: int) -> str:
    return ("." + f"{us:06d}"[:n]) if n else ""


def exported_text(value, text, dtype: str, ctype: str, unit: str | None = None):
    """A folded value (from DuckDB or Spark) as the server's text for its column type; ``text``
    the ``__text`` companion of date columns (null dates); ``unit`` of TIME columns."""
    if value is None and text is not None:
        return text
    if value is None:
        return None
    n = _fsp(ctype)
    if dtype == "vector":  # MySQL: list<float32>; MariaDB logs the bytes (VARBINARY in its table map)
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).hex().upper()
        return struct.pack(f"<{len(value)}f", *value).hex().upper()
    if dtype == "json":
        return _canonical_json(value.decode("utf-8") if isinstance(value, (bytes, bytearray)) else value)
    if dtype in BINARY or dtype in GEOMETRY:
        return bytes(value).hex().upper()
    if dtype in ("uuid", "inet6", "inet4"):
        from binlogkit.rowvalues import hinted

        return hinted(dtype, bytes(value))
    if dtype == "float":
        return repr(float(value))
    if dtype == "double":
        return repr(float(value))
    if dtype == "decimal":
        return format(decimal.Decimal(value), "f")
    if dtype == "year":
        return f"{int(value):04d}" if int(value) == 0 else str(int(value))
    if dtype == "date":
        return value.isoformat()
    if dtype in ("datetime", "timestamp"):
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S") + _frac(value.microsecond, n)
    if dtype == "time":
        if isinstance(value, datetime.timedelta):
            us = value // datetime.timedelta(microseconds=1)
        else:
            us = int(value) * {"s": 1_000_000, "ms": 1000, "us": 1}[unit or "us"]
        neg, us = us < 0, abs(us)
        secs, frac = divmod(us, 1_000_000)
        return ("-" if neg else "") + f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}" + _frac(frac, n)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    return str(value)

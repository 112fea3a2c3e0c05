"""The pure half of flashback: one rows event in, its undo out (bytes to bytes, no I/O).

The undo of a rows event::

    Write_rows  (23, 30, 20, MariaDB 166/169)  ->  Delete_rows (25, 32, 22)  same images
    Delete_rows (25, 32, 22, MariaDB 168/171)  ->  Write_rows  (23, 30, 20)  same images
    Update_rows (24, 31, 21, MariaDB 167/170)  ->  Update_rows               before <-> after

with the rows of the event in reverse order (a row that an earlier row of the same statement
touched must be undone after it) and STMT_END_F set: every undo rows event is a statement of
its own, preceded by its Table_map (the server forgets table maps at the end of a statement).
MariaDB's compressed rows events are written back uncompressed (their plain type).

Row images are cut, not decoded into Python objects: per row a null bitmap over the present
columns, then each present, non-NULL value, whose length the row-values readers know
(``rowvalues.values.reader``). Where every column's size is a fixed count or a length prefix,
the optional C accelerator cuts them (``_rowarrow.bounds``, a plan of SKIP columns made once per
table map); the compiled Python below is the reference and the fallback (``test_flashback``
holds the two equal). Only whole images can be undone: a columns bitmap that leaves a
column out (``binlog_row_image=MINIMAL`` or ``NOBLOB``) is ``MinimalImage``; MySQL's partial JSON
update (39) too, and pre-GA rows events (20-22), whose images are the table's own record layout
(``rowvalues.images``: readable, with checks, but not to be cut and rewritten).
"""

from __future__ import annotations

import struct
from dataclasses import replace

from ..codecs.compression import uncompress
from ..codecs.rows import RowsBody, V2_ROWS
from ..constants import COMPRESSED_ROWS_TYPES as COMPRESSED, PRE_GA_ROWS_TYPES as PRE_GA, ROWS_TYPES, EventType as T
from ..errors import BodyLengthError, FormatError
from ..rowvalues.tables import (BINARY_COLLATION, BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT,
                                GEOMETRY, INT24, JSON, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL,
                                SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB,
                                VAR_STRING, VARCHAR, VECTOR, YEAR, Table)
from ..rowvalues.arrowcols import C_ROWARROW
from ..rowvalues.values import dec_size, reader

# fixed sizes of values (sql/field.cc pack_length; old DATETIME/TIME/TIMESTAMP: no fraction)
FIXED = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8, FLOAT: 4, DOUBLE: 8, YEAR: 1, DATE: 3, NEWDATE: 3,
         TIME: 3, DATETIME: 8, TIMESTAMP: 4}

STMT_END_F = 0x0001

# type code -> (undo type code, kind): kind 'w' write, 'd' delete, 'u' update
UNDO_TYPE: dict[int, tuple[int, str]] = {
    T.WRITE_ROWS_EVENT: (T.DELETE_ROWS_EVENT, "w"),
    T.DELETE_ROWS_EVENT: (T.WRITE_ROWS_EVENT, "d"),
    T.UPDATE_ROWS_EVENT: (T.UPDATE_ROWS_EVENT, "u"),
    T.WRITE_ROWS_EVENT_V1: (T.DELETE_ROWS_EVENT_V1, "w"),
    T.DELETE_ROWS_EVENT_V1: (T.WRITE_ROWS_EVENT_V1, "d"),
    T.UPDATE_ROWS_EVENT_V1: (T.UPDATE_ROWS_EVENT_V1, "u"),
    T.PRE_GA_WRITE_ROWS_EVENT: (T.PRE_GA_DELETE_ROWS_EVENT, "w"),
    T.PRE_GA_DELETE_ROWS_EVENT: (T.PRE_GA_WRITE_ROWS_EVENT, "d"),
    T.PRE_GA_UPDATE_ROWS_EVENT: (T.PRE_GA_UPDATE_ROWS_EVENT, "u"),
    # MariaDB compressed: undone as the plain event (v2 compressed 166-168, v1 169-171)
    T.WRITE_ROWS_COMPRESSED_EVENT: (T.DELETE_ROWS_EVENT, "w"),
    T.UPDATE_ROWS_COMPRESSED_EVENT: (T.UPDATE_ROWS_EVENT, "u"),
    T.DELETE_ROWS_COMPRESSED_EVENT: (T.WRITE_ROWS_EVENT, "d"),
    T.WRITE_ROWS_COMPRESSED_EVENT_V1: (T.DELETE_ROWS_EVENT_V1, "w"),
    T.UPDATE_ROWS_COMPRESSED_EVENT_V1: (T.UPDATE_ROWS_EVENT_V1, "u"),
    T.DELETE_ROWS_COMPRESSED_EVENT_V1: (T.WRITE_ROWS_EVENT_V1, "d"),
}


class MinimalImage(FormatError):
    """A row image without every column: it cannot be undone."""


def all_columns(bitmap: bytes, width: int) -> bool:
    whole, rest = divmod(width, 8)
    return bitmap[:whole] == b"\xff" * whole and (not rest or bitmap[whole] & ((1 << rest) - 1) == (1 << rest) - 1)


def _width(col) -> int:
    """How a value of ``col`` is sized: > 0 a fixed number of bytes, < 0 a little-endian length
    prefix of that many bytes, 0 ask the value reader (``rowvalues.values.reader``, the one
    declaration of every layout; ``test_flashback`` keeps the two in agreement)."""
    t, m = col.type, col.meta
    if col.hint is not None:
        return 0
    if t in FIXED:
        return FIXED[t]
    if t in (DATETIME2, TIMESTAMP2, TIME2):
        return {DATETIME2: 5, TIMESTAMP2: 4, TIME2: 3}[t] + (m + 1) // 2
    if t == NEWDECIMAL:
        precision, scale = m >> 8, m & 0xFF
        return dec_size(precision - scale) + dec_size(scale)
    if t == BIT:
        return ((m & 0xFF) * 8 + (m >> 8) + 7) // 8
    if t in (VARCHAR, VAR_STRING):
        return -(1 if m < 256 else 2)
    if t == STRING:
        if m >> 8 in (ENUM, SET):
            return m & 0xFF
        if col.collation == BINARY_COLLATION:
            return 0
        return -(1 if col.max_length < 256 else 2)
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, GEOMETRY, JSON, VECTOR):
        return -(m or 4)
    return 0


def _compile(widths: tuple, readers: tuple):
    """``end(data, p)``: where a full row image starting at ``p`` ends, as straight-line code
    made once per table map (one branch per column on its NULL bit, no loop, no Value made):
    the hot path of a large flashback. Reading past the data raises IndexError."""
    n = len(widths)
    nb = (n + 7) // 8
    lines = ["def end(data, p):", f"    nulls = int.from_bytes(data[p:p + {nb}], 'little')",
             f"    if p + {nb} > len(data): raise IndexError", f"    p += {nb}"]
    for k, w in enumerate(widths):
        cond = f"    if not nulls & {1 << k}:"
        if w > 0:
            lines.append(f"{cond} p += {w}")
        elif w == -1:
            lines.append(f"{cond} p += 1 + data[p]")
        elif w < 0:
            lines.append(f"{cond} p += {-w} + int.from_bytes(data[p:p + {-w}], 'little')")
        else:
            lines.append(f"{cond} p = readers[{k}](data, p)[1]")
    lines += ["    if p > len(data): raise IndexError", "    return p"]
    scope: dict = {"readers": readers}
    exec("\n".join(lines), scope)  # noqa: S102 - code made from integers above, no input text
    return scope["end"]


_COMPILED: dict[tuple, object] = {}    # by columns (types, metadata, collations): a few per schema


def _sizing(table: Table):
    end = _COMPILED.get(table.columns)
    if end is None:
        if len(_COMPILED) > 4096:
            _COMPILED.clear()
        end = _COMPILED[table.columns] = _compile(tuple(_width(c) for c in table.columns),
                                                  tuple(reader(c) for c in table.columns))
    return end


_C_PLANS: dict[tuple, object] = {}     # the same, as C plans of SKIP columns (None: a column C cannot size)


def _c_sizing(table: Table):
    if C_ROWARROW is None or not table.columns:
        return None
    try:
        return _C_PLANS[table.columns]
    except KeyError:
        pass
    if len(_C_PLANS) > 4096:
        _C_PLANS.clear()
    widths = [_width(c) for c in table.columns]
    plan = None if 0 in widths else C_ROWARROW.Plan([(C_ROWARROW.SKIP, w, 0, 0) if w > 0 else
                                                     (C_ROWARROW.SKIP, 0, -w, 0) for w in widths])
    _C_PLANS[table.columns] = plan
    return plan


def image_end(table: Table, data: bytes, p: int) -> int:
    """Where the full row image of ``table`` starting at ``p`` ends."""
    return _sizing(table)(data, p)


def split_rows(table: Table, data: bytes, update: bool) -> list[tuple[bytes, bytes | None]]:
    """The images of an event's rows: (image, None) or, for updates, (before, after)."""
    plan = _c_sizing(table)
    if plan is not None:
        rows = C_ROWARROW.bounds(plan, data, update)
        if rows is not None:
            return rows
    return split_rows_python(table, data, update)


def split_rows_python(table: Table, data: bytes, update: bool) -> list[tuple[bytes, bytes | None]]:
    """``split_rows`` by the compiled Python (the reference)."""
    end = _sizing(table)
    out: list[tuple[bytes, bytes | None]] = []
    p = 0
    try:
        while p < len(data):
            q = end(data, p)
            if q == p:  # no columns: no image ends anywhere (a damaged table map)
                raise ValueError
            if update:
                r = end(data, q)
                out.append((data[p:q], data[q:r]))
                p = r
            else:
                out.append((data[p:q], None))
                p = q
    except (IndexError, struct.error, ValueError):
        raise BodyLengthError(f"row image of `{table.db}`.`{table.name}` runs past the event at byte {p} "
                              "of its rows") from None
    return out


def _left_out(table: Table, before_bits, after_bits) -> str:
    """Which columns each image leaves out, by name (the first six of each)."""
    def without(bits) -> str | None:
        names = [table.column_name(i) for i in range(len(table.columns)) if not bits[i // 8] >> i % 8 & 1]
        more = f" and {len(names) - 6} more" if len(names) > 6 else ""
        return "without " + ", ".join(names[:6]) + more if names else None

    parts = [(("before image " if after_bits is not None else "image ") + w) if (w := without(before_bits)) else None,
             ("after image " + w) if after_bits is not None and (w := without(after_bits)) else None]
    return "; ".join(p for p in parts if p)


def _missing(bits, width: int) -> tuple[int, ...]:
    return tuple(i for i in range(width) if not bits[i // 8] >> i % 8 & 1)


def invert_rows(fields, type_code: int, table: Table, post_header_len: int | None,
                generated: frozenset[str] = frozenset()) -> tuple[int, bytes, list, tuple[int, ...] | None]:
    """(undo type code, undo body, undo rows, present columns) of one rows event whose parsed
    body is ``fields`` (``RowsBody``). The undo rows are [(image, other image or None)] in undo
    order: for an update, (new before image, new after image). ``generated``: names of the
    table's generated columns (the binlog does not say which), which an image may leave out
    (MariaDB 11.8's FULL images do): the server computes them. Present columns: None when the
    images hold every column, else their indexes."""
    if type_code == T.PARTIAL_UPDATE_ROWS_EVENT:
        raise MinimalImage("a partial JSON update (binlog_row_value_options=PARTIAL_JSON) holds only the "
                           "changed part of the JSON values: it cannot be undone", event_type="PARTIAL_UPDATE_ROWS_EVENT")
    if type_code in PRE_GA:
        raise MinimalImage("pre-GA rows events (MySQL 5.1.5-5.1.17) hold the table's own record layout, which "
                           "their table map does not describe: they cannot be cut into rows safely, nor undone",
                           event_type=T(type_code).name)
    undo_type, kind = UNDO_TYPE[type_code]
    width = fields["width"]
    if width != len(table.columns):
        raise FormatError(f"rows event of `{table.db}`.`{table.name}` is {width} columns wide, its table map "
                          f"has {len(table.columns)}")
    before_bits, after_bits = fields["columns_before_image"], fields["columns_after_image"]
    present: tuple[int, ...] | None = None
    if not all_columns(before_bits, width) or (after_bits is not None and not all_columns(after_bits, width)):
        left = _missing(before_bits, width)
        same = after_bits is None or _missing(after_bits, width) == left
        if not (same and generated and {table.column_name(i) for i in left} <= generated):
            hint = (f"; if they are generated columns, --generated {table.db}.{table.name}.COLUMN names each and "
                    "the undo goes on (the server computes them)") if same else ""
            raise MinimalImage(f"`{table.db}`.`{table.name}`: the row images leave columns out "
                               f"({_left_out(table, before_bits, after_bits)}): "
                               "binlog_row_image=MINIMAL or NOBLOB, or generated columns, which MariaDB 11.8 leaves "
                               "out of FULL images (10.11 logs them): not enough to undo; only images of every "
                               f"column can be{hint}")
        present = tuple(i for i in range(width) if i not in left)
        table = replace(table, columns=tuple(table.columns[i] for i in present))   # the images' own columns
    data = bytes(fields["rows"])
    if type_code in COMPRESSED:
        try:
            data = uncompress(data)
        except Exception as exc:
            raise BodyLengthError(f"compressed rows of `{table.db}`.`{table.name}` do not inflate: {exc}") from None
    rows = split_rows(table, data, kind == "u")
    rows.reverse()
    if kind == "u":
        swapped: list[tuple[bytes, bytes | None]] = []
        for before, after in rows:
            if after is None:  # split_rows(update=True) always pairs the images
                raise FormatError(f"rows event of `{table.db}`.`{table.name}`: an update row without its after image")
            swapped.append((after, before))
        rows = swapped
    new_rows = b"".join(a + (b or b"") for a, b in rows)
    v2 = undo_type in V2_ROWS
    body = RowsBody.build(
        {"table_id": fields["table_id"], "flags": fields["flags"] | STMT_END_F,
         "len_extra_data": (fields["len_extra_data"] or 2) if v2 else None,
         "extra_data": bytes(fields["extra_data"]) if v2 else b"",
         "width": width, "columns_before_image": bytes(after_bits if kind == "u" else before_bits),
         "columns_after_image": bytes(before_bits) if kind == "u" else None, "rows": new_rows},
        len_body=0, type_code=undo_type, post_header_len=post_header_len)
    return undo_type, body, rows, present

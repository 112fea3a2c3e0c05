"""Table_map (19) and Rows events: MySQL v1 (23-25), v2 (30-32), partial update (39),
pre-GA (20-22), MariaDB compressed (166-171). Row images stay bytes here (values come later).

Table_map (post-header 8; 6 in very old files with a 4-byte table id)::

    0   6   table_id
    6   2   flags
    --  1+n+1  db (length byte, name, NUL)
    --  1+n+1  table
    --  p   column_count (packed)
    --  n   column_types
    --  p   len_metadata (packed), then metadata
    --  b   null_bitmap ((column_count + 7) / 8)
    --  *   optional_metadata (TLV, MySQL 8.0.1+ and MariaDB 10.5+)

Rows::

    0   6   table_id                (4 with a 6-byte post-header)
    6   2   flags                   1 STMT_END, 2 NO_FOREIGN_KEY_CHECKS, 4 RELAXED_UNIQUE_CHECKS, 8 COMPLETE_ROWS
    8   2   len_extra_data          v2 only; counts itself
    --  n   extra_data              v2 only (NDB info, partition info)
    --  p   width (packed)
    --  b   columns_before_image    ((width + 7) / 8)
    --  b   columns_after_image     update events only, but not pre-GA ones (21): one bitmap
    --  *   rows                    images (MariaDB 166-171: compressed; pre-GA 20-22: another
                                    layout, ``rowvalues.images``)
"""

from __future__ import annotations

from construct import Bytes, Const, GreedyBytes, If, Int8ul, Int16ul, Int32ul, Struct, Switch, Tell, this

from .common import Int48ul, PackedInt

V2_ROWS = {30, 31, 32, 39}
UPDATE_ROWS = {21, 24, 31, 39, 167, 170}
# pre-GA updates (21) carry one columns bitmap for both images (MariaDB's Old_rows_log_event)
AFTER_BITMAP = UPDATE_ROWS - {21}


def _table_id(ctx):
    return 4 if ctx._params.post_header_len == 6 else 6


TableId = Switch(_table_id, {4: Int32ul, 6: Int48ul})

TableMapBody = Struct(
    "table_id" / TableId,
    "flags" / Int16ul,
    "len_db" / Int8ul,
    "db" / Bytes(this.len_db),
    Const(b"\x00"),
    "len_table" / Int8ul,
    "table" / Bytes(this.len_table),
    Const(b"\x00"),
    "column_count" / PackedInt,
    "column_types" / Bytes(this.column_count),
    "_pos" / Tell,
    # 5.1 before 5.1.18 wrote neither metadata nor null bitmap
    "metadata_part" / If(lambda ctx: ctx._pos < ctx._params.len_body if ctx._parsing
                         else ctx.get("metadata_part") is not None, Struct(
        "len_metadata" / PackedInt,
        "metadata" / Bytes(this.len_metadata),
        "null_bitmap" / Bytes(lambda ctx: (ctx._.column_count + 7) // 8),
        "optional_metadata" / GreedyBytes,
    )),
)

RowsBody = Struct(
    "table_id" / TableId,
    "flags" / Int16ul,
    "len_extra_data" / If(lambda ctx: ctx._params.type_code in V2_ROWS, Int16ul),
    "extra_data" / Bytes(lambda ctx: max(0, (ctx.len_extra_data or 2) - 2)),
    "width" / PackedInt,
    "columns_before_image" / Bytes(lambda ctx: (ctx.width + 7) // 8),
    "columns_after_image" / If(lambda ctx: ctx._params.type_code in AFTER_BITMAP,
                               Bytes(lambda ctx: (ctx.width + 7) // 8)),
    "rows" / GreedyBytes,
)

"""Statement events: Query (2), MariaDB Query_compressed (165), Begin_load_query (17),
Execute_load_query (18), Intvar (5), Rand (13), User_var (14), Xid (16), XA_prepare (38).
The LOAD DATA events of old servers (6, 8-12) are in ``load``.

Query (post-header 13 bytes; 11 before MySQL 5.0 — no status variables)::

    0   4   thread_id
    4   4   exec_time
    8   1   len_db
    9   2   error_code
    11  2   len_status_vars      (only when post_header_len >= 13)
    --  n   status_vars          decoded by ``status_vars.decode``
    --  m   db, then one NUL
    --  *   query                (MariaDB 165: compressed, see ``compression``)

Execute_load_query adds 13 bytes of post-header: file_id u32, fn_pos_start u32,
fn_pos_end u32, dup_handling u8.
"""

from __future__ import annotations

from construct import (Bytes, Const, GreedyBytes, If, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul,
                       Struct, Terminated, this)

QueryBody = Struct(
    "thread_id" / Int32ul,
    "exec_time" / Int32ul,
    "len_db" / Int8ul,
    "error_code" / Int16ul,
    "len_status_vars" / If(lambda ctx: (ctx._params.post_header_len or 13) >= 13, Int16ul),
    "load" / If(lambda ctx: ctx._params.type_code == 18, Struct(
        "file_id" / Int32ul, "fn_pos_start" / Int32ul, "fn_pos_end" / Int32ul, "dup_handling" / Int8ul)),
    "post_header_extra" / Bytes(lambda ctx: max(0, (ctx._params.post_header_len or 13)
                                                - (13 if ctx.len_status_vars is not None else 11)
                                                - (13 if ctx._params.type_code == 18 else 0))),
    "status_vars" / Bytes(lambda ctx: ctx.len_status_vars or 0),
    "db" / Bytes(this.len_db),
    Const(b"\x00"),
    "query" / GreedyBytes,
)

BeginLoadQueryBody = Struct(
    "file_id" / Int32ul,
    "block" / GreedyBytes,
)

IntvarBody = Struct(
    "kind" / Int8ul,  # 1 LAST_INSERT_ID, 2 INSERT_ID
    "value" / Int64ul,
    Terminated,
)

RandBody = Struct("seed1" / Int64ul, "seed2" / Int64ul, Terminated)

UserVarBody = Struct(
    "len_name" / Int32ul,
    "name" / Bytes(this.len_name),
    "is_null" / Int8ul,
    "value" / If(this.is_null == 0, Struct(
        "type" / Int8ul,          # Item_result: 0 STRING, 1 REAL, 2 INT, 4 DECIMAL
        "charset" / Int32ul,
        "len_value" / Int32ul,
        "value" / Bytes(this.len_value),
    )),
    "flags" / GreedyBytes,  # 5.6+: one byte, UNSIGNED_F; MariaDB may add more
)

XidBody = Struct("xid" / Int64ul, Terminated)

XaPrepareBody = Struct(
    "one_phase" / Int8ul,
    "format_id" / Int32sl,
    "len_gtrid" / Int32ul,
    "len_bqual" / Int32ul,
    "data" / Bytes(lambda ctx: ctx.len_gtrid + ctx.len_bqual),
    Terminated,
)

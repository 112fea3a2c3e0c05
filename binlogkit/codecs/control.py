"""Control events: Start_v3 (1), Stop (3), Rotate (4), Incident (26), Heartbeat (27, 41),
Rows_query (29), Ignorable (28).

Docs: https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_replication_binlog_event.html

Rotate::

    0   8   position        where the next binlog starts (4), in v4 files (post-header 8)
    8   n   new_log_ident   name of the next file, not NUL-terminated

Incident::

    0   2   incident        1 = LOST_EVENTS, 2 = NEW_INCIDENT
    2   1   len_message
    3   n   message

Heartbeat v1 body is the source's current binlog name; v2 is a TLV list (see heartbeat_v2).
Rows_query: one length byte MySQL ignores (the text may exceed 255), then the query text.
"""

from __future__ import annotations

from construct import Bytes, GreedyBytes, If, Int8ul, Int16ul, Int32ul, Int64ul, PascalString, Struct, Terminated, this

StartV3Body = Struct(
    "binlog_version" / Int16ul,
    "server_version" / Bytes(50),
    "create_timestamp" / Int32ul,
    "rest" / GreedyBytes,  # v1 files: nothing; some servers pad
)

StopBody = Struct("rest" / GreedyBytes)  # empty in practice; MariaDB may add bytes in future

RotateBody = Struct(
    "position" / If(lambda ctx: (ctx._params.post_header_len or 0) >= 8, Int64ul),
    "new_log_ident" / GreedyBytes,
)

IncidentBody = Struct(
    "incident" / Int16ul,
    "message" / PascalString(Int8ul, "utf8"),
    "rest" / GreedyBytes,
)

HeartbeatBody = Struct("log_ident" / GreedyBytes)

RowsQueryBody = Struct(
    "len_query" / Int8ul,
    "query" / GreedyBytes,
)

IgnorableBody = Struct("data" / GreedyBytes)

StartEncryptionBody = Struct(  # MariaDB 164
    "scheme" / Int8ul,
    "key_version" / Int32ul,
    "nonce" / Bytes(12),
    Terminated,
)

BinlogCheckpointBody = Struct(  # MariaDB 161
    "len_binlog_file" / Int32ul,
    "binlog_file" / Bytes(this.len_binlog_file),
    Terminated,
)

AnnotateRowsBody = Struct("query" / GreedyBytes)  # MariaDB 160

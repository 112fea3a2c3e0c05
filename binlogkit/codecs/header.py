"""Common event header, binlog v4 (also v3): 19 bytes, little-endian.

Doc: https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_replication_binlog_event.html

======  ====  ===========  ==============================================================
offset  len   field        meaning
======  ====  ===========  ==============================================================
0       4     timestamp    seconds since the epoch when the statement began
4       1     type_code    EventType
5       4     server_id    server that wrote the event first
9       4     event_size   whole event: header + body + checksum
13      4     log_pos      end of this event in the *source* binlog (0 for artificial)
17      2     flags        EventFlag
======  ====  ===========  ==============================================================

The Construct struct is the declaration; ``HEADER_STRUCT`` is the precompiled ``struct``
twin used by the hot path (header walks). ``tests/test_header.py`` keeps the two in agreement.
"""

from __future__ import annotations

import struct

from construct import Int8ul, Int16ul, Int32ul, Struct

CommonHeader = Struct(
    "timestamp" / Int32ul,
    "type_code" / Int8ul,
    "server_id" / Int32ul,
    "event_size" / Int32ul,
    "log_pos" / Int32ul,
    "flags" / Int16ul,
)

HEADER_FIELDS = ("timestamp", "type_code", "server_id", "event_size", "log_pos", "flags")
HEADER_STRUCT = struct.Struct("<IBIIIH")
LEN_HEADER = HEADER_STRUCT.size  # 19

OFS_TYPE_CODE = 4
OFS_EVENT_SIZE = 9
OFS_LOG_POS = 13
from ..constants import OFS_FLAGS  # noqa: E402  (one value: pull reads it without Construct)

"""Enum tables shared by every codec: event type codes, header flags, checksum algorithms, column
type codes. The C accelerators read the same tables from ``_constants.h``, generated from this
module by ``scripts/gen_c_constants.py`` (``make c-constants``; a test fails when it is stale).

Sources: MySQL ``libs/mysql/binlog/event/binlog_event.h`` (enum Log_event_type) and MariaDB
``sql/log_event.h`` (enum Log_event_type, MariaDB's own codes start at 160).
"""

from __future__ import annotations

import enum

BINLOG_MAGIC = b"\xfebin"
LEN_MAGIC = 4
LEN_COMMON_HEADER = 19  # v4 common header (v3 too); v1 has 13
LEN_CHECKSUM = 4
OFS_FLAGS = 17  # the common header's flags field (codecs/header.py declares the header)


class EventType(enum.IntEnum):
    UNKNOWN_EVENT = 0
    START_EVENT_V3 = 1
    QUERY_EVENT = 2
    STOP_EVENT = 3
    ROTATE_EVENT = 4
    INTVAR_EVENT = 5
    LOAD_EVENT = 6
    SLAVE_EVENT = 7
    CREATE_FILE_EVENT = 8
    APPEND_BLOCK_EVENT = 9
    EXEC_LOAD_EVENT = 10
    DELETE_FILE_EVENT = 11
    NEW_LOAD_EVENT = 12
    RAND_EVENT = 13
    USER_VAR_EVENT = 14
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    BEGIN_LOAD_QUERY_EVENT = 17
    EXECUTE_LOAD_QUERY_EVENT = 18
    TABLE_MAP_EVENT = 19
    PRE_GA_WRITE_ROWS_EVENT = 20
    PRE_GA_UPDATE_ROWS_EVENT = 21
    PRE_GA_DELETE_ROWS_EVENT = 22
    WRITE_ROWS_EVENT_V1 = 23
    UPDATE_ROWS_EVENT_V1 = 24
    DELETE_ROWS_EVENT_V1 = 25
    INCIDENT_EVENT = 26
    HEARTBEAT_LOG_EVENT = 27
    IGNORABLE_LOG_EVENT = 28
    ROWS_QUERY_LOG_EVENT = 29
    WRITE_ROWS_EVENT = 30
    UPDATE_ROWS_EVENT = 31
    DELETE_ROWS_EVENT = 32
    GTID_LOG_EVENT = 33
    ANONYMOUS_GTID_LOG_EVENT = 34
    PREVIOUS_GTIDS_LOG_EVENT = 35
    TRANSACTION_CONTEXT_EVENT = 36
    VIEW_CHANGE_EVENT = 37
    XA_PREPARE_LOG_EVENT = 38
    PARTIAL_UPDATE_ROWS_EVENT = 39
    TRANSACTION_PAYLOAD_EVENT = 40
    HEARTBEAT_LOG_EVENT_V2 = 41
    GTID_TAGGED_LOG_EVENT = 42
    # MariaDB's own codes
    ANNOTATE_ROWS_EVENT = 160
    BINLOG_CHECKPOINT_EVENT = 161
    GTID_EVENT = 162
    GTID_LIST_EVENT = 163
    START_ENCRYPTION_EVENT = 164
    QUERY_COMPRESSED_EVENT = 165
    WRITE_ROWS_COMPRESSED_EVENT_V1 = 166
    UPDATE_ROWS_COMPRESSED_EVENT_V1 = 167
    DELETE_ROWS_COMPRESSED_EVENT_V1 = 168
    WRITE_ROWS_COMPRESSED_EVENT = 169
    UPDATE_ROWS_COMPRESSED_EVENT = 170
    DELETE_ROWS_COMPRESSED_EVENT = 171
    PARTIAL_ROW_DATA_EVENT = 172  # MariaDB 12.3 (MDEV-32570): a fragment of an oversized rows event


# Families of event types, each written once here (modules that compare a code per event make
# plain-int copies of these: an IntEnum comparison costs a Python call).
T = EventType
QUERY_TYPES = frozenset({T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT})
# the events that open a transaction (MySQL's three Gtid kinds, MariaDB's Gtid)
GTID_TYPES = frozenset({T.GTID_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.GTID_EVENT})
# the session values a statement-based Query may carry before it
PRELUDE = frozenset({T.INTVAR_EVENT, T.RAND_EVENT, T.USER_VAR_EVENT})
HEARTBEAT_TYPES = frozenset({T.HEARTBEAT_LOG_EVENT, T.HEARTBEAT_LOG_EVENT_V2})
PRE_GA_ROWS_TYPES = frozenset({T.PRE_GA_WRITE_ROWS_EVENT, T.PRE_GA_UPDATE_ROWS_EVENT, T.PRE_GA_DELETE_ROWS_EVENT})
# MariaDB's compressed rows events (v2 166-168, v1 169-171)
COMPRESSED_ROWS_TYPES = frozenset({T.WRITE_ROWS_COMPRESSED_EVENT, T.UPDATE_ROWS_COMPRESSED_EVENT,
                                   T.DELETE_ROWS_COMPRESSED_EVENT, T.WRITE_ROWS_COMPRESSED_EVENT_V1,
                                   T.UPDATE_ROWS_COMPRESSED_EVENT_V1, T.DELETE_ROWS_COMPRESSED_EVENT_V1})
# every rows event: pre-GA (20-22), v1 (23-25), v2 (30-32), MySQL's partial update (39), compressed
ROWS_TYPES = frozenset({T.WRITE_ROWS_EVENT_V1, T.UPDATE_ROWS_EVENT_V1, T.DELETE_ROWS_EVENT_V1, T.WRITE_ROWS_EVENT,
                        T.UPDATE_ROWS_EVENT, T.DELETE_ROWS_EVENT, T.PARTIAL_UPDATE_ROWS_EVENT}
                       | PRE_GA_ROWS_TYPES | COMPRESSED_ROWS_TYPES)
del T

# magics of files that sit beside binlogs and are not binlogs (binlogkit/reading/formats.py)
GTID_INDEX_MAGIC = b"\xfe\xfe\x0c\x01"   # MariaDB 11.4+ <binlog>.idx (binlogkit/gtid/index.py)
IBB_MAGIC = b"\xfe\xfe\x0d\x01"          # MariaDB 12.3 binlog_storage_engine=innodb binlog-NNNNNN.ibb


def event_type_name(code: int) -> str:
    """Upstream name of an event type code, or ``TYPE_<n>`` for codes nobody defines."""
    try:
        return EventType(code).name
    except ValueError:
        return f"TYPE_{code}"


class EventFlag(enum.IntFlag):
    """Flags of the common header (``flags`` field, 16 bits)."""

    BINLOG_IN_USE = 0x0001
    FORCED_ROTATE = 0x0002
    THREAD_SPECIFIC = 0x0004
    SUPPRESS_USE = 0x0008
    UPDATE_TABLE_MAP_VERSION = 0x0010
    ARTIFICIAL = 0x0020
    RELAY_LOG = 0x0040
    IGNORABLE = 0x0080
    NO_FILTER = 0x0100
    MTS_ISOLATE = 0x0200
    SKIP_REPLICATION = 0x8000


class ChecksumAlg(enum.IntEnum):
    OFF = 0
    CRC32 = 1
    UNDEF = 255


class ColumnType(enum.IntEnum):
    """Column type codes of a Table_map (MySQL ``include/field_types.h``, enum_field_types).
    ``rowvalues.tables`` keeps them as plain ints for the row decoder."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    VECTOR = 242  # MySQL 9.0+: float32 values behind a length (metadata: its byte count, 4); MariaDB logs VARCHAR
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255

"""Enum tables shared by every codec: event type codes, header flags, checksum algorithms.

Sources: MySQL ``libs/mysql/binlog/event/binlog_event.h`` (enum Log_event_type) and MariaDB
``sql/log_event.h`` (enum Log_event_type, MariaDB's own codes start at 160).
"""

from __future__ import annotations

import enum

BINLOG_MAGIC = b"\xfebin"
LEN_MAGIC = 4
LEN_COMMON_HEADER = 19  # v4 common header (v3 too); v1 has 13
LEN_CHECKSUM = 4


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

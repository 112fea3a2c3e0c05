"""Which codec reads which event type: declared once, per flavor where they differ.

MySQL and MariaDB share codes 0-41 (MariaDB never writes 33-42 itself but relays them from
MySQL sources) and MariaDB owns 160-171, so the table is one mapping; a flavor-specific entry
would go in ``FLAVOR_OVERRIDES``. Common code never tests the flavor.
"""

from __future__ import annotations

from dataclasses import dataclass

from construct import Construct

from ..codecs import control, gtid, load, payload, rows, statement
from ..codecs.format_description import FormatDescriptionBody
from ..constants import EventType as T
from ..flavor import Flavor


@dataclass(frozen=True)
class Codec:
    name: str  # short upstream-style name, as mysqlbinlog prints it
    body: Construct


_C = Codec
CODECS: dict[int, Codec] = {
    T.START_EVENT_V3: _C("Start_v3", control.StartV3Body),
    T.QUERY_EVENT: _C("Query", statement.QueryBody),
    T.STOP_EVENT: _C("Stop", control.StopBody),
    T.ROTATE_EVENT: _C("Rotate", control.RotateBody),
    T.INTVAR_EVENT: _C("Intvar", statement.IntvarBody),
    T.LOAD_EVENT: _C("Load", load.LoadBody),
    T.CREATE_FILE_EVENT: _C("Create_file", load.CreateFileBody),
    T.APPEND_BLOCK_EVENT: _C("Append_block", load.AppendBlockBody),
    T.EXEC_LOAD_EVENT: _C("Exec_load", load.ExecLoadBody),
    T.DELETE_FILE_EVENT: _C("Delete_file", load.DeleteFileBody),
    T.NEW_LOAD_EVENT: _C("New_load", load.NewLoadBody),
    T.RAND_EVENT: _C("Rand", statement.RandBody),
    T.USER_VAR_EVENT: _C("User_var", statement.UserVarBody),
    T.FORMAT_DESCRIPTION_EVENT: _C("Format_desc", FormatDescriptionBody),
    T.XID_EVENT: _C("Xid", statement.XidBody),
    T.BEGIN_LOAD_QUERY_EVENT: _C("Begin_load_query", statement.BeginLoadQueryBody),
    T.EXECUTE_LOAD_QUERY_EVENT: _C("Execute_load_query", statement.QueryBody),
    T.TABLE_MAP_EVENT: _C("Table_map", rows.TableMapBody),
    T.PRE_GA_WRITE_ROWS_EVENT: _C("Write_rows_pre_ga", rows.RowsBody),
    T.PRE_GA_UPDATE_ROWS_EVENT: _C("Update_rows_pre_ga", rows.RowsBody),
    T.PRE_GA_DELETE_ROWS_EVENT: _C("Delete_rows_pre_ga", rows.RowsBody),
    T.WRITE_ROWS_EVENT_V1: _C("Write_rows_v1", rows.RowsBody),
    T.UPDATE_ROWS_EVENT_V1: _C("Update_rows_v1", rows.RowsBody),
    T.DELETE_ROWS_EVENT_V1: _C("Delete_rows_v1", rows.RowsBody),
    T.INCIDENT_EVENT: _C("Incident", control.IncidentBody),
    T.HEARTBEAT_LOG_EVENT: _C("Heartbeat", control.HeartbeatBody),
    T.IGNORABLE_LOG_EVENT: _C("Ignorable", control.IgnorableBody),
    T.ROWS_QUERY_LOG_EVENT: _C("Rows_query", control.RowsQueryBody),
    T.WRITE_ROWS_EVENT: _C("Write_rows", rows.RowsBody),
    T.UPDATE_ROWS_EVENT: _C("Update_rows", rows.RowsBody),
    T.DELETE_ROWS_EVENT: _C("Delete_rows", rows.RowsBody),
    T.GTID_LOG_EVENT: _C("Gtid", gtid.MysqlGtidBody),
    T.ANONYMOUS_GTID_LOG_EVENT: _C("Anonymous_Gtid", gtid.MysqlGtidBody),
    T.PREVIOUS_GTIDS_LOG_EVENT: _C("Previous_gtids", gtid.PreviousGtidsBody),
    T.TRANSACTION_CONTEXT_EVENT: _C("Transaction_context", gtid.TransactionContextBody),
    T.VIEW_CHANGE_EVENT: _C("View_change", gtid.ViewChangeBody),
    T.XA_PREPARE_LOG_EVENT: _C("XA_prepare", statement.XaPrepareBody),
    T.PARTIAL_UPDATE_ROWS_EVENT: _C("Update_rows_partial", rows.RowsBody),
    T.TRANSACTION_PAYLOAD_EVENT: _C("Transaction_payload", payload.TransactionPayloadBody),
    T.HEARTBEAT_LOG_EVENT_V2: _C("Heartbeat_v2", payload.HeartbeatV2Body),
    T.GTID_TAGGED_LOG_EVENT: _C("Gtid_tagged", gtid.GtidTaggedBody),
    T.ANNOTATE_ROWS_EVENT: _C("Annotate_rows", control.AnnotateRowsBody),
    T.BINLOG_CHECKPOINT_EVENT: _C("Binlog_checkpoint", control.BinlogCheckpointBody),
    T.GTID_EVENT: _C("GTID", gtid.MariadbGtidBody),
    T.GTID_LIST_EVENT: _C("Gtid_list", gtid.GtidListBody),
    T.START_ENCRYPTION_EVENT: _C("Start_encryption", control.StartEncryptionBody),
    T.QUERY_COMPRESSED_EVENT: _C("Query_compressed", statement.QueryBody),
    T.WRITE_ROWS_COMPRESSED_EVENT_V1: _C("Write_rows_compressed_v1", rows.RowsBody),
    T.UPDATE_ROWS_COMPRESSED_EVENT_V1: _C("Update_rows_compressed_v1", rows.RowsBody),
    T.DELETE_ROWS_COMPRESSED_EVENT_V1: _C("Delete_rows_compressed_v1", rows.RowsBody),
    T.WRITE_ROWS_COMPRESSED_EVENT: _C("Write_rows_compressed", rows.RowsBody),
    T.UPDATE_ROWS_COMPRESSED_EVENT: _C("Update_rows_compressed", rows.RowsBody),
    T.DELETE_ROWS_COMPRESSED_EVENT: _C("Delete_rows_compressed", rows.RowsBody),
}

FLAVOR_OVERRIDES: dict[tuple[Flavor, int], Codec] = {}


def codec_for(type_code: int, flavor: Flavor | None) -> Codec | None:
    if flavor is not None and (flavor, type_code) in FLAVOR_OVERRIDES:
        return FLAVOR_OVERRIDES[(flavor, type_code)]
    return CODECS.get(type_code)

"""Format_description event (type 15): the first event of every v4 binlog and relay log.

Doc: https://dev.mysql.com/doc/dev/mysql-server/latest/classmysql_1_1binlog_1_1event_1_1Format__description__event.html
MariaDB: ``sql/log_event.h`` class Format_description_log_event.

Body (after the 19-byte common header):

======  ====  ====================  =======================================================
offset  len   field                 meaning
======  ====  ====================  =======================================================
0       2     binlog_version        4 for every file this package reads fully
2       50    server_version        NUL-padded ASCII, e.g. ``10.11.6-MariaDB-log``
52      4     create_timestamp      0 except in the first FDE after server start
56      1     header_length         19
57      n     post_header_lengths   one byte per event type code 1..n
57+n    1     checksum_alg          only when the writer is checksum-aware (MySQL >= 5.6.1,
                                    MariaDB >= 5.3): ChecksumAlg
======  ====  ====================  =======================================================

A checksum-aware FDE always ends with a 4-byte CRC32, even when ``checksum_alg`` is OFF.
The body window here is everything between header and that CRC; ``len_body`` is passed in.
"""

from __future__ import annotations

from construct import Bytes, Computed, If, Int8ul, Int16ul, Int32ul, Struct, this

from ..flavor import checksum_aware, parse_server_version
from ..flavor import fde_is_checksum_aware as fde_is_checksum_aware  # (there: pull reads it without Construct)

LEN_FIXED = 2 + 50 + 4 + 1  # 57


def _aware(ctx) -> bool:
    text = ctx.server_version.split(b"\x00", 1)[0].decode("ascii", "replace")
    return checksum_aware(*parse_server_version(text))


FormatDescriptionBody = Struct(
    "binlog_version" / Int16ul,
    "server_version" / Bytes(50),
    "create_timestamp" / Int32ul,
    "header_length" / Int8ul,
    "checksum_aware" / Computed(_aware),
    "post_header_lengths" / Bytes(lambda ctx: ctx._params.len_body - LEN_FIXED - (1 if ctx.checksum_aware else 0)),
    "checksum_alg" / If(this.checksum_aware, Int8ul),
)



"""Files and events of newer servers that binlogkit recognises but does not read yet, each
named with what it is and what reading it would take (docs/decode.md):

* MariaDB 12.3's InnoDB-stored binlog (``binlog_storage_engine=innodb``, MDEV-34705): files
  ``binlog-NNNNNN.ibb``, pages of ``1 << page_size_shift`` bytes (CRC32C each) holding the
  event stream in chunks, the GTID state every ``gtid_state_interval`` pages, no Format
  description / Rotate events as files of the classic binlog have them. Header page
  (``storage/innobase/include/fsp_binlog.h``), little-endian::

      0   4   magic                 fe fe 0d 01
      4   4   page_size_shift
      8   4   major version         12   4   minor version
      16  8   file_no               24   8   file size in pages
      32  8   start LSN             40   8   GTID state interval in pages
      48  8   earliest out-of-band reference (file_no)      56  8   earliest XA reference

* MariaDB 12.3's PARTIAL_ROW_DATA_EVENT (172, MDEV-32570): a rows event larger than
  ``binlog_row_event_fragment_threshold`` cut in fragments::

      0   4   fragments in the group
      4   4   this fragment's number (from 1)
      8   1   flags                 1 FL_ORIG_EVENT_SIZE: an 8-byte size of the whole rows event follows
      ... the fragment's bytes, to the end of the body

A MariaDB GTID index (``<binlog>.idx``) is read: ``binlogkit.gtid.index``.
"""

from __future__ import annotations

from ..constants import BINLOG_MAGIC, GTID_INDEX_MAGIC, IBB_MAGIC
from ..errors import BadMagicError, BinlogError, UnsupportedFormatError


def not_a_binlog(magic: bytes, rest: bytes = b"") -> BinlogError:
    """The error for a file whose first 4 bytes ``magic`` are not the binlog magic (``rest``:
    the bytes after them, as many as the caller has): what the file is, when we know."""
    if magic == IBB_MAGIC:
        head = magic + rest
        desc = ""
        if len(head) >= 24:
            shift, major, minor = (int.from_bytes(head[i:i + 4], "little") for i in (4, 8, 12))
            file_no = int.from_bytes(head[16:24], "little")
            desc = f" (format {major}.{minor}, file_no {file_no}, pages of {1 << min(shift, 30)} bytes)"
        return UnsupportedFormatError(
            f"a MariaDB 12.3 InnoDB-stored binlog (binlog_storage_engine=innodb, .ibb){desc}: not supported yet "
            "(read it with MariaDB 12.3's own mariadb-binlog; docs/decode.md says what reading it would take)",
            offset=0)
    if magic == GTID_INDEX_MAGIC:
        return BadMagicError("a MariaDB GTID index (<binlog>.idx), not a binlog: binlogkit verify and gtids read it",
                             offset=0)
    return BadMagicError(f"not a binlog: starts with {magic!r}, expected {BINLOG_MAGIC!r}", offset=0)


def partial_row_data(body: bytes, offset: int | None = None) -> UnsupportedFormatError:
    """The error for a PARTIAL_ROW_DATA_EVENT: which fragment it is, and that it is not read."""
    what = ""
    if len(body) >= 9:
        total, seq = int.from_bytes(body[0:4], "little"), int.from_bytes(body[4:8], "little")
        what = f" (fragment {seq} of {total})"
    return UnsupportedFormatError(
        f"MariaDB 12.3 PARTIAL_ROW_DATA_EVENT{what}: a rows event cut in fragments "
        "(binlog_row_event_fragment_threshold); not supported yet: its rows are not decoded",
        offset=offset, event_type="PARTIAL_ROW_DATA_EVENT")

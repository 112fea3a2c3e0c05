"""GTID events of both flavors, Previous_gtids / Gtid_list, Transaction_context, View_change.

MySQL Gtid (33) / Anonymous_gtid (34)::

    0   1   flags           1 = may have statement-based statements
    1   16  sid             source uuid
    17  8   gno             sequence number (0 for anonymous)
    --  1   lt_type         2 = logical clock follows                  (5.7.6+)
    --  8   last_committed
    --  8   sequence_number
    --  7   immediate_commit_timestamp; bit 55 set: 7 more, original_commit_timestamp (8.0.1+)
    --  p   transaction_length (packed)                                 (8.0.2+)
    --  4   immediate_server_version; bit 31 set: 4 more, original     (8.0.14+)
    --  8   commit_group_ticket                                         (8.0.33+, optional)

The fixed part is declared here; ``decode_mysql_gtid_tail`` reads the optional tail (each
field present only if the bytes are there, as the server reads it).

MySQL Gtid_tagged (42, 8.3+) is encoded with the mysql::serialization format: the body is
kept as bytes (byte-exact build) and its fields are read by ``serialization.decode_tagged_gtid``.

MySQL Previous_gtids (35)::

    0   8   n_sids          (tagged format, 8.3+: byte 7 holds the format, 1 = tagged)
    per sid: 16 uuid, [tagged: packed tag length + tag], 8 n_intervals, n x (8 start, 8 end)
              end is exclusive

MariaDB Gtid (162), post-header 19, zero-padded to it::

    0   8   seq_no
    8   4   domain_id
    12  1   flags2          1 STANDALONE, 2 GROUP_COMMIT_ID, 4 TRANSACTIONAL, 8 ALLOW_PARALLEL,
                            16 WAITED, 32 DDL, 64 PREPARED_XA, 128 COMPLETED_XA
    --  8   commit_id       if flags2 & 2
    --  4+1+1+n  xid        if flags2 & (64|128): format_id, gtrid_len, bqual_len, data
    --  *   extra           flags_extra (1 MULTI_ENGINE: +1 extra_engines; 4|8 COMMIT/ROLLBACK
                            ALTER: +8 sa_seq_no; 16 THREAD_ID (11.x): +4?) and zero padding

MariaDB Gtid_list (163)::

    0   4   count (low 28 bits) | flags << 28
    per entry: 4 domain_id, 4 server_id, 8 seq_no
"""

from __future__ import annotations

from construct import (Array, Bytes, GreedyBytes, If, Int8ul, Int32sl, Int32ul, Int64sl, Int64ul,
                       Struct, this)

from .common import read_length, read_packed

MysqlGtidBody = Struct(
    "flags" / Int8ul,
    "sid" / Bytes(16),
    "gno" / Int64sl,
    "tail" / GreedyBytes,
)

GtidTaggedBody = Struct("data" / GreedyBytes)

PreviousGtidsBody = Struct("data" / GreedyBytes)  # decoded by decode_previous_gtids

MariadbGtidBody = Struct(
    "seq_no" / Int64ul,
    "domain_id" / Int32ul,
    "flags2" / Int8ul,
    "commit_id" / If(this.flags2 & 2, Int64ul),
    "xid" / If(this.flags2 & (64 | 128), Struct(
        "format_id" / Int32sl,
        "len_gtrid" / Int8ul,
        "len_bqual" / Int8ul,
        "data" / Bytes(lambda ctx: ctx.len_gtrid + ctx.len_bqual),
    )),
    "extra" / GreedyBytes,
)

GtidListBody = Struct(
    "count_flags" / Int32ul,
    "gtids" / Array(this.count_flags & 0x0FFFFFFF, Struct(
        "domain_id" / Int32ul, "server_id" / Int32ul, "seq_no" / Int64ul)),
    "rest" / GreedyBytes,  # MariaDB 10.x writes 2 more (zero) bytes after the list
)

TransactionContextBody = Struct(
    "len_server_uuid" / Int8ul,
    "thread_id" / Int32ul,
    "gtid_specified" / Int8ul,
    "len_snapshot_version" / Int32ul,
    "n_write_set" / Int32ul,
    "n_read_set" / Int32ul,
    "server_uuid" / Bytes(this.len_server_uuid),
    "snapshot_version" / Bytes(this.len_snapshot_version),
    "sets" / GreedyBytes,  # n_write_set + n_read_set items of (2-byte length, bytes)
)

ViewChangeBody = Struct(
    "view_id" / Bytes(40),
    "seq_number" / Int64ul,
    "len_cert_info" / Int32ul,
    "cert_info" / GreedyBytes,
)


def decode_mysql_gtid_tail(tail: bytes) -> dict:
    """The optional fields after gno, each read only if its bytes are there."""
    out: dict = {}
    pos = 0
    if len(tail) >= 17 and tail[0] == 2:
        out["last_committed"] = int.from_bytes(tail[1:9], "little")
        out["sequence_number"] = int.from_bytes(tail[9:17], "little")
        pos = 17
        if len(tail) - pos >= 7:
            ts = int.from_bytes(tail[pos:pos + 7], "little")
            pos += 7
            if ts & (1 << 55):
                out["immediate_commit_timestamp"] = ts & ~(1 << 55)
                out["original_commit_timestamp"] = int.from_bytes(tail[pos:pos + 7], "little")
                pos += 7
            else:
                out["immediate_commit_timestamp"] = out["original_commit_timestamp"] = ts
            if len(tail) - pos >= 1:
                out["transaction_length"], pos = read_packed(tail, pos)
            if len(tail) - pos >= 4:
                v = int.from_bytes(tail[pos:pos + 4], "little")
                pos += 4
                if v & (1 << 31):
                    out["immediate_server_version"] = v & ~(1 << 31)
                    out["original_server_version"] = int.from_bytes(tail[pos:pos + 4], "little")
                    pos += 4
                else:
                    out["immediate_server_version"] = out["original_server_version"] = v
                if len(tail) - pos >= 8:
                    out["commit_group_ticket"] = int.from_bytes(tail[pos:pos + 8], "little")
                    pos += 8
    if pos < len(tail):
        out["undecoded_tail"] = tail[pos:].hex()
    return out


def decode_mariadb_gtid_extra(flags2: int, extra: bytes) -> dict:
    """flags_extra and what it announces; trailing zero padding is reported, not kept."""
    out: dict = {}
    if not extra:
        return out
    fx = extra[0]
    pos = 1
    out["flags_extra"] = fx
    if fx & 1 and pos < len(extra):
        out["extra_engines"] = extra[pos]
        pos += 1
    if fx & (4 | 8) and pos + 8 <= len(extra):
        out["sa_seq_no"] = int.from_bytes(extra[pos:pos + 8], "little")
        pos += 8
    if fx & 16 and pos + 4 <= len(extra):
        out["thread_id"] = int.from_bytes(extra[pos:pos + 4], "little")
        pos += 4
    rest = extra[pos:]
    if rest.strip(b"\x00"):
        out["undecoded_extra"] = rest.hex()
    return out


def decode_previous_gtids(data: bytes) -> list[dict]:
    """[{sid, tag, intervals: [[start, end_exclusive], ...]}, ...] from a Previous_gtids body.

    Raises ValueError on inconsistent lengths (the caller turns it into a typed error)."""
    from .common import uuid_text

    if len(data) < 8:
        raise ValueError("Previous_gtids body shorter than 8 bytes")
    head = int.from_bytes(data[:8], "little")
    tagged = (head >> 56) == 1
    n_sids = head & 0x00FFFFFFFFFFFFFF if tagged else head
    pos = 8
    out = []
    for _ in range(n_sids):
        if pos + 16 > len(data):
            raise ValueError("Previous_gtids: sid runs past the body")
        sid = uuid_text(data[pos:pos + 16])
        pos += 16
        tag = ""
        if tagged:
            n, pos = read_length(data, pos)
            tag = data[pos:pos + n].decode("ascii", "replace")
            pos += n
        n_iv = int.from_bytes(data[pos:pos + 8], "little")
        pos += 8
        if pos + 16 * n_iv > len(data):
            raise ValueError("Previous_gtids: intervals run past the body")
        ivs = []
        for _ in range(n_iv):
            ivs.append([int.from_bytes(data[pos:pos + 8], "little"), int.from_bytes(data[pos + 8:pos + 16], "little")])
            pos += 16
        out.append({"sid": sid, "tag": tag, "intervals": ivs})
    if pos != len(data):
        raise ValueError(f"Previous_gtids: {len(data) - pos} bytes left over")
    return out

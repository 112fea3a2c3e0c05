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

MySQL Previous_gtids (35), the binary GTID set of ``Gtid_set::encode`` (``sql/rpl_gtid_set.cc``,
``libs/mysql/gtid/``), in one of two layouts told apart by the top byte of the first 8::

    0   8   head            untagged (format 0): n_sids, the top byte 0
                            tagged (format 1, 8.3+): 1 << 56 | n_sids << 8 | 1
                            (encode_nsids_format; the low byte is not read back)
    per sid (a uuid and a tag; untagged intervals of a uuid are their own entry):
    --  16  sid             uuid bytes
    --  v   len_tag         tagged layout only: varlen uint (mysql::serialization), <= 32
    --  n   tag             tagged layout only: [a-z_][a-z0-9_]*, empty for untagged GTIDs
    --  8   n_intervals
    --  16n intervals       (start, end) end exclusive, 1 <= start < end, increasing, not
                            touching (start > the previous end)

A server writes the tagged layout once any GTID it has known was tagged (then also for a set
without tags), sorted by uuid then tag. The header value and the tag length are kept as parsed, so a body builds back
byte-exact even if a writer used a longer varlen form than needed.

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

import io
import struct

from construct import (Array, Bytes, Computed, Construct, ConstructError, ExplicitError, GreedyBytes, If,
                       Int8ul, Int32sl, Int32ul, Int64sl, Int64ul, Struct, this)

from .common import pack_int, read_packed, uuid_text
from .serialization import TAG_MAX_LENGTH, Varlen, read_varlen

MysqlGtidBody = Struct(
    "flags" / Int8ul,
    "sid" / Bytes(16),
    "gno" / Int64sl,
    "tail" / GreedyBytes,
)

GtidTaggedBody = Struct("data" / GreedyBytes)

GTID_FORMAT_UNTAGGED, GTID_FORMAT_TAGGED = 0, 1
GTID_FORMATS = {GTID_FORMAT_UNTAGGED: "untagged", GTID_FORMAT_TAGGED: "tagged"}


def _gtid_format(ctx) -> int:
    return ctx.head >> 56


def _n_sids(ctx) -> int:
    if ctx.format == GTID_FORMAT_TAGGED:
        return (ctx.head >> 8) & ((1 << 48) - 1)
    return ctx.head & ((1 << 56) - 1)


class _Refuse(Construct):
    """Fails parsing with ``message`` when ``cond(ctx)``; builds nothing."""

    def __init__(self, cond, message):
        super().__init__()
        self.cond, self.message = cond, message
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        if self.cond(context):
            raise ExplicitError(self.message(context) if callable(self.message) else self.message, path=path)

    def _build(self, obj, stream, context, path):
        return None

    def _sizeof(self, context, path):
        return 0


GnoInterval = Struct("start" / Int64ul, "end" / Int64ul)  # end exclusive

PreviousGtidsSid = Struct(
    "sid" / Bytes(16),
    "tag" / If(this._.format == GTID_FORMAT_TAGGED, Struct(
        "len_tag" / Varlen,
        _Refuse(lambda c: c.len_tag > TAG_MAX_LENGTH, lambda c: f"tag length {c.len_tag} > {TAG_MAX_LENGTH}"),
        "tag" / Bytes(this.len_tag),
    )),
    "n_intervals" / Int64ul,
    "intervals" / Array(this.n_intervals, GnoInterval),
)

PreviousGtidsBody = Struct(
    "head" / Int64ul,
    "format" / Computed(_gtid_format),
    _Refuse(lambda c: c.format not in GTID_FORMATS, lambda c: f"unknown GTID set format {c.format}"),
    "n_sids" / Computed(_n_sids),
    "sids" / Array(this.n_sids, PreviousGtidsSid),
)

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


def encode_mysql_gtid_tail(*, last_committed: int, sequence_number: int, immediate_commit_timestamp: int,
                           original_commit_timestamp: int | None = None, transaction_length: int,
                           immediate_server_version: int, original_server_version: int | None = None) -> bytes:
    """The inverse of ``decode_mysql_gtid_tail`` (8.0.14+ layout, no commit_group_ticket), as
    ``Gtid_event::write_data_body`` writes it: each original_* field only when it differs from
    the immediate one (then bit 55 / bit 31 of the immediate one says it follows)."""
    out = bytearray(b"\x02" + last_committed.to_bytes(8, "little") + sequence_number.to_bytes(8, "little"))
    if original_commit_timestamp is None or original_commit_timestamp == immediate_commit_timestamp:
        out += immediate_commit_timestamp.to_bytes(7, "little")
    else:
        out += (immediate_commit_timestamp | 1 << 55).to_bytes(7, "little")
        out += original_commit_timestamp.to_bytes(7, "little")
    out += pack_int(transaction_length)
    if original_server_version is None or original_server_version == immediate_server_version:
        out += immediate_server_version.to_bytes(4, "little")
    else:
        out += (immediate_server_version | 1 << 31).to_bytes(4, "little")
        out += original_server_version.to_bytes(4, "little")
    return bytes(out)


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


def _tag_ok(tag: bytes) -> bool:
    """What ``Tag::from_cstring`` accepts in a binary set: a letter or _ first, then letters,
    digits or _ (read back lowercased)."""
    return not tag or (tag[:1].isalpha() or tag[:1] == b"_") and all(
        c.isalnum() or c == "_" for c in tag.decode("ascii", "replace")) and tag.isascii()


def previous_gtids_sids(parsed) -> list[dict]:
    """[{sid, tag, intervals: [[start, end_exclusive], ...]}, ...] from a parsed
    ``PreviousGtidsBody``, checked as ``Gtid_set::add_gtid_encoding`` checks it.

    Raises ValueError naming the sid and interval that break the rules."""
    out = []
    for i, s in enumerate(parsed.sids):
        sid = uuid_text(bytes(s.sid))
        tag = bytes(s.tag.tag) if s.tag is not None else b""
        if not _tag_ok(tag):
            raise ValueError(f"sid {i} ({sid}): {tag!r} is not a GTID tag")
        last = 0
        ivs = []
        for j, iv in enumerate(s.intervals):
            if not last < iv.start < iv.end < 1 << 63:
                raise ValueError(f"sid {i} ({sid}) interval {j}: [{iv.start}, {iv.end}) after {last} "
                                 "(intervals must increase, not touch, and stay below 2**63)")
            last = iv.end
            ivs.append([iv.start, iv.end])
        out.append({"sid": sid, "tag": tag.decode("ascii").lower(), "intervals": ivs})
    return out


def parse_previous_gtids(data: bytes):
    """``PreviousGtidsBody`` parsed from ``data``; ValueError when it does not parse or leaves
    bytes over."""
    stream = io.BytesIO(data)
    try:
        parsed = PreviousGtidsBody.parse_stream(stream)
    except ConstructError as exc:
        path = (getattr(exc, "path", None) or "").replace("(parsing)", "").replace(" -> ", ".").strip(". ")
        raise ValueError(f"Previous_gtids: {str(exc).splitlines()[-1]}" + (f" (at {path})" if path else "")) from None
    if stream.tell() != len(data):
        raise ValueError(f"Previous_gtids: {len(data) - stream.tell()} bytes left over")
    return parsed


_U64 = struct.Struct("<Q")


def decode_previous_gtids(data: bytes) -> list[dict]:
    """``previous_gtids_sids(parse_previous_gtids(data))``, read with offset arithmetic for the
    scans (a set of 60 000 intervals: Construct takes seconds). ``tests/test_tagged_gtids.py``
    keeps the two in agreement, on valid and on damaged bodies.

    Raises ValueError on a body that does not parse, leaves bytes over or breaks the rules
    (the caller turns it into a typed error with file and offset)."""
    n = len(data)
    if n < 8:
        raise ValueError(f"Previous_gtids body of {n} bytes, shorter than its 8-byte head")
    head = _U64.unpack_from(data, 0)[0]
    fmt = head >> 56
    if fmt not in GTID_FORMATS:
        raise ValueError(f"Previous_gtids: unknown GTID set format {fmt}")
    n_sids = (head >> 8) & ((1 << 48) - 1) if fmt == GTID_FORMAT_TAGGED else head & ((1 << 56) - 1)
    pos = 8
    out = []
    for i in range(n_sids):
        if pos + 16 > n:
            raise ValueError(f"Previous_gtids: sid {i} of {n_sids} runs past the body")
        raw_sid = data[pos:pos + 16]
        pos += 16
        tag = b""
        if fmt == GTID_FORMAT_TAGGED:
            try:
                len_tag, pos = read_varlen(data, pos)
            except ValueError:
                raise ValueError(f"Previous_gtids: sid {i}: tag length runs past the body") from None
            if len_tag > TAG_MAX_LENGTH:
                raise ValueError(f"Previous_gtids: sid {i}: tag length {len_tag} > {TAG_MAX_LENGTH}")
            if pos + len_tag > n:
                raise ValueError(f"Previous_gtids: sid {i}: tag runs past the body")
            tag = bytes(data[pos:pos + len_tag])
            pos += len_tag
        if pos + 8 > n:
            raise ValueError(f"Previous_gtids: sid {i}: interval count runs past the body")
        n_iv = _U64.unpack_from(data, pos)[0]
        pos += 8
        if n_iv > (n - pos) // 16:
            raise ValueError(f"Previous_gtids: sid {i}: {n_iv} intervals run past the body")
        sid = uuid_text(bytes(raw_sid))
        if not _tag_ok(tag):
            raise ValueError(f"sid {i} ({sid}): {tag!r} is not a GTID tag")
        flat = struct.unpack_from(f"<{2 * n_iv}Q", data, pos)
        pos += 16 * n_iv
        last = 0
        for j in range(0, 2 * n_iv, 2):
            a, b = flat[j], flat[j + 1]
            if not last < a < b < 1 << 63:
                raise ValueError(f"sid {i} ({sid}) interval {j // 2}: [{a}, {b}) after {last} "
                                 "(intervals must increase, not touch, and stay below 2**63)")
            last = b
        out.append({"sid": sid, "tag": tag.decode("ascii").lower(),
                    "intervals": [[flat[j], flat[j + 1]] for j in range(0, 2 * n_iv, 2)]})
    if pos != n:
        raise ValueError(f"Previous_gtids: {n - pos} bytes left over")
    return out


def encode_previous_gtids(sids: list[tuple[str, str, list[tuple[int, int]]]], *,
                          tagged: bool | None = None) -> bytes:
    """A Previous_gtids body from ``(uuid, tag, [(start, end_exclusive), ...])`` entries in the
    order given, as ``Gtid_set::encode`` writes it: the tagged layout when any tag is set (or
    ``tagged`` says so), the untagged one otherwise."""
    if tagged is None:
        tagged = any(tag for _, tag, _ in sids)
    if not tagged and any(tag for _, tag, _ in sids):
        raise ValueError("tagged GTIDs need the tagged layout")
    n = len(sids)
    head = (GTID_FORMAT_TAGGED << 56 | n << 8 | GTID_FORMAT_TAGGED) if tagged else n
    return PreviousGtidsBody.build({
        "head": head,
        "sids": [{"sid": bytes.fromhex(u.replace("-", "")),
                  "tag": {"len_tag": len(t), "tag": t.encode("ascii")} if tagged else None,
                  "n_intervals": len(ivs), "intervals": [{"start": a, "end": b} for a, b in ivs]}
                 for u, t, ivs in sids],
    })

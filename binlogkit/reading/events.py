"""Decoding (pure) and building of events: a raw event plus its format in, a typed event out.

``decode(raw)`` parses the body inside a window of exactly its length (event_size minus header
minus checksum): running short and bytes left over are both ``BodyLengthError``. Unknown type
codes are kept raw (``Event.codec is None``); with ``strict=True`` an unknown type that does not
carry LOG_EVENT_IGNORABLE_F is an error. ``build_event`` makes the bytes back (event_size,
log_pos and CRC32 computed), byte-exact for every event of the fixtures and the corpus.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass, field
from typing import Any, ClassVar
from datetime import datetime, timezone

from construct import Container, ConstructError, ListContainer

from ..codecs.fast import FAST, Irregular
from ..codecs import compression, gtid as gtid_codec, payload as payload_codec, status_vars
from ..codecs.common import uuid_text
from ..codecs.header import HEADER_STRUCT, LEN_HEADER
from ..constants import COMPRESSED_ROWS_TYPES, LEN_CHECKSUM, EventFlag, EventType as T
from ..errors import BodyLengthError, FormatError
from ..flavor import Flavor, status_vars_mariadb
from .format import Format
from .reader import RawEvent, event_crc
from .registry import Codec, codec_for

INCIDENTS = {0: "NONE", 1: "LOST_EVENTS", 2: "NEW_INCIDENT"}
TEXT_FIELDS = {"db", "table", "query", "new_log_ident", "log_ident", "name", "binlog_file",
               "server_uuid", "view_id", "server_version"}
MARIADB_GTID_FLAGS = {1: "STANDALONE", 2: "GROUP_COMMIT_ID", 4: "TRANSACTIONAL", 8: "ALLOW_PARALLEL",
                      16: "WAITED", 32: "DDL", 64: "PREPARED_XA", 128: "COMPLETED_XA"}


@dataclass(frozen=True)
class Event:
    """A decoded event: where it is, its header, its codec and its fields."""

    raw: RawEvent
    codec: Codec | None
    parsed: Container | None = field(repr=False, default=None)
    fields: dict = field(default_factory=dict)
    rows: list | None = field(repr=False, default=None)  # decoded row images, when asked for
    table: Any = field(repr=False, default=None)  # a rowvalues Table (not imported: no circle)  # the Table they belong to
    rows_text: bytes | None = field(repr=False, default=None)  # `decode -v` lines, when asked for
    problem: ClassVar[bool] = False  # a decoder.Problem says True: the two can be told apart without isinstance

    @property
    def type_name(self) -> str:
        return self.raw.type_name

    @property
    def name(self) -> str:
        return self.codec.name if self.codec else self.raw.type_name


def _params(raw: RawEvent, fmt: Format | None, body_len: int) -> dict:
    return {"len_body": body_len, "type_code": raw.type_code,
            "post_header_len": fmt.post_header_length(raw.type_code) if fmt else None}


def _text(b) -> str:
    return bytes(b).decode("utf-8", "replace")


BULK_FIELDS = {"rows", "payload", "block", "data", "cert_info", "sets"}  # summarised, never hexed whole


_SCALARS = (int, str, float, bool, type(None))


def to_jsonable(obj, key: str | None = None):
    """Containers to dicts, bytes to text (name-like fields) or hex; bulk bytes by length.
    Exact types are tested first: this runs for every event `decode` prints."""
    tv = type(obj)
    if tv is int or tv is str or obj is None:
        return obj
    if tv is bytes or tv is bytearray:
        return _text(obj).rstrip("\x00") if key in TEXT_FIELDS else bytes(obj).hex()
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k[:1] == "_":
                continue
            tv = type(v)
            if tv is int or v is None:
                out[k] = v
            elif tv is bytes or tv is bytearray:
                if k in BULK_FIELDS and len(v) > 64:
                    out[k] = f"<{len(v)} bytes>"
                else:
                    out[k] = _text(v).rstrip("\x00") if k in TEXT_FIELDS else bytes(v).hex()
            else:
                out[k] = to_jsonable(v, k)
        return out
    if isinstance(obj, _SCALARS):
        return obj
    if isinstance(obj, (list, ListContainer)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (bytes, bytearray)):
        return _text(obj).rstrip("\x00") if key in TEXT_FIELDS else bytes(obj).hex()
    return obj


def decode(raw: RawEvent, *, strict: bool = True) -> Event:
    """Decode ``raw`` with the format it was read under. Pure: no I/O."""
    fmt = raw.format
    flavor = fmt.flavor if fmt else None
    codec = codec_for(raw.type_code, flavor)
    if codec is None:
        if raw.type_code == T.PARTIAL_ROW_DATA_EVENT and strict:
            from .formats import partial_row_data

            raise partial_row_data(raw.body, raw.offset)
        if strict and not raw.flags & EventFlag.IGNORABLE:
            raise FormatError(f"unknown event type {raw.type_code} without LOG_EVENT_IGNORABLE_F",
                              offset=raw.offset, event_type=raw.type_name)
        return Event(raw, None, None, {"data": raw.body.hex()})
    body = raw.body
    parsed = None
    fast = FAST.get(raw.type_code)
    if fast is not None:
        try:
            parsed = fast(body, raw.type_code, fmt.post_header_length(raw.type_code) if fmt else None)
            left = 0
        except Irregular:
            parsed = None
        if parsed is not None and raw.type_code in _FLAT:  # the hottest event: its fields in one step
            return Event(raw, codec, parsed, rows_fields(parsed))
    try:
        if parsed is None:
            stream = io.BytesIO(body)
            parsed = codec.body.parse_stream(stream, **_params(raw, fmt, len(body)))
            left = len(body) - stream.tell()
    except ConstructError as exc:
        path = getattr(exc, "path", None) or ""
        raise BodyLengthError(f"{codec.name} body does not parse: {str(exc).splitlines()[-1]}",
                              offset=raw.offset, event_type=raw.type_name,
                              field=path.replace("(parsing) -> ", "").replace(" -> ", ".") or None) from None
    if left:
        raise BodyLengthError(f"{codec.name} body leaves {left} bytes over", offset=raw.offset,
                              event_type=raw.type_name)
    try:
        fields = _view(raw, parsed, flavor)
    except (ValueError, IndexError, KeyError, zlib.error) as exc:
        raise FormatError(f"{codec.name}: {exc}", offset=raw.offset, event_type=raw.type_name) from None
    return Event(raw, codec, parsed, fields)


_FLAT = frozenset({20, 21, 22, 23, 24, 25, 30, 31, 32, 39})  # rows events (compressed ones add a field)


def rows_fields(p: Container) -> dict:
    """``_view`` of a rows event the fast parser read, built directly (``tests/test_fast.py``
    checks it equals the generic view on every real rows event)."""
    extra, after, rows = p["extra_data"], p["columns_after_image"], p["rows"]
    return {"table_id": p["table_id"], "flags": p["flags"], "len_extra_data": p["len_extra_data"],
            "extra_data": extra.hex(), "width": p["width"], "columns_before_image": p["columns_before_image"].hex(),
            "columns_after_image": None if after is None else after.hex(), "rows": f"<{len(rows)} bytes>",
            "len_rows": len(rows)}


_PLAIN = frozenset({T.XID_EVENT, T.TABLE_MAP_EVENT, T.ANNOTATE_ROWS_EVENT})  # fields as parsed, nothing derived


def _view(raw: RawEvent, p: Container, flavor: Flavor | None) -> dict:
    """The JSON-friendly fields of an event, with derived values people look for."""
    t = raw.type_code
    if t in _FLAT:
        f = to_jsonable(p)
        n = len(p["rows"])  # item access: a Container's attribute access is ~1 us on this path
        f["len_rows"] = n
        f["rows"] = f"<{n} bytes>"
        return f
    if t in _PLAIN:
        return to_jsonable(p)
    f = to_jsonable(p)
    if t == T.FORMAT_DESCRIPTION_EVENT:
        f["post_header_lengths"] = list(p.post_header_lengths)
        f.pop("checksum_aware", None)
    elif t in (T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT, T.EXECUTE_LOAD_QUERY_EVENT):
        f["status_vars"] = status_vars.decode(bytes(p.status_vars), status_vars_mariadb(flavor))
        q = bytes(p.query)
        if t == T.QUERY_COMPRESSED_EVENT:
            q = compression.uncompress(q)
        f["query"] = _text(q)
    elif t in (T.GTID_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT):
        f["sid"] = uuid_text(bytes(p.sid))
        f.pop("tail")
        f.update(gtid_codec.decode_mysql_gtid_tail(bytes(p.tail)))
        if t == T.GTID_LOG_EVENT:
            f["gtid"] = f"{f['sid']}:{p.gno}"
    elif t == T.GTID_TAGGED_LOG_EVENT:
        from ..codecs.serialization import decode_tagged_gtid
        f = decode_tagged_gtid(bytes(p.data))
    elif t == T.PREVIOUS_GTIDS_LOG_EVENT:
        from ..gtid import MysqlGtidSet

        sids = gtid_codec.previous_gtids_sids(p)
        f = {"format": gtid_codec.GTID_FORMATS[p.format], "gtid_set": str(MysqlGtidSet.from_previous_gtids(sids)),
             "sids": sids}
    elif t == T.GTID_EVENT:
        f["gtid"] = f"{p.domain_id}-{raw.server_id}-{p.seq_no}"
        f["flags"] = [n for bit, n in MARIADB_GTID_FLAGS.items() if p.flags2 & bit]
        f.pop("extra")
        f.update(gtid_codec.decode_mariadb_gtid_extra(p.flags2, bytes(p.extra)))
    elif t == T.GTID_LIST_EVENT:
        f = {"flags": p.count_flags >> 28,
             "gtids": [f"{g.domain_id}-{g.server_id}-{g.seq_no}" for g in p.gtids]}
    elif t == T.INCIDENT_EVENT:
        name = INCIDENTS.get(p.incident, str(p.incident))
        f["incident_name"] = name
        f["text"] = f"The incident {name} occured on the master. Message: {p.message}"
    elif t == T.TRANSACTION_PAYLOAD_EVENT:
        vals = payload_codec.tlv_values(p.fields, payload_codec.PAYLOAD_FIELDS)
        ctype = vals.get("compression_type")
        f = {**vals, "compression": payload_codec.COMPRESSION.get(ctype, "?") if isinstance(ctype, int) else "?",
             "len_payload": len(p.payload)}
    elif t == T.HEARTBEAT_LOG_EVENT_V2:
        f = payload_codec.tlv_values(p.fields, payload_codec.HEARTBEAT_FIELDS, {"log_filename"})
    elif t in COMPRESSED_ROWS_TYPES:
        f["len_rows_uncompressed"] = len(compression.uncompress(bytes(p.rows)))
        f["rows"] = f"<{len(p.rows)} bytes compressed>"
    elif "rows" in f and isinstance(f["rows"], str):
        f["len_rows"] = len(p.rows)
        f["rows"] = f"<{len(p.rows)} bytes>"
    elif t in (T.LOAD_EVENT, T.NEW_LOAD_EVENT, T.CREATE_FILE_EVENT):
        from ..codecs.load import SQL_EX_STRINGS, load_statement

        f["sql_ex"] = {**{k: _text(p.sql_ex[k]) for k in SQL_EX_STRINGS}, "opt_flags": p.sql_ex.opt_flags}
        f["fields"] = [_text(x) for x in p.fields]
        f["fname"] = _text(p.fname)
        f["query"] = load_statement(p, t)
        if p.block is not None:
            f["block_len"] = len(p.block)
    elif t == T.APPEND_BLOCK_EVENT:
        f["block_len"] = len(p.block)
    elif t == T.XA_PREPARE_LOG_EVENT:
        data = bytes(p.data)
        f["xid"] = f"X'{data[:p.len_gtrid].hex()}',X'{data[p.len_gtrid:].hex()}',{p.format_id}"
    elif t == T.ROWS_QUERY_LOG_EVENT:
        f["query"] = _text(p.query)
    elif t == T.XID_EVENT:
        pass
    elif t == T.ROTATE_EVENT:
        f["new_log_ident"] = _text(p.new_log_ident)
    return f


def payload_events(event: Event) -> list[RawEvent]:
    """The events inside a Transaction_payload, framed (their offsets are within the payload)."""

    p = event.parsed
    if p is None:
        raise FormatError("Transaction_payload: not decoded", offset=event.raw.offset, event_type=event.raw.type_name)
    vals = payload_codec.tlv_values(p.fields, payload_codec.PAYLOAD_FIELDS)
    ctype, usize = vals.get("compression_type", 255), vals.get("uncompressed_size")
    try:
        if not isinstance(ctype, int) or not (usize is None or isinstance(usize, int)):
            raise ValueError("compression_type / uncompressed_size is not a number")
        inner = payload_codec.decompress_payload(bytes(p.payload), ctype, usize)
    except ValueError as exc:
        raise FormatError(f"Transaction_payload: {exc}", offset=event.raw.offset,
                          event_type=event.raw.type_name) from None
    fmt = event.raw.format
    # inner events carry no checksum: read them under the same format with checksums off
    from dataclasses import replace
    inner_fmt = replace(fmt, checksum_alg=None) if fmt else None
    out = []
    pos = 0
    while pos < len(inner):
        if len(inner) - pos < LEN_HEADER:
            raise BodyLengthError("payload: torn inner event header", offset=event.raw.offset)
        ts, code, sid, size, log_pos, flags = HEADER_STRUCT.unpack_from(inner, pos)
        if size < LEN_HEADER or pos + size > len(inner):
            raise BodyLengthError(f"payload: inner event at {pos} has bad size {size}", offset=event.raw.offset)
        out.append(RawEvent(pos, ts, code, sid, size, log_pos, flags, inner[pos:pos + size], inner_fmt, None))
        pos += size
    return out


def build_body(codec: Codec, parsed: Container, raw_like: RawEvent, len_body: int) -> bytes:
    """Body bytes from parsed fields. ``len_body`` sizes the one layout that needs it (the
    FDE's post-header table); ``raw_like`` gives type code and format."""
    return codec.body.build(parsed, **_params(raw_like, raw_like.format, len_body))


def build_event(*, type_code: int, body: bytes, timestamp: int, server_id: int, log_pos: int,
                flags: int, checksum: bool, header_extra: bytes = b"") -> bytes:
    """Header + body (+ CRC32): event_size computed, CRC computed (FDE rule included).
    ``header_extra``: bytes past the 19-byte header when the FDE announces a longer one."""
    size = LEN_HEADER + len(header_extra) + len(body) + (LEN_CHECKSUM if checksum else 0)
    data = HEADER_STRUCT.pack(timestamp, type_code, server_id, size, log_pos, flags) + header_extra + body
    if checksum:
        data += b"\x00\x00\x00\x00"
        data = data[:-4] + event_crc(data).to_bytes(4, "little")
    return data


def rebuild(event: Event) -> bytes:
    """The bytes of ``event`` made again from its parsed fields (for the round-trip proof)."""
    raw = event.raw
    body = build_body(event.codec, event.parsed, raw, len(raw.body)) if event.codec else raw.body
    return build_event(type_code=raw.type_code, body=body, timestamp=raw.timestamp,
                       server_id=raw.server_id, log_pos=raw.log_pos, flags=raw.flags,
                       checksum=raw.len_checksum > 0, header_extra=raw.data[LEN_HEADER:raw.len_header])


def event_time(raw: RawEvent) -> datetime:
    return datetime.fromtimestamp(raw.timestamp, tz=timezone.utc)

"""MySQL Transaction_payload (40, 8.0.20+) and Heartbeat v2 (41): TLV-headed events.

Both start with a list of fields, each ``type`` (packed int), ``length`` (packed int), ``value``
(``length`` bytes; integer fields hold a packed int), ended by ``type`` 0 alone. Transaction
payload fields: 1 payload_size, 2 compression_type (0 ZSTD, 255 NONE), 3 uncompressed_size; the
payload follows the end mark: the transaction's events (common header + body, no checksum),
compressed as announced. Heartbeat v2 fields: 1 log_filename, 2 log_position.
Source: mysql-server ``libs/mysql/binlog/event/codecs/binary.cpp``.
"""

from __future__ import annotations

from construct import Bytes, GreedyBytes, If, RepeatUntil, Struct, this

from .common import PackedInt, read_packed

TlvField = Struct(
    "type" / PackedInt,
    "length" / If(this.type != 0, PackedInt),
    "value" / If(this.type != 0, Bytes(this.length)),
)

TlvHeader = RepeatUntil(lambda obj, lst, ctx: obj.type == 0, TlvField)

TransactionPayloadBody = Struct(  # the FDE announces a post-header of 40; the TLV starts at 0
    "fields" / TlvHeader,
    "payload" / GreedyBytes,
)

HeartbeatV2Body = Struct(
    "fields" / TlvHeader,
    "rest" / GreedyBytes,
)

PAYLOAD_FIELDS = {1: "payload_size", 2: "compression_type", 3: "uncompressed_size"}
HEARTBEAT_FIELDS = {1: "log_filename", 2: "log_position"}
COMPRESSION = {0: "ZSTD", 255: "NONE"}


def tlv_values(fields, names: dict[int, str], strings: set[str] = frozenset()) -> dict:
    """The fields of a parsed TLV header as a dict of names to ints (or strings); a field type
    not in ``names`` is skipped by the server, and reported here as ``field_N``: its bytes (hex),
    since nothing says what they hold."""
    out = {}
    for f in fields:
        if f.type == 0:
            break
        name = names.get(f.type)
        if name is None:
            out[f"field_{f.type}"] = bytes(f.value).hex()
        elif name in strings:
            out[name] = bytes(f.value).decode("utf-8", "replace")
        else:
            try:
                out[name], _ = read_packed(bytes(f.value), 0)
            except (IndexError, KeyError):
                out[name] = bytes(f.value).hex()
    return out


def decompress_payload(payload: bytes, compression_type: int, uncompressed_size: int | None) -> bytes:
    """The inner events of a Transaction_payload, decompressed (zstd streamed)."""
    if compression_type == 255:
        return payload
    if compression_type != 0:
        raise ValueError(f"unknown compression type {compression_type}")
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    with dctx.stream_reader(payload) as reader:
        out = reader.read(uncompressed_size) if uncompressed_size else reader.readall()
    return out

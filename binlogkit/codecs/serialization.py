"""MySQL's serialization format (mysql::serialization, 8.3+), used by Gtid_tagged (type 42)
and, for one string, by the tagged Previous_gtids layout.

Layout, per ``libs/mysql/serialization/readme.md`` and ``serializer_impl.hpp``::

    message        := version(varlen) size(varlen) last_non_ignorable_field_id(varlen)
                      { field_id(varlen) data }
    version        := the top-level "field id" serialization_format_version (1, byte 0x02)
    size           := the bytes of the whole message, counted from the version field on
    varlen uint    := the lowest byte's trailing 1-bits + 1 = the number of bytes (9 if all 8
                      are 1); the value is the little-endian integer shifted right by that count
                      (for 9 bytes: the 8 bytes after the first). Readers accept a longer form
                      than needed; writers use the shortest.
    varlen int     := zig-zag: (x << 1) for x >= 0, ((-(x + 1)) << 1) | 1 for x < 0
    string         := length(varlen) bytes
    fixed array    := its elements, each as data

Fields with ids a reader does not know are skipped up to ``size``, as the server does, when
``last_non_ignorable_field_id`` says that none of them must be understood; otherwise the
message cannot be read.

Gtid_tagged fields (``control_events.h`` Gtid_event::define_fields): 0 gtid_flags, 1 uuid (16
bytes, each a varlen uint), 2 gno, 3 tag (string), 4 last_committed, 5 sequence_number,
6 immediate_commit_timestamp, 7 original_commit_timestamp (absent: = immediate),
8 transaction_length, 9 immediate_server_version, 10 original_server_version (absent:
= immediate), 11 commit_group_ticket. Checked against a Gtid_tagged body a MySQL 9.2 server
wrote (published in go-mysql's ``serialization/serialization_test.go``, ``tests/test_tagged_gtids.py``).
"""

from __future__ import annotations

from construct import Construct, SizeofError, stream_read, stream_write

from .common import uuid_text

FORMAT_VERSION = 1  # serialization_format_version, written as the top-level field id


def read_varlen(b: bytes, p: int) -> tuple[int, int]:
    """(value, next position) of the varlen uint at ``p``; ValueError if it runs past ``b``."""
    if p >= len(b):
        raise ValueError("variable-length integer runs past the data")
    first = b[p]
    n = 1
    while n < 9 and first & (1 << (n - 1)):
        n += 1
    if p + n > len(b):
        raise ValueError("variable-length integer runs past the data")
    if n == 9:
        return int.from_bytes(b[p + 1:p + 9], "little"), p + 9
    return int.from_bytes(b[p:p + n], "little") >> n, p + n


def varlen_width(value: int) -> int:
    """Bytes of the shortest form of ``value`` (what the server writes)."""
    for n in range(1, 9):
        if value < 1 << (7 * n):
            return n
    return 9


def write_varlen(value: int, width: int | None = None) -> bytes:
    """The varlen form of ``value``: the shortest, or ``width`` bytes (a longer form a reader
    accepts, kept so that a parsed body builds back byte-exact)."""
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{value} does not fit a variable-length integer")
    n = max(width or 0, varlen_width(value))
    if n >= 9:
        return b"\xff" + value.to_bytes(8, "little")
    return ((value << n) | ((1 << (n - 1)) - 1)).to_bytes(n, "little")


class VarlenUInt(int):
    """A varlen uint as parsed: its value, and ``width``, the bytes it took."""

    width: int

    def __new__(cls, value: int, width: int) -> "VarlenUInt":
        obj = super().__new__(cls, value)
        obj.width = width
        return obj


class VarlenAdapter(Construct):
    """Construct for a varlen uint: parses to ``VarlenUInt``; builds the form it was read in
    (a plain int builds in the shortest form)."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)
        n = 1
        while n < 9 and first[0] & (1 << (n - 1)):
            n += 1
        raw = first + (stream_read(stream, n - 1, path) if n > 1 else b"")
        value, _ = read_varlen(raw, 0)
        return VarlenUInt(value, n)

    def _build(self, obj, stream, context, path):
        data = write_varlen(int(obj), getattr(obj, "width", None))
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("variable-length integers have a variable size", path=path)


Varlen = VarlenAdapter()


def unzigzag(u: int) -> int:
    return (u >> 1) ^ -(u & 1)


def zigzag(x: int) -> int:
    return x << 1 if x >= 0 else ((-(x + 1)) << 1) | 1


SIGNED = {2, 4, 5}
NAMES = ["gtid_flags", "uuid", "gno", "tag", "last_committed", "sequence_number",
         "immediate_commit_timestamp", "original_commit_timestamp", "transaction_length",
         "immediate_server_version", "original_server_version", "commit_group_ticket"]
TAG_MAX_LENGTH = 32


def decode_tagged_gtid(data: bytes) -> dict:
    """Fields of a Gtid_tagged body; raises ValueError on malformed input."""
    if not data:
        raise ValueError("empty Gtid_tagged body")
    version, p = read_varlen(data, 0)
    if version != FORMAT_VERSION:
        raise ValueError(f"serialization format version {version}, not {FORMAT_VERSION}")
    out: dict = {"serialization_version": version}
    size, p = read_varlen(data, p)
    if size > len(data):
        raise ValueError(f"message size {size} runs past the body ({len(data)} bytes)")
    end = size
    out["last_non_ignorable_field_id"], p = read_varlen(data, p)
    if out["last_non_ignorable_field_id"] > len(NAMES):
        raise ValueError(f"fields up to id {out['last_non_ignorable_field_id'] - 1} must be read "
                         f"and only {len(NAMES) - 1} are known")
    if p > end:
        raise ValueError(f"message size {size} is shorter than its own header")
    last = -1
    while p < end:
        fid, q = read_varlen(data, p)
        if fid <= last:
            raise ValueError(f"field id {fid} after field id {last}")
        if fid >= len(NAMES):  # ignorable fields of a later version: skipped, as the server does
            out["ignored_fields"] = data[p:end].hex()
            p = end
            break
        last, p = fid, q
        if fid == 1:
            raw = bytearray()
            for _ in range(16):
                v, p = read_varlen(data, p)
                if v > 0xFF:
                    raise ValueError("a uuid byte out of range")
                raw.append(v)
            out["uuid"] = uuid_text(bytes(raw))
        elif fid == 3:
            n, p = read_varlen(data, p)
            if n > TAG_MAX_LENGTH or p + n > end:
                raise ValueError(f"tag of {n} bytes (at most {TAG_MAX_LENGTH}, {end - p} left)")
            out["tag"] = data[p:p + n].decode("ascii", "replace")
            p += n
        else:
            v, p = read_varlen(data, p)
            out[NAMES[fid]] = unzigzag(v) if fid in SIGNED else v
        if p > end:
            raise ValueError("a field runs past the message")
    out.setdefault("original_commit_timestamp", out.get("immediate_commit_timestamp"))
    out.setdefault("original_server_version", out.get("immediate_server_version"))
    if "uuid" in out and "gno" in out:
        tag = out.get("tag", "")
        out["gtid"] = f"{out['uuid']}:{tag + ':' if tag else ''}{out['gno']}"
    if end < len(data):
        out["undecoded_tail"] = data[end:].hex()
    return out


def encode_tagged_gtid(fields: dict) -> bytes:
    """The inverse, for building test events: the fields present, in id order, as the server
    writes them (``last_non_ignorable_field_id`` 0: a MySQL 9.2 server writes 0, every
    Gtid_tagged field being ignorable)."""
    body = bytearray()
    for fid, name in enumerate(NAMES):
        if name not in fields:
            continue
        body += write_varlen(fid)
        if fid == 1:
            for byte in bytes.fromhex(fields["uuid"].replace("-", "")):
                body += write_varlen(byte)
        elif fid == 3:
            t = fields["tag"].encode()
            body += write_varlen(len(t)) + t
        else:
            v = fields[name]
            body += write_varlen(zigzag(v) if fid in SIGNED else v)
    head = write_varlen(fields.get("serialization_version", FORMAT_VERSION))
    inner = write_varlen(fields.get("last_non_ignorable_field_id", 0)) + bytes(body)
    return head + _sized(len(head), inner)


def _sized(before: int, inner: bytes) -> bytes:
    """size(varlen) + inner, where size counts ``before`` bytes, itself and inner."""
    n = before + len(inner) + 1
    while True:
        s = write_varlen(n)
        if before + len(s) + len(inner) == n:
            return s + inner
        n = before + len(s) + len(inner)

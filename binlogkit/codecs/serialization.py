"""MySQL's serialization format (mysql::serialization, 8.3+), used by Gtid_tagged (type 42).

Layout, per ``libs/mysql/serialization/readme.md``::

    message        := version(1 byte) body
    body           := size(varlen) last_non_ignorable_field_id(varlen) { field_id(varlen) data }
                      (size read as the bytes after the version byte, itself included — the
                      readme does not say; a real 8.3 file would settle it)
    varlen uint    := the lowest byte's trailing 1-bits + 1 = the number of bytes (9 if all 8
                      are 1); the value is the little-endian integer shifted right by that count
                      (for 9 bytes: the 8 bytes after the first)
    varlen int     := zig-zag: (x << 1) for x >= 0, ((-(x + 1)) << 1) | 1 for x < 0
    string         := length(varlen) bytes
    fixed array    := its elements, each as data

Gtid_tagged fields (``control_events.h`` Gtid_event::define_fields): 0 gtid_flags, 1 uuid (16
bytes, each a varlen uint), 2 gno, 3 tag (string), 4 last_committed, 5 sequence_number,
6 immediate_commit_timestamp, 7 original_commit_timestamp (absent: = immediate),
8 transaction_length, 9 immediate_server_version, 10 original_server_version (absent:
= immediate), 11 commit_group_ticket. Decoded from the specification; no real 8.3+ file was
at hand to check it against (see docs/decode.md).
"""

from __future__ import annotations

from .common import uuid_text


def read_varlen(b: bytes, p: int) -> tuple[int, int]:
    first = b[p]
    n = 1
    while n < 9 and first & (1 << (n - 1)):
        n += 1
    if p + n > len(b):
        raise ValueError("variable-length integer runs past the data")
    if n == 9:
        return int.from_bytes(b[p + 1:p + 9], "little"), p + 9
    return int.from_bytes(b[p:p + n], "little") >> n, p + n


def write_varlen(value: int) -> bytes:
    for n in range(1, 9):
        if value < 1 << (7 * n):
            return ((value << n) | ((1 << (n - 1)) - 1)).to_bytes(n, "little")
    return b"\xff" + value.to_bytes(8, "little")


def unzigzag(u: int) -> int:
    return (u >> 1) ^ -(u & 1)


def zigzag(x: int) -> int:
    return x << 1 if x >= 0 else ((-(x + 1)) << 1) | 1


SIGNED = {2, 4, 5}
NAMES = ["gtid_flags", "uuid", "gno", "tag", "last_committed", "sequence_number",
         "immediate_commit_timestamp", "original_commit_timestamp", "transaction_length",
         "immediate_server_version", "original_server_version", "commit_group_ticket"]


def decode_tagged_gtid(data: bytes) -> dict:
    """Fields of a Gtid_tagged body; raises ValueError on malformed input."""
    if not data:
        raise ValueError("empty Gtid_tagged body")
    out: dict = {"serialization_version": data[0]}
    size, p = read_varlen(data, 1)
    end = 1 + size
    if end > len(data):
        raise ValueError(f"message size {size} runs past the body ({len(data) - 1} bytes)")
    out["last_non_ignorable_field_id"], p = read_varlen(data, p)
    while p < end:
        fid, p = read_varlen(data, p)
        if fid == 1:
            raw = bytearray()
            for _ in range(16):
                v, p = read_varlen(data, p)
                raw.append(v & 0xFF)
            out["uuid"] = uuid_text(bytes(raw))
        elif fid == 3:
            n, p = read_varlen(data, p)
            out["tag"] = data[p:p + n].decode("ascii", "replace")
            p += n
        elif fid < len(NAMES):
            v, p = read_varlen(data, p)
            out[NAMES[fid]] = unzigzag(v) if fid in SIGNED else v
        else:
            raise ValueError(f"unknown field id {fid}: its size cannot be known")
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
    """The inverse, for building test events (fields in id order, all present)."""
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
    inner = write_varlen(fields.get("last_non_ignorable_field_id", 0)) + bytes(body)
    return bytes([fields.get("serialization_version", 0)]) + _sized(inner)


def _sized(inner: bytes) -> bytes:
    """size(varlen) + inner, where size counts the size field itself and inner (per the
    reader above: size = bytes after the version byte)."""
    n = len(inner) + 1
    while True:
        s = write_varlen(n)
        if len(s) + len(inner) == n:
            return s + inner
        n = len(s) + len(inner)

"""The build side of MySQL's binary JSON (``sql-common/json_binary.cc``'s serializer), for tests:
``document(value)`` gives the bytes a MySQL server stores for ``value``, which
``binlogkit.codecs.mysql_json`` (and the C path, ``binlogkit/_rowarrow.c``) read back.

Values: None, True, False, int (the smallest of int16 / int32 / int64 that holds it, uint64
above), float (double), str, dict (keys in MySQL's order: shorter first, then bytewise), list,
``Typed(type, int)`` for an integer stored at a chosen width, ``Opaque(field_type, data)``.
Containers are small (2-byte counts and offsets) unless ``large`` says otherwise for one (called
with the container's value) or the small form cannot hold it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

SMALL_OBJ, LARGE_OBJ, SMALL_ARR, LARGE_ARR, LITERAL = 0, 1, 2, 3, 4
INT16, UINT16, INT32, UINT32, INT64, UINT64, DOUBLE, STRING, OPAQUE = 5, 6, 7, 8, 9, 10, 11, 12, 15
_INT = {INT16: "<h", UINT16: "<H", INT32: "<i", UINT32: "<I", INT64: "<q", UINT64: "<Q"}
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


@dataclass(frozen=True)
class Typed:
    type: int
    value: int


@dataclass(frozen=True)
class Opaque:
    field_type: int
    data: bytes


def varlen(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def decimal_bytes(unscaled: int, precision: int, scale: int) -> bytes:
    """MySQL's binary DECIMAL(precision, scale) of ``unscaled`` / 10**scale (decimal2bin)."""
    intg = precision - scale
    digits = str(abs(unscaled)).zfill(precision)
    assert len(digits) == precision, "more digits than the precision"
    ip, fp = digits[:intg], digits[intg:]
    out = bytearray()
    lead = intg % 9
    if lead:
        out += int(ip[:lead]).to_bytes(_DIG2BYTES[lead], "big")
    for i in range(lead, intg, 9):
        out += int(ip[i:i + 9]).to_bytes(4, "big")
    whole = scale - scale % 9
    for i in range(0, whole, 9):
        out += int(fp[i:i + 9]).to_bytes(4, "big")
    if scale % 9:
        out += int(fp[whole:]).to_bytes(_DIG2BYTES[scale % 9], "big")
    if unscaled < 0:
        out = bytearray(x ^ 0xFF for x in out)
    out[0] ^= 0x80
    return bytes(out)


def _int_type(v: int) -> int:
    if -2**15 <= v < 2**15:
        return INT16
    if -2**31 <= v < 2**31:
        return INT32
    if -2**63 <= v < 2**63:
        return INT64
    return UINT64


def _scalar(value) -> tuple[int, bytes]:
    if value is None or value is True or value is False:
        return LITERAL, bytes([{None: 0, True: 1, False: 2}[value]])
    if isinstance(value, Typed):
        return value.type, struct.pack(_INT[value.type], value.value)
    if isinstance(value, int):
        t = _int_type(value)
        return t, struct.pack(_INT[t], value)
    if isinstance(value, float):
        return DOUBLE, struct.pack("<d", value)
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return STRING, varlen(len(raw)) + raw
    if isinstance(value, Opaque):
        return OPAQUE, bytes([value.field_type]) + varlen(len(value.data)) + value.data
    raise TypeError(f"no binary JSON for {value!r}")


def _inline(t: int, large: bool) -> bool:
    return t in (LITERAL, INT16, UINT16) or (large and t in (INT32, UINT32))


def _container(value, large: bool, pick: Callable[[object], bool]) -> tuple[int, bytes]:
    obj = isinstance(value, dict)
    w = 4 if large else 2
    items = sorted(value.items(), key=lambda kv: (len(kv[0].encode()), kv[0].encode())) if obj \
        else [(None, v) for v in value]
    count = len(items)
    at = 2 * w + (count * (w + 2) if obj else 0) + count * (1 + w)
    key_entries, keys = bytearray(), bytearray()
    if obj:
        for k, _ in items:
            raw = k.encode("utf-8")
            key_entries += (at + len(keys)).to_bytes(w, "little") + len(raw).to_bytes(2, "little")
            keys += raw
    at += len(keys)
    entries, bodies = bytearray(), bytearray()
    for _, v in items:
        t, body = _encode(v, pick)
        if _inline(t, large):
            entries += bytes([t]) + body.ljust(w, b"\0")
        else:
            entries += bytes([t]) + (at + len(bodies)).to_bytes(w, "little")
            bodies += body
    size = at + len(bodies)
    if not large and size > 0xFFFF:
        return _container(value, True, pick)
    head = count.to_bytes(w, "little") + size.to_bytes(w, "little")
    t = (LARGE_OBJ if large else SMALL_OBJ) if obj else (LARGE_ARR if large else SMALL_ARR)
    return t, head + bytes(key_entries) + bytes(entries) + bytes(keys) + bytes(bodies)


def _encode(value, pick: Callable[[object], bool]) -> tuple[int, bytes]:
    if isinstance(value, (dict, list)):
        return _container(value, pick(value), pick)
    return _scalar(value)


def document(value, large: Callable[[object], bool] = lambda v: False) -> bytes:
    """The binary JSON document of ``value`` (type byte, then the value)."""
    t, body = _encode(value, large)
    return bytes([t]) + body

"""Building blocks shared by the codecs: MySQL packed integers, 6-byte table ids, windows.

Packed ("length-encoded") integer, as MySQL writes it (``net_field_length``):

=========  ==========================================
first byte meaning
=========  ==========================================
< 251      the value itself
251        NULL (only inside row images)
252        the value is the next 2 bytes (LE)
253        the value is the next 3 bytes (LE)
254        the value is the next 8 bytes (LE)
=========  ==========================================
"""

from __future__ import annotations

from construct import BytesInteger, Construct, SizeofError, stream_read, stream_write

from .packed import pack_int

Int48ul = BytesInteger(6, swapped=True)
Int56ul = BytesInteger(7, swapped=True)


class PackedIntAdapter(Construct):
    """MySQL length-encoded integer (1, 3, 4 or 9 bytes)."""

    def _parse(self, stream, context, path):
        first = stream_read(stream, 1, path)[0]
        if first < 251:
            return first
        if first == 252:
            return int.from_bytes(stream_read(stream, 2, path), "little")
        if first == 253:
            return int.from_bytes(stream_read(stream, 3, path), "little")
        if first == 254:
            return int.from_bytes(stream_read(stream, 8, path), "little")
        from construct import ExplicitError

        raise ExplicitError("packed integer: NULL marker 251 where a length is expected", path=path)

    def _build(self, obj, stream, context, path):
        data = pack_int(obj)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("packed integers have a variable size", path=path)


PackedInt = PackedIntAdapter()




class PackedIntError(ValueError, IndexError):
    """A packed integer that runs past its buffer or starts with 255 (no such form).
    A ValueError like every other "these bytes do not follow the layout" of the pure readers
    (an IndexError too, for callers written before)."""


_WIDTH = {252: 2, 253: 3, 254: 8}


def read_packed(buf: bytes, pos: int) -> tuple[int | None, int]:
    """Pure-Python packed integer read: (value or None for 251, new position)."""
    if pos >= len(buf):
        raise PackedIntError("packed integer: no bytes left")
    first = buf[pos]
    if first < 251:
        return first, pos + 1
    if first == 251:
        return None, pos + 1
    width = _WIDTH.get(first)
    if width is None:
        raise PackedIntError(f"packed integer: no form starts with {first:#x}")
    if pos + 1 + width > len(buf):
        raise PackedIntError("packed integer runs past the end")
    return int.from_bytes(buf[pos + 1:pos + 1 + width], "little"), pos + 1 + width


def read_length(buf: bytes, pos: int) -> tuple[int, int]:
    """A packed integer that is a length or a count: the NULL form (251) is an error here."""
    value, end = read_packed(buf, pos)
    if value is None:
        raise PackedIntError("packed integer: NULL (251) where a length is expected")
    return value, end


def uuid_text(raw: bytes) -> str:
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

"""MySQL's packed (length-encoded) integer, written: pure and construct-free, so that ``pull``'s
client can build its handshake without importing the codecs' Construct declarations
(``codecs.common`` reads them with ``PackedInt``)."""

from __future__ import annotations


def pack_int(value: int) -> bytes:
    """Encode ``value`` as a MySQL packed integer (minimal form, as the servers write it)."""
    if value < 251:
        return bytes([value])
    if value < 1 << 16:
        return b"\xfc" + value.to_bytes(2, "little")
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + value.to_bytes(8, "little")


__all__ = ["pack_int"]

"""Fast parsers for the hottest bodies (rows, table maps, GTIDs, Xid, Annotate_rows, Query).

They produce exactly what the Construct declarations produce (``tests/test_fast.py`` checks
it on every fixture and corpus event); the declarations stay the single description of each
layout and the only builders. Any irregularity makes a fast parser raise, and the caller then
falls back to Construct, which reports the typed error with its field path.
"""

from __future__ import annotations

import struct

from construct import Container

from .rows import AFTER_BITMAP, V2_ROWS

_U16 = struct.Struct("<H").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U64 = struct.Struct("<Q").unpack_from
_GTID = struct.Struct("<QIB").unpack_from
_QUERY = struct.Struct("<IIBHH").unpack_from


class Irregular(Exception):
    """The fast path does not handle this body; use Construct."""


_PACKED_WIDTH = {252: 2, 253: 3, 254: 8}


def _need(b: bytes, end: int) -> None:
    """Every fixed-size read checks its bytes first: a short body is Irregular, never an
    IndexError or struct.error from deep inside."""
    if end > len(b):
        raise Irregular("short")


def _packed(b: bytes, p: int) -> tuple[int, int]:
    _need(b, p + 1)
    first = b[p]
    if first < 251:
        return first, p + 1
    width = _PACKED_WIDTH.get(first)
    if width is None:
        raise Irregular("NULL packed integer")
    _need(b, p + 1 + width)
    return int.from_bytes(b[p + 1:p + 1 + width], "little"), p + 1 + width


def _table_id(b: bytes, phl: int | None) -> tuple[int, int]:
    if phl == 6:
        _need(b, 4)
        return _U32(b, 0)[0], 4
    _need(b, 6)
    return int.from_bytes(b[0:6], "little"), 6


def table_id(b: bytes, phl: int | None) -> int:
    """The table id a table map's or rows event's body starts with (``Irregular``: too short)."""
    return _table_id(b, phl)[0]


def rows(b: bytes, type_code: int, phl: int | None) -> Container:
    table_id, p = _table_id(b, phl)
    _need(b, p + 2)
    flags = _U16(b, p)[0]
    p += 2
    len_extra = None
    extra = b""
    if type_code in V2_ROWS:
        _need(b, p + 2)
        len_extra = _U16(b, p)[0]
        p += 2
        n = max(0, len_extra - 2)
        extra = b[p:p + n]
        p += n
    width, p = _packed(b, p)
    nb = (width + 7) // 8
    before = b[p:p + nb]
    p += nb
    after = None
    if type_code in AFTER_BITMAP:
        after = b[p:p + nb]
        p += nb
    if p > len(b):
        raise Irregular("short")
    return Container(table_id=table_id, flags=flags, len_extra_data=len_extra, extra_data=extra, width=width,
                     columns_before_image=before, columns_after_image=after, rows=b[p:])


def table_map(b: bytes, phl: int | None) -> Container:
    table_id, p = _table_id(b, phl)
    _need(b, p + 3)
    flags = _U16(b, p)[0]
    p += 2
    len_db = b[p]
    db = b[p + 1:p + 1 + len_db]
    p += 1 + len_db
    _need(b, p + 2)
    if b[p] != 0:
        raise Irregular("no NUL")
    len_table = b[p + 1]
    table = b[p + 2:p + 2 + len_table]
    p += 2 + len_table
    _need(b, p + 1)
    if b[p] != 0:
        raise Irregular("no NUL")
    p += 1
    count, p = _packed(b, p)
    types = b[p:p + count]
    p += count
    pos = p
    if p > len(b):
        raise Irregular("short")
    part = None
    if p < len(b):
        len_meta, p = _packed(b, p)
        meta = b[p:p + len_meta]
        p += len_meta
        nulls = b[p:p + (count + 7) // 8]
        p += (count + 7) // 8
        if p > len(b):
            raise Irregular("short")
        part = Container(len_metadata=len_meta, metadata=meta, null_bitmap=nulls, optional_metadata=b[p:])
    return Container(table_id=table_id, flags=flags, len_db=len_db, db=db, len_table=len_table, table=table,
                     column_count=count, column_types=types, _pos=pos, metadata_part=part)


def mariadb_gtid(b: bytes) -> Container:
    _need(b, 13)
    seq_no, domain_id, flags2 = _GTID(b, 0)
    p = 13
    commit_id = None
    if flags2 & 2:
        _need(b, p + 8)
        commit_id = _U64(b, p)[0]
        p += 8
    if flags2 & (64 | 128):
        raise Irregular("XA")
    if p > len(b):
        raise Irregular("short")
    return Container(seq_no=seq_no, domain_id=domain_id, flags2=flags2, commit_id=commit_id, xid=None, extra=b[p:])


def xid(b: bytes) -> Container:
    if len(b) != 8:
        raise Irregular("size")
    return Container(xid=_U64(b, 0)[0])


def annotate(b: bytes) -> Container:
    return Container(query=b)


def query(b: bytes, type_code: int, phl: int | None) -> Container:
    if type_code != 2 or phl != 13:
        raise Irregular("not a plain v4 Query")
    _need(b, 13)
    thread_id, exec_time, len_db, error_code, len_sv = _QUERY(b, 0)
    p = 13
    sv = b[p:p + len_sv]
    p += len_sv
    db = b[p:p + len_db]
    p += len_db
    if p >= len(b) or b[p] != 0:
        raise Irregular("no NUL")
    return Container(thread_id=thread_id, exec_time=exec_time, len_db=len_db, error_code=error_code,
                     len_status_vars=len_sv, load=None, post_header_extra=b"", status_vars=sv, db=db,
                     query=b[p + 1:])


FAST = {
    19: lambda b, t, phl: table_map(b, phl),
    16: lambda b, t, phl: xid(b),
    162: lambda b, t, phl: mariadb_gtid(b),
    160: lambda b, t, phl: annotate(b),
    2: query,
}
for _code in (20, 21, 22, 23, 24, 25, 30, 31, 32, 39):
    FAST[_code] = rows

"""MariaDB's GTID index files (11.4+, ``binlog_gtid_index=ON``): ``<binlog>.idx`` beside each
binlog, a B+-tree of (binlog offset, GTID state) records the server uses to start a replica's
dump without scanning the binlog. Read here without the binlog: which GTIDs a file holds from
where, and where to start reading for a GTID.

Layout as MariaDB 11.8 writes it (``sql/gtid_index.{h,cc}``; checked against the files in
``fixtures/samples/mariadb-11.8``), all integers little-endian, the file a whole number of pages::

    file header (first page only)
      0   4   magic           fe fe 0c 01
      4   1   major version   1 (a newer major: unreadable, say so)
      5   1   minor version
      6   2   unused
      8   4   page_size       (binlog_gtid_index_page_size, 64 and up)
    every page
      0   1   flags           1 LEAF, 2 CONT (continues the node of the page before), 4 LAST
                              (the node's last page), 8 ROOT (the root: written last; no root
                              page = the index is incomplete: the binlog is still being written,
                              or the server stopped before closing it)
      1   3   unused
      ... records (leaf) / child pointers and records (interior)
      -4  4   CRC32 of the page's bytes before it
    leaf record
      0   4   len_gtids + 1   0: no more records in this node
      4   4   offset          binlog offset the GTID state holds at
      8   16n gtids           domain_id 4, server_id 4, seq_no 8: the first record of a node
                              holds the whole state, the next ones only the pairs that changed
    A field that does not fit in what is left of a page continues at the start of the node's
    next page (the writer reserves room field by field).

Only leaf pages are needed to list the records (in file order they are in offset order);
interior pages are checked (CRC, flags) but not walked. An empty file is the index of the binlog
being written (the server fills it when the binlog is closed).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from ..errors import GtidIndexError

MAGIC = b"\xfe\xfe\x0c\x01"
LEN_FILE_HEADER, LEN_PAGE_HEADER, LEN_CHECKSUM = 12, 4, 4
LEAF, CONT, LAST, ROOT = 1, 2, 4, 8
MAJOR_VERSION = 1
_U32 = struct.Struct("<I")
_GTID = struct.Struct("<IIQ")


def is_gtid_index(head: bytes) -> bool:
    """Whether a file starting with ``head`` (4 bytes or more) is a MariaDB GTID index."""
    return head[:4] == MAGIC


@dataclass(frozen=True)
class IndexRecord:
    """The binlog's GTID state at ``offset``: the last GTID per (domain, server id)."""

    offset: int
    state: tuple[tuple[int, int, int], ...]  # (domain_id, server_id, seq_no), sorted

    @property
    def gtids(self) -> list[str]:
        return [f"{d}-{s}-{n}" for d, s, n in self.state]


@dataclass(frozen=True)
class GtidIndex:
    version: tuple[int, int]
    page_size: int
    pages: int
    complete: bool             # the root page is there (the server closed the index)
    records: tuple[IndexRecord, ...]

    def start_for(self, domain_id: int, seq_no: int) -> int | None:
        """Where to start reading the binlog for GTID ``domain_id-*-seq_no``: the offset of
        the last record whose state has not reached it yet (None: the index starts after it,
        or has no record)."""
        best = None
        for r in self.records:
            reached = any(d == domain_id and n >= seq_no for d, _s, n in r.state)
            if reached:
                break
            best = r.offset
        return best


def read_gtid_index(data: bytes) -> GtidIndex:
    """The index in ``data`` (a whole ``.idx`` file); ``GtidIndexError`` with the offset of
    what is wrong."""
    if not data:
        return GtidIndex((0, 0), 0, 0, False, ())
    if len(data) < LEN_FILE_HEADER + LEN_PAGE_HEADER or not is_gtid_index(data):
        raise GtidIndexError(f"not a GTID index: starts with {bytes(data[:4])!r}, expected {MAGIC!r}", offset=0)
    major, minor = data[4], data[5]
    if major != MAJOR_VERSION:
        raise GtidIndexError(f"GTID index format version {major}.{minor}: only {MAJOR_VERSION}.x is known", offset=4)
    (page_size,) = _U32.unpack_from(data, 8)
    if page_size < 32 or page_size & (page_size - 1) or page_size > 1 << 24:
        raise GtidIndexError(f"GTID index page size {page_size}: not a power of two from 32 to 16 MiB", offset=8)
    if len(data) % page_size:
        raise GtidIndexError(f"GTID index of {len(data)} bytes: not a whole number of {page_size}-byte pages "
                             "(torn by a crash?)", offset=len(data) - len(data) % page_size)
    pages = len(data) // page_size
    node: list[tuple[int, int]] = []  # (start, end) of the payloads of the leaf node being read
    records: list[IndexRecord] = []
    complete = False
    for i in range(pages):
        at = i * page_size
        page = data[at:at + page_size]
        (crc,) = _U32.unpack_from(page, page_size - LEN_CHECKSUM)
        if zlib.crc32(page[:-LEN_CHECKSUM]) != crc:
            raise GtidIndexError(f"GTID index page {i} fails its CRC32 check", offset=at)
        head = LEN_FILE_HEADER if i == 0 else 0
        flags = page[head]
        complete = bool(flags & ROOT)
        if not flags & CONT and node:
            raise GtidIndexError(f"GTID index page {i} starts a node before the previous one ended", offset=at)
        if flags & CONT and not node and flags & LEAF:
            raise GtidIndexError(f"GTID index page {i} continues a node that never started", offset=at)
        if flags & LEAF:
            node.append((at + head + LEN_PAGE_HEADER, at + page_size - LEN_CHECKSUM))
            if flags & LAST:
                records += _leaf(data, node)
                node = []
    if node:
        raise GtidIndexError("GTID index ends inside a node (torn by a crash?)", offset=len(data))
    return GtidIndex((major, minor), page_size, pages, complete, tuple(records))


def _leaf(data: bytes, spans: list[tuple[int, int]]) -> list[IndexRecord]:
    """The records of one leaf node spread over ``spans`` (each page's payload)."""
    k, (p, end) = 0, spans[0]

    def take(n: int) -> int | None:
        """The position of the next ``n`` bytes, moving to the next page when they do not fit."""
        nonlocal k, p, end
        while p + n > end:
            k += 1
            if k >= len(spans):
                return None
            p, end = spans[k]
        at = p
        p += n
        return at

    out: list[IndexRecord] = []
    state: dict[tuple[int, int], int] = {}
    while True:
        at = take(8)
        if at is None:
            return out
        count, offset = _U32.unpack_from(data, at)[0], _U32.unpack_from(data, at + 4)[0]
        if count == 0:
            if k + 1 >= len(spans):
                return out
            k += 1  # the rest of this page unused: the node goes on on the next one
            p, end = spans[k]
            continue
        for _ in range(count - 1):
            g = take(16)
            if g is None:
                raise GtidIndexError(f"GTID index record at {at} runs past its node ({count - 1} GTIDs)", offset=at)
            d, s, n = _GTID.unpack_from(data, g)
            state[(d, s)] = n
        out.append(IndexRecord(offset, tuple(sorted((d, s, n) for (d, s), n in state.items()))))


def index_summary(path: str) -> dict:
    """What ``verify`` and ``gtids`` say of a GTID index file (the one convenience function that
    opens one): its format, records, first and last state, and the problem when it does not read."""
    with open(path, "rb") as fh:
        data = fh.read()
    doc: dict = {"file": str(path), "kind": "mariadb-gtid-index", "size": len(data), "problem": None}
    try:
        ix = read_gtid_index(data)
    except GtidIndexError as exc:
        exc.with_context(file=str(path))
        doc["problem"] = {"kind": type(exc).__name__, "offset": exc.offset, "message": exc.message}
        return doc
    doc.update(version=f"{ix.version[0]}.{ix.version[1]}", page_size=ix.page_size, pages=ix.pages,
               complete=ix.complete, records=len(ix.records),
               first={"offset": ix.records[0].offset, "gtids": ix.records[0].gtids} if ix.records else None,
               last={"offset": ix.records[-1].offset, "gtids": ix.records[-1].gtids} if ix.records else None)
    return doc


def summary_line(doc: dict) -> str:
    """One line of ``index_summary``: what it holds, or the problem."""
    p = doc["problem"]
    if p is not None:
        return f"offset {p['offset']}: {p['message']}"
    if not doc["size"]:
        return "MariaDB GTID index, empty (the binlog being written: the server fills it at rotation)"
    last = doc["last"]
    text = (f"MariaDB GTID index v{doc['version']}: {doc['records']} records in {doc['pages']} pages of "
            f"{doc['page_size']} bytes")
    if last is not None:
        text += f"; at {last['offset']}: {','.join(last['gtids']) or '(empty)'}"
    if not doc["complete"]:
        text += "; incomplete (no root page: still being written, or the server stopped before closing it)"
    return text


def locate(binlogs: list[str], domain_id: int, seq_no: int) -> tuple[str, int] | None:
    """Where GTID ``domain_id-*-seq_no`` is, from the GTID index files beside ``binlogs`` (in
    order) alone: (binlog, offset to start reading from), at or before the GTID's transaction
    (exactly its start when the index has a record per GTID, binlog_gtid_index_span_min); None
    when the indexes do not place it (no ``.idx``, a damaged one, or the GTID not in these
    files). A file holds the GTID when its first record has not reached it and its last record,
    or the next file's first, has. The binlogs are not read."""
    def has(r: IndexRecord) -> bool:
        return any(d == domain_id and n >= seq_no for d, _s, n in r.state)

    indexes: list[GtidIndex | None] = []
    for path in binlogs:
        try:
            with open(f"{path}.idx", "rb") as fh:
                ix: GtidIndex | None = read_gtid_index(fh.read())
        except (OSError, GtidIndexError):
            ix = None
        indexes.append(ix if ix is not None and ix.records else None)
    for k, (path, ix) in enumerate(zip(binlogs, indexes)):
        if ix is None or has(ix.records[0]):
            continue
        nxt = indexes[k + 1] if k + 1 < len(indexes) else None
        if has(ix.records[-1]) or (nxt is not None and has(nxt.records[0])):
            at = ix.start_for(domain_id, seq_no)
            return (path, at) if at is not None else None
    return None


def index_line(doc: dict) -> str:
    """``FILE  summary_line``."""
    return f"{doc['file']}  {summary_line(doc)}"


def locate_text(binlogs: list[str], gtid: str) -> dict:
    """``locate`` of a GTID given as text (``binlogkit gtids --locate``): gtid, file, offset
    (None, None when not placed); ``UsageError`` when it is not DOMAIN-SERVER-SEQ."""
    from ..errors import UsageError

    try:
        d, _s, n = (int(x) for x in gtid.split("-"))
    except ValueError:
        raise UsageError(f"--locate {gtid!r}: a MariaDB GTID is DOMAIN-SERVER-SEQ") from None
    hit = locate(binlogs, d, n)
    return {"gtid": gtid, "file": hit and hit[0], "offset": hit and hit[1]}


def locate_line(doc: dict) -> str:
    if doc["file"] is None:
        return f"{doc['gtid']}: not placed by the GTID index files beside these binlogs"
    return f"{doc['gtid']}: {doc['file']}, read from offset {doc['offset']} (GTID index)"

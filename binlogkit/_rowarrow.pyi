"""The C accelerator's interface (``binlogkit/_rowarrow.c``; planned by ``binlogkit/rowvalues/arrowcols.py``,
used by ``binlogkit/export/dataset.py``; ``json_objects`` by ``binlogkit/spark/tables.py``)."""

from typing import Sequence

INT: int
F32: int
F64: int
DEC: int
YEAR: int
DATE: int
DT2: int
TS2: int
TIME2: int
DT: int
TS: int
TIME: int
UTF8: int
ASCII: int
BIN: int
ENUM: int
SET: int
BIT: int
GEOM: int
LATIN1: int

class Plan:
    """How each column of a table map goes to Arrow: (kind, p1, p2, p3) per column."""

    def __init__(self, columns: Sequence[tuple[int, int, int, int]], /) -> None: ...
    @property
    def widths(self) -> bytes:
        """Output bytes per value of each column (0: offsets + data)."""
        ...

class Buffer:
    """Bytes a Builder handed out (``finish``): a read-only buffer (pa.py_buffer wraps it)."""

    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

class Builder:
    """The Arrow buffers of the before and after columns of one table layout."""

    def __init__(self, widths: bytes, /) -> None: ...
    @property
    def rows(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def partial(self) -> int:
        """Rows held whose after image is partial (``partial_rows``)."""
        ...
    def partial_rows(self) -> bytes:
        """One byte per row held (until ``finish``): 1 when the row's after image (a write's or an
        update's) lacks columns of the table (binlog_row_image MINIMAL / NOBLOB, generated columns
        left out; the columns-present bitmap against the table's columns), else 0."""
        ...
    def add(self, plan: Plan, images: bytes, kind: int, before_bitmap: bytes, after_bitmap: bytes,
            keep: bool = True, /) -> int:
        """Rows appended, or -1 (nothing appended: the event is the Python path's); kind 0 write,
        1 update, 2 delete; keep=False only counts."""
        ...
    def finish(self) -> tuple[int, list[tuple[Buffer | None, int, Buffer | None, Buffer | None]]]:
        """(rows, [(validity or None, null count, offsets or None, data or None), ...]): before
        columns, then after columns, as read-only ``Buffer`` values (handed over, not copied);
        the builder starts empty again."""
        ...

def repeat(counts: bytes, values: list, kind: str, /) -> tuple[bytes | None, int, bytes | None, bytes]:
    """Each value repeated its count (int64 little-endian counts) as an Arrow column's buffers:
    (validity or None, null count, offsets or None, data); kind "I" uint32, "q" int64, "r" int64
    counting up from the value, "s" text (str as UTF-8, or bytes); None values are nulls."""
    ...

def take_plain(buf: bytearray, rel: int, filled: int, at: int, crc_on: bool, crc: object, room: int,
               /) -> tuple[int, int, int, int, int, int, int, int, bytes | None]:
    """The framing loop's taker for export (``export/changes.py``): the Table_map and v1 / v2 rows
    events framed from ``buf[rel:filled]`` (the stream from offset ``at``; CRC32 by ``crc``,
    at most ``room`` bytes), stopping before any other: (rel, at, events, first ts or -1, last
    non-zero ts or -1, last ts, last type code, last offset, their bytes or None)."""
    ...

def replay_run(data: bytes, p: int, header_len: int, checksum_len: int, phl_table_map: int, phl_rows_v1: int,
               phl_rows_v2: int, flavor: object, known: dict, tables: dict, targets: dict, consts: tuple,
               at: int, row_index: int, state: list, /) -> tuple[int, int, int, list | None]:
    """A run's committed events from byte ``p`` into their targets' builders (``export/changes.py``'s
    ``_Walk._replay_run``): (p, row_index, why, target); why 0 done, 1 stopped before the event at
    p (the Python path's), 2 stopped after an event that reached a flush limit."""
    ...

def json_objects(n: int, columns: list[tuple], /) -> tuple[bytes | None, int, Buffer, Buffer]:
    """The long form's images (``spark/tables.py``'s ``long_batch``): per row the JSON object of the
    columns' values as ``json.dumps(..., sort_keys=True)`` writes the image (keys in the order
    given), null where every value is null: (validity or None, null count, int32 offsets, data).
    A column: (key prefix such as b'"id": ', kind, array offset, validity or None, values, offsets
    or None[, units a second (T M) or scale (N)]); kinds b h i q / B H I Q integers, ? bool, f d
    floats, s S text, y Y binary (base64), t JSON texts as they are, D date32, T M timestamp (UTC,
    naive), u duration[us], N decimal128. ValueError on a buffer too short or a value that does
    not decode; OverflowError past 2 GiB of text."""
    ...

"""What the data source's four tables share (``events.py``, ``transactions.py``, ``changes.py``,
``summaries.py``): the tables' Arrow schemas, the ``Query`` that travels to executors, the
trace of files opened, a row batcher and the frames of a range. Light to import (pyarrow is
imported when a schema or batch is made): the planning worker and ``register()``'s check
import this much."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .files import FileTask

from ..constants import GTID_TYPES

BATCH_ROWS = 8192
# ``changes``' default: its batches are the export writer's row groups (flushed at 8 MB of rows
# events whatever the count, so memory stays bounded), and each batch handed to the JVM costs
# a fixed part on both sides: 65,536 rows take 0.5-0.7 s less CPU than 8192 over the 4.2
# million row changes of the 1 GB bench binlog (Python workers and JVM together)
CHANGES_BATCH_ROWS = 65536


def _pa():
    import pyarrow as pa

    return pa


def schema(table: str):
    """The Arrow schema of ``table`` (long-form ``changes``; ``typed_schema`` for one table's)."""
    pa = _pa()
    i64, s, b = pa.int64(), pa.string(), pa.bool_()
    ts = pa.timestamp("us", tz="UTC")
    cols: dict[str, list] = {
        "events": [("file", s), ("offset", i64), ("end_offset", i64), ("type", s), ("type_code", pa.int32()),
                   ("name", s), ("timestamp", i64), ("server_id", i64), ("event_size", i64), ("log_pos", i64),
                   ("flags", pa.int32()), ("checksum_ok", b), ("payload_offset", i64), ("inner_offset", i64),
                   ("gtid", s), ("fields", s)],
        "transactions": [("gtid", s), ("kind", s), ("start_file", s), ("start_offset", i64),
                         ("first_timestamp", i64), ("server_id", i64), ("end_file", s), ("end_offset", i64),
                         ("last_timestamp", i64), ("events", i64), ("bytes", i64), ("complete", b),
                         ("terminator", s), ("source_file", s), ("source_start", i64), ("source_end", i64),
                         ("standalone", b), ("resume_source_file", s), ("resume_source_pos", i64), ("alter", s),
                         ("alter_id", pa.decimal128(20, 0)), ("repeats", s)],   # a MariaDB seq_no: uint64
        "changes": [("db", s), ("table", s), ("op", s), ("gtid", s), ("server_id", i64), ("commit_time", ts),
                    ("file", s), ("offset", i64), ("row_index", i64), ("schema_version", s), ("before", s),
                    ("after", s)],
        "summaries": [("file", s), ("directory", s), ("base", s), ("number", i64), ("size", i64), ("relay", b),
                      ("server_version", s), ("flavor", s), ("events", i64), ("end_offset", i64),
                      ("first_timestamp", i64), ("last_timestamp", i64), ("transactions", i64),
                      ("bad_checksums", i64), ("server_ids", pa.list_(i64)), ("previous_gtids", s),
                      ("gtid_list", s), ("problem", s), ("summary", s)],
    }
    if table not in cols:
        raise ValueError(f"table {table!r}: one of events, transactions, changes, summaries")
    return pa.schema(cols[table])


@dataclass(frozen=True)
class Query:
    """What one read asks, as plain values that travel to executors: the table, the filters the
    rows must pass (ANDed; Spark evaluates its own filters again), the batch size and where to
    note each file opened (``trace``: a local file, for the pushdown proof)."""

    table: str
    batch_rows: int = BATCH_ROWS
    min_timestamp: float | None = None          # rows at or after (seconds); prunes files
    gtids: frozenset[str] | None = None         # rows of these GTIDs only; prunes files
    types: frozenset[int] | None = None         # events: these type codes only
    tables: tuple[str, ...] = ()                # changes: db.table patterns
    changes_table: str | None = None            # changes: one table's typed columns
    fields: bool = True                         # events: decode bodies (``name``, ``fields``, payloads' events)
    trace: str | None = None
    typed: Any = field(default=None, repr=False)  # changes_table's Arrow schema (made on the driver)


def note_open(q: Query, task: FileTask) -> None:
    """One line per file whose events are read (O_APPEND: whole lines from many processes)."""
    if q.trace:
        fd = os.open(q.trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{q.table}\t{task.name}\n".encode())
        finally:
            os.close(fd)


class _Batcher:
    """Column lists of one batch; ``add`` a row, ``full`` when ``n`` rows are in."""

    def __init__(self, sch, n: int) -> None:
        self.schema, self.n = sch, n
        self.names = sch.names
        self.cols: list[list] = [[] for _ in self.names]

    def add(self, row: tuple) -> bool:
        for c, v in zip(self.cols, row):
            c.append(v)
        return len(self.cols[0]) >= self.n

    def take(self):
        pa = _pa()
        b = pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(self.cols, self.schema)],
                                       schema=self.schema)
        self.cols = [[] for _ in self.names]
        return b

    def __len__(self) -> int:
        return len(self.cols[0])


def _rows_to_batches(rows: Iterator[tuple], sch, n: int) -> Iterator[Any]:
    b = _Batcher(sch, n)
    for row in rows:
        if b.add(row):
            yield b.take()
    if len(b):
        yield b.take()



def _range_frames(task: FileTask, inp, want, taker=None) -> Iterator[Any]:
    """The frames (bare tuples) of a range of whole transactions: the head, then from the event
    before ``task.start`` (``task.lead``: what the grouper needs to know before the range; the
    reading layer seeks there) to the first GTID event at or after ``task.stop`` (a whole file:
    all of it). ``taker``: the framing loop's (``transactions.Grouper``'s C run)."""
    hi = task.stop
    frames = inp.frames(want=want, records=False, start=task.lead if task.lead is not None else task.start,
                        taker=taker)
    try:
        for f in frames:
            if hi is not None and f[0] >= hi and f[1] in GTID_TYPES:
                return
            yield f
    finally:
        frames.close()


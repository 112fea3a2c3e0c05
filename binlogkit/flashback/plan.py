"""The plan of a flashback: which transactions of the inputs to undo (pure over the files:
they are only read).

Transactions come from the grouping scan (``transactions.group_files``: no row image is
decoded). A range is one of:

* positions: ``start_position`` applies to the first file, ``stop_position`` to the last (as
  ``mysqlbinlog``); a transaction is in when it starts at or after the start and ends at or
  before the stop;
* date-times: a transaction is in when its first event's time is at or after the start and
  before the stop;
* GTIDs: a transaction is in when its GTID is in the set.

Transactions that are one statement (DDL; a statement-format change without BEGIN) are kept
apart in ``statements``: they cannot be undone from row images. A range that cuts a
transaction in two is refused (the message names the transaction and the
positions that would take it whole), and so are incomplete transactions and transactions that
continue into another file. The plan keeps three integers per transaction (file, start, end) in
arrays: 24 bytes a transaction, whatever the input size.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterable

from ..errors import WriteRefused

if TYPE_CHECKING:
    from ..reading.source import Input

# what a statement refusal adds: the server setting that avoids statement-format DML
ROW_FORMAT = ("statement-format DML is what a server with binlog_format=STATEMENT or MIXED logs; with "
              "binlog_format=ROW it logs row images, which can be undone")


def nothing(filtered: bool, statements: int) -> str:
    """The refusal when the range gives no row change to undo: what left nothing, as it is."""
    if filtered:
        what = "the filters (--database, --table) leave no row change to undo in the range"
        if statements:
            what += f" ({statements} statement(s) left out by --skip-statements)"
        return what + ": nothing written"
    if statements:
        return (f"the range holds only statements ({statements} left out by --skip-statements) and no row change "
                f"to undo: nothing written; {ROW_FORMAT}")
    return "the range holds no row change to undo: nothing written"


STATEMENTS = frozenset({"DDL", "STATEMENT"})   # terminators of one-statement transactions


class FlashbackRefused(WriteRefused):
    """What cannot be undone from row images, or a range that cannot be taken whole: nothing
    was written."""


@dataclass
class Plan:
    files: list[str]
    file_index: array = field(default_factory=lambda: array("H"))
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    first_gtid: str | None = None
    last_gtid: str | None = None
    # transactions of the range that are one statement (DDL, statement-format DML): never
    # undone; named in the refusal, or left out with --skip-statements
    statements: list[tuple[str, int, int, str | None]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.starts)

    def add(self, file_no: int, start: int, end: int, gtid: str | None) -> None:
        self.file_index.append(file_no)
        self.starts.append(start)
        self.ends.append(end)
        if self.first_gtid is None:
            self.first_gtid = gtid
        self.last_gtid = gtid

    def reversed(self) -> Iterable[tuple[str, int, int]]:
        for i in range(len(self.starts) - 1, -1, -1):
            yield self.files[self.file_index[i]], self.starts[i], self.ends[i]


def _ts(dt: datetime | None) -> float | None:
    return None if dt is None else dt.timestamp()


def select(paths: Iterable[Input | str | os.PathLike], *, start_position: int | None = None,
           stop_position: int | None = None, start_datetime: datetime | None = None,
           stop_datetime: datetime | None = None, gtids: Callable[[str], bool] | None = None) -> Plan:
    """The transactions to undo, in binlog order, of ``paths`` (``Input`` values: their keys
    read encrypted inputs). Raises ``FlashbackRefused`` for a cut or incomplete transaction in
    the range, or an empty range."""
    from ..reading.source import inputs
    from ..transactions import Kind, group_files

    sources = inputs(paths)
    files = [i.name for i in sources]
    if len(files) > 0xFFFF:
        raise FlashbackRefused("more than 65535 input files")
    plan = Plan(files)
    number = {f: i for i, f in enumerate(files)}
    last = len(files) - 1
    t0, t1 = _ts(start_datetime), _ts(stop_datetime)
    incomplete: FlashbackRefused | None = None
    for t in group_files(sources):
        if t.kind == Kind.CONTINUATION:
            continue
        i = number.get(t.start_file, 0)
        name = t.gtid or f"the transaction at {os.path.basename(t.start_file)}:{t.start_offset}"
        end = t.end_offset if t.end_offset is not None else t.start_offset
        lo = start_position if start_position is not None and i == 0 else None
        hi = stop_position if stop_position is not None and i == last else None
        if hi is not None and t.start_offset >= hi:
            break                     # past the stop: the rest of the last file is not read
        whole = f"{os.path.basename(t.start_file)} {t.start_offset}..{end}"
        if lo is not None and t.start_offset < lo < end:
            raise FlashbackRefused(f"--start-position {lo} cuts {name} ({whole}) in two: start at "
                                   f"{t.start_offset} to undo it, or at {end} to leave it", file=t.start_file)
        if hi is not None and t.start_offset < hi < end:
            raise FlashbackRefused(f"--stop-position {hi} cuts {name} ({whole}) in two: stop at "
                                   f"{end} to undo it, or at {t.start_offset} to leave it", file=t.start_file)
        if t0 is not None and t.first_timestamp < t0 <= t.last_timestamp:
            raise FlashbackRefused(f"--start-datetime cuts {name} ({whole}) in two: its events span "
                                   f"{datetime.utcfromtimestamp(t.first_timestamp)} .. "
                                   f"{datetime.utcfromtimestamp(t.last_timestamp)} UTC", file=t.start_file)
        if t1 is not None and t.first_timestamp < t1 <= t.last_timestamp:
            raise FlashbackRefused(f"--stop-datetime cuts {name} ({whole}) in two: its events span "
                                   f"{datetime.utcfromtimestamp(t.first_timestamp)} .. "
                                   f"{datetime.utcfromtimestamp(t.last_timestamp)} UTC", file=t.start_file)
        if lo is not None and t.start_offset < lo:
            continue
        if hi is not None and end > hi:
            continue
        if t0 is not None and t.first_timestamp < t0:
            continue
        if t1 is not None and t.first_timestamp >= t1:
            continue
        if gtids is not None and (t.gtid is None or not gtids(t.gtid)):
            continue
        if not t.complete:   # refused after the scan: damage that made it incomplete is raised first
            incomplete = incomplete or FlashbackRefused(
                f"{name} ({whole}) is incomplete (no terminating event): it was never committed and cannot "
                "be undone", file=t.start_file, offset=t.start_offset)
            continue
        if t.alter in ("START", "ROLLBACK"):
            continue  # MariaDB two-phase ALTER: the schema changes at its COMMIT ALTER (a statement,
            # refused below); a START ALTER alone, or one a ROLLBACK ALTER closed, changed nothing
        if t.terminator in STATEMENTS:
            plan.statements.append((t.start_file, t.start_offset, end, t.gtid))
            continue
        if t.end_file != t.start_file:
            raise FlashbackRefused(f"{name} starts in {t.start_file} and ends in {t.end_file}: a transaction "
                                   "across files is not supported", file=t.start_file, offset=t.start_offset)
        plan.add(i, t.start_offset, end, t.gtid)
    if incomplete is not None:
        raise incomplete
    if not len(plan) and not plan.statements:
        raise FlashbackRefused("no complete transaction in the range: nothing to undo")
    return plan

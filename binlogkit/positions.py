"""Source positions as 64-bit numbers: the one place that unwraps ``end_log_pos``.

An event header's ``end_log_pos`` is 32 bits. Servers rotate binlogs only between transactions,
so one transaction larger than 4 GiB makes a file larger than 4 GiB, and past that point every
``end_log_pos`` has wrapped. In a binlog the true position is the file offset (binlogkit reads
offsets as 64-bit numbers). In a relay log it is the source's offset, which the relay log does
not hold directly; ``SourceClock`` recovers it:

* a Rotate from the source sets the file and the position (its position field is 64-bit);
* each later event from the source ends at the smallest position that is at least the previous
  end plus the event's size and equals ``end_log_pos`` modulo 2**32 — events may be missing
  in between (a source filters some out: annotations, events before a GTID start), never
  reordered.

Limit: a gap of more than 4 GiB between two events the source sent (a source that skipped a
whole > 4 GiB transaction) cannot be told from the 32-bit field; neither can the position of
events received before any source Rotate when that position is already past 4 GiB.
"""

from __future__ import annotations

from .constants import EventFlag

#: events in a relay log whose ``end_log_pos`` is not a position in the source's file: the
#: replica's own (RELAY_LOG: MySQL's Previous_gtids at a relay log's head, an offset in the
#: relay log) and the dump thread's made-up ones (ARTIFICIAL: MariaDB 11.8 begins a GTID
#: connection with a Gtid_list whose end_log_pos is where the stream starts)
NOT_FROM_SOURCE_FILE = int(EventFlag.RELAY_LOG | EventFlag.ARTIFICIAL)


def moves_source_clock(log_pos: int, flags: int) -> bool:
    """Whether a relay-log event's ``end_log_pos`` is an end in the source's file (and so may
    move a ``SourceClock``): not 0, and neither the replica's own event nor an artificial one."""
    return bool(log_pos) and not flags & NOT_FROM_SOURCE_FILE

WRAP = 1 << 32
MAX_DUMP_POSITION = WRAP - 1  #: COM_BINLOG_DUMP carries a 4-byte position: the highest it can ask for


class SourceClock:
    """Tracks the source's file and the 64-bit end position of the last event it sent."""

    __slots__ = ("file", "end")

    def __init__(self, file: str | None = None, end: int | None = None) -> None:
        self.file = file
        self.end = end

    def rotate(self, file: str | None, position: int) -> None:
        """A Rotate from the source: the next event starts at ``position`` of ``file``."""
        self.file, self.end = file, position

    def unwrap(self, log_pos: int, size: int) -> int:
        """The 64-bit end of an event of ``size`` bytes whose header says ``log_pos``.
        ``log_pos`` 0 (an artificial event) stays 0 and does not move the clock."""
        if not log_pos:
            return 0
        if self.end is None:
            self.end = log_pos
            return log_pos
        low = self.end + size
        end = (low & ~(WRAP - 1)) | (log_pos & (WRAP - 1))
        if end < low:
            end += WRAP
        self.end = end
        return end


    def behind(self, log_pos: int, size: int) -> int | None:
        """The 64-bit start of an event (``end_log_pos`` ``log_pos``, ``size`` bytes) that starts
        *before* the end of the last event, or None when it starts at or after it. A source
        never sends an event twice in one stream: one that starts behind is a restarted stream
        (a replica that reconnected at an older position). "Behind" is read within half the
        32-bit window, so a position that wrapped past 4 GiB is ahead, not behind."""
        if not log_pos or self.end is None:
            return None
        start32 = (log_pos - size) & (WRAP - 1)
        back = ((self.end & (WRAP - 1)) - start32) & (WRAP - 1)
        if back == 0 or back >= WRAP >> 1:
            return None
        return self.end - back


def reachable_by_dump(position: int) -> bool:
    """Whether a file/position replica can ask a source for ``position`` (4-byte field)."""
    return 0 <= position <= MAX_DUMP_POSITION

"""The export's ``Filters`` of one partition: a whole file, or a range of whole transactions of
a big one (``files.split``), whose transactions are those that begin in it. The data source's
``changes`` table and the spark-submit export job both walk a range with these filters, so a
file read as ranges gives the rows of the file read whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..export.changes import Filters


@dataclass(frozen=True)
class InRange(Filters):
    """``Filters`` that own only the transactions that begin in ``task``'s range (a
    ``files.FileTask``; None or a whole file: all of them): the others are neither exported nor
    counted (``Report``: not filtered out, rolled back or incomplete), so the reports of a
    file's ranges add up to the file's."""

    task: Any = None

    def trx_owned(self, t) -> bool:
        return self.task is None or self.task.holds(t.start_offset)


def in_range(filters: Filters, task: Any) -> InRange:
    """``filters`` narrowed to ``task``'s range (a whole file: unchanged but for the type)."""
    from dataclasses import fields

    return InRange(**{f.name: getattr(filters, f.name) for f in fields(filters) if f.init},
                   task=None if task.whole() else task)

"""Lakehouse tables of an archive (issue 33): ``binlogkit export --format iceberg|delta``.

``state``: the executed GTID state a commit records and the sets ``as_of`` compares it with
(pure); ``follow``: ``--follow``, the checkpoint and the status; ``look``: ``binlogkit lake``;
``fold``: the current state from change rows (pure); ``batch``: a table's change rows of a
batch as Arrow; ``types``: the export's Arrow types as Iceberg / Delta hold them; ``props``:
the coordinates a commit carries; ``gaps``: the audit's holes as a stop position; ``snapshot``:
starting from a backup; ``iceberg`` / ``delta``: the sinks (the only I/O); ``mirror``: the
walk, the batches and the restart rule. docs/lakehouse.md tells the story.
"""

from __future__ import annotations

from .mirror import FORMATS, export_lake

__all__ = ["FORMATS", "export_lake"]

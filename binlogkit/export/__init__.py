"""``binlogkit export``: an archive's committed row changes as a typed Parquet change table.

``changes``: the committed row changes and statements, in binlog order (lockstep with the
grouping scan); ``schema``: Arrow types per column type and the table versions; ``ddl``:
column names from ``CREATE TABLE`` text (``--schema``); ``dataset``: the partitioned writer;
``output``: the filesystem and the protocol (``_SUCCESS`` last); ``job``: the spark-submit job.

One row per row change: ``op``, ``gtid``, ``server_id``, ``commit_time``, ``file``, ``offset``
(of the rows event), ``row_index`` (within the transaction), ``schema_version``, then
``before_<column>`` and ``after_<column>`` for every column (docs/export.md).
"""

from __future__ import annotations

import time
from typing import Iterable

from ..reading.source import Input
from .changes import Filters, Report, checked_inputs, committed_changes

__all__ = ["Filters", "Report", "export", "summary_exit_code"]


def export(paths: Iterable[Input | str], output: str, *, filters: Filters | None = None,
           row_group_rows: int = 50_000, part_rows: int = 5_000_000, series: str | None = None) -> dict:
    """Export ``paths`` (paths, or ``Input`` values with the keys of encrypted files) into
    ``output`` (a folder or an fsspec URL) and return the summary that ``_SUCCESS`` holds.
    ``series``: only the files of that series (``BASE.NNNNNN``). ``OSError`` for an input that
    cannot be read (nothing written)."""
    from . import output as out
    from .dataset import DatasetWriter, write_schemas

    found = checked_inputs(paths, series=series)
    filters = filters or Filters()
    report = Report()
    fs, root = out.output_fs(output)
    t0 = time.monotonic()
    with out.locked(fs, root):
        out.begin(fs, root)
        w = DatasetWriter(fs, root, row_group_rows=row_group_rows, part_rows=part_rows)
        try:
            for item in committed_changes(found, filters, report, take=w.take, sink=w):
                w.add(item)
            w.close()
        except BaseException:
            w.abort()
            raise
        write_schemas(fs, root, w.schemas)
        summary = make_summary(output, report, w.counts_json(), w.n_statements, len(w.schemas),
                               len(w.written), time.monotonic() - t0)
        out.finish(fs, root, summary)
    return summary


def make_summary(output: str, report: Report, tables: dict, statements: int, versions: int, parts: int,
                 seconds: float) -> dict:
    rows = sum(sum(ops.values()) for ops in tables.values())
    return {"output": output, "files": report.files, "bytes": report.bytes, "transactions": report.transactions,
            "rows": rows, "tables": tables, "statements": statements, "schema_versions": versions,
            "parts": parts, "filtered_out": report.filtered_out, "rolled_back": report.rolled_back,
            "xa_prepared": report.xa_prepared, "incomplete": report.incomplete, "problems": report.problems,
            "seconds": round(seconds, 3)}


def summary_exit_code(summary: dict) -> int:
    """0 clean; 1 when damage, undecodable rows or a partial transaction was reported."""
    return 1 if summary["problems"] or summary["incomplete"] else 0

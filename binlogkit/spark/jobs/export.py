"""The spark-submit export job: one task per input file, a big file (above ``--split-bytes``,
64 MiB; 0: never) one task per range of whole transactions (``spark.files.split``, as the data
source splits it; ``spark.ranges.InRange``: a range's transactions are those that begin in it);
executors decode and write their own Parquet parts; the driver gets counts.

Run it on this machine (Spark local mode, the default master)::

    spark-submit --master 'local[*]' binlogkit/spark/jobs/export.py /archive/binlogs --output /data/changes

On a standalone cluster (executors need pyarrow and fsspec: the Python of a virtualenv made
with ``pip install 'binlogkit[export]'``, or a packed one shipped with ``--archives``)::

    PYSPARK_PYTHON=/opt/venv/bin/python spark-submit --master spark://HOST:7077 \\
        binlogkit/spark/jobs/export.py /shared/binlogs --output /shared/changes --tables shop.orders

Options as ``binlogkit export`` (``--table``/``--database``, ``--start-datetime``/``--stop-datetime``
or ``--include-gtids``, ``--exclude-gtids``, ``--schema``, ``--row-group-rows``, ``--json``). The output protocol is the
same (``output.py``): the driver clears an earlier run (``_SUCCESS`` first), executors write
``db=…/table=…/date=…/part-NNNNN-….parquet`` (NNNNN: the task's number, files and ranges in
binlog order) and
``_statements/``, and the driver writes ``_schemas`` and, last, ``_SUCCESS``. What reaches the
driver per file: row counts per table and operation, the schema versions met (a few per table),
and the file's problems (at most ``MAX_PROBLEMS``).

A transaction that continues from one file into the next (relay logs; never binlogs) is cut
by the per-file split: use ``binlogkit export`` (one process) for such archives.

Exit code as ``binlogkit export``: 0 clean, 1 damage or partial transactions, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

MAX_PROBLEMS = 100


def _filters(spec: dict):
    """A ``changes.Filters`` rebuilt on an executor from plain values (predicates do not pickle)."""
    from datetime import datetime

    from binlogkit.api import gtid_matcher
    from binlogkit.export import ddl
    from binlogkit.export.changes import Filters

    return Filters(tables=tuple(spec.get("tables") or ()),
                   start=datetime.fromisoformat(spec["start"]) if spec.get("start") else None,
                   stop=datetime.fromisoformat(spec["stop"]) if spec.get("stop") else None,
                   gtids=gtid_matcher(spec["gtids"]) if spec.get("gtids") else None,
                   exclude_gtids=gtid_matcher(spec["exclude_gtids"]) if spec.get("exclude_gtids") else None,
                   schema=ddl.index(ddl.parse(spec["schema"])) if spec.get("schema") else {})


def export_file(item: tuple[int, Any], *, output: str, spec: dict, row_group_rows: int,
                env: dict | None = None) -> dict:
    """One input's (or one range's) committed changes into the dataset (run on an executor): its
    counts back. ``item``: (task number, a ``spark.files.FileTask`` or a path). A range is
    walked from the event before it to the next range's first GTID event (``Input(start=,
    stop=)``), its own transactions exported and counted (``InRange``); the file's size and
    count come with its first range. ``env``: the driver's object-storage settings, for those
    the executor's environment lacks."""
    from dataclasses import replace

    from binlogkit.reading import storage
    from binlogkit.export.changes import Report, committed_changes
    from binlogkit.export.dataset import DatasetWriter
    from binlogkit.export.output import output_fs
    from binlogkit.spark.ranges import in_range

    storage.adopt(env)
    task, what = item
    filters = _filters(spec)
    if isinstance(what, str):
        path, inp, first = what, what, True
    else:
        path, inp, first = what.name, what.input(), what.start is None
        if not what.whole():
            inp = replace(inp, start=what.lead if what.lead is not None else what.start, stop=what.stop)
            filters = in_range(filters, what)
    fs, root = output_fs(output)
    report = Report()
    w = DatasetWriter(fs, root, task=task, row_group_rows=row_group_rows)
    try:
        for change in committed_changes([inp], filters, report, take=w.take, sink=w):
            w.add(change)
        w.close()
    except BaseException:
        w.abort()
        raise
    if not first:   # the file was counted by its first range
        report.files = report.bytes = 0
    return {"task": task, "file": path, "tables": w.counts_json(), "statements": w.n_statements,
            "schemas": w.schemas, "last_versions": {f"{d}.{t}": v for (d, t), v in w.last_version.items()},
            "parts": len(w.written), "files": report.files, "bytes": report.bytes,
            "transactions": report.transactions, "filtered_out": report.filtered_out,
            "rolled_back": report.rolled_back, "xa_prepared": report.xa_prepared,
            "incomplete": report.incomplete[:MAX_PROBLEMS], "problems": report.problems[:MAX_PROBLEMS]}


def merge(parts: list[dict]) -> tuple[dict, list[dict], dict]:
    """(counts, schema version starts in binlog order, totals) of the per-file results, in
    input order: a file's first version of a table is a start only when the file before it
    ended on another version."""
    parts = sorted(parts, key=lambda p: p["task"])
    tables: dict[str, dict[str, int]] = {}
    schemas: list[dict] = []
    last: dict[str, str] = {}
    totals: dict = {k: 0 for k in ("files", "bytes", "transactions", "filtered_out", "rolled_back", "xa_prepared",
                             "statements", "parts")}
    incomplete: list = []
    problems: list = []
    for p in parts:
        for name, ops in p["tables"].items():
            mine = tables.setdefault(name, {"insert": 0, "update": 0, "delete": 0})
            for op, n in ops.items():
                mine[op] += n
        for s in p["schemas"]:
            name = f"{s['db']}.{s['table']}"
            if last.get(name) != s["schema_version"]:
                schemas.append(s)
            last[name] = s["schema_version"]
        last.update(p["last_versions"])
        for k in totals:
            totals[k] += p[k]
        incomplete += p["incomplete"]
        problems += p["problems"]
    totals["incomplete"] = incomplete
    totals["problems"] = problems
    return dict(sorted(tables.items())), schemas, totals


SPLIT_BYTES = 64 << 20


def plan(paths: list, split_bytes: int = SPLIT_BYTES) -> list:
    """The job's tasks: the files (the plan every Spark job shares, binlog order), those above
    ``split_bytes`` as ranges of whole transactions (a header walk on the driver), numbered in
    that order (the parts' NNNNN)."""
    from dataclasses import replace

    from binlogkit.spark.files import plan_files, split

    tasks = [r for t in plan_files(paths, check=True) for r in split(t, split_bytes)]
    return [replace(t, index=i) for i, t in enumerate(tasks)]


def run(spark, paths: list[str], output: str, *, spec: dict, row_group_rows: int = 50_000,
        split_bytes: int = SPLIT_BYTES) -> dict:
    """The export on the cluster; the driver holds the output folder's lock for the run."""
    from binlogkit.export import output as out

    t0 = time.monotonic()
    tasks = plan(paths, split_bytes)
    fs, root = out.output_fs(output)
    with out.locked(fs, root):
        return _run(spark, tasks, output, fs, root, spec, row_group_rows, t0)


def _run(spark, tasks: list, output: str, fs, root: str, spec: dict, row_group_rows: int, t0: float) -> dict:
    from binlogkit.export import make_summary
    from binlogkit.export import output as out
    from binlogkit.export.changes import Report
    from binlogkit.reading import storage
    from binlogkit.export.dataset import write_schemas

    out.begin(fs, root)
    sc = spark.sparkContext
    results = (sc.parallelize([(t.index, t) for t in tasks], numSlices=max(1, len(tasks)))
               .map(partial(export_file, output=output, spec=spec, row_group_rows=row_group_rows,
                            env=storage.environment())).collect())
    tables, schemas, totals = merge(results)
    write_schemas(fs, root, schemas)
    report = Report(files=totals["files"], bytes=totals["bytes"], transactions=totals["transactions"],
                    filtered_out=totals["filtered_out"], rolled_back=totals["rolled_back"],
                    xa_prepared=totals["xa_prepared"], incomplete=totals["incomplete"],
                    problems=totals["problems"])
    summary = make_summary(output, report, tables, totals["statements"], len(schemas), totals["parts"],
                           time.monotonic() - t0)
    summary["engine"] = "spark"
    out.finish(fs, root, summary)
    return summary


@dataclass(frozen=True)
class ExportOptions:
    """What the job is asked, as plain values that travel to executors (``main`` parses argv
    into it): table patterns (DB.T, shell wildcards), ISO date-times, a GTID set's text and the
    text of a --schema file."""
    paths: tuple[str, ...]
    output: str
    tables: tuple[str, ...] = ()
    start: str | None = None
    stop: str | None = None
    gtids: str | None = None
    schema: str | None = None
    row_group_rows: int = 50_000
    as_json: bool = False
    exclude_gtids: str | None = None
    split_bytes: int = SPLIT_BYTES

    def spec(self) -> dict:
        return {"tables": list(self.tables), "start": self.start, "stop": self.stop, "gtids": self.gtids,
                "exclude_gtids": self.exclude_gtids, **({"schema": self.schema} if self.schema else {})}


def parse(argv: list[str]) -> ExportOptions:
    """argv as ``binlogkit export`` spells it (``ValueError``: options that do not go together)."""
    from binlogkit.argv import ArgumentParser

    ap = ArgumentParser(prog="binlogkit-export-job", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-o", "--output", required=True, help="dataset root: a folder or an fsspec URL")
    ap.add_argument("--table", "--tables", dest="tables", action="append", default=[],
                    help="only these tables: DB.T,... (shell wildcards; may be given more than once)")
    ap.add_argument("--database", action="append", default=[],
                    help="only the tables of this database (may be given more than once)")
    ap.add_argument("--start-datetime")
    ap.add_argument("--stop-datetime")
    ap.add_argument("--include-gtids", action="append", default=[], help="(may be given more than once: the union)")
    ap.add_argument("--exclude-gtids", action="append", default=[], help="(may be given more than once: the union)")
    ap.add_argument("--schema", action="append", default=[],
                    help="CREATE TABLE statements for table maps without names (read on the driver; may be given "
                         "more than once)")
    ap.add_argument("--row-group-rows", type=int, default=50_000)
    ap.add_argument("--split-bytes", type=int, default=SPLIT_BYTES,
                    help="files above it are exported as ranges of whole transactions, a task each (0: never)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    include, exclude = (",".join(g.strip() for g in given if g.strip()) or None
                        for given in (args.include_gtids, args.exclude_gtids))
    if include and (args.start_datetime or args.stop_datetime):
        raise ValueError("give --start/--stop-datetime or --include-gtids, not both")
    schema = None
    if args.schema:
        if len(args.schema) > 1:   # a table defined differently in two files: refused (UsageError), as the CLI
            from binlogkit.export import ddl

            ddl.load(args.schema)
        texts = []
        for path in args.schema:
            with open(path, encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
        schema = ";\n".join(texts)
    tables = tuple(t.strip() for v in args.tables for t in v.split(",") if t.strip())
    return ExportOptions(tuple(args.paths), args.output, tables + tuple(f"{d}.*" for d in args.database if d),
                         _iso(args.start_datetime), _iso(args.stop_datetime), include, schema,
                         args.row_group_rows, args.json, exclude, args.split_bytes)


def run_options(spark, opts: ExportOptions) -> dict:
    """The export of ``opts`` on ``spark``: its summary (``_SUCCESS``'s). A bad GTID set or
    date fails on the driver, before any task (``ValueError``, ``BinlogError``)."""
    spec = opts.spec()
    _filters(spec)
    return run(spark, list(opts.paths), opts.output, spec=spec, row_group_rows=opts.row_group_rows,
               split_bytes=opts.split_bytes)


def main(spark, argv: list[str]) -> int:
    try:
        opts = parse(argv)
        summary = run_options(spark, opts)
    except (OSError, ValueError) as exc:
        print(f"binlogkit-export-job: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001  (a BinlogError: the folder is locked, a key missing, ...)
        from binlogkit.errors import BinlogError

        if not isinstance(exc, BinlogError):
            raise
        print(f"binlogkit-export-job: {exc}", file=sys.stderr)
        return 2
    if opts.as_json:
        print(json.dumps(summary, indent=1, default=str))
    else:
        from binlogkit.export.render import render

        print(render(summary))
    from binlogkit.export import summary_exit_code

    return summary_exit_code(summary)


def _iso(value: str | None) -> str | None:
    """A date-time as ISO text, UTC unless it names a zone (as the CLI reads it)."""
    if not value:
        return None
    from datetime import datetime, timezone

    dt = datetime.fromisoformat(value)
    return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).isoformat()


if __name__ == "__main__":
    from binlogkit.spark.jobs.audit import run_as_script

    run_as_script(main)

"""The spark-submit mirror backfill: an archive into Iceberg or Delta change tables (``DB.T__changes``)
and, with ``--mirror``, current-state tables (``DB.T``) built on a cluster, equal to what
``binlogkit export --format iceberg|delta --mirror`` builds in one process and continued by it.

Run it on this machine (Spark local mode, the default master)::

    spark-submit --master 'local[*]' binlogkit/spark/jobs/mirror.py /archive/binlogs \\
        --output /data/warehouse --format iceberg --mirror

On a standalone cluster (executors need pyarrow, fsspec and pyiceberg / deltalake: the Python of a
virtualenv made with ``pip install 'binlogkit[export,lake]'``; the warehouse and the staging
folder in it on storage every node reaches)::

    PYSPARK_PYTHON=/opt/venv/bin/python spark-submit --master spark://HOST:7077 \\
        binlogkit/spark/jobs/mirror.py /shared/binlogs --output /shared/warehouse --format delta --mirror

``binlogkit export ARCHIVE -o WAREHOUSE --format iceberg --mirror --engine spark`` runs the same
from the command line. How it goes (``spark.backfill``, ``export.lake.backfill``):

1. executors walk the partitions (one per file, a file above ``--split-bytes`` one per range
   of whole transactions, as the export job splits it), each to its first barrier (a schema
   change of a table exported, a statement the mirror cannot apply, a partial row image, an
   archive gap): the change rows of each table staged as Arrow IPC files under
   ``WAREHOUSE/_binlogkit_backfill/RUN/``, with the partition's own fold per primary key;
2. the driver cuts the archive at the first barrier (the partitions before it, that one up to
   its barrier) and makes the Iceberg tables it lacks (no snapshot yet);
3. a shuffle by (table, key) keeps per key the entry of the last partition holding it (a key
   deleted or moved away by a key update: no row); executors write the surviving rows, and the
   change rows, as the tables' data files;
4. the driver commits each table once (Iceberg: an APPEND snapshot of the files; Delta: a
   commit of add actions) with the commit properties the local mirror writes at that point
   (``binlogkit.gtid``, ``file``, ``position``, ``commit_time``, ``gtid_state``), then removes
   the staging folder.

What reaches the driver: per partition and table, paths, counts and schemas; per data file its
description. A driver killed anywhere leaves committed tables complete and the others without
a commit from this run (data files written but not committed are never read); a rerun, of the
backfill or the local run, completes them (a table committed at the backfill's end is left as
it is). A warehouse whose tables already hold commits before that point (a local run's) is
refused: continue it with the local run.

Exit code: 0 done (also when it stopped before a schema change: the local run continues from
there); 1 stopped before a statement the mirror cannot apply (named: the local run stops that
table's mirror there too), an archive gap, damage or a partial transaction; 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from functools import partial
from typing import Any

from binlogkit.spark.jobs.export import SPLIT_BYTES, plan  # (absolute: spark-submit runs this file as a script)

STAGING = "_binlogkit_backfill"


def run(spark, paths: list, warehouse: str, *, fmt: str = "iceberg", mirror: bool = True, catalog: str | None = None,
        tables: tuple[str, ...] = (), split_bytes: int = SPLIT_BYTES, skip_statements: bool = False,
        series: str | None = None, check_gaps: bool = True, schema: str | None = None) -> dict:
    """The backfill (see the module text) in ``spark``: a ``SparkSession``, a ``SparkContext`` or
    a ``spark.start.Starting`` (begun once the inputs are checked, waited for once the archive is
    planned); its summary, as ``export_lake``'s with ``engine``,
    ``cut`` (where it stopped, None: the archive's end) and ``staged_files`` / ``data_files``.
    ``ArchiveGap`` (with ``summary``) after committing what is before a gap. ``schema``: the text
    of CREATE TABLE statements for table maps without names or keys (``--schema``)."""
    from binlogkit.errors import ArchiveGap, UsageError
    from binlogkit.export.changes import checked_inputs
    from binlogkit.export.lake.backfill import STOPS, after_truncate, cut, end_state, winner
    from binlogkit.export.lake.mirror import open_sink
    from binlogkit.export.lake.names import CHANGES
    from binlogkit.export.lake.props import commit_props, position_of
    from binlogkit.export.lake.state import Tracker
    from binlogkit.export.output import output_fs
    from binlogkit.pitr.walk import read_head
    from binlogkit.reading import storage
    from binlogkit.spark.backfill import keys_of, walk_task, write_part
    from binlogkit.spark.start import Beside, Starting, context_of

    t0 = time.monotonic()
    phases: dict[str, float] = {}

    def phase(name: str) -> None:   # wall seconds of each stage, since the one before
        phases[name] = round(time.monotonic() - t0 - sum(phases.values()), 3)
    # local paths made absolute: an executor's working folder is not the driver's
    paths = [p if "://" in os.fspath(p) else os.path.abspath(p) for p in paths]
    found = checked_inputs(paths, series=series, one_series=mirror)
    sink = open_sink(fmt, warehouse, catalog)
    if isinstance(spark, Starting):   # the inputs and the warehouse are usable: Spark may start
        spark.begin()
    # the gap check: audited on the executors (the audit job's stages; one finding back, or
    # None), Spark jobs run beside the walk's in a pool of their own (FAIR: its few short tasks
    # take the cores between the walk's, not after them all)
    auditor = None
    if check_gaps:
        from binlogkit.crypto.keys import KeySpec
        from binlogkit.spark.jobs.audit import first_gap

        keys = found[0].keys if found else None
        auditor = Beside(spark, "audit", lambda: first_gap(spark, [i.name for i in found],
                                                           spec=keys if isinstance(keys, KeySpec) else None))
    start = Tracker.from_head(read_head(found[0]))
    tasks = plan(found, split_bytes)
    phase("plan")
    fs, root = output_fs(warehouse)
    where = warehouse.rstrip("/") if "://" in warehouse else os.path.abspath(warehouse)
    staging = f"{where}/{STAGING}/{uuid.uuid4().hex}"
    env = storage.environment()
    spec = {"tables": list(tables), "skip_statements": skip_statements, "gap": None, "schema": schema}
    sc = context_of(spark)   # (a ``Starting``: its start ran beside the planning above)
    phase("Spark's start (after the plan)")

    def walked(todo: list, spec: dict) -> list[dict]:
        return (sc.parallelize([(t.index, t) for t in todo], numSlices=max(1, len(todo)))
                .map(partial(walk_task, staging=staging, spec=spec, env=env)).collect())
    by_task = {r["task"]: r for r in walked(tasks, spec)}
    phase("walk")
    gap = auditor.result() if auditor is not None else None
    phase("audit (after the walk)")
    if gap is not None:   # the partitions not wholly before the gap walked again, to stop there
        again = [t for t in tasks if gap_after(t, gap[0])]
        by_task.update({r["task"]: r for r in walked(again, {**spec, "gap": list(gap[0])})} if again else {})
        phase("walk to the gap")
    taken, stop = cut([by_task[k] for k in sorted(by_task)])
    last, state = end_state(start, taken)

    # the tables and what each gets: the change rows of every partition taken, the fold's survivors
    info: dict[tuple[str, str], dict] = {}
    for r in taken:
        for name, t in r["tables"].items():
            info.setdefault(name, {**t, "parts": []})["parts"].append((r["task"], t))
    end = None if last is None else position_of(commit_props(last["gtid"], last["file"], last["offset"], 0, 0))
    todo: list[tuple[str, str, bool]] = []    # (db, name, mirror table?)
    done: list[str] = []
    for (db, table), t in sorted(info.items()):
        names = [(table + CHANGES, False)] + ([(table, True)] if mirror and t["key"] else [])
        for name, is_mirror in names:
            p = position_of(sink.recorded(db, name))
            if p is None:
                todo.append((db, name, is_mirror))
            elif end is not None and p >= end:
                done.append(f"{db}.{name}")
            else:
                raise UsageError(f"{db}.{name}: the warehouse holds its commits up to {p[1]}:{p[2]}, before the "
                                 "backfill's end: continue it with the local run (binlogkit export --mirror without "
                                 "--engine spark)")
    from binlogkit.export.lake import delta, iceberg

    target_of: Any = iceberg.target_of if fmt == "iceberg" else delta.target_of
    targets = {}
    for db, name, is_mirror in todo:
        t = info[(db, name if is_mirror else name[:-len(CHANGES)])]
        targets[(db, name)] = target_of(sink, db, name, t["mirror_schema"] if is_mirror else t["changes_schema"])

    phase("tables")
    # the data files: change rows as they are, mirror rows that won their key
    jobs = [((db, name), p["changes"]) for db, name, m in todo if not m
            for _, p in info[(db, name[:-len(CHANGES)])]["parts"]]
    truncated: dict = {}
    for r in taken:
        for name in r["truncated"]:
            truncated.setdefault(tuple(name), []).append(r["task"])
    staged = [((db, name), part, p["mirror"], tuple(p["key"])) for db, name, m in todo if m
              for part, p in after_truncate((db, name), info[(db, name)]["parts"], truncated)]
    written: dict[tuple[str, str], list] = {}
    slices = 4 * sc.defaultParallelism

    def fold() -> list:   # the shuffle by key, then the survivors written
        if not staged:
            return []
        by_no = {i: (n, path) for i, (n, _, path, _) in enumerate(staged)}
        items = [(n, i, part, path, key) for i, (n, part, path, key) in enumerate(staged)]
        survivors = (sc.parallelize(items, numSlices=max(1, min(len(items), slices)))
                     .flatMap(partial(keys_of, env=env))
                     .reduceByKey(winner)
                     .filter(lambda kv: not kv[1][3])
                     .map(lambda kv: (kv[1][1], kv[1][2]))
                     .groupByKey())
        return (survivors.map(lambda fr, files=by_no, tg=targets, env=env:
                              (files[fr[0]][0], write_part(files[fr[0]][1], list(fr[1]), tg[files[fr[0]][0]], env)))
                .collect())
    # the fold's jobs beside the change rows' (its stages are short: the change rows' tasks fill the cores)
    folding = Beside(spark, "fold", fold)
    out = (sc.parallelize(jobs, numSlices=max(1, min(len(jobs), slices)))
           .map(lambda j, tg=targets, env=env: (j[0], write_part(j[1], None, tg[j[0]], env))).collect()) if jobs else []
    for k, files in out + folding.result():
        written.setdefault(k, []).extend(files)

    phase("data files")
    # the commits: each table once, at the backfill's end
    commits = 0
    if last is not None:
        props = commit_props(last["gtid"], last["file"], last["offset"], last["commit_time"],
                             sum(r["transactions"] for r in taken), state)
        for db, name, is_mirror in todo:
            files = written.get((db, name), [])
            if fmt == "iceberg":
                iceberg.commit_data_files(sink, db, name, files, props)
            else:
                delta.commit_data_files(sink, db, name, targets[(db, name)][3], files, props)
            commits += 1
    try:
        sfs, sroot = output_fs(staging)
        if sfs.exists(sroot):
            sfs.rm(sroot, recursive=True)
    except OSError:
        pass
    phase("commits")
    problems = [p for r in taken for p in r["problems"]]
    incomplete = [p for r in taken for p in r["incomplete"]]
    skipped: dict[str, int] = {}
    for r in taken:
        for k, n in r["skipped_statements"].items():
            skipped[k] = skipped.get(k, 0) + n
    clean_stop = None if stop is None else {k: v for k, v in stop.items() if k != "_pos"}
    stopped = [clean_stop] if clean_stop is not None and clean_stop["kind"] in STOPS else []
    summary = {"output": warehouse, "engine": "spark", "format": fmt, "mirror": mirror,
               "files": len({t.name for t in tasks}), "bytes": sum(t.size for t in tasks if t.start is None),
               "transactions": sum(r["transactions"] for r in taken),
               "rows": sum(p["rows"] for t in info.values() for _, p in t["parts"]),
               "batches": 1 if commits else 0, "commits": commits,
               "skipped_rows": 0, "from_snapshot": 0, "tables": sorted(f"{d}.{t}" for d, t in info),
               "no_key": sorted(f"{d}.{t}" for (d, t), x in info.items() if not x["key"]) if mirror else [],
               "partial_images": {}, "gap": None, "stopped": stopped, "skipped_statements": skipped, "moved": [],
               "incomplete": incomplete, "problems": problems, "already_committed": done,
               "cut": clean_stop if clean_stop is not None and clean_stop["kind"] != "gap" else None,
               "partitions": len(tasks), "partitions_taken": len(taken),
               "truncated": sorted(f"{d}.{t}" for d, t in truncated),
               "data_files": sum(len(v) for v in written.values()), "seconds": round(time.monotonic() - t0, 3),
               "phases": phases}
    if stop is not None and stop["kind"] == "gap":
        summary["gap"] = gap[1] if gap else None
        g = gap[1] if gap else {}
        err = ArchiveGap(f"archive gap ({g.get('kind')}: {g.get('detail')}): the tables hold every change before it; "
                         f"export stopped at {g.get('place')}", file=g.get("file"), offset=g.get("offset"))
        err.summary = summary  # type: ignore[attr-defined]
        raise err
    return summary


def gap_after(task, gap: tuple) -> bool:
    """Whether the partition ``task`` (a ``FileTask``: the transactions that begin in its range)
    may hold a transaction at or past the gap's place ``gap`` (an ``order_key``)."""
    from binlogkit.export.lake.props import order_key

    return order_key(task.name, task.stop if task.stop is not None else task.size) > tuple(gap)


def render(s: dict) -> str:
    """The backfill's summary for people: the local mirror's, and where it stopped."""
    from binlogkit.export.lake.backfill import stop_line
    from binlogkit.export.lake.mirror import render as local_render

    lines = [local_render(s), f"engine: spark, {s['partitions_taken']} of {s['partitions']} partitions, "
                              f"{s['data_files']} data files"]
    if s.get("already_committed"):
        lines.append(f"committed by an earlier run: {', '.join(s['already_committed'])}")
    if s.get("cut"):
        lines.append(stop_line(s["cut"]))
    return "\n".join(lines)


def exit_code(s: dict) -> int:
    from binlogkit.export.lake.mirror import exit_code as local

    return local(s)


def parse(argv: list[str]) -> argparse.Namespace:
    from binlogkit.argv import ArgumentParser

    ap = ArgumentParser(prog="binlogkit-mirror-job", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-o", "--output", required=True, help="the warehouse: a folder or an s3:// URL")
    ap.add_argument("--format", dest="fmt", choices=("iceberg", "delta"), default="iceberg")
    ap.add_argument("--mirror", action="store_true", help="also the current-state tables (DB.T)")
    ap.add_argument("--catalog", help="iceberg: a SQLite file (default: catalog.sqlite in the warehouse) or a REST "
                                      "catalog's http(s):// URL")
    ap.add_argument("--table", "--tables", dest="tables", action="append", default=[],
                    help="only these tables: DB.T,... (shell wildcards; may be given more than once)")
    ap.add_argument("--database", action="append", default=[],
                    help="only the tables of this database (may be given more than once)")
    ap.add_argument("--series", help="only the files of this binlog series")
    ap.add_argument("--schema", action="append", default=[],
                    help="CREATE TABLE statements for table maps without names or keys (read on the driver; may be "
                         "given more than once)")
    ap.add_argument("--skip-statements", action="store_true",
                    help="ignore statement-format row changes of mirrored tables (counted) instead of stopping")
    ap.add_argument("--split-bytes", type=int, default=SPLIT_BYTES,
                    help="files above it are read as ranges of whole transactions, a task each (0: never)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    return ap.parse_args(argv)


def schema_text(paths) -> str | None:
    """The CREATE TABLE statements of ``paths`` as one text (a table defined differently in two
    of them: ``UsageError``, as the CLI refuses it); None without any."""
    if not paths:
        return None
    from binlogkit.export import ddl

    ddl.load(list(paths))
    texts = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as fh:
            texts.append(fh.read())
    return ";\n".join(texts)


def main(spark, argv: list[str]) -> int:
    from binlogkit.errors import ArchiveGap, BinlogError

    try:
        a = parse(argv)
        tables = tuple(t.strip() for v in a.tables for t in v.split(",") if t.strip()) + \
            tuple(f"{d}.*" for d in a.database if d)
        summary = run(spark, list(a.paths), a.output, fmt=a.fmt, mirror=a.mirror, catalog=a.catalog, tables=tables,
                      split_bytes=a.split_bytes, skip_statements=a.skip_statements, series=a.series,
                      schema=schema_text(a.schema))
    except ArchiveGap as exc:
        summary = exc.summary  # type: ignore[attr-defined]
        print(json.dumps(summary, indent=1, default=str) if a.json else render(summary))
        print(f"binlogkit-mirror-job: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError, BinlogError) as exc:
        print(f"binlogkit-mirror-job: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=1, default=str) if a.json else render(summary))
    return exit_code(summary)


if __name__ == "__main__":
    from binlogkit.spark.jobs.audit import run_as_script

    run_as_script(main, rdd_only=True)

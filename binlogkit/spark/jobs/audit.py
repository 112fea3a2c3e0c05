"""The spark-submit audit job: summaries, merge and findings all on executors.

Run it on this machine (Spark local mode, the default master)::

    spark-submit --master 'local[*]' binlogkit/spark/jobs/audit.py /archive/binlogs --output /tmp/audit

On a standalone cluster whose executors do not have binlogkit installed, ship it (and its one
pure-Python dependency on this path, construct) as a zip made by ``binlogkit.audit.pack``::

    python -m binlogkit.audit.pack /tmp/binlogkit-audit.zip
    spark-submit --master spark://HOST:7077 --py-files /tmp/binlogkit-audit.zip \\
        binlogkit/spark/jobs/audit.py /archive/binlogs --output /shared/audit/run1

(or a packed virtualenv with ``--archives env.tar.gz#env --conf spark.pyspark.python=./env/bin/python``
for ``hdfs://`` / ``s3a://`` inputs, which need fsspec and its filesystem packages).

The stages, none of which brings per-transaction data to the driver:

1. the driver lists the files (local paths or fsspec URLs) and hands out **paths** with their
   sizes, largest first, one task per file up to max(64, 4 x the cluster's cores) tasks (beyond
   that, files are dealt round-robin so that tasks are of about equal work); each executor opens
   and streams its files and returns compact summaries (``summary.py``, about 1 KB per clean file);
2. summaries are grouped by directory (the series of one server, the connections of one
   replica); each group plans which of its files must be scanned again with the GTID state
   before them (``merge.plan_directory``: files that overlap the past, usually none);
3. those scans run as tasks of their own, spread over the cluster's cores;
4. each directory's summaries and scans are merged (``merge.merge_directory``) on an executor;
   the findings become a DataFrame that executors write as Parquet (``DIR/findings.parquet``);
5. the driver receives the counts (added up on executors), the first ``--max-series``
   per-series records (all in ``DIR/series.parquet``) and the first ``--max-findings`` findings
   in report order (all in ``DIR/findings.parquet``), and writes ``DIR/summary.json``: what it
   holds does not grow with the archive beyond those two limits and the list of input paths.

Exit code as ``binlogkit audit``: 0 clean, 1 findings of severity error, 2 usage error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from dataclasses import dataclass
from functools import partial


def list_inputs(paths: list[str]) -> list[tuple[str, int]]:
    """(path, size) of every binlog-looking file under ``paths`` (folders, or object-storage
    prefixes through ``binlogkit.reading.storage``), largest first: the plan every Spark job
    shares (``binlogkit.spark.files.plan_files``, the audit's recursive listing)."""
    from binlogkit.spark.files import by_size, plan_files

    return [(t.name, t.size) for t in by_size(plan_files(paths, recursive=True))]


# --- what executors run (module-level functions: pickled by reference, importable from the zip) --

def _keys(spec):
    """The keys on an executor: read there from the key files' paths (``spec``, a
    ``crypto.KeySpec``), or from the copies ``--files`` shipped; no key bytes travel."""
    return spec.load(resolve=_shipped) if spec is not None else None


def _shipped(path: str) -> str:
    """A key file that is not at its path on this executor: the copy ``--files`` (or the
    driver's ``addFile``) shipped."""
    from pyspark import SparkFiles

    return SparkFiles.get(os.path.basename(path))


def _summaries(deal: list[tuple[str, int]], spec=None, env=None) -> list[tuple[str, dict]]:
    """The summaries of one task's files, keyed by directory."""
    from binlogkit.reading import storage
    from binlogkit.reading.source import Input
    from binlogkit.audit.summary import file_summary

    storage.adopt(env)
    keys = _keys(spec)
    out = []
    for path, _size in deal:
        s = file_summary(Input(path, keys))
        out.append((s["directory"], s))
    return out


def deal_files(inputs: list[tuple[str, int]], tasks: int) -> list[list[tuple[str, int]]]:
    """``inputs`` (largest first) dealt round-robin into at most ``tasks`` lists of about equal
    work: file i goes to list i mod tasks."""
    k = max(1, min(len(inputs), tasks))
    return [inputs[j::k] for j in range(k)]


def _plan(kv) -> list[tuple[str, tuple[str, dict]]]:
    from binlogkit.audit.merge import plan_directory

    directory, summaries = kv
    return [(path, (directory, ctx)) for path, ctx in sorted(plan_directory(list(summaries)).items())]


def _again(item, spec=None, env=None) -> tuple[str, dict]:
    from binlogkit.reading import storage
    from binlogkit.reading.source import Input
    from binlogkit.audit.summary import file_summary

    storage.adopt(env)
    path, (directory, ctx) = item
    return directory, file_summary(Input(path, _keys(spec)), ctx)


def _merge(live: bool, missing: dict[str, str] | None = None):
    def run(kv):
        from binlogkit.audit.engine import within
        from binlogkit.audit.merge import merge_directory

        directory, (groups, again) = kv  # groups: the one grouped list of the directory's summaries
        found, summary = merge_directory([s for g in groups for s in g], {r["file"]: r for r in again}, live=live,
                                         listed_missing=within(missing or {}, directory))
        return found, summary
    return run


def _tally(part) -> list[int]:
    """[errors, warnings, infos, series] of one directory's merge."""
    found, summary = part
    c = [0, 0, 0, len(summary)]
    for f in found:
        c[SEVERITY_RANK[f["severity"]]] += 1
    return c


def _add(a: list[int], b: list[int]) -> list[int]:
    return [x + y for x, y in zip(a, b)]


def _series(part):
    return part[1].items()


def _series_name(item) -> str:
    return item[0]


def _series_rows(part):
    for name, r in part[1].items():
        yield (name, r["files"], r["bytes"], r["events"], r["first_timestamp"], r["last_timestamp"], r["relay"],
               r["gtids_covered"], r["gtid_intervals"], r["first_file"], r["last_file"])


def _order(row: tuple) -> tuple:
    """Report order of a row of ``_rows``: severity, series, file, offset, the merge's order."""
    return row[0], row[8] or "", row[4] or "", row[5] or 0, row[1]


def _rows(part):
    found, _summary = part
    for i, f in enumerate(found):
        src = f["source"]
        yield (SEVERITY_RANK[f["severity"]], i, f["kind"], f["severity"], f["file"], f["offset"], f["detail"],
               f["gtids"], f["series"], f["place"],
               None if src is None else (src.get("file"), src.get("position")))


def _series_schema():
    from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

    return StructType([
        StructField("series", StringType()), StructField("files", LongType()), StructField("bytes", LongType()),
        StructField("events", LongType()), StructField("first_timestamp", LongType()),
        StructField("last_timestamp", LongType()), StructField("relay", BooleanType()),
        StructField("gtids_covered", StringType()), StructField("gtid_intervals", IntegerType()),
        StructField("first_file", StringType()), StructField("last_file", StringType()),
    ])


def _schema():
    from pyspark.sql.types import (ArrayType, IntegerType, LongType, StringType, StructField, StructType)

    return StructType([
        StructField("rank", IntegerType()), StructField("order", LongType()),
        StructField("kind", StringType()), StructField("severity", StringType()),
        StructField("file", StringType()), StructField("offset", LongType()),
        StructField("detail", StringType()), StructField("gtids", ArrayType(StringType())),
        StructField("series", StringType()), StructField("place", StringType()),
        StructField("source", StructType([StructField("file", StringType()), StructField("position", LongType())])),
    ])


from binlogkit.audit.merge import FINDING_COLUMNS, SEVERITY_RANK  # noqa: E402,F401  (as the local engine)


def _merged(spark, paths: list[str], *, live: bool = False, spec=None):
    """The audit's stages 1-4 (see the module text) as a persisted RDD of each directory's merge,
    ``(findings, series records)``: (inputs, that RDD, the summaries grouped by directory, also
    persisted: the caller unpersists both), or None when no file was found."""
    from pyspark import StorageLevel

    from binlogkit.reading import storage

    from binlogkit.audit.engine import listed_missing, within
    from binlogkit.audit.merge import merge_directory

    inputs = list_inputs(paths)
    missing = listed_missing(paths)  # what the indexes list and the archive lacks: errors
    if not inputs and not missing:
        return None
    from binlogkit.spark.start import context_of

    sc = context_of(spark)
    n = len(inputs)
    # one task per file up to a bound: Spark keeps per-task state in the driver, so the number
    # of tasks, not of files, is what the driver's memory follows
    deal = deal_files(inputs, max(64, 4 * sc.defaultParallelism))
    env = storage.environment()   # the executors' environment may lack the store's settings
    summaries = sc.parallelize(deal, numSlices=len(deal)).flatMap(partial(_summaries, spec=spec, env=env))
    groups = summaries.groupByKey(numPartitions=max(1, min(n, sc.defaultParallelism * 2)))
    groups.persist(StorageLevel.MEMORY_AND_DISK)
    wanted = groups.flatMap(_plan)
    again = wanted.repartition(max(1, sc.defaultParallelism)).map(partial(_again, spec=spec, env=env))
    merged = groups.cogroup(again).map(_merge(live, missing))
    present = {os.path.dirname(p) for p, _size in inputs}
    lost = [merge_directory([], {}, live=live, listed_missing=within(missing, d))  # directories of no file
            for d in sorted({os.path.dirname(m) for m in missing} - present)]
    if lost:
        merged = merged.union(sc.parallelize(lost, 1))
    merged.persist(StorageLevel.MEMORY_AND_DISK)
    return inputs, merged, groups


def _gap_of(part):
    """The first gap of one directory's merge (``export.lake.gaps.first_gap``), or None."""
    from binlogkit.export.lake.gaps import first_gap

    return first_gap(part[0])


def _earlier(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a if a[0] <= b[0] else b


def first_gap(spark, paths: list[str], *, spec=None) -> tuple[tuple, dict] | None:
    """``export.lake.gaps.first_gap`` of the audit of ``paths`` (what ``audit_gap`` finds in one
    process), found on the executors: each directory's merge its own first gap, the earliest
    brought together by ``treeAggregate``; the driver receives that one finding (or None), not
    the archive's summaries or findings."""
    made = _merged(spark, paths, spec=spec)
    if made is None:
        return None
    _inputs, merged, groups = made
    try:
        return merged.map(_gap_of).treeAggregate(None, _earlier, _earlier)
    finally:
        merged.unpersist()
        groups.unpersist()


def audit(spark, paths: list[str], *, live: bool = False, output: str | None = None,
          max_findings: int = 1000, max_series: int = 1000, spec=None) -> dict | None:
    """The result document (as ``run_local`` gives with the same ``max_findings`` and
    ``max_series``); None when no file was found.

    What reaches the driver is bounded by the two limits, whatever the archive: the counts (one
    short list per partition, added up), the first ``max_series`` per-series records and the
    first ``max_findings`` findings, in report order (0: all of them, streamed in that order:
    then the driver holds what the archive has). With ``output``, executors write every
    finding to ``OUTPUT/findings.parquet`` and every series' record to ``OUTPUT/series.parquet``.
    The driver itself holds the list of input paths and sizes (about 200 bytes per file)."""
    from pyspark.sql import functions as F

    made = _merged(spark, paths, live=live, spec=spec)
    if made is None:
        return None
    inputs, merged, groups = made
    n = len(inputs)
    errors, warnings, infos, n_series = merged.map(_tally).treeAggregate([0, 0, 0, 0], _add, _add)
    counts = {"error": errors, "warning": warnings, "info": infos}
    # 0: all of them, streamed to the driver in report order (then bounded by the archive only)
    series = dict(merged.flatMap(_series).takeOrdered(max_series, key=_series_name) if max_series else
                  merged.flatMap(_series).sortBy(_series_name).toLocalIterator())
    first = [_finding(r) for r in (merged.flatMap(_rows).takeOrdered(max_findings, key=_order) if max_findings else
                                   merged.flatMap(_rows).sortBy(_order).toLocalIterator())]
    if output:
        out = output.rstrip("/")
        findings = spark.createDataFrame(merged.flatMap(_rows), _schema())
        order = [F.col("rank"), F.coalesce(F.col("series"), F.lit("")), F.coalesce(F.col("file"), F.lit("")),
                 F.coalesce(F.col("offset"), F.lit(0)), F.col("order")]
        _write_parquet(findings.orderBy(*order).drop("rank", "order"), f"{out}/findings.parquet")
        _write_parquet(spark.createDataFrame(merged.flatMap(_series_rows), _series_schema()).orderBy("series"),
                       f"{out}/series.parquet")
    merged.unpersist()
    groups.unpersist()
    total = errors + warnings + infos
    return {"findings": first, "summary": series, "counts": counts, "files": n,
            "bytes": sum(size for _p, size in inputs), "findings_omitted": total - len(first),
            "series": n_series, "series_omitted": n_series - len(series)}


def _write_parquet(df, where: str) -> None:
    """A Parquet dataset written by the executors. A local or Hadoop path: Spark's own writer.
    An object-storage URL (``s3://``, which Spark cannot write without hadoop-aws): each
    partition streams its Arrow batches to ``WHERE/part-NNNNN.parquet`` through
    ``binlogkit.writing.objects.write_atomic`` (an object appears whole or not at all), after the
    driver removed an earlier run's parts; ``WHERE/_SUCCESS`` is written last, as Spark does."""
    from binlogkit.reading import storage
    from binlogkit.writing import objects

    if not storage.is_url(where) or where.startswith(("s3a://", "hdfs://", "file://")):
        df.write.mode("overwrite").parquet(where)
        return
    fs, path = storage.output_fs(where)
    if fs.exists(path):
        fs.rm(path, recursive=True)
    storage.forget()
    schema = df.schema.json()
    rows = sum(df.rdd.mapPartitionsWithIndex(partial(_parquet_part, where, schema, storage.environment())).collect())
    objects.write_atomic(storage.join(where, "_SUCCESS"), f"{rows}\n".encode())


def _arrow_type(t):
    """The Arrow type Spark's Parquet writer gives a Spark SQL type (those of ``_schema``)."""
    import pyarrow as pa
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return pa.struct([pa.field(f.name, _arrow_type(f.dataType)) for f in t.fields])
    if isinstance(t, T.ArrayType):
        return pa.list_(pa.field("element", _arrow_type(t.elementType)))
    return {T.StringType: pa.string(), T.LongType: pa.int64(), T.IntegerType: pa.int32(),
            T.BooleanType: pa.bool_(), T.DoubleType: pa.float64()}[type(t)]


def _parquet_part(where: str, schema_json: str, env: dict, part: int, rows, batch: int = 10_000):
    """On an executor: one partition's rows as one Parquet object, written in row groups of
    ``batch`` rows (none when it has no rows); yields its row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import StructType

    from binlogkit.reading import storage
    from binlogkit.writing import objects

    storage.adopt(env)
    schema = _arrow_type(StructType.fromJson(json.loads(schema_json)))
    schema = pa.schema(list(schema))
    it = iter(rows)
    first = list(itertools.islice(it, batch))
    n = 0
    if first:
        def write(fh) -> None:
            nonlocal n
            chunk = first
            with pq.ParquetWriter(fh, schema) as w:
                while chunk:
                    w.write_table(pa.Table.from_pylist([r.asDict(recursive=True) for r in chunk], schema=schema))
                    n += len(chunk)
                    chunk = list(itertools.islice(it, batch))
        objects.write_atomic(storage.join(where, f"part-{part:05d}.parquet"), write)
    yield n


def _finding(r: tuple) -> dict:
    _rank, _i, kind, severity, file, offset, detail, gtids, series, place, src = r
    return {"kind": kind, "severity": severity, "file": file, "offset": offset, "detail": detail,
            "gtids": list(gtids or []), "source": None if src is None else {"file": src[0], "position": src[1]},
            "series": series, "place": place}


@dataclass(frozen=True)
class AuditOptions:
    """What the job is asked (``binlogkit audit --engine spark`` builds it; ``main`` parses argv
    into it). ``spec``: the key files' paths (``crypto.KeySpec``), read on each executor."""
    paths: tuple[str, ...]
    output: str | None = None
    report: str | None = None
    as_json: bool = False
    live: bool = False
    max_findings: int = 1000
    max_series: int = 1000
    spec: object = None

    @classmethod
    def of(cls, inputs, **options) -> AuditOptions:
        """The options for ``reading.source.Input`` values: their names, and their keys as the
        ``KeySpec`` they carry for workers (``Input.for_worker``: the key files' paths, never key
        bytes in the options, an argv or a log). An option given as None takes the job's default
        (``max_findings`` / ``max_series``: 1000 brought to the driver)."""
        sent = [i.for_worker() for i in inputs]
        return cls(tuple(i.name for i in sent), spec=next((i.keys for i in sent if i.keys is not None), None),
                   **{k: v for k, v in options.items() if v is not None})


def parse(argv: list[str]) -> AuditOptions | int:
    """argv as ``binlogkit audit`` spells it; an int: the exit code of key files that fail."""
    from binlogkit.argv import ArgumentParser

    ap = ArgumentParser(prog="binlogkit-audit-job", description=__doc__,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-o", "--output", help="folder for findings.parquet, summary.json and report.html")
    ap.add_argument("--report", help="also write the HTML report here (binlogkit/report)")
    ap.add_argument("--json", action="store_true", help="print findings and summary as JSON")
    ap.add_argument("--live", "--may-be-active", action="store_true",
                    help="the last file of a series may still be written by a server: a torn tail is a warning")
    ap.add_argument("--max-findings", type=int, default=1000,
                    help="findings brought to the driver (all are in findings.parquet); 0: all")
    ap.add_argument("--max-series", type=int, default=1000,
                    help="per-series records brought to the driver (all are in series.parquet); 0: all")
    ap.add_argument("--key-file", default=os.environ.get("BINLOGKIT_KEY_FILE"),
                    help="MariaDB file_key_management key file (a path on the workers, or shipped with --files)")
    ap.add_argument("--key-file-secret-file", help="the secret of an encrypted key file (or BINLOGKIT_KEY_FILE_SECRET "
                    "in the executors' environment; never in Spark configuration)")
    ap.add_argument("--cipher", choices=["AES_CBC", "AES_CTR"])
    ap.add_argument("--keyring-file", help="MySQL keyring (component_keyring_file JSON or keyring_file)")
    args = ap.parse_args(argv)
    spec = None
    if args.key_file or args.keyring_file:
        from binlogkit.crypto.keys import KeySpec, load_keys
        from binlogkit.errors import BinlogError

        try:  # fail fast on the driver when the keys are here (they need not be: --files)
            if all(os.path.exists(p) for p in (args.key_file, args.keyring_file) if p):
                load_keys(args.key_file, secret_file=args.key_file_secret_file, cipher=args.cipher,
                          keyring_file=args.keyring_file)
        except BinlogError as exc:
            print(f"binlogkit-audit-job: {exc}", file=sys.stderr)
            return 2
        spec = KeySpec(args.key_file, args.key_file_secret_file, args.cipher, args.keyring_file)
    return AuditOptions(tuple(args.paths), output=args.output, report=args.report, as_json=args.json,
                        live=args.live, max_findings=args.max_findings, max_series=args.max_series, spec=spec)


def main(spark, argv: list[str]) -> int:
    opts = parse(argv)
    return opts if isinstance(opts, int) else run(spark, opts)


def run(spark, opts: AuditOptions) -> int:
    """The job on ``spark``: the audit, its files written (``output.py``), the result printed;
    the exit code as ``binlogkit audit``."""
    from binlogkit._optional import MissingDependency
    from binlogkit.audit.output import pages, write_summary
    from binlogkit.errors import NotRegularFileError, StorageError

    try:
        result = audit(spark, list(opts.paths), live=opts.live, output=opts.output, max_findings=opts.max_findings,
                       max_series=opts.max_series, spec=opts.spec)
        if result is not None and opts.output:
            write_summary(result, opts.output)
    except (StorageError, MissingDependency, NotRegularFileError) as exc:  # the store refused or failed; s3fs
        # missing; a FIFO, a device or a socket among the inputs (refused: reading it could block or read nothing)
        print(f"binlogkit-audit-job: {exc}", file=sys.stderr)
        return 2
    if result is None:
        print("binlogkit-audit-job: no binlog or relay-log files under the given paths", file=sys.stderr)
        return 2
    try:
        for where in pages(opts.output, opts.report):
            _write_report(result, where)
    except StorageError as exc:
        print(f"binlogkit-audit-job: {exc}", file=sys.stderr)
        return 2
    if opts.as_json:
        print(json.dumps(result, indent=1, default=str))
    else:
        from binlogkit.audit.render import table

        for line in table(result):
            print(line)
    return 1 if result["counts"]["error"] else 0


def run_here(opts: AuditOptions, jobs: int | None = None) -> int:
    """``run`` in Spark local mode on this machine (``binlogkit audit --engine spark``)."""
    spark = session(f"local[{jobs}]" if jobs else None)
    try:
        return run(spark, opts)
    finally:
        spark.stop()


def _write_report(result: dict, where: str) -> None:
    """The HTML report (binlogkit/report) of the driver's result: its findings are the first
    --max-findings; the timelines and coverage come from every file's summary."""
    try:
        import jinja2  # noqa: F401  (the template engine)
    except ImportError as exc:  # a driver without jinja2
        print(f"binlogkit-audit-job: no report.html ({exc})", file=sys.stderr)
        return
    from binlogkit.audit.output import write_report

    write_report(result, where)


def session(master: str | None = None):
    """A SparkSession: ``master`` or whatever spark-submit configured (local[*] by default)."""
    from pyspark.sql import SparkSession

    from binlogkit.spark.start import FORCED, master_of

    b = SparkSession.builder.appName("binlogkit-audit")
    chosen = master_of(master)   # none: spark-submit's
    if chosen:
        b = b.master(chosen)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for k, v in FORCED.items():
        b = b.config(k, v)
    return b.getOrCreate()


def run_as_script(job_main, rdd_only: bool = False) -> None:
    """A job module's ``__main__`` under spark-submit: ``job_main(spark, sys.argv[1:])`` in a
    :func:`session` (``rdd_only``: a ``SparkContext`` alone, ``spark.start.context``), stopped
    afterwards; its return value is the exit status."""
    if rdd_only:
        from binlogkit.spark.start import context

        spark = context(app="binlogkit-mirror")
    else:
        spark = session()
    try:
        rc = job_main(spark, sys.argv[1:])
    finally:
        spark.stop()
    sys.exit(rc)


if __name__ == "__main__":
    run_as_script(main)

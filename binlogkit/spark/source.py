"""``spark.read.format("binlog")``: the glue between PySpark's Python Data Source API and
``tables.py`` (docs/spark.md)::

    from binlogkit.spark import register
    register(spark)
    df = (spark.read.format("binlog").option("table", "changes")
          .option("key_file", "/etc/mysql/keys.txt")          # a PATH; read where the file is read
          .load("s3://archive/binlogs/"))

Options: ``table`` (events | transactions | changes | summaries; default events); ``paths``
(comma-separated, or ``load(path)``); ``recursive`` (folders all the way down, as the audit);
``changes_table`` (db.table: that table's typed export columns instead of the long form);
``tables`` (changes: db.table patterns, comma-separated); ``types`` (events: type names or
codes); ``batch_rows`` (8192; changes 65,536); ``split_bytes`` (files above it are read as ranges of whole
transactions, one partition each; 64 MiB, 0: never); the key options ``key_file``, ``key_file_secret_file``, ``cipher``,
``keyring_file`` (paths: the keys are loaded on each executor, never carried in the plan);
``fields`` (events, false: header fields only, no body decoded: ``name`` and ``fields``
null, payloads' inner events not listed); ``bounds_cache`` (a local folder: each file's least and
greatest event timestamp, walked once on the driver and kept by the file's size and mtime or
ETag, prunes ``events.timestamp`` and ``transactions.first_timestamp`` both ways:
``files.time_bounds``); ``pushdown`` (false: no file pruning, for comparisons); ``trace`` (a local file that gets one
line per file whose events are read).

Partitions are files (``files.plan_files``, binlog order), big ones ranges of whole
transactions (``files.split``). ``pushFilters`` keeps every filter for Spark to evaluate again and uses those it understands to prune whole files by their heads
(``files.bounds``: ``timestamp``-like columns ``>=``/``>``/``=`` a value; ``gtid`` ``=`` /
``IN``) and to filter rows inside each file (and, for ``type`` / ``type_code``, ``db`` / ``table``,
which events or tables are decoded at all).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql.datasource import (DataSource, DataSourceReader, EqualTo, GreaterThan, GreaterThanOrEqual, In,
                                    InputPartition, LessThan, LessThanOrEqual)

from . import common as T

if TYPE_CHECKING:
    from .files import FileTask

# Imports: this module is what every Python worker of the source unpickles first (the schema,
# the planning, each read); what a step alone needs is imported in it (the files' plan, one
# table's reader), so the schema worker imports no reading code and a read no other table's.

_KEY_OPTIONS = ("key_file", "key_file_secret_file", "cipher", "keyring_file")
_TIME_COLUMNS = {"events": ("timestamp",), "transactions": ("first_timestamp",), "changes": ("commit_time",)}
_TIME_PRUNES = {"events": ("timestamp",), "transactions": ("first_timestamp", "last_timestamp"),
                "changes": ("commit_time",)}
# columns whose every value is the header timestamp of an event of the row's own file: the bounds
# cache (files.time_bounds) prunes them both ways (a transaction's last event, and so a change's
# commit time, may be in the next file of a relay log: not these)
_CACHE_PRUNES = {"events": ("timestamp",), "transactions": ("first_timestamp",)}


class FilePartition(InputPartition):
    """One file of the plan (a ``FileTask``: name, size, key PATHS)."""

    def __init__(self, task: FileTask) -> None:
        super().__init__(task.index)
        self.task = task

    def __repr__(self) -> str:
        at = "" if self.task.whole() else f", {self.task.start}..{self.task.stop}"
        return f"FilePartition({self.task.index}, {self.task.name!r}{at})"


def _spec(options):
    from ..crypto.keys import KeySpec

    vals = [options.get(k) for k in _KEY_OPTIONS]
    if not any(vals[i] for i in (0, 3)):
        return None
    return KeySpec(vals[0], vals[1], vals[2], vals[3])


def _shipped(path: str) -> str:
    """A key file not at its path on this executor: the copy ``spark.addFile`` / ``--files``
    shipped."""
    import os

    from pyspark import SparkFiles

    return SparkFiles.get(os.path.basename(path))


def _seconds(v) -> float | None:
    if isinstance(v, _dt.datetime):
        return (v if v.tzinfo else v.replace(tzinfo=_dt.timezone.utc)).timestamp()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return None


class BinlogDataSource(DataSource):
    """The ``binlog`` format. Holds only strings (options: paths, key FILE paths)."""

    @classmethod
    def name(cls) -> str:
        return "binlog"

    def _table(self) -> str:
        t = (self.options.get("table") or "events").lower()
        T.schema(t if t != "changes" else "changes")   # ValueError names the tables
        return t

    def _paths(self) -> list[str]:
        given = self.options.get("paths") or self.options.get("path") or ""
        out = [p.strip() for p in given.split(",") if p.strip()]
        if not out:
            raise ValueError("binlog: give the archive: load(PATH) or option('paths', 'A,B')")
        return out

    def schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(self._arrow_schema())

    def _arrow_schema(self):
        table = self._table()
        one = self.options.get("changes_table")
        if table == "changes" and one:
            return self._typed(one)
        return T.schema(table)

    def _typed(self, one: str):
        tasks = self._tasks()
        from .changes import first_layout, typed_schema

        found = first_layout(tasks, one)
        if found is None:
            raise ValueError(f"binlog: no change of {one} in the archive (changes_table)")
        return typed_schema(found)

    def _tasks(self) -> list[FileTask]:
        from .files import plan_files

        return plan_files(self._paths(), keys=_spec(self.options),
                          recursive=(self.options.get("recursive") or "").lower() == "true")

    def reader(self, schema) -> "BinlogReader":
        return BinlogReader(self, schema)


class BinlogReader(DataSourceReader):
    """Plans the files, prunes them by the pushed filters, reads one file per partition."""

    def __init__(self, source: BinlogDataSource, schema) -> None:
        o = source.options
        table = source._table()
        types = None
        if o.get("types"):
            from ..decoding import event_types

            types = frozenset(event_types((o["types"],)) or ())
        self.tasks = source._tasks()
        self.pushdown = (o.get("pushdown") or "true").lower() != "false"
        self.split_bytes = int(o.get("split_bytes") or 64 << 20)
        self.prune_time: float | None = None   # files whose events all precede it are skipped
        self.cache = o.get("bounds_cache") or None   # a folder: files.time_bounds
        self.cache_low: float | None = None    # with the cache: files whose events all precede it go
        self.cache_high: float | None = None   # ... and those whose events all follow it
        typed = source._arrow_schema() if table == "changes" and o.get("changes_table") else None
        rows = int(o.get("batch_rows") or (T.CHANGES_BATCH_ROWS if table == "changes" else T.BATCH_ROWS))
        self.query = T.Query(table, batch_rows=rows, types=types,
                             tables=tuple(x.strip() for x in (o.get("tables") or "").split(",") if x.strip()),
                             changes_table=o.get("changes_table"), trace=o.get("trace"), typed=typed,
                             fields=(o.get("fields") or "true").lower() != "false")
        from pyspark.sql.pandas.types import to_arrow_schema

        self.target = to_arrow_schema(schema, timezone="UTC")

    def pushFilters(self, filters):
        q = self.query
        times = _TIME_PRUNES.get(q.table, ())
        cached = _CACHE_PRUNES.get(q.table, ())
        for f in filters:
            col = f.attribute[0] if len(f.attribute) == 1 else None
            if col in cached and isinstance(f, (LessThan, LessThanOrEqual, EqualTo, GreaterThan, GreaterThanOrEqual)):
                t = _seconds(f.value)
                if t is not None:   # whole seconds, rounded away from pruning: headers hold whole seconds
                    import math

                    if isinstance(f, (LessThan, LessThanOrEqual, EqualTo)):
                        hi = float(math.ceil(t))
                        self.cache_high = hi if self.cache_high is None else min(self.cache_high, hi)
                    if isinstance(f, (GreaterThan, GreaterThanOrEqual, EqualTo)):
                        lo = float(math.floor(t))
                        self.cache_low = lo if self.cache_low is None else max(self.cache_low, lo)
            if col in times and isinstance(f, (GreaterThan, GreaterThanOrEqual, EqualTo)):
                t = _seconds(f.value)
                if t is not None:
                    t = float(int(t))    # whole seconds: a > on a fraction keeps its second
                    if col in _TIME_COLUMNS.get(q.table, ()):
                        q = replace(q, min_timestamp=t if q.min_timestamp is None else max(q.min_timestamp, t))
                    self.prune_time = t if self.prune_time is None else max(self.prune_time, t)
            elif col == "gtid" and isinstance(f, (EqualTo, In)) and q.table != "summaries":
                vals = frozenset([f.value] if isinstance(f, EqualTo) else f.value)
                if all(isinstance(v, str) for v in vals):
                    q = replace(q, gtids=vals if q.gtids is None else q.gtids & vals)
            elif q.table == "events" and col in ("type", "type_code") and isinstance(f, (EqualTo, In)):
                names = [f.value] if isinstance(f, EqualTo) else list(f.value)
                try:
                    from ..decoding import event_types

                    codes = frozenset(event_types(tuple(str(v) for v in names)) or ())
                except ValueError:
                    codes = None
                if codes is not None:
                    q = replace(q, types=codes if q.types is None else q.types & codes)
            elif q.table == "changes" and not q.changes_table and col in ("db", "table") and isinstance(f, EqualTo):
                if isinstance(f.value, str):
                    q = replace(q, tables=q.tables + ((f"{f.value}.*" if col == "db" else f"*.{f.value}"),))
            yield f     # Spark evaluates every filter again: pruning here is only ever a saving
        self.query = q

    def partitions(self):
        """The kept files; those above ``split_bytes`` (64 MiB; 0: never) as ranges of whole
        transactions (``files.split``: a header walk on the driver). Summaries stay per file."""
        from .files import split

        every = self.split_bytes if self.query.table != "summaries" else 0
        return [FilePartition(p) for t in self.kept() for p in split(t, every)]

    def kept(self) -> list[FileTask]:
        """The files that can hold matching rows: all of them, or those the heads do not rule out."""
        q = self.query
        t = self.prune_time
        use_cache = self.cache is not None and (self.cache_low is not None or self.cache_high is not None)
        if not self.pushdown or (t is None and q.gtids is None and not use_cache):
            return list(self.tasks)
        out = list(self.tasks)
        if t is not None or q.gtids is not None:
            from .files import bounds, head

            heads = [head(task) for task in self.tasks]
            if q.trace:
                with open(q.trace, "a") as fh:
                    fh.writelines(f"head\t{task.name}\n" for task in self.tasks)
            out = []
            for task, b in zip(self.tasks, bounds(self.tasks, heads)):
                if t is not None and not b.may_have_timestamp_at_least(t):
                    continue
                if q.gtids is not None and not any(b.may_have_gtid(g) for g in q.gtids):
                    continue
                out.append(task)
        if use_cache:
            from .events import walk_bounds
            from .files import time_bounds

            assert self.cache is not None
            kept = []
            for task in out:
                tb = time_bounds(task, self.cache, walk_bounds, trace=q.trace)
                if tb is not None and tb.min_timestamp is not None and tb.max_timestamp is not None:
                    if self.cache_high is not None and tb.min_timestamp > self.cache_high:
                        continue
                    if self.cache_low is not None and tb.max_timestamp < self.cache_low:
                        continue
                if tb is not None and tb.events == 0:
                    continue
                kept.append(task)
            out = kept
        return out

    def read(self, partition):
        q = self.query if self.pushdown else replace(self.query, min_timestamp=None, gtids=None)
        from .tables import batches

        for rb in batches(q, partition.task, resolve=_shipped):
            yield rb if rb.schema.equals(self.target) else rb.cast(self.target)

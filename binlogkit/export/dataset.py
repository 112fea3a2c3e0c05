"""The partitioned Parquet writer: ``Rows`` and ``Statement`` values in, part files out.

Layout under the output root (hive partitions)::

    db=DB/table=T/date=YYYY-MM-DD/part-TTTTT-SSSSSS-VERSION.parquet   one schema version per file
    _statements/part-TTTTT-SSSSSS.parquet                               statement-format DML, DDL
    _schemas/part-TTTTT.parquet                                         where each version starts
    _SUCCESS                                                            the summary, written last

``TTTTT`` is the task (0 for the one-process export, the input's number in the Spark job),
``SSSSSS`` a counter of the task. The date is the commit time's (UTC). A part holds at most
``part_rows`` rows, in row groups of ``row_group_rows``: memory holds at most one row group
per open part, and a row group is flushed at ``row_group_rows`` rows or ``row_group_bytes``
of row events (all buffers together at ``buffer_bytes``): memory does not follow the archive,
nor the width of its rows.
"""

from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..rowvalues.arrowcols import C_ROWARROW, ImageRows
from .changes import Rows, Statement, op_of
from .output import join
from .schema import Layout, layout

STATEMENT_COLUMNS = ("gtid", "server_id", "commit_time", "file", "offset", "database", "sql")
SCHEMA_COLUMNS = ("db", "table", "schema_version", "column_names", "columns", "first_gtid", "first_commit_time",
                  "first_file", "first_offset")


def _utc(ts: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)


@dataclass
class _Part:
    layout: Layout
    path: str
    writer: Any = None
    rows: int = 0
    cols: dict[str, list] = field(default_factory=dict)
    buffered: int = 0
    buffered_bytes: int = 0
    builder: Any = None           # the C Arrow path's buffers (``_rowarrow.Builder``), for rows kept as images
    plan: Any = None              # the ArrowPlan the builder's rows were made by
    runs: list = field(default_factory=list)      # the builder's rows: per event (n, op, gtid, ..., row_index)
    chunks: list = field(default_factory=list)    # pyarrow Tables of the row group, in binlog order


class DatasetWriter:
    def __init__(self, fs, root: str, *, task: int = 0, row_group_rows: int = 50_000,
                 row_group_bytes: int = 8 << 20, buffer_bytes: int = 32 << 20,
                 part_rows: int = 5_000_000, max_open: int = 32, compression: str = "snappy") -> None:
        self.fs, self.root, self.task = fs, root, task
        self.row_group_rows, self.part_rows, self.max_open = row_group_rows, part_rows, max_open
        self.row_group_bytes, self.buffer_bytes = row_group_bytes, buffer_bytes
        self.buffered_bytes = 0
        self.compression = compression
        self.parts: dict[tuple, _Part] = {}
        self.seq = 0
        self.written: list[str] = []
        self.counts: Counter = Counter()              # (db.table, op) -> rows
        self.statements: dict[str, list] = {c: [] for c in STATEMENT_COLUMNS}
        self.n_statements = 0
        self.last_version: dict[tuple[str, str], str] = {}
        self.schemas: list[dict] = []                 # version transitions, in binlog order
        self.files: list[str] = []                    # inputs met (the ``file`` column)
        self.buffered = 0
        self.dates: dict[int, str] = {}               # UTC day number -> its date (the partition value)
        self.names: dict[str, str] = {}               # input path -> its name (the ``file`` column)

    # -- rows ------------------------------------------------------------------------------------
    def add(self, item: Rows | Statement) -> None:
        if isinstance(item, Statement):
            self._statement(item)
        else:
            self._rows(item)

    def take(self, r: Rows) -> bool:
        """``committed_changes``' ``take``: a rows event's images (an uncounted ``ImageRows``)
        appended to the C builder of the part they go to, when that part is open with a builder
        of their plan and no Python rows after it; True then (``add`` comes next with them and
        only does the bookkeeping), else False (nothing appended)."""
        rows = r.rows
        if not isinstance(rows, ImageRows):
            return False
        lay = layout(r.table)
        day = r.trx.last_timestamp // 86400
        date = self.dates.get(day)
        part = None if date is None else self.parts.get((lay.db, lay.table, date, lay.version))
        if part is None or part.builder is None or part.plan is not rows.plan or part.cols["op"]:
            return False
        n = part.builder.add(*rows.arrow)
        if n < 0:
            return False
        rows.n, rows.taken = n, True
        return True

    def _rows(self, r: Rows) -> None:
        lay = layout(r.table)
        t = r.trx
        key_t = (lay.db, lay.table)
        if self.last_version.get(key_t) != lay.version:
            self.last_version[key_t] = lay.version
            self.schemas.append({"db": lay.db, "table": lay.table, "schema_version": lay.version,
                                 "column_names": lay.names_from, "columns": lay.describe(), "first_gtid": t.gtid,
                                 "first_commit_time": _utc(t.last_timestamp), "first_file": r.file.rsplit("/", 1)[-1],
                                 "first_offset": r.offset})
        day = t.last_timestamp // 86400
        date = self.dates.get(day)
        if date is None:
            date = self.dates[day] = _utc(t.last_timestamp).date().isoformat()
        key = (lay.db, lay.table, date, lay.version)
        part = self.parts.get(key)
        if part is None:
            part = self._open(key, lay)
        op = op_of(r.type_code)
        n = len(r.rows)
        if not (isinstance(r.rows, ImageRows) and self._arrow_rows(part, r, op, n)):
            self._python_rows(part, lay, r, op, n)
        part.buffered += n
        self.buffered += n
        part.buffered_bytes += r.size
        self.buffered_bytes += r.size
        self.counts[(f"{lay.db}.{lay.table}", op)] += n
        self._limits(key, part)

    def _limits(self, key: tuple, part: _Part) -> None:
        """After rows went to ``part``: its row group written at ``row_group_rows`` /
        ``row_group_bytes``, else the biggest at the writer's limits."""
        if part.buffered >= self.row_group_rows or part.buffered_bytes >= self.row_group_bytes:
            self._flush(key, part)
        elif self.buffered >= 4 * self.row_group_rows or self.buffered_bytes >= self.buffer_bytes:
            big = max(self.parts.items(), key=lambda kv: kv[1].buffered_bytes)
            self._flush(*big)

    # -- the C walk (export.changes._Walk._replay_run, _rowarrow.replay_run) ----------------------
    def c_target(self, r: Rows) -> list | None:
        """After ``add(r)`` of a rows event ``take`` appended: the list the C walk appends the
        next rows events of the same table (and day) with, as ``take`` and ``_rows`` would: the
        part's builder and plan, the table's width, the part's runs, the rows / bytes / per-op
        counts added since ``c_apply`` and the part's at that time, then the part, its key, the
        counts' name, the (source) table and the part's plan. None when the next event would not go that way (the part closed or
        holding Python rows, another schema version in between)."""
        rows = r.rows
        assert isinstance(rows, ImageRows)
        lay = layout(r.table)
        date = self.dates.get(r.trx.last_timestamp // 86400)
        key = (lay.db, lay.table, date, lay.version)
        part = self.parts.get(key)
        if part is None or part.builder is None or part.plan is not rows.plan or part.cols["op"] \
                or self.last_version.get((lay.db, lay.table)) != lay.version:
            return None
        return [part.builder, rows.arrow[0], len(rows.table.columns), part.runs, 0, 0, None, None, None,
                part.buffered, part.buffered_bytes, part, key, f"{lay.db}.{lay.table}", rows.table, part.plan]

    def c_refresh(self, targets: dict, flushed: bool = False) -> None:
        """After the Python path put events into the writer, or a flush (``flushed``): the
        targets that still hold as ``c_target`` would make them now (their part open with the
        same builder and plan, no Python rows in it, its table at that schema version), with the
        part's runs and counts of now; the others dropped (their next event goes the Python
        way, which makes its target again). ``c_apply`` done before."""
        parts, last = self.parts, self.last_version
        for k, tg in list(targets.items()):
            key = tg[12]
            part = parts.get(key)
            if part is None or part is not tg[11] or part.builder is not tg[0] or part.plan is not tg[15] \
                    or part.cols["op"] or last.get((key[0], key[1])) != key[3]:
                del targets[k]
                continue
            tg[3], tg[9], tg[10] = part.runs, part.buffered, part.buffered_bytes

    def c_state(self) -> list:
        """The writer's counters and limits, as ``_rowarrow.replay_run`` reads them."""
        return [self.buffered, self.buffered_bytes, self.row_group_rows, self.row_group_bytes,
                4 * self.row_group_rows, self.buffer_bytes]

    def c_apply(self, targets: dict) -> None:
        """What the C walk appended through ``targets`` into the parts' and the writer's
        counters (as ``_rows`` counts each event)."""
        for tg in targets.values():
            n, size = tg[4], tg[5]
            if n or size or tg[6] is not None or tg[7] is not None or tg[8] is not None:
                part = tg[11]
                part.buffered += n
                self.buffered += n
                part.buffered_bytes += size
                self.buffered_bytes += size
                for i, op in ((6, "insert"), (7, "update"), (8, "delete")):
                    if tg[i] is not None:
                        self.counts[(tg[13], op)] += tg[i]
                tg[4:11] = [0, 0, None, None, None, part.buffered, part.buffered_bytes]
                if part.runs is not tg[3]:
                    raise AssertionError("the C walk's target outlived its part's runs")

    def c_flush(self, target: list) -> None:
        """After the C walk stopped at a limit (``c_apply`` done): the flush ``_rows`` makes."""
        self._limits(target[12], target[11])

    def _arrow_rows(self, part: _Part, r: Rows, op: str, n: int) -> bool:
        """The rows of an ``ImageRows`` event into the part's C builder (its Python rows before
        them made a chunk first); False when the builder does not take them (the Python path)."""
        rows = r.rows
        assert isinstance(rows, ImageRows)
        if rows.taken:  # in the part's builder already (``take``)
            self._run(part, r, op, n)
            return True
        if part.cols["op"]:
            self._python_chunk(part)
        if part.builder is None or part.plan is not rows.plan:
            if part.plan is None or part.plan.widths != rows.plan.widths:
                self._arrow_chunk(part)
                part.builder = C_ROWARROW.Builder(rows.plan.widths)
            part.plan = rows.plan
        if part.builder.add(*rows.arrow) != n:
            return False
        self._run(part, r, op, n)
        return True

    def _run(self, part: _Part, r: Rows, op: str, n: int) -> None:
        """The metadata of ``n`` rows appended to the part's builder."""
        if n:
            t = r.trx
            name = self.names.get(r.file)
            if name is None:
                name = self.names[r.file] = r.file.rsplit("/", 1)[-1]
            part.runs.append((n, op, t.gtid, t.server_id, t.last_timestamp, name, r.offset, r.row_index))

    def _arrow_chunk(self, part: _Part) -> None:
        """The C builder's rows as a pyarrow Table (a chunk of the row group)."""
        if part.builder is None or not part.builder.rows:
            return
        from array import array

        import pyarrow as pa

        n, bufs = part.builder.finish()
        runs, part.runs = part.runs, []
        schema = part.layout.schema
        counts = array("q", [run[0] for run in runs]).tobytes()
        arrays: dict[str, Any] = {}
        # the per-event columns: each event's value repeated over its rows, by C (row_index counting up)
        for k, (name, kind) in enumerate((("op", "s"), ("gtid", "s"), ("server_id", "I"), ("commit_time", "q"),
                                          ("file", "s"), ("offset", "q"), ("row_index", "r"))):
            valid, nulls, offsets, data = C_ROWARROW.repeat(counts, [run[k + 1] for run in runs], kind)
            vb = None if valid is None else pa.py_buffer(valid)
            mid = [] if offsets is None else [pa.py_buffer(offsets)]
            arrays[name] = pa.Array.from_buffers(schema.field(name).type, n, [vb, *mid, pa.py_buffer(data)],
                                                 null_count=nulls)
        arrays["schema_version"] = pa.repeat(pa.scalar(part.layout.version, pa.string()), n)
        width = len(part.layout.columns)
        for i, (valid, nulls, offsets, data) in enumerate(bufs):
            side, k = ("before", "after")[i // width], i % width
            spec = part.layout.columns[k]
            name = f"{side}_{spec.name}"
            typ = schema.field(name).type
            vb = None if valid is None else pa.py_buffer(valid)
            db = pa.py_buffer(data or b"")
            if pa.types.is_list(typ):  # VECTOR: float32 items, their offsets counted in bytes by C
                items = pa.Array.from_buffers(typ.value_type, len(db) // 4, [None, db])
                arrays[name] = pa.Array.from_buffers(typ, n, [vb, pa.py_buffer(C_ROWARROW.quarter(offsets))],
                                                     null_count=nulls, children=[items])
            elif offsets is not None:
                arrays[name] = pa.Array.from_buffers(typ, n, [vb, pa.py_buffer(offsets), db], null_count=nulls)
            else:
                arrays[name] = pa.Array.from_buffers(typ, n, [vb, db], null_count=nulls)
            if spec.text_companion:
                arrays[name + "__text"] = pa.nulls(n, pa.string())
        part.chunks.append(pa.Table.from_arrays([arrays[f] for f in schema.names], schema=schema))

    def _python_chunk(self, part: _Part) -> None:
        """The Python path's buffered rows as a pyarrow Table (a chunk of the row group)."""
        if not part.cols["op"]:
            return
        part.chunks.append(_table(part.cols, part.layout.schema))
        for v in part.cols.values():
            v.clear()

    def _python_rows(self, part: _Part, lay: Layout, r: Rows, op: str, n: int) -> None:
        self._arrow_chunk(part)
        cols = part.cols
        t = r.trx
        cols["op"].extend([op] * n)
        cols["gtid"].extend([t.gtid] * n)
        cols["server_id"].extend([t.server_id] * n)
        cols["commit_time"].extend([t.last_timestamp] * n)  # seconds: Arrow takes them as timestamp[s] as they are
        cols["file"].extend([r.file.rsplit("/", 1)[-1]] * n)
        cols["offset"].extend([r.offset] * n)
        cols["row_index"].extend(range(r.row_index, r.row_index + n))
        cols["schema_version"].extend([lay.version] * n)
        width = len(lay.columns)
        for side in ("before", "after"):
            images = [row[side] for row in r.rows]
            missing = images.count(None)
            if missing == n:
                nones = [None] * n
                for name in lay.side_names[side]:
                    cols[name].extend(nones)
                continue
            if not missing and set(map(len, images)) == {width}:
                # whole images (binlog_row_image=FULL): columns by transposing, no lookups
                by_col = list(zip(*images))
                for k, spec in enumerate(lay.columns):
                    conv, text = lay.converters[k]
                    pairs = by_col[k]
                    if conv is None:
                        cols[f"{side}_{spec.name}"].extend([None if p[1] is None else p[1][0] for p in pairs])
                    else:
                        cols[f"{side}_{spec.name}"].extend([None if p[1] is None else conv(p[1]) for p in pairs])
                    if text is not None:
                        cols[f"{side}_{spec.name}__text"].extend([None if p[1] is None else text(p[1]) for p in pairs])
                continue
            for k, spec in enumerate(lay.columns):  # partial images (MINIMAL, NOBLOB): column by column
                conv, text = lay.converters[k]
                values: list = [None] * n
                texts: list | None = [None] * n if text is not None else None
                for i, img in enumerate(images):
                    if img is None:
                        continue
                    v = _at(img, k, width)
                    if v is None:
                        continue
                    values[i] = v.value if conv is None else conv(v)
                    if texts is not None and text is not None:
                        texts[i] = text(v)
                cols[f"{side}_{spec.name}"].extend(values)
                if texts is not None:
                    cols[f"{side}_{spec.name}__text"].extend(texts)

    def _open(self, key: tuple, lay: Layout) -> _Part:
        if len(self.parts) >= self.max_open:
            oldest = next(iter(self.parts))
            self._close(oldest)
        db, table, date, version = key
        self.seq += 1
        path = join(self.root, f"db={_part_value(db)}", f"table={_part_value(table)}", f"date={date}",
                    f"part-{self.task:05d}-{self.seq:06d}-{version}.parquet")
        part = _Part(lay, path, cols={name: [] for name in lay.schema.names})
        self.parts[key] = part
        return part

    def _flush(self, key: tuple, part: _Part) -> None:
        self._write(part)
        if part.rows >= self.part_rows:
            self._close(key)

    def _write(self, part: _Part) -> None:
        """The buffered rows as one row group of the part (opened on its first write)."""
        tbl = self._row_group(part)
        if tbl is None:
            return
        import pyarrow.parquet as pq

        if part.writer is None:
            self.fs.makedirs(part.path.rsplit("/", 1)[0], exist_ok=True)
            part.writer = pq.ParquetWriter(part.path, part.layout.schema, filesystem=_arrow_fs(self.fs),
                                           compression=self.compression, **encodings(part.layout))
            self.written.append(part.path)
        part.writer.write_table(tbl, row_group_size=self.row_group_rows)

    def _row_group(self, part: _Part):
        """The part's buffered rows as one pyarrow Table (None: nothing buffered), taken off
        the buffers."""
        if not part.buffered:
            return None
        import pyarrow as pa

        self._python_chunk(part)
        self._arrow_chunk(part)
        chunks, part.chunks = part.chunks, []
        tbl = chunks[0] if len(chunks) == 1 else pa.concat_tables(chunks)
        part.rows += part.buffered
        self.buffered -= part.buffered
        self.buffered_bytes -= part.buffered_bytes
        part.buffered = part.buffered_bytes = 0
        return tbl

    def _close(self, key: tuple) -> None:
        part = self.parts.pop(key)
        self._write(part)
        if part.writer is not None:
            part.writer.close()

    # -- statements --------------------------------------------------------------------------------
    def _statement(self, s: Statement) -> None:
        t = s.trx
        st = self.statements
        st["gtid"].append(t.gtid)
        st["server_id"].append(t.server_id)
        st["commit_time"].append(_utc(t.last_timestamp))
        st["file"].append(s.file.rsplit("/", 1)[-1])
        st["offset"].append(s.offset)
        st["database"].append(s.database)
        st["sql"].append(s.sql)
        self.n_statements += 1
        if len(st["sql"]) >= self.row_group_rows:
            self._flush_statements()

    def _flush_statements(self) -> None:
        if not self.statements["sql"]:
            return
        import pyarrow.parquet as pq

        self.seq += 1
        path = join(self.root, "_statements", f"part-{self.task:05d}-{self.seq:06d}.parquet")
        self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        pq.write_table(_table(self.statements, statements_schema()), path, filesystem=_arrow_fs(self.fs))
        self.written.append(path)
        for v in self.statements.values():
            v.clear()

    def close(self) -> None:
        """Every part whole (footer written); ``_statements`` flushed. ``_schemas`` is the
        caller's (it merges tasks): ``write_schemas``."""
        for key in list(self.parts):
            self._close(key)
        self._flush_statements()

    def abort(self) -> None:
        for part in self.parts.values():
            if part.writer is not None:
                try:
                    part.writer.close()
                except Exception:  # noqa: BLE001  (best effort on the way out; the run fails anyway)
                    pass
        self.parts.clear()

    def counts_json(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for (name, op), n in sorted(self.counts.items()):
            out.setdefault(name, {"insert": 0, "update": 0, "delete": 0})[op] = n
        return out


class BatchWriter(DatasetWriter):
    """The writer without files: each row group it would write is kept in ``ready`` as
    (layout, pyarrow Table) for ``change_batches`` to hand out; statements are dropped."""

    def __init__(self, *, row_group_rows: int = 50_000) -> None:
        super().__init__(None, "", row_group_rows=row_group_rows, part_rows=1 << 62)
        self.ready: list[tuple[Layout, Any]] = []

    def _write(self, part: _Part) -> None:
        tbl = self._row_group(part)
        if tbl is not None:
            self.ready.append((part.layout, tbl))

    def _close(self, key: tuple) -> None:
        self._write(self.parts.pop(key))

    def _statement(self, s: Statement) -> None:
        pass

    def c_refresh(self, targets: dict, flushed: bool = False) -> None:
        """As the writer's, but after a flush every target goes: the row group made is handed out
        before the walk goes on (the next rows event takes the Python path, which yields it)."""
        if flushed:
            targets.clear()
        else:
            super().c_refresh(targets)


def change_batches(paths, filters=None, report=None, *, batch_rows: int = 50_000):
    """The change rows of ``paths`` (paths or ``Input`` values, as ``committed_changes`` takes
    them) as pyarrow RecordBatches, without files: (``Layout``, RecordBatch) pairs, each batch
    at most ``batch_rows`` rows of one table version in the export layout's schema (the
    columns and values ``binlogkit export`` writes to its Parquet parts). A table's rows come
    in binlog order; tables interleave as their row groups fill. Rows events go straight
    into the C Arrow builders where the accelerator takes them (``take``), else through the
    Python converters. ``report`` (a ``changes.Report``) gets what was not exported."""
    from .changes import Filters, Report, committed_changes

    w = BatchWriter(row_group_rows=batch_rows)
    for item in committed_changes(paths, filters or Filters(), report if report is not None else Report(),
                                  take=w.take):
        w.add(item)
        while w.ready:
            lay, tbl = w.ready.pop(0)
            for batch in tbl.to_batches(max_chunksize=batch_rows):
                yield lay, batch
    w.close()
    for lay, tbl in w.ready:
        for batch in tbl.to_batches(max_chunksize=batch_rows):
            yield lay, batch


def _at(img: list, k: int, width: int):
    """Column ``k`` of an image: images list (index, Value) of the present columns in order."""
    if len(img) == width:
        pair = img[k]
        if pair[0] == k:
            return pair[1]
    for i, v in img:
        if i == k:
            return v
    return None


DICTIONARY_META = ("op", "gtid", "file", "schema_version")


def encodings(lay: Layout) -> dict:
    """``ParquetWriter`` options of a change part: dictionary encoding for the metadata's text
    columns and ENUM / SET labels (few distinct values), min/max statistics for every column
    but text and binary table columns (values of any size: their statistics and dictionary
    attempts were half of the writer's CPU, 0.3 s of 0.65 s on the 210 MB bench binlog, for
    1 MB more output); data pages v2 (``DATA_PAGE_VERSION``). The values written are the same
    either way."""
    big = {f"{side}_{c.name}{tail}" for c in lay.columns for side in ("before", "after")
           for tail in ("", "__text")
           if c.arrow in ("string", "binary", "large_string", "large_binary")}
    labels = [f"{side}_{c.name}" for c in lay.columns for side in ("before", "after")
              if c.source.upper().startswith(("ENUM", "SET")) and c.arrow == "string"]
    return {"use_dictionary": [*DICTIONARY_META, *labels],
            "write_statistics": [n for n in lay.schema.names if n not in big], "data_page_version": DATA_PAGE_VERSION}


# Data pages v2 (levels stored apart, uncompressed; only the values go through snappy): fewer
# bytes copied and compressed per page than v1, 0.2 s less of the writer's CPU on the 1 GB bench
# binlog for the same values. Read alike by pyarrow, DuckDB and Spark's Parquet readers (both
# its vectorized and row readers), which the export's readers are (tests/test_export.py).
DATA_PAGE_VERSION = "2.0"


def _part_value(name: str) -> str:
    """A partition value as hive writes it (``/``, ``=``, ``%`` and controls escaped)."""
    return "".join(f"%{ord(c):02X}" if c in "/=%\\:*?\"<>|" or ord(c) < 32 else c for c in name)


def _arrow_fs(fs):
    import pyarrow.fs as pafs

    proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if proto in ("file", "local"):
        return pafs.LocalFileSystem()
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs))


def _table(cols: dict, schema):
    import pyarrow as pa

    return pa.Table.from_pydict(cols, schema=schema)


def statements_schema():
    import pyarrow as pa

    return pa.schema([("gtid", pa.string()), ("server_id", pa.uint32()), ("commit_time", pa.timestamp("s", tz="UTC")),
                      ("file", pa.string()), ("offset", pa.int64()), ("database", pa.string()), ("sql", pa.string())])


def schemas_schema():
    import pyarrow as pa

    return pa.schema([("db", pa.string()), ("table", pa.string()), ("schema_version", pa.string()),
                      ("column_names", pa.string()), ("columns", pa.string()), ("first_gtid", pa.string()),
                      ("first_commit_time", pa.timestamp("s", tz="UTC")), ("first_file", pa.string()),
                      ("first_offset", pa.int64())])


def write_schemas(fs, root: str, rows: list[dict]) -> str:
    """``_schemas/part-00000.parquet``: one row per schema version start, in binlog order."""
    import pyarrow.parquet as pq

    path = join(root, "_schemas", "part-00000.parquet")
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    cols = {c: [r[c] for r in rows] for c in SCHEMA_COLUMNS}
    pq.write_table(_table(cols, schemas_schema()), path, filesystem=_arrow_fs(fs))
    return path


def rows_table(*items: Rows):
    """``Rows`` values of one table layout as the pyarrow Table their part gets (the export
    layout's schema): by the C Arrow path for each ``r.rows`` that is an ``ImageRows`` it takes,
    else by the Python converters."""
    import pyarrow as pa

    w = DatasetWriter(None, "")
    lay = layout(items[0].table)
    part = _Part(lay, "", cols={name: [] for name in lay.schema.names})
    for r in items:
        assert layout(r.table).version == lay.version, "rows_table takes the rows of one layout"
        op, n = op_of(r.type_code), len(r.rows)
        if not (isinstance(r.rows, ImageRows) and w._arrow_rows(part, r, op, n)):
            w._python_rows(part, lay, r, op, n)
    w._python_chunk(part)
    w._arrow_chunk(part)
    return pa.concat_tables(part.chunks) if part.chunks else lay.schema.empty_table()

"""What the executors of the mirror backfill run (``spark/jobs/mirror.py``; the pure rules:
``export.lake.backfill``).

``walk_task``: one partition (a file, or a range of whole transactions of a big one) walked by
export's own walk (``export.changes.committed_changes`` with the C walk: the framing taker and
the ``_rowarrow`` Arrow builders, each rows event's images appended in C; statements of every
database), until its first barrier. The rows go to export's writer without files
(``export.dataset.BatchWriter``, one part per table: binlog order kept), so the change rows are
export's (the same values, made lakehouse types by ``lake.types.to_lake``: what the local
mirror's ``lake.batch.TableBatch`` gives). A partial row image is what the builder marks in C
(``Builder.partial``). Per table it stages two Arrow IPC files under the staging folder: its
change rows, and its own fold per primary key, made column-wise from Arrow (``fold_arrow``: per
key the last row, or an entry marked ``__dead`` for a key deleted or moved away). What goes
back to the driver: paths, counts, schemas, the last transaction and the partition's GTIDs.

``keys_of`` / ``write_part``: the shuffle's two ends (a staged fold's keys out; the rows of a
staged file that won their key written as a data file of the table, its description back).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from ..export.changes import Filters
from .ranges import InRange

DEAD = "__dead"
FLUSH_ROWS = 100_000    # change rows of a table held in the C builders before they become an Arrow chunk
ONE_DAY = "-"           # the writer's one "date": a table's rows in one part, in binlog order


@dataclass(frozen=True)
class _Walk(InRange):
    """The partition's filters, statements of every database passing (an ALTER of a table
    exported may come from a session in another one) and every committed transaction told to
    ``seen`` (the GTID state)."""

    seen: Any = field(default=None, compare=False)

    def db_wanted(self, db: str) -> bool:
        return True


class _Days(dict):
    """The writer's dates: every commit day the one ``ONE_DAY`` (no split of a table by day)."""

    def get(self, key, default=None):
        return ONE_DAY


def _writer():
    """export's writer without files (``BatchWriter``), one part per table version."""
    from ..export.dataset import BatchWriter

    w = BatchWriter(row_group_rows=FLUSH_ROWS)
    w.dates = _Days()
    return w


class _Table:
    """What the walk counts of one table: its rows so far, those before the current transaction,
    and where its fold starts (after the last TRUNCATE)."""

    def __init__(self, item) -> None:
        from ..export.schema import layout

        lay = layout(item.table)
        self.lay = lay
        self.version = lay.version
        self.key = [lay.columns[k].name for k in item.table.primary_key] if item.table.primary_key else None
        self.n = 0
        self.trx: Any = None        # the transaction of its last rows
        self.before_trx = 0         # its rows before that transaction
        self.fold_from = 0          # the fold counts the rows from here (a TRUNCATE restarts it)
        self.first_at: dict | None = None

    def add(self, t, n: int) -> None:
        if t is not self.trx:
            self.trx, self.before_trx = t, self.n
        self.n += n

    def upto(self, t) -> int:
        """Its rows before the transaction ``t``."""
        return self.before_trx if t is not None and t is self.trx else self.n


def _partial(w, tab: _Table, ch) -> bool:
    """Whether the rows event ``ch``, just added to the writer ``w``, holds a partial after image:
    marked by the C builder it went to (``Builder.partial``: the partition stops at the first, so
    a builder holding one holds this event's), or, where it went the Python way, its images."""
    from ..rowvalues.arrowcols import ImageRows

    part = w.parts.get((tab.lay.db, tab.lay.table, ONE_DAY, tab.version))
    if part is None:
        return False
    if part.cols["op"]:   # the Python path's rows (the writer made a chunk of the builder's first)
        width = len(tab.lay.columns)
        rows = ch.rows.decoded() if isinstance(ch.rows, ImageRows) else ch.rows
        return any(r["after"] is not None and len(r["after"]) < width for r in rows)
    return part.builder is not None and part.builder.partial > 0


def walk_task(item: tuple[int, Any], *, staging: str, spec: dict, env: dict | None = None) -> dict:
    """One partition (``item``: its number and ``spark.files.FileTask``) walked to its first
    barrier; what it staged and met (see the module text)."""
    from ..export.changes import Report, Statement, committed_changes
    from ..export.lake.backfill import STOPS, barrier
    from ..export.lake.props import order_key
    from ..export.lake.snapshot import wanted as wanted_of
    from ..export.lake.state import Tracker
    from ..export.schema import layout
    from ..reading import storage

    storage.adopt(env)
    no, task = item
    tables = tuple(spec.get("tables") or ())
    wanted, db_wanted = wanted_of(tables), Filters(tables=tables).db_wanted
    skip = bool(spec.get("skip_statements"))
    gap = tuple(spec["gap"]) if spec.get("gap") else None
    noted: list[tuple[tuple, str]] = []

    def seen(t) -> None:
        if t.gtid:
            noted.append((order_key(t.end_file or t.start_file, t.end_offset or 0), t.gtid))
    inp = task.input()
    if not task.whole():
        inp = replace(inp, start=task.lead if task.lead is not None else task.start, stop=task.stop)
    schema = {}
    if spec.get("schema"):
        from ..export import ddl

        schema = ddl.index(ddl.parse(spec["schema"]))
    walk = _Walk(tables=tables, task=None if task.whole() else task, seen=seen, schema=schema)
    report = Report()
    w = _writer()
    tabs: dict[tuple[str, str], _Table] = {}
    stop: dict | None = None
    last: dict | None = None
    last_before: dict | None = None   # the last of the transactions before the current one
    skipped: dict[str, int] = {}
    truncated: set = set()   # tables a TRUNCATE emptied in this partition (their fold restarts)
    trx = None

    def where(t, file: str, offset: int, statement: str | None = None) -> dict:
        return {"gtid": t.gtid, "file": (file or "").rsplit("/", 1)[-1], "offset": offset, "statement": statement}
    for ch in committed_changes([inp], walk, report, take=w.take):
        t = ch.trx
        pos = order_key(t.end_file or t.start_file, t.end_offset or 0)
        if t is not trx:
            last_before = last
            trx = t
            if gap is not None and order_key(t.start_file, t.start_offset) >= gap:
                stop = {"kind": "gap", "table": "", **where(t, t.start_file, t.start_offset), "_pos": pos}
                break
        if isinstance(ch, Statement):
            from ..export.effects import shortened

            b = barrier(ch.sql, ch.database, t.alter, wanted, db_wanted, skip)
            if b is not None and b[0] == "skipped":
                skipped[b[1]] = skipped.get(b[1], 0) + 1
            elif b is not None and b[0] == "truncate":
                from ..export.effects import effects

                gone = effects(ch.sql, ch.database or None).emptied[0]
                truncated.add(gone)
                if gone in tabs:
                    tabs[gone].fold_from = tabs[gone].n
            elif b is not None:
                stop = {"kind": b[0], "table": b[1], **where(t, ch.file, ch.offset, shortened(ch.sql)), "_pos": pos}
                break
            last = _last(t, pos)
            continue
        lay = layout(ch.table)
        name = (lay.db, lay.table)
        tab = tabs.get(name)
        if tab is not None and tab.version != lay.version:
            stop = {"kind": "table version", "table": f"{lay.db}.{lay.table}", **where(t, ch.file, ch.offset),
                    "_pos": pos}
            break
        if tab is None:
            tab = tabs[name] = _Table(ch)
            tab.first_at = where(t, ch.file, ch.offset)
        w.add(ch)
        tab.add(t, len(ch.rows))
        if tab.key and _partial(w, tab, ch):
            stop = {"kind": "partial row image", "table": f"{lay.db}.{lay.table}", **where(t, ch.file, ch.offset),
                    "_pos": pos}
            break
        last = _last(t, pos)
    limit = stop["_pos"] if stop is not None else None
    if limit is not None and last is not None and tuple(last["_pos"]) >= limit:
        last = last_before   # (items of the barrier's own transaction before the barrier: not applied)
    w.close()
    out_tables = _stage(no, tabs, w.ready, trx if stop is not None else None, staging)
    trk = Tracker(None)
    upto = [g for p, g in noted if limit is None or p < limit]
    to_last = [g for p, g in noted if last is not None and p <= tuple(last["_pos"])]
    return {"task": no, "barrier": stop, "last": last, "tables": out_tables,
            "gtids": Tracker._text(*trk._fold(upto)), "gtids_to_last": Tracker._text(*trk._fold(to_last)),
            "transactions": report.transactions, "skipped_statements": skipped, "truncated": sorted(truncated),
            "problems": report.problems[:100], "incomplete": report.incomplete[:100],
            "stops_table": stop is not None and stop["kind"] in STOPS}


def _last(t, pos: tuple) -> dict:
    return {"gtid": t.gtid, "file": (t.end_file or t.start_file or "").rsplit("/", 1)[-1],
            "offset": t.end_offset or 0, "commit_time": t.last_timestamp, "_pos": pos}


def _stage(no: int, tabs: dict, ready: list, cut_trx: Any, staging: str) -> dict:
    """Each table's change rows (the writer's ``ready`` chunks, those of transactions before
    ``cut_trx`` when the partition stopped inside it) and its fold by key as Arrow IPC files under
    ``staging``; per table what the driver needs (paths, counts, schemas, key, version, first
    change)."""
    import pyarrow as pa

    from ..export.lake.types import to_lake

    chunks: dict[tuple[str, str], list] = {}
    for lay, tbl in ready:
        chunks.setdefault((lay.db, lay.table), []).append(tbl)
    root = staging.rstrip("/")
    out = {}
    for i, (name, tab) in enumerate(sorted(tabs.items())):
        keep = tab.upto(cut_trx)
        if not keep or name not in chunks:
            continue
        got = chunks[name]
        changes = to_lake((pa.concat_tables(got) if len(got) > 1 else got[0]).slice(0, keep))
        base = f"{root}/p{no:06d}-{i:05d}"
        _put(base + "-changes.arrow", changes)
        entry = {"db": name[0], "table": name[1], "version": tab.version, "key": tab.key,
                 "changes": base + "-changes.arrow", "changes_schema": changes.schema, "rows": changes.num_rows,
                 "first_at": tab.first_at, "mirror": None, "mirror_schema": None}
        if tab.key:
            folded = fold_arrow(changes, tab.key, min(tab.fold_from, keep))
            _put(base + "-mirror.arrow", folded)
            entry.update(mirror=base + "-mirror.arrow", mirror_schema=folded.schema.remove(
                folded.schema.get_field_index(DEAD)))
        out[name] = entry
    return out


def fold_arrow(changes, key: list[str], start: int = 0):
    """The fold by ``key`` of the change rows ``changes[start:]`` (a table of the export layout,
    in binlog order), column-wise: per key touched, its last row (the ``after_`` columns, prefix
    off, ``__dead`` false), or for a key deleted or moved away by a key update at the end its key
    alone (``__dead`` true); what ``lake.fold.fold`` gives row by row. Each change is two entries,
    its before key (``2i``, a delete's or an update's: gone) and its after key (``2i+1``, an
    insert's or an update's: the row); per key the highest entry wins."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..export.lake.batch import mirror_columns
    from ..export.lake.props import arrow_for

    sub = changes.slice(start)
    n = sub.num_rows
    names = [f"k{j}" for j in range(len(key))]
    seq = pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(2, pa.int64()), n)), 2)   # 0, 2, 4, ...
    op = sub["op"]
    gone = pa.table({**{k: sub[f"before_{c}"] for k, c in zip(names, key)}, "seq": seq}) \
        .filter(pc.not_equal(op, "insert"))
    held = pa.table({**{k: sub[f"after_{c}"] for k, c in zip(names, key)}, "seq": pc.add(seq, 1)}) \
        .filter(pc.not_equal(op, "delete"))
    won = pa.concat_tables([gone, held]).group_by(names, use_threads=False).aggregate([("seq", "max")])
    last = won["seq_max"]
    alive = pc.equal(pc.bit_wise_and(last, 1), 1)
    after = mirror_columns(sub.schema)
    rows = pc.shift_right(last.filter(alive), 1)
    live = sub.select(after).take(rows).rename_columns([c[len("after_"):] for c in after])
    mirror_schema = live.schema
    full = pa.schema(list(mirror_schema) + [pa.field(DEAD, pa.bool_())])
    dead = won.filter(pc.invert(alive))
    parts = [live.append_column(DEAD, pa.repeat(False, live.num_rows))]
    if dead.num_rows:
        cols = {c: dead[k].cast(mirror_schema.field(c).type) for k, c in zip(names, key)}
        cols[DEAD] = pa.repeat(True, dead.num_rows)
        parts.append(pa.table(cols))
    return pa.concat_tables([arrow_for(full, p) for p in parts])


def _put(path: str, table) -> None:
    """A staged table: an Arrow IPC file (read back once, by this job: no encoding to pay)."""
    import pyarrow as pa

    from ..export.lake.props import open_file

    with open_file(path, "wb") as fh, pa.ipc.new_file(fh, table.schema) as w:
        w.write_table(table)


def _get(path: str):
    import pyarrow as pa

    from ..export.lake.props import open_file

    with open_file(path, "rb") as fh:
        return pa.ipc.open_file(fh).read_all()


def keys_of(item: tuple, env: dict | None = None) -> Iterator[tuple]:
    """A staged fold's entries for the shuffle: ``((table, key), (partition, file, row, dead))``.
    ``item``: (table, file number, partition, path, key column names)."""
    from ..reading import storage

    storage.adopt(env)
    name, fno, part, path, key = item
    t = _get(path).select(list(key) + [DEAD])
    dead = t[DEAD].to_pylist()
    for i, k in enumerate(zip(*[t[c].to_pylist() for c in key])):
        yield (name, k), (part, fno, i, dead[i])


def write_part(path: str, rows: list[int] | None, target: tuple, env: dict | None = None) -> list:
    """The rows ``rows`` (None: all) of the staged file ``path`` written as data files of the
    table ``target`` (``IcebergSink.target`` / ``DeltaSink.target``); their descriptions."""
    import pyarrow as pa

    from ..reading import storage

    storage.adopt(env)
    data = _get(path)
    if DEAD in data.column_names:
        data = data.drop_columns([DEAD])
    if rows is not None:
        data = data.take(pa.array(sorted(rows), pa.int64()))
    if not data.num_rows:
        return []
    if target[0] == "iceberg":
        from ..export.lake.iceberg import write_data_files

        return write_data_files(target, data)
    from ..export.lake.delta import write_data_file

    return [write_data_file(target, data)]

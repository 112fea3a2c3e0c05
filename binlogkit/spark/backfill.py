"""What the executors of the mirror backfill run (``spark/jobs/mirror.py``; the pure rules:
``export.lake.backfill``).

``walk_task``: one partition (a file, or a range of whole transactions of a big one) walked as
the local mirror walks it (``export.changes.committed_changes``, statements of every database,
each row change built by the local mirror's own ``lake.batch.TableBatch``: the same values in
the same lakehouse types), until its first barrier. Per table it stages two Parquet files
under the staging folder: its change rows, and its own fold per primary key (``fold.fold``:
per key the last row, or an entry marked ``__dead`` for a key deleted or moved away). What goes
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
FLUSH_ROWS = 100_000    # change rows of a table held as Python lists before they become Arrow


@dataclass(frozen=True)
class _Walk(InRange):
    """The partition's filters, statements of every database passing (an ALTER of a table
    exported may come from a session in another one) and every committed transaction told to
    ``seen`` (the GTID state)."""

    seen: Any = field(default=None, compare=False)

    def db_wanted(self, db: str) -> bool:
        return True


class _Table:
    def __init__(self, item) -> None:
        from ..export.lake.batch import batch_for
        from ..export.schema import layout

        self.batch = batch_for(item)
        self.version = layout(item.table).version
        self.key = self.batch.key_names()
        self.chunks: list = []
        self.folded: dict = {}            # key -> (chunk, row) of its last row, None: no row
        self.first_at: dict | None = None

    def truncate(self) -> None:
        """TRUNCATE TABLE: the rows so far stay change rows; the fold starts again, empty."""
        self.flush()
        self.folded = {}

    def flush(self, before: tuple | None = None) -> None:
        """The Python rows into an Arrow chunk (those of transactions ending before ``before``),
        folded by key."""
        import pyarrow as pa

        from ..export.lake.fold import fold

        b = self.batch
        if not b.n:
            return
        chunk = b.arrow()
        if before is not None:
            keep = [i for i in range(b.n) if b.pos[i] < before]
            if len(keep) < b.n:
                chunk = chunk.take(pa.array(keep, pa.int64()))
        self.batch = type(b)(b.layout, b.key)
        if not chunk.num_rows:
            return
        no = len(self.chunks)
        self.chunks.append(chunk)
        if self.key:
            ops = chunk["op"].to_pylist()
            bk = list(zip(*[chunk[f"before_{c}"].to_pylist() for c in self.key]))
            ak = list(zip(*[chunk[f"after_{c}"].to_pylist() for c in self.key]))
            for k, i in fold((op, x if op != "insert" else None, y if op != "delete" else None)
                             for op, x, y in zip(ops, bk, ak)).items():
                self.folded[k] = None if i is None else (no, i)


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
    tabs: dict[tuple[str, str], _Table] = {}
    stop: dict | None = None
    last: dict | None = None
    last_before: dict | None = None   # the last of the transactions before the current one
    skipped: dict[str, int] = {}
    truncated: set = set()   # tables a TRUNCATE emptied in this partition (their fold restarts)
    trx = None
    held = 0

    def where(t, file: str, offset: int, statement: str | None = None) -> dict:
        return {"gtid": t.gtid, "file": (file or "").rsplit("/", 1)[-1], "offset": offset, "statement": statement}
    for ch in committed_changes([inp], walk, report):
        t = ch.trx
        pos = order_key(t.end_file or t.start_file, t.end_offset or 0)
        if t is not trx:
            last_before = last
            if held >= FLUSH_ROWS:
                for tab in tabs.values():
                    tab.flush()
                held = 0
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
                    tabs[gone].truncate()
            elif b is not None:
                stop = {"kind": b[0], "table": b[1], **where(t, ch.file, ch.offset, shortened(ch.sql)), "_pos": pos}
                break
            last = _last(t, pos)
            continue
        lay = layout(ch.table)
        name = (lay.db, lay.table)
        found = tabs.get(name)
        if found is not None and found.version != lay.version:
            stop = {"kind": "table version", "table": f"{lay.db}.{lay.table}", **where(t, ch.file, ch.offset),
                    "_pos": pos}
            break
        if found is None:
            tab = tabs[name] = _Table(ch)
            tab.first_at = where(t, ch.file, ch.offset)
        else:
            tab = found
        n = len(ch.rows)
        tab.batch.add(ch, pos)
        held += n
        if tab.key and any(p is not None for p in tab.batch.present[-n:]):
            stop = {"kind": "partial row image", "table": f"{lay.db}.{lay.table}", **where(t, ch.file, ch.offset),
                    "_pos": pos}
            break
        last = _last(t, pos)
    limit = stop["_pos"] if stop is not None else None
    if limit is not None and last is not None and tuple(last["_pos"]) >= limit:
        last = last_before   # (items of the barrier's own transaction before the barrier: not applied)
    for tab in tabs.values():
        tab.flush(limit)
    out_tables = _stage(no, tabs, staging)
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


def _stage(no: int, tabs: dict, staging: str) -> dict:
    """Each table's change rows and its fold by key as Parquet files under ``staging``; per
    table what the driver needs (paths, counts, schemas, key, version, first change)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..export.lake.batch import mirror_rows
    from ..export.lake.props import open_file

    root = staging.rstrip("/")
    out = {}
    for i, (name, tab) in enumerate(sorted(tabs.items())):
        if not tab.chunks:
            continue
        changes = pa.concat_tables(tab.chunks) if len(tab.chunks) > 1 else tab.chunks[0]
        base = f"{root}/p{no:06d}-{i:05d}"
        with open_file(base + "-changes.parquet", "wb") as fh:
            pq.write_table(changes, fh)
        entry = {"db": name[0], "table": name[1], "version": tab.version, "key": tab.key,
                 "changes": base + "-changes.parquet", "changes_schema": changes.schema, "rows": changes.num_rows,
                 "first_at": tab.first_at, "mirror": None, "mirror_schema": None}
        if tab.key:
            live: list = []
            for c, chunk in enumerate(tab.chunks):
                picks = [r for k, v in tab.folded.items() if v is not None and v[0] == c for r in (v[1],)]
                if picks:
                    live.append(mirror_rows(chunk, picks))
            mirror_schema = mirror_rows(tab.chunks[0], []).schema
            parts = [x.append_column(DEAD, pa.repeat(False, x.num_rows)) for x in live]
            dead = [k for k, v in tab.folded.items() if v is None]
            if dead:
                cols = {c: pa.array([k[j] for k in dead], mirror_schema.field(c).type) for j, c in enumerate(tab.key)}
                cols[DEAD] = pa.repeat(True, len(dead))
                parts.append(pa.table(cols))
            full = pa.schema(list(mirror_schema) + [pa.field(DEAD, pa.bool_())])
            from ..export.lake.props import arrow_for

            folded = pa.concat_tables([arrow_for(full, p) for p in parts]) if parts else full.empty_table()
            with open_file(base + "-mirror.parquet", "wb") as fh:
                pq.write_table(folded, fh)
            entry.update(mirror=base + "-mirror.parquet", mirror_schema=mirror_schema)
        out[name] = entry
    return out


def keys_of(item: tuple, env: dict | None = None) -> Iterator[tuple]:
    """A staged fold's entries for the shuffle: ``((table, key), (partition, file, row, dead))``.
    ``item``: (table, file number, partition, path, key column names)."""
    import pyarrow.parquet as pq

    from ..export.lake.props import open_file
    from ..reading import storage

    storage.adopt(env)
    name, fno, part, path, key = item
    with open_file(path, "rb") as fh:
        t = pq.read_table(fh, columns=list(key) + [DEAD])
    dead = t[DEAD].to_pylist()
    for i, k in enumerate(zip(*[t[c].to_pylist() for c in key])):
        yield (name, k), (part, fno, i, dead[i])


def write_part(path: str, rows: list[int] | None, target: tuple, env: dict | None = None) -> list:
    """The rows ``rows`` (None: all) of the staged file ``path`` written as data files of the
    table ``target`` (``IcebergSink.target`` / ``DeltaSink.target``); their descriptions."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..export.lake.props import open_file
    from ..reading import storage

    storage.adopt(env)
    with open_file(path, "rb") as fh:
        data = pq.read_table(fh)
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

"""The lakehouse export: committed changes of an archive into Iceberg or Delta tables, a
change table per source table (``DB.T__changes``) and, with ``mirror``, a current-state table
(``DB.T``) kept by primary key.

The plan is pure and the sink does the I/O: changes are cut into batches at transaction
boundaries (``batch_transactions`` transactions or ``batch_rows`` rows, and before every DDL
or new table version); a batch is one commit per table it touched (change table: append;
mirror: ``fold.fold`` -> delete the touched keys, append their final rows), each carrying the
batch's last GTID, file:position, commit time and the executed GTID state then
(``props.commit_props``, ``state.Tracker``). A schema change's own commit (an ADD COLUMN fill, a
rewrite) carries the ALTER's coordinates.

Restart: every table says where its last commit ended; a rerun walks the archive again and
gives each table only the transactions after its own position, so a run killed anywhere (a
table commit is atomic in both formats) and rerun gives the tables of an uninterrupted run.
A hole in the archive (``gaps``) stops the export before the first transaction past it:
``ArchiveGap`` after everything before it is committed.

Statements (``effects.effects``): renames move a mirror's rows (``sink.move``), TRUNCATE / DROP
TABLE / DROP DATABASE empty mirrors; a statement a mirror cannot apply (statement-format DML
unless ``skip_statements``, partition truncates, an unreadable statement naming it) or rows it
cannot key stop that table's mirror before the transaction holding it (``statements``): the
other tables go on, the summary names it (``stopped``), exit 1, and a rerun stops there again.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from ...errors import ArchiveGap, UsageError
from ..changes import Filters, Report, Rows, Statement, checked_inputs, committed_changes
from .. import ddl
from ..effects import effects
from ..schema import layout
from ...transactions import Transaction
from .batch import TableBatch, batch_for, mirror_rows
from .fold import fold
from .names import CHANGES
from .props import commit_props, order_key, position_of
from .state import Tracker
from .statements import StatementRules, stop_line

FORMATS = ("iceberg", "delta")
BATCH_BYTES = 32 << 20   # of rows events in a batch (at a transaction's end): memory is about a few times this


def open_sink(fmt: str, warehouse: str, catalog: str | None = None):
    if fmt == "iceberg":
        from .iceberg import IcebergSink

        return IcebergSink(warehouse, catalog)
    if fmt == "delta":
        from .delta import DeltaSink

        return DeltaSink(warehouse, catalog)
    raise UsageError(f"--format {fmt}: one of parquet, {', '.join(FORMATS)}")


def _norm(t) -> str:
    s = str(t)
    return {"large_string": "string", "large_binary": "binary"}.get(s, s.replace("large_list", "list"))


def schema_plan(have: dict, want: dict, keep: set) -> tuple[list[str], dict]:
    """(columns to drop, columns to retype -> their type) to take a table whose columns are
    ``have`` (name -> Arrow type) to ``want``; ``keep``: columns never dropped. Pure."""
    drop = [c for c in have if c not in want and c not in keep]
    retype = {c: t for c, t in want.items() if c in have and _norm(have[c]) != _norm(t)}
    return drop, retype


@dataclass
class Stats:
    batches: int = 0
    commits: int = 0
    rows: int = 0
    skipped_rows: int = 0                  # before a table's recorded position (a rerun)
    from_snapshot: int = 0                 # transactions the snapshot already holds
    no_key: set = field(default_factory=set)
    partial: dict = field(default_factory=dict)   # db.table -> a partial after image the mirror cannot apply
    tables: set = field(default_factory=set)
    stopped: dict = field(default_factory=dict)   # db.table -> where and why its mirror stopped (``Mirror._stop``)
    skipped_statements: dict = field(default_factory=dict)   # db.table -> statement-format changes ignored
    moved: list = field(default_factory=list)     # "db.a -> db.b" renames applied


@dataclass(frozen=True)
class StatementsOfAnyDatabase(Filters):
    """The export's filters, except that every statement passes whatever its session's default
    database: an ``ALTER TABLE db.t`` run from a session in another database (or none) is the
    mirror's business when ``db.t`` is wanted (``Mirror.add`` keeps those by the table they
    name; ``changes`` keeps statements by the session's database)."""

    seen: Any = field(default=None, compare=False)   # told every committed transaction (``state.Tracker``)

    def db_wanted(self, db: str) -> bool:
        return True


class Mirror(StatementRules):
    def __init__(self, sink, *, mirror: bool, batch_transactions: int, batch_rows: int,
                 covered=None, batch_bytes: int = BATCH_BYTES, tables: tuple[str, ...] = (),
                 skip_statements: bool = False, state: Tracker | None = None) -> None:
        from .snapshot import wanted

        self.wanted = wanted(tables)
        self.db_wanted = Filters(tables=tables).db_wanted
        self.sink, self.mirror = sink, mirror
        self.kind = getattr(sink, "kind", "")
        self.batch_transactions, self.batch_rows, self.batch_bytes = batch_transactions, batch_rows, batch_bytes
        self.bytes = 0
        self.covered = covered
        self.batches: dict[tuple[str, str], TableBatch] = {}
        self.recorded: dict[tuple[str, str], tuple | None] = {}
        self.stats = Stats()
        self.trx = None
        self.n_trx = 0
        self.rows = 0
        self.last: Transaction | None = None  # the last transaction of the batch
        self.skip_statements = skip_statements
        # the executed GTID state along the walk (every commit records it at its batch's end)
        self.state = state or Tracker(None)
        # (db, table) -> the coordinates of the last ALTER of it applied (``_ddl``): a schema
        # change's own commits carry them
        self.altered: dict[tuple[str, str], tuple[tuple, dict]] = {}
        # what the walk learnt of tables: their key (a CREATE TABLE, a rows event's table map;
        # () none), TEMPORARY ones, those gone (dropped, renamed away), and stops met
        # before the table had a mirror (they stop it if keyed rows follow: ``_stop``)
        self.keys: dict[tuple[str, str], tuple[str, ...] | None] = {}
        self.temporary: set[tuple[str, str]] = set()
        self.gone: set[tuple[str, str]] = set()
        self.pending: dict[tuple[str, str], dict] = {}
        # (db, table name) -> the table version whose columns it was found to hold (``_evolve``):
        # the next batch of that version does not open the table again; a statement forgets them
        self.evolved: dict[tuple[str, str], str] = {}

    def note(self, t: Transaction) -> None:
        """A committed transaction of the archive (wanted or not): its GTID joins the state."""
        self.state.note(order_key(t.end_file or t.start_file, t.end_offset or 0), t.gtid)

    def coordinates(self, t: Transaction, pos: tuple, transactions: int) -> dict[str, str]:
        """The commit properties of the state once ``t`` (ending at ``pos``) is applied."""
        return commit_props(t.gtid, (t.end_file or "").rsplit("/", 1)[-1], t.end_offset or 0, t.last_timestamp,
                            transactions, self.state.at(pos))

    def targets(self, db: str, table: str, keyed: bool) -> list[str]:
        return [table + CHANGES] + ([table] if self.mirror and keyed else [])

    # -- the walk --------------------------------------------------------------------------
    def add(self, item, trx_pos: tuple) -> None:
        t = item.trx
        if t is not self.trx:
            if self.n_trx and (self.n_trx >= self.batch_transactions or self.rows >= self.batch_rows
                               or self.bytes >= self.batch_bytes):
                self.flush()
            self.trx = t
            self.n_trx += 1
        if isinstance(item, Statement):
            self.evolved.clear()
            if t.alter in ("START", "ROLLBACK"):
                # MariaDB's two-phase ALTER: the COMMIT ALTER repeats the statement and is where
                # the server applied it; a START ALTER alone or rolled back changed nothing
                self.last = t
                return
            # a batch ends before every DDL of the databases exported, and before an ALTER
            # of a table exported whatever its session's database
            a = ddl.alter(item.sql, item.database or None)
            alter = a is not None and a.db is not None and self.wanted(a.db, a.table)
            if alter or self.db_wanted(item.database):
                self.flush()
            if alter:
                assert a is not None
                self._ddl(a, trx_pos, item)
            fx = effects(item.sql, item.database or None) if self.mirror else None
            if fx:
                if fx.created or fx.databases or fx.emptied or fx.renames or fx.unknown:
                    self.flush()    # DDL: its own transaction. Statement-format DML may sit inside one:
                self._effects(fx, item, trx_pos)   # a stop takes the rows before it (``flush``)
            self.last = t
            return
        self.last = t
        lay = layout(item.table)
        k = (lay.db, lay.table)
        b = self.batches.get(k)
        if b is not None and b.layout.version != lay.version:
            self.flush()
            b = None
        if b is None:
            b = self.batches[k] = batch_for(item)
            self._evolve(b, trx_pos)
        b.add(item, trx_pos)
        self.rows += len(item.rows)
        self.bytes += item.size

    def _ddl(self, a: ddl.Alter, pos: tuple, stmt: Statement) -> None:
        assert a.db is not None
        self.altered[(a.db, a.table)] = (pos, self.coordinates(stmt.trx, pos, 1))
        stopped = f"{a.db}.{a.table}" in self.stats.stopped
        if a.filled and self.mirror and not stopped:
            self._fill(a, pos, stmt)
        if not a.renames:
            return
        for name in (a.table + CHANGES,) + (() if stopped else (a.table,)):
            p = self.position(a.db, name)
            if p is not None and pos <= p:
                continue
            if name.endswith(CHANGES):
                pairs = [(f"{s}_{o}{x}", f"{s}_{n}{x}") for o, n in a.renames for s in ("before", "after")
                         for x in ("", "__text")]
            else:
                pairs = [(f"{o}{x}", f"{n}{x}") for o, n in a.renames for x in ("", "__text")]
            self.sink.rename(a.db, name, pairs, self.altered[(a.db, a.table)][1])
            self.recorded[(a.db, name)] = pos

    def _fill(self, a: ddl.Alter, pos: tuple, stmt: Statement) -> None:
        """ADD COLUMN with a default: the mirror's existing rows get the value, as the server's
        do (the change table is history: its old rows keep no value): a constant, or the
        statement's own time for ``DEFAULT CURRENT_TIMESTAMP`` (from the ALTER's event; left
        NULL where the event does not say it). Only past the mirror's recorded position (a
        rerun, a restart: the fill's commit carries the ALTER's coordinates); a column the
        table has already gets the value too (a fill cut between its schema commit and its
        rows)."""
        from ..schema import _safe
        from .dump import TableLoad, arrow_rows, column_of

        assert a.db is not None
        p = self.position(a.db, a.table)
        have = self.sink.columns(a.db, a.table)
        if have is None or p is None or pos <= p:
            return
        cols, vals = [], []
        for name, coldef, fill in a.filled:
            # a column the table has already is filled too: the table's last commit is before
            # the ALTER (the fill, the ALTER's own commit, is not in it), so what the column
            # holds is no server's value — Iceberg's schema commit of a fill killed before the
            # fill's rows (NULL in every row), or a column a DROP left in the mirror
            value = fill.text(stmt.timestamp, stmt.usec, stmt.time_zone) if isinstance(fill, ddl.StatementTime) else fill
            if value is None:
                continue
            try:
                c = column_of(coldef)
                c.name = _safe(name)
                one = arrow_rows(TableLoad(a.db, a.table, [c], []), [(value,)])
            except (ValueError, ArithmeticError):
                continue        # a default the converters cannot read: the rows keep NULL, as before
            cols.append(c)
            vals.append(one)
        if vals:
            import pyarrow as pa

            arrays, fields = [], []
            for one in vals:
                arrays += one.columns
                fields += list(one.schema)
            # the fill is the ALTER's own commit: at its coordinates (everything of the table
            # before it was committed: a batch ends before every DDL)
            self.sink.fill(a.db, a.table, pa.Table.from_arrays(arrays, schema=pa.schema(fields)),
                           self.altered[(a.db, a.table)][1])
            self.recorded[(a.db, a.table)] = pos      # the table's commit carries the ALTER's coordinates

    def _evolve(self, b: TableBatch, pos: tuple) -> None:
        """A table version met: retype the change table's columns and drop and retype the
        mirror's to match it (added columns come with the next commit; the change table keeps
        dropped columns: its history). Only past the table's recorded position (reruns)."""
        from .types import lake_type

        db, table = b.layout.db, b.layout.table
        for name in self.targets(db, table, bool(b.key_names())):
            if self.evolved.get((db, name)) == b.layout.version:
                continue        # the batch before, of this version, found it (or made it) so
            p = self.position(db, name)
            if p is None or pos <= p:
                continue
            have = self.sink.columns(db, name)
            if have is None:
                continue
            self.evolved[(db, name)] = b.layout.version
            if name.endswith(CHANGES):
                want = {f.name: lake_type(f.type) for f in b.layout.schema}
                drop, retype = schema_plan(have, want, set(have))
            else:
                want = {f.name[len("after_"):]: lake_type(f.type) for f in b.layout.schema
                        if f.name.startswith("after_")}
                drop, retype = schema_plan(have, want, set())
            # the coordinates of the ALTER that made this version, when it is past the table's
            # recorded position (all before it committed); else those the table has
            alter = self.altered.get((db, table))
            props = alter[1] if alter is not None and alter[0] > p and alter[0] <= pos else None
            if drop:
                self.sink.drop(db, name, drop, props)
            if retype:
                self.sink.retype(db, name, retype, props)

    # -- a batch: one commit per table -----------------------------------------------------
    def flush(self) -> None:
        if not self.batches:
            self.n_trx = self.rows = self.bytes = 0
            return
        t = self.last
        assert t is not None  # a batch holds rows: a transaction was met
        end = order_key(t.end_file or t.start_file, t.end_offset or 0)
        props = self.coordinates(t, end, self.n_trx)
        for (db, table), b in self.batches.items():
            self.stats.tables.add(f"{db}.{table}")
            changes = b.arrow()
            keyed = bool(b.key_names())
            if self.mirror:
                self._keyed(b, keyed)
            full = f"{db}.{table}" not in self.stats.partial
            # a stopped mirror takes the rows of transactions before the one it stopped in
            stop_at = self.stats.stopped.get(f"{db}.{table}", {}).get("_pos")
            for name in self.targets(db, table, keyed and full):
                p = self.position(db, name)
                keep = [i for i in range(b.n) if p is None or b.pos[i] > p]
                self.stats.skipped_rows += b.n - len(keep)
                commit = props
                if stop_at is not None and not name.endswith(CHANGES):
                    whole = len(keep)
                    keep = [i for i in keep if b.pos[i] < stop_at]
                    if keep and len(keep) < whole:    # recorded where its last applied transaction ended
                        last = keep[-1]
                        c = b.cols
                        commit = commit_props(c["gtid"][last], b.pos[last][1], b.pos[last][2], c["commit_time"][last],
                                              len({b.pos[i] for i in keep}), self.state.at(b.pos[last]))
                if not keep:
                    continue
                rows = changes
                if len(keep) < b.n:
                    import pyarrow as pa

                    rows = changes.take(pa.array(keep, pa.int64()))
                if name.endswith(CHANGES):
                    self.sink.append(db, name, rows, props)
                    self.stats.rows += rows.num_rows
                else:
                    stop = self._apply(db, name, b.key_names() or [], rows, [b.present[i] for i in keep], commit)
                    if stop is not None:
                        # a partial after image of a row the mirror does not hold (no snapshot
                        # of it): the mirror ends before it, its recorded position where it was
                        # (a rerun meets the image again and stops again, never goes on past it)
                        self.stats.partial[f"{db}.{table}"] = b.where(keep[stop])
                        continue
                self.recorded[(db, name)] = position_of(commit)
                self.stats.commits += 1
        self.stats.batches += 1
        self.state.advance(end)
        self.batches = {}
        self.n_trx = self.rows = self.bytes = 0

    def _apply(self, db: str, name: str, key: list[str], changes, present: list, props: dict) -> int | None:
        """One mirror commit of a batch's change rows (``present``: per row, the columns of a
        partial after image, None for a whole one); the number of the row the mirror stopped
        before (a partial image of a row it does not hold), None when every row was applied."""
        before = list(zip(*[changes[f"before_{c}"].to_pylist() for c in key]))
        ops = changes["op"].to_pylist()
        if any(p is not None for p in present):
            return self._apply_partial(db, name, key, changes, present, before, ops, props)
        after = list(zip(*[changes[f"after_{c}"].to_pylist() for c in key]))
        final = fold((op, b if op != "insert" else None, a if op != "delete" else None)
                     for op, b, a in zip(ops, before, after))
        picks = [i for i in final.values() if i is not None]
        self.sink.apply(db, name, key, list(final), mirror_rows(changes, picks), props)
        return None

    def _apply_partial(self, db: str, name: str, key: list[str], changes, present: list, before: list,
                       ops: list, props: dict) -> int | None:
        """binlog_row_image MINIMAL / NOBLOB: an update's after image holds the changed columns
        (MINIMAL's before image the key): the row is the mirror's (or the batch's) with them
        overwritten (``fold.fold_rows``); the rows it needs are read from the table by key."""
        import pyarrow as pa

        from .batch import mirror_columns
        from .fold import base_keys, fold_rows

        names = mirror_columns(changes.schema)
        cols = [n[len("after_"):] for n in names]
        rows = [dict(zip(cols, r.values())) for r in changes.select(names).to_pylist()]
        todo = [(op, b if op != "insert" else None, r if op != "delete" else None, p)
                for op, b, r, p in zip(ops, before, rows, present)]
        need = base_keys(todo, key)
        base = {tuple(r[c] for c in key): r for r in self.sink.rows(db, name, key, need)} if need else {}
        final, stop = fold_rows(todo, key, base)
        if stop is not None:   # the changes before the stop, committed under the table's old coordinates
            props = {k: v for k, v in (self.sink.recorded(db, name) or {}).items() if k.startswith("binlogkit.")}
        if final:
            schema = pa.schema([pa.field(c, changes.schema.field(n).type) for c, n in zip(cols, names)])
            out = pa.Table.from_pylist([r for r in final.values() if r is not None], schema=schema)
            self.sink.apply(db, name, key, list(final), out, props)
        return stop


def export_lake(paths, warehouse: str, *, fmt: str = "iceberg", mirror: bool = False,
                filters: Filters | None = None, catalog: str | None = None, batch_transactions: int = 1000,
                batch_rows: int = 100_000, from_gtid: str | None = None, snapshot: str | None = None,
                snapshot_at: tuple[str | None, int] = (None, 0), check_gaps: bool = True,
                series: str | None = None, skip_statements: bool = False) -> dict:
    """Export ``paths`` into the tables of ``warehouse`` (see the module text); the summary.
    ``ArchiveGap`` when the archive has a hole (everything before it is committed first).
    ``series``: only the files of that series; a mirror refuses inputs of several
    (``changes.one_series_of``: ``UsageError``, before anything is written).
    ``skip_statements``: statement-format row changes of mirrored tables are ignored (counted)
    instead of stopping their mirrors."""
    from .. import make_summary
    from .snapshot import covered_by, load_snapshot

    found = checked_inputs(paths, series=series, one_series=mirror)
    sink = open_sink(fmt, warehouse, catalog)
    gap = None
    if check_gaps:
        from .gaps import audit_gap

        gap = audit_gap(found)
    report = Report()
    t0 = time.monotonic()
    filters = filters or Filters()
    from ...pitr.walk import read_head

    rotation = None
    if snapshot and mirror and snapshot_at[0] and from_gtid:
        from .snapshot import before_rotation

        rotation = before_rotation(found, snapshot, snapshot_at, from_gtid)
        if rotation is not None:  # the tables count as holding what comes before that group
            from_gtid, snapshot_at = rotation["from_gtid"], (rotation["file"], rotation["offset"])
    m = Mirror(sink, mirror=mirror, batch_transactions=batch_transactions, batch_rows=batch_rows,
               covered=covered_by(from_gtid) if from_gtid else None, tables=filters.tables,
               skip_statements=skip_statements, state=Tracker.from_head(read_head(found[0])))
    if snapshot:
        load_snapshot(sink, snapshot, from_gtid or "", mirror=mirror, file=snapshot_at[0] or "", position=snapshot_at[1],
                      tables=filters.tables)
    stopped = None
    seen = None
    walk = StatementsOfAnyDatabase(**{f.name: getattr(filters, f.name) for f in dataclasses.fields(Filters)},
                                   seen=m.note)
    for item in committed_changes(found, walk, report):
        t = item.trx
        if gap is not None and order_key(t.start_file, t.start_offset) >= gap[0]:
            stopped = gap[1]
            break
        if m.covered is not None and t.gtid is not None and m.covered(t.gtid):
            if t is not seen:
                m.stats.from_snapshot += 1
                seen = t
            continue
        m.add(item, order_key(t.end_file or t.start_file, t.end_offset or 0))
    m.flush()
    if stopped is None and gap is not None:
        stopped = gap[1]
    s = m.stats
    summary = make_summary(warehouse, report, {}, 0, 0, 0, time.monotonic() - t0)
    summary.update({"format": fmt, "mirror": mirror, "rows": s.rows, "batches": s.batches, "commits": s.commits,
                    "skipped_rows": s.skipped_rows, "from_snapshot": s.from_snapshot, "tables": sorted(s.tables),
                    "no_key": sorted(s.no_key - set(s.stopped)), "partial_images": s.partial, "gap": stopped,
                    "stopped": [{k: v for k, v in s.stopped[t].items() if k != "_pos"} for t in sorted(s.stopped)],
                    "skipped_statements": s.skipped_statements,
                    "moved": s.moved, "snapshot_at_rotation": rotation})
    if stopped is not None:
        err = ArchiveGap(f"archive gap ({stopped['kind']}: {stopped['detail']}): the tables hold every change "
                         f"before it; export stopped at {stopped['place']}",
                         file=stopped.get("file"), offset=stopped.get("offset"))
        err.summary = summary  # type: ignore[attr-defined]
        raise err
    return summary


def render(s: dict) -> str:
    """The lakehouse summary for people (``--json`` gives the document)."""
    lines = [f"exported {s['rows']:,} row changes of {s['transactions']:,} transactions from {s['files']} files "
             f"to {s['output']} in {s['seconds']:.1f} s",
             f"{s['format']}{' with mirrors' if s['mirror'] else ' change tables'}: {s['commits']} table commits "
             f"in {s['batches']} batches",
             f"tables: {', '.join(s['tables']) or 'none'}"]
    if s["skipped_rows"]:
        lines.append(f"already in the tables (an earlier run): {s['skipped_rows']:,} row changes")
    if s["from_snapshot"]:
        lines.append(f"in the snapshot already: {s['from_snapshot']:,} transactions")
    if s.get("snapshot_at_rotation"):
        r = s["snapshot_at_rotation"]
        lines.append(f"the dump's point is the start of a file: {len(r['gtids'])} transaction(s) before it "
                     f"({r['gtids'][0]}{' .. ' + r['gtids'][-1] if len(r['gtids']) > 1 else ''}, {r['file']}:"
                     f"{r['offset']}) applied again, whether or not the dump holds them (the same rows either way)")
    if s["no_key"]:
        lines.append(f"no primary key (change table only, no mirror): {', '.join(s['no_key'])}")
    for t, where in s["partial_images"].items():
        lines.append(f"partial row image (binlog_row_image MINIMAL/NOBLOB) of a row the mirror does not hold in {t} "
                     f"at {where}: its mirror stops before it")
    for t in s["incomplete"]:
        lines.append(f"partial transaction {t['gtid'] or ''} at {t['file']}:{t['offset']}: not exported")
    for p in s["problems"]:
        lines.append(f"problem ({p['kind']}): {p['file']}:{p['offset']}: {p['message']}")
    for m in s.get("moved", ()):
        lines.append(f"renamed: {m}")
    for t, n in sorted(s.get("skipped_statements", {}).items()):
        lines.append(f"{n:,} statement-format change{'s' if n != 1 else ''} skipped on {t} (--skip-statements: "
                     f"its mirror may differ from the server)")
    for x in s.get("stopped", ()):
        lines.append(stop_line(x))
    if s.get("gap"):
        lines.append(f"stopped at an archive gap: {s['gap']['place']}: {s['gap']['detail']}")
    return "\n".join(lines)


def exit_code(s: dict) -> int:
    """0 clean; 1 a gap, damage, a partial transaction, or a mirror stopped (a partial image, a
    statement it cannot apply)."""
    return 1 if s.get("gap") or s["problems"] or s["incomplete"] or s["partial_images"] or s.get("stopped") else 0

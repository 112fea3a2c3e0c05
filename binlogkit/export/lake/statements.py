"""How a mirror follows the statements of an archive (``effects.effects``) and where it stops: a
mixin of ``mirror.Mirror`` (its walk calls these; the state they keep is the mirror's).

- TRUNCATE / DROP TABLE / CREATE OR REPLACE / DROP DATABASE: the mirror table emptied at the
  statement's coordinates (``_empty``);
- RENAME TABLE pairs, in order: the rows moved (``_rename``, ``sink.move``);
- a statement the mirror cannot apply (statement-format DML unless ``skip_statements``: then
  counted; partition truncates; an unreadable statement naming the table), rows it cannot key
  (``_keyed``), rows renamed in from a table not exported: that table's mirror stops before the
  transaction holding it (``_stop``): the rows of transactions before it are committed, nothing
  after it is applied in this run, the other tables go on; its recorded position stays before the
  statement, so a rerun meets it again and stops again. A stop met before the table has a mirror
  or a known key waits (``pending``) and takes effect if keyed rows of it follow.
"""

from __future__ import annotations

from typing import Any, Callable

from ...transactions import Transaction
from ..changes import Statement
from ..effects import Effects, shortened
from .batch import TableBatch
from .names import CHANGES
from .props import commit_props, position_of


class StatementRules:
    sink: Any
    stats: Any
    mirror: bool
    kind: str
    skip_statements: bool
    wanted: Callable[[str, str], bool]
    recorded: dict
    keys: dict
    temporary: set
    gone: set
    pending: dict
    state: Any           # the executed GTID state along the walk (``state.Tracker``)

    def position(self, db: str, name: str) -> tuple | None:
        k = (db, name)
        if k not in self.recorded:
            self.recorded[k] = position_of(self.sink.recorded(db, name))
        return self.recorded[k]

    def _empty(self, db: str, table: str, t: Transaction, pos: tuple, gone: bool = True) -> None:
        """TRUNCATE or DROP TABLE: the mirror table left without rows, committed with the
        statement's own coordinates (time travel to before it still finds the rows; a rerun finds
        it applied). The change table is history: row changes only, it keeps its rows. Only past
        the mirror's recorded position, and only for a table the mirror has. ``gone``: the
        table itself ceased to be (not a TRUNCATE): one made again may lack a key."""
        if not self.mirror or f"{db}.{table}" in self.stats.stopped:
            return
        self.pending.pop((db, table), None)      # the rows a statement left are gone with the others
        if gone:
            self.gone.add((db, table))
        p = self.position(db, table)
        if p is None or pos <= p or self.sink.columns(db, table) is None:
            return
        props = commit_props(t.gtid, (t.end_file or "").rsplit("/", 1)[-1], t.end_offset or 0, t.last_timestamp, 1,
                             self.state.at(pos))
        self.sink.empty(db, table, props)
        self.recorded[(db, table)] = position_of(props)
        self.stats.commits += 1

    # -- statements that change which rows a table holds -------------------------------------
    def _effects(self, fx: Effects, stmt: Statement, pos: tuple) -> None:
        """A statement's effects on the mirrors (``effects.effects``), in the order the server
        applied them: tables made (their keys learnt), databases dropped, tables emptied,
        renames (pair by pair), then what the mirror cannot apply (``_stop``)."""
        t = stmt.trx
        where = {"gtid": t.gtid, "file": (stmt.file or "").rsplit("/", 1)[-1], "offset": stmt.offset,
                 "statement": shortened(stmt.sql)}
        for (db, n), key, temporary, like in fx.created:
            if db is None:
                continue
            if temporary:
                self.temporary.add((db, n))
                continue
            self.temporary.discard((db, n))
            self.keys[(db, n)] = self.keys.get(like) if like is not None else key
        for d in fx.databases:
            for db, n in self._mirrors_of(d):
                if self.wanted(db, n):
                    self._empty(db, n, t, pos)
            for k in [k for k in self.pending if k[0] == d]:
                del self.pending[k]
        for db, n in fx.emptied:
            if db is not None and self.wanted(db, n):
                self._empty(db, n, t, pos, gone=not fx.truncate)
        for src, dst in fx.renames:
            self._rename(src, dst, t, pos, where)
        for name in fx.dml:
            if self.skip_statements:
                if self._mirrored(name, pos):
                    tk = f"{name[0]}.{name[1]}"
                    self.stats.skipped_statements[tk] = self.stats.skipped_statements.get(tk, 0) + 1
                continue
            self._stop(name, "statement", where, pos)
        for name in fx.unknown + fx.mentions:
            self._stop(name, "statement it cannot apply", where, pos)

    def _mirrors_of(self, db: str) -> list[tuple[str, str]]:
        """The mirror tables (not change tables) the warehouse holds of database ``db``."""
        return [(d, n) for d, n in self.sink.table_names() if d == db and not n.endswith(CHANGES)]

    def _mirrored(self, name: tuple, pos: tuple, same: bool = False) -> bool:
        """Could the mirror of ``name`` hold rows a statement at ``pos`` changes: a table
        exported, not known to lack a primary key, not TEMPORARY (or a mirror table of that
        name is there), its mirror not past ``pos`` already (a rerun after a rebuild; ``same``:
        a commit at ``pos`` itself is an earlier part of the same statement, not past it)."""
        db, n = name
        if not self.mirror or db is None or not self.wanted(db, n) or self.keys.get((db, n)) == ():
            return False
        if (db, n) in self.temporary and self.sink.columns(db, n) is None:
            return False
        p = self.position(db, n)
        return p is None or pos > p or (same and pos == p)

    def _stop(self, name: tuple, kind: str, where: dict, pos: tuple, same: bool = False) -> None:
        """The mirror of ``name`` stops before the change at ``where`` (everything before it is
        committed; nothing after it is applied in this run; a rerun meets it again and stops
        again). A table with no mirror yet and no known key: the stop waits (``pending``) and
        takes effect if keyed rows of it follow, unless it is emptied first."""
        if not self._mirrored(name, pos, same):
            return
        db, n = name
        k = f"{db}.{n}"
        if k in self.stats.stopped or (db, n) in self.pending:
            return
        info = {"table": k, "kind": kind, **where, "_pos": pos}
        if self.keys.get((db, n)) or self.sink.columns(db, n) is not None:
            self.stats.stopped[k] = info
        else:
            self.pending[(db, n)] = info

    def _rename(self, src: tuple, dst: tuple, t: Transaction, pos: tuple, where: dict) -> None:
        """RENAME TABLE src TO dst (one pair): the mirror's rows move to ``dst`` (``sink.move``:
        both tables get a commit at the statement's coordinates; ``src`` is left empty, its
        history kept: a table made again under that name starts from it empty). A stopped
        mirror stays stopped under its new name; rows coming from a table not exported stop
        ``dst``; rows leaving the tables exported empty ``src``."""
        if src[0] is None or dst[0] is None:
            return
        self.keys[dst] = self.keys.pop(src, None)
        if src in self.temporary:
            self.temporary.discard(src)
            self.temporary.add(dst)
            return
        self.temporary.discard(dst)
        sk, dk = f"{src[0]}.{src[1]}", f"{dst[0]}.{dst[1]}"
        self.pending.pop(dst, None)
        if sk in self.stats.stopped or src in self.pending:
            was = self.stats.stopped.get(sk) or self.pending.pop(src)
            info = {**was, "table": dk, "renamed_from": sk}
            if dk not in self.stats.stopped:
                if sk in self.stats.stopped or self.sink.columns(*dst) is not None:
                    self.stats.stopped[dk] = info
                else:
                    self.pending[dst] = info
            return
        if dk in self.stats.stopped:
            self._empty(src[0], src[1], t, pos)
            return
        sw, dw = self.wanted(*src), self.wanted(*dst)
        if not dw:
            if sw:
                self._empty(src[0], src[1], t, pos)   # its rows left the tables exported
            return
        if not sw:
            # (a pair before it in the same RENAME may have emptied dst at this very position)
            self._stop(dst, "rename from a table not exported", {**where}, pos, same=True)
            return
        if self.sink.columns(*src) is None:
            pd = self.position(*dst)
            left = self.sink.read(*dst) if pd is not None and pos > pd else None
            if left is None or not left.num_rows or self.kind != "iceberg":
                self._empty(dst[0], dst[1], t, pos)      # no rows of it mirrored: none move
                return
            # Iceberg: renamed in the catalog by a run killed before the rename's snapshots (a
            # table an earlier DROP left at ``dst`` has no rows): ``move`` finishes it
        ps = self.position(*src)
        if ps is not None and pos <= ps:
            return                                     # moved by an earlier run
        props = commit_props(t.gtid, (t.end_file or "").rsplit("/", 1)[-1], t.end_offset or 0, t.last_timestamp, 1,
                             self.state.at(pos))
        self.sink.move(src[0], src[1], dst[0], dst[1], props)
        self.recorded[src] = self.recorded[dst] = position_of(props)
        self.gone.add(src)
        self.gone.discard(dst)
        self.stats.commits += 2
        self.stats.moved.append(f"{sk} -> {dk}")

    def _keyed(self, b: TableBatch, keyed: bool) -> None:
        """What a batch's table maps say of the table's key: a stop waiting for keyed rows
        (``pending``) takes effect; rows without a key for a table whose mirror holds rows (not
        dropped or made again without a key in this walk) stop it: the mirror cannot apply them."""
        db, table = b.layout.db, b.layout.table
        k = f"{db}.{table}"
        if keyed:
            self.keys[(db, table)] = tuple(b.key_names() or ())
            info = self.pending.pop((db, table), None)
            if info is not None and k not in self.stats.stopped:
                self.stats.stopped[k] = info
            return
        self.stats.no_key.add(k)
        self.pending.pop((db, table), None)
        known = self.keys.get((db, table))
        self.keys[(db, table)] = ()
        if known == () or (db, table) in self.gone or k in self.stats.stopped:
            return
        if self.sink.columns(db, table) is None:
            return
        p = self.position(db, table)
        first = next((i for i in range(b.n) if p is None or b.pos[i] > p), None)
        if first is None:
            return
        c = b.cols
        self.stats.stopped[k] = {"table": k, "kind": "rows without a primary key", "gtid": c["gtid"][first],
                                 "file": c["file"][first], "offset": c["offset"][first], "statement": None,
                                 "_pos": b.pos[first]}


ADVICE = {
    "statement": "statement-format row changes (binlog_format STATEMENT or MIXED): set binlog_format=ROW on the "
                 "server; rebuild this mirror from a dump taken after it (--snapshot), or rerun with "
                 "--skip-statements to ignore such statements",
    "statement it cannot apply": "rows changed by a statement the mirror cannot apply: rebuild this mirror from a "
                                 "dump taken after it (--snapshot)",
    "rename from a table not exported": "its rows came from a table not exported: export that table too, or rebuild "
                                        "this mirror from a dump taken after it (--snapshot)",
    "rows without a primary key": "the table map names no primary key (binlog_row_metadata=FULL logs it; "
                                  "a key dropped?): rebuild this mirror from a dump taken after it (--snapshot)",
}


def stop_line(x: dict) -> str:
    """One stopped mirror, for people: the table, where, what, and what to do."""
    what = f": {x['statement']}" if x.get("statement") else ""
    moved = f" (renamed from {x['renamed_from']})" if x.get("renamed_from") else ""
    return (f"mirror of {x['table']}{moved} stopped before {x['file']}:{x['offset']} ({x['gtid'] or 'no GTID'})"
            f"{what} -- {ADVICE.get(x['kind'], x['kind'])}")

"""Delta tables through delta-rs (``deltalake``): a folder per table under the warehouse
(``DB/T`` and ``DB/T__changes``); a table commit per call with the batch's coordinates in the
commit's ``commitInfo`` (custom metadata ``binlogkit.gtid``, ``binlogkit.file``, ...). The
mirror's commit is one MERGE (delete touched keys that hold no row at the end, update or
insert the others).

A MERGE rewrites each data file holding a key it touches, so a mirror's tables are made with
data files of a bounded size (``delta.targetFileSize``, ``TARGET_FILE_SIZE`` unless the table
sets its own), and the MERGE's condition names the ranges of the batch's keys (an integer
first key column: ``KEY_RANGES`` ranges at most, every key of the batch in one): delta-rs
reads and rewrites only the files whose key statistics meet a range, so a commit costs what
its batch touches, not the whole table."""

from __future__ import annotations

import os

from ..._optional import need
from .names import stored
from .props import arrow_for, filled

DELETE = "_binlogkit_delete"
# bytes of Parquet, delta-rs' estimate (its files come out at about half that): about what the
# Iceberg mirror's 64 MB of Arrow (iceberg.REWRITE_BYTES) make, bounding what a commit rewrites
# without a small file per few thousand rows for readers
TARGET_FILE_SIZE = 16 << 20
KEY_RANGES = 32


class DeltaSink:
    kind = "delta"

    def __init__(self, warehouse: str, catalog: str | None = None) -> None:
        need("deltalake", "binlogkit export --format delta", extra="lake")
        self.root = warehouse.rstrip("/")
        self.options: dict[str, str] = {}
        self.open: dict = {}     # path -> the DeltaTable kept (``_table``)
        if self.root.startswith("s3://"):
            endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
            if endpoint:
                self.options.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"})
            self.options["AWS_S3_ALLOW_UNSAFE_RENAME"] = "true"
            for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_REGION"):
                if os.environ.get(k):
                    self.options[k] = os.environ[k]
            self.options.setdefault("AWS_REGION", self.options.get("AWS_DEFAULT_REGION", "us-east-1"))

    def path(self, db: str, name: str) -> str:
        return f"{self.root}/{stored(db)}/{stored(name)}"

    def _table(self, db: str, name: str, version: int | None = None):
        """The table as it is now (``version``: as of that version), None when there is none.
        The newest is kept from one call to the next and brought up to date from its log
        (``update_incremental``: the versions after the one it holds, whoever wrote them), not
        opened again: an open replays the log from its last checkpoint (up to 100 commits), a few
        ms to tens of ms a call, and a batch asks two or three times per table."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        path = self.path(db, name)
        if version is None:
            t = self.open.get(path)
            if t is not None:
                t.update_incremental()
                return t
        try:
            t = DeltaTable(path, version=version, storage_options=self.options or None)
        except TableNotFoundError:
            return None
        if version is None:
            self.open[path] = t
        return t

    def recorded(self, db: str, name: str) -> dict | None:
        t = self._table(db, name)
        if t is None:
            return None
        for h in t.history(1):
            if "binlogkit.file" in h:
                return {k: str(v) for k, v in h.items() if k.startswith("binlogkit.")}
        return None

    def columns(self, db: str, name: str) -> dict | None:
        t = self._table(db, name)
        if t is None:
            return None
        return {f.name: f.type for f in _arrow_schema(t)}

    def _commit(self, props: dict):
        from deltalake import CommitProperties

        return CommitProperties(custom_metadata=props)

    def append(self, db: str, name: str, rows, props: dict) -> None:
        from deltalake import write_deltalake

        write_deltalake(self._table(db, name) or self.path(db, name), rows, mode="append", schema_mode="merge",
                        storage_options=self.options or None, commit_properties=self._commit(props))

    def _rewrite(self, db: str, name: str, change, props: dict | None = None) -> None:
        """The whole table read, changed by ``change`` (an Arrow table -> an Arrow table) and
        written back as a new version (renames, drops, retypes: delta-rs has no column mapping)
        with ``props`` (a schema change's own coordinates), else the coordinates recorded."""
        from deltalake import write_deltalake

        t = self._table(db, name)
        if t is None:
            return
        data = change(_read(t))
        write_deltalake(self.path(db, name), data, mode="overwrite", schema_mode="overwrite",
                        storage_options=self.options or None,
                        commit_properties=self._commit(props or self.recorded(db, name) or {}))

    def rename(self, db: str, name: str, pairs: list[tuple[str, str]], props: dict | None = None) -> None:
        m = dict(pairs)
        self._rewrite(db, name, lambda d: d.rename_columns([m.get(c, c) for c in d.column_names]), props)

    def drop(self, db: str, name: str, columns: list[str], props: dict | None = None) -> None:
        self._rewrite(db, name, lambda d: d.drop_columns([c for c in columns if c in d.column_names]), props)

    def retype(self, db: str, name: str, columns: dict, props: dict | None = None) -> None:
        from .types import cast

        def retyped(d):
            for c, typ in columns.items():
                if c in d.column_names:
                    d = d.set_column(d.column_names.index(c), c, cast(d[c], typ))
            return d
        self._rewrite(db, name, retyped, props)

    def fill(self, db: str, name: str, values, props: dict) -> None:
        """Columns added with the value of the one row of ``values`` in every row (set where
        the table has the column already): one version with ``props`` (the ALTER's coordinates)."""
        self._rewrite(db, name, lambda d: filled(d, values), props)

    def empty(self, db: str, name: str, props: dict) -> None:
        """Every row gone (TRUNCATE, DROP TABLE), one version with ``props``; the schema stays."""
        from deltalake import write_deltalake

        t = self._table(db, name)
        if t is None:
            return
        empty = _arrow_schema(t).empty_table()
        write_deltalake(self.path(db, name), empty, mode="overwrite", storage_options=self.options or None,
                        commit_properties=self._commit(props))

    def move(self, db: str, name: str, to_db: str, to_name: str, props: dict) -> None:
        """RENAME TABLE: delta-rs cannot move a table, so its rows are written to the new
        path (a new version there, replacing what a table left empty by a DROP held) and the
        old path gets a version without rows: both with ``props`` (a rerun finds the rename
        applied). Time travel before the rename reads the old name."""
        from deltalake import write_deltalake

        t = self._table(db, name)
        if t is None:
            return
        write_deltalake(self.path(to_db, to_name), _read(t), mode="overwrite", schema_mode="overwrite",
                        configuration=SIZED, storage_options=self.options or None,
                        commit_properties=self._commit(props))
        self.empty(db, name, props)

    def table_names(self) -> list[tuple[str, str]]:
        """(database, table) of every Delta table under the warehouse (``DB/T/_delta_log``)."""
        from pyarrow import fs as pafs

        from .names import source

        filesystem, root = pafs.FileSystem.from_uri(self.root if "://" in self.root else os.path.abspath(self.root))
        out = []
        for d in filesystem.get_file_info(pafs.FileSelector(root, recursive=False, allow_not_found=True)):
            if d.type != pafs.FileType.Directory:
                continue
            for t in filesystem.get_file_info(pafs.FileSelector(d.path, recursive=False)):
                if t.type == pafs.FileType.Directory and \
                        filesystem.get_file_info(t.path + "/_delta_log").type == pafs.FileType.Directory:
                    out.append((source(d.base_name), source(t.base_name)))
        return sorted(out)

    def apply(self, db: str, name: str, key: list[str], deletes: list[tuple], rows, props: dict) -> None:
        import pyarrow as pa

        from deltalake import write_deltalake

        t = self._table(db, name)
        if t is None:
            write_deltalake(self.path(db, name), rows, mode="append", storage_options=self.options or None,
                            configuration=SIZED, commit_properties=self._commit(props))
            return
        t = self._sized(t, db, name)
        have = _arrow_schema(t)
        target = pa.unify_schemas([have, rows.schema]) if set(rows.column_names) - set(have.names) else have
        if target is not have:
            t = self._allow_local_time(t, db, name, [target.field(c) for c in set(target.names) - set(have.names)])
        gone = _gone(rows, key, deletes)
        src = arrow_for(target, rows)
        if gone:
            cols = {c: [k[i] for k in gone] for i, c in enumerate(key)}
            src = pa.concat_tables([src, arrow_for(target, pa.table(cols).cast(pa.schema([target.field(c) for c in key])))])
        src = src.append_column(DELETE, pa.array([False] * rows.num_rows + [True] * len(gone)))
        on = " AND ".join(f"t.`{c}` = s.`{c}`" for c in key)
        spans = key_ranges(src[key[0]]) if key else None
        if spans:   # implied by the key's equality: what it adds is the files delta-rs can skip
            on += " AND (" + " OR ".join(f"(t.`{key[0]}` >= {lo} AND t.`{key[0]}` <= {hi})" for lo, hi in spans) + ")"
        sets = {f"`{c}`": f"s.`{c}`" for c in target.names}
        (t.merge(src, on, source_alias="s", target_alias="t", merge_schema=True,
                 commit_properties=self._commit(props))
         .when_matched_delete(predicate=f"s.{DELETE}")
         .when_matched_update(updates=sets, predicate=f"NOT s.{DELETE}")
         .when_not_matched_insert(updates=sets, predicate=f"NOT s.{DELETE}")
         .execute())

    def _sized(self, t, db: str, name: str):
        """A table an earlier build made without ``delta.targetFileSize`` (its MERGEs wrote one
        data file, rewritten whole at every commit) gets it, in a commit of its own that keeps
        the table's recorded coordinates (no row changes); its next MERGE splits the files it
        rewrites. A table that has its own size keeps it. The table as it is then."""
        if "delta.targetFileSize" in (t.metadata().configuration or {}):
            return t
        t.alter.set_table_properties(SIZED, commit_properties=self._commit(self.recorded(db, name) or {}))
        return self._table(db, name)

    def _allow_local_time(self, t, db: str, name: str, added: list):
        """A DATETIME column added to a table without one: delta-rs' merge refuses to add a
        TIMESTAMP_NTZ column unless the table has the ``timestampNtz`` feature (an append with
        schema merge enables it by itself; a merge does not), so the feature is enabled first,
        in a commit of its own that keeps the table's recorded coordinates. The table as it is
        then."""
        import pyarrow as pa

        if not any(pa.types.is_timestamp(f.type) and f.type.tz is None for f in added):
            return t
        if "timestampNtz" in (t.protocol().writer_features or ()):
            return t
        from deltalake import TableFeatures

        t.alter.add_feature(TableFeatures.TimestampWithoutTimezone, allow_protocol_versions_increase=True,
                            commit_properties=self._commit(self.recorded(db, name) or {}))
        return self._table(db, name)

    def rows(self, db: str, name: str, key: list[str], keys: list[tuple]) -> list[dict]:
        """The rows whose key is one of ``keys`` (column -> value)."""
        import pyarrow.compute as pc

        t = self._table(db, name)
        if t is None or not keys:
            return []
        found = _dataset(t).to_table(filter=pc.field(key[0]).isin([k[0] for k in keys]))
        want = set(keys)
        return [r for r in found.to_pylist() if tuple(r[c] for c in key) in want]

    def read(self, db: str, name: str, version: int | None = None):
        t = self._table(db, name, version)
        return None if t is None else _read(t)

    def history(self, db: str, name: str) -> list[tuple[int, dict]]:
        t = self._table(db, name)
        if t is None:
            return []
        return [(h["version"], {k: str(v) for k, v in h.items() if k.startswith("binlogkit.")})
                for h in reversed(t.history())]


SIZED = {"delta.targetFileSize": str(TARGET_FILE_SIZE)}


def _gone(rows, key: list[str], deletes: list[tuple]) -> list[tuple]:
    """The touched keys with no row at the batch's end (``deletes`` less the keys of ``rows``)."""
    if not rows.num_rows:
        return list(deletes)
    if len(key) == 1:
        live = set(rows[key[0]].to_pylist())
        return [k for k in deletes if k[0] not in live]
    both = set(zip(*[rows[c].to_pylist() for c in key]))
    return [k for k in deletes if k not in both]


def key_ranges(column, most: int = KEY_RANGES) -> list[tuple[int, int]] | None:
    """At most ``most`` ranges (low, high) of an integer column's values, each value in one:
    cut at the widest gaps between them (which gaps are cut decides only how narrow the ranges
    are: every value is in one whatever they are). None for another type or no values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_integer(column.type):
        return None
    values = pc.unique(column.drop_null())
    if len(values) == 0:
        return None
    values = pc.take(values, pc.sort_indices(values)).cast(pa.int64() if pa.types.is_signed_integer(column.type)
                                                           else pa.uint64())
    n = len(values)
    cuts: list[int] = []
    if n > most:
        gaps = pc.subtract(values.slice(1), values.slice(0, n - 1))
        cuts = sorted(i + 1 for i in pc.array_sort_indices(gaps, order="descending").to_pylist()[:most - 1])
    starts = [0] + cuts
    ends = [c - 1 for c in cuts] + [n - 1]
    return [(values[a].as_py(), values[b].as_py()) for a, b in zip(starts, ends)]


def _arrow_schema(t):
    import pyarrow as pa

    return pa.schema(t.schema().to_arrow())


def _dataset(t):
    """``t``'s data files as a pyarrow dataset; a local table's through pyarrow's own file system.
    delta-rs' default is a Python file system (its storage handler called back from pyarrow's
    I/O threads), and a process that read through it aborted now and then at its exit ("terminate
    called without an active exception", exit 134: those threads met at the interpreter's
    teardown), its work done: 1 run in 5 to 6 of a script reading five tables back."""
    from urllib.parse import unquote, urlparse

    from pyarrow import fs as pafs

    uri = t.table_uri
    if "://" in uri and not uri.startswith("file://"):
        return t.to_pyarrow_dataset()
    path = unquote(urlparse(uri).path) if uri.startswith("file://") else uri
    return t.to_pyarrow_dataset(filesystem=pafs.SubTreeFileSystem(path, pafs.LocalFileSystem()))


def _read(t):
    import pyarrow as pa

    return pa.table(_dataset(t).to_table())


# -- the Spark backfill (``spark/jobs/mirror.py``): data files written by executors, committed here --

def target_of(sink: DeltaSink, db: str, name: str, schema) -> tuple:
    """What an executor needs to write data files of ``db.name``: its folder, storage options and
    Arrow schema."""
    return ("delta", sink.path(db, name), dict(sink.options), schema)


def write_data_file(target: tuple, rows) -> tuple[str, int, int]:
    """``rows`` as one Parquet file in the table's folder (on an executor): (its path relative
    to the folder, its size, its rows)."""
    import uuid

    import pyarrow.parquet as pq

    from .props import open_file

    _, path, _options, schema = target
    rel = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    with open_file(f"{path}/{rel}", "wb") as fh:
        pq.write_table(arrow_for(schema, rows), fh, compression="snappy")
        size = fh.tell()
    return rel, size, rows.num_rows


def commit_data_files(sink: DeltaSink, db: str, name: str, schema, files: list, props: dict) -> None:
    """One commit of ``db.name`` adding ``files`` (``write_data_file``'s), with ``props``: the
    table made by it when it is not there."""
    import json
    import time

    from deltalake import Schema
    from deltalake.transaction import AddAction, create_table_with_add_actions

    now = int(time.time() * 1000)
    adds = [AddAction(rel, size, {}, now, True, json.dumps({"numRecords": n})) for rel, size, n in files]
    t = sink._table(db, name)
    if t is None:
        create_table_with_add_actions(sink.path(db, name), Schema.from_arrow(schema), adds, mode="error",
                                      configuration=SIZED, storage_options=sink.options or None,
                                      commit_properties=sink._commit(props))
    else:
        t.create_write_transaction(adds, mode="append", schema=Schema.from_arrow(schema),
                                   commit_properties=sink._commit(props))

"""Iceberg tables through pyiceberg: the embedded SQL catalog (SQLite, one file beside the
warehouse) by default, a REST catalog by option. A table commit per call; the batch's
coordinates go into the snapshot summary (``binlogkit.gtid``, ``binlogkit.file``,
``binlogkit.position``, ``binlogkit.commit_time``)."""

from __future__ import annotations

import os
from typing import Any

from ..._optional import need
from ...errors import UsageError
from .names import source, stored
from .props import arrow_for, filled, nulls_like


class IcebergSink:
    kind = "iceberg"

    def __init__(self, warehouse: str, catalog: str | None = None) -> None:
        need("pyiceberg", "binlogkit export --format iceberg", extra="lake")
        from pyiceberg.catalog import load_catalog

        local = "://" not in warehouse or warehouse.startswith("file://")
        root = warehouse[len("file://"):] if warehouse.startswith("file://") else warehouse
        if local:
            os.makedirs(root, exist_ok=True)
            wh = "file://" + os.path.abspath(root)
        else:
            wh = warehouse
        props = {"warehouse": wh}
        if wh.startswith("s3://"):
            from ...reading import storage  # noqa: F401  (the AWS environment, as every s3:// input reads it)

            endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
            if endpoint:
                props["s3.endpoint"] = endpoint
            for env, key in (("AWS_ACCESS_KEY_ID", "s3.access-key-id"), ("AWS_SECRET_ACCESS_KEY", "s3.secret-access-key"),
                             ("AWS_DEFAULT_REGION", "s3.region")):
                if os.environ.get(env):
                    props[key] = os.environ[env]
        if catalog and catalog.startswith(("http://", "https://")):
            self.catalog = load_catalog("binlogkit", type="rest", uri=catalog, **props)
        else:
            if catalog is None and not local:
                raise UsageError("--format iceberg with an object-store warehouse needs --catalog "
                                 "(a SQLite file path, or a REST catalog's http(s):// URL)")
            path = catalog or os.path.join(root, "catalog.sqlite")
            self.catalog = load_catalog("binlogkit", type="sql", uri=f"sqlite:///{os.path.abspath(path)}", **props)
        self.tables: dict = {}
        self.entries: dict = {}   # (db, table) -> manifest path -> live entries (``rewrite``)

    def _load(self, db: str, name: str):
        from pyiceberg.exceptions import NoSuchTableError

        t = self.tables.get((db, name))
        if t is None:
            try:
                t = self.catalog.load_table((stored(db), stored(name)))
            except NoSuchTableError:
                return None
            self.tables[(db, name)] = t
        return t

    def _create(self, db: str, name: str, schema):
        self.catalog.create_namespace_if_not_exists(stored(db))
        # data files of at most REWRITE_BYTES (Arrow bytes; pyiceberg's default is 512 MB): a
        # mirror commit reads a touched file whole, so this bounds its memory in a big table
        t = self.catalog.create_table_if_not_exists((stored(db), stored(name)), schema=schema,
                                                    properties={"write.target-file-size-bytes": str(REWRITE_BYTES)})
        self.tables[(db, name)] = t
        return t

    def recorded(self, db: str, name: str) -> dict | None:
        t = self._load(db, name)
        if t is None or t.current_snapshot() is None:
            return None
        p = t.current_snapshot().summary.additional_properties
        return p if "binlogkit.file" in p else None

    def columns(self, db: str, name: str) -> dict | None:
        t = self._load(db, name)
        return None if t is None else {f.name: f.type for f in t.schema().as_arrow()}

    def _evolve(self, t, schema):
        have = set(t.schema().as_arrow().names)
        if any(f.name not in have for f in schema):
            with t.update_schema() as u:
                u.union_by_name(schema)

    def rename(self, db: str, name: str, pairs: list[tuple[str, str]], props: dict | None = None) -> None:
        """Columns renamed: a schema change, no snapshot (``props`` unused)."""
        t = self._load(db, name)
        if t is None:
            return
        have = set(t.schema().as_arrow().names)
        todo = [(a, b) for a, b in pairs if a in have and b not in have]
        if todo:
            with t.update_schema() as u:
                for a, b in todo:
                    u.rename_column(a, b)

    def drop(self, db: str, name: str, columns: list[str], props: dict | None = None) -> None:
        """Columns dropped: a schema change, no snapshot (``props`` unused)."""
        t = self._load(db, name)
        if t is None:
            return
        have = set(t.schema().as_arrow().names)
        todo = [c for c in columns if c in have]
        if todo:
            with t.update_schema() as u:
                for c in todo:
                    u.delete_column(c)

    def retype(self, db: str, name: str, columns: dict, props: dict | None = None) -> None:
        """Columns whose type changed: each column dropped and added again with the new type and
        its values cast, in one commit (``replace`` with ``drop`` and ``evolve``: the schema
        change and the rewritten rows, one snapshot with ``props``: the ALTER's coordinates, else
        those recorded), so no reader sees the column missing or NULL in between, and a run
        killed inside it leaves the table as it was."""
        t = self._load(db, name)
        if t is None:
            return
        import pyarrow as pa

        from .types import cast
        # the rewrite is a snapshot: it carries the coordinates already recorded, or a rerun would
        # read the table as never exported and replay its change table from the start
        props = props or {k: v for k, v in (self.recorded(db, name) or {}).items() if k.startswith("binlogkit.")}
        current = t.scan().to_arrow()
        for c, typ in columns.items():
            if c in current.column_names:
                current = current.set_column(current.schema.get_field_index(c), c, cast(current[c], typ))
        replace(t, current, props, drop=[c for c in columns if c in current.column_names],
                evolve=pa.schema([pa.field(c, typ) for c, typ in columns.items()]))

    def fill(self, db: str, name: str, values, props: dict) -> None:
        """Columns added with the value of the one row of ``values`` in every row: the schema
        change and the data rewritten in one commit, one snapshot with ``props`` (the ALTER's
        coordinates). A column there already (NULL in every row: a fill by an earlier build,
        which made two commits, killed between them) is set to the value too."""
        t = self._load(db, name)
        if t is None:
            return
        current = t.scan().to_arrow()
        replace(t, filled(current, values), props, evolve=values.schema)

    def append(self, db: str, name: str, rows, props: dict) -> None:
        t = self._load(db, name) or self._create(db, name, rows.schema)
        self._evolve(t, rows.schema)
        with transaction(t) as tx:
            tx.append(arrow_for(t.schema().as_arrow(), rows), snapshot_properties=props)

    def empty(self, db: str, name: str, props: dict) -> None:
        """Every row gone (TRUNCATE, DROP TABLE), one snapshot with ``props``; the schema stays."""
        t = self._load(db, name)
        if t is None:
            return
        replace(t, t.schema().as_arrow().empty_table(), props)

    def move(self, db: str, name: str, to_db: str, to_name: str, props: dict) -> None:
        """RENAME TABLE: the table renamed in the catalog (its snapshots, and so its time travel,
        go with it; a table already at the new name, left empty by a DROP, is dropped first),
        then a snapshot of it changing no row, and a table of the same schema without rows at
        the old name, both with ``props`` (a rerun finds the rename applied; one killed between
        the rename and those snapshots finds the table at the new name and writes them)."""
        t = self._load(db, name)
        if t is None:
            # renamed by a run killed before its two snapshots: finish it
            moved = self._load(to_db, to_name)
            if moved is None:
                return
        else:
            if self._load(to_db, to_name) is not None:
                self.catalog.drop_table((stored(to_db), stored(to_name)))
            for k in ((db, name), (to_db, to_name)):
                self.tables.pop(k, None)
                self.entries.pop(k, None)
            self.catalog.create_namespace_if_not_exists(stored(to_db))
            moved = self.catalog.rename_table((stored(db), stored(name)), (stored(to_db), stored(to_name)))
            self.tables[(to_db, to_name)] = moved
        empty = moved.schema().as_arrow().empty_table()
        moved.append(empty, snapshot_properties=props)
        self._create(db, name, moved.schema().as_arrow()).append(empty, snapshot_properties=props)

    def apply(self, db: str, name: str, key: list[str], deletes: list[tuple], rows, props: dict) -> None:
        """Delete the rows of keys ``deletes`` (every touched key), then append ``rows``: one
        snapshot (the table's one commit of the batch), copy-on-write limited to the data files
        whose key bounds can hold a touched key (``rewrite``)."""
        t = self._load(db, name)
        if t is None:
            t = self._create(db, name, rows.schema)
            deletes = []
        self._evolve(t, rows.schema)
        ident = (db, name)
        self.entries[ident] = rewrite(t, key, deletes, arrow_for(t.schema().as_arrow(), rows), props,
                                      self.entries.get(ident))
        self.tables[ident] = t

    def rows(self, db: str, name: str, key: list[str], keys: list[tuple]) -> list[dict]:
        """The rows whose key is one of ``keys`` (column -> value)."""
        t = self._load(db, name)
        if t is None or not keys:
            return []
        return t.scan(row_filter=key_filter(key, keys)).to_arrow().to_pylist()

    def read(self, db: str, name: str, snapshot_id: int | None = None):
        t = self._load(db, name)
        return None if t is None else t.scan(snapshot_id=snapshot_id).to_arrow()

    def history(self, db: str, name: str) -> list[tuple[int, dict]]:
        """(snapshot id, summary properties) of every snapshot, oldest first."""
        t = self._load(db, name)
        return [] if t is None else [(s.snapshot_id, dict(s.summary.additional_properties)) for s in t.snapshots()]

    def table_names(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for ns in self.catalog.list_namespaces():
            out += [(source(i[0]), source(i[-1])) for i in self.catalog.list_tables(ns)]
        return sorted(out)


REWRITE_BYTES = 64 << 20   # survivors of rewritten files gathered into one write (Arrow bytes)


def rewrite(t, key: list[str], deletes: list[tuple], rows, props: dict, cache: dict | None = None) -> dict:
    """One OVERWRITE snapshot of ``t``: the data files that hold a key of ``deletes`` replaced by
    their other rows, and ``rows`` added. Which files: those whose lower/upper bounds of the
    key's first column (the manifests' statistics) enclose a touched key (``candidates``); each
    is read alone (pyiceberg's scan: renamed and added columns resolved by field id), its rows
    of touched keys dropped, and the survivors of several files written together with the new
    rows (``REWRITE_BYTES`` at a time: memory is the batch plus that, not the table). A file
    none of whose rows is touched stays.

    pyiceberg's own ``delete(row_filter)`` binds an ``In`` of every key several times per
    commit (most of the mirror's CPU), makes up to three snapshots and keeps every manifest
    that only records deletions forever, reading them all again at every commit. Here:
    one snapshot, manifests without live files dropped, and the live entries of the
    (immutable) manifests kept in ``cache`` (manifest path -> entries) so a commit reads only
    the manifests the previous one wrote. Returns the cache for the next commit."""
    import itertools

    import pyarrow as pa
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan, _dataframe_to_data_files
    from pyiceberg.table import FileScanTask
    from pyiceberg.table.snapshots import Operation

    meta = t.metadata
    schema = meta.schema()
    target = schema.as_arrow()
    manifests = live_manifests(t, cache or {})
    files = candidates(manifests, schema.find_field(key[0]), deletes) if deletes else []
    gone = _key_table(target, key, deletes) if files else None
    with transaction(t) as tx:
        ow = _classes()[1](operation=Operation.APPEND if meta.current_snapshot() is None else Operation.OVERWRITE,
                              transaction=tx, io=t.io, snapshot_properties=props)
        ow.parent_manifests = manifests
        with ow:
            counter = itertools.count(0)

            def write(parts: list) -> None:
                data = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
                if data.num_rows:
                    for f in _dataframe_to_data_files(table_metadata=meta, df=data, io=t.io,
                                                      write_uuid=ow.commit_uuid, counter=counter):
                        ow.append_data_file(f)

            pending: list = []
            size = 0
            for f in files:
                data = ArrowScan(meta, t.io, schema, AlwaysTrue()).to_table([FileScanTask(f)])
                keep = _without(data, key, gone)
                if keep.num_rows == data.num_rows:
                    continue
                ow.delete_data_file(f)
                if keep.num_rows:
                    pending.append(arrow_for(target, keep))
                    size += keep.nbytes
                if size >= REWRITE_BYTES:
                    write(pending)
                    pending, size = [], 0
            write(pending + [rows])
    return {m.manifest_path: e for m, e in ow.kept if e is not None}


def replace(t, rows, props: dict, *, evolve=None, drop: list[str] | tuple = ()) -> None:
    """One snapshot of ``t`` holding exactly ``rows``: every live data file deleted and ``rows``
    added in the same OVERWRITE (pyiceberg's ``overwrite`` makes a DELETE snapshot, an empty
    table carrying ``props``, then an APPEND). ``evolve``: an Arrow schema whose columns the
    table lacks are added in the same commit (``rows`` then take the evolved schema): no reader
    ever sees the new columns without their values. ``drop``: columns deleted from the schema
    first, in the same commit (a retype: dropped, then added again by ``evolve`` with the new
    type)."""
    import itertools

    from pyiceberg.io.pyarrow import _dataframe_to_data_files
    from pyiceberg.table.snapshots import Operation

    meta = t.metadata
    manifests = live_manifests(t, {})
    with transaction(t) as tx:
        if drop:
            with tx.update_schema() as u:
                for c in drop:
                    u.delete_column(c)
            meta = tx.table_metadata
        if evolve is not None:
            have = set(meta.schema().as_arrow().names)
            if any(f.name not in have for f in evolve):
                with tx.update_schema() as u:
                    u.union_by_name(evolve)
                meta = tx.table_metadata
            rows = arrow_for(meta.schema().as_arrow(), rows)
        ow = _classes()[1](operation=Operation.APPEND if meta.current_snapshot() is None else Operation.OVERWRITE,
                              transaction=tx, io=t.io, snapshot_properties=props)
        ow.parent_manifests = manifests
        with ow:
            for _m, entries in manifests:
                for e in entries or ():
                    ow.delete_data_file(e.data_file)
            if rows.num_rows:
                for f in _dataframe_to_data_files(table_metadata=meta, df=rows, io=t.io, write_uuid=ow.commit_uuid,
                                                  counter=itertools.count(0)):
                    ow.append_data_file(f)


def live_manifests(t, cache: dict) -> list[tuple]:
    """(manifest, its live entries) of ``t``'s current snapshot; entries None for a manifest
    of delete files (binlogkit writes none; kept as they are)."""
    from pyiceberg.manifest import ManifestContent

    snap = t.metadata.current_snapshot()
    if snap is None:
        return []
    out = []
    for m in snap.manifests(t.io):
        if m.content != ManifestContent.DATA:
            out.append((m, None))
            continue
        e = cache.get(m.manifest_path)
        out.append((m, m.fetch_manifest_entry(t.io, discard_deleted=True) if e is None else e))
    return out


def candidates(manifests: list[tuple], field, deletes: list[tuple]) -> list:
    """The live data files (of ``live_manifests``) that may hold a key of ``deletes``: by the
    bounds of the key's first column ``field`` (a file without them, or of a type not
    compared here, is a candidate)."""
    import bisect

    from pyiceberg.conversions import from_bytes

    firsts = _comparable(field.field_type, [k[0] for k in deletes])
    out = []
    for _m, entries in manifests:
        for e in entries or ():
            f = e.data_file
            if firsts is not None:
                lo, hi = (f.lower_bounds or {}).get(field.field_id), (f.upper_bounds or {}).get(field.field_id)
                if lo is not None and hi is not None:
                    i = bisect.bisect_left(firsts, from_bytes(field.field_type, lo))
                    if i == len(firsts) or firsts[i] > from_bytes(field.field_type, hi):
                        continue
            out.append(f)
    return out


_CLASSES: list = []


def transaction(t):
    """A pyiceberg transaction of ``t`` whose ``table_metadata`` is computed once per staged
    change: pyiceberg's property deep-copies the whole metadata, every snapshot of the table's
    history, at each of its ~20 reads per commit, so a commit's cost grew with the number of
    earlier commits (an append at the 56th snapshot: 90 % in those copies). The metadata models
    are frozen; the copy is shared, not mutated."""
    return _classes()[0](t)


def _classes():
    """(the transaction class, the rewrite class); pyiceberg imported only when used.

    The rewrite is pyiceberg's OVERWRITE producer, fed the parent snapshot's manifests and
    live entries (``parent_manifests``) instead of reading every manifest twice, and dropping
    the manifests left without a live file (what its fast append does; its overwrite keeps them)."""
    if _CLASSES:
        return _CLASSES[0]
    from pyiceberg.manifest import ManifestEntry, ManifestEntryStatus
    from pyiceberg.table import Transaction
    from pyiceberg.table.update import update_table_metadata
    from pyiceberg.table.update.snapshot import _OverwriteFiles

    class Tx(Transaction):
        _memo: tuple = (None, None, None)

        @property
        def table_metadata(self):
            if not self._updates:
                return self._table.metadata
            base, updates, meta = self._memo
            if base is not self._table.metadata or updates is not self._updates:
                meta = update_table_metadata(self._table.metadata, self._updates)
                self._memo = (self._table.metadata, self._updates, meta)
            return meta

    class Rewrite(_OverwriteFiles):
        parent_manifests: list[tuple] = []
        kept: list[tuple] = []

        def _existing_manifests(self) -> list:
            gone = self._deleted_data_files
            out: list = []
            kept: list = []
            for m, entries in self.parent_manifests:
                if entries is None:
                    out.append(m)
                    kept.append((m, None))
                    continue
                rest = [e for e in entries if e.data_file not in gone]
                if not rest:
                    continue                      # no live file left: not carried
                if len(rest) == len(entries):
                    out.append(m)
                    kept.append((m, entries))
                    continue
                with self.new_manifest_writer(self.spec(m.partition_spec_id)) as writer:
                    for e in rest:
                        writer.add_entry(ManifestEntry.from_args(
                            status=ManifestEntryStatus.EXISTING, snapshot_id=e.snapshot_id,
                            sequence_number=e.sequence_number, file_sequence_number=e.file_sequence_number,
                            data_file=e.data_file))
                nm = writer.to_manifest_file()
                out.append(nm)
                kept.append((nm, rest))
            self.kept = kept
            return out

        def _deleted_entries(self) -> list:
            gone = self._deleted_data_files
            out = [ManifestEntry.from_args(status=ManifestEntryStatus.DELETED, snapshot_id=self._snapshot_id,
                                           sequence_number=e.sequence_number,
                                           file_sequence_number=e.file_sequence_number, data_file=e.data_file)
                   for _m, entries in self.parent_manifests for e in entries or () if e.data_file in gone]
            check = getattr(self, "_validate_required_deletes", None)   # pyiceberg > 0.12
            if check is not None:
                check(out)
            return out

    _CLASSES.append((Tx, Rewrite))
    return _CLASSES[0]


def _comparable(typ, values: list) -> list | None:
    """``values`` (a key column's Python values) sorted, in the domain pyiceberg's
    ``from_bytes`` gives that type's bounds (days, microseconds, ...); None: not compared."""
    import datetime
    from decimal import Decimal

    import pyiceberg.types as it

    def micros(v):
        if isinstance(v, datetime.datetime):
            if v.tzinfo is not None:
                v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            return (v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
        raise TypeError(v)

    conv: dict = {it.IntegerType: int, it.LongType: int, it.StringType: str, it.BinaryType: bytes,
                  it.DecimalType: Decimal, it.DateType: lambda v: (v - datetime.date(1970, 1, 1)).days,
                  it.TimestampType: micros, it.TimestamptzType: micros}
    c = conv.get(type(typ))
    if c is None:
        return None
    try:
        return sorted(c(v) for v in values)
    except (TypeError, ValueError, AttributeError):
        return None


def _key_table(target, key: list[str], keys: list[tuple]):
    """The touched keys as an Arrow table of the key columns in the table's types."""
    import pyarrow as pa

    return pa.table({c: pa.array([k[i] for k in keys], target.field(c).type) for i, c in enumerate(key)})


def _without(data, key: list[str], gone):
    """The rows of ``data`` whose key is not a row of ``gone``."""
    import pyarrow.compute as pc

    if len(key) == 1:
        c = key[0]
        return data.filter(pc.invert(pc.is_in(data[c], value_set=gone[c].combine_chunks().cast(data[c].type))))
    import pyarrow as pa

    try:
        return data.join(gone.cast(pa.schema([data.schema.field(c) for c in key])), keys=key,
                         join_type="left anti")
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):   # a type Arrow cannot join on
        drop = set(zip(*[gone[c].to_pylist() for c in key]))
        mask = [k not in drop for k in zip(*[data[c].to_pylist() for c in key])]
        return data.filter(pa.array(mask, pa.bool_()))


def key_filter(key: list[str], keys: list[tuple]) -> Any:
    """The row filter of the rows whose primary key is one of ``keys`` (``rows``: a partial row
    image's current row, read by key)."""
    import pyiceberg.expressions as ex

    e: Any = ex
    if len(key) == 1:
        return e.In(key[0], [k[0] for k in keys])
    terms = [e.And(*[e.EqualTo(c, v) for c, v in zip(key, k)]) for k in keys]
    return terms[0] if len(terms) == 1 else e.Or(*terms)


__all__ = ["IcebergSink", "candidates", "key_filter", "nulls_like", "rewrite"]


# -- the Spark backfill (``spark/jobs/mirror.py``): data files written by executors, committed here --

def target_of(sink: IcebergSink, db: str, name: str, schema) -> tuple:
    """What an executor needs to write data files of ``db.name`` (made now if it is not there,
    without a snapshot): the table's metadata and the catalog's file-IO properties."""
    t = sink._load(db, name) or sink._create(db, name, schema)
    sink._evolve(t, schema)
    t = sink.catalog.load_table((stored(db), stored(name)))
    sink.tables[(db, name)] = t
    return ("iceberg", t.metadata, dict(sink.catalog.properties))


def write_data_files(target: tuple, rows) -> list:
    """``rows`` as data files of the table of ``target`` (``target_of``), on an executor:
    pyiceberg's own writer (field ids, statistics); the ``DataFile`` entries to commit."""
    import itertools
    import uuid

    from pyiceberg.io import load_file_io
    from pyiceberg.io.pyarrow import _dataframe_to_data_files

    _, meta, props = target
    io = load_file_io(props, meta.location)
    return list(_dataframe_to_data_files(table_metadata=meta, df=arrow_for(meta.schema().as_arrow(), rows), io=io,
                                         write_uuid=uuid.uuid4(), counter=itertools.count(0)))


def commit_data_files(sink: IcebergSink, db: str, name: str, files: list, props: dict) -> None:
    """One APPEND snapshot of ``db.name`` adding ``files`` (``write_data_files``'), with ``props``."""
    t = sink.catalog.load_table((stored(db), stored(name)))
    with t.transaction() as tx:
        with tx.update_snapshot(snapshot_properties=props).fast_append() as fa:
            for f in files:
                fa.append_data_file(f)
    sink.tables.pop((db, name), None)

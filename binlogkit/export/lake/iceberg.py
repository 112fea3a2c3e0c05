"""Iceberg tables through pyiceberg: the embedded SQL catalog (SQLite, one file beside the
warehouse) by default, a REST catalog by option. A table commit per call; the batch's
coordinates go into the snapshot summary (``binlogkit.gtid``, ``binlogkit.file``,
``binlogkit.position``, ``binlogkit.commit_time``)."""

from __future__ import annotations

import os
import warnings
from typing import Any

from ..._optional import need
from ...errors import UsageError
from .names import source, stored
from .props import arrow_for, nulls_like


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
        t = self.catalog.create_table_if_not_exists((stored(db), stored(name)), schema=schema)
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

    def rename(self, db: str, name: str, pairs: list[tuple[str, str]]) -> None:
        t = self._load(db, name)
        if t is None:
            return
        have = set(t.schema().as_arrow().names)
        todo = [(a, b) for a, b in pairs if a in have and b not in have]
        if todo:
            with t.update_schema() as u:
                for a, b in todo:
                    u.rename_column(a, b)

    def drop(self, db: str, name: str, columns: list[str]) -> None:
        t = self._load(db, name)
        if t is None:
            return
        have = set(t.schema().as_arrow().names)
        todo = [c for c in columns if c in have]
        if todo:
            with t.update_schema() as u:
                for c in todo:
                    u.delete_column(c)

    def retype(self, db: str, name: str, columns: dict) -> None:
        """Columns whose type changed: an Iceberg promotion where there is one, else the column
        dropped and added again with its values cast (the table's data rewritten once)."""
        t = self._load(db, name)
        if t is None:
            return
        import pyarrow.compute as pc

        from pyiceberg.io.pyarrow import pyarrow_to_schema  # noqa: F401
        current = t.scan().to_arrow()
        with t.update_schema() as u:
            for c in columns:
                u.delete_column(c)
        with t.update_schema() as u:
            for c, typ in columns.items():
                import pyarrow as pa

                u.union_by_name(pa.schema([pa.field(c, typ)]))
        if current.num_rows:
            for c, typ in columns.items():
                current = current.set_column(current.schema.get_field_index(c), c, pc.cast(current[c], typ, safe=False))
            t.overwrite(arrow_for(t.schema().as_arrow(), current))

    def fill(self, db: str, name: str, values) -> None:
        """Columns added with the value of the one row of ``values`` in every row (the data
        rewritten once, under the table's recorded coordinates)."""
        import pyarrow as pa

        t = self._load(db, name)
        if t is None:
            return
        props = {k: v for k, v in (self.recorded(db, name) or {}).items() if k.startswith("binlogkit.")}
        current = t.scan().to_arrow()
        self._evolve(t, values.schema)
        for f in values.schema:
            if f.name not in current.column_names:
                current = current.append_column(f, pa.repeat(values[f.name][0], current.num_rows).cast(f.type))
        t.overwrite(arrow_for(t.schema().as_arrow(), current), snapshot_properties=props)

    def append(self, db: str, name: str, rows, props: dict) -> None:
        t = self._load(db, name) or self._create(db, name, rows.schema)
        self._evolve(t, rows.schema)
        t.append(arrow_for(t.schema().as_arrow(), rows), snapshot_properties=props)

    def apply(self, db: str, name: str, key: list[str], deletes: list[tuple], rows, props: dict) -> None:
        """Delete the rows of keys ``deletes`` (every touched key), then append ``rows``: one
        transaction (the table's one commit of the batch)."""
        t = self._load(db, name)
        if t is None:
            t = self._create(db, name, rows.schema)
            deletes = []
        self._evolve(t, rows.schema)
        with t.transaction() as tx:
            if deletes:
                expr = key_filter(key, deletes)
                with warnings.catch_warnings():  # "did not match any records": keys new to the table
                    warnings.simplefilter("ignore")
                    tx.delete(expr, snapshot_properties=props)
            tx.append(arrow_for(t.schema().as_arrow(), rows), snapshot_properties=props)
        self.tables[(db, name)] = t

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


def key_filter(key: list[str], keys: list[tuple]) -> Any:
    """The row filter of the rows whose primary key is one of ``keys``."""
    import pyiceberg.expressions as ex

    e: Any = ex
    if len(key) == 1:
        return e.In(key[0], [k[0] for k in keys])
    terms = [e.And(*[e.EqualTo(c, v) for c, v in zip(key, k)]) for k in keys]
    return terms[0] if len(terms) == 1 else e.Or(*terms)


__all__ = ["IcebergSink", "key_filter", "nulls_like"]

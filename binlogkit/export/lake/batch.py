"""One table's change rows of a batch, as Arrow columns of the export layout (pure: decoded
``Rows`` in, an Arrow table out).

The columns are those of the Parquet change table (``export.schema.layout``): ``op``, ``gtid``,
``server_id``, ``commit_time``, ``file``, ``offset``, ``row_index``, ``schema_version``, then
``before_<column>`` and ``after_<column>``; ``types.to_lake`` makes them lakehouse types. A
batch holds one layout: a new table version starts a new batch (``mirror.Mirror`` flushes).
"""

from __future__ import annotations

from ..changes import Rows, op_of
from ..schema import Layout, layout


class TableBatch:
    def __init__(self, lay: Layout, key: tuple[int, ...] | None) -> None:
        self.layout = lay
        self.key = key                        # column indexes of the primary key, None: none
        self.cols: dict[str, list] = {n: [] for n in lay.schema.names}
        self.pos: list[tuple] = []            # per row: the order key of its transaction's end
        # per row: the (mirror) columns its after image holds, None when it holds every one
        self.present: list[frozenset | None] = []
        self.n = 0

    def add(self, r: Rows, pos: tuple) -> None:
        lay, t, c = self.layout, r.trx, self.cols
        n = len(r.rows)
        op = op_of(r.type_code)
        c["op"] += [op] * n
        c["gtid"] += [t.gtid] * n
        c["server_id"] += [t.server_id] * n
        c["commit_time"] += [t.last_timestamp] * n
        c["file"] += [r.file.rsplit("/", 1)[-1]] * n
        c["offset"] += [r.offset] * n
        c["row_index"] += range(r.row_index, r.row_index + n)
        c["schema_version"] += [lay.version] * n
        width = len(lay.columns)
        for side in ("before", "after"):
            images = [row[side] for row in r.rows]
            if None not in images and all(len(img) == width for img in images):
                # whole images (binlog_row_image=FULL): column by column, no lookups
                by_col = list(zip(*images)) if n else [()] * width
                for k, spec in enumerate(lay.columns):
                    conv, text = lay.converters[k]
                    pairs = by_col[k]
                    if conv is None:
                        c[f"{side}_{spec.name}"] += [None if p[1] is None else p[1].value for p in pairs]
                    else:
                        c[f"{side}_{spec.name}"] += [None if p[1] is None else conv(p[1]) for p in pairs]
                    if spec.text_companion:
                        c[f"{side}_{spec.name}__text"] += [None if p[1] is None or text is None else text(p[1])
                                                           for p in pairs]
                if side == "after":
                    self.present += [None] * n
                continue
            for i, img in enumerate(images):
                present = {} if img is None else dict(img)
                if side == "after":
                    whole = img is None or len(present) >= width
                    self.present.append(None if whole else frozenset(
                        n for k in present for n in ((lay.columns[k].name, lay.columns[k].name + "__text")
                                                     if lay.columns[k].text_companion else (lay.columns[k].name,))))
                for k, spec in enumerate(lay.columns):
                    conv, text = lay.converters[k]
                    v = present.get(k)
                    c[f"{side}_{spec.name}"].append(None if v is None else v.value if conv is None else conv(v))
                    if spec.text_companion:
                        c[f"{side}_{spec.name}__text"].append(None if v is None or text is None else text(v))
        self.pos += [pos] * n
        self.n += n

    def where(self, row: int) -> str:
        """file@offset (GTID) of the change row ``row`` of the batch."""
        c = self.cols
        return f"{c['file'][row]}@{c['offset'][row]} ({c['gtid'][row] or 'no GTID'})"

    def arrow(self):
        """The change rows in lakehouse types."""
        import pyarrow as pa

        from .types import to_lake

        return to_lake(pa.Table.from_pydict(self.cols, schema=self.layout.schema))

    def key_names(self) -> list[str] | None:
        if not self.key:
            return None
        return [self.layout.columns[k].name for k in self.key]


def batch_for(r: Rows) -> TableBatch:
    return TableBatch(layout(r.table), r.table.primary_key or None)


def mirror_columns(change_schema) -> list[str]:
    """The ``after_`` columns of a change table's schema: the mirror's columns (prefix off)."""
    return [n for n in change_schema.names if n.startswith("after_")]


def mirror_rows(changes, picks: list[int]):
    """The rows ``picks`` of an Arrow change table as mirror rows (``after_`` columns, prefix off)."""
    import pyarrow as pa

    names = mirror_columns(changes.schema)
    sub = changes.select(names).take(pa.array(picks, pa.int64()))
    return sub.rename_columns([n[len("after_"):] for n in names])

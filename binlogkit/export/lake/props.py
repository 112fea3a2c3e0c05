"""What both table formats share: the commit properties of a batch, and an Arrow table fitted
to a table's schema (pure)."""

from __future__ import annotations

import datetime

PREFIX = "binlogkit."


def commit_props(gtid: str | None, file: str, position: int, commit_time: int, transactions: int,
                 gtid_state: str | None = None) -> dict[str, str]:
    """The coordinates of the end of a batch: its last transaction's GTID, where it ended
    (file and position after its last event), its commit time (UTC) and, when known, the
    executed GTID state then (``state``: MySQL's GTID set, MariaDB's position)."""
    when = datetime.datetime.fromtimestamp(commit_time, datetime.timezone.utc).isoformat()
    out = {PREFIX + "gtid": gtid or "", PREFIX + "file": file, PREFIX + "position": str(position),
           PREFIX + "commit_time": when, PREFIX + "transactions": str(transactions)}
    if gtid_state is not None:
        out[PREFIX + "gtid_state"] = gtid_state
    return out


def position_of(props: dict | None) -> tuple | None:
    """The order key of a recorded position (``order_key``), None when none was recorded."""
    if not props or not props.get(PREFIX + "file"):
        return None
    return order_key(props[PREFIX + "file"], int(props[PREFIX + "position"]))


def order_key(file: str, offset: int) -> tuple:
    """Binlog order of (file, offset): by the file's numeric suffix, then its name, then offset;
    a compressed copy's name (``NAME.000002.gz``) is the file's (``NAME.000002``)."""
    from ...reading.names import strip_compressed

    base = strip_compressed(file.rsplit("/", 1)[-1])
    suffix = base.rsplit(".", 1)[-1]
    return (int(suffix) if suffix.isdigit() else -1, base, offset)


def nulls_like(field, n: int):
    import pyarrow as pa

    return pa.nulls(n, field.type)


def arrow_for(schema, rows):
    """``rows`` with the columns of ``schema`` in its order (nulls for those it lacks), cast."""
    import pyarrow as pa

    cols = []
    for f in schema:
        if f.name in rows.column_names:
            c = rows[f.name]
            cols.append(c if c.type == f.type else c.cast(f.type))
        else:
            cols.append(pa.nulls(rows.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def open_file(path: str, mode: str):
    """A file of the warehouse opened for ``mode`` ("rb" / "wb"): a local path (its folder made
    for writing) or a URL through the output's filesystem (``export.output.output_fs``)."""
    import os

    from ...reading import storage

    if storage.is_url(path) and not path.startswith("file://"):
        from ..output import output_fs

        fs, p = output_fs(path)
        return fs.open(p, mode)
    local = path[len("file://"):] if path.startswith("file://") else path
    if "w" in mode:
        os.makedirs(os.path.dirname(os.path.abspath(local)), exist_ok=True)
    return open(local, mode)


def filled(data, values):
    """``data`` (an Arrow table) with each column of ``values`` (one row) set to its value in
    every row: added, or replaced where ``data`` has it."""
    import pyarrow as pa

    for f in values.schema:
        col = pa.repeat(values[f.name][0], data.num_rows).cast(f.type)
        i = data.schema.get_field_index(f.name)
        data = data.set_column(i, f, col) if i >= 0 else data.append_column(f, col)
    return data

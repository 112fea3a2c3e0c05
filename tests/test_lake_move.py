"""The sinks' RENAME TABLE (``move``) and table listing, on local warehouses (no server): the rows
go to the new name with a commit at the statement's coordinates, the old name stays, empty, at the
same coordinates (a rerun finds the rename applied); Iceberg keeps the table's snapshots under its
new name, and a rename a killed run left half done (renamed in the catalog, without its two
snapshots) is finished by the next."""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")

from binlogkit.export.lake.props import commit_props, position_of  # noqa: E402

BEFORE = commit_props("0-1-5", "mariadb-bin.000001", 900, 1_700_000_000, 1)
AT = commit_props("0-1-9", "mariadb-bin.000001", 2000, 1_700_000_100, 1)
ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "v": pa.array(["a", "b", "c"])})


def _sink(fmt: str, path):
    pytest.importorskip("pyiceberg" if fmt == "iceberg" else "deltalake")
    from binlogkit.export.lake.mirror import open_sink

    return open_sink(fmt, str(path))


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_move_takes_the_rows_and_leaves_the_old_name_empty(fmt, tmp_path):
    sink = _sink(fmt, tmp_path / "w")
    sink.apply("shop", "t", ["id"], [], ROWS, BEFORE)
    sink.move("shop", "t", "arch", "t_2025", AT)
    moved = sink.read("arch", "t_2025")
    assert sorted(moved.to_pylist(), key=lambda r: r["id"]) == ROWS.to_pylist()
    assert sink.read("shop", "t").num_rows == 0 and sink.columns("shop", "t") == sink.columns("arch", "t_2025")
    for db, name in (("shop", "t"), ("arch", "t_2025")):
        assert position_of(sink.recorded(db, name)) == position_of(AT)
    if fmt == "iceberg":       # its history went with it: the rows as of before the rename
        assert position_of(sink.history("arch", "t_2025")[0][1]) == position_of(BEFORE)
    else:                      # the old path keeps the history up to the rename
        assert sink.read("shop", "t", version=0).num_rows == 3
        assert sink.table_names() == [("arch", "t_2025"), ("shop", "t")]


def test_an_iceberg_rename_a_killed_run_left_half_done_is_finished(tmp_path):
    sink = _sink("iceberg", tmp_path / "w")
    sink.apply("shop", "t", ["id"], [], ROWS, BEFORE)
    sink.catalog.rename_table(("shop", "t"), ("shop", "t2"))     # killed before the two snapshots
    sink.tables.clear()
    sink.move("shop", "t", "shop", "t2", AT)
    assert sink.read("shop", "t2").num_rows == 3 and sink.read("shop", "t").num_rows == 0
    assert position_of(sink.recorded("shop", "t2")) == position_of(sink.recorded("shop", "t")) == position_of(AT)


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_move_replaces_a_table_a_drop_left_at_the_new_name(fmt, tmp_path):
    sink = _sink(fmt, tmp_path / "w")
    sink.apply("shop", "b", ["id"], [], pa.table({"id": pa.array([9], pa.int32()), "old": pa.array([1.5])}), BEFORE)
    sink.empty("shop", "b", BEFORE)
    sink.apply("shop", "a", ["id"], [], ROWS, BEFORE)
    sink.move("shop", "a", "shop", "b", AT)
    got = sink.read("shop", "b")
    assert sorted(got.column_names) == ["id", "v"] and got.num_rows == 3

"""A Delta mirror's commit rewrites the data files holding the keys its batch touches, not the
whole table: the tables have data files of a bounded size and the MERGE names the batch's key
ranges (delta-rs skips the files whose statistics meet none)."""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("deltalake")

from binlogkit.export.lake.delta import DeltaSink, key_ranges  # noqa: E402


def _rows(ids, tag: str, typ=None):
    return pa.table({"id": pa.array(ids, typ or pa.int32()), "k": pa.array([i % 7 for i in ids], pa.int64()),
                     "v": pa.array([f"{tag}-{i}" for i in ids], pa.string())})


def _props(n: int) -> dict:
    return {"binlogkit.gtid": f"0-1-{n}", "binlogkit.file": "bin.000001", "binlogkit.position": str(n)}


def _files(sink: DeltaSink) -> dict[str, tuple[int, int]]:
    """Data file -> (min id, max id) from the table's log."""
    t = sink._table("db", "t")
    a = pa.table(t.get_add_actions(flatten=True))
    return {p: (lo, hi) for p, lo, hi in zip(a["path"].to_pylist(), a["min.id"].to_pylist(), a["max.id"].to_pylist())}


def _content(sink: DeltaSink) -> dict[int, tuple]:
    got = sink.read("db", "t")
    assert got.num_rows == len(set(got["id"].to_pylist()))       # one row per key
    return {r["id"]: (r["k"], r["v"]) for r in got.to_pylist()}


SMALL = {"delta.targetFileSize": str(1 << 20)}   # 200,000 rows in several files (the default: 16 MiB)


def test_a_commit_into_a_big_table_rewrites_only_the_files_holding_its_keys(tmp_path, monkeypatch):
    from binlogkit.export.lake import delta

    monkeypatch.setattr(delta, "SIZED", SMALL)
    sink = DeltaSink(str(tmp_path / "wh"))
    n = 200_000
    sink.apply("db", "t", ["id"], [(i,) for i in range(n)], _rows(range(n), "r"), _props(1))
    before = _files(sink)
    assert len(before) > 2          # bounded data files, not one
    want = {i: (i % 7, f"r-{i}") for i in range(n)}
    # updates and deletes of the newest keys, inserts after them: an AUTO_INCREMENT table's shape
    upd, gone, new = range(n - 900, n - 400), range(n - 400, n - 300), range(n, n + 1000)
    rows = _rows(list(upd) + list(new), "u")
    sink.apply("db", "t", ["id"], [(i,) for i in [*upd, *gone, *new]], rows, _props(2))
    want.update({i: (i % 7, f"u-{i}") for i in [*upd, *new]})
    for i in gone:
        del want[i]
    assert _content(sink) == want
    after = _files(sink)
    removed = set(before) - set(after)
    touched = [*upd, *gone]
    assert removed and len(removed) < len(before)
    for path in removed:            # each file rewritten held a touched key
        lo, hi = before[path]
        assert any(lo <= i <= hi for i in touched), (path, lo, hi)
    assert sink.recorded("db", "t")["binlogkit.position"] == "2"
    # the files read by DuckDB's delta extension (offline) are the same rows
    pytest.importorskip("duckdb")
    from binlogkit.export.lake.read import duckdb_connection, scan

    sql = (f"SELECT count(*), sum(id), count(DISTINCT id), max(v) FILTER (WHERE id = {n - 500}) "
           f"FROM {scan('delta', str(tmp_path / 'wh'), 'db', 't')}")
    got = duckdb_connection().execute(sql).fetchone()
    assert got == (len(want), sum(want), len(want), f"u-{n - 500}")


def test_a_one_file_table_of_an_earlier_build_gets_bounded_files_keeping_its_coordinates(tmp_path, monkeypatch):
    from deltalake import CommitProperties, write_deltalake

    from binlogkit.export.lake import delta

    monkeypatch.setattr(delta, "SIZED", SMALL)
    sink = DeltaSink(str(tmp_path / "wh"))
    n = 150_000
    write_deltalake(sink.path("db", "t"), _rows(range(n), "r", pa.int64()),
                    commit_properties=CommitProperties(custom_metadata=_props(1)))
    assert len(_files(sink)) == 1
    sink.apply("db", "t", ["id"], [(5,), (n,)], _rows([5, n], "u", pa.int64()), _props(2))
    t = sink._table("db", "t")
    assert "delta.targetFileSize" in t.metadata().configuration
    history = sink.history("db", "t")
    assert [p.get("binlogkit.position") for _v, p in history] == ["1", "1", "2"]   # the size: a commit of its own
    assert len(_files(sink)) > 1
    want = {i: (i % 7, f"r-{i}") for i in range(n)}
    want.update({5: (5, "u-5"), n: (n % 7, f"u-{n}")})
    assert _content(sink) == want


@pytest.mark.parametrize("typ", [pa.string(), pa.int16()])
def test_composite_and_non_integer_keys_merge_by_key(tmp_path, typ):
    sink = DeltaSink(str(tmp_path / "wh"))
    ids = [str(i) if typ == pa.string() else i for i in range(50)]
    base = pa.table({"a": pa.array(ids, typ), "b": pa.array([1] * 50, pa.int64()),
                     "v": pa.array(["x"] * 50)})
    sink.apply("db", "t", ["a", "b"], [], base, _props(1))
    upd = pa.table({"a": pa.array(ids[:3] + ids[:1], typ), "b": pa.array([1, 1, 1, 2], pa.int64()),
                    "v": pa.array(["y", "y", "y", "new"])})
    sink.apply("db", "t", ["a", "b"], [(ids[0], 1), (ids[1], 1), (ids[2], 1), (ids[0], 2), (ids[9], 1)], upd, _props(2))
    got = {(r["a"], r["b"]): r["v"] for r in sink.read("db", "t").to_pylist()}
    want = {(i, 1): "x" for i in ids}
    want.update({(ids[0], 1): "y", (ids[1], 1): "y", (ids[2], 1): "y", (ids[0], 2): "new"})
    del want[(ids[9], 1)]
    assert got == want


def test_key_ranges_hold_every_value_in_at_most_the_ranges_asked():
    values = [5, 1, 2, 3, 100, 101, 7, 3, 10_000, -4]
    spans = key_ranges(pa.chunked_array([values[:4], values[4:]]), 3)
    assert len(spans) == 3 and spans[0][0] == -4 and spans[-1] == (10_000, 10_000)
    assert all(any(lo <= v <= hi for lo, hi in spans) for v in values)
    assert key_ranges(pa.array([2**64 - 1, 0], pa.uint64()), 1) == [(0, 2**64 - 1)]
    assert key_ranges(pa.array(["a"])) is None
    assert key_ranges(pa.array([], pa.int32())) is None


def test_random_batches_into_many_small_files_equal_a_fold_by_key(tmp_path, monkeypatch):
    """Batches of inserts, updates and deletes spread over the key space (some keys far apart,
    some runs) into a table of many small files: after each, the table holds exactly the rows a
    dict by key holds."""
    import random

    from binlogkit.export.lake import delta

    monkeypatch.setattr(delta, "SIZED", {"delta.targetFileSize": str(64 << 10)})
    rnd = random.Random(7)
    sink = DeltaSink(str(tmp_path / "wh"))
    want = {i: (i % 7, f"r-{i}") for i in range(0, 40_000, 2)}
    sink.apply("db", "t", ["id"], [], _rows(sorted(want), "r", pa.int64()), _props(1))
    assert len(_files(sink)) > 4
    for b in range(2, 10):
        start = rnd.randrange(0, 40_000)
        touched = {rnd.randrange(-50, 45_000) for _ in range(rnd.choice([1, 40, 400]))} | set(range(start, start + 300))
        keys = sorted(touched)
        alive = [k for k in keys if rnd.random() < 0.7]
        tag = f"b{b}"
        sink.apply("db", "t", ["id"], [(k,) for k in keys], _rows(alive, tag, pa.int64()), _props(b))
        for k in keys:
            want.pop(k, None)
        want.update({k: (k % 7, f"{tag}-{k}") for k in alive})
        assert _content(sink) == want, b


def test_a_local_tables_rows_are_read_through_pyarrows_own_file_system(tmp_path):
    """A local Delta table is read through pyarrow's local file system, not delta-rs' Python
    file system (a process reading through that one aborted now and then at its exit, exit 134,
    its work done); the rows are the same either way, a folder name with a space included."""
    from pyarrow import fs as pafs

    from binlogkit.export.lake.delta import _dataset

    sink = DeltaSink(str(tmp_path / "w h"))
    sink.apply("db", "t", ["id"], [], _rows(range(100), "r"), _props(1))
    t = sink._table("db", "t")
    ds = _dataset(t)
    assert isinstance(ds.filesystem, pafs.SubTreeFileSystem) and isinstance(ds.filesystem.base_fs, pafs.LocalFileSystem)
    assert ds.to_table().sort_by("id").equals(t.to_pyarrow_dataset().to_table().sort_by("id"))
    assert sorted(r["id"] for r in sink.read("db", "t").to_pylist()) == list(range(100))
    assert [r["v"] for r in sink.rows("db", "t", ["id"], [(5,), (7,)])] == ["r-5", "r-7"]

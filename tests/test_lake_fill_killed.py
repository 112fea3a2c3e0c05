"""An ``ALTER TABLE ... ADD COLUMN ... DEFAULT`` fill cut short and run again. Iceberg's fill is
two commits: the schema (the new column, NULL in every row) and then the snapshot that rewrites
the rows with the default (at the ALTER's coordinates). A follower or an export killed between
the two (seen under ``export --follow`` killed at random points, a failover test) left the
column in the table; the next run took the column's presence for a fill done and left the
mirror's rows NULL in it forever, the checkpoint moving on: a mirror silently different from the
server. The table's last snapshot (before the ALTER) says the fill has not been committed: the
run again fills it. A lab MySQL 9.7 server's binlogs (Iceberg), and the same on Delta (one
commit: nothing to cut; a rerun fills nothing twice)."""

from __future__ import annotations

import shutil

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from fixtures.lab import Lab

pytestmark = [pytest.mark.server, pytest.mark.kind("mysql-9.7")]
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")


class Killed(Exception):
    """The run killed between the fill's schema commit and its rows."""


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    base = tmp_path_factory.mktemp("fill-killed")
    with Lab(base / "lab", kind="mysql-9.7") as lab:
        srv = lab.server("primary", 1, binlog_row_metadata="FULL").start()
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE lab")
            cur.execute("CREATE TABLE lab.t (id INT PRIMARY KEY, v VARCHAR(20))")
            for i in range(1, 6):
                cur.execute(f"INSERT INTO lab.t VALUES ({i}, 'v{i}')")
            cur.execute("ALTER TABLE lab.t ADD COLUMN c INT DEFAULT 7")
            cur.execute("INSERT INTO lab.t VALUES (6, 'v6', 60)")
            cur.execute("UPDATE lab.t SET v = 'changed' WHERE id = 2")
            cur.execute("FLUSH BINARY LOGS")
        want = sorted(tuple(r.values()) for r in srv.query("SELECT id, v, c FROM lab.t"))
        out = base / "archive"
        out.mkdir()
        for r in srv.query("SHOW BINARY LOGS"):
            shutil.copy(srv.datadir / r["Log_name"], out / r["Log_name"])
    assert want == [(1, "v1", 7), (2, "changed", 7), (3, "v3", 7), (4, "v4", 7), (5, "v5", 7), (6, "v6", 60)]
    return out, want


def _rows(fmt: str, wh) -> list:
    return sorted((r["id"], r["v"], r.get("c")) for r in open_sink(fmt, str(wh)).read("lab", "t").to_pylist())


def test_an_iceberg_fill_killed_after_its_schema_commit_is_filled_by_the_next_run(archive, tmp_path, monkeypatch):
    from binlogkit.export.lake import iceberg

    path, want = archive
    wh = tmp_path / "wh"
    real = iceberg.IcebergSink.fill

    def killed(self, db, name, values, props):
        t = self._load(db, name)
        self._evolve(t, values.schema)      # what an earlier build's two-commit fill left when killed
        raise Killed()
    monkeypatch.setattr(iceberg.IcebergSink, "fill", killed)
    with pytest.raises(Killed):
        export_lake([path], str(wh), fmt="iceberg", mirror=True, batch_transactions=1)
    assert "c" in open_sink("iceberg", str(wh)).columns("lab", "t")     # the column is there, NULL
    monkeypatch.setattr(iceberg.IcebergSink, "fill", real)
    export_lake([path], str(wh), fmt="iceberg", mirror=True, batch_transactions=1)
    assert _rows("iceberg", wh) == want
    export_lake([path], str(wh), fmt="iceberg", mirror=True, batch_transactions=1)   # a rerun: nothing twice
    assert _rows("iceberg", wh) == want


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_a_run_killed_after_the_fill_fills_nothing_again(archive, tmp_path, fmt, monkeypatch):
    """Killed just after the fill's commit (the rows after the ALTER not applied): the next run
    finds the fill committed (the table's last commit is the ALTER's) and goes on from there."""
    from binlogkit.export.lake import mirror

    path, want = archive
    wh = tmp_path / "wh"
    real = mirror.Mirror._fill

    def then_killed(self, a, pos, stmt):
        real(self, a, pos, stmt)
        raise Killed()
    monkeypatch.setattr(mirror.Mirror, "_fill", then_killed)
    with pytest.raises(Killed):
        export_lake([path], str(wh), fmt=fmt, mirror=True, batch_transactions=1)
    assert _rows(fmt, wh) == [(i, f"v{i}", 7) for i in range(1, 6)]
    monkeypatch.setattr(mirror.Mirror, "_fill", real)
    export_lake([path], str(wh), fmt=fmt, mirror=True, batch_transactions=1)
    assert _rows(fmt, wh) == want


def test_an_iceberg_fill_is_one_commit_a_kill_inside_it_leaves_the_table_as_it_was(archive, tmp_path, monkeypatch):
    """The ADD COLUMN fill adds the column and rewrites the rows in one commit: killed while it
    writes its data files, the table has neither the column nor a snapshot of the fill (no reader
    sees the column NULL); the next run fills it."""
    import pyiceberg.io.pyarrow as pio

    path, want = archive
    wh = tmp_path / "wh"
    real = pio._dataframe_to_data_files

    def killed(*args, **kwargs):
        if "c" in kwargs["table_metadata"].schema().as_arrow().names:   # the fill's data files
            raise Killed()
        return real(*args, **kwargs)
    monkeypatch.setattr(pio, "_dataframe_to_data_files", killed)
    with pytest.raises(Killed):
        export_lake([path], str(wh), fmt="iceberg", mirror=True, batch_transactions=1)
    sink = open_sink("iceberg", str(wh))
    assert "c" not in sink.columns("lab", "t")
    assert _rows("iceberg", wh) == [(i, f"v{i}", None) for i in range(1, 6)]
    monkeypatch.setattr(pio, "_dataframe_to_data_files", real)
    export_lake([path], str(wh), fmt="iceberg", mirror=True, batch_transactions=1)
    assert _rows("iceberg", wh) == want
    # one snapshot made the column and its values: the snapshot before it has the old schema
    history = open_sink("iceberg", str(wh)).history("lab", "t")
    assert len({h[1].get("binlogkit.gtid") for h in history}) == len(history)

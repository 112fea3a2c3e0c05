"""A warm query of the ``binlog`` data source plans without walking its files again: the
ranges of a big file (``files.split``) and a typed table's schema (``changes.first_layout``)
are kept per file identity (path, size, modification time) in the Python worker that
plans every query of a session; a file that changed is walked again, and gives what a first
walk gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parent.parent
TYPES = ROOT / "fixtures" / "mariadb-10.11" / "row-types-full-metadata" / "primary"


@pytest.fixture
def copied(tmp_path) -> Path:
    src = TYPES / "mariadb-bin.000003"   # plain, 23 KB, 17 transactions
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    return dst


@pytest.fixture
def walks(monkeypatch) -> list[str]:
    """The files the framing loop was opened on."""
    from binlogkit.reading.source import Input

    seen: list[str] = []
    frames = Input.frames

    def counted(self, *a, **k):
        seen.append(self.name)
        return frames(self, *a, **k)

    monkeypatch.setattr(Input, "frames", counted)
    return seen


def test_split_walks_a_file_once_until_it_changes(copied, walks):
    from binlogkit.spark.files import plan_files, split

    (task,) = plan_files([str(copied)])
    first = split(task, 3000)
    assert len(first) > 2 and walks == [str(copied)]
    assert split(task, 3000) == first and len(walks) == 1          # warm: no walk
    assert len(split(task, 6000)) < len(first) and len(walks) == 2  # another size: walked
    st = os.stat(copied)
    os.utime(copied, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))   # rewritten in place
    assert split(task, 3000) == first and len(walks) == 3
    with open(copied, "ab") as fh:                                 # it grew: the plan's size is old
        fh.write(b"\0" * 19)
    (grown,) = plan_files([str(copied)])
    split(task, 3000)
    split(grown, 3000)
    assert len(walks) == 5


def test_first_layout_is_found_once_per_file(copied, walks):
    from binlogkit.spark.changes import first_layout
    from binlogkit.spark.files import plan_files

    tasks = plan_files([str(copied)])
    import pyarrow.parquet  # noqa: F401  (the export's schema module imports pyarrow)

    got = first_layout(tasks, "types.ints")
    assert got is not None and walks
    n = len(walks)
    assert first_layout(tasks, "types.ints") == got and len(walks) == n
    assert first_layout(tasks, "types.no_such_table") is None and len(walks) == n + 1
    assert first_layout(tasks, "types.no_such_table") is None and len(walks) == n + 1
    st = os.stat(copied)
    os.utime(copied, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert first_layout(tasks, "types.ints") == got and len(walks) == n + 2


def test_changes_come_in_batches_of_65536_rows_unless_asked_otherwise(copied):
    """``changes``' batches are the export writer's row groups (bounded by bytes too): 65,536
    rows each by default, fewer hand-overs to the JVM; the other tables keep 8192."""
    pytest.importorskip("pyspark")
    from binlogkit.spark.source import BinlogDataSource

    def rows(**opts):
        ds = BinlogDataSource({"path": str(copied), **opts})
        return ds.reader(ds.schema()).query.batch_rows

    assert rows(table="changes") == 65536
    assert rows(table="changes", changes_table="types.ints") == 65536
    assert rows(table="changes", batch_rows="100") == 100
    assert rows(table="events") == rows(table="transactions") == 8192

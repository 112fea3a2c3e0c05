"""The binlog data source's Python workers start light: what each step Spark runs in a Python
worker imports on top of what that worker has from Spark (``pyspark.worker``), in a child
process each: the schema (``DataSource.schema``), the planning (``reader().partitions()``), the
read of one partition of each table (the reader and its partition unpickled, as an executor's
worker gets them) and ``register()``'s check of the workers' Python (``spark._PROBE``: one
Python start-up, nothing of the reading code).

A step imports only its own: the schema worker no reading code, the planning worker the files'
plan (not the audit, the export, a table's reader), a read only its table's module (no other
table's, not the audit; ``events`` and ``transactions`` not the export). Start-up costs,
measured: docs/spark.md, "Spark's fixed cost"."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "fixtures" / "mariadb-10.11" / "row-types-full-metadata" / "primary"   # typed rows, GTIDs
TABLES = ("events", "transactions", "changes", "summaries")
ROOMS = {t: f"binlogkit.spark.{t}" for t in TABLES}

STEP = r"""
import pickle, sys
import pyspark.worker            # what Spark's Python worker has imported before the source's code
base = set(sys.modules)
step, table, archive, blob = sys.argv[1:5]
if step == "read":
    with open(blob, "rb") as fh:
        reader, part = pickle.load(fh)
    n = sum(rb.num_rows for rb in reader.read(part))
    assert n > 0, n
else:
    from binlogkit.spark.source import BinlogDataSource
    from pyspark.sql.pandas.types import from_arrow_schema
    ds = BinlogDataSource({"path": archive, "table": table})
    sch = ds.schema()
    if step == "plan":
        reader = ds.reader(sch)
        parts = reader.partitions()
        with open(blob, "wb") as fh:
            pickle.dump((reader, parts[0]), fh)
print("\n".join(sorted(set(sys.modules) - base)))
"""


def _step(tmp_path: Path, step: str, table: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BINLOGKIT_")}
    res = subprocess.run([sys.executable, "-c", STEP, step, table, str(ARCHIVE), str(tmp_path / f"{table}.pickle")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, env={**env, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr[-3000:]
    return set(res.stdout.split())


def _within(mods: set[str], *roots: str) -> list[str]:
    return sorted(m for m in mods if any(m == r or m.startswith(r + ".") for r in roots))


def _ours(mods: set[str]) -> set[str]:
    return {m for m in mods if m == "binlogkit" or m.startswith("binlogkit.")}


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    if not ARCHIVE.is_dir():
        pytest.skip(f"{ARCHIVE} absent")
    tmp = tmp_path_factory.mktemp("steps")
    out = {}
    for table in TABLES:
        out["schema", table] = _step(tmp, "schema", table)
        out["plan", table] = _step(tmp, "plan", table)
        out["read", table] = _step(tmp, "read", table)
    return out


def test_the_schema_worker_imports_no_reading_code(steps):
    for table in TABLES:
        mods = steps["schema", table]
        assert "binlogkit.spark.source" in mods     # the probe sees the step's imports
        assert _ours(mods) <= {"binlogkit", "binlogkit.constants", "binlogkit.errors", "binlogkit.spark",
                               "binlogkit.spark.common", "binlogkit.spark.source"}, (table, sorted(_ours(mods)))
        assert _within(mods, "construct", "multiprocessing", "concurrent") == []


def test_the_planning_worker_imports_the_files_plan_alone(steps):
    for table in TABLES:
        mods = steps["plan", table]
        assert "binlogkit.spark.files" in mods
        assert _within(mods, "binlogkit.audit", "binlogkit.export", "binlogkit.transactions", "binlogkit.report",
                       "binlogkit.spark.jobs", *ROOMS.values(), "multiprocessing", "concurrent") == [], table
        assert len(_ours(mods)) <= 30, (table, sorted(_ours(mods)))


def test_a_read_imports_its_own_table_alone(steps):
    for table in TABLES:
        mods = steps["read", table]
        assert ROOMS[table] in mods
        others = [r for t, r in ROOMS.items() if t != table]
        assert _within(mods, *others, "binlogkit.spark.jobs") == [], table
        if table != "summaries":   # audit's per-file summary: the audit package (its pool's imports too)
            assert _within(mods, "binlogkit.audit", "binlogkit.report", "multiprocessing", "concurrent") == [], table
        if table in ("events", "transactions"):
            assert _within(mods, "binlogkit.export") == [], table
        assert len(_ours(mods)) <= (75 if table == "changes" else 60), (table, len(_ours(mods)))


def test_registers_check_of_the_workers_python_is_one_light_start_up(tmp_path):
    """``register()`` runs the workers' Python once (``spark._PROBE``): it imports binlogkit's
    Spark package and the tables' shared module, no reading code, no pyarrow, no pyspark."""
    from binlogkit.spark import _PROBE

    env = {k: v for k, v in os.environ.items() if not k.startswith("BINLOGKIT_")}
    res = subprocess.run([sys.executable, "-c", _PROBE + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120, env={**env, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr
    mods = set(res.stdout.split())
    assert "binlogkit.spark.tables" in mods
    assert _within(mods, "pyarrow", "pyspark", "construct", "binlogkit.reading", "binlogkit.export",
                   "binlogkit.audit") == []


def test_the_steps_pickles_hold_plain_values(steps, tmp_path):
    """What the planning worker hands the readers is the reader and its partitions (options,
    paths): unpickled here, nothing else is needed."""
    reader_blob = next(tmp_path.parent.glob("steps*/events.pickle"), None)
    if reader_blob is None:
        pytest.skip("no plan pickled")
    reader, part = pickle.loads(reader_blob.read_bytes())
    assert type(reader).__name__ == "BinlogReader" and part.task.name

"""Binlog archives as Spark tables: ``spark.read.format("binlog")`` through PySpark's Python Data
Source API (``source.py``), over the one reading layer (``reading.source.Input``) and the
existing decoders; ``files.py`` is the plan the audit and export jobs share ("which files, in
what order, with what context") and the heads that prune whole files; ``tables.py`` makes each
table's Arrow batches without Spark (tested so), one module per table (``events.py``,
``transactions.py``, ``changes.py``, ``summaries.py``) and what they share (``common.py``,
``ranges.py``); ``jobs/`` holds the spark-submit jobs (``jobs/audit.py``, ``jobs/export.py``,
``jobs/mirror.py``: the backfill, whose executors run ``backfill.py``), ``start.py`` the
backfill's quick Spark start. docs/spark.md tells the story::

    from binlogkit.spark import register
    register(spark)
    spark.read.format("binlog").option("table", "transactions").load("/archive/binlogs")

Importing this package does not import pyspark (the jobs import ``files`` from here)."""

from __future__ import annotations

import os
import shutil
import subprocess

from ..errors import UsageError

TABLES = ("events", "transactions", "changes", "summaries")

# what Spark's Python workers import to plan and read the source (pyspark they have from Spark)
_PROBE = "import binlogkit.spark.tables"


def register(spark) -> None:
    """Register the ``binlog`` data source with ``spark`` and turn on Python filter pushdown
    (``spark.sql.python.filterPushdown.enabled``: the source prunes files by the filters).
    First checks that the Python Spark runs its Python workers with (PYSPARK_PYTHON) imports
    binlogkit: ``UsageError`` in one line when it does not (else the first read fails in a Py4J
    trace ending ``No module named 'binlogkit'``)."""
    check_workers(spark)
    from .source import BinlogDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(BinlogDataSource)


def check_workers(spark) -> None:
    """The Python workers' interpreter (``SparkContext.pythonExec``: PYSPARK_PYTHON or
    ``spark.pyspark.python``, else ``python3`` on PATH) imports binlogkit: run here, where
    Spark runs the source's planning worker (and, in local mode, every worker); on a cluster,
    also asked of one executor by a one-task job. Not checkable (Spark Connect: no context):
    nothing is checked."""
    try:
        sc = spark.sparkContext
        exe = sc.pythonExec
        master = sc.master or ""
    except Exception:  # Spark Connect and other sessions without a SparkContext
        return
    where = shutil.which(exe) or exe
    if os.path.exists(where):
        p = subprocess.run([where, "-c", _PROBE], capture_output=True, text=True, env=os.environ.copy())
        if p.returncode != 0:
            raise UsageError(_lacks(exe, where, (p.stderr.strip().splitlines() or ["?"])[-1]))
    if master.startswith("local"):
        return
    try:
        sc.parallelize([0], 1).map(lambda _: __import__("binlogkit.spark.tables") and 0).collect()
    except Exception as exc:  # the executor's import failed: its message ends the trace
        text = str(exc)
        if "No module named" in text:
            tail = text[text.rindex("No module named"):].splitlines()[0]
            raise UsageError(_lacks(exe, "on the executors", tail) + " (on every executor host)") from None
        return


def _lacks(exe: str, where: str, why: str) -> str:
    import sys

    env = os.environ.get("PYSPARK_PYTHON")
    said = (f"PYSPARK_PYTHON={env}" if env else f"PYSPARK_PYTHON unset: {exe}") + (f", {where}" if where != exe else "")
    return (f"binlogkit.spark: Spark's Python workers ({said}) cannot import binlogkit ({why}): "
            f"set PYSPARK_PYTHON to the Python that has it ({sys.executable}) before the session starts, "
            "or install binlogkit in that Python")

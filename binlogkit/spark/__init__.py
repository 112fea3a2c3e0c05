"""Binlog archives as Spark tables: ``spark.read.format("binlog")`` through PySpark's Python Data
Source API (``source.py``), over the one reading layer (``reading.source.Input``) and the
existing decoders; ``files.py`` is the plan the audit and export jobs share ("which files, in
what order, with what context") and the heads that prune whole files; ``tables.py`` makes each
table's Arrow batches without Spark (tested so). docs/spark.md tells the story::

    from binlogkit.spark import register
    register(spark)
    spark.read.format("binlog").option("table", "transactions").load("/archive/binlogs")

Importing this package does not import pyspark (the jobs import ``files`` from here)."""

from __future__ import annotations

TABLES = ("events", "transactions", "changes", "summaries")


def register(spark) -> None:
    """Register the ``binlog`` data source with ``spark`` and turn on Python filter pushdown
    (``spark.sql.python.filterPushdown.enabled``: the source prunes files by the filters)."""
    from .source import BinlogDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(BinlogDataSource)

"""A Spark context for jobs that use RDDs only (the mirror backfill, the gap check): started
for a short start, and started beside the driver's own planning.

Where a backfill's start goes (the driver's JVM, then two one-core executors on a standalone
cluster, measured with ``bench/mirror.py --cluster``): the JVM's just-in-time compiler takes
cores the start needs (``-XX:TieredStopAtLevel=1``: the quick compiler alone, a third to a
half less start time measured; the JVM does little of the backfill's work: the walk, the fold
and the files are Python and Arrow), and a ``SparkSession`` costs seconds of its own (SQL's
catalog and session state) that an RDD job never uses: ``context`` makes a ``SparkContext``
alone. ``Starting`` makes it on a thread while the driver lists, opens and plans the archive.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

QUICK_JIT = "-XX:TieredStopAtLevel=1"
FORCED = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
FAST = {"spark.eventLog.enabled": "false", "spark.python.worker.reuse": "true",   # unless configured
        "spark.scheduler.mode": "FAIR"}


def conf_pairs(master: str | None, app: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The settings of a quick start: ``FORCED`` (no web UI, no progress bar: as the audit's
    session), ``FAST`` where ``base`` (what spark-submit was given) does
    not say otherwise, the quick compiler added to the driver's and the executors' JVM options,
    the master (none: spark-submit's, else ``local[*]``)."""
    base = dict(base or {})
    out = {**{k: base.get(k, v) for k, v in FAST.items()}, **FORCED, "spark.app.name": base.get("spark.app.name", app)}
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        have = base.get(key, "")
        out[key] = have if "TieredStopAtLevel" in have else f"{have} {QUICK_JIT}".strip()
    if master:
        out["spark.master"] = master
    elif not (base.get("spark.master") or os.environ.get("PYSPARK_GATEWAY_PORT") or os.environ.get("SPARK_MASTER")
              or "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")):
        out["spark.master"] = "local[*]"
    return out


def context(master: str | None = None, app: str = "binlogkit"):
    """A ``SparkContext`` (no ``SparkSession``) with ``conf_pairs``; the running one if there is.
    Under spark-submit (its JVM running already) only the executors' options apply, added to
    what it was given; from a plain Python the driver's JVM starts with the quick compiler
    (a ``spark.driver.extraJavaOptions`` of spark-defaults.conf is then replaced: give it in
    ``PYSPARK_SUBMIT_ARGS`` as ``--conf``, which is kept)."""
    from pyspark import SparkConf, SparkContext

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if SparkContext._active_spark_context is not None:
        return SparkContext._active_spark_context
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))
    launch = SparkConf()
    if not submitted and "extraJavaOptions" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        launch.set("spark.driver.extraJavaOptions", QUICK_JIT)
    SparkContext._ensure_initialized(conf=launch)   # the JVM: spark-submit's, or started with ``launch``
    conf = SparkConf()   # now the JVM's, with spark-submit's settings (loadDefaults)
    for k, v in conf_pairs(master, app, dict(conf.getAll())).items():
        conf.set(k, v)
    return SparkContext.getOrCreate(conf)


class Starting:
    """``context(master)`` made on a thread from here; ``get()`` waits for it (and raises what
    its start raised), ``stop()`` stops it once it is made."""

    def __init__(self, master: str | None = None, app: str = "binlogkit") -> None:
        self._sc: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._make, args=(master, app), name="binlogkit-spark-start",
                                        daemon=True)
        self._thread.start()

    def _make(self, master: str | None, app: str) -> None:
        try:
            self._sc = context(master, app)
        except BaseException as exc:  # noqa: BLE001  (raised again by get() on the caller's thread)
            self._error = exc

    def get(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._sc

    def stop(self) -> None:
        self._thread.join()
        if self._sc is not None:
            self._sc.stop()


def context_of(spark):
    """The ``SparkContext`` of ``spark``: a ``SparkSession``, a ``SparkContext`` or a
    ``Starting`` (waited for)."""
    if isinstance(spark, Starting):
        spark = spark.get()
    return getattr(spark, "sparkContext", spark)


class Beside:
    """``fn()`` on a thread of its own, its Spark jobs in the scheduler pool ``pool`` (with
    ``spark.scheduler.mode=FAIR``, ``FAST``'s, a job run beside another gets the cores as they
    free up instead of waiting for the other's tasks to be all started); ``result()`` waits and
    gives what it returned (or raises what it raised). ``spark``: as ``context_of`` takes it."""

    def __init__(self, spark, pool: str, fn) -> None:
        self._out: Any = None
        self._error: BaseException | None = None

        def go() -> None:
            try:
                context_of(spark).setLocalProperty("spark.scheduler.pool", pool)
                self._out = fn()
            except BaseException as exc:  # noqa: BLE001  (raised again by result() on the caller's thread)
                self._error = exc
        self._thread = threading.Thread(target=go, name=f"binlogkit-{pool}", daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out

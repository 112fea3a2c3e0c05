"""A Spark context for jobs that use RDDs only (the mirror backfill, the gap check): started
for a short start, and started beside the driver's own planning.

Where a backfill's start goes (the driver's JVM, then two one-core executors on a standalone
cluster, measured with ``bench/mirror.py --cluster``): the JVM's just-in-time compiler takes
cores the start needs (``-XX:TieredStopAtLevel=1``: the quick compiler alone, a third to a
half less start time measured; the JVM does little of the backfill's work: the walk, the fold
and the files are Python and Arrow), and a ``SparkSession`` costs seconds of its own (SQL's
catalog and session state) that an RDD job never uses: ``context`` makes a ``SparkContext``
alone. ``Starting`` makes it on a thread while the driver lists, opens and plans the archive.

Most of a JVM's start is loading Spark's classes: ``cds_options`` keeps a class-data archive of
them (the JVM's own CDS, ``-XX:ArchiveClassesAtExit`` / ``-XX:SharedArchiveFile``) in the user's
cache folder, made by the first driver that runs without one and mapped by the drivers after it
and by the executors of this host (a third of the driver's start measured). The archive is
keyed by the pyspark and the Java it was made with; the JVM checks it and, if it does not fit,
starts without it (its messages about it are off: the driver's stdout is the command's).
``BINLOGKIT_SPARK_CDS=off`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

QUICK_JIT = "-XX:TieredStopAtLevel=1"
FORCED = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
FAST = {"spark.eventLog.enabled": "false", "spark.python.worker.reuse": "true",   # unless configured
        "spark.scheduler.mode": "FAIR"}


DYNAMIC_MAGIC = 0xF00BABA8        # the first four bytes of a finished dynamic archive (little-endian)
CDS_QUIET = "-XX:+IgnoreUnrecognizedVMOptions -Xlog:cds=off -Xlog:cds+dynamic=off"


def cds_folder() -> Path | None:
    """Where the archives are kept (``$XDG_CACHE_HOME`` or ``~/.cache``, ``binlogkit/spark-cds``);
    None when turned off (``BINLOGKIT_SPARK_CDS=off``) or there is no home."""
    if os.environ.get("BINLOGKIT_SPARK_CDS", "").lower() in ("off", "0", "no", "false"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or (os.path.join(os.path.expanduser("~"), ".cache")
                                                if os.path.expanduser("~") != "~" else None)
    return Path(root) / "binlogkit" / "spark-cds" if root else None


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def archive_path(folder: Path) -> Path | None:
    """The archive for this pyspark and this Java (their versions and places, the Java's mtime)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    key = "|".join([pyspark.__version__, os.path.dirname(os.path.realpath(pyspark.__file__)), java,
                    str(int(os.stat(java).st_mtime))])
    return folder / f"driver-{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"


def finished(path: Path) -> bool:
    """Whether ``path`` is a dynamic archive the JVM wrote to the end (its header is written last)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
        return len(head) == 4 and int.from_bytes(head, "little") == DYNAMIC_MAGIC
    except OSError:
        return False


def cds_options(now: float | None = None) -> tuple[str, str]:
    """(the driver's JVM options, the executors') for the class-data archive: map it when it is
    there; else the driver writes one at its exit, under a name of its own (``NAME.PID``) that a
    later run takes as the archive once it is finished (the JVM writes the header, with its magic
    number, last; one left unfinished ten minutes is removed)."""
    folder = cds_folder()
    path = archive_path(folder) if folder is not None else None
    if path is None:
        return "", ""
    if not path.exists():
        now = time.time() if now is None else now
        for made in sorted(folder.glob(path.name + ".*")):   # type: ignore[union-attr]
            if finished(made):
                try:
                    os.replace(made, path)
                    break
                except OSError:
                    continue
            try:
                if now - made.stat().st_mtime > 600:   # a JVM killed while writing it
                    made.unlink()
            except OSError:
                pass
    if path.exists():
        use = f"-XX:SharedArchiveFile={path} {CDS_QUIET}"
        return use, use
    try:
        folder.mkdir(parents=True, exist_ok=True)   # type: ignore[union-attr]
    except OSError:
        return "", ""
    return f"-XX:ArchiveClassesAtExit={path}.{os.getpid()} {CDS_QUIET}", ""


def conf_pairs(master: str | None, app: str, base: dict[str, str] | None = None,
               jvm: tuple[str, str] = ("", "")) -> dict[str, str]:
    """The settings of a quick start: ``FORCED`` (no web UI, no progress bar: as the audit's
    session), ``FAST`` where ``base`` (what spark-submit was given) does not say otherwise, the
    quick compiler and ``jvm`` (the driver's, the executors' options: ``cds_options``) added to
    the driver's and the executors' JVM options, the master (none: spark-submit's, else
    ``local[*]``)."""
    base = dict(base or {})
    out = {**{k: base.get(k, v) for k, v in FAST.items()}, **FORCED, "spark.app.name": base.get("spark.app.name", app)}
    for key, more in zip(("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"), jvm):
        have = base.get(key, "")
        add = ([] if "TieredStopAtLevel" in have else [QUICK_JIT]) + \
            ([more] if more and "SharedArchiveFile" not in have and "ArchiveClassesAtExit" not in have else [])
        out[key] = " ".join([have, *add]).strip()
    chosen = master_of(master, configured=base.get("spark.master"))
    if chosen:
        out["spark.master"] = chosen
    return out


def master_of(master: str | None, configured: str | None = None) -> str | None:
    """The master to set: ``master`` when given; none where one is configured already
    (``configured``: spark-submit's settings; its gateway, ``SPARK_MASTER``, or ``--master`` in
    ``PYSPARK_SUBMIT_ARGS``); else ``local[*]``."""
    if master:
        return master
    if configured or os.environ.get("PYSPARK_GATEWAY_PORT") or os.environ.get("SPARK_MASTER") \
            or "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return None
    return "local[*]"


def context(master: str | None = None, app: str = "binlogkit"):
    """A ``SparkContext`` (no ``SparkSession``) with ``conf_pairs``; the running one if there is.
    Under spark-submit (its JVM running already) only the executors' options apply, added to
    what it was given; from a plain Python the driver's JVM starts with the quick compiler and
    the class-data archive (a ``spark.driver.extraJavaOptions`` of spark-defaults.conf is then
    replaced: give it in ``PYSPARK_SUBMIT_ARGS`` as ``--conf``, which is kept)."""
    from pyspark import SparkConf, SparkContext

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if SparkContext._active_spark_context is not None:
        return SparkContext._active_spark_context
    submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT")) or SparkContext._gateway is not None
    driver, executors = ("", cds_options()[1]) if submitted else cds_options()
    launch = SparkConf()
    if not submitted and "extraJavaOptions" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        launch.set("spark.driver.extraJavaOptions", f"{QUICK_JIT} {driver}".strip())
    SparkContext._ensure_initialized(conf=launch)   # the JVM: spark-submit's, or started with ``launch``
    conf = SparkConf()   # now the JVM's, with spark-submit's settings (loadDefaults)
    for k, v in conf_pairs(master, app, dict(conf.getAll()), ("", executors)).items():
        conf.set(k, v)
    return SparkContext.getOrCreate(conf)


class Starting:
    """``context(master)`` made on a thread from here (``later``: from ``begin()``, so that a
    command can check its inputs first and refuse bad ones without waiting for a start); ``get()``
    waits for it (and raises what its start raised; begins it if it was not), ``stop()`` stops
    it once it is made (nothing when it never began)."""

    def __init__(self, master: str | None = None, app: str = "binlogkit", *, later: bool = False) -> None:
        self._sc: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._make, args=(master, app), name="binlogkit-spark-start",
                                        daemon=True)
        if not later:
            self.begin()

    def begin(self) -> None:
        """Start Spark on the thread (once; again: nothing)."""
        if self._thread.ident is None:
            self._thread.start()

    def _make(self, master: str | None, app: str) -> None:
        try:
            self._sc = context(master, app)
        except BaseException as exc:  # noqa: BLE001  (raised again by get() on the caller's thread)
            self._error = exc

    def get(self):
        self.begin()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._sc

    def stop(self) -> None:
        if self._thread.ident is None:
            return
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

"""The backfill's quick Spark start (``binlogkit.spark.start``): a SparkContext alone, started
beside the driver's planning, with the quick JIT compiler, FAIR pools and the class-data
archive (made by the first driver, mapped by the next ones and this host's executors). The
settings and the archive's life without a JVM; then ``binlogkit export --engine spark`` from the
command line twice on the committed fixture: the first run writes the archive at its JVM's exit,
the second maps it, and both print only their summary on stdout (the JVM's stdout is the
command's: its CDS messages are off), their tables those of the local mirror."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.spark import start

ROOT = Path(__file__).resolve().parent.parent


# -- without a JVM -----------------------------------------------------------------------------
def test_settings_keep_what_spark_submit_was_given_and_add_the_quick_start(monkeypatch):
    for k in ("PYSPARK_GATEWAY_PORT", "SPARK_MASTER", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(k, raising=False)
    c = start.conf_pairs(None, "app", {}, ("", "-XX:SharedArchiveFile=/a.jsa"))
    assert c["spark.master"] == "local[*]" and c["spark.scheduler.mode"] == "FAIR"
    assert c["spark.ui.enabled"] == "false" and c["spark.eventLog.enabled"] == "false"
    assert c["spark.driver.extraJavaOptions"] == start.QUICK_JIT
    assert c["spark.executor.extraJavaOptions"] == f"{start.QUICK_JIT} -XX:SharedArchiveFile=/a.jsa"
    given = {"spark.master": "spark://h:7077", "spark.scheduler.mode": "FIFO", "spark.eventLog.enabled": "true",
             "spark.executor.extraJavaOptions": "-Dx=1 -XX:TieredStopAtLevel=4 -XX:SharedArchiveFile=/b.jsa",
             "spark.driver.extraJavaOptions": "-Dy=2", "spark.app.name": "mine"}
    c = start.conf_pairs(None, "app", given, ("", "-XX:SharedArchiveFile=/a.jsa"))
    assert "spark.master" not in c and c["spark.scheduler.mode"] == "FIFO" and c["spark.eventLog.enabled"] == "true"
    assert c["spark.executor.extraJavaOptions"] == given["spark.executor.extraJavaOptions"]
    assert c["spark.driver.extraJavaOptions"] == f"-Dy=2 {start.QUICK_JIT}" and c["spark.app.name"] == "mine"
    assert start.conf_pairs("local[2]", "app", given)["spark.master"] == "local[2]"


def test_the_archive_is_made_once_taken_when_finished_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BINLOGKIT_SPARK_CDS", raising=False)
    if start.archive_path(tmp_path) is None:
        pytest.skip("no java")
    path = start.archive_path(start.cds_folder())
    assert path.parent == tmp_path / "binlogkit" / "spark-cds"
    driver, executors = start.cds_options()
    assert driver.startswith(f"-XX:ArchiveClassesAtExit={path}.{os.getpid()} ") and executors == ""
    assert "-Xlog:cds=off" in driver and "-XX:+IgnoreUnrecognizedVMOptions" in driver
    # a JVM still writing one (its header, written last, not there yet): neither taken nor removed
    writing = Path(f"{path}.111")
    writing.write_bytes(b"\0" * 64)
    assert start.cds_options()[1] == "" and writing.exists() and not path.exists()
    # left unfinished ten minutes (a JVM killed while writing): removed
    assert start.cds_options(now=time.time() + 601)[1] == "" and not writing.exists()
    Path(f"{path}.222").write_bytes(start.DYNAMIC_MAGIC.to_bytes(4, "little") + b"\0" * 60)
    driver, executors = start.cds_options()
    assert path.exists() and driver == executors and driver.startswith(f"-XX:SharedArchiveFile={path} ")
    monkeypatch.setenv("BINLOGKIT_SPARK_CDS", "off")
    assert start.cds_options() == ("", "")


def test_starting_raises_its_error_on_the_callers_thread(monkeypatch):
    def broken(master, app):
        raise RuntimeError("no JVM here")
    monkeypatch.setattr(start, "context", broken)
    s = start.Starting("local[1]")
    with pytest.raises(RuntimeError, match="no JVM here"):
        start.context_of(s)
    s.stop()   # nothing was made: nothing to stop
    b = start.Beside(s, "pool", lambda: 1)
    with pytest.raises(RuntimeError, match="no JVM here"):
        b.result()


def test_a_backfill_refuses_a_missing_input_before_spark_starts(tmp_path, monkeypatch):
    """``export --engine spark`` checks its inputs before Spark starts: a missing one is exit 2
    at once, no JVM started for nothing (before: the start began first and the refusal waited
    for it, seconds)."""
    pytest.importorskip("pyspark")
    from click.testing import CliRunner

    from binlogkit.cli import main

    made = []
    monkeypatch.setattr(start, "context", lambda master, app: made.append(master))
    res = CliRunner().invoke(main, ["export", str(tmp_path / "nope.000001"), "-o", str(tmp_path / "wh"),
                                    "--format", "iceberg", "--mirror", "--engine", "spark"])
    assert res.exit_code == 2 and "no such file" in res.output, res.output
    assert made == []
    s = start.Starting("local[1]", later=True)
    s.stop()            # never begun: nothing to wait for
    assert made == []
    assert s.get() is None and made == ["local[1]"]   # get() begins it


# -- from the command line, on Spark -------------------------------------------------------------
def test_cli_backfill_makes_the_archive_then_maps_it_stdout_clean(tmp_path):
    pytest.importorskip("pyspark")
    pytest.importorskip("deltalake")
    from binlogkit.export.changes import Filters
    from binlogkit.export.lake import export_lake
    from binlogkit.export.lake.mirror import open_sink
    from binlogkit.export.lake.read import as_of
    from fixtures import store

    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(cache))
    env.pop("BINLOGKIT_SPARK_CDS", None)
    arch = store.materialize("row-types-full-metadata") / "primary"
    folder = cache / "binlogkit" / "spark-cds"

    def backfill(wh: Path) -> dict:
        p = subprocess.run([sys.executable, "-m", "binlogkit", "export", str(arch), "-o", str(wh), "--format", "delta",
                            "--mirror", "--table", "types.ints", "--engine", "spark", "--spark-master", "local[2]",
                            "--json"], capture_output=True, text=True, env=env, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        return json.loads(p.stdout)   # the summary alone: nothing of the JVM's on stdout

    def rows(wh: Path, state=None) -> list:
        sink = open_sink("delta", str(wh))
        v = None if state is None else as_of(sink.history("types", "ints"), gtid=state)
        return sorted(map(repr, sink.read("types", "ints", v).to_pylist()))
    first = backfill(tmp_path / "a")
    if start._java() is None:
        pytest.skip("no java")
    deadline = time.monotonic() + 120   # the driver's JVM writes the archive at its exit, after the command
    while time.monotonic() < deadline and not any(start.finished(p) for p in folder.glob("*.jsa.*")):
        time.sleep(0.5)
    assert any(start.finished(p) for p in folder.glob("*.jsa.*")), list(folder.glob("*"))
    second = backfill(tmp_path / "b")
    assert [p.name for p in folder.glob("*.jsa")] and not list(folder.glob("*.jsa.*"))   # taken by the second run
    assert first["rows"] == second["rows"] > 0 and first["cut"] == second["cut"]
    local = tmp_path / "local"
    export_lake([str(arch)], str(local), fmt="delta", mirror=True, batch_transactions=1,
                filters=Filters(tables=("types.ints",)))
    state = open_sink("delta", str(tmp_path / "a")).recorded("types", "ints")["binlogkit.gtid_state"]
    assert rows(tmp_path / "a") == rows(tmp_path / "b") == rows(local, state)

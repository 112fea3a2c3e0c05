"""The audit job on a real Spark standalone cluster: a master and two 1-core workers on
127.0.0.1 started from the installed pyspark's ``spark-class`` (stopped by PID), the job run
with ``spark-submit --master spark://127.0.0.1:PORT binlogkit/spark/jobs/audit.py ARCHIVE --output DIR``
by a Python that does not have binlogkit or construct installed: both reach the driver and the
executors as the ``--py-files`` zip of ``binlogkit.audit.pack`` (docs/audit.md shows the lines).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from binlogkit import open_binlog  # noqa: E402
from binlogkit.audit import run_local  # noqa: E402
from binlogkit.audit.pack import pack  # noqa: E402
from fixtures import store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cluster(spark_standalone):
    return spark_standalone


def bare_python() -> str:
    """The interpreter this venv was made from: no binlogkit, no construct in its path."""
    exe = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    probe = subprocess.run([str(exe), "-c", "import binlogkit"], capture_output=True, cwd="/")
    if probe.returncode == 0:
        pytest.skip(f"{exe} has binlogkit installed: cannot show the --py-files route")
    probe = subprocess.run([str(exe), "-c", "import construct"], capture_output=True, cwd="/")
    if probe.returncode == 0:
        pytest.skip(f"{exe} has construct installed: cannot show the --py-files route")
    return str(exe)


def test_job_on_standalone_cluster_equals_local_engine(cluster, tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(store.materialize("ring-duplicates-off"), archive / "ring")
    shutil.copytree(store.materialize("replication-gtid") / "primary", archive / "primary")
    victim = archive / "primary" / "mariadb-bin.000004"
    ev = list(open_binlog(str(victim)))[77]
    raw = bytearray(victim.read_bytes())
    raw[ev.offset + 20] ^= 0x11
    victim.write_bytes(bytes(raw))
    (archive / "primary" / "mariadb-bin.000009").unlink()
    zip_ = pack(tmp_path / "binlogkit-audit.zip")
    py = bare_python()
    spark_submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYSPARK_PYTHON=py, PYSPARK_DRIVER_PYTHON=py, SPARK_LOCAL_IP="127.0.0.1")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    out = tmp_path / "out"
    p = subprocess.run([str(spark_submit), "--master", cluster.master_url, "--py-files", str(zip_),
                        "--conf", "spark.executor.memory=512m", "--conf", "spark.ui.enabled=false",
                        str(ROOT / "binlogkit" / "spark" / "jobs" / "audit.py"), str(archive), "--output", str(out), "--json"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 1, p.stderr[-4000:]
    printed = json.loads(p.stdout[p.stdout.index("{"):])
    local = run_local([archive], jobs=2)
    assert printed == local
    kinds = {f["kind"] for f in local["findings"]}
    assert {"checksum_mismatch", "missing_file", "duplicate_gtid", "gtid_gap"} <= kinds
    import pyarrow.parquet as pq

    table = pq.read_table(out / "findings.parquet")
    assert table.num_rows == len(local["findings"])
    assert table.column("offset").to_pylist() == [f["offset"] for f in local["findings"]]
    assert json.loads((out / "summary.json").read_text())["counts"] == local["counts"]
    # the work ran on both workers' executors (one 1-core executor each), not in the driver
    for i in range(2):
        execs = list((cluster.folder / f"work{i}").glob("app-*/*/stderr"))
        assert execs, f"worker {i} ran no executor"

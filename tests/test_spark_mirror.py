"""The mirror backfill on Spark (``export --format iceberg|delta --mirror --engine spark``, the
spark-submit job ``spark/jobs/mirror.py``) against the local mirror, value by value, on a real
local[2] SparkSession: on the committed MariaDB 10.11 fixture (many partitions: ranges of 4 KB)
and on a lab server's workload; a local run continues the backfill's tables; a driver killed
between table commits leaves tables a rerun completes. Kept to a few Spark runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytest.importorskip("pyarrow")

from binlogkit.export.lake import export_lake  # noqa: E402
from binlogkit.export.lake.backfill import after_truncate, barrier, cut, winner  # noqa: E402
from binlogkit.export.lake.mirror import exit_code as mirror_exit, open_sink  # noqa: E402
from binlogkit.export.lake.read import as_of  # noqa: E402
from binlogkit.export.lake.snapshot import wanted  # noqa: E402
from binlogkit.spark.jobs import audit as audit_job  # noqa: E402
from binlogkit.spark.jobs import mirror as job  # noqa: E402
from fixtures import store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KEPT = ("binlogkit.gtid", "binlogkit.file", "binlogkit.position", "binlogkit.commit_time", "binlogkit.gtid_state")


@pytest.fixture(scope="module")
def spark():
    s = audit_job.session("local[2]")
    yield s
    s.stop()


def _archive() -> Path:
    return store.materialize("row-types-full-metadata") / "primary"


def _norm(rows: list[dict]) -> list[str]:
    return sorted(repr(sorted(r.items())) for r in rows)


def _tables(fmt: str, wh: Path, version_of=None) -> dict:
    """Every table of a warehouse (its rows, normalised); ``version_of(history)``: as of that
    snapshot / version instead of the current one."""
    sink = open_sink(fmt, str(wh))
    out = {}
    for db, name in sink.table_names():
        v = None if version_of is None else version_of(sink.history(db, name))
        data = sink.read(db, name, v) if version_of is None or v is not None else None
        out[(db, name)] = None if data is None else _norm(data.to_pylist())
    return out


def _props(fmt: str, wh: Path, db: str, name: str) -> dict:
    p = open_sink(fmt, str(wh)).recorded(db, name) or {}
    return {k: p.get(k) for k in KEPT}


# -- the pure rules ----------------------------------------------------------------------------
def test_barriers_are_the_local_mirrors_stops_and_schema_changes():
    w = wanted(("shop.*",))

    def db_w(d):
        return d == "shop"

    assert barrier("ALTER TABLE orders ADD COLUMN x INT", "shop", None, w, db_w) == ("schema change", "shop.orders")
    assert barrier("ALTER TABLE shop.orders ADD COLUMN x INT", "other", None, w, db_w) == ("schema change",
                                                                                           "shop.orders")
    assert barrier("ALTER TABLE orders ADD COLUMN x INT", "shop", "START", w, db_w) is None   # MariaDB START ALTER
    assert barrier("ALTER TABLE other.t ADD COLUMN x INT", "shop", None, w, db_w) is None
    assert barrier("CREATE TABLE shop.t (id INT PRIMARY KEY)", "shop", None, w, db_w) is None
    assert barrier("TRUNCATE TABLE shop.t", None, None, w, db_w) == ("truncate", "shop.t")   # passes: folds restart
    assert barrier("DROP TABLE IF EXISTS t", "shop", None, w, db_w) == ("schema change", "shop.t")
    assert barrier("RENAME TABLE shop.a TO shop.b", None, None, w, db_w) == ("schema change", "shop.a")
    assert barrier("DROP DATABASE shop", None, None, w, db_w) == ("schema change", "shop.*")
    assert barrier("UPDATE orders SET n = n + 1", "shop", None, w, db_w) == ("statement", "shop.orders")
    assert barrier("UPDATE orders SET n = n + 1", "shop", None, w, db_w, True) == ("skipped", "shop.orders")
    assert barrier("UPDATE t SET n = 1", "other", None, w, db_w) is None


def test_cut_takes_the_partitions_before_the_first_barrier_or_new_table_version():
    def part(i, version="v1", stop=None):
        return {"task": i, "barrier": stop, "tables": {("d", "t"): {"version": version, "first_at": {"file": f"f{i}"}}}}
    taken, stop = cut([part(0), part(1), part(2)])
    assert [r["task"] for r in taken] == [0, 1, 2] and stop is None
    taken, stop = cut([part(0), part(1, stop={"kind": "schema change"}), part(2)])
    assert [r["task"] for r in taken] == [0, 1] and stop == {"kind": "schema change"}
    taken, stop = cut([part(0), part(1, "v2"), part(2, "v2")])   # a table version without its ALTER: not taken
    assert [r["task"] for r in taken] == [0] and stop["kind"] == "table version" and stop["file"] == "f1"
    assert winner((3, 0, 5, True), (1, 9, 9, False)) == (3, 0, 5, True)
    parts = [(0, "a"), (2, "b"), (5, "c")]
    assert after_truncate(("d", "t"), parts, {("d", "t"): [1, 2]}) == [(2, "b"), (5, "c")]
    assert after_truncate(("d", "t"), parts, {("d", "u"): [4]}) == parts


def test_the_arrow_fold_is_the_mirrors_fold():
    """``fold_arrow`` (the executors' fold by key, column-wise) gives, per key, what ``fold.fold``
    gives row by row: random histories of inserts, updates (key updates too) and deletes over a
    few keys, from random starting rows (a TRUNCATE's)."""
    import random

    import pyarrow as pa

    from binlogkit.export.lake.fold import fold
    from binlogkit.spark.backfill import DEAD, fold_arrow

    rnd = random.Random(7)
    for _ in range(300):
        n = rnd.randint(0, 40)
        ops = [rnd.choice(["insert", "update", "delete"]) for _ in range(n)]
        b = [None if o == "insert" else rnd.randint(0, 5) for o in ops]
        a = [None if o == "delete" else rnd.randint(0, 5) for o in ops]
        t = pa.table({"op": pa.array(ops, pa.string()), "before_id": pa.array(b, pa.int32()),
                      "after_id": pa.array(a, pa.int32()), "before_v": pa.array(range(n), pa.int64()),
                      "after_v": pa.array(range(n), pa.int64())})
        s = rnd.randint(0, n)
        want = fold((o, (x,), (y,)) for o, x, y in zip(ops[s:], b[s:], a[s:]))
        got = fold_arrow(t, ["id"], s)
        assert got.schema.names == ["id", "v", DEAD]
        assert {(r["id"],): None if r[DEAD] else r["v"] - s for r in got.to_pylist()} == want


def test_executors_walk_with_export_c_walk_and_stop_at_the_partial_image_c_marks(monkeypatch, tmp_path):
    """``walk_task`` goes through export's C walk (no row through the local mirror's Python row
    builder) and stops before the first partial row image, which the C builder marks: the
    MariaDB 10.11 fixture's MINIMAL event, its transaction's rows left out."""
    from binlogkit.export.lake import batch
    from binlogkit.rowvalues.arrowcols import C_ROWARROW
    from binlogkit.spark import backfill
    from binlogkit.spark.files import plan_files

    if C_ROWARROW is None:
        pytest.skip("binlogkit._rowarrow is not built")

    def no(*a, **k):
        raise AssertionError("a row through TableBatch")
    monkeypatch.setattr(batch.TableBatch, "add", no)
    marked = []
    real = backfill._partial
    monkeypatch.setattr(backfill, "_partial", lambda w, tab, ch: marked.append(real(w, tab, ch)) or marked[-1])
    tasks = [t for t in plan_files([str(_archive())]) if t.name.endswith("000003")]
    r = backfill.walk_task((0, tasks[0]), staging=str(tmp_path), spec={})
    assert r["barrier"]["kind"] == "partial row image" and marked[-1] and not any(marked[:-1])
    assert r["tables"] and all(t["rows"] > 0 for t in r["tables"].values())


def test_cli_refuses_what_the_spark_engine_does_not_take(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "binlogkit", "export", str(_archive()), "-o", str(tmp_path / "w"),
                               *args], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    for args in (("--engine", "spark"), ("--format", "delta", "--engine", "spark", "--from-gtid", "0-1-3"),
                 ("--format", "iceberg", "--engine", "spark", "--follow"),
                 ("--format", "iceberg", "--mirror", "--spark-master", "local[2]")):
        p = run(*args)
        assert p.returncode == 2 and "--engine spark" in p.stderr and "Traceback" not in p.stderr, args
    assert not (tmp_path / "w").exists()


# -- on Spark ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_backfill_equals_the_local_mirror_and_the_local_run_continues_it(spark, fmt, tmp_path):
    """The fixture's archive in 4 KB ranges: the backfill stops before its first partial row
    image (MINIMAL, exit 0); the local run continues its tables to the local mirror's final
    tables. Delta: before that, its tables equal the local mirror's as of the same GTID state (a
    commit per transaction), its commit properties those of the local commit there, and a rerun
    of the backfill commits nothing."""
    arch = _archive()
    wh = tmp_path / "spark"
    s = job.run(spark, [str(arch)], str(wh), fmt=fmt, mirror=True, split_bytes=4096)
    assert s["partitions"] > 10 and s["cut"]["kind"] == "partial row image" and job.exit_code(s) == 0
    assert "backfill stopped before mariadb-bin.000003:" in job.render(s)
    got = _tables(fmt, wh)
    assert len(got) == 22 and all(got.values())
    local = tmp_path / "local"
    if fmt == "delta":
        export_lake([str(arch)], str(local), fmt=fmt, mirror=True, batch_transactions=1)
        state = _props(fmt, wh, "types", "ints")["binlogkit.gtid_state"]
        want = _tables(fmt, local, lambda h: as_of(h, gtid=state))
        assert {k: want[k] for k in got} == got
        # the local commit at that state (the last transaction's) carries the same coordinates
        sink = open_sink(fmt, str(local))
        hist = [p for db, n in sink.table_names() for _v, p in sink.history(db, n)
                if p.get("binlogkit.gtid_state") == state]
        assert hist and all({k: p.get(k) for k in KEPT} == _props(fmt, wh, "types", "ints") for p in hist)
    else:
        export_lake([str(arch)], str(local), fmt=fmt, mirror=True)
    if fmt == "delta":
        again = job.run(spark, [str(arch)], str(wh), fmt=fmt, mirror=True)
        assert again["commits"] == 0 and len(again["already_committed"]) == 22
    cont = export_lake([str(arch)], str(wh), fmt=fmt, mirror=True)
    assert cont["skipped_rows"] > 0 and cont["commits"] > 0 and not cont["partial_images"]
    assert _tables(fmt, wh) == _tables(fmt, local)
    assert not list((wh / job.STAGING).glob("*"))   # the staging folder removed


def test_the_gap_is_found_on_the_executors(spark, tmp_path, monkeypatch):
    """The archive without its middle file: the audit runs on the executors (the audit job's
    stages) and gives the driver the first gap ``audit_gap`` finds in one process; the backfill
    (the driver auditing nothing itself) commits what is before it and raises ``ArchiveGap``."""
    from binlogkit.errors import ArchiveGap
    from binlogkit.export.changes import checked_inputs
    from binlogkit.export.lake import gaps

    arch = tmp_path / "arch"
    arch.mkdir()
    for name in ("mariadb-bin.000001", "mariadb-bin.000003"):
        shutil.copy(_archive() / name, arch / name)
    found = checked_inputs([str(arch)], one_series=True)
    want = gaps.audit_gap(found)
    assert want is not None and want[1]["kind"] in gaps.GAP_KINDS
    assert audit_job.first_gap(spark, [i.name for i in found]) == want
    assert audit_job.first_gap(spark, [str(_archive() / f"mariadb-bin.00000{i}") for i in (1, 2, 3)]) is None

    def no(*a, **k):
        raise AssertionError("the driver audited the archive")
    monkeypatch.setattr(gaps, "audit_gap", no)
    with pytest.raises(ArchiveGap) as got:
        job.run(spark, [str(arch)], str(tmp_path / "wh"), fmt="delta", mirror=True, tables=("types.ints",))
    s = got.value.summary  # type: ignore[attr-defined]
    assert s["gap"] == want[1] and s["commits"] > 0


def test_killed_between_table_commits_a_rerun_completes(spark, tmp_path, monkeypatch, capsys):
    """The whole archive (tables without the partial images): the driver dies after two table
    commits (their data files, and the others', written); a rerun of the backfill (the job's argv) commits the
    rest, and the tables and commit properties equal the local mirror's (the files the killed
    run wrote but did not commit are never read)."""
    from binlogkit.export.lake import iceberg

    arch = _archive()
    tables = ("types.ints", "types.exactnums", "types.strs")
    wh = tmp_path / "spark"
    real = iceberg.commit_data_files
    calls = []

    def dies(*a, **k):
        if len(calls) == 2:
            raise SystemExit("killed")
        calls.append(a[2])
        return real(*a, **k)
    monkeypatch.setattr(iceberg, "commit_data_files", dies)
    with pytest.raises(SystemExit):
        job.run(spark, [str(arch)], str(wh), fmt="iceberg", mirror=True, tables=tables, split_bytes=8192)
    monkeypatch.setattr(iceberg, "commit_data_files", real)
    capsys.readouterr()
    rc = job.main(spark, [str(arch), "--output", str(wh), "--format", "iceberg", "--mirror", "--table",
                          "types.ints,types.exactnums", "--table", "types.strs", "--split-bytes", "8192", "--json"])
    s = json.loads(capsys.readouterr().out)
    assert rc == 0 and s["cut"] is None and len(s["already_committed"]) == 2 and s["commits"] == 4
    assert s["rows"] == sum(n.num_rows for n in (open_sink("iceberg", str(wh)).read("types", t + "__changes")
                                                 for t in ("ints", "exactnums", "strs")))
    local = tmp_path / "local"
    export_lake([str(arch)], str(local), fmt="iceberg", mirror=True, filters=_filters(tables))
    assert _tables("iceberg", wh) == _tables("iceberg", local)
    for name in ("ints", "ints__changes", "strs", "exactnums__changes"):
        assert _props("iceberg", wh, "types", name) == _props("iceberg", local, "types", name), name
    # orphans: more data files on disk than the tables hold
    on_disk = list((wh / "types").glob("*/data/*.parquet"))
    held = sum(len(list(t.scan().plan_files())) for t in
               (open_sink("iceberg", str(wh)).catalog.load_table(("types", n)) for n in
                ("ints", "ints__changes", "strs", "strs__changes", "exactnums", "exactnums__changes")))
    assert len(on_disk) > held


def _filters(tables):
    from binlogkit.export import Filters

    return Filters(tables=tables)


# -- a lab server ------------------------------------------------------------------------------
@pytest.mark.server
@pytest.mark.parametrize("kind", [pytest.param("mariadb-10.11", id="mariadb-10.11"),
                                  pytest.param("mariadb-11.8", id="mariadb-11.8",
                                               marks=pytest.mark.kind("mariadb-11.8")),
                                  pytest.param("mysql-9.7", id="mysql-9.7", marks=pytest.mark.kind("mysql-9.7"))])
def test_lab_backfill_stops_at_an_alter_and_the_local_run_continues(spark, kind, tmp_path):
    """MariaDB 10.11 (the row-types tables), MariaDB 11.8 and MySQL 9.7 (today's type tables):
    key updates, deletes, a table without a primary key, a TRUNCATE and new rows, an ALTER, more
    changes. The backfill (10.11:
    Delta; the others: Iceberg) stops before the ALTER (exit 0); the local run continues; after
    more workload (inserts, key updates, deletes) the local run continues again: every table
    equals a local build of the whole archive, value by value."""
    from fixtures.lab import Lab
    from fixtures.lab.build import start_row_types_primary
    from fixtures.lab.today import start_types_primary

    def copy(srv, to: Path) -> Path:
        to.mkdir(parents=True, exist_ok=True)
        for r in srv.query("SHOW BINARY LOGS"):
            shutil.copy(srv.datadir / r["Log_name"], to / r["Log_name"])
        return to

    fmt = "delta" if kind == "mariadb-10.11" else "iceberg"
    with Lab(tmp_path / "lab", kind=None if kind == "mariadb-10.11" else kind) as lab:
        if kind == "mariadb-10.11":
            srv = start_row_types_primary(lab, changes=True, many=600, binlog_row_metadata="FULL",
                                          max_binlog_size=1 << 20)
        else:
            srv = start_types_primary(lab, many=600, max_binlog_size=1 << 20)
        with srv.connect() as conn, conn.cursor() as cur:
            for t in ("nums", "strs"):
                cur.execute(f"UPDATE types.{t} SET id = id + 1000")              # key updates
            cur.execute("UPDATE types.many SET id = id + 100000")
            cur.execute("DELETE FROM types.many WHERE id % 3 = 0")
            cur.execute("UPDATE types.many SET id = id + 200000 WHERE id % 7 = 0")
            cur.execute("CREATE TABLE types.nokey (a INT, b VARCHAR(10))")   # no primary key: a change table only
            cur.execute("INSERT INTO types.nokey VALUES (1, 'one'), (2, 'two'), (2, 'two')")
            cur.execute("UPDATE types.nokey SET b = 'deux' WHERE a = 2")
            cur.execute("TRUNCATE TABLE types.many")          # passes: the rows before it are gone
            cur.execute("INSERT INTO types.many WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s "
                        "WHERE n < 500) SELECT n + 100000, CONCAT('again ', n), n FROM s")
            cur.execute("DELETE FROM types.many WHERE id % 11 = 0")
            cur.execute("ALTER TABLE types.many ADD COLUMN extra VARCHAR(10) DEFAULT 'new'")
            cur.execute("UPDATE types.many SET extra = CONCAT('x', id % 7) WHERE id % 2 = 0")
            cur.execute("FLUSH BINARY LOGS")
        first = copy(srv, tmp_path / "a1")
        wh = tmp_path / "spark"
        s = job.run(spark, [str(first)], str(wh), fmt=fmt, mirror=True, split_bytes=64 << 10)
        assert s["cut"]["kind"] == "schema change" and s["cut"]["table"] == "types.many", s["cut"]
        assert s["partitions"] >= 3 and job.exit_code(s) == 0 and s["truncated"] == ["types.many"]
        assert s["no_key"] == ["types.nokey"] and open_sink(fmt, str(wh)).read("types", "nokey") is None
        assert open_sink(fmt, str(wh)).read("types", "nokey__changes").num_rows == 5
        export_lake([str(first)], str(wh), fmt=fmt, mirror=True)
        with srv.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO types.many (id, v, n) SELECT id + 1000000, v, n FROM types.many WHERE id < 100300")
            cur.execute("UPDATE types.many SET id = id + 500000 WHERE id BETWEEN 100100 AND 100400")
            cur.execute("DELETE FROM types.nums WHERE id % 2 = 0")
            if kind == "mariadb-10.11":   # statement-format DML: the mirror cannot apply it
                cur.execute("SET SESSION binlog_format = 'STATEMENT'")
                cur.execute("UPDATE types.strs SET id = id + 5000 WHERE id > 1000 LIMIT 1")
                cur.execute("SET SESSION binlog_format = 'ROW'")
            cur.execute("FLUSH BINARY LOGS")
        second = copy(srv, tmp_path / "a2")
    if kind == "mariadb-10.11":
        # a backfill of that table alone stops before the statement, named, exit 1 (as the local run)
        st = job.run(spark, [str(second)], str(tmp_path / "st"), fmt=fmt, mirror=True, tables=("types.strs",))
        assert st["cut"]["kind"] == "statement" and [x["table"] for x in st["stopped"]] == ["types.strs"]
        assert job.exit_code(st) == 1 and "mirror of types.strs stopped before" in job.render(st)
        loc = export_lake([str(second)], str(tmp_path / "st"), fmt=fmt, mirror=True, filters=_filters(("types.strs",)))
        assert [x["table"] for x in loc["stopped"]] == ["types.strs"] and mirror_exit(loc) == 1
    cont = export_lake([str(second)], str(wh), fmt=fmt, mirror=True)
    assert cont["skipped_rows"] > 0 and cont["commits"] > 0
    local = tmp_path / "local"
    export_lake([str(second)], str(local), fmt=fmt, mirror=True)
    got, want = _tables(fmt, wh), _tables(fmt, local)
    assert got == want and len(got["types", "many"]) > 500

"""``binlogkit export`` on committed fixtures (real MariaDB files): types, names, damage,
partial transactions, the output protocol, kill -9 and the rerun (issue 21, proof 4)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit import open_binlog
from binlogkit.cli import main
from binlogkit.export import ddl, export
from binlogkit.export.output import read_success
from fixtures import store

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ROOT = Path(__file__).resolve().parent.parent


def _run(*args):
    return CliRunner().invoke(main, ["export", *map(str, args)])


def _table(out: Path, table: str, db: str = "types"):
    import pyarrow.dataset as ds

    return ds.dataset(str(out / f"db={db}" / f"table={table}"), format="parquet", partitioning="hive").to_table()


def _rows(out: Path) -> dict:
    """Every row of every table of a dataset, in binlog order, parts' names aside."""
    got = {}
    for folder in sorted(out.glob("db=*/table=*")):
        t = pq.ParquetDataset(str(folder)).read().to_pylist()
        got[folder.relative_to(out).as_posix()] = sorted(t, key=lambda r: (r["file"], r["offset"], r["row_index"]))
    return got


def test_types_at_their_width_sign_precision_and_charset(tmp_path):
    out = tmp_path / "out"
    res = _run(store.materialize("row-types-full-metadata") / "primary", "--output", out, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary == read_success(str(out))
    ints = _table(out, "ints")
    types = {f.name: str(f.type) for f in ints.schema}
    assert [types[f"after_{c}"] for c in ("t", "tu", "s", "su", "m", "mu", "i", "iu", "b", "bu")] == \
        ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int32", "uint32", "int64", "uint64"]
    first = {r["after_id"]: r for r in ints.to_pylist() if r["op"] == "insert"}[1]
    assert (first["after_tu"], first["after_bu"], first["after_b"]) == (255, 18446744073709551615, -9223372036854775808)
    times = {f.name: str(f.type) for f in _table(out, "times").schema}
    assert times["after_dt"] == "date32[day]" and times["after_t3"] == "duration[us]"
    assert times["after_d6"] == "timestamp[us]" and times["after_ts6"] == "timestamp[us, tz=UTC]"
    assert times["after_d0"] == "timestamp[ms]" and times["after_dt__text"] == "string"
    zero = {r["after_id"]: r for r in _table(out, "times").to_pylist() if r["op"] == "insert"}[2]
    assert zero["after_dt"] is None and zero["after_dt__text"] == "0000-00-00"   # the zero date: null + text
    nums = {f.name: f.type for f in _table(out, "nums").schema}
    assert nums["after_d1"] == pa.decimal128(10, 2) and nums["after_d4"] == pa.decimal256(65, 30)
    strs = {f.name: str(f.type) for f in _table(out, "strs").schema}
    assert (strs["after_cu"], strs["after_vb"], strs["after_e"], strs["after_bt"]) == ("string", "binary", "string", "uint64")
    cs = {r["after_id"]: r for r in _table(out, "charsets").to_pylist() if r["op"] == "insert"}[1]
    assert (cs["after_l1"], cs["after_cy"], cs["after_u2"], cs["after_sj"]) == ("café € ‰", "Привет", "žluť ω", "ｶﾀｶﾅ日本")
    meta = pq.read_schema(next((out / "db=types" / "table=ints").rglob("*.parquet"))).metadata
    assert meta[b"binlogkit.column_names"] == b"metadata"


def test_names_from_a_schema_file_else_positional(tmp_path):
    src = store.materialize("row-types") / "primary"        # binlog_row_metadata=MINIMAL: no names
    res = _run(src, "--output", tmp_path / "pos")
    assert res.exit_code == 0, res.output
    names = _table(tmp_path / "pos", "ints").schema.names
    assert "after_c2" in names and "after_tu" not in names
    meta = pq.read_schema(next((tmp_path / "pos" / "db=types" / "table=ints").rglob("*.parquet"))).metadata
    assert meta[b"binlogkit.column_names"] == b"positional"
    assert str(_table(tmp_path / "pos", "ints").schema.field("after_c3").type) == "int8"  # no signedness known
    from fixtures.lab.build import TYPES_SCHEMA
    schema = tmp_path / "schema.sql"
    # as SHOW CREATE TABLE prints them (here: the statements the tables were made with)
    schema.write_text("USE `types`;\n" + ";\n".join(TYPES_SCHEMA[1:]) + ";\n")
    res = _run(src, "--output", tmp_path / "named", "--schema", schema)
    assert res.exit_code == 0, res.output
    ints = _table(tmp_path / "named", "ints")
    assert str(ints.schema.field("after_tu").type) == "uint8"
    first = {r["after_id"]: r for r in ints.to_pylist() if r["op"] == "insert"}[1]
    assert first["after_bu"] == 18446744073709551615
    strs = _table(tmp_path / "named", "strs")
    assert str(strs.schema.field("after_e").type) == "string"
    assert {r["after_e"] for r in strs.to_pylist() if r["op"] == "insert"} >= {"b", "a"}
    meta = pq.read_schema(next((tmp_path / "named" / "db=types" / "table=ints").rglob("*.parquet"))).metadata
    assert meta[b"binlogkit.column_names"] == b"schema-file"


def test_ddl_parses_mariadb_dump_output():
    text = """-- Current Database: `shop`
CREATE TABLE `orders` (
  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `note` varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT 'a,b',
  `state` enum('new','it''s done') NOT NULL,
  `raw` varbinary(8) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `k` (`state`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
"""
    (t,) = ddl.parse(text)
    assert (t.db, t.name) == ("shop", "orders")
    assert [(c.name, c.type, c.unsigned, c.charset) for c in t.columns] == [
        ("id", "int", True, None), ("note", "varchar", False, "latin1"), ("state", "enum", False, "utf8mb4"),
        ("raw", "varbinary", False, "binary")]
    assert t.columns[2].labels == ("new", "it's done")


def _cut(src: Path, dst: Path, at: int) -> Path:
    dst.write_bytes(src.read_bytes()[:at])
    return dst


def test_partial_transaction_at_the_end_is_reported_not_exported(tmp_path):
    src = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000002"
    evs = list(open_binlog(str(src)))
    xids = [e for e in evs if e.type_code == 16]
    victim = xids[-1]                                   # the last transaction loses its Xid
    cut = _cut(src, tmp_path / "mariadb-bin.000002", victim.offset)
    whole = export([src], str(tmp_path / "whole"))
    res = _run(cut, "--output", tmp_path / "out", "--json")
    assert res.exit_code == 1, res.output
    s = json.loads(res.output)
    assert len(s["incomplete"]) == 1 and s["problems"] == []
    assert s["transactions"] == whole["transactions"] - 1
    assert s["rows"] < whole["rows"]
    assert (tmp_path / "out" / "_SUCCESS").exists()     # complete as far as it goes: the report says what is missing


def test_damaged_file_exports_the_sound_part_and_says_where(tmp_path):
    src = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000002"
    evs = list(open_binlog(str(src)))
    xids = [e for e in evs if e.type_code == 16]
    bad = xids[len(xids) // 2]
    raw = bytearray(src.read_bytes())
    raw[bad.offset - 30] ^= 0x5A                         # inside the rows event before that Xid
    damaged = tmp_path / "mariadb-bin.000002"
    damaged.write_bytes(bytes(raw))
    res = _run(damaged, store.materialize("replication-gtid") / "primary" / "mariadb-bin.000003",
               "--output", tmp_path / "out", "--json")
    assert res.exit_code == 1, res.output
    s = json.loads(res.output)
    p, cut = s["problems"]
    assert p["file"] == str(damaged) and p["error"] == "ChecksumError" and p["offset"] < bad.offset
    assert cut["kind"] == "cut" and cut["offset"] < p["offset"]   # the transaction the damage cut: not exported
    # the sound transactions before the damage, and the next file, are exported
    before = export([_cut(src, tmp_path / "head.000002", xids[len(xids) // 2 - 1].end_offset)],
                    str(tmp_path / "head"))
    nxt = export([store.materialize("replication-gtid") / "primary" / "mariadb-bin.000003"], str(tmp_path / "n"))
    assert s["transactions"] == before["transactions"] + nxt["transactions"]
    assert s["rows"] == before["rows"] + nxt["rows"]


def test_usage_errors_exit_2(tmp_path):
    assert _run(tmp_path / "nope.000001", "--output", tmp_path / "o").exit_code == 2
    (tmp_path / "empty").mkdir()
    res = _run(tmp_path / "empty", "--output", tmp_path / "o")
    assert res.exit_code == 2 and "no binlog or relay log" in res.output and not (tmp_path / "o").exists()
    res = _run(store.materialize("row-types") / "primary", "--output", tmp_path / "o",
               "--include-gtids", "0-1-1", "--start-datetime", "2024-01-01")
    assert res.exit_code == 2 and "not both" in res.output
    assert _run(store.materialize("row-types") / "primary", "--output", tmp_path / "o",
                "--include-gtids", "zz").exit_code == 2
    (tmp_path / "file").write_text("x")
    assert _run(store.materialize("row-types") / "primary", "--output", tmp_path / "file").exit_code == 2
    res = CliRunner().invoke(main, ["export", "--help"])
    assert "_SUCCESS" in res.output and "--row-group-rows" in res.output


def test_filters_tables_and_gtids(tmp_path):
    src = store.materialize("row-types-full-metadata") / "primary"
    s = export([src], str(tmp_path / "a"), filters=__import__("binlogkit.export", fromlist=["Filters"]).Filters(
        tables=("types.int*",)))
    assert list(s["tables"]) == ["types.ints"]
    res = _run(src, "--output", tmp_path / "b", "--include-gtids", "0-1-8", "--json")
    s = json.loads(res.output)
    assert s["transactions"] == 1 and s["tables"] == {"types.ints": {"insert": 4, "update": 0, "delete": 0}}


def test_rerun_replaces_the_dataset_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    export([store.materialize("replication-gtid") / "primary"], str(out))
    (out / "README.txt").write_text("mine")
    s = export([store.materialize("row-types-full-metadata") / "primary"], str(out))
    assert {p.name for p in out.glob("db=*")} == {"db=types"}   # the earlier run's db=lab is gone
    assert (out / "README.txt").read_text() == "mine"
    assert read_success(str(out)) == s


def test_two_exports_never_write_one_folder_at_once(tmp_path):
    from binlogkit.writing.safeio import SafeDir

    out = tmp_path / "out"
    out.mkdir()
    with SafeDir(out) as d, d.locked():                  # another export holds the folder
        res = _run(store.materialize("row-types") / "primary", "--output", out)
    assert res.exit_code == 2 and "another binlogkit command" in res.output
    assert list(out.iterdir()) == []


def test_row_groups_are_flushed_at_n_rows(tmp_path):
    out = tmp_path / "out"
    export([store.materialize("replication-gtid") / "primary"], str(out), row_group_rows=100)
    parts = list((out / "db=lab" / "table=small").rglob("*.parquet"))
    md = pq.ParquetFile(parts[0]).metadata
    assert md.num_row_groups > 1 and max(md.row_group(i).num_rows for i in range(md.num_row_groups)) <= 100


def _page_types(path: Path) -> set[int]:
    """The type of the first data page of each column chunk of a Parquet file (its page
    header's field 1 as Thrift's compact protocol writes it: 0 DATA_PAGE, 3 DATA_PAGE_V2)."""
    md = pq.ParquetFile(path).metadata
    raw = path.read_bytes()
    out = set()
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            at = md.row_group(g).column(c).data_page_offset
            assert raw[at] == 0x15   # field 1, i32
            out.add(raw[at + 1] >> 1)
    return out


def test_change_parts_are_written_in_data_pages_v2_and_read_alike(tmp_path):
    out = tmp_path / "out"
    export([store.materialize("replication-gtid") / "primary"], str(out), row_group_rows=100)
    parts = sorted(out.glob("db=*/table=*/*/*.parquet"))
    assert parts and all(_page_types(p) == {3} for p in parts)
    duckdb = pytest.importorskip("duckdb")
    for p in parts:
        want = pq.read_table(p)
        cols = ", ".join(f'"{n}"' for n in want.schema.names)
        got = duckdb.connect().execute(f"SELECT {cols} FROM read_parquet('{p}')").arrow()
        got = got.read_all() if hasattr(got, "read_all") else got
        assert got.num_rows == want.num_rows
        assert got.cast(want.schema).equals(want)


def test_kill_9_leaves_no_success_and_the_rerun_equals_a_clean_run(tmp_path):
    """Proof 4: an export killed mid-run (SIGKILL) leaves no _SUCCESS; the rerun into the same
    folder finishes and its rows equal those of a clean run into a fresh folder."""
    archive = tmp_path / "archive"
    shutil.copytree(store.materialize("replication-gtid") / "primary", archive)
    clean = tmp_path / "clean"
    export([archive], str(clean), row_group_rows=50)
    out = tmp_path / "out"
    # slow enough to be killed in the middle: every row group of 50 rows is a Parquet write
    code = ("import sys, time\nfrom binlogkit.export import dataset\nw = dataset.DatasetWriter._write\n"
            "def slow(self, part):\n    time.sleep(0.05)\n    w(self, part)\n"
            "dataset.DatasetWriter._write = slow\nfrom binlogkit.cli import main\nmain()\n")
    killed = False
    for delay in (1.0, 2.0, 0.5):
        p = subprocess.Popen([sys.executable, "-c", code, "export", str(archive), "--output", str(out),
                              "--row-group-rows", "50"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list(out.glob("db=*/table=*/*/*.parquet")):
            time.sleep(0.02)
        time.sleep(delay)
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            killed = True
            break
        p.wait()
    assert killed, "the export finished before it could be killed"
    assert not (out / "_SUCCESS").exists()
    assert list(out.glob("db=*/table=*/*/*.parquet"))            # it had written parts
    assert read_success(str(out)) is None
    res = _run(archive, "--output", out, "--row-group-rows", "50")
    assert res.exit_code == 0, res.output
    assert read_success(str(out)) is not None
    assert _rows(out) == _rows(clean)
    mine = {k: v for k, v in read_success(str(out)).items() if k not in ("output", "seconds")}
    theirs = {k: v for k, v in read_success(str(clean)).items() if k not in ("output", "seconds")}
    assert mine == theirs


def test_datetime_range_takes_the_transactions_that_began_in_it(tmp_path):
    from datetime import datetime, timezone

    from binlogkit.transactions import group_files

    src = store.materialize("replication-gtid") / "primary"
    trx = [t for t in group_files([src]) if t.complete]
    seconds = sorted({t.first_timestamp for t in trx})
    assert len(seconds) >= 3
    t0, t1 = seconds[1], seconds[2]                      # the middle second of the workload
    start = datetime.fromtimestamp(t0, timezone.utc).isoformat()
    stop = datetime.fromtimestamp(t1, timezone.utc).isoformat()
    res = _run(src, "--output", tmp_path / "out", "--start-datetime", start, "--stop-datetime", stop, "--json")
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    inside = [t for t in trx if t0 <= t.first_timestamp < t1]
    assert s["transactions"] == len(inside) and s["filtered_out"] == len(trx) - len(inside)
    got = pq.ParquetDataset(str(tmp_path / "out" / "db=lab" / "table=small")).read()
    times = [c.timestamp() for c in got.column("commit_time").to_pylist()]
    assert min(times) >= t0 and got.num_rows > 0
    assert set(got.column("gtid").to_pylist()) <= {t.gtid for t in inside}


def test_mariadb_11_8_text_in_its_uca1400_collations_is_text(tmp_path):
    """MariaDB 11.x's default collation utf8mb4_uca1400_ai_ci (id 2304) and ucs2_uca1400_ai_ci
    (2560) are what its table maps name (COLUMN_CHARSET); unknown ids made those columns binary.
    The committed MariaDB 11.8.9 set: every text column of types.strs as the server stored it."""
    primary = Path(__file__).parent.parent / "fixtures" / "mariadb-11.8" / "replication-gtid" / "primary"
    files = sorted(str(p) for p in primary.glob("mariadb-bin.0*") if not p.name.endswith(".idx"))
    s = export(files, str(tmp_path / "out"))
    assert s["problems"] == []
    rows = _table(tmp_path / "out", "strs").to_pylist()
    first = next(r for r in rows if r["after_id"] == 1)
    assert (first["after_c"], first["after_cu"], first["after_l1"], first["after_cy"], first["after_sj"],
            first["after_u2"]) == ("abc", "žluťoučký", "café", "Привет", "ｶﾀｶﾅ日本", "žluť ω")
    assert first["after_v"] == "€" * 300 and first["after_tx"] == "it's \\ text"


def test_the_export_commands_parquet_writer_takes_no_buffer_from_mimalloc():
    """In a process of its own, the export command chooses the allocator before pyarrow loads:
    the Parquet writer's own buffers (pages, encoders, compression: Arrow's C++ default pool,
    which pyarrow's set_memory_pool does not reach) come from the system allocator too, none
    from mimalloc; the choice is not handed down to child processes."""
    code = ("import os\n"
            "from binlogkit.cli.export import _system_allocator\n"
            "_system_allocator()\n"
            "import pyarrow as pa, pyarrow.parquet as pq\n"
            "t = pa.table({'x': list(range(100000)), 's': [str(i) * 9 for i in range(100000)]})\n"
            "pq.write_table(t, pa.BufferOutputStream())\n"
            "print(pa.default_memory_pool().backend_name, pa.mimalloc_memory_pool().max_memory(),"
            " os.environ.get('ARROW_DEFAULT_MEMORY_POOL'))\n")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["system", "0", "None"], out.stdout


def test_the_export_command_takes_arrows_buffers_from_the_system_allocator(tmp_path, monkeypatch):
    """The CLI's export process allocates Arrow's buffers with the C library's allocator (kept
    pages: less of the kernel's page zeroing than mimalloc's returned ones), unless
    ARROW_DEFAULT_MEMORY_POOL says which; the rows are the same either way."""
    before = pa.default_memory_pool()
    src = store.materialize("replication-gtid") / "primary"
    try:
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        assert _run(src, "-o", tmp_path / "a").exit_code == 0
        assert pa.default_memory_pool().backend_name == "system"
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        assert _run(src, "-o", tmp_path / "b").exit_code == 0
        assert pa.default_memory_pool().backend_name == "mimalloc"
    finally:
        pa.set_memory_pool(before)
    assert _rows(tmp_path / "a") == _rows(tmp_path / "b") and _rows(tmp_path / "a")

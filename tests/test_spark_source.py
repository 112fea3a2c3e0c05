"""``spark.read.format("binlog")`` (binlogkit.spark, issue 32) in a local Spark session: each
table equals the local engine's output row for row (``binlogkit decode --json``,
``binlogkit transactions --json``, the local export, audit's file summaries) on lab fixtures,
plain, compressed and encrypted; key material is nowhere in the plan; pushed-down filters open
only the files that can match and return the same rows. The standalone cluster and SeaweedFS
``s3://`` proofs are in tests/test_spark_source_cluster.py (``make spark-proof``)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
MYSQL = FIX / "mysql-9.7" / "replication-gtid" / "primary"            # MySQL 9.7: Previous_gtids, .xz + plain, .index
TYPES = FIX / "mariadb-10.11" / "row-types-full-metadata" / "primary"  # MariaDB 10.11: typed rows with column names
ENC = FIX / "encrypted" / "mariadb-aes-cbc"                            # MariaDB encrypted binlogs + their key file
PROOF = os.environ.get("BINLOGKIT_SPARK_PROOF") == "1"                 # make spark-proof: every table, every set


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    s = (SparkSession.builder.master("local[2]").appName("binlog-source")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    from binlogkit.spark import register

    register(s)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> str:
    """The fixture's key file, private (the reader warns about a key file others can read)."""
    dst = tmp_path_factory.mktemp("keys") / "keys.txt"
    dst.write_bytes((ENC / "keys" / "keys.txt").read_bytes())
    dst.chmod(0o600)
    return str(dst)


def cli(*args: str) -> list[dict]:
    """JSON lines of a ``binlogkit`` command (the local engine)."""
    p = subprocess.run([str(ROOT / ".venv" / "bin" / "binlogkit"), *args], capture_output=True, text=True,
                       cwd=ROOT, env=dict(os.environ, TZ="UTC"))
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def read(spark, table: str, path, **options):
    r = spark.read.format("binlog").option("table", table)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(str(path))


EVENT_COLUMNS = ("file", "offset", "end_offset", "type", "type_code", "name", "timestamp", "server_id",
                 "event_size", "log_pos", "flags", "checksum_ok")


def events_of(rows) -> list[dict]:
    out = []
    for r in rows:
        d = {k: r[k] for k in EVENT_COLUMNS}
        d["fields"] = json.loads(r["fields"])
        if r["payload_offset"] is not None:
            d["payload_offset"], d["inner_offset"] = r["payload_offset"], r["inner_offset"]
        out.append(d)
    return sorted(out, key=lambda d: (d["file"], d["offset"], d.get("inner_offset") or -1))


def decoded(doc_lines: list[dict]) -> list[dict]:
    keep = EVENT_COLUMNS + ("fields", "payload_offset", "inner_offset")
    return sorted(({k: d[k] for k in keep if k in d} for d in doc_lines),
                  key=lambda d: (d["file"], d["offset"], d.get("inner_offset") or -1))


def trx_of(rows) -> list[dict]:
    out = []
    for r in rows:
        d = r.asDict()
        d["repeats"] = json.loads(d["repeats"]) if d["repeats"] else None
        out.append(d)
    return sorted(out, key=lambda d: (d["start_file"], d["start_offset"]))


def test_events_and_transactions_equal_decode_and_transactions_json(spark):
    for folder in (MYSQL, TYPES) if PROOF else (MYSQL,):
        got = events_of(read(spark, "events", folder).collect())
        assert got == decoded(cli("decode", "--json", str(folder))) and len(got) > 200
        got_t = trx_of(read(spark, "transactions", folder).collect())
        assert got_t == sorted(cli("transactions", "--json", str(folder)),
                               key=lambda d: (d["start_file"], d["start_offset"])) and len(got_t) > 20


def test_encrypted_archive_with_a_key_file_option(spark, key_file):
    """Encrypted MariaDB binlogs, the key file's PATH as an option: the same rows as the CLI
    with --key-file; without it, the read fails (no silent empty table)."""
    folder = ENC / "primary"
    got = trx_of(read(spark, "transactions", folder, key_file=key_file).collect())
    assert got == sorted(cli("transactions", "--json", "--key-file", key_file, str(folder)),
                         key=lambda d: (d["start_file"], d["start_offset"])) and len(got) > 100
    if PROOF:
        got_e = events_of(read(spark, "events", folder, key_file=key_file).collect())
        assert got_e == decoded(cli("decode", "--json", "--key-file", key_file, str(folder)))
        assert any("ROWS" in e["type"] for e in got_e)
    with pytest.raises(Exception) as no_key:
        read(spark, "transactions", folder).count()
    assert "key" in str(no_key.value).lower()


def test_key_material_is_not_in_the_plan_partitions_or_explain(spark, key_file):
    """What Spark pickles and shows (the data source, its reader, every partition, the plan's
    text) holds the key file's path, never a key's bytes or hex."""
    from binlogkit.crypto.keys import load_keys
    from binlogkit.spark.source import BinlogDataSource

    keys = load_keys(key_file)
    secrets = [k for k in keys.mariadb.values()]
    needles = [s for k in secrets for s in (k, k.hex().encode(), k.hex().upper().encode())]
    ds = BinlogDataSource({"path": str(ENC / "primary"), "table": "changes", "key_file": key_file})
    reader = ds.reader(ds.schema())
    list(reader.pushFilters([]))
    parts = reader.partitions()
    assert len(parts) == 3
    blobs = [pickle.dumps(ds), pickle.dumps(reader), *map(pickle.dumps, parts)]
    texts = [repr(ds), repr(reader), *map(repr, parts)]
    df = read(spark, "changes", ENC / "primary", key_file=key_file)
    texts.append(df._jdf.queryExecution().toString())
    assert df.count() > 0
    for needle in needles:
        assert not any(needle in b for b in blobs)
        assert not any(needle.decode("latin-1") in t for t in texts)
    assert any(key_file.encode() in b for b in blobs)   # the path travels, and is what executors load


def _local_export(files, out: Path, **kw) -> dict:
    """Long-form rows of the local export (``binlogkit.export.export``) of ``files``."""
    import pyarrow.dataset as pds

    from binlogkit.export import export
    from binlogkit.spark.tables import long_rows

    export(files, str(out), **kw)
    rows = []
    for folder in sorted(out.glob("db=*/table=*")):
        db = folder.parent.name.split("=", 1)[1]
        table = folder.name.split("=", 1)[1]
        for f in sorted(folder.rglob("*.parquet")):
            for rb in pq.ParquetFile(f).iter_batches():
                rows += long_rows(rb, db, table)
    del pds
    return {"rows": rows, "out": out}


def _change_key(r):
    return (r[0], r[1], r[6], r[7], r[8])


def test_changes_equal_the_local_export(spark, tmp_path):
    """Long form: every row (db, table, op, gtid, commit time, file, offset, row index, schema
    version, before and after images) equals the local export's; the typed form of one table has
    the export's own columns and values."""
    files = sorted(str(p) for p in TYPES.glob("mariadb-bin.0*"))
    local = _local_export(files, tmp_path / "local")
    got = [tuple(r) for r in read(spark, "changes", TYPES).collect()]
    want = [(*r[:5], r[5].replace(tzinfo=None) if r[5] else None, *r[6:]) for r in local["rows"]]
    assert sorted(got, key=_change_key) == sorted(want, key=_change_key) and len(got) > 50
    # one table, typed: the export's columns, the same values
    table = "types.ints"
    typed = read(spark, "changes", TYPES, changes_table=table)
    folder = tmp_path / "local" / "db=types" / "table=ints"
    expect = pq.read_table(sorted(folder.rglob("*.parquet"))[0]).schema.names
    assert typed.columns == expect
    got_rows = sorted((r.asDict() for r in typed.collect()), key=lambda d: (d["file"], d["offset"], d["row_index"]))
    import pyarrow as pa

    from binlogkit.spark.tables import align, typed_schema

    tbls = [pq.read_table(p) for p in sorted(folder.rglob("*.parquet"))]
    target = typed_schema(tbls[0].schema)
    want_rows = []
    for t in tbls:
        for rb in t.to_batches():
            want_rows += align(rb, target).to_pylist()
    want_rows = sorted(want_rows, key=lambda d: (d["file"], d["offset"], d["row_index"]))
    for d in want_rows:
        for k, v in d.items():
            if hasattr(v, "tzinfo") and v.tzinfo is not None:
                d[k] = v.replace(tzinfo=None)
    assert got_rows == want_rows and len(got_rows) > 3
    assert max(r["after_bu"] or 0 for r in got_rows) == 18446744073709551615  # uint64: decimal(20, 0)
    del pa


def test_summaries_equal_the_audit_file_summaries(spark):
    from binlogkit.audit.summary import file_summary
    from binlogkit.spark.files import plan_files

    got = {r["file"]: json.loads(r["summary"]) for r in read(spark, "summaries", MYSQL).collect()}
    want = {t.name: json.loads(json.dumps(file_summary(t.name), default=str)) for t in plan_files([str(MYSQL)])}
    assert got == want and len(got) == 3
    row = read(spark, "summaries", MYSQL).orderBy("number").first()
    assert row["number"] == 1 and row["previous_gtids"] is not None


# --- pushdown ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def archive20(tmp_path_factory) -> Path:
    """20 clean MariaDB binlogs (fixtures.faults.generate: real 10.11 events cloned with new
    GTIDs), 40 transactions per file, one second apart."""
    from fixtures.faults import generate

    out = tmp_path_factory.mktemp("archive20")
    generate(out, files=20, trx_per_file=40, seed=3, faults=(), clock=1_800_000_000)
    return out


def _opened(trace: Path) -> list[str]:
    if not trace.exists():
        return []
    return sorted(line.split("\t", 1)[1] for line in trace.read_text().splitlines()
                  if not line.startswith(("head\t", "bounds\t")))


def test_a_bounded_query_opens_only_the_files_that_can_match(spark, archive20, tmp_path):
    """``first_timestamp >=`` a time in file 15, and a GTID list in files 4 and 9: the files
    whose events are read are exactly those with matching rows (counted by the trace), and the
    rows equal the same query without pushdown (every file read)."""
    files = sorted(str(p) for p in archive20.glob("mariadb-bin.0*"))
    assert len(files) == 20
    every = read(spark, "transactions", archive20, pushdown="false").collect()
    by_file: dict[str, list] = {}
    for r in every:
        by_file.setdefault(r["start_file"], []).append(r)
    t15 = sorted(r["first_timestamp"] for r in by_file[files[14]])[10]
    g = [by_file[files[3]][5]["gtid"], by_file[files[8]][7]["gtid"]]
    cases = [("first_timestamp >= %d" % t15, lambda r: r["first_timestamp"] >= t15),
             ("gtid IN ('%s', '%s')" % tuple(g), lambda r: r["gtid"] in g)]
    for table in ("transactions", "events", "changes") if PROOF else ("transactions",):
        for i, (where, _match) in enumerate(cases):   # transactions: the unpruned read above, filtered here
            col = {"events": "timestamp", "changes": "commit_time"}.get(table, "first_timestamp")
            w = where.replace("first_timestamp", col)
            if table == "changes" and "commit_time" in w:
                w = f"commit_time >= timestamp_seconds({t15})"
            trace = tmp_path / f"{table}-{i}.trace"
            pushed = read(spark, table, archive20, trace=str(trace)).where(w).collect()
            plain = ([r for r in every if _match(r)] if table == "transactions" else
                     read(spark, table, archive20, pushdown="false").where(w).collect())
            assert sorted(map(tuple, pushed)) == sorted(map(tuple, plain)) and pushed
            fcol = {"transactions": "start_file", "events": "file", "changes": "file"}[table]
            matching = sorted({r[fcol] for r in plain})
            opened = _opened(trace)
            if table == "changes":  # the export's file column is the base name
                opened = sorted(o.rsplit("/", 1)[-1] for o in opened)
            if i == 0:   # the time bound: the files from the one that holds the time on
                assert opened == [f if table != "changes" else f.rsplit("/", 1)[-1] for f in files[14:]]
                assert matching == opened
            else:        # the two files that hold the GTIDs, nothing else
                assert opened == matching and len(opened) == 2


def test_pruning_without_spark_keeps_every_file_it_cannot_rule_out(archive20):
    """The reader's pruning, called as Spark calls it: no filter keeps all 20 files; a time
    after the archive keeps only the last (it has no upper bound); a GTID before the archive
    keeps none."""
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual

    from binlogkit.spark.source import BinlogDataSource

    ds = BinlogDataSource({"path": str(archive20), "table": "transactions"})
    r = ds.reader(ds.schema())
    assert list(r.pushFilters([])) == [] and len(r.partitions()) == 20
    r = ds.reader(ds.schema())
    f = GreaterThanOrEqual(("first_timestamp",), 2_000_000_000)
    assert list(r.pushFilters([f])) == [f]   # Spark evaluates it again
    assert [p.task.index for p in r.partitions()] == [19]
    r = ds.reader(ds.schema())
    list(r.pushFilters([EqualTo(("gtid",), "0-1-1")]))
    assert [p.task.index for p in r.partitions()] == [0]


def test_big_files_read_as_ranges_of_whole_transactions_give_the_same_rows(spark):
    """``split_bytes``: a file above it is read as ranges that begin at GTID events (found by a
    header walk), one partition each. Without Spark: every table's rows of the ranges equal
    those of the whole files (MySQL with Transaction_payloads' neighbours, MariaDB typed rows);
    in Spark: the transactions equal ``transactions --json`` with 17 partitions for 3 files."""
    from binlogkit.spark.files import plan_files, split
    from binlogkit.spark.tables import Query, batches

    keys = {"events": ("file", "offset", "inner_offset"), "transactions": ("start_file", "start_offset"),
            "changes": ("file", "offset", "row_index")}
    for folder in (MYSQL, TYPES) if PROOF else (TYPES,):
        tasks = plan_files([str(folder)])
        parts = [p for t in tasks for p in split(t, 3000)]
        assert len(parts) > 2 * len(tasks) and all(p.start is None or p.start > 0 for p in parts)
        for table, key in keys.items():
            def rows(ts):
                return sorted((r for t in ts for b in batches(Query(table), t) for r in b.to_pylist()),
                              key=lambda r: tuple(str(r[k]) for k in key))
            whole = rows(tasks)
            assert rows(parts) == whole and whole, (folder.name, table)
    df = read(spark, "transactions", TYPES, split_bytes="3000")
    assert df.rdd.getNumPartitions() == 17
    assert trx_of(df.collect()) == sorted(cli("transactions", "--json", str(TYPES)),
                                          key=lambda d: (d["start_file"], d["start_offset"]))


def test_events_without_bodies_have_the_decoded_events_header_columns():
    """``fields=false``: the framing loop's header fields and the GTID of each event, equal to
    the decoded events' (less the events inside MySQL Transaction_payloads, which are in a body),
    whole and in ranges."""
    from binlogkit.spark.files import plan_files, split
    from binlogkit.spark.tables import Query, batches

    def strip(r):
        return {k: v for k, v in r.items() if k not in ("name", "fields")}

    for folder in (MYSQL, TYPES):
        tasks = plan_files([str(folder)])
        full = [r for t in tasks for b in batches(Query("events"), t) for r in b.to_pylist()]
        fast = [r for t in tasks for b in batches(Query("events", fields=False), t) for r in b.to_pylist()]
        assert [strip(r) for r in full if r["payload_offset"] is None] == [strip(r) for r in fast]
        assert all(r["name"] is None and r["fields"] is None for r in fast) and any(r["gtid"] for r in fast)
        cut = [r for t in tasks for p in split(t, 3000) for b in batches(Query("events", fields=False), p)
               for r in b.to_pylist()]
        assert cut == fast


def test_event_header_columns_filled_in_c_equal_the_python_path(tmp_path):
    """``fields=false`` through ``_eventcols`` (column buffers filled by the framing loop's C
    taker) equals the Python reference (``tables._headers``) with every filter, small batches,
    ranges, MySQL and MariaDB, plain, ``.xz`` and encrypted; the events handed back to Python
    are the few the C loop does not settle (Format_descriptions, Start_encryption...), not one
    per event (plain and archived files; an encrypted file's decrypted windows are the framing
    loop's own: no taker runs there)."""
    from binlogkit.spark import tables as T
    from binlogkit.spark.files import plan_files, split

    c_mod = T._eventcols()
    if c_mod is None:
        pytest.skip("binlogkit._eventcols not built")
    from binlogkit.crypto.keys import KeySpec

    key = tmp_path / "keys.txt"
    key.write_bytes((ENC / "keys" / "keys.txt").read_bytes())
    key.chmod(0o600)
    sets = [plan_files([str(MYSQL)]), plan_files([str(TYPES)]), plan_files([str(ENC / "primary")], keys=KeySpec(str(key)))]
    rows = [r for t in sets[0] for b in T.batches(T.Query("events", fields=False), t) for r in b.to_pylist()]
    gt = [r["gtid"] for r in rows if r["gtid"]]
    mid = sorted(r["timestamp"] for r in rows)[len(rows) // 2]
    queries = [T.Query("events", fields=False), T.Query("events", fields=False, batch_rows=7),
               T.Query("events", fields=False, types=frozenset({2, 16, 30, 162})),
               T.Query("events", fields=False, gtids=frozenset({gt[40], gt[-3]})),
               T.Query("events", fields=False, min_timestamp=float(mid))]
    handed = total = 0
    for tasks in sets:
        for i, q in enumerate(queries):
            for t in tasks + ([p for t in tasks for p in split(t, 3000)] if i < 2 else []):
                ref = [r for b in T._rows_to_batches(T._headers(q, t, t.input()), T.schema("events"), 50)
                       for r in b.to_pylist()]
                got = [r for b in T.header_batches(q, t, t.input(), c_mod) for r in b.to_pylist()]
                assert got == ref, (t.name, t.start, q)
        for t in tasks if tasks is not sets[2] else ():
            inp = t.input()
            real = inp.frames

            def counted(*a, **kw):
                nonlocal handed
                for f in real(*a, **kw):
                    handed += 1
                    yield f
            object.__setattr__(inp, "frames", counted)
            total += sum(b.num_rows for b in T.header_batches(T.Query("events", fields=False), t, inp, c_mod))
    assert total > 1000 and handed < total // 5, (handed, total)


def test_a_bounds_cache_prunes_upper_time_bounds_and_the_last_file(archive20, tmp_path):
    """``bounds_cache``: each file's least and greatest event timestamp (one header walk per
    file, on the driver, kept by size and mtime) prunes ``first_timestamp <= T`` (heads cannot:
    a transaction may start before its file) and ``>=`` past the last file. Counted: the first
    query walks the 20 files once and opens exactly the files with matching rows, whose rows
    are those of every file filtered; the next walks none. A file touched since is walked again."""
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThanOrEqual

    from binlogkit.spark.files import plan_files
    from binlogkit.spark.source import BinlogDataSource
    from binlogkit.spark.tables import Query, batches

    files = sorted(str(p) for p in archive20.glob("mariadb-bin.0*"))
    every = [r for t in plan_files([str(archive20)]) for b in batches(Query("transactions"), t) for r in b.to_pylist()]
    t5 = sorted(r["first_timestamp"] for r in every if r["start_file"] == files[5])[20]
    want = sorted(tuple(r.values()) for r in every if r["first_timestamp"] <= t5)
    cache, trace = tmp_path / "cache", tmp_path / "q.trace"

    def parts(table, f, **opts):
        ds = BinlogDataSource({"path": str(archive20), "table": table, **opts})
        r = ds.reader(ds.schema())
        list(r.pushFilters([f]))
        return [p.task.index for p in r.partitions()]
    upto = LessThanOrEqual(("first_timestamp",), t5)
    assert parts("transactions", upto) == list(range(20))   # heads alone cannot bound a file from below
    ds = BinlogDataSource({"path": str(archive20), "table": "transactions", "trace": str(trace),
                           "bounds_cache": str(cache)})
    r = ds.reader(ds.schema())                # as Spark calls it: filters, partitions, read (then its own filter)
    list(r.pushFilters([upto]))
    got = [x for p in r.partitions() for b in r.read(p) for x in b.to_pylist() if x["first_timestamp"] <= t5]
    assert sorted(tuple(x.values()) for x in got) == want and len(want) > 200
    assert sum(x.startswith("bounds\t") for x in trace.read_text().splitlines()) == 20
    assert _opened(trace) == files[:6] == sorted({r[2] for r in want})
    trace.unlink()
    assert parts("transactions", upto, bounds_cache=str(cache), trace=str(trace)) == list(range(6))
    assert not trace.exists()                 # no walk: the cache held every file
    assert parts("events", GreaterThanOrEqual(("timestamp",), 2_000_000_000), bounds_cache=str(cache)) == []
    assert parts("transactions", LessThanOrEqual(("first_timestamp",), 1_000_000_000), bounds_cache=str(cache)) == []
    os.utime(files[3], ns=(1, 1))             # changed since the walk: its bounds are walked again
    assert parts("events", LessThanOrEqual(("timestamp",), t5), bounds_cache=str(cache), trace=str(trace)) \
        == list(range(6))
    assert trace.read_text() == f"bounds\t{files[3]}\n"


def test_changes_come_in_batches_of_at_most_batch_rows_with_the_same_rows():
    """``changes`` without a temporary folder: every batch holds at most ``batch_rows`` rows and
    the rows are those of one big batch (long and typed forms)."""
    from binlogkit.spark.files import plan_files
    from binlogkit.spark.tables import Query, batches, first_layout, typed_schema

    tasks = plan_files([str(TYPES)])
    typed = typed_schema(first_layout(tasks, "types.ints"))
    for q in (Query("changes"), Query("changes", changes_table="types.ints", typed=typed)):
        small = [b for t in tasks for b in batches(Query(**{**q.__dict__, "batch_rows": 3}), t)]
        big = [r for t in tasks for b in batches(q, t) for r in b.to_pylist()]
        assert all(b.num_rows <= 3 for b in small) and len(small) > 1
        key = lambda r: (r["file"], r["offset"], r["row_index"], str(r.get("table")))  # noqa: E731
        assert sorted((r for b in small for r in b.to_pylist()), key=key) == sorted(big, key=key) and big


def test_decoded_event_columns_from_the_c_decoders_json_equal_the_python_path(tmp_path):
    """``events`` with ``fields``: the C decoder's JSON lines scanned into columns
    (``_eventcols.JsonCols``) equal the reference (``tables._decoded``: decoded ``Event`` values)
    with every filter and small batches, MySQL, MariaDB and encrypted plain files and ``.xz``
    archives, whole and in ranges of whole transactions (the decoder seeks past the head, or reads
    and drops in an archive); the hot events (GTIDs, table maps, rows, Xids) come as text, not as ``Event``
    objects (counted, plain and archived)."""
    import shutil

    from binlogkit.reading import fastdecode
    from binlogkit.crypto.keys import KeySpec
    from binlogkit.spark import tables as T
    from binlogkit.spark.files import plan_files, split

    c_mod = T._eventcols()
    if c_mod is None or not fastdecode.available():
        pytest.skip("binlogkit._eventcols or _fastdecode not built")
    key = tmp_path / "keys.txt"
    key.write_bytes((ENC / "keys" / "keys.txt").read_bytes())
    key.chmod(0o600)
    plain = tmp_path / "plain"   # the C decoder reads plain files: the .xz fixtures decompressed
    for folder in (MYSQL, TYPES):
        dst = plain / folder.parent.parent.name
        dst.mkdir(parents=True)
        for f in folder.glob("*.0*"):
            import lzma

            data = lzma.decompress(f.read_bytes()) if f.suffix == ".xz" else f.read_bytes()
            (dst / f.name.removesuffix(".xz")).write_bytes(data)
    shutil.copytree(ENC / "primary", plain / "enc")
    sets = [plan_files([str(plain / MYSQL.parent.parent.name)]), plan_files([str(plain / TYPES.parent.parent.name)]),
            plan_files([str(plain / "enc")], keys=KeySpec(str(key))), plan_files([str(MYSQL)]), plan_files([str(TYPES)])]
    assert any(t.name.endswith(".xz") for t in sets[3] + sets[4])   # archives: their decompressed stream

    def norm(r):
        return {**r, "fields": json.loads(r["fields"])}
    rows = [r for t in sets[1] for b in T.batches(T.Query("events"), t) for r in b.to_pylist()]
    gt = [r["gtid"] for r in rows if r["gtid"]]
    mid = sorted(r["timestamp"] for r in rows)[len(rows) // 2]
    queries = [T.Query("events"), T.Query("events", batch_rows=7), T.Query("events", types=frozenset({2, 16, 19, 30, 162})),
               T.Query("events", gtids=frozenset({gt[10], gt[-3]})), T.Query("events", min_timestamp=float(mid))]
    texts = objects = 0
    real = fastdecode.decode_fast
    for tasks in sets:
        for i, q in enumerate(queries if tasks is sets[1] else queries[:2]):
            ranges = [p for t in tasks for p in split(t, 3000)] if i < 2 and tasks is not sets[2] else []
            for t in tasks + ranges:
                inp = t.input()
                assert T.decoded_usable(t, inp)
                ref = [norm(r) for b in T._rows_to_batches(T._decoded(q, t, inp), T.schema("events"), 50)
                       for r in b.to_pylist()]
                got = [norm(r) for b in T.decoded_batches(q, t, inp, c_mod) for r in b.to_pylist()]
                assert got == ref and (ref or q.gtids is not None), (t.name, q)
    for t in sets[1] + sets[4]:
        for item in real([t.input()], as_json=True, streams=True):
            if isinstance(item, bytes):
                texts += item.count(b"\n")
            else:
                objects += 1
    assert texts > 3 * objects > 0, (texts, objects)


def _fixture_folders() -> list[Path]:
    """Every fixture folder with binlog or relay-log files (clean, crashed, torn, relay, ring,
    compressed events; the encrypted ones need keys: not here): the walks' differential ground."""
    out = set()
    for f in FIX.rglob("*"):
        if f.is_file() and ("bin." in f.name or "binlog." in f.name or "relay" in f.name) and f.suffix not in (".index", ".json", ".md") \
                and "encrypted" not in str(f.relative_to(FIX)):
            out.add(f.parent)
    return sorted(out)


def test_transactions_taken_in_c_equal_the_python_walk(monkeypatch):
    """``transactions`` through the C run (``_eventcols.Run``: the events inside a transaction,
    and whole plain transactions as column rows) equals the Python walk (``transactions.Grouper``
    alone, ``BINLOGKIT_NO_EVENTCOLS=1``) on every fixture folder -- MySQL and MariaDB, relay logs,
    crashed and torn files, ring duplicates, compressed events, ``.xz`` --
    whole (and the grouper's ``FileInfo``), and on six of them also in ranges (equal to the Python
    walk's rows of the same ranges), with every filter and batches of 1 and 7. On a clean
    MariaDB and a MySQL folder the Python walk sees at most one transaction in five (counted)."""
    from binlogkit.errors import BinlogError
    from binlogkit.reading.source import inputs
    from binlogkit.spark import tables as T
    from binlogkit.spark.files import plan_files, split
    from binlogkit.transactions import BODIES, Grouper, run_taker

    if run_taker() is None:
        pytest.skip("binlogkit._eventcols not built")

    def grouped(folder: Path, c: bool) -> tuple:
        g, got = Grouper(keep_gtids=False), []
        try:
            for inp in inputs([str(folder)], verify=False):
                run = run_taker(5) if c else None
                got += [t.to_json() for t in g.feed_frames(inp.name, inp.frames(
                    want=BODIES, records=False, taker=None if run is None else run.take), run)]
        except BinlogError as exc:
            got.append(repr(exc))
        got += [t.to_json() for t in g.finish()]
        return got, [vars(i) for i in g.files], g.last_event, g.last_whole, g.held, g.clock.end, g.repeat

    def rows(tasks, q) -> list:
        return [r for t in tasks for b in T.batches(q, t) for r in b.to_pylist()]

    folders = _fixture_folders()
    assert len(folders) > 30
    every_way = {MYSQL, TYPES, FIX / "mariadb-11.8" / "replication-gtid" / "primary",
                 FIX / "mysql-9.7" / "replication-gtid" / "replica-relay",
                 FIX / "mariadb-10.11" / "crash-torn-gtid" / "primary", FIX / "mariadb-10.11" / "compressed-events" / "primary"}
    compared = 0
    for folder in folders:
        try:
            tasks = plan_files([str(folder)])
        except BinlogError:
            continue
        parts = [p for t in tasks for p in split(t, 3000)] if folder in every_way else []
        monkeypatch.setenv("BINLOGKIT_NO_EVENTCOLS", "1")
        ref_g = grouped(folder, False)
        ref = rows(tasks, T.Query("transactions"))
        ref_parts = rows(parts, T.Query("transactions"))
        monkeypatch.delenv("BINLOGKIT_NO_EVENTCOLS")
        assert grouped(folder, True) == ref_g, folder
        assert rows(tasks, T.Query("transactions")) == ref, folder
        compared += 1
        if folder not in every_way:
            continue
        assert rows(tasks, T.Query("transactions", batch_rows=7)) == ref, folder
        assert rows(parts, T.Query("transactions", batch_rows=1)) == ref_parts and len(parts) > len(tasks), folder
        gt = [r["gtid"] for r in ref if r["gtid"]]
        mid = sorted(r["first_timestamp"] for r in ref)[len(ref) // 2]
        for q in (T.Query("transactions", min_timestamp=float(mid)),
                  T.Query("transactions", gtids=frozenset({gt[1], gt[-1]}))):
            monkeypatch.setenv("BINLOGKIT_NO_EVENTCOLS", "1")
            want = rows(tasks, q)
            monkeypatch.delenv("BINLOGKIT_NO_EVENTCOLS")
            assert rows(tasks, q) == want and want, (folder, q)
    assert compared > 30
    for folder in (MYSQL, FIX / "mariadb-10.11" / "replication-gtid" / "primary"):
        walked = total = 0
        for t in plan_files([str(folder)]):
            for _ in T._grouped(t, t.input(), run_taker()):
                walked += 1
            total += sum(b.num_rows for b in T.batches(T.Query("transactions"), t))
        assert total > 200 and walked * 5 <= total, (folder, walked, total)


def test_long_form_images_built_column_wise_equal_the_row_by_row_json():
    """``changes`` in the long form: ``tables.long_batch`` (images written by C,
    ``_rowarrow.json_objects``, and joined column-wise by Arrow compute, the path without C)
    gives the same rows, text for text, as ``tables.long_rows`` (one ``json.dumps`` per image,
    what the local export's Parquet is compared through): on every change of the typed-row
    fixtures (MariaDB full and minimal metadata, old temporals, MySQL) and on a batch of the texts
    and types that need care (quotes, backslashes, control characters, non-ASCII, astral
    characters, nulls, all-null images, binaries of every length mod 3, floats and float32,
    integers of every width at their limits, decimals, dates, times, unsigned), whole and sliced
    (an array offset)."""
    import datetime as dt
    import decimal

    import pyarrow as pa

    from binlogkit.export.changes import Filters, Report, Rows, committed_changes
    from binlogkit.export.dataset import rows_table
    from binlogkit.export.schema import layout
    from binlogkit.spark import tables as T

    def same(rb, db, table):
        want = [r for b in T._rows_to_batches(T.long_rows(rb, db, table), T.schema("changes"), 1 << 20)
                for r in b.to_pylist()]
        from binlogkit.rowvalues.arrowcols import C_ROWARROW

        for c_mod in (C_ROWARROW, None) if C_ROWARROW is not None else (None,):
            got = T.long_batch(rb, db, table, c_mod=c_mod)
            assert got.schema == T.schema("changes")
            assert got.to_pylist() == want, (db, table, c_mod)
            if rb.num_rows > 2:
                assert T.long_batch(rb.slice(1, rb.num_rows - 2), db, table, c_mod=c_mod).to_pylist() == want[1:-1]
        return len(want)
    n = 0
    for folder in (TYPES, FIX / "mariadb-10.11" / "row-types" / "primary",
                   FIX / "mariadb-10.11" / "row-types-old-temporal" / "primary", MYSQL):
        from binlogkit.reading.source import inputs

        groups: dict = {}
        for change in committed_changes(inputs([str(folder)]), Filters(), Report()):
            if isinstance(change, Rows):
                lay = layout(change.table)
                groups.setdefault((lay.db, lay.table, lay.version), []).append(change)
        for (db, table, _v), items in groups.items():
            for rb in rows_table(*items).to_batches():
                n += same(rb, db, table)
    assert n > 300
    texts = ['plain', 'quote " here', "back\\slash", "new\nline\ttab\x01\x1f\x7f", "caf\u00e9", "\U0001F600 astral",
             "", None, "\u2028 separator"]
    k = len(texts)
    rb = pa.RecordBatch.from_pydict({
        "op": ["update"] * k, "gtid": ["0-1-1"] * k, "server_id": pa.array([1] * k, pa.uint32()),
        "commit_time": pa.array([dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)] * k, pa.timestamp("us", "UTC")),
        "file": ["f"] * k, "offset": list(range(k)), "row_index": [0] * k, "schema_version": ["v1"] * k,
        "before_s": texts, "before_b": pa.array([b"\x00\xff", None] * 4 + [b""], pa.binary()),
        "before_f": pa.array([1.0, 0.1, 1e16, None, -0.0, 1.5e-7, float("nan"), 2.5, 3.0], pa.float64()),
        "after_d": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-0.01")] * 3, pa.decimal128(10, 2)),
        "after_day": pa.array([dt.date(2026, 1, 2), dt.date(1, 1, 1), None] * 3, pa.date32()),
        "after_t": pa.array([dt.time(1, 2, 3, 4), None, dt.time(0, 0)] * 3, pa.time64("us")),
        "after_u": pa.array([2 ** 64 - 1, None, 0] * 3, pa.uint64()),
        "after_flag": pa.array([True, False, None] * 3, pa.bool_()),
        "after_ls": pa.array(texts, pa.large_string()),
        "after_\u00e9 \"x\"": pa.array(texts, pa.string()),
        "after_i8": pa.array([-128, 127, None, 0, -1, 5, 6, 7, 8], pa.int8()),
        "after_i16": pa.array([-32768, 32767, None, 0, -1, 5, 6, 7, 8], pa.int16()),
        "after_i64": pa.array([-2 ** 63, 2 ** 63 - 1, None, 0, -1, 5, 6, 7, 8], pa.int64()),
        "after_u8": pa.array([255, 0, None, 1, 2, 3, 4, 5, 6], pa.uint8()),
        "after_f32": pa.array([0.1, -0.0, None, float("inf"), float("-inf"), 3.4e38, 1e-45, 2.5, float("nan")],
                              pa.float32()),
        "after_d7": pa.array([decimal.Decimal("0.0000001"), decimal.Decimal("0E-7"), decimal.Decimal("-12.5000000"),
                              decimal.Decimal("123456.0000001"), None, decimal.Decimal("-0.0000010"),
                              decimal.Decimal("9" * 31 + ".1234567"), decimal.Decimal("0.0000123"),
                              decimal.Decimal("-1")], pa.decimal128(38, 7)),
        "after_d0": pa.array([decimal.Decimal(v) for v in ("0", "-1", "99", "1" * 20, "7", "-42", "3", "1", "0")],
                             pa.decimal128(20, 0)),
        "after_days": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31), dt.date(2000, 2, 29),
                                None, dt.date(1970, 1, 1), dt.date(1900, 3, 1), dt.date(2024, 12, 31),
                                dt.date(1600, 2, 29)], pa.date32()),
        "after_tms": pa.array([dt.datetime(1969, 12, 31, 23, 59, 59, 999000), dt.datetime(1, 1, 1),
                               dt.datetime(9999, 12, 31, 23, 59, 59, 999000), None, dt.datetime(2026, 3, 4, 5, 6, 7),
                               dt.datetime(2000, 1, 1, 0, 0, 0, 1000), dt.datetime(1970, 1, 1), dt.datetime(1950, 6, 1),
                               dt.datetime(2038, 1, 19, 3, 14, 8)], pa.timestamp("ms")),
        "after_tus": pa.array([dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)] * 4
                              + [None] + [dt.datetime(2026, 1, 1, 0, 0, 0, 5, tzinfo=dt.timezone.utc)] * 4,
                              pa.timestamp("us", tz="UTC")),
        "after_ts": pa.array([0, -1, 86399, None, 1_700_000_000, 5, 6, 7, -86400 * 365], pa.timestamp("s", tz="UTC")),
        "after_dur": pa.array([dt.timedelta(0), dt.timedelta(microseconds=-1), dt.timedelta(days=1),
                               dt.timedelta(days=-1, seconds=5), dt.timedelta(days=2, hours=3, microseconds=7),
                               None, dt.timedelta(hours=-838, minutes=-59, seconds=-59),
                               dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999),
                               dt.timedelta(seconds=59)], pa.duration("us")),
        "after_lb": pa.array([b"", b"a", b"ab", b"abc", b"abcd", None, bytes(range(256)), b"\xff" * 5, b"\x00"],
                             pa.large_binary())})
    same(rb, "db", "t")
    empty = pa.RecordBatch.from_pydict({**{c: rb.column(c) for c in rb.schema.names if not c.startswith("after")}})
    same(empty, "db", "t")


def test_workers_without_binlogkit_are_named_in_one_line_at_register(tmp_path):
    """A driver whose Spark runs its Python workers with another Python (PYSPARK_PYTHON: a fresh
    venv without binlogkit; local mode): register() says so in one line, naming that Python and
    the fix, instead of the first read failing in a Py4J trace ending ``No module named
    'binlogkit'``. The driver imports binlogkit by sys.path (no PYTHONPATH the workers would
    inherit); run from another folder."""
    bare = tmp_path / "bare"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(bare)], check=True)
    script = tmp_path / "driver.py"
    script.write_text(f"""import sys
sys.path.insert(0, {str(ROOT)!r})
from pyspark.sql import SparkSession
s = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false").getOrCreate())
from binlogkit.errors import UsageError
from binlogkit.spark import register
try:
    register(s)
    print("registered")
except UsageError as exc:
    print("refused:", exc)
s.stop()
""")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYSPARK_PYTHON"] = str(bare / "bin" / "python")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    said = [line for line in p.stdout.splitlines() if line.startswith(("refused:", "registered"))]
    assert said == [f"refused: binlogkit.spark: Spark's Python workers (PYSPARK_PYTHON={bare}/bin/python) cannot "
                    "import binlogkit (ModuleNotFoundError: No module named 'binlogkit'): set PYSPARK_PYTHON to "
                    f"the Python that has it ({sys.executable}) before the session starts, or install binlogkit "
                    "in that Python"], p.stdout


def test_changes_go_through_the_export_c_walk_and_a_range_stops_at_its_end(monkeypatch):
    """``changes`` (typed and long) is the export's C walk (``_Walk._replay_run``: runs of table
    maps and rows events into the writer's builders) and writer, not ``Rows`` values turned
    into Arrow afterwards; a range's walk ends at the range's end (no frame read at or past
    ``task.stop``), so a file read as ranges is walked once in all."""
    from binlogkit.export import changes as ch
    from binlogkit.reading import source
    from binlogkit.rowvalues.arrowcols import C_ROWARROW
    from binlogkit.spark.files import plan_files, split
    from binlogkit.spark.tables import Query, batches, first_layout, typed_schema

    if C_ROWARROW is None:
        pytest.skip("the C accelerator is not built")
    runs = [0]
    real_run = ch._Walk._replay_run

    def counted(self, *a, **kw):
        runs[0] += 1
        return (yield from real_run(self, *a, **kw))
    monkeypatch.setattr(ch._Walk, "_replay_run", counted)
    seen: list = []
    real_frames = source.Input.frames

    def frames(self, **kw):
        for f in real_frames(self, **kw):
            seen.append((self.name, f[0]))
            yield f
    monkeypatch.setattr(source.Input, "frames", frames)
    tasks = plan_files([str(TYPES)])
    typed = typed_schema(first_layout(tasks, "types.ints"))
    parts = [p for t in tasks for p in split(t, 3000)]
    assert any(p.stop is not None for p in parts)
    for q in (Query("changes"), Query("changes", changes_table="types.ints", typed=typed)):
        for p in parts:
            runs[0] = 0
            del seen[:]
            rows = sum(b.num_rows for b in batches(q, p))
            if p.stop is not None:
                assert seen and max(at for _, at in seen) < p.stop
            if rows and q.changes_table is None:
                assert runs[0] > 0, p

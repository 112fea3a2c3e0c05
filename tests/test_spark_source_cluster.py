"""``spark.read.format("binlog")`` on the real standalone cluster (a master and two 1-core workers
on 127.0.0.1, the ``spark_standalone`` fixture the audit and export cluster tests use), from
local paths and from SeaweedFS ``s3://``, plain and encrypted: every table's rows equal the local
engine's (``decode --json``, ``transactions --json``, the local export, audit's summaries), and
``events`` with ``fields=false`` (the C header columns) the header fields of ``decode --json``.

The driver runs in a subprocess (``spark-submit``-like: its own SparkSession on the cluster);
executors get the AWS variables as ``spark.executorEnv`` (never options: nothing secret in the
plan) and read the key file from its path. About 4 minutes on 2 shared cores: run by ``make
spark-proof`` (BINLOGKIT_SPARK_PROOF=1), skipped by ``make test`` (its budget for these tests is a
minute; tests/test_spark_source.py covers the same tables in a local session there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")

from test_spark_source import ENC, MYSQL, TYPES, _local_export, cli, decoded  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROOF = os.environ.get("BINLOGKIT_SPARK_PROOF") == "1"
pytestmark = pytest.mark.skipif(not PROOF, reason="the cluster proof of issue 32: make spark-proof")
LAB = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"

DRIVER = r"""
import json, os, sys
from pyspark.sql import SparkSession
args = json.loads(sys.argv[1])
b = (SparkSession.builder.master(args["master"]).appName("binlog-source-cluster")
     .config("spark.executor.memory", "512m").config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC"))
for k, v in args["executor_env"].items():
    b = b.config(f"spark.executorEnv.{k}", v)
spark = b.getOrCreate()
from binlogkit.spark import register
register(spark)
out = {}
for name, table, path, options in args["queries"]:
    r = spark.read.format("binlog").option("table", table)
    for k, v in options.items():
        r = r.option(k, v)
    rows = []
    for row in r.load(path).collect():
        d = row.asDict()
        rows.append({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in d.items()})
    out[name] = rows
json.dump(out, open(args["out"], "w"), default=str)
spark.stop()
"""


def _base(v):
    return v.rsplit("/", 1)[-1] if isinstance(v, str) else v


def _events(rows):
    keep = ("file", "offset", "end_offset", "type", "type_code", "name", "timestamp", "server_id", "event_size",
            "log_pos", "flags", "checksum_ok", "fields", "payload_offset", "inner_offset")
    out = []
    for r in rows:
        d = {k: r[k] for k in keep if k in r and (r[k] is not None or k not in ("payload_offset", "inner_offset"))}
        d["file"] = _base(d["file"])
        if isinstance(d.get("fields"), str):
            d["fields"] = json.loads(d["fields"])
        out.append(d)
    return sorted(out, key=lambda d: (d["file"], d["offset"], d.get("inner_offset") or -1))


def _trx(rows):
    out = []
    for r in rows:
        d = dict(r)
        for k in ("start_file", "end_file"):
            d[k] = _base(d[k])
        if isinstance(d.get("repeats"), str):
            d["repeats"] = json.loads(d["repeats"])
        out.append(d)
    return sorted(out, key=lambda d: (d["start_file"], d["start_offset"]))


def _changes(rows):
    return sorted((tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows),
                  key=lambda t: (t[0], t[1], t[6], t[7], t[8]))


def _summaries(rows):
    out = {}
    for r in rows:
        s = json.loads(r["summary"]) if "summary" in r else r
        out[_base(s["file"])] = {k: v for k, v in s.items() if k not in ("file", "directory")}
    return out


def test_every_table_on_the_cluster_equals_the_local_engine(spark_standalone, s3_server, tmp_path):
    from binlogkit.reading import storage

    key_file = tmp_path / "keys.txt"
    key_file.write_bytes((ENC / "keys" / "keys.txt").read_bytes())
    key_file.chmod(0o600)
    sets = {"mysql": MYSQL, "types": TYPES, "enc": ENC / "primary", "lab": LAB}
    s3_server.make_bucket("sparksource")
    fs = storage.filesystem("s3://sparksource/")[0]
    for name, folder in sets.items():
        for f in sorted(folder.iterdir()):
            if f.is_file():
                fs.put_file(str(f), f"sparksource/{name}/{f.name}")
    storage.forget()
    tables = ["transactions", "changes", "summaries", "events"]
    queries = []
    for name, folder in sets.items():
        opts = {"key_file": str(key_file)} if name == "enc" else {}
        for where in ("local", "s3"):
            path = str(folder) if where == "local" else f"s3://sparksource/{name}/"
            for table in tables:
                queries.append((f"{name}/{where}/{table}", table, path, opts))
            queries.append((f"{name}/{where}/events_headers", "events", path, {**opts, "fields": "false"}))
    out = tmp_path / "out.json"
    aws = s3_server.env()
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", TZ="UTC", PYTHONPATH=str(ROOT), **aws)
    args = {"master": spark_standalone.master_url, "queries": queries, "out": str(out),
            "executor_env": {**aws, "PYTHONPATH": str(ROOT)}}
    p = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(args)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    compare(json.loads(out.read_text()), sets, tables, key_file, tmp_path)
    assert sum(len(v) for k, v in json.loads(out.read_text()).items() if k.endswith("/events_headers")) > 1000
    # the reads ran on both workers' executors, not in the driver
    for i in range(2):
        assert list((spark_standalone.folder / f"work{i}").glob("app-*/*/stderr")), f"worker {i} ran no executor"


def compare(got: dict, sets: dict, tables: list[str], key_file: Path, tmp_path: Path) -> None:
    """The driver's rows (``got``: query name -> rows) against the local engine's."""
    from binlogkit.audit.summary import file_summary
    from binlogkit.crypto.keys import load_keys
    from binlogkit.reading.source import Input
    from binlogkit.spark.files import plan_files

    for name, folder in sets.items():
        keys = ["--key-file", str(key_file)] if name == "enc" else []
        want = {
            "transactions": _trx(cli("transactions", "--json", *keys, str(folder))),
            "summaries": _summaries([json.loads(json.dumps(file_summary(Input(t.name, load_keys(str(key_file))
                                                                                if keys else None)), default=str))
                                     for t in plan_files([str(folder)])]),
        }
        files = [Input(t.name, load_keys(str(key_file)) if keys else None) for t in plan_files([str(folder)])]
        local = _local_export(files, tmp_path / f"export-{name}")["rows"]
        want["changes"] = _changes((*r[:5], r[5].replace(tzinfo=None).isoformat() if r[5] else None, *r[6:])
                                   for r in local)
        if "events" in tables:
            want["events"] = _events(decoded(cli("decode", "--json", *keys, str(folder))))
        if "events" in tables:   # fields=false: the C header columns (no Transaction_payloads' inner events)
            want["events_headers"] = [{k: v for k, v in e.items() if k not in ("name", "fields")}
                                      for e in want["events"] if "payload_offset" not in e]
        norm = {"transactions": _trx, "summaries": _summaries, "changes": _changes, "events": _events,
                "events_headers": lambda rows: [{k: v for k, v in e.items() if k not in ("name", "fields")}
                                                for e in _events(rows)]}
        for where in ("local", "s3"):
            for table in tables + (["events_headers"] if "events" in tables else []):
                have = norm[table](got[f"{name}/{where}/{table}"])
                assert have == want[table], f"{name}/{where}/{table}"
        assert want["transactions"] and (name != "types" or want["changes"])

"""``binlogkit lake history`` / ``lake show``: a mirror's commits with their coordinates, and its
rows now, as of a GTID position or a time, read by DuckDB (offline extensions) — on Iceberg and
Delta mirrors of a real MariaDB archive (fixtures: row-types-full-metadata)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from binlogkit.export.lake import export_lake
from binlogkit.export.lake.mirror import open_sink
from binlogkit.export.lake.read import as_of
from binlogkit.export.changes import Filters
from fixtures import store

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    base = tmp_path_factory.mktemp("lake-cli")
    archive = store.materialize("row-types-full-metadata") / "primary"
    for fmt in ("iceberg", "delta"):
        export_lake([archive], str(base / fmt), fmt=fmt, mirror=True, batch_transactions=3,
                    filters=Filters(tables=("types.ints",)))
    return base


def _cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "binlogkit", "lake", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


def _rows(fmt: str, wh: Path, version=None) -> list[dict]:
    got = open_sink(fmt, str(wh / fmt)).read("types", "ints", version)
    return sorted(got.to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_history_lists_every_commit_with_its_coordinates(wh, fmt):
    hist = open_sink(fmt, str(wh / fmt)).history("types", "ints")
    r = _cli("history", wh / fmt, "types.ints", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    key = "snapshot" if fmt == "iceberg" else "version"
    assert doc["format"] == fmt and [c[key] for c in doc["commits"]] == [v for v, _p in hist]
    for c, (_v, p) in zip(doc["commits"], hist):
        assert c["gtid"] == p["binlogkit.gtid"] and c["gtid_state"] == p["binlogkit.gtid_state"]
        assert c["file"] == p["binlogkit.file"] and c["position"] == p["binlogkit.position"]
    text = _cli("history", wh / fmt, "types.ints")
    assert text.returncode == 0 and f"types.ints ({fmt}): {len(hist)} commits" in text.stdout
    assert hist[-1][1]["binlogkit.gtid_state"] in text.stdout


@pytest.mark.parametrize("fmt", ["iceberg", "delta"])
def test_show_now_and_as_of_a_gtid_position_and_a_time(wh, fmt):
    r = _cli("show", wh / fmt, "types.ints", "--json")
    assert r.returncode == 0, r.stderr
    assert [x["id"] for x in json.loads(r.stdout)] == [x["id"] for x in _rows(fmt, wh)]
    hist = open_sink(fmt, str(wh / fmt)).history("types", "ints")
    first = hist[0][1]["binlogkit.gtid_state"]
    v = as_of(hist, gtid=first)
    assert v == hist[0][0]
    r = _cli("show", wh / fmt, "types.ints", "--as-of-gtid", first, "--csv")
    assert r.returncode == 0, r.stderr
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [int(x["id"]) for x in got] == [x["id"] for x in _rows(fmt, wh, v)]
    assert len(got) != len(_rows(fmt, wh)) or got != _rows(fmt, wh)
    when = hist[-1][1]["binlogkit.commit_time"]
    r = _cli("show", wh / fmt, "types.ints", "--as-of-time", when, "--json", "--limit", "2")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 2
    r = _cli("show", wh / fmt, "types.ints", "--limit", "2")
    assert r.returncode == 0 and "id" in r.stdout


def test_refusals_are_one_line_exit_2(wh):
    for args in (("show", wh / "delta", "types.ints", "--as-of-gtid", "0-1-1"),          # before the first commit
                 ("show", wh / "delta", "types.ints", "--as-of-gtid", "0-1-9", "--as-of-time", "2026-01-01"),
                 ("show", wh / "delta", "types.ints", "--as-of-gtid", "3e11fa47-71ca-11e1-9e33-c80aa9429562:7"),
                 ("show", wh / "delta", "types.ints", "--as-of-gtid", "not a gtid"),
                 ("show", wh / "delta", "types.ints", "--as-of-time", "yesterday"),
                 ("show", wh / "iceberg", "types.nope"),
                 ("history", wh / "iceberg", "ints")):
        r = _cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr.startswith("binlogkit: error: ") and "Traceback" not in r.stderr, r.stderr

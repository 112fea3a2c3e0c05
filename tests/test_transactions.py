"""Transactions and GTID summaries against the servers' ground truth in the manifests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.api import gtid_summary, transactions
from binlogkit.cli import main
from binlogkit.errors import BinlogError, TruncatedEventError
from binlogkit.gtid import MysqlGtidSet
from binlogkit.transactions import group_files
from fixtures import store

from conftest import catalog_rows
from ring_sets import KINDS

PRIMARY_SETS = ["replication-gtid", "replication-position-semisync", "compressed-events"]
CRASH = [s for s in store.set_names() if s.startswith("crash-")]


@pytest.mark.parametrize("name", PRIMARY_SETS)
def test_primary_transactions_equal_show_binlog_events(name):
    m = store.manifest(name)
    d = store.materialize(name) / "primary"
    got = list(transactions([d / "mariadb-bin.index"]))
    want = m["primary"]["transactions"]
    assert [t.gtid for t in got] == [w["gtid"] for w in want]
    for t, w in zip(got, want):
        assert (Path(t.start_file).name, t.start_offset, t.end_offset) == (w["file"], w["start"], w["end"])
        assert t.complete and t.events == w["events"]
        assert (t.source_file, t.source_start, t.source_end) == (w["file"], w["start"], w["end"])
    if name == "compressed-events":
        assert {t.terminator for t in got} >= {"XID", "DDL", "XA_PREPARE", "XA_COMMIT"}


def test_replica_relay_transactions_span_rotations():
    m = store.manifest("replication-gtid")
    d = store.materialize("replication-gtid") / "replica-relay"
    got = [t for t in transactions([d / "relay-bin.index"]) if t.gtid]
    want = {w["gtid"]: w for w in m["primary"]["transactions"]}
    assert [t.gtid for t in got] == list(want)
    assert all(t.complete for t in got)
    for t in got:
        w = want[t.gtid]
        assert (t.source_file, t.source_start, t.source_end) == (w["file"], w["start"], w["end"])
    big = max(got, key=lambda t: t.bytes)
    assert big.bytes > 20_000_000 and big.start_file != big.end_file  # spans several relay files
    assert big.terminator == "XID"


def test_relay_source_positions_on_mariadb_11_8():
    """MariaDB 11.8 begins a GTID connection with an artificial Gtid_list whose end_log_pos is the
    Rotate's start position, and writes end_log_pos 0 inside transactions: each relay-log
    transaction still maps to where it lies in the primary's binlog (no 4 GiB wrap)."""
    d = store.materialize("replication-gtid", server="mariadb-11.8")
    primary = {t.gtid: t for t in transactions([d / "primary" / "mariadb-bin.index"]) if t.gtid}
    got = [t for t in transactions([d / "replica-relay" / "relay-bin.index"]) if t.gtid]
    assert len(got) == len(primary) > 200
    for t in got:
        w = primary[t.gtid]
        assert (t.source_file, t.source_start, t.source_end) == (Path(w.start_file).name, w.start_offset,
                                                                 w.end_offset), t.gtid


@pytest.mark.parametrize("name", CRASH)
def test_crash_relay_truth(name):
    m = store.manifest(name)
    truth = m["truth"]
    d = store.materialize(name) / "relay"
    got, err = [], None
    try:
        for t in group_files([d / "relay-bin.index"], source_file=m["relay_dir"]["relay_log_info"]["master_log_file"]):
            got.append(t)
    except BinlogError as exc:
        err = exc
    assert (err is not None) == bool(truth["torn"])
    if err:
        assert isinstance(err, TruncatedEventError) and err.offset == truth["torn"][0]["offset"]
    assert [t.gtid for t in got if t.complete and t.gtid] == truth["complete_gtids_in_relay"]
    partial = [t for t in got if not t.complete]
    assert len(partial) == 1
    p, tp = partial[0], truth["partial_transaction"]
    assert (p.gtid, Path(p.start_file).name, p.start_offset, p.source_file, p.source_start) == (
        tp["gtid"], tp["relay_file"], tp["start_offset"], tp["source_file"], tp["source_start"])
    last = [t for t in got if t.complete][-1]
    tl = truth["last_complete_transaction"]
    assert (last.gtid, last.source_file, last.source_end, last.end_offset) == (
        tl["gtid"], tl["source_file"], tl["source_end"], tl["relay_end_offset"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["ring-duplicates-off", "ring-duplicates-on"])
def test_ring_duplicates_are_found(ring_set, name, kind):
    m, folder = ring_set(name, kind)
    s = gtid_summary([folder / "C" / "binlog"])
    flagged = {x["gtid"] for x in s["mariadb"]["out_of_order"]}
    assert set(m["C_binlog_duplicate_gtids"]) <= flagged
    assert s["mariadb"]["position"] == m["servers"]["C"]["master_status"]["gtid_binlog_pos"]
    for conn in ("a", "b"):
        relay = folder / "C" / "relay" / f"relay-bin-{conn}.index"
        assert [t.gtid for t in transactions([relay]) if t.gtid] == m["C_relay_gtids"][conn]


GTID_ROWS = [r for r in catalog_rows() if re.search(r"GTIDs \d+ \(", r["notes"]) and r["fmt"] == "v4"]


@pytest.mark.parametrize("row", GTID_ROWS, ids=lambda r: r["path"])
def test_corpus_gtid_counts(corpus, row):
    """The catalog counted GTID events by walking sizes; we count transactions with GTIDs."""
    m = re.search(r"(MariaDB )?GTIDs (\d+) \(([^)]*)\)", row["notes"])
    mariadb, n, text = bool(m.group(1)), int(m.group(2)), m.group(3)
    s = gtid_summary([corpus / row["path"]])
    got = [t.gtid for t in transactions([corpus / row["path"]]) if t.gtid]
    assert len(got) == n
    if mariadb:
        first, last = (x.strip() for x in text.split(".."))
        assert (got[0], got[-1]) == (first, last)
        assert s["mariadb"]["position"].endswith(last.split("-", 1)[1]) or last in s["mariadb"]["position"]
    else:
        try:
            expected = MysqlGtidSet.parse(text)
        except BinlogError:
            return  # the catalog abbreviates some sets
        assert MysqlGtidSet.parse(",".join(got)) == expected


def test_cli_gtids_and_transactions():
    r = CliRunner()
    d = store.materialize("crash-torn-gtid") / "relay"
    res = r.invoke(main, ["gtids", "--json", str(d)])
    assert res.exit_code == 1  # torn + incomplete
    doc = json.loads(res.output)
    assert doc["mariadb"]["position"] == "0-1-306" and doc["incomplete"] == ["0-1-307"]
    res = r.invoke(main, ["transactions", "--json", "--incomplete", str(d)])
    rows = [json.loads(line) for line in res.output.splitlines() if line.startswith("{")]
    assert [x["gtid"] for x in rows] == ["0-1-307"] and res.exit_code == 1
    ok = r.invoke(main, ["gtids", str(store.materialize("replication-gtid") / "primary")])
    assert ok.exit_code == 0 and "MariaDB GTID position after these files: 0-1-3014" in ok.output
    sel = r.invoke(main, ["transactions", "--json", "--gtids", "0-1-10..12",
                          str(store.materialize("replication-gtid") / "primary")])
    assert [json.loads(l)["gtid"] for l in sel.output.splitlines()] == ["0-1-10", "0-1-11", "0-1-12"]


def test_decode_include_exclude_gtids():
    r = CliRunner()
    f = str(store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001")
    inc = [json.loads(l) for l in r.invoke(main, ["decode", "--base64-output=decode-rows", "--json", "--include-gtids", "0-1-7", f]).output.splitlines()]
    gtids = [e["fields"]["gtid"] for e in inc if e["type"] == "GTID_EVENT"]
    assert gtids == ["0-1-7"]
    assert [e["type"] for e in inc if e["type"] not in ("FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT",
                                                         "BINLOG_CHECKPOINT_EVENT", "ROTATE_EVENT", "STOP_EVENT")] == [
        "GTID_EVENT", "ANNOTATE_ROWS_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT_V1", "XID_EVENT"]
    alle = [json.loads(l) for l in r.invoke(main, ["decode", "--base64-output=decode-rows", "--json", f]).output.splitlines()]
    exc = [json.loads(l) for l in r.invoke(main, ["decode", "--base64-output=decode-rows", "--json", "--exclude-gtids", "0-1-7", f]).output.splitlines()]
    assert len(exc) == len(alle) - 5
    assert r.invoke(main, ["decode", "--base64-output=decode-rows", "--include-gtids", "garbage", f]).exit_code == 2


# --- transactions --tables, and the time in the text form ----------------------------------------

def _tables_by_decoding(paths) -> dict:
    """GTID -> the tables of its Table_map events (those inside a MySQL Transaction_payload
    too), by decoding every event: the reference for --tables."""
    from binlogkit.api import decode_files

    out: dict = {}
    gtid = None
    for ev in decode_files(paths, payloads=True):
        if ev.name in ("GTID", "Gtid", "Gtid_tagged", "Anonymous_gtid"):
            gtid = ev.fields.get("gtid")
        elif ev.name == "Table_map":
            names = out.setdefault(gtid, [])
            name = f"{ev.fields['db']}.{ev.fields['table']}"
            if name not in names:
                names.append(name)
    return out


@pytest.mark.parametrize("server", ["mariadb-10.11", "mysql-9.7"])
def test_transactions_tables_are_the_table_maps_and_statements(server):
    """--tables (JSON and text): every transaction's Table_map tables equal those decoding
    every event finds (MySQL's compressed transactions included); DDL names its table, a
    statement on a database db.*; the text line carries the first event's time in UTC."""
    from datetime import datetime, timezone

    d = store.materialize("replication-gtid", server=server) / "primary"
    res = CliRunner().invoke(main, ["transactions", "--json", "--tables", str(d)])
    assert res.exit_code == 0, res.output
    got = [json.loads(line) for line in res.output.splitlines()]
    want = _tables_by_decoding([d])
    rows = [t for t in got if t["terminator"] != "DDL"]
    assert rows and all(t["tables"] == want.get(t["gtid"], []) for t in rows if t["terminator"] != "STATEMENT")
    assert sum(bool(t["tables"]) for t in rows) > 100
    ddl = [t for t in got if t["terminator"] == "DDL"]
    assert ddl and all(len(t["tables"]) == 1 for t in ddl)
    assert any(t["tables"][0].endswith(".*") for t in ddl)
    if server == "mysql-9.7":
        assert any(t["terminator"] == "PAYLOAD" and t["tables"] for t in got)   # inside the compressed ones
    text = CliRunner().invoke(main, ["transactions", "--tables", str(d)]).output.splitlines()
    assert text[0].split()[:3] == ["gtid", "time", "(UTC)"] and text[0].endswith("state        tables")
    first = got[0]
    when = datetime.fromtimestamp(first["first_timestamp"], timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    assert text[1].split()[:3] == [first["gtid"], *when.split()]
    assert text[1].split()[-1] == (",".join(first["tables"]) or "-")
    plain = CliRunner().invoke(main, ["transactions", "--json", str(d)]).output.splitlines()
    assert "tables" not in json.loads(plain[0])   # without --tables: the fields as before


@pytest.mark.parametrize("text,db,want", [
    ("INSERT INTO t VALUES (1)", "shop", "shop.t"),
    ("insert ignore into `shop`.`order items` (a) values (1)", "x", "shop.order items"),
    ("UPDATE LOW_PRIORITY shop.t SET a=1", "", "shop.t"),
    ("/* app */ DELETE FROM t WHERE id=1", "shop", "shop.t"),
    ("DROP TABLE IF EXISTS `t` /* generated by server */", "shop", "shop.t"),
    ("CREATE OR REPLACE TABLE s.t (id INT)", "x", "s.t"),
    ("ALTER TABLE t ADD COLUMN y INT", "d", "d.t"),
    ("RENAME TABLE shop.t TO shop.t_2025, shop.t_new TO shop.t", "", "shop.t"),
    ("TRUNCATE TABLE t", "d", "d.t"),
    ("CREATE INDEX i ON t (a)", "d", "d.t"),
    ("DROP DATABASE IF EXISTS gone", "", "gone.*"),
    ("BEGIN", "d", None), ("COMMIT", "d", None), ("XA COMMIT X'01',X'',1", "d", None),
    ("SET @a=1", "d", None),
])
def test_statement_table(text, db, want):
    from binlogkit.touched import statement_table

    assert statement_table(db, text) == want

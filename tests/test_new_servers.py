"""What MySQL 9.7 and MariaDB 11.8 write that older servers did not, read from the small real
binlogs in fixtures/samples (made as its README says, the servers' own tool output saved beside
them in expected/): VECTOR, PARTIAL_JSON updates, two-phase ALTER, GTID index files; and MariaDB
12.3's .ibb files and PARTIAL_ROW_DATA events recognised as not supported yet. Runs anywhere
(no server, no oracle binary: the oracle's text is in the repository)."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit import open_binlog
from binlogkit.cli import main
from binlogkit.errors import BadMagicError, GtidIndexError, UnsupportedFormatError
from binlogkit.reading.events import build_event, decode, rebuild
from binlogkit.gtid.index import read_gtid_index
from binlogkit.rowvalues import images

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "samples"
MYSQL, MARIADB = SAMPLES / "mysql-9.7", SAMPLES / "mariadb-11.8"
SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*") if re.search(r"\.\d{6}$", p.name))


def _ours(path: Path, *args: str) -> list[str]:
    """``decode -v`` ### lines, without the `` /* name */`` notes we add (the oracles print
    none at -v)."""
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", *args, str(path)])
    assert res.exit_code == 0, res.output
    text = res.stdout_bytes.decode("utf-8", "surrogateescape")  # string values are written as stored
    return [re.sub(r" /\* [^*]* \*/$", "", line) for line in text.splitlines() if line.startswith("###")]


def _oracle(path: Path) -> list[str]:
    tool = "mysqlbinlog" if path.parent.name.startswith("mysql") else "mariadb-binlog"
    text = (path.parent / "expected" / f"{path.name}.{tool}-v.txt").read_text("utf-8", "surrogateescape")
    return [line for line in text.splitlines() if line.startswith("###")]


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_samples_round_trip_byte_exact(path):
    n = 0
    for raw in open_binlog(str(path)):
        assert rebuild(decode(raw)) == raw.data, (path.name, raw.offset)
        n += 1
    assert n > 3


# --- rows: -v equal to the server's own tool, C path and Python path alike -------------------

ROW_SAMPLES = [MYSQL / "vector.000001", MYSQL / "partial-json.000001", MYSQL / "partial-json.000002",
               MARIADB / "mariadb-bin.000002"]


@pytest.mark.parametrize("pure", [False, True], ids=["c", "python"])
@pytest.mark.parametrize("path", ROW_SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_decode_v_equals_the_servers_tool(path, pure, monkeypatch):
    if pure:
        monkeypatch.setattr(images, "_rowtext", None)
    assert _ours(path) == _oracle(path)


VV_SAMPLES = [MYSQL / name for name in ("vector.000001", "partial-json.000001", "partial-json.000002", "quotes.000001")]


@pytest.mark.parametrize("how", ["listing", "replay", "replay-python"])
@pytest.mark.parametrize("path", VV_SAMPLES, ids=lambda p: p.name)
def test_decode_vv_type_comments_equal_mysqlbinlog(path, how, monkeypatch):
    """-vv: every value line ends in mysqlbinlog 9.7's own type comment (`` /* VECTOR(3) meta=4
    nullable=1 is_null=0 */``: its type names, VECTOR's dimension from the optional metadata,
    nullability from the map), in the listing and in the replayable text, through the C loop and
    without it (``expected/<file>.mysqlbinlog-vv.txt``: ``TZ=UTC mysqlbinlog -vv
    --base64-output=decode-rows FILE``)."""
    from binlogkit.reading import fastdecode

    if how == "replay-python":
        monkeypatch.setattr(fastdecode, "_fastdecode", None)
    args = ["decode", "-vv", str(path)] if how != "listing" else ["decode", "--base64-output=decode-rows", "-vv",
                                                                   str(path)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    ours = [line for line in res.stdout_bytes.decode("utf-8", "surrogateescape").splitlines() if line.startswith("###")]
    text = (path.parent / "expected" / f"{path.name}.mysqlbinlog-vv.txt").read_text("utf-8", "surrogateescape")
    theirs = [line for line in text.splitlines() if line.startswith("###")]
    assert sum("is_null=" in line for line in theirs) >= 3
    assert ours == theirs


def test_vector_values_json_and_text():
    """MySQL 9.7 VECTOR(3) / VECTOR: float32 lists; text as mysqlbinlog -v; JSON with the
    shortest decimals that read back as the same float32; the charset metadata still maps
    `note` (MySQL counts VECTOR columns among the charset ones)."""
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", str(MYSQL / "vector.000001")])
    rows = [r for line in res.output.splitlines() for r in json.loads(line).get("rows", [])]
    first = rows[0]["after"]
    assert first == {"id": 1, "v": [1.5, 2.0, -3.25], "w": [0.1], "note": "a"}
    assert rows[1]["after"]["v"][2] == 3.4e38 and rows[1]["after"]["w"] is None
    assert any(line.endswith("@2=[1.50000e+00,2.00000e+00,-3.25000e+00]") for line in _ours(MYSQL / "vector.000001"))


def test_vector_of_a_torn_length_is_a_typed_error():
    from binlogkit.errors import BodyLengthError
    from binlogkit.rowvalues.tables import VECTOR, Column
    from binlogkit.rowvalues.values import _value

    col = Column(0, VECTOR, 4)
    v, q = _value(col, (8).to_bytes(4, "little") + struct.pack("<2f", 1, 2), 0)
    assert v.text == "[1.00000e+00,2.00000e+00]" and q == 12
    with pytest.raises(BodyLengthError):
        _value(col, (6).to_bytes(4, "little") + b"\0" * 6, 0)
    with pytest.raises(IndexError):  # the caller turns this into "runs past the row image"
        _value(col, (8).to_bytes(4, "little") + b"\0" * 4, 0)


def test_vector_export_is_list_of_float32(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    res = CliRunner().invoke(main, ["export", "--output", str(tmp_path / "out"), str(MYSQL / "vector.000001")])
    assert res.exit_code == 0, res.output
    tables = [pq.read_table(p) for p in sorted((tmp_path / "out" / "db=t" / "table=v").rglob("*.parquet"))]
    table = next(t for t in tables if "after_v" in t.schema.names)  # the FULL-metadata schema version
    assert str(table.schema.field("after_v").type) == "list<element: float>"
    assert table.column("after_v").to_pylist()[0] == [1.5, 2.0, -3.25]


def test_vector_flashback_undoes_rows(tmp_path):
    """The undo keeps the row images' bytes: its -v shows the original vectors back."""
    out = tmp_path / "undo.bin"
    res = CliRunner().invoke(main, ["flashback", "--skip-statements", "-o", str(out), str(MYSQL / "vector.000001")])
    assert res.exit_code == 0, res.output
    lines = _ours(out)
    assert lines[:3] == ["### DELETE FROM `t`.`v`", "### WHERE", "###   @1=3"]
    assert "###   @2=[1.50000e+00,2.00000e+00,-3.25000e+00]" in lines
    sql = tmp_path / "undo.sql"
    res = CliRunner().invoke(main, ["flashback", "--skip-statements", "--sql", "--stop-position", "1619", "-o", str(sql),
                                    str(MYSQL / "vector.000001")])
    assert res.exit_code == 0, res.output
    assert "`v`=STRING_TO_VECTOR('[1.5,2.0,-3.25]'), `w`=STRING_TO_VECTOR('[0.1]')" in sql.read_text()


def test_partial_json_carries_diffs_and_the_result_when_the_before_image_has_it():
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "39", str(MYSQL / "partial-json.000001")])
    rows = [r for line in res.output.splitlines() for r in json.loads(line)["rows"]]
    minimal = rows[0]["after"]["doc"]  # binlog_row_image=MINIMAL: no before document
    assert minimal == {"json_diff": [{"op": "JSON_REPLACE", "path": "$.n", "value": "999"}], "result": None}
    full = rows[-2]["after"]  # FULL: the before image holds the document
    assert full["doc"]["result"] == '{"n": 7, "o": {}, "s": "xyz", "arr": [1, 42, 3], "new": "hello"}'
    assert full["d2"] == {"json_diff": [], "result": "[1, 2, 3]"}  # printed @4=@4


def test_partial_json_text_nests_runs_of_operations():
    from binlogkit.codecs.mysql_json import INSERT, REMOVE, REPLACE, diff_sql

    assert diff_sql("@3", []) == "@3"
    assert diff_sql("@3", [(REPLACE, "$.a", 1), (REPLACE, "$.b", "x'y")]) == \
        "JSON_REPLACE(@3, '$.a', 1,\n###      '$.b', 'x\\'y')"
    assert diff_sql("@3", [(REPLACE, "$.a", 1), (INSERT, "$.m", [1, {"k": None}]), (REMOVE, "$.o", None)]) == (
        "JSON_REMOVE(\n###      JSON_INSERT(\n###      JSON_REPLACE(@3, '$.a', 1),\n"
        "###      '$.m', CAST('[1, {\"k\": null}]' AS JSON)),\n###      '$.o')")


def test_damaged_partial_json_diff_is_a_typed_error():
    from binlogkit.errors import BodyLengthError

    with pytest.raises(BodyLengthError, match="malformed partial JSON diff"):
        images._json_diff(2, b"\x07\x03$.a", None)  # operation 7 does not exist


# --- two-phase ALTER (MariaDB binlog_alter_two_phase) ------------------------------------------

def _gtid_lines(text: str) -> list[str]:
    return [line.split("\t", 1)[1] for line in text.splitlines() if "\tGTID " in line]


@pytest.mark.parametrize("pure", [False, True], ids=["c", "python"])
def test_two_phase_alter_gtid_lines_equal_mariadb_binlog(pure, monkeypatch):
    if pure:
        monkeypatch.setenv("BINLOGKIT_PURE_PYTHON", "1")
    path = MARIADB / "mariadb-bin.000001"
    ours = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", str(path)]).stdout
    theirs = (MARIADB / "expected" / "mariadb-bin.000001.mariadb-binlog-v.txt").read_text()
    assert _gtid_lines(ours) == _gtid_lines(theirs)
    assert "GTID 0-2-5 ddl COMMIT ALTER id= 4 thread_id=4" in _gtid_lines(ours)
    assert "GTID 0-2-8 ddl ROLLBACK ALTER id= 7 thread_id=5" in _gtid_lines(ours)


def test_two_phase_alter_runs_once_in_the_decoded_script():
    """Every phase's statement commented (### as mariadb-binlog shows them), the COMMIT ALTER's
    also executable: the script runs each committed ALTER once, the failed one never."""
    text = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", str(MARIADB / "mariadb-bin.000001")]).stdout
    runnable = [line for line in text.splitlines() if line.startswith("ALTER TABLE")]
    commented = [line for line in text.splitlines() if line.startswith("### ALTER TABLE")]
    assert runnable == ["ALTER TABLE t.a ADD COLUMN y INT DEFAULT 5", "ALTER TABLE t.a ADD INDEX ic (c), ALGORITHM=INPLACE"]
    assert commented == [line for line in _oracle(MARIADB / "mariadb-bin.000001") if line.startswith("### ALTER")]
    assert len(commented) == 6  # each phase's statement, as mariadb-binlog -v shows them
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "--json", str(MARIADB / "mariadb-bin.000001")])
    phases = [(json.loads(line)["fields"].get("two_phase_alter"), json.loads(line)["fields"].get("alter_id"))
              for line in res.output.splitlines() if json.loads(line)["name"] == "Query"]
    assert [p for p in phases if p[0]] == [("START", None), ("COMMIT", 4), ("START", None), ("ROLLBACK", 7),
                                           ("START", None), ("COMMIT", 9)]


@pytest.mark.parametrize("pure", [False, True], ids=["c", "python"])
def test_two_phase_alter_decode_v_equals_mariadb_binlog_v(pure, monkeypatch):
    """Replayable ``decode -v``: the whole text as mariadb-binlog 11.8's ``-v`` (the BINLOG
    statement of each phase, then its ``### ALTER ...`` line), but for our first line and the
    `` /* name */`` notes -v adds."""
    if pure:
        monkeypatch.setenv("BINLOGKIT_PURE_PYTHON", "1")
    monkeypatch.setenv("TZ", "UTC")
    path = MARIADB / "mariadb-bin.000001"
    res = CliRunner().invoke(main, ["decode", "-v", str(path)])
    assert res.exit_code == 0, res.output
    first, _, ours = res.stdout.partition("\n")
    assert first.startswith("# binlogkit decode: replayable output")
    ours = re.sub(r" /\* [^*]* \*/$", "", ours, flags=re.M)
    theirs = (MARIADB / "expected" / "mariadb-bin.000001.mariadb-binlog-v-base64.txt").read_text()
    assert ours == theirs
    assert ours.count("\n### ALTER TABLE") == 6


def test_two_phase_alter_without_binlog_statements_runs_each_alter_once(monkeypatch):
    """--base64-output=never: no BINLOG statement to carry a phase, so the START ALTER's and the
    ROLLBACK ALTER's statements are comments and the COMMIT ALTER's runs (mariadb-binlog
    comments all three: its replay never runs the ALTER)."""
    path = MARIADB / "mariadb-bin.000001"
    text = CliRunner().invoke(main, ["decode", "--base64-output=never", "-v", str(path)]).stdout
    runnable = [line for line in text.splitlines() if line.startswith("ALTER TABLE")]
    assert runnable == ["ALTER TABLE t.a ADD COLUMN y INT DEFAULT 5", "ALTER TABLE t.a ADD INDEX ic (c), ALGORITHM=INPLACE"]
    assert text.count("# START ALTER: not run here") == 3 and text.count("# ROLLBACK ALTER: not run here") == 1


def test_transactions_know_the_alter_groups():
    res = CliRunner().invoke(main, ["transactions", "--json", str(MARIADB / "mariadb-bin.000001")])
    got = {json.loads(line)["gtid"]: (json.loads(line)["alter"], json.loads(line)["alter_id"])
           for line in res.output.splitlines()}
    assert got["0-2-4"] == ("START", None) and got["0-2-5"] == ("COMMIT", 4)
    assert got["0-2-8"] == ("ROLLBACK", 7) and got["0-2-3"] == (None, None)


# --- GTID index files -----------------------------------------------------------------------

def test_gtid_index_records_agree_with_the_binlog():
    """Every record of the 64-byte-page index (55 pages, records split across pages) is the
    GTID state at the end of a transaction of its binlog, and the last one its end state."""
    ix = read_gtid_index((MARIADB / "mariadb-bin.000004.idx").read_bytes())
    assert ix.complete and ix.page_size == 64 and ix.pages == 55 and len(ix.records) == 42
    res = CliRunner().invoke(main, ["transactions", "--json", str(MARIADB / "mariadb-bin.000004")])
    trx = [json.loads(line) for line in res.output.splitlines()]
    state: dict = {(0, 2): 17}  # the file's Gtid list
    ends = {299: dict(state)}
    for t in trx:
        d, s, n = map(int, t["gtid"].split("-"))
        state[(d, s)] = n
        ends[t["end_offset"]] = dict(state)
    for r in ix.records:
        assert {(d, s): n for d, s, n in r.state} == ends[r.offset], r
    assert ix.records[-1].offset == trx[-1]["end_offset"]
    assert ix.start_for(1, 5) == next(t["start_offset"] for t in trx if t["gtid"] == "1-2-5")


def _pages(data: bytearray, size: int) -> None:
    for at in range(0, len(data), size):  # CRC32s made right again after an edit
        data[at + size - 4:at + size] = zlib.crc32(bytes(data[at:at + size - 4])).to_bytes(4, "little")


def test_damaged_gtid_index_is_a_typed_error():
    good = (MARIADB / "mariadb-bin.000004.idx").read_bytes()
    bad = bytearray(good)
    bad[200] ^= 1
    with pytest.raises(GtidIndexError, match="page 3 fails its CRC32"):
        read_gtid_index(bytes(bad))
    with pytest.raises(GtidIndexError, match="not a whole number"):
        read_gtid_index(good[:100])
    newer = bytearray(good)
    newer[4] = 2
    _pages(newer, 64)
    with pytest.raises(GtidIndexError, match="version 2"):
        read_gtid_index(bytes(newer))
    torn = good[:64 * 2]  # the first leaf node only (a crash while writing): incomplete, no root
    ix = read_gtid_index(torn)
    assert not ix.complete and ix.records == read_gtid_index(good).records[:3]
    with pytest.raises(GtidIndexError, match="ends inside a node"):
        read_gtid_index(good[:64])
    assert read_gtid_index(b"").records == ()  # the binlog being written: an empty index


def test_globbed_folder_with_index_files(tmp_path):
    """`binlogkit gtids/verify/transactions mariadb-bin.*`: the .idx files are read by verify
    and gtids, skipped with a note elsewhere; exit 0."""
    files = sorted(str(p) for p in MARIADB.glob("mariadb-bin.*"))
    runner = CliRunner()
    res = runner.invoke(main, ["verify", *files])
    assert res.exit_code == 0, res.output
    assert "OK   " + str(MARIADB / "mariadb-bin.000004.idx") + "  MariaDB GTID index v1.0: 42 records" in res.stdout
    res = runner.invoke(main, ["gtids", *files])
    assert res.exit_code == 0 and "MariaDB GTID position after these files: 0-2-31,1-2-14,2-2-13" in res.stdout
    res = runner.invoke(main, ["transactions", *files])
    assert res.exit_code == 0 and "is a MariaDB GTID index, not a binlog: skipped" in res.stderr
    damaged = tmp_path / "mariadb-bin.000004.idx"
    damaged.write_bytes(b"\xfe\xfe\x0c\x01\x01\0\0\0" + (64).to_bytes(4, "little") + b"\0" * 52)
    res = runner.invoke(main, ["verify", str(damaged)])
    assert res.exit_code == 1 and res.stdout.startswith("BAD  ") and "CRC32" in res.stdout


# --- MariaDB 12.3: recognised, not supported yet -----------------------------------------------

def test_innodb_stored_binlog_is_named_not_supported(tmp_path):
    header = b"\xfe\xfe\x0d\x01" + struct.pack("<III", 12, 1, 0) + struct.pack("<QQQQQQ", 7, 256, 1, 64, 0, 0)
    f = tmp_path / "binlog-000007.ibb"
    f.write_bytes(header.ljust(4096, b"\0"))
    with pytest.raises(UnsupportedFormatError, match=r"InnoDB-stored binlog .*file_no 7.*not supported yet"):
        list(open_binlog(str(f)))
    res = CliRunner().invoke(main, ["verify", str(f)])
    assert res.exit_code == 1 and "not supported yet" in res.stdout
    idx = tmp_path / "x.000001.idx"
    idx.write_bytes((MARIADB / "mariadb-bin.000001.idx").read_bytes())
    with pytest.raises(BadMagicError, match="a MariaDB GTID index"):
        list(open_binlog(str(idx)))


def test_partial_row_data_event_is_named_not_supported(tmp_path):
    src = (MARIADB / "mariadb-bin.000003").read_bytes()
    body = struct.pack("<IIBQ", 2, 1, 1, 100) + b"x" * 20
    ev = build_event(type_code=172, body=body, timestamp=1, server_id=2, log_pos=len(src) + 19 + len(body) + 4,
                     flags=0, checksum=True)
    f = tmp_path / "mariadb-bin.000003"
    f.write_bytes(src + ev)
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", str(f)])
    assert res.exit_code == 1
    assert f"offset {len(src)}, event PARTIAL_ROW_DATA_EVENT: MariaDB 12.3 PARTIAL_ROW_DATA_EVENT (fragment 1 of 2)" \
        in res.stderr and "not supported yet" in res.stderr
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "--lenient", str(f)])
    assert res.exit_code == 0 and "Partial_row_data: a fragment of a rows event (MariaDB 12.3), not supported yet" \
        in res.stdout


def test_pitr_names_a_two_phase_alter_cut_by_the_stop():
    path = str(MARIADB / "mariadb-bin.000001")
    base = ["pitr", path, "--from-file", "mariadb-bin.000001", "--from-position", "4", "--json"]
    doc = json.loads(CliRunner().invoke(main, [*base, "--until-position", "mariadb-bin.000001:1068"]).stdout)
    (split,) = [p for p in doc["problems"] if p["kind"] == "alter_split"]
    assert split["gtids"] == ["0-2-4", "0-2-5"] and split["severity"] == "warning" and doc["reachable"]
    doc = json.loads(CliRunner().invoke(main, [*base, "--until-position", "mariadb-bin.000001:1241"]).stdout)
    assert not [p for p in doc["problems"] if p["kind"] == "alter_split"]


def test_flashback_leaves_start_and_rollback_alter_groups_alone(tmp_path):
    """A range holding a row change, a START ALTER and its ROLLBACK ALTER: undone without
    --skip-statements (the failed ALTER changed nothing); a COMMIT ALTER is still refused."""
    path = str(MARIADB / "mariadb-bin.000001")
    out = tmp_path / "undo.bin"
    res = CliRunner().invoke(main, ["flashback", "--start-position", "1241", "--stop-position", "1790",
                                    "-o", str(out), path])
    assert res.exit_code == 0, res.output
    assert _ours(out) == ["### DELETE FROM `t`.`a`", "### WHERE", "###   @1=4", "###   @2=4", "###   @3='d'",
                          "###   @4=6"]
    res = CliRunner().invoke(main, ["flashback", "--start-position", "1790", "--stop-position", "2130",
                                    "-o", str(tmp_path / "undo2.bin"), path])
    assert res.exit_code == 2 and "0-2-10: 'ALTER TABLE t.a ADD INDEX ic (c), ALGORITHM=INPLACE'" in res.output
    assert "0-2-9" not in res.output


def test_two_phase_alter_marks_survive_a_type_filter():
    """--type query leaves the GTID events out, and their Query events still know their phase."""
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "--json", "--type", "query", str(MARIADB / "mariadb-bin.000001")])
    phases = [json.loads(line)["fields"].get("two_phase_alter") for line in res.output.splitlines()]
    assert [p for p in phases if p] == ["START", "COMMIT", "START", "ROLLBACK", "START", "COMMIT"]


def test_gtids_locate_from_the_index_files_alone(tmp_path):
    """Every GTID of the samples placed from the .idx files only: its own binlog, at or before
    its transaction's start (exactly there in the file whose index has a record per GTID);
    without the .idx files nothing is placed."""
    from binlogkit.gtid.index import locate

    logs = [str(p) for p in sorted(MARIADB.glob("mariadb-bin.00000?"))]
    res = CliRunner().invoke(main, ["transactions", "--json", *logs])
    trx = [json.loads(line) for line in res.output.splitlines()]
    assert len(trx) == 58
    for t in trx:
        d, _s, n = map(int, t["gtid"].split("-"))
        path, at = locate(logs, d, n)
        assert Path(path).name == Path(t["start_file"]).name and at <= t["start_offset"], t["gtid"]
        if path.endswith("000004"):  # its first GTID: from the file's first record (after Gtid_list)
            assert at == (299 if t["gtid"] == "0-2-18" else t["start_offset"])
    res = CliRunner().invoke(main, ["gtids", "--locate", "1-2-5", str(MARIADB)])
    assert res.exit_code == 0 and res.stdout == f"1-2-5: {MARIADB / 'mariadb-bin.000004'}, read from offset 3255 (GTID index)\n"
    bare = tmp_path / "mariadb-bin.000004"
    bare.write_bytes((MARIADB / "mariadb-bin.000004").read_bytes())
    res = CliRunner().invoke(main, ["gtids", "--locate", "1-2-5", str(bare)])
    assert res.exit_code == 1 and "not placed" in res.stdout


def test_vector_values_pickle_by_their_bytes():
    """Spark and process pools pickle decoded values: a Vector comes back equal, bytes and all."""
    import pickle

    from binlogkit.rowvalues.values import Vector

    v = Vector(struct.pack("<3f", 1.5, 0.1, -2))
    w = pickle.loads(pickle.dumps(v))
    assert type(w) is Vector and w == v == (1.5, 0.1, -2.0) and w.raw == v.raw

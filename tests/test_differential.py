"""Differential test against mariadb-binlog (the oracle) on every MariaDB-written fixture:
the same event offsets, end_log_pos values, types, GTIDs, and the same header description
for the event kinds both print the same way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from binlogkit import open_binlog
from binlogkit.errors import BinlogError
from binlogkit.reading.events import decode
from binlogkit.render import header_line

from test_codecs import fixture_files

pytestmark = pytest.mark.server  # needs the mariadb-client package

# our codec name -> mariadb-binlog's first word of the description
KIND = {"Format_desc": "Start", "Rotate": "Rotate", "Gtid_list": "Gtid", "Binlog_checkpoint": "Binlog",
        "GTID": "GTID", "Query": "Query", "Xid": "Xid", "Annotate_rows": "Annotate_rows",
        "Table_map": "Table_map", "Write_rows_v1": "Write_rows", "Update_rows_v1": "Update_rows",
        "Delete_rows_v1": "Delete_rows", "Stop": "Stop", "Intvar": "Intvar", "XA_prepare": "XID",
        "Write_rows_compressed_v1": "Write_compressed_rows", "Update_rows_compressed_v1": "Update_compressed_rows",
        "Delete_rows_compressed_v1": "Delete_compressed_rows", "Query_compressed": "Query_compressed"}
SAME_TEXT = {"Rotate", "Gtid_list", "Binlog_checkpoint", "GTID", "Xid", "Table_map", "Write_rows_v1",
             "Update_rows_v1", "Delete_rows_v1", "Query", "Annotate_rows", "Format_desc", "XA_prepare",
             "Write_rows_compressed_v1", "Update_rows_compressed_v1", "Delete_rows_compressed_v1", "Query_compressed"}


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_same_events_as_mariadb_binlog(path, monkeypatch):
    if not shutil.which("mariadb-binlog"):
        pytest.skip("mariadb-binlog missing")
    monkeypatch.setenv("TZ", "UTC")
    from fixtures.lab.oracle import mariadb_binlog_events

    want, stderr, _rc = mariadb_binlog_events(path)
    ours = []
    try:
        for raw in open_binlog(str(path)):
            ours.append(decode(raw))
    except BinlogError:
        pass
    assert_same_events(ours, want, KIND, SAME_TEXT, gtid_field=True)


def assert_same_events(ours, want, kinds: dict, same_text: set, *, gtid_field: bool) -> None:
    """Our events and the server's tool's (``parse_mariadb_binlog``): the same offsets,
    end_log_pos and server ids; each kind as the tool names it (``kinds``: ours → its); the
    MariaDB GTID in the GTID line (``gtid_field``); the header text of the kinds in
    ``same_text``, which both print the same way."""
    assert [e.raw.offset for e in ours] == [w.offset for w in want]
    assert [e.raw.log_pos for e in ours] == [w.end_log_pos for w in want]
    assert [e.raw.server_id for e in ours] == [w.server_id for w in want]
    for ev, w in zip(ours, want):
        assert kinds.get(ev.name, ev.name) == w.kind, (ev.raw.offset, ev.name, w.info)
        if gtid_field and ev.name == "GTID":
            assert w.info.split()[1] == ev.fields["gtid"]
        if ev.name in same_text:
            assert header_line(ev, utc=True).split("\t", 1)[1] == w.info, (ev.raw.offset, ev.name)


# -- MySQL 5.1 row events (issue 28): shared-corpus files, skipped cleanly without the corpus -----
OLD_ROWS = ["mysql/mysql-test/suite/binlog/std_data/ver_5_1_17.001",      # 5.1.17: pre-GA rows (20-22)
            "mysql/mysql-test/suite/binlog/std_data/ver_5_1-telco.001",   # 5.1.15-ndb: pre-GA rows
            "mariadb/mysql-test/suite/binlog/std_data/bug32407.001",      # 5.1.15-ndb: pre-GA rows
            "mysql/mysql-test/suite/binlog/std_data/bug32407.001"]        # 5.7.1: v2 rows
OLD_NAMES = {b"Write_rows_old", b"Update_rows_old", b"Delete_rows_old"}


def _row_blocks(text: bytes) -> dict[int, tuple[bytes, list[bytes]]]:
    """Per ``# at N`` block: (its event header line, its ``###`` lines)."""
    out: dict[int, tuple[bytes, list[bytes]]] = {}
    at = None
    for line in text.split(b"\n"):
        if line.startswith(b"# at "):
            at = int(line[5:])
            out[at] = (b"", [])
        elif at is not None and line.startswith(b"#") and b"end_log_pos" in line and not out[at][0]:
            out[at] = (line, [])
        elif at is not None and line.startswith(b"###"):
            out[at][1].append(line)
    return out


@pytest.mark.parametrize("rel", OLD_ROWS)
def test_old_rows_lines_equal_mariadb_binlog(rel, corpus):
    """``decode -v`` prints these files whole (it stopped at the first pre-GA rows event); every
    row line mariadb-binlog prints, ours equal byte for byte. mariadb-binlog prints no row lines
    for pre-GA events (``# Number of rows: 0``): those rows are checked against what the server
    replays (next test)."""
    import subprocess

    from click.testing import CliRunner

    from binlogkit.cli import main

    if not shutil.which("mariadb-binlog"):
        pytest.skip("mariadb-binlog missing")
    path = corpus / rel
    want = subprocess.run(["mariadb-binlog", "-v", "--base64-output=decode-rows", str(path)], capture_output=True,
                          env=dict(os.environ, TZ="UTC")).stdout
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)])
    assert res.exit_code == 0, res.output
    ours, theirs = _row_blocks(res.stdout_bytes), _row_blocks(want)
    assert sorted(ours) == sorted(theirs)
    old = 0
    for at, (head, lines) in theirs.items():
        if any(name in head for name in OLD_NAMES):
            old += 1
            assert lines == [] and ours[at][1], (at, head)  # the oracle prints none; we print the rows
        else:
            assert ours[at][1] == lines, (at, head)
    assert old == (0 if rel.startswith("mysql/") and "bug32407" in rel else 3 if "ver_5_1" in rel else 2)


@pytest.mark.parametrize("rel", [r for r in OLD_ROWS if "ver_5_1" in r or r.startswith("mariadb/")])
def test_pre_ga_rows_are_what_the_server_replays(rel, corpus, tmp_path):
    """A real MariaDB 10.11 replays the file (``mariadb-binlog FILE | mariadb``) up to its last
    rows event; the tables then hold exactly what our decoded rows say (inserts added, updates'
    before images replaced by their after images, deletes removed): values and NULLs as the
    server applied them."""
    import subprocess
    from collections import Counter

    from binlogkit.api import decode_files
    from fixtures.lab import Lab

    if not shutil.which("mariadb") or not shutil.which("mariadbd"):
        pytest.skip("the MariaDB server and client are needed")
    path = corpus / rel
    tables: dict[str, Counter] = {}
    end = 0

    def row(img) -> tuple:
        return tuple(None if v is None else v.value.decode() if isinstance(v.value, bytes) else v.value
                     for _i, v in img)
    for ev in decode_files([path], rows=True):
        if getattr(ev, "rows", None) is None or ev.table is None:
            continue
        assert ev.raw.type_code in (20, 21, 22), ev.raw.type_code
        have = tables.setdefault(f"`{ev.table.db}`.`{ev.table.name}`", Counter())
        for r in ev.rows:
            if r["before"] is not None:
                assert have[row(r["before"])] > 0, (ev.raw.offset, r)  # the row the event finds
                have[row(r["before"])] -= 1
            if r["after"] is not None:
                have[row(r["after"])] += 1
        end = ev.raw.offset + len(ev.raw.data)
    assert tables and end
    with Lab(tmp_path) as lab:
        s = lab.server("primary", 1).start()
        s.execute("CREATE DATABASE test")
        sql = subprocess.run(["mariadb-binlog", f"--stop-position={end}", str(path)], capture_output=True,
                             check=True).stdout
        r = subprocess.run(["mariadb", "-S", str(s.socket), "-uroot"], input=sql, capture_output=True)
        assert r.returncode == 0, r.stderr
        for name, want in tables.items():
            got = Counter(tuple(d.values()) for d in s.query(f"SELECT * FROM {name}"))
            assert got == +want, (name, got, want)


# --- MariaDB 11.8 (fixtures/mariadb-11.8, its own mariadb-binlog from the lab's chroot) ---------
def _set_files(server: str):
    """The logs of ``server``'s replication-gtid set (primary binlogs, replica relay logs), one
    parameter each, marked with the kind whose tool is the oracle."""
    from fixtures import store

    d = store.materialize("replication-gtid", server=server)
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}", marks=pytest.mark.kind(server))
            for folder in ("primary", "replica-relay") for p in sorted((d / folder).iterdir())
            if p.name[-7:-6] == "." and p.name[-6:].isdigit()]


def _ours_and_11_8(path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    from fixtures.lab.oracle import mariadb_binlog_events

    want, _stderr, rc = mariadb_binlog_events(path, kind="mariadb-11.8")
    assert rc == 0
    return [decode(raw) for raw in open_binlog(str(path))], want


@pytest.mark.parametrize("path", _set_files("mariadb-11.8"))
def test_same_events_as_mariadb_binlog_11_8(path, monkeypatch):
    """Offsets, end_log_pos, server ids, kinds and (but for GTID) the header text equal
    MariaDB 11.8.9's mariadb-binlog, on files MariaDB 11.8 wrote."""
    ours, want = _ours_and_11_8(path, monkeypatch)
    # GTID lines' text: test_gtid_lines_as_mariadb_binlog_11_8
    assert_same_events(ours, want, KIND, SAME_TEXT - {"GTID"}, gtid_field=True)


@pytest.mark.kind("mariadb-11.8")
def test_gtid_lines_as_mariadb_binlog_11_8(monkeypatch):
    """GTID lines equal mariadb-binlog 11.8's: thread_id=N, START ALTER / COMMIT ALTER id= N."""
    from fixtures import store

    d = store.materialize("replication-gtid", server="mariadb-11.8")
    seen = 0
    for path in sorted((d / "primary").glob("mariadb-bin.0?????")):
        ours, want = _ours_and_11_8(path, monkeypatch)
        for ev, w in zip(ours, want):
            if ev.name == "GTID":
                seen += 1
                assert header_line(ev, utc=True).split("\t", 1)[1] == w.info, (path.name, ev.raw.offset)
    assert seen > 250


# --- MySQL 9.7 (fixtures/mysql-9.7, its own mysqlbinlog from the lab's chroot) --------------------
MYSQL_KIND = {"Format_desc": "Start", "Previous_gtids": "Previous-GTIDs", "Gtid": "GTID",
              "Gtid_tagged": "GTID", "Transaction_payload": "Transaction_Payload", "XA_prepare": "XA"}
MYSQL_SAME_TEXT = {"Format_desc", "Previous_gtids", "Rotate", "Rows_query", "Table_map", "Xid", "Query"}


def _ours_and_9_7(path, monkeypatch):
    """Our events and mysqlbinlog -vv's (-vv: without it Rows_query events print no header), the
    events inside compressed transactions left out (mysqlbinlog prints them under the payload's
    end position, they are not events of the file)."""
    import re

    from fixtures.lab.kinds import binlog_tool, kind
    from fixtures.lab.oracle import parse_mariadb_binlog

    monkeypatch.setenv("TZ", "UTC")
    res = binlog_tool(kind("mysql-9.7"), path, "-vv", "--base64-output=decode-rows")
    assert res.returncode == 0, res.stderr
    text = re.sub(r"# Start of compressed events.*?# End of compressed events\.?\n", "", res.stdout, flags=re.S)
    return [decode(raw) for raw in open_binlog(str(path))], parse_mariadb_binlog(text)


@pytest.mark.parametrize("path", _set_files("mysql-9.7"))
def test_same_events_as_mysqlbinlog_9_7(path, monkeypatch):
    """Offsets, end_log_pos, server ids and kinds equal MySQL 9.7.4's mysqlbinlog on files MySQL
    9.7 wrote (compressed transactions, a tagged GTID, XA, PARTIAL_UPDATE_ROWS), and the header
    text for the kinds both print the same way."""
    ours, want = _ours_and_9_7(path, monkeypatch)
    assert_same_events(ours, want, MYSQL_KIND, MYSQL_SAME_TEXT, gtid_field=False)


@pytest.mark.parametrize("path", _set_files("mysql-9.7"))
def test_every_header_line_as_mysqlbinlog_9_7(path, monkeypatch):
    """Every header line as MySQL 9.7.4's mysqlbinlog prints it: GTID lines with
    original_committed_timestamp / immediate_commit_timestamp, ``Xid = N`` on atomic DDL
    Query events, the rows events' USE_SQL_FOREIGN_KEY_F flag, ``XA PREPARE`` heads,
    Transaction_Payload's double tab."""
    ours, want = _ours_and_9_7(path, monkeypatch)
    assert len(ours) == len(want)
    for ev, w in zip(ours, want):
        assert header_line(ev, utc=True).split("\t", 1)[1] == w.info, (ev.raw.offset, ev.name)


SAMPLES_9_7 = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "mysql-9.7"


def _blocks(text: str) -> dict[str, list[str]]:
    """``# at N`` -> the lines up to the next ``# at``."""
    out: dict[str, list[str]] = {}
    at = None
    for line in text.splitlines():
        if line.startswith("# at "):
            at = line
            out[at] = []
        elif at is not None:
            out[at].append(line)
    return out


@pytest.mark.parametrize("path", sorted(SAMPLES_9_7.glob("*.0*")), ids=lambda p: p.name)
def test_gtid_blocks_as_mysqlbinlog_9_7(path):
    """A MySQL GTID event's lines as mysqlbinlog 9.7 printed them (its output stored beside the
    samples): the header with the commit timestamps, the isolation level of a row-only
    transaction, the ``# original_commit_timestamp=… (… UTC)`` comments, the session
    variables, GTID_NEXT."""
    from binlogkit.render import render_text

    want = _blocks((SAMPLES_9_7 / "expected" / f"{path.name}.mysqlbinlog-v.txt").read_text())
    ours = _blocks("".join(render_text(decode(raw), utc=True) for raw in open_binlog(str(path))))
    seen = 0
    for at, lines in want.items():
        if lines and "\tGTID\t" in lines[0]:
            seen += 1
            assert ours[at] == lines, at
    assert seen


@pytest.mark.kind("mysql-9.7")
def test_gtid_blocks_as_mysqlbinlog_9_7_on_the_set(monkeypatch):
    """The same, against MySQL 9.7.4's own mysqlbinlog (the lab's chroot) on every file of the
    set: plain and tagged GTIDs, row-only and DDL transactions, primary and relay logs."""
    from binlogkit.render import render_text
    from fixtures.lab.kinds import binlog_tool, kind

    monkeypatch.setenv("TZ", "UTC")
    seen = 0
    for param in _set_files("mysql-9.7"):
        (path,) = param.values
        res = binlog_tool(kind("mysql-9.7"), path, "-v", "--base64-output=decode-rows")
        assert res.returncode == 0, res.stderr
        want = _blocks(res.stdout)
        ours = _blocks("".join(render_text(decode(raw), utc=True) for raw in open_binlog(str(path))))
        for at, lines in want.items():
            if lines and "\tGTID\t" in lines[0]:
                seen += 1
                assert ours[at] == lines, (path.name, at)
    assert seen > 100

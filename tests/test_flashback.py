"""flashback from files alone: the committed fixtures of a real MariaDB 10.11 (FULL then MINIMAL
row images, DDL, every column family), relay logs, MySQL 8 files of the corpus (rows, a ZSTD
Transaction_payload, a partial JSON update) and binlogs built with the codecs (hypothesis:
flashback of flashback = the original rows events, for both flavors).

The real-server replays (the undo makes the tables equal their snapshot) are in
test_flashback_e2e.py.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlogkit.api import decode_files, gtid_matcher, verify_files
from binlogkit.codecs.rows import RowsBody, TableMapBody
from binlogkit.constants import EventType as T
from binlogkit.errors import BinlogError, WriteRefused
from binlogkit.reading.events import build_event
from binlogkit.flashback import FlashbackRefused, flashback
from binlogkit.flashback.invert import ROWS_TYPES
from binlogkit.rowvalues.values import dec_size
from fixtures import store

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
WRITES = {T.WRITE_ROWS_EVENT, T.WRITE_ROWS_EVENT_V1, T.WRITE_ROWS_COMPRESSED_EVENT, T.WRITE_ROWS_COMPRESSED_EVENT_V1}
DELETES = {T.DELETE_ROWS_EVENT, T.DELETE_ROWS_EVENT_V1, T.DELETE_ROWS_COMPRESSED_EVENT,
           T.DELETE_ROWS_COMPRESSED_EVENT_V1}


@pytest.fixture(scope="module")
def fm() -> Path:
    """row-types-full-metadata: 0-1-8..13 inserts, 0-1-19..42 FULL updates and deletes, 0-1-43..
    MINIMAL images; DDL in 0-1-1..7 and 0-1-14..18."""
    return store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.index"


def rows_events(path, **kw) -> list:
    """(kind, table, rows) of every rows event, rows as decoded values: kind w/d/u."""
    out = []
    for ev in decode_files([path], rows=True, **kw):
        code = ev.raw.type_code
        if code in ROWS_TYPES:
            kind = "w" if code in WRITES else "d" if code in DELETES else "u"
            rows = [(tuple(r["before"] or ()), tuple(r["after"] or ())) for r in ev.rows]
            out.append((kind, f"{ev.table.db}.{ev.table.name}", rows))
    return out


def inverse(events: list) -> list:
    """What the undo of ``events`` must hold, computed from decoded rows, independently of
    the inversion code: events and rows in reverse order, w <-> d, before <-> after."""
    out = []
    for kind, table, rows in reversed(events):
        if kind == "u":
            out.append(("u", table, [(a, b) for b, a in reversed(rows)]))
        else:
            # a write's row is its after image, a delete's its before image
            out.append(({"w": "d", "d": "w"}[kind], table,
                        [(a, b) for b, a in reversed(rows)]))
    return out


def raw_rows(path, **kw) -> list:
    """(type code, column bitmaps, row bytes) of every rows event: byte-exact comparisons."""
    out = []
    for ev in decode_files([path], **kw):
        if ev.raw.type_code in ROWS_TYPES:
            p = ev.parsed
            out.append((ev.raw.type_code, bytes(p["columns_before_image"]),
                        None if p["columns_after_image"] is None else bytes(p["columns_after_image"]),
                        bytes(p["rows"])))
    return out


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlogkit.cli", "flashback", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))


# -- real MariaDB files ------------------------------------------------------------------------

def test_undo_is_the_exact_inverse_and_flashback_twice_is_the_original(fm, tmp_path):
    once, twice = tmp_path / "once.bin", tmp_path / "twice.bin"
    res = flashback([fm], once, gtids=gtid_matcher("0-1-8..42"), skip_statements=True)
    assert (res.transactions, res.undone) == (30, 30) and res.rows == 56
    assert [s["gtid"] for s in res.skipped] == [f"0-1-{n}" for n in range(14, 19)]
    (v,) = verify_files([once])
    assert v.ok and v.events == res.events and v.size == res.bytes == once.stat().st_size
    original = rows_events(fm, include_gtids=gtid_matcher("0-1-8..42"))
    assert len(original) == 32 and res.events == 1 + 30 * 2 + 32 * 2
    assert rows_events(once) == inverse(original)
    flashback([once], twice)
    assert rows_events(twice) == original
    assert raw_rows(twice) == raw_rows(fm, include_gtids=gtid_matcher("0-1-8..42"))


def test_the_undo_keeps_table_maps_and_terminators_and_no_gtid(fm, tmp_path):
    out = tmp_path / "u.bin"
    flashback([fm], out, gtids=gtid_matcher("0-1-19..21"))
    names = [ev.raw.type_code for ev in decode_files([out])]
    assert names[0] == T.FORMAT_DESCRIPTION_EVENT
    shape = "".join("B" if c == T.QUERY_EVENT else "M" if c == T.TABLE_MAP_EVENT else "R" if c in ROWS_TYPES
                    else "X" if c == T.XID_EVENT else "?" for c in names[1:])
    assert shape == "BMRX" * 3        # BEGIN, Table_map, rows, Xid; no GTID event, nothing else
    for ev in decode_files([out]):
        if ev.raw.type_code in ROWS_TYPES:
            assert ev.parsed["flags"] & 1        # STMT_END_F: every undo event is a statement
        assert ev.raw.log_pos == ev.raw.offset + ev.raw.event_size


def test_minimal_images_are_refused_and_nothing_is_written(fm, tmp_path):
    out = tmp_path / "u.bin"
    with pytest.raises(FlashbackRefused, match="MINIMAL") as exc:
        flashback([fm], out, gtids=gtid_matcher("0-1-40..45"))
    assert exc.value.file.endswith("mariadb-bin.000003") and exc.value.offset and exc.value.event_type
    assert not out.exists() and list(tmp_path.iterdir()) == []
    r = cli(fm, "-o", out, "--include-gtids", "0-1-43")
    assert r.returncode == 2 and "refused" in r.stderr and "MINIMAL" in r.stderr and not out.exists()


def test_statements_are_named_and_refused_or_left_out(fm, tmp_path):
    out = tmp_path / "u.bin"
    r = cli(fm, "-o", out, "--include-gtids", "0-1-1..10")
    assert r.returncode == 2 and not out.exists()
    assert "7 statement(s)" in r.stderr and "0-1-1: 'CREATE DATABASE types'" in r.stderr and "and 2 more" in r.stderr
    r = cli(fm, "-o", out, "--include-gtids", "0-1-1..10", "--skip-statements", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["undone"] == 3 and [s["gtid"] for s in doc["skipped"]] == [f"0-1-{n}" for n in range(1, 8)]
    assert doc["bytes"] == out.stat().st_size
    r = cli(fm, "-o", tmp_path / "v.bin", "--include-gtids", "0-1-1..7", "--skip-statements")
    assert r.returncode == 2 and "only statements" in r.stderr


def test_a_range_cutting_a_transaction_is_refused(fm, tmp_path):
    f1 = fm.parent / "mariadb-bin.000001"
    with pytest.raises(FlashbackRefused, match=r"--start-position 3100 cuts 0-1-9 .*start at 3018"):
        flashback([f1], tmp_path / "u.bin", start_position=3100)
    with pytest.raises(FlashbackRefused, match=r"--stop-position 3100 cuts 0-1-9 .*stop at 3608"):
        flashback([f1], tmp_path / "u.bin", start_position=2333, stop_position=3100)
    res = flashback([f1], tmp_path / "u.bin", start_position=2333, stop_position=3608)
    assert res.first_gtid == "0-1-8" and res.last_gtid == "0-1-9"


def test_filters(fm, tmp_path):
    res = flashback([fm], tmp_path / "a.bin", gtids=gtid_matcher("0-1-8..42"), skip_statements=True,
                    table="types.ints")
    tables = {t for _k, t, _r in rows_events(tmp_path / "a.bin")}
    assert tables == {"types.ints"} and res.undone == 2
    res = flashback([fm], tmp_path / "b.bin", gtids=gtid_matcher("0-1-8..42"), skip_statements=True,
                    database="types")
    assert res.undone == 30
    with pytest.raises(FlashbackRefused, match="no row change"):
        flashback([fm], tmp_path / "c.bin", gtids=gtid_matcher("0-1-8..42"), skip_statements=True, database="nope")
    assert not (tmp_path / "c.bin").exists()
    with pytest.raises(FlashbackRefused, match="DB.TABLE"):
        flashback([fm], tmp_path / "c.bin", table="ints")


def test_output_is_never_replaced_without_force_nor_written_through_a_link(fm, tmp_path):
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "u.bin"
    out.write_bytes(b"keep")
    r = cli(fm, "-o", out, "--include-gtids", "0-1-8")
    assert r.returncode == 2 and "--force" in r.stderr and out.read_bytes() == b"keep"
    r = cli(fm, "-o", out, "--include-gtids", "0-1-8", "--force")
    assert r.returncode == 0 and verify_files([out])[0].ok
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith("out.binlogkit-flashback-")]
    assert (kept / "u.bin").read_bytes() == b"keep" and f"the file it replaced is in {kept}" in r.stderr
    res = flashback([fm], out, gtids=gtid_matcher("0-1-9"), force=True, backup_dir=tmp_path / "old")
    assert res.backup == str(tmp_path / "old") and verify_files([tmp_path / "old" / "u.bin"])[0].ok
    target = outdir / "target"
    target.write_bytes(b"precious")
    link = outdir / "link.bin"
    link.symlink_to(target)
    with pytest.raises(WriteRefused, match="symbolic link"):
        flashback([fm], link, gtids=gtid_matcher("0-1-8"), force=True)
    assert target.read_bytes() == b"precious" and link.is_symlink()
    assert sorted(p.name for p in outdir.iterdir()) == ["link.bin", "target", "u.bin"]
    # the output is never one of the inputs, even with --force
    src = outdir / "mariadb-bin.000001"
    src.write_bytes((fm.parent / "mariadb-bin.000001").read_bytes())
    with pytest.raises(WriteRefused, match="one of the inputs"):
        flashback([src], src, gtids=gtid_matcher("0-1-8"), force=True)
    assert src.read_bytes() == (fm.parent / "mariadb-bin.000001").read_bytes()


def test_damaged_input_exits_1_and_writes_nothing(fm, tmp_path):
    data = bytearray((fm.parent / "mariadb-bin.000001").read_bytes())
    data[3400] ^= 0xFF                        # inside 0-1-9's rows event: its CRC no longer matches
    bad = tmp_path / "mariadb-bin.000001"
    bad.write_bytes(bytes(data))
    with pytest.raises(BinlogError) as exc:
        flashback([bad], tmp_path / "u.bin")
    assert not isinstance(exc.value, FlashbackRefused) and exc.value.file == str(bad)
    r = cli(bad, "-o", tmp_path / "u.bin")
    assert r.returncode == 1 and "mariadb-bin.000001" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "u.bin").exists()
    r = cli(tmp_path / "nothing-here", "-o", tmp_path / "u.bin")
    assert r.returncode == 2


def test_later_changes_to_restored_rows_are_named(fm, tmp_path):
    """0-1-8..13 insert rows that 0-1-34..36 (FULL images) update later: those rows are named
    with their count; 0-1-43.. update with MINIMAL images: named at table level (rows None)."""
    res = flashback([fm], tmp_path / "u.bin", gtids=gtid_matcher("0-1-8..13"))
    got = [(c["gtid"], c["table"], c["rows"]) for c in res.later["conflicts"]]
    assert got[:3] == [("0-1-34", "types.ints", 1), ("0-1-35", "types.strs", 1), ("0-1-36", "types.extra", 1)]
    assert all(rows is None for _g, _t, rows in got[3:]) and res.later["total"] == len(got)
    assert flashback([fm], tmp_path / "v.bin", gtids=gtid_matcher("0-1-8..13"), check_later=False).later is None
    # 0-1-41 updates types.allcs, which no later transaction touches
    res = flashback([fm], tmp_path / "w.bin", gtids=gtid_matcher("0-1-41"))
    assert [c["table"] for c in res.later["conflicts"]] == []
    r = cli(fm, "-o", tmp_path / "x.bin", "--include-gtids", "0-1-8..13")
    assert r.returncode == 0 and "warning: a later transaction 0-1-34 (mariadb-bin.000003:3798) changed 1 row(s) " \
        "of types.ints" in r.stderr


def test_inputs_are_only_read_and_archives_work(tmp_path, monkeypatch):
    """The committed .xz of the fixture as input (decompressed to a temporary file first);
    every open of an input is read-only (the output goes through safeio, not open())."""
    import builtins
    import lzma

    opened = []
    real_open, real_lzma = builtins.open, lzma.open
    monkeypatch.setattr(builtins, "open", lambda f, mode="r", *a, **k: (opened.append((str(f), mode)),
                                                                         real_open(f, mode, *a, **k))[1])
    monkeypatch.setattr(lzma, "open", lambda f, mode="rb", *a, **k: (opened.append((str(f), mode)),
                                                                      real_lzma(f, mode, *a, **k))[1])
    src = store.SETS_DIR / "row-types-full-metadata" / "primary" / "mariadb-bin.000001.xz"
    res = flashback([src], tmp_path / "u.bin", gtids=gtid_matcher("0-1-8..11"))
    assert res.undone == 4
    inputs = [(f, m) for f, m in opened if f.startswith(str(store.SETS_DIR)) or "binlogkit-flashback-" in f]
    assert any(f == str(src) for f, _m in inputs) and all(set(m) <= {"r", "b", "t"} for _f, m in inputs), inputs
    monkeypatch.setattr(builtins, "open", real_open)
    plain = store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000001"
    flashback([plain], tmp_path / "v.bin", gtids=gtid_matcher("0-1-8..11"))
    assert raw_rows(tmp_path / "u.bin") == raw_rows(tmp_path / "v.bin") and plain.exists()


def test_choose_one_range(fm, tmp_path):
    r = cli(fm, "-o", tmp_path / "u.bin", "--start-position", "4", "--include-gtids", "0-1-8")
    assert r.returncode == 2 and "choose one range" in r.stderr


def test_sql_output_writes_statements_with_exact_literals(fm, tmp_path):
    out = tmp_path / "u.sql"
    res = flashback([fm], out, gtids=gtid_matcher("0-1-8..42"), skip_statements=True, sql=True)
    text = out.read_text()
    # one transaction (a failed replay changes nothing), each undo transaction after its comment
    assert res.undone == 30 and text.count("BEGIN;\n") == 1 == text.count("COMMIT;\n") and text.endswith("COMMIT;\n")
    undone = [*range(42, 18, -1), *range(13, 7, -1)]                        # last first; 14..18 are DDL
    assert [line for line in text.splitlines() if line.startswith("-- undo of ")] == [f"-- undo of 0-1-{n}" for n in undone]
    assert "@binlogkit_generated" not in text          # MariaDB ignores values of generated columns: no check
    assert "DELETE FROM `types`.`ints` WHERE `id`=1 LIMIT 1;" in text          # undo of an INSERT
    assert "INSERT INTO `types`.`exactnums` (`id`, " in text                    # undo of a DELETE
    assert "`f`=1.100000023841858e0" in text                                    # FLOAT as its exact double
    assert "_cp1251 X'" in text and "_ucs2 X'" in text                          # charsets by introducer


def test_sql_needs_column_names(tmp_path):
    plain = store.materialize("row-types") / "primary" / "mariadb-bin.index"
    with pytest.raises(FlashbackRefused, match="binlog_row_metadata=FULL"):
        flashback([plain], tmp_path / "u.sql", gtids=gtid_matcher("0-1-8"), sql=True)
    assert not (tmp_path / "u.sql").exists()


def test_relay_logs_give_the_same_undo_as_the_primary_binlogs(tmp_path):
    d = store.materialize("replication-gtid")
    relay = sorted((d / "replica-relay").glob("*.index"))
    assert relay, list((d / "replica-relay").iterdir())
    rng = "0-1-100..160"
    a, b = tmp_path / "from-relay.bin", tmp_path / "from-primary.bin"
    ra = flashback(relay, a, gtids=gtid_matcher(rng), skip_statements=True)
    rb = flashback([d / "primary" / "mariadb-bin.index"], b, gtids=gtid_matcher(rng), skip_statements=True)
    assert ra.undone == rb.undone > 0 and ra.rows == rb.rows > 0
    assert raw_rows(a) == raw_rows(b)


def test_mariadb_compressed_rows_events_are_inverted_and_xa_refused(tmp_path):
    """compressed-events: a real MariaDB with log_bin_compress (Write/Update/Delete_compressed_rows)
    and an XA transaction."""
    src = store.materialize("compressed-events") / "primary" / "mariadb-bin.000001"
    out, twice = tmp_path / "u.bin", tmp_path / "twice.bin"
    res = flashback([src], out, gtids=gtid_matcher("0-1-6..205"), check_later=False)
    original = rows_events(src, include_gtids=gtid_matcher("0-1-6..205"))
    kinds = {ev.raw.type_code for ev in decode_files([src], include_gtids=gtid_matcher("0-1-6..205"))}
    assert {T.WRITE_ROWS_COMPRESSED_EVENT_V1, T.UPDATE_ROWS_COMPRESSED_EVENT_V1,
            T.DELETE_ROWS_COMPRESSED_EVENT_V1} <= kinds or {T.WRITE_ROWS_COMPRESSED_EVENT} <= kinds, kinds
    assert res.undone == 200 and len(original) > 150 and rows_events(out) == inverse(original)
    assert not {c for c, *_ in raw_rows(out)} & {166, 167, 168, 169, 170, 171}    # written back plain
    flashback([out], twice)
    assert rows_events(twice) == original
    with pytest.raises(FlashbackRefused, match="XA transaction"):
        flashback([src], tmp_path / "xa.bin", skip_statements=True)
    assert not (tmp_path / "xa.bin").exists()


# -- MySQL 8 files (corpus) ------------------------------------------------------------------------

def _corpus(rel: str) -> Path:
    p = CORPUS / rel
    if not p.exists():
        pytest.skip(f"{p} absent (../shared/corpus)")
    return p


def test_mysql_8_rows_are_inverted(tmp_path):
    src = _corpus("mysql/mysql-test/std_data/replicated-bin.000001")
    out = tmp_path / "u.bin"
    with pytest.raises(FlashbackRefused, match="'create table t1"):
        flashback([src], out)
    res = flashback([src], out, skip_statements=True)
    assert res.undone == 4 and res.first_gtid == "2d6e8214-9918-11ec-ac13-0010e0dc39c0:1"
    assert rows_events(out) == inverse(rows_events(src)) and len(rows_events(out)) == 4
    assert all(code == T.DELETE_ROWS_EVENT for code, *_ in raw_rows(out))
    head = next(iter(decode_files([out])))
    assert head.fields["server_version"].startswith("8.0.29") and verify_files([out])[0].ok
    text = subprocess.run([sys.executable, "-m", "binlogkit.cli", "decode", "--base64-output=decode-rows", "-v", str(out)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    assert "### DELETE FROM `test`.`t1`" in text
    flashback([out], tmp_path / "twice.bin")
    assert raw_rows(tmp_path / "twice.bin") == raw_rows(src)


def test_mysql_8_compressed_transaction_is_inverted_and_partial_json_refused(tmp_path, monkeypatch):
    src = _corpus("mariadb/mysql-test/std_data/mdev35643_mysql_80_binlog.000001")
    out = tmp_path / "u.bin"
    res = flashback([src], out, start_position=1389, stop_position=2297)     # the ZSTD Transaction_payload
    assert res.undone == 1 and res.rows == 100
    from binlogkit.flashback import undo
    monkeypatch.setattr(undo, "SPILL", 1)          # its rows events spilled to disk, not kept in memory
    flashback([src], tmp_path / "spilled.bin", start_position=1389, stop_position=2297)
    assert (tmp_path / "spilled.bin").read_bytes() == out.read_bytes()
    inner = rows_events(src, start_position=1389, payloads=True)[:100]
    assert len(inner) == 100 and rows_events(out) == inverse(inner)
    assert verify_files([out])[0].ok
    flashback([out], tmp_path / "twice.bin")
    assert rows_events(tmp_path / "twice.bin") == inner
    with pytest.raises(FlashbackRefused, match="partial JSON"):
        flashback([src], tmp_path / "all.bin", start_position=3190)
    with pytest.raises(FlashbackRefused, match="INSERT INTO t2"):         # statement-format DML
        flashback([src], tmp_path / "all.bin", start_position=2821, stop_position=3190)
    assert not (tmp_path / "all.bin").exists()


# -- built files: flashback of flashback is the identity (hypothesis) ------------------------------

# (type, metadata bytes, value bytes for a random row)
def _column(draw):
    kind = draw(st.sampled_from(["tiny", "short", "int24", "long", "longlong", "float", "double", "varchar",
                                 "varchar2", "blob", "datetime2", "timestamp2", "decimal", "bit"]))
    if kind in ("tiny", "short", "int24", "long", "longlong"):
        t, n = {"tiny": (1, 1), "short": (2, 2), "int24": (9, 3), "long": (3, 4), "longlong": (8, 8)}[kind]
        return t, b"", lambda r: r.randbytes(n)
    if kind == "float":
        return 4, b"\x04", lambda r: r.randbytes(4)
    if kind == "double":
        return 5, b"\x08", lambda r: r.randbytes(8)
    if kind in ("varchar", "varchar2"):
        top = draw(st.integers(1, 255)) if kind == "varchar" else draw(st.integers(256, 2000))
        lb = 1 if top < 256 else 2
        return 15, top.to_bytes(2, "little"), lambda r: (lambda s: len(s).to_bytes(lb, "little") + s)(
            r.randbytes(r.randint(0, min(top, 300))))
    if kind == "blob":
        lb = draw(st.sampled_from([1, 2, 3, 4]))
        return 252, bytes([lb]), lambda r: (lambda s: len(s).to_bytes(lb, "little") + s)(r.randbytes(r.randint(0, 200)))
    if kind in ("datetime2", "timestamp2"):
        fsp = draw(st.integers(0, 6))
        n = (5 if kind == "datetime2" else 4) + (fsp + 1) // 2
        return (18 if kind == "datetime2" else 17), bytes([fsp]), lambda r: r.randbytes(n)
    if kind == "decimal":
        prec = draw(st.integers(1, 65))
        scale = draw(st.integers(0, min(prec, 30)))
        n = dec_size(prec - scale) + dec_size(scale)
        return 246, bytes([prec, scale]), lambda r: bytes([0x80 | r.randrange(0x80)]) + r.randbytes(n - 1)
    nbits = draw(st.integers(1, 64))
    return 16, bytes([nbits % 8, nbits // 8]), lambda r: r.randbytes((nbits + 7) // 8)


@st.composite
def workloads(draw):
    cols = [_column(draw) for _ in range(draw(st.integers(1, 12)))]
    seed = draw(st.integers(0, 2 ** 32))
    txs = draw(st.lists(st.lists(st.tuples(st.sampled_from("wud"), st.integers(1, 6)), min_size=1, max_size=4),
                        min_size=1, max_size=5))
    flavor = draw(st.sampled_from(["mysql", "mariadb"]))
    v1 = draw(st.booleans()) and flavor == "mariadb"
    return cols, seed, txs, flavor, v1


def _image(cols, r: random.Random) -> bytes:
    n = len(cols)
    nulls = r.getrandbits(n) if r.random() < 0.5 else 0
    out = bytearray(nulls.to_bytes((n + 7) // 8, "little"))
    for k, (_t, _m, value) in enumerate(cols):
        if not nulls >> k & 1:
            out += value(r)
    return bytes(out)


def _fde(flavor: str) -> bytes:
    """A Format_description of a real server: MariaDB 10.11 (a fixture) or MySQL 8.4 (built)."""
    if flavor == "mysql":
        from fixtures.built_mysql import BinlogBuilder
        data = bytes(BinlogBuilder().data)
    else:
        data = (store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000003").read_bytes()
    size = int.from_bytes(data[4 + 9:4 + 13], "little")
    return data[:4 + size]


def build_binlog(cols, seed, txs, flavor, v1) -> bytes:
    r = random.Random(seed)
    data = bytearray(_fde(flavor))
    ts = 1_700_000_000

    def add(code, body, flags=0):
        at = len(data)
        data.extend(build_event(type_code=code, body=body, timestamp=ts, server_id=1,
                                log_pos=at + 19 + len(body) + 4, flags=flags, checksum=True))

    types = bytes(c[0] for c in cols)
    meta = b"".join(c[1] for c in cols)
    tmap = TableMapBody.build({"table_id": 77, "flags": 1, "len_db": 2, "db": b"db", "len_table": 1, "table": b"t",
                               "column_count": len(cols), "column_types": types,
                               "metadata_part": {"len_metadata": len(meta), "metadata": meta,
                                                 "null_bitmap": b"\xff" * ((len(cols) + 7) // 8),
                                                 "optional_metadata": b""}},
                              post_header_len=8, len_body=0, type_code=T.TABLE_MAP_EVENT)
    codes = ({"w": T.WRITE_ROWS_EVENT_V1, "u": T.UPDATE_ROWS_EVENT_V1, "d": T.DELETE_ROWS_EVENT_V1} if v1 else
             {"w": T.WRITE_ROWS_EVENT, "u": T.UPDATE_ROWS_EVENT, "d": T.DELETE_ROWS_EVENT})
    full = b"\xff" * ((len(cols) + 7) // 8)
    for i, tx in enumerate(txs):
        from fixtures.built_mysql import QueryBody
        add(T.QUERY_EVENT, QueryBody.build({"thread_id": 8, "exec_time": 0, "len_db": 0, "error_code": 0,
                                            "len_status_vars": 0, "load": None, "post_header_extra": b"",
                                            "status_vars": b"", "db": b"", "query": b"BEGIN"},
                                           type_code=T.QUERY_EVENT, post_header_len=13, len_body=0))
        for j, (kind, nrows) in enumerate(tx):
            add(T.TABLE_MAP_EVENT, tmap)
            rows = b"".join(_image(cols, r) + (_image(cols, r) if kind == "u" else b"") for _ in range(nrows))
            code = codes[kind]
            body = RowsBody.build({"table_id": 77, "flags": 1 if j == len(tx) - 1 else 0,
                                   "len_extra_data": None if v1 else 2, "extra_data": b"", "width": len(cols),
                                   "columns_before_image": full, "columns_after_image": full if kind == "u" else None,
                                   "rows": rows}, post_header_len=8 if v1 else 10, len_body=0, type_code=code)
            add(code, body)
        add(T.XID_EVENT, (1000 + i).to_bytes(8, "little"))
    return bytes(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workloads())
def test_flashback_of_flashback_is_the_identity_on_built_binlogs(tmp_path_factory, w):
    d = tmp_path_factory.mktemp("fb")
    src = d / "built-bin.000001"
    src.write_bytes(build_binlog(*w))
    once, twice = d / "once.bin", d / "twice.bin"
    res = flashback([src], once)
    assert res.undone == len(w[2]) and res.rows == sum(n for tx in w[2] for _k, n in tx)
    assert verify_files([once])[0].ok
    a = raw_rows(once)
    kinds = [k for tx in reversed(w[2]) for k, _n in reversed(tx)]
    assert [{"w": "d", "d": "w", "u": "u"}[k] for k in kinds] == [
        {T.DELETE_ROWS_EVENT: "d", T.DELETE_ROWS_EVENT_V1: "d", T.WRITE_ROWS_EVENT: "w",
         T.WRITE_ROWS_EVENT_V1: "w"}.get(code, "u") for code, *_ in a]
    flashback([once], twice)
    assert raw_rows(twice) == raw_rows(src)


def test_pre_ga_rows_are_refused_not_misread(tmp_path):
    """MySQL 5.1.17's pre-GA rows events hold the table's own record layout: refused with a
    clear reason (exit 2), nothing written -- they were cut with the v1 layout and failed."""
    src = _corpus("mysql/mysql-test/suite/binlog/std_data/ver_5_1_17.001")
    r = cli(src, "-o", tmp_path / "u.bin", "--start-position", "421", "--stop-position", "1027", "--skip-statements")
    assert r.returncode == 2 and "pre-GA rows events" in r.stderr, r.stderr
    assert not (tmp_path / "u.bin").exists()


# -- a filtered undo and the statements of other tables --------------------------------------------

def test_filtered_undo_passes_ddl_and_xa_of_other_tables_and_refuses_the_filtered_tables_own(tmp_path):
    """The lab's MySQL 9.7 primary (committed fixture): --table lab.small over the folder is
    refused for the one statement on lab.small (its CREATE TABLE), not for the DDL of lab.big,
    types.* or the XA transactions of lab.acct; a range after that CREATE writes the undo of
    lab.small's rows alone, and the summary names what it left as it is (before: refused, 17
    statements of every table named)."""
    src = ROOT / "fixtures" / "mysql-9.7" / "replication-gtid" / "primary"
    uuid = "84d99cf6-e8f4-11f1-896e-02fc00000001"
    p = cli(src, "--table", "lab.small", "-o", tmp_path / "all.bin")
    assert p.returncode == 2 and "1 statement(s) in the range" in p.stderr, p.stderr
    assert f"{uuid}:2: 'CREATE TABLE IF NOT EXISTS lab.small" in p.stderr and "lab.big" not in p.stderr
    assert not (tmp_path / "all.bin").exists()
    out = tmp_path / "small.bin"
    p = cli(src, "--table", "lab.small", "-o", out, "--include-gtids", f"{uuid}:3-283", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    apart = {s["gtid"].split(":")[1]: s["statement"] for s in doc["outside"]}
    assert apart["3"].startswith("CREATE TABLE IF NOT EXISTS lab.big") and apart["6"] == "CREATE DATABASE types"
    assert {"229", "234", "257", "258", "259", "260"} <= set(apart) and "XA" in apart["258"], apart
    assert doc["skipped"] == [] and doc["undone"] == 241
    tables = {ev.fields.get("table") for ev in decode_files([out]) if ev.raw.type_code == T.TABLE_MAP_EVENT}
    assert tables == {"small"}, tables
    # every lab.small row change of the range is undone, last first, and nothing else
    original = [e for e in rows_events(src, include_gtids=gtid_matcher(f"{uuid}:3-283"), payloads=True)
                if e[1] == "lab.small"]
    assert rows_events(out) == inverse(original) and sum(len(e[2]) for e in original) == doc["rows"] == 242
    p = cli(src, "--table", "lab.small", "-o", tmp_path / "t.bin", "--include-gtids", f"{uuid}:3-283")
    assert p.returncode == 0 and "left as they are: 19 statement(s) or XA transaction(s)" in p.stderr, p.stderr
    # an XA COMMIT without its PREPARE part in the range: its rows could be a filtered table's
    p = cli(src, "--table", "lab.small", "-o", tmp_path / "xa.bin", "--include-gtids", f"{uuid}:200-256,{uuid}:258")
    assert p.returncode == 2 and "XA PREPARE part" in p.stderr and not (tmp_path / "xa.bin").exists(), p.stderr
    # the whole database filtered: its DDL blocks again
    p = cli(src, "--database", "lab", "-o", tmp_path / "db.bin", "--include-gtids", f"{uuid}:3-283")
    assert p.returncode == 2 and "lab.big" in p.stderr, p.stderr


@pytest.mark.parametrize("sql, db, apart", [
    ("CREATE TABLE lab.big (id INT PRIMARY KEY, note VARCHAR(32))", "", True),
    ("CREATE DATABASE IF NOT EXISTS lab", "", True),
    ("ALTER TABLE big ADD COLUMN n INT", "lab", True),
    ("DROP TABLE `lab`.`ddl_t2` /* generated by server */", "", True),
    ("GRANT SELECT ON lab.big TO 'u'@'%'", "", True),
    ("ALTER TABLE lab.small ADD COLUMN n INT", "", False),        # the filtered table's own DDL
    ("ALTER TABLE small ADD COLUMN n INT", "lab", False),          # by the default database
    ("RENAME TABLE lab.t TO lab.small", "", False),                # a table renamed to it
    ("TRUNCATE `lab`.`small`", "", False),
    ("/*!40000 ALTER TABLE lab.small DISABLE KEYS */", "", False),  # executable comment
    ("DROP DATABASE lab", "", False),                              # removes its tables
    ("CREATE OR REPLACE DATABASE lab", "", False),
    ("DROP DATABASE other", "", True),
    ("CREATE TABLE lab.c SELECT * FROM lab.big", "", False),       # rows written by a statement
    ("INSERT INTO lab.big VALUES (1, 'x')", "", False),            # DML: a trigger could change lab.small
    ("SELECT f()", "lab", False),
    ("SET STATEMENT max_statement_time=1 FOR ALTER TABLE lab.small ADD COLUMN n INT", "", False),
])
def test_which_statements_a_table_filter_leaves_apart(sql, db, apart):
    from binlogkit.flashback.scope import outside

    assert outside(sql, db, (), ("lab.small",)) is apart
    assert outside(sql, db, (), ()) is False     # no filter: every statement blocks


def test_a_database_filter_takes_every_name_of_its_database():
    from binlogkit.flashback.scope import outside

    assert outside("CREATE TABLE lab.big (id INT)", "", ("lab",), ()) is False
    assert outside("CREATE TABLE other.big (id INT)", "", ("lab",), ()) is True
    assert outside("DROP DATABASE lab", "", ("l*",), ()) is False

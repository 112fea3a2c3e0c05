"""Row images decoded to values: `decode -v` equals `mariadb-binlog -v` row for row on every
MariaDB-written fixture, and values survive as JSON."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from fixtures import store

from test_codecs import fixture_files


def _hash_lines(data: bytes, names: bool = False) -> list[bytes]:
    """The ### lines, byte for byte (trailing spaces too: mysqlbinlog pads FLOAT values);
    ``names``: without the `` /* name */`` we add when the binlog has names."""
    lines = [line for line in data.split(b"\n") if line.startswith(b"###")]
    return [re.sub(rb" /\* [^*]* \*/$", b"", line) for line in lines] if names else lines


@pytest.mark.server  # needs mariadb-binlog
@pytest.mark.parametrize("path", [p for p in fixture_files() if "relay" not in p.parent.name
                                  and "old-temporal" not in str(p)],  # mariadb-binlog cannot print those
                         ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_decode_v_equals_mariadb_binlog_v(path):
    if not shutil.which("mariadb-binlog"):
        pytest.skip("mariadb-binlog missing")
    want = subprocess.run(["mariadb-binlog", "-v", "--base64-output=decode-rows", "--skip-gtid-strict-mode", str(path)],
                          capture_output=True, env=dict(os.environ, TZ="UTC")).stdout
    got = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)]).stdout_bytes
    names = "full-metadata" in str(path)  # mariadb-binlog prints @N only; we add the names
    ours, theirs = _hash_lines(got, names), _hash_lines(want)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):  # byte for byte, raw string bytes and FLOAT padding included
        assert a == b or _server_over_mariadb_binlog(a, b), (a, b)
    assert (b" /* id */" in got) == (names and b"### INSERT" in got)


def _server_over_mariadb_binlog(ours: bytes, theirs: bytes) -> bool:
    """The documented exception (docs/rows.md): YEAR 0000 is 0 in SELECT and in our -v, where
    mariadb-binlog prints 1900 (it adds 1900 to the stored byte 0 too)."""
    m = re.fullmatch(rb"(###   @\d+=)0", ours)
    return m is not None and theirs == m.group(1) + b"1900"


def test_rows_json():
    path = store.materialize("replication-gtid") / "primary" / "mariadb-bin.000001"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "write_rows_v1", str(path)])
    first = json.loads(res.output.splitlines()[0])
    assert first["rows"] == [{"before": None, "after": {"@1": 1, "@2": 0, "@3": "row-00000000-",
                                                         "@4": "2024-01-01 00:00:00.000000"}}]


def test_values_equal_what_select_returned():
    """The row-types fixture: integer rows never changed after their INSERT equal the server's
    SELECT (the image has no signedness: the column type says which columns are unsigned)."""
    m = store.manifest("row-types")
    path = store.materialize("row-types") / "primary" / "mariadb-bin.000001"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "write_rows_v1", str(path)])
    rows = [r["after"] for line in res.output.splitlines() for r in json.loads(line)["rows"]
            if json.loads(line)["table"] == "types.ints"]
    sel = {row["id"]: row for row in m["select"]["ints"]}
    cols = ["id", "t", "tu", "s", "su", "m", "mu", "i", "iu", "b", "bu"]
    bits = [32, 8, 8, 16, 16, 24, 24, 32, 32, 64, 64]
    checked = 0
    for row in rows:
        if row["@1"] not in (1, 2):
            continue
        for k, c in enumerate(cols):
            got = row[f"@{k + 1}"]
            if c.endswith("u"):
                got %= 1 << bits[k]
            assert str(got) == sel[str(row["@1"])][c], (c, row)
            checked += 1
    assert checked == 22


def _expected_sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("Verbose statements from : "):
            current = line.split(" : ", 1)[1].strip()
            out[current] = []
        elif current and line.startswith("###"):
            out[current].append(line.rstrip())
        elif line.startswith("drop table"):
            current = None
    return out


def test_corpus_verbose_outputs(corpus):
    """MySQL-written files whose test suites hold the expected mysqlbinlog -v lines."""
    checked = 0
    for result in sorted((corpus / "expected").rglob("*row_mysqlbinlog_verbose*")):
        for name, want in _expected_sections(result.read_text(errors="replace")).items():
            src = next((p for p in corpus.rglob(name) if "expected" not in p.parts), None)
            if src is None:
                continue
            got = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(src)]).stdout_bytes.decode("utf-8", "replace")
            assert [l.rstrip() for l in got.splitlines() if l.startswith("###")] == want, (result.name, name)
            checked += 1
    assert checked >= 4


def test_full_row_metadata_gives_names_signedness_and_enum_strings():
    """binlog_row_metadata=FULL: JSON rows keyed by column name, unsigned columns unsigned,
    ENUM/SET as strings — equal to what the server's SELECT returned."""
    m = store.manifest("row-types-full-metadata")
    path = store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000001"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", str(path)])
    inserted: dict[str, dict] = {}
    for line in res.output.splitlines():
        ev = json.loads(line)
        if ev["type"] == "WRITE_ROWS_EVENT_V1":
            for r in ev["rows"]:
                inserted.setdefault(ev["table"], {})[str(r["after"]["id"])] = r["after"]
    checked = 0
    for want in m["select"]["ints"]:
        if want["id"] not in ("1", "2"):
            continue  # rows changed after their insert
        got = inserted["types.ints"][want["id"]]
        for col, value in want.items():
            assert (None if got[col] is None else str(got[col])) == value, col
            checked += 1
    strs = inserted["types.strs"]["1"]
    sel = next(r for r in m["select"]["strs"] if r["id"] == "1")
    assert strs["e"] == sel["e"] == "b" and strs["st"] == sel["st"] == "x,z"
    assert checked == 22


def _last_images(path, *args) -> dict[str, dict]:
    """id -> the last after image of each row of types.extra, as `decode -v --json` gives it."""
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", *args, str(path)])
    assert res.exit_code == 0, res.output
    last: dict[str, dict] = {}
    for line in res.output.splitlines():
        ev = json.loads(line)
        if ev.get("table") == "types.extra":
            for r in ev["rows"]:
                if r["after"] is not None:
                    last[str(r["after"].get("id", r["after"].get("@1")))] = r["after"]
    return last


def test_geometry_json_uuid_inet6_binary_and_wide_rows_equal_select():
    """MariaDB's extra types, with binlog_row_metadata=FULL: geometry as SRID + WKB, JSON text,
    BINARY(16) with the trailing zero bytes the binlog drops, a row over 8 KB, and UUID / INET6
    (logged as BINARY(16): shown as the server shows them when the user names their type)."""
    import hashlib

    m = store.manifest("row-types-full-metadata")
    path = store.materialize("row-types-full-metadata") / "primary"
    last = _last_images(path, "--column-type", "types.extra.u=uuid", "--column-type", "types.extra.i6=inet6")
    checked = 0
    for want in m["select"]["extra"]:
        got = last[want["id"]]
        for col in ("g", "pt", "pg"):
            if want[col] is None:
                assert got[col] is None
            else:
                assert got[col]["srid"].to_bytes(4, "little").hex() + got[col]["wkb"] == want[col], col
                checked += 1
        assert got["j"] == want["j"] and got["u"] == want["u"] and got["i6"] == want["i6"]
        assert (None if got["bn"] is None else got["bn"][2:]) == want["bn"]
        wide = None if got["wide"] is None else hashlib.sha256(got["wide"].encode()).hexdigest()
        assert wide == want["wide_sha256"]
        checked += 1
    assert checked == 9
    # without the hint, UUID / INET6 are what the binlog says: BINARY(16) bytes
    plain = _last_images(path)
    assert plain["1"]["u"] == "0x123e4567e89b12d3a456426655440000"
    assert plain["1"]["pt"] == {"srid": 4326, "wkb": "0101000000000000000000f83f00000000000000c0"}


def test_text_in_its_own_character_set_and_the_primary_key():
    """binlog_row_metadata=FULL names each text column's collation: latin1 (MySQL's cp1252),
    cp1251, ucs2, sjis, utf8mb4 and utf8mb3 values come out as the text SELECT returned; the
    event says which columns form the primary key."""
    m = store.manifest("row-types-full-metadata")
    path = store.materialize("row-types-full-metadata") / "primary"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "write_rows_v1", str(path)])
    evs = [json.loads(line) for line in res.output.splitlines()]
    evs = [e for e in evs if e["table"] == "types.charsets"]
    assert evs and all(e["primary_key"] == ["id"] for e in evs)
    got = {str(r["after"]["id"]): r["after"] for e in evs for r in e["rows"]}
    for want in m["select"]["charsets"]:
        assert {k: (None if v is None else str(v)) for k, v in got[want["id"]].items()} == want
    # without the metadata the same bytes are only bytes: latin1 'café' is not UTF-8
    plain = store.materialize("row-types") / "primary"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "write_rows_v1", str(plain)])
    row = next(r["after"] for line in res.output.splitlines() for r in json.loads(line)["rows"]
               if json.loads(line)["table"] == "types.charsets" and r["after"]["@1"] == 1)
    assert row["@2"] == "0x" + "café € ‰".encode("cp1252").hex() and "primary_key" not in res.output


def test_column_type_hints_need_a_known_type():
    from binlogkit.rowvalues import parse_hints

    path = store.materialize("row-types") / "primary"
    for bad in ("types.extra.u=ulid", "types.fsp.t1=time(7)", "types.fsp.t1=time"):
        res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--column-type", bad, str(path)])
        assert res.exit_code == 2 and "uuid, inet6, inet4, time(N), datetime(N), timestamp(N)" in res.output
    assert parse_hints(["a.b.c=TIME(3), a.b.@2=datetime(6)"]) == {"a.b.c": "time(3)", "a.b.@2": "datetime(6)"}
    # without names in the binlog, a column is named by position
    last = _last_images(path, "--column-type", "types.extra.@6=uuid")
    assert last["2"]["@6"] == "f47ac10b-58cc-4372-a567-0e02b2c3d479"


def test_mysql_json_and_partial_json_update(corpus):
    """MySQL 8.0.40 binlog (MDEV-35643): the JSON column's binary value decodes to the text the
    replica's SELECT printed, and the PARTIAL_UPDATE_ROWS JSON diff applies to it."""
    path = corpus / "mariadb/mysql-test/std_data/mdev35643_mysql_80_binlog.000001"
    result = next((corpus / "expected" / "mariadb").glob("mdev35643*rpl_from_mysql80.result")).read_text()
    expected = next(line.split("\t", 1)[1] for line in result.splitlines() if line.startswith('1\t{"a"'))
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "39", str(path)])
    (ev,) = [json.loads(line) for line in res.output.splitlines()]
    row = ev["rows"][0]
    assert row["before"]["@2"] == expected  # the replica never applied the partial update
    diff = row["after"]["@2"]  # the diff operations, and the document they give (the before image has it)
    assert [op for op, *_ in ((d["op"], d["path"]) for d in diff["json_diff"])] == ["JSON_REPLACE"]
    assert diff["json_diff"][0]["path"] == "$.b"
    after = json.loads(diff["result"])
    before = json.loads(expected)
    assert after["a"] == before["a"] and after["c"] == before["c"] and after["b"] != before["b"]
    assert set(after["b"]) == {"o", "O"}  # $.b replaced by the diff


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_row_images_give_typed_errors(tmp_path, data):
    """Bytes changed anywhere in a binlog full of row events: decoding rows yields events or
    Problems (typed errors), never another exception."""
    from binlogkit.api import Problem, decode_files

    src = (store.materialize("row-types") / "primary" / "mariadb-bin.000001").read_bytes()
    raw = bytearray(src)
    for _ in range(data.draw(st.integers(1, 6))):
        raw[data.draw(st.integers(300, len(raw) - 1))] = data.draw(st.integers(0, 255))
    f = tmp_path / "mariadb-bin.000001"
    f.write_bytes(bytes(raw))
    items = list(decode_files([f], verify=False, strict=False, rows=True))
    assert all(isinstance(i, Problem) or i.raw is not None for i in items)


def _opaque_doc(field_type: int, payload: bytes) -> bytes:
    """A binary JSON array holding one opaque value (small array: count, size, value entry)."""
    value = bytes([field_type, len(payload)]) + payload  # a one-byte 7-bit length
    header = 2 + 2 + 3
    return bytes([2]) + (1).to_bytes(2, "little") + (header + len(value)).to_bytes(2, "little") + \
        bytes([15]) + header.to_bytes(2, "little") + value


def _packed(y, mo, d, h=0, mi=0, s=0, us=0) -> bytes:
    return (((((y * 13 + mo) << 5 | d) << 17 | (h << 12 | mi << 6 | s)) << 24) + us).to_bytes(8, "little", signed=True)


@pytest.mark.parametrize("field_type,payload,text", [
    (12, _packed(2015, 1, 15, 23, 24, 25), '["2015-01-15 23:24:25.000000"]'),
    (7, _packed(2038, 1, 19, 3, 14, 7, 999999), '["2038-01-19 03:14:07.999999"]'),
    (10, _packed(1999, 12, 31), '["1999-12-31"]'),
    (11, (-((((838 << 12) | (59 << 6) | 59) << 24) + 5)).to_bytes(8, "little", signed=True), '["-838:59:59.000005"]'),
    (246, bytes([5, 2]) + bytes([0x80 ^ 0x00, 0x7B, 0x2D]), '[123.45]'),   # DECIMAL(5,2) 123.45
    (252, b"\x00\xffblob", '["base64:type252:AP9ibG9i"]'),
])
def test_json_opaque_values_print_as_the_servers_print_them(field_type, payload, text):
    """Opaque JSON scalars: temporals quoted with six fractional digits, decimals exact,
    anything else base64 (MariaDB's mysql_json.cc rules)."""
    from binlogkit.codecs.mysql_json import to_text

    assert to_text(_opaque_doc(field_type, payload)) == text


def test_json_text_escapes_like_the_server():
    from binlogkit.codecs.mysql_json import dumps

    assert dumps({"k\"": ["a\\b\n\t", "\x01é", None, True, 1.5, -3]}) == '{"k\\"": ["a\\\\b\\n\\t", "\x01é", null, true, 1.5, -3]}'


def _all_columns():
    from binlogkit import open_binlog
    from binlogkit.reading.events import decode
    from binlogkit.rowvalues import table_from_map

    cols = {}
    for name in ("row-types", "row-types-full-metadata", "replication-gtid"):
        for path in sorted((store.materialize(name)).rglob("mariadb-bin.0*")):
            for raw in open_binlog(str(path), verify=False):
                if raw.type_code == 19:
                    for c in table_from_map(decode(raw).parsed, raw.format.flavor).columns:
                        cols[(c.type, c.meta, c.collation)] = c
    return list(cols.values())


@settings(max_examples=400, deadline=None)
@given(col=st.sampled_from(_all_columns()), data=st.binary(max_size=80), at=st.integers(0, 8))
def test_specialised_readers_equal_the_generic_one(col, data, at):
    """The per-table readers (integers, strings, blobs) give what ``_value`` gives, or fail the
    same way, on any bytes."""
    import struct as _struct

    from binlogkit.errors import BinlogError
    from binlogkit.rowvalues.values import _value, reader

    def run(fn):
        try:
            v, q = fn()
        except (IndexError, _struct.error):
            return "short"
        except BinlogError as exc:
            return type(exc).__name__
        # floats by their bits: a NaN is not == itself, the same NaN is the same bytes
        value = ("float", _struct.pack("<d", v.value)) if isinstance(v.value, float) else v.value
        return type(v.value), value, v.text, q
    assert run(lambda: reader(col)(data, at)) == run(lambda: _value(col, data, at))


def test_rows_inside_a_transaction_payload(corpus):
    """MySQL 8's compressed transactions: `decode` shows the events inside a Transaction_payload
    between mysqlbinlog's markers, placed at the payload's end position, and `-v` decodes their
    rows (100 inserts of (i + 1000, i, '--i--...'), as the corpus catalog describes them)."""
    path = corpus / "mariadb/mysql-test/std_data/mdev35643_mysql_80_binlog.000001"
    text = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)]).stdout_bytes.decode("utf-8", "replace")
    inside = text.split("# Start of compressed events!\n", 1)[1].split("# End of compressed events!\n", 1)[0]
    assert inside.count("### INSERT INTO `test`.`t1`") == 100
    assert set(re.findall(r"# at (\d+)", inside)) == {"2297"}  # the payload spans 1468..2297
    firsts = [int(v) for v in re.findall(r"###   @1=(\d+)", inside)]
    seconds = [int(v) for v in re.findall(r"###   @2=(\d+)", inside)]
    assert firsts == list(range(1000, 1100)) and seconds == list(range(100))
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "--json", "--type", "30", str(path)])
    inner = [json.loads(line) for line in res.output.splitlines() if '"payload_offset"' in line]
    assert len(inner) == 100 and {e["payload_offset"] for e in inner} == {1468}
    assert sorted(e["inner_offset"] for e in inner) == [e["inner_offset"] for e in inner]


def test_temporal_values_are_python_types_equal_to_select():
    """DATE, TIME, DATETIME, TIMESTAMP come out as date, timedelta, datetime and UTC datetime,
    equal to what the server's SELECT returned through PyMySQL; the zero date stays text."""
    import datetime

    from binlogkit.api import decode_files

    m = store.manifest("row-types-full-metadata")
    path = store.materialize("row-types-full-metadata") / "primary"
    last: dict[int, dict] = {}
    for ev in decode_files([path], rows=True):
        if getattr(ev, "table", None) is not None and ev.table.name == "times" and isinstance(ev.rows, list):
            for row in ev.rows:
                if row["after"] is not None:  # MINIMAL updates: the key is in the before image
                    key = dict(row["before"] or row["after"])[0].value
                    vals = {ev.table.column_name(i): (None if v is None else v.value) for i, v in row["after"]}
                    last.setdefault(key, {}).update(vals)
    checked = 0
    for want in m["select"]["times"]:
        got = last[int(want["id"])]
        for col, value in want.items():
            x = got[col]
            if isinstance(x, datetime.datetime) and x.tzinfo is not None:
                assert x.tzinfo == datetime.timezone.utc
                x = x.replace(tzinfo=None)  # the lab's server runs in UTC
            assert (None if x is None else str(x)) == value, (want["id"], col)
            checked += x is not None and not isinstance(x, (int, str))
    assert checked >= 15
    assert isinstance(last[2]["dt"], str) and isinstance(last[1]["dt"], datetime.date)


# --- exact values: every column family against the server's own text (issue 18) ----------------
def _final_rows(path, table: str, *args) -> dict[str, dict]:
    """id -> the row as the binlog leaves it (inserts, FULL and MINIMAL updates, deletes replayed),
    from `decode -v --json`; keys are column names, or @N without names in the binlog."""
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", *args, str(path)])
    assert res.exit_code == 0, res.output[-2000:]
    rows: dict[str, dict] = {}
    for line in res.output.splitlines():
        ev = json.loads(line)
        if ev.get("table") != table:
            continue
        assert isinstance(ev["rows"], list) and "raw" not in ev["rows"][0], ev["rows"][0]
        for r in ev["rows"]:
            before, after = r["before"], r["after"]
            key = str((before or after).get("id", (before or after).get("@1")))
            if after is None:
                del rows[key]
            else:
                rows.setdefault(key, {}).update(after)
    return rows


def charsets_of(name: str) -> list[str]:
    return sorted({k[2:] for k in store.manifest(name)["select"]["allcs"][0] if k.startswith("v_")})


def _row_types_checks(name: str):
    from fixtures.lab.row_types import DECIMALS, SET_SIZES, WIDE_DECIMALS

    m = store.manifest(name)
    path = store.materialize(name) / "primary"
    named = "full-metadata" in name
    sel = m["select"]
    charsets = charsets_of(name)
    # column order of each table, for the @N keys of a binlog without names
    order = {"allcs": ["id"] + [f"{p}_{c}" for c in charsets for p in "ves"],
             "enumsets": ["id", "e", "e300"] + [f"s{n}" for n in SET_SIZES] + ["ecy", "scy"],
             "exactnums": ["id"] + [f"d{p}_{s}" for p, s in DECIMALS] + ["f", "d"],
             "fsp": ["id", "dd", "y"] + [f"{k}{n}" for n in range(7) for k in ("t", "dt", "ts")],
             "decimals": ["id"] + [f"d{p}_{s}" for p, s in WIDE_DECIMALS]}
    for table, cols in order.items():
        got_rows = _final_rows(path, f"types.{table}")
        assert sorted(got_rows) == sorted(r["id"] for r in sel[table])
        for want in sel[table]:
            got = got_rows[want["id"]]
            yield table, want, (got if named else {cols[int(k[1:]) - 1]: v for k, v in got.items()})


@pytest.mark.parametrize("name", ["row-types", "row-types-full-metadata"])
def test_every_value_equals_the_servers_text(name):
    """Every value of the exact-value tables against the server's SELECT: DECIMAL of every
    width and every pair of digit-group sizes as the server's text (no exponent), FLOAT as the double it holds and DOUBLE, every
    fractional precision of TIME/DATETIME (the server's text) and TIMESTAMP (UNIX_TIMESTAMP),
    zero and partial dates, YEAR 0; with FULL metadata ENUM/SET labels (index 0 is ''),
    SETs of 1-64 members, and text and labels in every character set the server has; without
    it the ENUM index and the SET bits."""
    from binlogkit.collations import CHARSET_OF
    from binlogkit.rowvalues import CODECS

    named = "full-metadata" in name
    checked = {}
    for table, want, got in _row_types_checks(name):
        for col, value in want.items():
            if col.startswith(("hex_", "index_", "bits_")) or col.endswith("_shown"):
                continue
            x = got[col]
            if value is None:
                assert x is None, (table, want["id"], col, x)
                continue
            if col == "id":
                assert str(x) == value
            elif table == "exactnums" and col in ("f", "d"):
                assert x == float(value), (col, x, value)  # f: CAST(f AS DOUBLE), the exact float
            elif table == "fsp" and col.startswith("ts"):
                assert x == float(value), (col, x, value)   # epoch seconds, UNIX_TIMESTAMP(ts)
            elif col == "y":
                assert x == int(value)
            elif table == "enumsets" and not named:
                bits = want[f"index_{col}" if col.startswith("e") else f"bits_{col}"]
                assert x == int(bits) % (1 << 64), (col, x, bits)
            elif table == "allcs":
                cs = col[2:]
                if col.startswith("v_"):
                    raw = bytes.fromhex(want[f"hex_v_{cs}"])
                    try:  # without a known charset: UTF-8 text if the bytes are UTF-8, else hex
                        bare = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        bare = "0x" + raw.hex()
                    if named and cs == "binary":
                        assert x == "0x" + raw.hex(), (col, x)
                    elif named and cs in CODECS:
                        assert x == value, (col, x, value)   # text in its own charset
                    else:
                        assert x == bare, (col, x, bare)
                elif not named:  # ENUM index, SET bits
                    assert x == (1 if col[0] == "e" else 3) if want["id"] == "1" else x in (0, 2), (col, x)
                elif cs == "binary":
                    assert x.encode().hex() == value, (col, x, value)
                else:
                    assert x == value, (col, x, value)
            else:
                assert x == value, (table, want["id"], col, x, value)
            checked[table] = checked.get(table, 0) + 1
    # non-NULL values compared; allcs: 40 charsets x (text, ENUM, SET) x 2 rows + the ids
    assert checked == {"allcs": 243, "enumsets": 57, "exactnums": 78, "fsp": 105, "decimals": 4 * 81}
    assert len(charsets_of(name)) == 40 and len(set(CHARSET_OF.values())) >= 40


def test_enum_and_set_labels_in_their_own_charset():
    """The optional metadata's ENUM_AND_SET charset fields name the labels' charset: latin1 'é',
    '€' and cp1251 'ж' come out as the server shows them, not as U+FFFD."""
    m = store.manifest("row-types-full-metadata")
    rows = _final_rows(store.materialize("row-types-full-metadata") / "primary", "types.allcs")
    sel = {r["id"]: r for r in m["select"]["allcs"]}
    assert rows["1"]["e_latin1"] == sel["1"]["e_latin1"] == "aé€Šüß±z"
    assert rows["1"]["s_cp1251"] == sel["1"]["s_cp1251"] == "a€жщ±°z,y"
    assert rows["1"]["e_ucs2"] == sel["1"]["e_ucs2"] == "aé€жщ日本z"
    # ENUM_AND_SET_DEFAULT_CHARSET with (n, collation) pairs: latin1 by default, cp1251 for two
    sets = _final_rows(store.materialize("row-types-full-metadata") / "primary", "types.enumsets")
    assert (sets["1"]["ecy"], sets["1"]["scy"], sets["3"]["ecy"], sets["3"]["scy"]) == ("щ", "ж,€", "", "€")
    assert not any("\ufffd" in str(v) for r in rows.values() for v in r.values())


def test_decimal_json_is_the_servers_text_and_enum_zero_is_empty():
    rows = _final_rows(store.materialize("row-types-full-metadata") / "primary", "types.exactnums")
    assert rows["1"]["d9_9"] == "0.000000000" and rows["4"]["d9_9"] == "-0.000000001"
    assert rows["2"]["d65_30"] == "-" + "9" * 35 + "." + "9" * 30  # negated by the FULL-image UPDATE
    sets = _final_rows(store.materialize("row-types-full-metadata") / "primary", "types.enumsets")
    assert sets["2"]["e"] == "" and sets["1"]["s64"].count(",") == 63 and "5" not in sets


def _old_hints() -> list[str]:
    out = []
    for n in range(7):
        out += ["--column-type", f"types.old.t{n}=time({n})", "--column-type", f"types.old.dt{n}=datetime({n})",
                "--column-type", f"types.old.ts{n}=timestamp({n})"]
    return out


def test_pre_10_1_temporal_layout_with_hints_equals_select():
    """MariaDB's pre-10.1 TIME/DATETIME/TIMESTAMP with fractional seconds (a server started with
    --mysql56-temporal-format=OFF): types 11/12/7 with no metadata, so the precision comes from
    a hint; every precision 0-6 then equals the server's SELECT, negative times and zero dates
    included, and so does the no-fraction table old0 (old TIME is signed)."""
    m = store.manifest("row-types-old-temporal")
    path = store.materialize("row-types-old-temporal") / "primary"
    checked = 0
    for table, args in (("old", _old_hints()), ("old0", [])):
        got_rows = _final_rows(path, f"types.{table}", *args)
        assert sorted(got_rows) == sorted(r["id"] for r in m["select"][table])
        for want in m["select"][table]:
            got = got_rows[want["id"]]
            for col, value in want.items():
                x = got[col]
                if value is None or col.startswith("ts") or col == "id":
                    assert x == (None if value is None else float(value)), (want["id"], col, x, value)
                else:
                    assert x == value, (want["id"], col, x, value)
                checked += 1
    assert checked == 5 * 22 + 4 * 4


def test_pre_10_1_temporal_layout_without_hints_says_how(tmp_path):
    """Without hints the images cannot be sized: they stay raw with a reason naming the fix,
    the file still decodes (mariadb-binlog stops there with exit code 1 and no rows)."""
    path = store.materialize("row-types-old-temporal") / "primary" / "mariadb-bin.000001"
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)])
    assert res.exit_code == 0
    raw = [line for line in res.output.splitlines() if "row images not decoded" in line]
    assert len(raw) == 3 and all("--column-type 'types.old.t0=time(N)'" in line for line in raw)
    assert res.output.count("### INSERT INTO `types`.`old0`") == 5
    if shutil.which("mariadb-binlog"):
        theirs = subprocess.run(["mariadb-binlog", "-v", "--base64-output=decode-rows", str(path)],
                                capture_output=True, env=dict(os.environ, TZ="UTC"))
        assert theirs.returncode != 0 and b"`types`.`old`\n" not in theirs.stdout
        # what it does print (types.old0, the old layout without fractions) we print byte for byte
        mine = _hash_lines(res.stdout_bytes, names=True)
        assert _hash_lines(theirs.stdout) == mine[:len(_hash_lines(theirs.stdout))] and len(mine) > 30


def test_temporal_hints_touch_only_old_layout_columns():
    """`time(N)` names TIME columns in the old layout (type 11) only: a broad wildcard gives no
    other column (TIME2, DATETIME2, TIMESTAMP2 included) a hint, and the output stays as it was;
    in the old-layout set it reaches exactly the columns of its type."""
    from binlogkit.api import decode_files
    from binlogkit.rowvalues.tables import DATETIME, TIME

    broad = {"*.*.*": "time(3)", "*.*.t*": "datetime(2)"}
    path = store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000002"
    tables = [ev.table for ev in decode_files([path], rows=True, column_types=broad) if getattr(ev, "table", None)]
    assert tables and all(c.hint is None for t in tables for c in t.columns)
    plain = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)]).stdout_bytes
    hinted = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--column-type", "*.*.*=time(3)", "--column-type",
                                       "*.*.t*=datetime(2)", str(path)]).stdout_bytes
    assert hinted == plain and b"###   @" in plain
    old = store.materialize("row-types-old-temporal") / "primary"
    hints = {t.name: {c.index: c.hint for c in t.columns if c.hint}
             for t in (ev.table for ev in decode_files([old], rows=True, column_types=broad)
                       if getattr(ev, "table", None))}
    cols = {t.name: t.columns for t in (ev.table for ev in decode_files([old], rows=True)
                                        if getattr(ev, "table", None))}
    for name, hinted_cols in hints.items():
        assert hinted_cols == {c.index: "time(3)" for c in cols[name] if c.type == TIME}
        assert not any(c.type == DATETIME for c in cols[name] if c.index in hinted_cols)


def test_unsized_old_temporals_are_kept_raw_only_where_the_flavor_allows_them():
    """An image of a TIME column that does not fit: for MariaDB (whose old TIME may be the
    fractional layout) the images stay raw with the reason; for MySQL it is a damaged image,
    a typed BodyLengthError."""
    from construct import Container

    from binlogkit.errors import BodyLengthError
    from binlogkit.flavor import Flavor, old_temporals_may_be_fractional
    from binlogkit.rowvalues import Column, RawRows, Table
    from binlogkit.rowvalues.images import decode_rows_python
    from binlogkit.rowvalues.tables import TIME

    fields = Container(rows=b"\x00\x01\x02", columns_before_image=b"\x01", columns_after_image=None, width=1)
    for flavor in Flavor:
        table = Table(1, "d", "t", (Column(0, TIME, 0),),
                      old_temporals_may_be_fractional=old_temporals_may_be_fractional(flavor))
        if flavor is Flavor.MARIADB:
            got = decode_rows_python(table, fields, 23)
            assert isinstance(got, RawRows) and "--column-type 'd.t.@1=time(N)'" in got.reason
        else:
            with pytest.raises(BodyLengthError, match="runs past"):
                decode_rows_python(table, fields, 23)


# -- pre-GA rows events (20-22, MySQL 5.1.5-5.1.17; issue 28) ---------------------------------------
PRE_GA_FILES = {  # the rows the MySQL test suite wrote (binlog_old_versions, binlog_base64_flag)
    "mysql/mysql-test/suite/binlog/std_data/ver_5_1_17.001":
        [("w", None, (0, b"one")), ("w", None, (1, b"two")), ("u", (0, b"one"), (1, b"one")),
         ("u", (1, b"two"), (2, b"two")), ("d", (2, b"two"), None)],
    "mariadb/mysql-test/suite/binlog/std_data/bug32407.001": [("w", None, (1,)), ("w", None, (1,))],
}
PRE_GA_FILES["mysql/mysql-test/suite/binlog/std_data/ver_5_1-telco.001"] = \
    PRE_GA_FILES["mysql/mysql-test/suite/binlog/std_data/ver_5_1_17.001"]


@pytest.mark.parametrize("rel", sorted(PRE_GA_FILES))
def test_pre_ga_rows_decode(rel, corpus):
    """`decode -v` went as far as the first pre-GA rows event and stopped ("runs past the row
    image"): the images are the table record's null bytes (delete mark first) and every column,
    and an update has one columns bitmap. Now every row, as the server replays it."""
    from binlogkit.api import decode_files

    path = corpus / rel
    got = []
    for ev in decode_files([path], rows=True):
        if ev.raw.type_code in (20, 21, 22):
            for r in ev.rows:
                img = [tuple(None if v is None else v.value for _i, v in r[side]) if r[side] is not None else None
                       for side in ("before", "after")]
                got.append(({20: "w", 21: "u", 22: "d"}[ev.raw.type_code], *img))
    assert got == PRE_GA_FILES[rel]
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", str(path)])
    assert res.exit_code == 0 and "### INSERT INTO `test`.`t1`" in res.output, res.output[-300:]
    res = CliRunner().invoke(main, ["decode", "--base64-output=decode-rows", "-v", "--json", "--type", "20", str(path)])
    assert json.loads(res.output.splitlines()[0])["rows"][0]["after"]["@1"] in (0, 1)


def _pre_ga(columns, rows: bytes, code: int = 20, bitmap: bytes | None = None):
    from construct import Container

    from binlogkit.rowvalues import Column, Table
    from binlogkit.rowvalues.images import decode_rows, verbose_text

    table = Table(7, "d", "t", tuple(Column(i, t, 0) for i, t in enumerate(columns)))
    width = len(columns)
    fields = Container(rows=rows, width=width, columns_before_image=bitmap or bytes([(1 << width) - 1]),
                       columns_after_image=None)
    return decode_rows(table, fields, code), verbose_text(table, fields, code).decode()


def test_pre_ga_images_null_bits_and_what_is_left_raw():
    from binlogkit.rowvalues import BLOB, LONG, NEWDECIMAL, STRING, VARCHAR
    from binlogkit.rowvalues.images import RawRows

    # (a INT, b CHAR): delete mark, then a bit per column; a NULL b carries its empty default
    rows, text = _pre_ga([LONG, STRING], b"\xfd" + (7).to_bytes(4, "little") + b"\x00")
    assert [[(i, None if v is None else v.value) for i, v in r["after"]] for r in rows] == [[(0, 7), (1, None)]]
    assert text == "### INSERT INTO `d`.`t`\n### SET\n###   @1=7\n###   @2=NULL\n"
    # a VARCHAR / BLOB table has variable records: no delete mark, the first bit is the first column's
    rows, _ = _pre_ga([LONG, VARCHAR, BLOB], b"\xf8" + (5).to_bytes(4, "little") + b"\x02hi" + b"\x03\x00abc")
    assert [v.value for _i, v in rows[0]["after"]] == [5, b"hi", b"abc"]
    # a bit that says NULL over a real value: not this table's null layout (a NOT NULL column
    # shifts the bits) -- left raw, never printed as NULL
    rows, text = _pre_ga([LONG, STRING], b"\xfd" + (7).to_bytes(4, "little") + b"\x03abc")
    assert isinstance(rows, RawRows) and "do not fit" in rows.reason and "row images not decoded" in text
    # filler bits not set, or a row that runs past the event: raw, and the file goes on
    assert isinstance(_pre_ga([LONG], b"\x01" + bytes(4))[0], RawRows)
    assert isinstance(_pre_ga([LONG], b"\xfd" + bytes(3))[0], RawRows)
    # DECIMAL's size is in the table definition only
    rows, _ = _pre_ga([NEWDECIMAL], b"\xfd" + bytes(5))
    assert isinstance(rows, RawRows) and "type 246" in rows.reason
    # an update: before and after images under one columns bitmap
    img = lambda n: b"\xf9" + n.to_bytes(4, "little") + b"\x01x"  # noqa: E731
    rows, text = _pre_ga([LONG, STRING], img(1) + img(2), code=21)
    assert text.splitlines()[:3] == ["### UPDATE `d`.`t`", "### WHERE", "###   @1=1"]
    assert [v.value for _i, v in rows[0]["after"]] == [2, b"x"]


def test_pre_ga_update_has_one_columns_bitmap():
    """MariaDB's Old_rows_log_event reads one bitmap for pre-GA updates (21); v1 updates (24) two."""
    from binlogkit.codecs.rows import RowsBody

    body = (16).to_bytes(6, "little") + b"\x01\x00" + b"\x02\xff" + b"\xf9rest"
    pre = RowsBody.parse(body, len_body=len(body), type_code=21, post_header_len=8)
    assert pre.columns_after_image is None and pre.rows == b"\xf9rest"
    v1 = RowsBody.parse(body, len_body=len(body), type_code=24, post_header_len=8)
    assert v1.columns_after_image == b"\xf9" and v1.rows == b"rest"

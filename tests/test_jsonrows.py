"""`decode --json -v` through the C loop: the rows' JSON written in C (``_fastdecode.c``
``json_rows``, by ``rowvalues.jsonform.c_json_plan``) is the Python path's (``rows_json`` as
``json.dumps`` writes it), byte for byte.

Random tables (every column kind C writes, charsets, ENUM/SET labels, names, signedness, primary
keys) with random images go through ``walk()`` and through the Python decoder: C writes what
Python writes, or steps aside where Python refuses or C does not write a value (a float that is
not finite); real files and damaged copies of one through the command, with the C loop and
without; and a count that the rows really come out of C.
"""

from __future__ import annotations

import json
import struct

import pytest
from construct import Container
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlogkit.errors import BinlogError
from binlogkit.reading import fastdecode
from binlogkit.rowvalues import Column, Table, rows_json
from binlogkit.rowvalues.images import decode_rows, decode_rows_python
from binlogkit.rowvalues.jsonform import c_json_plan
from binlogkit.rowvalues.tables import (BIT, BLOB, DATE, DATETIME, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY, INT24, LONG,
                                        LONGLONG, NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2,
                                        TINY, VARCHAR, YEAR)

from c_builds import require_built
from test_codecs import fixture_files
from test_fastdecode import _same
from test_fastdecode_replay import damaged_rows_copy


@pytest.fixture(scope="module")
def accel():
    return require_built(fastdecode._fastdecode, "binlogkit._fastdecode", "the Python path")


# (type, metadata) of every column kind the C loop writes
KINDS = [(TINY, 0), (SHORT, 0), (INT24, 0), (LONG, 0), (LONGLONG, 0), (FLOAT, 4), (DOUBLE, 8), (YEAR, 0), (DATE, 0),
         (NEWDECIMAL, (10 << 8) | 4), (NEWDECIMAL, (38 << 8) | 10), (NEWDECIMAL, (5 << 8) | 5), (DATETIME2, 0),
         (DATETIME2, 3), (DATETIME2, 6), (TIMESTAMP2, 0), (TIMESTAMP2, 2), (TIMESTAMP2, 6), (TIME2, 0), (TIME2, 2),
         (TIME2, 4), (TIME2, 6), (TIMESTAMP, 0), (DATETIME, 0), (TIME, 0), (VARCHAR, 40), (VARCHAR, 300), (BLOB, 2),
         (BLOB, 4), (STRING, (STRING << 8) | 20), (BIT, (1 << 8) | 1), (BIT, 8), (BIT, 5 << 8),
         (STRING, (ENUM << 8) | 1), (STRING, (ENUM << 8) | 2), (STRING, (SET << 8) | 1), (STRING, (SET << 8) | 8),
         (GEOMETRY, 4)]
SIZES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8, FLOAT: 4, DOUBLE: 8, YEAR: 1, DATE: 3, TIMESTAMP: 4,
         DATETIME: 8, TIME: 3}
# no collation, binary, utf8mb4, utf8mb3, latin1 (cp1252 and its holes), ascii, cp1251, koi8r, greek,
# hebrew (bytes it does not decode), gbk (multi-byte: not for C)
COLLATIONS = [None, 63, 45, 33, 8, 11, 51, 7, 25, 16, 28]
ODD_UTF8 = [b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98\x80", b"\xe2\x82", b"\x7f\x00\"\\\n\t",
            b"\xef\xbf\xbf", b"\xc2\x80", b"\xe0\x9f\xbf", b"\xf0\x8f\xbf\xbf"]


def _value(data, t: int, m: int) -> bytes:
    if t in (FLOAT, DOUBLE) and data.draw(st.booleans()):
        return struct.pack("<f" if t == FLOAT else "<d", data.draw(st.floats(width=32 if t == FLOAT else 64)))
    if t in SIZES:
        return data.draw(st.binary(min_size=SIZES[t], max_size=SIZES[t]))
    if t == NEWDECIMAL:
        from binlogkit.codecs.newdecimal import dec_size

        n = dec_size((m >> 8) - (m & 0xFF)) + dec_size(m & 0xFF)
        return data.draw(st.binary(min_size=n, max_size=n))
    if t in (DATETIME2, TIMESTAMP2, TIME2):
        n = {DATETIME2: 5, TIMESTAMP2: 4, TIME2: 3}[t] + (m + 1) // 2
        return data.draw(st.binary(min_size=n, max_size=n))
    if t == BIT:
        n = ((m & 0xFF) * 8 + (m >> 8) + 7) // 8
        return data.draw(st.binary(min_size=n, max_size=n))
    if t == STRING and m >> 8 in (ENUM, SET):
        return data.draw(st.binary(min_size=m & 0xFF, max_size=m & 0xFF))
    raw = data.draw(st.one_of(st.text(max_size=12).map(lambda s: s.encode()), st.binary(max_size=12),
                              st.lists(st.sampled_from(ODD_UTF8), max_size=3).map(b"".join),
                              st.text(alphabet=st.characters(max_codepoint=0x7e), min_size=8, max_size=40)
                              .map(lambda s: s.encode())))
    if t == GEOMETRY:
        raw = data.draw(st.binary(min_size=4, max_size=4)) + raw
    lb = {VARCHAR: 1 if m < 256 else 2, BLOB: m, GEOMETRY: m, STRING: 1}[t]
    return len(raw).to_bytes(lb, "little") + raw


LABEL = st.text(max_size=6)


def _table(data) -> Table:
    picks = data.draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=7))
    n = len(picks)
    cols = tuple(Column(i, t, m, data.draw(st.sampled_from(COLLATIONS))
                        if t in (VARCHAR, BLOB) or (t == STRING and m >> 8 == STRING) else None)
                 for i, (t, m) in enumerate(picks))
    names = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(["id", "a", "é", "x\"y", "@2", "k\n"]),
                                                    min_size=1, max_size=n).map(tuple)))
    enums = {i: tuple(data.draw(st.lists(LABEL, min_size=1, max_size=4))) for i, (t, m) in enumerate(picks)
             if t == STRING and m >> 8 == ENUM and data.draw(st.booleans())}
    sets = {i: tuple(data.draw(st.lists(LABEL, min_size=1, max_size=10))) for i, (t, m) in enumerate(picks)
            if t == STRING and m >> 8 == SET and data.draw(st.booleans())}
    return Table(7, "d", data.draw(st.sampled_from(["t", "tä", "q\"t"])), cols, column_names=names,
                 unsigned=frozenset(data.draw(st.sets(st.integers(0, n - 1)))),
                 primary_key=data.draw(st.one_of(st.none(), st.lists(st.integers(0, n - 1), max_size=2).map(tuple))),
                 enum_values=enums or None, set_values=sets or None)


def _walk(accel, plan, code: int, body: bytes) -> tuple[int, bytes]:
    """One rows event (no checksum) through walk() with O_JSON | O_JROWS, its table's plan known."""
    head = struct.pack("<IBIIIH", 1, code, 1, 19 + len(body), 2000, 0)
    cfg = bytearray(512)
    cfg[code], cfg[256 + code] = 1, 10
    names = tuple(b'"type": "X", "type_code": 1, "name": "X"' if c == code else None for c in range(256))
    buf = bytearray(head + body)
    status, _, _, _, text, _, _, _ = accel.walk(buf, 0, len(buf), 1000, fastdecode.O_JSON | fastdecode.O_JROWS,
                                                fastdecode.CRC32, bytes(cfg), names, b'{"file": "f", "offset": ',
                                                {}, {7: plan}, {})
    return status, text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_rows_of_random_tables_are_the_python_json(accel, data):
    table = _table(data)
    plan = c_json_plan(table)
    if plan is None:  # gbk, two columns of one name: the Python path's
        return
    code = data.draw(st.sampled_from([30, 31, 32]))  # write, update, delete (v2)
    width = len(table.columns)
    nb = (width + 7) // 8
    bitmaps = [data.draw(st.integers(1, (1 << width) - 1)).to_bytes(nb, "little") for _ in range(2)]
    images = b""
    for _ in range(data.draw(st.integers(0, 3))):
        for bm in (bitmaps[:1] if code != 31 else bitmaps):
            present = [i for i in range(width) if bm[i // 8] >> (i % 8) & 1]
            nulls = data.draw(st.integers(0, (1 << len(present)) - 1))
            images += nulls.to_bytes((len(present) + 7) // 8, "little")
            for k, i in enumerate(present):
                if not nulls >> k & 1:
                    images += _value(data, table.columns[i].type, table.columns[i].meta)
    if data.draw(st.integers(0, 9)) == 0 and images:  # an image cut short
        images = images[:data.draw(st.integers(0, len(images) - 1))]
    fields = Container(rows=images, columns_before_image=bitmaps[0],
                       columns_after_image=bitmaps[1] if code == 31 else None, width=width)
    body = (7).to_bytes(6, "little") + b"\x01\x00" + b"\x02\x00" + bytes([width]) + bitmaps[0] \
        + (bitmaps[1] if code == 31 else b"") + images
    status, text = _walk(accel, plan, code, body)
    wrote = status == fastdecode.MORE
    try:
        want_rows = decode_rows(table, fields, code)
    except BinlogError:
        assert not wrote, "C wrote rows the Python decoder refuses"
        return
    if not wrote:
        return
    doc = {"table": f"{table.db}.{table.name}"}
    if table.primary_key is not None:
        doc["primary_key"] = [table.column_name(i) for i in table.primary_key]
    doc["rows"] = rows_json(want_rows, table)
    want = ", " + json.dumps(doc, default=str)[1:] + "\n"
    got = text[text.index(b', "table": '):].decode("ascii")
    assert got == want
    # the Python reader without its C part gives the same rows
    assert json.dumps(rows_json(decode_rows_python(table, fields, code), table), default=str) == \
        json.dumps(doc["rows"], default=str)


def test_floats_not_finite_are_the_python_paths(accel):
    table = Table(7, "d", "t", (Column(0, DOUBLE, 8),))
    for x in (float("nan"), float("inf"), 1.5):
        body = (7).to_bytes(6, "little") + b"\x01\x00\x02\x00\x01\x01\x00" + struct.pack("<d", x)
        status, text = _walk(accel, c_json_plan(table), 30, body)
        assert (status == fastdecode.MORE) == (x == 1.5)
        if x == 1.5:
            assert text.endswith(b'"rows": [{"before": null, "after": {"@1": 1.5}}]}\n')


def test_the_c_loop_prints_the_json_rows(accel):
    """On a row-based file the rows events come out of C with their rows (bytes), the Table_maps
    too; the Python path reads the rest."""
    path = next(p for p in fixture_files() if "replication-gtid" in str(p) and "primary" in str(p)
                and p.name == "mariadb-bin.000002")
    items = list(fastdecode.decode_fast([path], rows=True, as_json=True))
    python = [i.raw.type_code for i in items if type(i) is not bytes]
    text = b"".join(i for i in items if type(i) is bytes)
    assert not (set(python) & ({19} | fastdecode.ROWS_CODES)), python
    assert text.count(b'"rows": [{"before"') >= 10


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_row_images_print_the_same(accel, monkeypatch, tmp_path_factory, data):
    """Row images with bytes flipped and their CRC32 made good again (so the C loop takes them):
    whatever C writes, steps aside from, or the Python decoder refuses (the same typed error
    after the same lines), the command's output is the Python path's."""
    path = damaged_rows_copy(data, tmp_path_factory)
    _same(["decode", "--json", "-v", str(path)], monkeypatch)
    _same(["decode", "--json", "-v", "--lenient", str(path)], monkeypatch)

"""The C Arrow path (``binlogkit._rowarrow``, planned by ``rowvalues/arrowcols.py``) against the
Python path it speeds up (``rowvalues.images.decode_rows`` + ``export/schema.py``'s converters):
for every rows event of every fixture and corpus file the change table both make is equal (types,
values, nulls), or C steps aside; C never takes an event the Python path refuses; damaged and
random images either agree or step aside; and whole exports are equal file for file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from construct import Container
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from binlogkit.errors import BinlogError
from binlogkit.export import changes, export
from binlogkit.export.changes import Rows
from binlogkit.export.dataset import rows_table
from binlogkit.export.schema import layout
from binlogkit.rowvalues import COMPRESSED_ROWS, Column, Table, arrowcols
from binlogkit.rowvalues.images import RawRows, decode_rows_python
from binlogkit.rowvalues.tables import (BIT, BLOB, DATE, DATETIME2, DOUBLE, ENUM, FLOAT, INT24, JSON, LONG, LONGLONG,
                                        NEWDECIMAL, SET, SHORT, STRING, TIME2, TIMESTAMP2, TINY, VARCHAR, VECTOR, YEAR)
from c_builds import c_loop, require_built
from fixtures import store
from test_rowtext import SEEDS, _files, _rows_events
import mysql_json_build as jb

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ROOT = Path(__file__).resolve().parents[1]
TRX = SimpleNamespace(gtid="0-1-1", server_id=1, last_timestamp=1_700_000_000)


def same(a, b) -> bool:
    """Tables equal in schema and values, a NaN equal to a NaN (``Table.equals`` holds NaN != NaN:
    a FLOAT image of NaN bits made hypothesis fail both paths' equal tables)."""
    import pyarrow.compute as pc

    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.schema.names:
        x, y = a[name], b[name]
        if pa.types.is_floating(x.type):
            nx, ny = pc.is_nan(x), pc.is_nan(y)
            if not nx.equals(ny):
                return False
            x = pc.if_else(nx, pa.scalar(None, x.type), x)
            y = pc.if_else(ny, pa.scalar(None, y.type), y)
        if not x.equals(y):
            return False
    return True


@pytest.fixture(scope="module")
def rowarrow(request):
    mod = require_built(c_loop(arrowcols.C_ROWARROW, "ROWARROW_SO", "binlogkit._rowarrow"), "binlogkit._rowarrow",
                        "the Python converters")
    from binlogkit.export import dataset
    from binlogkit.flashback import invert

    # a sanitized build (ROWARROW_SO) replaces the loaded module everywhere export and flashback take it from
    places = [(arrowcols, "_C"), (arrowcols, "C_ROWARROW"), (changes, "C_ROWARROW"), (dataset, "C_ROWARROW"),
              (invert, "C_ROWARROW")]
    saved = [getattr(m, n) for m, n in places]
    for m, n in places:
        setattr(m, n, mod)
    invert._C_PLANS.clear()
    yield mod
    for (m, n), v in zip(places, saved):
        setattr(m, n, v)
    invert._C_PLANS.clear()


def _c_rows(mod, table, fields, code):
    """The event's rows as ``ImageRows`` when C takes them, else None."""
    lay = layout(table)
    ap = arrowcols.plan(table, [c.arrow for c in lay.columns])
    if ap is None:
        return None
    return arrowcols.image_rows(table, fields, code, ap, mod.Builder(ap.widths))


def _python_table(table, fields, code):
    """The Python path's change table of one event, or None where it refuses the images."""
    try:
        rows = decode_rows_python(table, fields, code)
        if isinstance(rows, RawRows):
            return None
        return rows_table(Rows(table, code, rows, TRX, "f.000001", 4, 0))
    except (BinlogError, pa.ArrowException, ValueError, OverflowError, TypeError):
        return None


def _agree(mod, table, fields, code) -> bool | None:
    """True: C took the event and its table equals Python's; None: C stepped aside."""
    got = _c_rows(mod, table, fields, code)
    want = _python_table(table, fields, code)
    if got is None:
        return None
    assert want is not None, f"C took rows of `{table.db}`.`{table.name}` the Python path refuses"
    mine = rows_table(Rows(table, code, got, TRX, "f.000001", 4, 0))
    assert mine.schema == want.schema
    assert same(mine, want), (table.name, mine.to_pylist()[:3], want.to_pylist()[:3])
    return True


def test_every_fixture_and_corpus_event_makes_the_same_table(rowarrow):
    """Per file and table layout, the events' rows through C (where it takes them, Python where
    it steps aside) and through Python alone make equal tables; C takes no event Python refuses."""
    taken = total = 0
    kinds: set[int] = set()
    for path in _files():
        both: dict[str, tuple[list, list]] = {}
        for table, fields, code in _rows_events(path):
            total += 1
            got = _c_rows(rowarrow, table, fields, code)
            try:
                rows = decode_rows_python(table, fields, code)
            except BinlogError:
                rows = None
            if rows is None or isinstance(rows, RawRows):
                assert got is None, f"{path}: C took rows of `{table.name}` the Python decoder refuses"
                continue
            c, py = both.setdefault(layout(table).version, ([], []))
            offset = 4 + len(py)
            c.append(Rows(table, code, rows if got is None else got, TRX, path.name, offset, 0))
            py.append(Rows(table, code, rows, TRX, path.name, offset, 0))
            if got is not None:
                taken += 1
                kinds |= {col.type for col in table.columns}
        for version, (c, py) in both.items():
            mine, want = rows_table(*c), rows_table(*py)
            assert mine.schema == want.schema
            assert same(mine, want), (path, version)
    # the fixtures' row-types sets hold every family; C takes most events and every family it plans
    assert total > 1000 and taken > 0.5 * total, (taken, total)
    assert {TINY, SHORT, INT24, LONG, LONGLONG, FLOAT, DOUBLE, NEWDECIMAL, YEAR, DATE, DATETIME2, TIMESTAMP2, TIME2,
            VARCHAR, STRING, BLOB, BIT} <= kinds, kinds


def _damaged(data):
    table, fields, code = data.draw(st.sampled_from([s for s in SEEDS if s[2] not in COMPRESSED_ROWS]))
    rows = bytearray(bytes(fields.rows))
    for _ in range(data.draw(st.integers(1, 4))):
        how = data.draw(st.sampled_from(["flip", "cut", "grow"]))
        if how == "flip" and rows:
            i = data.draw(st.integers(0, len(rows) - 1))
            rows[i] = data.draw(st.integers(0, 255))
        elif how == "cut":
            del rows[data.draw(st.integers(0, len(rows))):]
        else:
            rows += data.draw(st.binary(max_size=40))
    return table, Container(rows=bytes(rows), columns_before_image=fields.columns_before_image,
                            columns_after_image=fields.columns_after_image, width=fields.width), code


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_images_agree_or_step_aside(rowarrow, data):
    _agree(rowarrow, *_damaged(data))


# random tables of the types C fills, and random images for them: a value's bytes drawn at its
# stored size (any bytes: invalid dates, digits and UTF-8 included), NULLs and column bitmaps at random
_TYPES = [(TINY, 0), (SHORT, 0), (INT24, 0), (LONG, 0), (LONGLONG, 0), (FLOAT, 0), (DOUBLE, 0), (YEAR, 0), (DATE, 0),
          (NEWDECIMAL, (10 << 8) | 4), (NEWDECIMAL, (38 << 8) | 10), (NEWDECIMAL, (5 << 8) | 5),
          (DATETIME2, 0), (DATETIME2, 3), (DATETIME2, 6), (TIMESTAMP2, 0), (TIMESTAMP2, 4), (TIME2, 0), (TIME2, 2),
          (TIME2, 4), (TIME2, 6), (VARCHAR, 40), (VARCHAR, 300), (BLOB, 2), (BIT, (1 << 8) | 1), (BIT, 8),
          (NEWDECIMAL, (65 << 8) | 30), (NEWDECIMAL, (41 << 8) | 16), (NEWDECIMAL, 39 << 8), (VECTOR, 4), (JSON, 4),
          (JSON, 2), (STRING, (SET << 8) | 1), (STRING, (SET << 8) | 2), (STRING, (SET << 8) | 8),
          (STRING, (ENUM << 8) | 1), (STRING, (ENUM << 8) | 2)]
_SIZES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8, FLOAT: 4, DOUBLE: 8, YEAR: 1, DATE: 3}


def _value_bytes(data, t: int, m: int) -> bytes:
    if t in _SIZES:
        return data.draw(st.binary(min_size=_SIZES[t], max_size=_SIZES[t]))
    if t == NEWDECIMAL:
        from binlogkit.codecs.newdecimal import dec_size

        p, s = m >> 8, m & 0xFF
        if data.draw(st.booleans()):  # a value the column holds (random bytes mostly overflow a group)
            return jb.decimal_bytes(data.draw(st.integers(-10**p + 1, 10**p - 1)), p, s)
        n = dec_size(p - s) + dec_size(s)
        return data.draw(st.binary(min_size=n, max_size=n))
    if t == VECTOR:  # float32s, now and then a length that is no whole number of them
        import struct

        raw = data.draw(st.lists(st.floats(width=32), max_size=5).map(lambda fs: struct.pack(f"<{len(fs)}f", *fs))
                        | st.binary(max_size=10))
        return len(raw).to_bytes(4, "little") + raw
    if t == JSON:
        raw = data.draw(_json_docs.map(jb.document) | st.binary(max_size=12))
        return len(raw).to_bytes(m, "little") + raw
    if t == STRING:  # ENUM / SET: the stored index or bits
        return data.draw(st.binary(min_size=m & 0xFF, max_size=m & 0xFF))
    if t == DATETIME2:
        return data.draw(st.binary(min_size=5 + (m + 1) // 2, max_size=5 + (m + 1) // 2))
    if t == TIMESTAMP2:
        return data.draw(st.binary(min_size=4 + (m + 1) // 2, max_size=4 + (m + 1) // 2))
    if t == TIME2:
        n = 3 + (m + 1) // 2
        return data.draw(st.binary(min_size=n, max_size=n))
    if t == BIT:
        n = ((m & 0xFF) * 8 + (m >> 8) + 7) // 8
        return data.draw(st.binary(min_size=n, max_size=n))
    raw = data.draw(st.one_of(st.text(max_size=12).map(lambda s: s.encode()), st.binary(max_size=12)))
    lb = 2 if (t == VARCHAR and m > 255) or t == BLOB else 1
    return len(raw).to_bytes(lb, "little") + raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_images_of_random_tables_agree(rowarrow, data):
    picks = data.draw(st.lists(st.sampled_from(_TYPES), min_size=1, max_size=6))
    unsigned = frozenset(data.draw(st.sets(st.integers(0, len(picks) - 1))))
    collation = data.draw(st.sampled_from([45, 8, 11]))  # utf8mb4, latin1 (cp1252), ascii
    labels = st.lists(st.text(min_size=1, max_size=4).filter(lambda x: "," not in x), max_size=20, unique=True)
    enums = {i: tuple(data.draw(labels)) for i, (t, m) in enumerate(picks) if t == STRING and m >> 8 == ENUM}
    sets = {i: tuple(data.draw(labels)) for i, (t, m) in enumerate(picks) if t == STRING and m >> 8 == SET}
    table = Table(1, "d", "t", tuple(Column(i, t, m, collation if t in (VARCHAR, BLOB) else None)
                                     for i, (t, m) in enumerate(picks)), unsigned=unsigned,
                  enum_values={i: v for i, v in enums.items() if v} or None,
                  set_values={i: v for i, v in sets.items() if v} or None)
    code = data.draw(st.sampled_from([30, 31, 32]))  # write, update, delete (v2)
    width = len(picks)
    nb = (width + 7) // 8
    bitmaps = [data.draw(st.integers(1, (1 << width) - 1)).to_bytes(nb, "little") for _ in range(2)]
    images = b""
    for _ in range(data.draw(st.integers(1, 3))):
        for bm in (bitmaps[:1] if code != 31 else bitmaps):
            present = [i for i in range(width) if bm[i // 8] >> (i % 8) & 1]
            nulls = data.draw(st.integers(0, (1 << len(present)) - 1))
            images += nulls.to_bytes((len(present) + 7) // 8, "little")
            for k, i in enumerate(present):
                if not nulls >> k & 1:
                    images += _value_bytes(data, *picks[i])
    fields = Container(rows=images, columns_before_image=bitmaps[0],
                       columns_after_image=bitmaps[1] if code == 31 else None, width=width)
    _agree(rowarrow, table, fields, code)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_decimals_of_every_precision_are_taken_and_equal(rowarrow, data):
    """DECIMAL(p, s) for every p (decimal128 to 38 digits, decimal256 past it) holding any value
    it can: C takes it and makes Python's value; a value with a group past its digits (damaged
    bytes: Python's FormatError) is Python's."""
    p = data.draw(st.integers(1, 65))
    s = data.draw(st.integers(0, min(p, 30)))
    values = data.draw(st.lists(st.integers(-10**p + 1, 10**p - 1) | st.sampled_from([0, 10**p - 1, 1 - 10**p]),
                                min_size=1, max_size=4))
    table = Table(1, "d", "dec", (Column(0, NEWDECIMAL, p << 8 | s),))
    image = b"".join(b"\0" + jb.decimal_bytes(v, p, s) for v in values)
    fields = Container(rows=image, columns_before_image=b"\x01", columns_after_image=None, width=1)
    assert _agree(rowarrow, table, fields, 30) is True


@settings(max_examples=100, deadline=None)
@given(st.lists(st.none() | st.lists(st.floats(width=32, allow_nan=False), max_size=6), min_size=1, max_size=4))
@example([[3.4025001647762064e+38, -0.0, 1e-45]])  # its shortest text at 4 digits rounds past FLT_MAX (Python raised)
def test_vectors_are_taken_and_equal(rowarrow, vectors):
    """VECTOR values (MySQL 9: float32s) and NULLs to list<float32>: C takes them (signed zeros,
    infinities, subnormals as they are) and makes Python's lists; one NaN sends the event to
    Python (its NaN is Python's float's to keep). Found here: ``values.Vector`` raised
    OverflowError for a float32 near FLT_MAX whose shorter texts round past it."""
    import struct

    table = Table(1, "d", "vec", (Column(0, VECTOR, 4, 63),))

    def image(vs):
        out = b""
        for v in vs:
            raw = b"" if v is None else struct.pack(f"<{len(v)}f", *v)
            out += b"\x01" if v is None else b"\0" + len(raw).to_bytes(4, "little") + raw
        return Container(rows=out, columns_before_image=b"\x01", columns_after_image=None, width=1)
    assert _agree(rowarrow, table, image(vectors), 30) is True
    assert _c_rows(rowarrow, table, image(vectors + [[1.0, float("nan")]]), 30) is None


# -- flashback: row images cut by C (``_rowarrow.bounds``) against the compiled Python -------------

def _cut_both(table, data: bytes, update: bool):
    """(C's cut or None where it steps aside, Python's cut or None where it refuses)."""
    from binlogkit.flashback import invert

    plan = invert._c_sizing(table)
    got = None if plan is None else invert.C_ROWARROW.bounds(plan, data, update)
    try:
        want = invert.split_rows_python(table, data, update)
    except BinlogError:
        want = None
    if plan is not None:
        assert (got is None) == (want is None), table.name  # a C plan steps aside only where Python refuses
    if got is not None:
        assert got == want, table.name
    return got, want


def test_flashback_cuts_every_fixture_event_as_python_does(rowarrow):
    """Every rows event of every fixture and corpus file: C cuts its images (before/after for
    updates) into the same bytes as the compiled Python, and refuses exactly what Python refuses;
    C takes most events (every table whose columns have fixed or length-prefixed sizes)."""
    from binlogkit.codecs.compression import uncompress
    from binlogkit.flashback.invert import UNDO_TYPE

    taken = total = 0
    for path in _files():
        for table, fields, code in _rows_events(path):
            if code not in UNDO_TYPE:
                continue
            data = bytes(fields.rows)
            if code in COMPRESSED_ROWS:
                try:
                    data = uncompress(data)
                except Exception:
                    continue
            total += 1
            got, _ = _cut_both(table, data, UNDO_TYPE[code][1] == "u")
            taken += got is not None
    assert total > 1000 and taken > 0.9 * total, (taken, total)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_flashback_cuts_damaged_images_as_python_does(rowarrow, data):
    table, fields, code = _damaged(data)
    _cut_both(table, bytes(fields.rows), data.draw(st.booleans()))


def test_flashback_refuses_a_table_of_no_columns(rowarrow):
    """No columns: no image ends (the compiled Python looped forever on such rows); both refuse."""
    from binlogkit.flashback.invert import split_rows

    with pytest.raises(BinlogError):
        split_rows(Table(1, "d", "t", ()), b"\0\0", False)
    assert split_rows(Table(1, "d", "t", ()), b"", False) == []


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_enum_and_set_labels_are_made_in_c(rowarrow, data):
    """ENUM and SET columns with their labels (FULL metadata): C writes the label of each index
    ("" for 0 and past the labels) and the members of each bit set, joined by commas, as the
    Python converters do; any stored value of 1-2 (ENUM) or 1-8 (SET) bytes."""
    labels = st.lists(st.text(min_size=1, max_size=5).filter(lambda x: "," not in x), min_size=1, max_size=70,
                      unique=True)
    en, sn = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 8))
    enums, sets = tuple(data.draw(labels)), tuple(data.draw(labels))[:64]
    table = Table(1, "d", "es", (Column(0, STRING, ENUM << 8 | en), Column(1, STRING, SET << 8 | sn)),
                  enum_values={0: enums}, set_values={1: sets})
    rows = b""
    for _ in range(data.draw(st.integers(1, 5))):
        e = data.draw(st.integers(0, len(enums) + 1) | st.integers(0, 256**en - 1))
        bits = data.draw(st.integers(0, 256**sn - 1))
        rows += b"\0" + e.to_bytes(en, "little") + bits.to_bytes(sn, "little")
    fields = Container(rows=rows, columns_before_image=b"\x03", columns_after_image=None, width=2)
    assert _agree(rowarrow, table, fields, 30) is True


# -- JSON: random documents built as MySQL stores them (tests/mysql_json_build.py) ---------------

_INT_TYPES = {jb.INT16: (-2**15, 2**15 - 1), jb.UINT16: (0, 2**16 - 1), jb.INT32: (-2**31, 2**31 - 1),
              jb.UINT32: (0, 2**32 - 1), jb.INT64: (-2**63, 2**63 - 1), jb.UINT64: (0, 2**64 - 1)}


@st.composite
def _decimal_opaque(draw):
    p = draw(st.integers(1, 65))
    s = draw(st.integers(0, min(p, 30)))
    return jb.Opaque(246, bytes([p, s]) + jb.decimal_bytes(draw(st.integers(-10**p + 1, 10**p - 1)), p, s))


_json_scalars = (st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
                 | st.sampled_from(sorted(_INT_TYPES)).flatmap(lambda t: st.integers(*_INT_TYPES[t]).map(
                     lambda v: jb.Typed(t, v)))
                 | st.floats() | st.text(max_size=10) | st.sampled_from(['"\\\n\r\b\f\t\x00\x1f/', "é€😀"])
                 | st.builds(jb.Opaque, st.sampled_from([7, 10, 11, 12]),  # temporals: a packed int64 (and more)
                             st.integers(-2**63, 2**63 - 1).map(lambda v: v.to_bytes(8, "little", signed=True))
                             | st.binary(min_size=8, max_size=12))
                 | _decimal_opaque()
                 | st.builds(jb.Opaque, st.integers(0, 255).filter(lambda t: t not in (7, 10, 11, 12, 246)),
                             st.binary(max_size=8)))
_json_docs = st.recursive(_json_scalars, lambda kids: st.lists(kids, max_size=4)
                          | st.dictionaries(st.text(max_size=6), kids, max_size=4), max_leaves=12)


def _plain(v):
    """The value the reference reads back from ``jb.document(v)`` (Typed: its integer)."""
    if isinstance(v, jb.Typed):
        return v.value
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


_plain_docs = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False)
                           | st.text(max_size=8), lambda kids: st.lists(kids, max_size=4)
                           | st.dictionaries(st.text(max_size=6), kids, max_size=4), max_leaves=12)


@settings(max_examples=100, deadline=None)
@given(_plain_docs, st.booleans())
def test_the_json_builder_round_trips_through_the_reference(value, large):
    """The build side (tests/mysql_json_build.py) against the reference reader: what it builds
    reads back as the value it was given (so the documents the C tests draw are real ones)."""
    from binlogkit.codecs.mysql_json import to_python

    assert to_python(jb.document(value, lambda v: large)) == _plain(value)


def _json_table(doc: bytes, code: int = 30):
    """A table of (INT, JSON) and one image of it holding ``doc``."""
    table = Table(1, "d", "j", (Column(0, LONG, 0), Column(1, JSON, 4)))
    image = b"\0" + (7).to_bytes(4, "little") + len(doc).to_bytes(4, "little") + doc
    fields = Container(rows=image, columns_before_image=b"\x03", columns_after_image=None, width=2)
    return table, fields, code


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_json_documents_c_prints_as_python(rowarrow, data):
    """Every document a server could store (random values, small and large containers): C takes
    it and its text equals the Python reference's (byte for byte: the tables' strings)."""
    value = data.draw(_json_docs)
    large = data.draw(st.booleans())
    doc = jb.document(value, (lambda v: True) if large else (lambda v: False))
    assert _agree(rowarrow, *_json_table(doc)) is True


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_damaged_json_documents_agree_or_step_aside(rowarrow, data):
    """A document with bytes flipped, cut or added: C prints what Python prints, or steps aside
    (and always where Python refuses it)."""
    doc = bytearray(jb.document(data.draw(_json_docs)))
    for _ in range(data.draw(st.integers(1, 3))):
        how = data.draw(st.sampled_from(["flip", "cut", "grow"]))
        if how == "flip" and doc:
            doc[data.draw(st.integers(0, len(doc) - 1))] = data.draw(st.integers(0, 255))
        elif how == "cut":
            del doc[data.draw(st.integers(0, len(doc))):]
        else:
            doc += data.draw(st.binary(max_size=8))
    _agree(rowarrow, *_json_table(bytes(doc)))


def _python_json_error(doc: bytes):
    from binlogkit.errors import FormatError

    table, fields, code = _json_table(doc)
    with pytest.raises(FormatError, match="malformed binary JSON"):
        decode_rows_python(table, fields, code)


def test_json_nesting_and_self_reference_are_bounded(rowarrow):
    """100 nested containers (MySQL's JSON_DOCUMENT_MAX_DEPTH) print; 101 are a FormatError in
    Python and C steps aside; a container whose entry points back at itself (Python's recursion
    used to run out: RecursionError) and one whose entries all point at one child, 40 levels deep
    (2**40 values to print), are FormatErrors at once, never unbounded work."""
    import time

    deep = []
    for _ in range(99):
        deep = [deep]
    assert _agree(rowarrow, *_json_table(jb.document(deep))) is True
    _python_json_error(jb.document([deep]))
    assert _c_rows(rowarrow, *_json_table(jb.document([deep]))) is None
    # a small array whose one entry is a small array at offset 0: itself
    loop = bytes([jb.SMALL_ARR]) + (1).to_bytes(2, "little") + (7).to_bytes(2, "little") + bytes([jb.SMALL_ARR, 0, 0])
    _python_json_error(loop)
    assert _c_rows(rowarrow, *_json_table(loop)) is None
    # 40 small arrays one after another, each of two entries pointing at the next (the last: empty)
    body, levels = bytearray(), 40
    for k in range(levels):
        nxt = (k + 1) * 10 - k * 10  # every container 10 bytes after the one before, offsets from its own start
        body += (2).to_bytes(2, "little") + (10).to_bytes(2, "little") + bytes([jb.SMALL_ARR]) + \
            nxt.to_bytes(2, "little") + bytes([jb.SMALL_ARR]) + nxt.to_bytes(2, "little")
    body += bytes(4)
    dag = bytes([jb.SMALL_ARR]) + bytes(body)
    start = time.process_time()
    _python_json_error(dag)
    assert _c_rows(rowarrow, *_json_table(dag)) is None
    assert time.process_time() - start < 5


def test_every_json_scalar_form_is_taken(rowarrow):
    """The forms the fixtures hardly hold: every integer width at its extremes, doubles with
    exponents and signed zero, the infinities and NaN, temporals (negative TIME), decimals of 65
    digits, base64 opaques, escapes and 4-byte UTF-8, keys out of MySQL's order."""
    values = [jb.Typed(t, v) for t, r in _INT_TYPES.items() for v in r]
    values += [1e22, 1e16, 1.5e-7, -0.0, 0.1, float("inf"), float("-inf"), float("nan"), 2.0**-1074]
    values += [jb.Opaque(11, (-((838 << 12 | 59 << 6 | 59) << 24 | 999999)).to_bytes(8, "little", signed=True)),
               jb.Opaque(12, (((2024 * 13 + 2) << 5 | 29) << 17 | 23 << 12 | 59 << 6 | 58).to_bytes(8, "little") + b"x"),
               jb.Opaque(10, (((2024 * 13 + 2) << 5 | 29) << 41).to_bytes(8, "little")),
               jb.Opaque(246, bytes([65, 30]) + jb.decimal_bytes(-(10**65 - 1), 65, 30)),
               jb.Opaque(246, bytes([5, 5]) + jb.decimal_bytes(0, 5, 5)),
               jb.Opaque(253, b""), jb.Opaque(253, b"ab"), jb.Opaque(15, b"abcd"),
               '"\\\b\f\n\r\t\x01', "\U0001F600\u20ac"]
    for large in (False, True):
        doc = jb.document({"k": values, "": values[:3]}, lambda v: large)
        assert _agree(rowarrow, *_json_table(doc)) is True
    # keys out of order (a duplicate would merge in Python's dict): C steps aside, Python decides
    doc = bytearray(jb.document({"a": 1, "b": 2}))
    ka = doc.index(b"ab")
    doc[ka:ka + 2] = b"bb"
    assert _c_rows(rowarrow, *_json_table(bytes(doc))) is None
    assert decode_rows_python(*_json_table(bytes(doc)))[0]["after"][1][1].value == '{"b": 2}'


def _export_files(out: Path) -> dict:
    got = {}
    for f in sorted(out.rglob("*.parquet")):
        if "_schemas" in f.parts or "_statements" in f.parts:
            continue
        t = pq.read_table(f)
        got[f.relative_to(out).as_posix()] = t
    return got


@pytest.mark.parametrize("name,server", [("row-types-full-metadata", "mariadb-10.11"), ("row-types", "mariadb-10.11"),
                                         ("replication-gtid", "mysql-9.7"), ("replication-gtid", "mariadb-11.8")])
def test_whole_exports_are_equal_file_for_file(rowarrow, tmp_path, monkeypatch, name, server):
    src = store.materialize(name, server=server)
    inputs = sorted({p.parent for p in src.rglob("*") if p.is_file() and ".0" in p.name and "bin" in p.name})
    assert inputs
    export([str(inputs[0])], str(tmp_path / "c"))
    with monkeypatch.context() as m:
        m.setattr(changes, "C_ROWARROW", None)
        export([str(inputs[0])], str(tmp_path / "py"))
    c, py = _export_files(tmp_path / "c"), _export_files(tmp_path / "py")
    assert c.keys() == py.keys() and c
    for k in c:
        assert c[k].schema.equals(py[k].schema, check_metadata=True), k
        assert same(c[k], py[k]), k


def test_the_c_path_is_the_one_export_takes(rowarrow, tmp_path, monkeypatch):
    """Export really hands images to C (a spy counts the rows the builder took)."""
    from binlogkit.export import dataset

    took = []
    real = dataset.DatasetWriter._arrow_rows

    def spy(self, part, r, op, n):
        ok = real(self, part, r, op, n)
        took.append(n if ok else 0)
        return ok
    monkeypatch.setattr(dataset.DatasetWriter, "_arrow_rows", spy)
    src = store.materialize("row-types-full-metadata")
    folder = sorted({p.parent for p in src.rglob("*") if p.is_file() and ".0" in p.name})[0]
    export([str(folder)], str(tmp_path / "out"))
    assert sum(took) >= 10, took[:10]


@pytest.mark.parametrize("window,spool", [(None, None), (2048, None), (None, 64)])
def test_the_c_walk_keeps_its_tables_after_the_python_path_and_a_cut_window(rowarrow, tmp_path, monkeypatch,
                                                                           window, spool):
    """Rows events go the Python path about once per table (its first, which makes the table's
    target), not again after every event the Python path took for another table, nor around
    the events a read window cuts (the window is refilled past such an event and the C walk
    takes what follows, that event included), nor once a transaction's events are spooled on
    disk (the C walk's runs go there whole and are replayed by it): ten tables interleaved in
    MySQL 9.7's replication archive, with the default window and a 2 KB one, and a spool of
    64 bytes in memory; the files the same."""
    from binlogkit.reading import framing

    src = store.materialize("replication-gtid", server="mysql-9.7")
    folder = sorted({p.parent for p in src.rglob("*") if p.is_file() and ".0" in p.name})[0]
    export([str(folder)], str(tmp_path / "ref"))
    if window:
        monkeypatch.setattr(framing, "WINDOW", window)
    spilled = []
    if spool:
        monkeypatch.setattr(changes, "SPOOL_MEMORY", spool)
        real_write = changes.Spool.disk_write

        def write(self, head, data):
            spilled.append(head[12])  # the record's type code (0: a C walk's run)
            return real_write(self, head, data)
        monkeypatch.setattr(changes.Spool, "disk_write", write)
    python = []
    real = changes._Walk._event

    def spy(self, raw, t, row_index):
        if raw.type_code in changes.LEAN_ROWS:
            python.append(raw.offset)
        return real(self, raw, t, row_index)
    monkeypatch.setattr(changes._Walk, "_event", spy)
    summary = export([str(folder)], str(tmp_path / "out"))
    tables = len(summary["tables"])
    assert tables >= 8 and summary["rows"] > 200
    assert len(python) <= 2 * tables, (len(python), tables)
    assert _dataset(tmp_path / "out") == _dataset(tmp_path / "ref")
    if spool:
        assert spilled.count(0) >= 20, "no run was spooled on disk: the disk path went unchecked"


# -- the walk: one framing pass (export/changes.py) against the two-walk lockstep it replaced ------

class _TwoWalks(changes._Walk):
    """The walk as it was before the one-pass walk (grouping scan and event reader in lockstep,
    each framing the file): the reference the one-pass walk is held equal to."""

    def one_file(self, inp):
        from contextlib import closing

        from binlogkit.reading.reader import read_events

        path = inp.name
        self.path, self.damaged = path, False
        grouper_error = None
        del self.g.files[1:]
        with closing(self.g.feed(inp)) as trx:
            def advance():
                nonlocal grouper_error
                if grouper_error is not None:
                    return None
                try:
                    return next(trx)
                except StopIteration:
                    return None
                except BinlogError as exc:
                    grouper_error = exc.with_context(file=path)
                    return None
            nxt = advance()
            try:
                for raw in read_events(inp):
                    if raw.type_code in changes.KEPT:
                        self.spool.add(raw)
                    end = raw.end_offset
                    while nxt is not None and (nxt.end_file != path or (nxt.end_offset or 0) <= end):
                        yield from self.finalize(nxt)
                        nxt = advance()
            except BinlogError as exc:
                self.report.problem(exc.with_context(file=path))
                self.damaged = True
                return
            while nxt is not None:
                yield from self.finalize(nxt)
                nxt = advance()
            if grouper_error is not None:
                self.report.problem(grouper_error)
                self.damaged = True


def _walked(walk_type, inputs, take=None):
    """What ``committed_changes`` yields through ``walk_type``, as plain values (the whole
    transaction each comes with), and its report; then the grouping scan's accounting of each
    file (``FileInfo``) and its last event after it."""
    from binlogkit.reading.source import inputs as expand

    report = changes.Report()
    walk = walk_type(changes.Filters(), report, take)
    out = []

    def item(x):
        t = x.trx
        head = (type(x).__name__, t.gtid, t.start_file, t.start_offset, t.end_offset, x.file, x.offset,
                repr(t.to_json()))
        if isinstance(x, changes.Statement):
            return head + (x.database, x.sql)
        return head + (x.table.db, x.table.name, x.type_code, x.row_index, len(x.rows))
    for inp in expand(inputs):
        report.files += 1
        out += [item(x) for x in walk.one_file(inp)]
        out.append(("file", repr(vars(walk.g.files[-1])), repr(walk.g.last_event), walk.g.last_whole))
        if walk.damaged:
            walk.reset()
    out += [item(x) for t in walk.g.finish() for x in walk.finalize(t)]
    return out, report


def _fixture_archives(first_only: bool = False) -> list[tuple[str, list]]:
    """(label, inputs) of every folder of binlogs or relay logs in the committed fixture sets:
    MariaDB 10.11, 11.8 and MySQL 9.7 (its keyring-encrypted set with its keyring), and the
    encrypted MariaDB sets with their keys; ``first_only``: the first folder of each set."""
    import re
    import shutil
    import tempfile

    from binlogkit.crypto.keys import load_keys
    from binlogkit.reading.source import Input

    log = re.compile(r"\.\d{6}(\.xz)?$")
    out = []
    for server in store.SERVERS:
        for name in store.set_names(server):
            keys = None
            root = store.materialize(name, server=server)
            if name == "keyring-encrypted":
                ring = Path(tempfile.mkdtemp()) / "keyring"
                shutil.copy(root / "keyring", ring)
                ring.chmod(0o600)
                keys = load_keys(keyring_file=str(ring))
            folders: dict[Path, list] = {}
            for p in sorted(root.rglob("*")):
                if p.is_file() and log.search(p.name):
                    folders.setdefault(p.parent, []).append(Input(str(p), keys))
            out += [(f"{server}/{f.relative_to(root)}", v) for f, v in folders.items()][:1 if first_only else None]
    enc = ROOT / "fixtures" / "encrypted"
    for name in sorted(p.name for p in enc.iterdir() if (p / "manifest.json").exists()):
        import json

        m = json.loads((enc / name / "manifest.json").read_text())
        k = enc / name / "keys"
        keys = load_keys(str(k / m["key_file"]), secret_file=str(k / m["secret_file"]) if m["secret_file"] else None)
        for side in ("primary",) if first_only else ("primary", "replica-binlog", "replica-relay"):
            files = sorted(p for p in (enc / name / side).iterdir() if log.search(p.name))
            out.append((f"encrypted/{name}/{side}", [Input(str(p), keys) for p in files]))
    return out


def test_the_one_pass_walk_yields_what_the_two_walks_did(rowarrow):
    """Every fixture archive (all servers, relay logs, damaged and cut files, encrypted with their
    keys): the one-pass walk yields the same changes (transactions, places, rows decoded) and the
    same report as the two-walk lockstep (rows counted by C where it takes them: the values
    themselves are the export test's below, C against Python), with the same transactions and
    the same accounting of each file (``FileInfo``, the last event): the C walk's taker
    (``_rowarrow.take_plain``) frames the plain events of open transactions and does that
    accounting in one step where the grouping scan did it event by event."""
    archives = _fixture_archives()
    assert len(archives) > 40
    problems = 0
    for label, inputs in archives:
        want, want_report = _walked(_TwoWalks, inputs)
        got, got_report = _walked(changes._Walk, inputs)
        assert got == want, label
        assert got_report == want_report, label
        problems += len(want_report.problems) + len(want_report.incomplete)
    assert problems, "no archive with damage or a cut transaction: the failure paths went unchecked"


def test_every_fixture_archive_exports_the_same_tables_by_c_and_by_python(rowarrow, tmp_path, monkeypatch):
    """Whole exports of every fixture archive (every server's sets, encrypted ones included):
    the C path (one-pass walk, images taken by the writer's builder) and the Python path
    (``BINLOGKIT_NO_ROWARROW``'s) write the same files with equal tables. The first archive of
    each set here; every archive with ``ROWARROW_ALL_ARCHIVES=1`` (``make asan-rowarrow``)."""
    for k, (label, inputs) in enumerate(_fixture_archives(first_only=not os.environ.get("ROWARROW_ALL_ARCHIVES"))):
        export(inputs, str(tmp_path / f"c{k}"))
        with monkeypatch.context() as m:
            m.setattr(changes, "C_ROWARROW", None)
            export(inputs, str(tmp_path / f"py{k}"))
        c, py = _export_files(tmp_path / f"c{k}"), _export_files(tmp_path / f"py{k}")
        assert c.keys() == py.keys(), label
        for f in c:
            assert c[f].schema.equals(py[f].schema, check_metadata=True), (label, f)
            assert same(c[f], py[f]), (label, f)


def _dataset(out: Path) -> dict:
    """Every file of an export as bytes (``_SUCCESS`` as its summary, without its timing and
    output name)."""
    import json

    got = {}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "_SUCCESS":
                summary = json.loads(data)
                summary.pop("seconds"), summary.pop("output")
                data = json.dumps(summary, sort_keys=True).encode()
            got[f.relative_to(out).as_posix()] = data
    return got


def _damaged_copies(tmp: Path) -> list[tuple[str, list]]:
    """A MariaDB binlog with a rows event in the middle of a transaction damaged three ways:
    a flipped image byte (CRC32 mismatch), a lying end_log_pos, cut in the middle of the event."""
    src = store.materialize("row-types-full-metadata")
    path = sorted(p for p in src.rglob("*") if p.is_file() and "bin.0" in p.name)[0]
    data = path.read_bytes()
    at, seen = 4, 0
    while at + 19 <= len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little")
        if data[at + 4] in (23, 24, 25, 30, 31, 32):
            seen += 1
            if seen == 3:
                break
        at += size
    assert seen == 3
    out = []
    for kind in ("crc", "log_pos", "cut"):
        d = bytearray(data)
        if kind == "crc":
            d[at + size - 6] ^= 0x5A
        elif kind == "log_pos":
            d[at + 13:at + 17] = (int.from_bytes(d[at + 13:at + 17], "little") + 7).to_bytes(4, "little")
        else:
            d = d[:at + size // 2]
        (tmp / kind).mkdir()
        (tmp / kind / path.name).write_bytes(bytes(d))
        out.append((f"damaged/{kind}", [str(tmp / kind / path.name)]))
    return out


def damaged_plain_events(data: bytes, rnd) -> bytes:
    """``data`` (a binlog with CRC32s) with 1-4 bytes of its Table_map / rows events changed -
    mostly in the first 40 bytes of the body (table id, flags, width, bitmaps), now and then
    the event's length or type - and each such event's CRC32 made right again: events the C
    walk frames and parses itself, where only its own checks stand between them and the builder."""
    import zlib

    d = bytearray(data)
    at, plain = 4, []
    while at + 19 <= len(d):
        size = int.from_bytes(d[at + 9:at + 13], "little")
        if size < 19 or at + size > len(d):
            break
        if d[at + 4] in (19, 23, 24, 25, 30, 31, 32):
            plain.append((at, size))
        at += size
    for _ in range(rnd.randint(1, 4)):
        at, size = rnd.choice(plain)
        r = rnd.random()
        if r < 0.05:
            d[at + 4] = rnd.choice([19, 23, 24, 25, 30, 31, 32, 2, 16])
        elif r < 0.1:
            d[at + 9] = rnd.randrange(256)
        else:
            span = min(size - 23, 40 if rnd.random() < 0.8 else size - 23)
            if span > 0:
                d[at + 19 + rnd.randrange(span)] = rnd.choice([0, 1, 0xFF, 0xFB, 0xFC, 0xFE, rnd.randrange(256)])
        size = int.from_bytes(d[at + 9:at + 13], "little")
        if 23 <= size and at + size <= len(d):
            d[at + size - 4:at + size] = zlib.crc32(bytes(d[at:at + size - 4])).to_bytes(4, "little")
    return bytes(d)


def _without_sink(monkeypatch_context):
    """Exports in this context go through ``Rows`` values (``committed_changes`` without ``sink``)."""
    import binlogkit.export as exp

    real = changes.committed_changes
    monkeypatch_context.setattr(exp, "committed_changes", lambda *a, sink=None, **kw: real(*a, **kw))


def test_the_c_walk_writes_what_the_rows_did(rowarrow, tmp_path, monkeypatch):
    """The export with the C walk (``committed_changes(sink=...)``: runs of table maps and rows
    events framed by ``_rowarrow.take_plain``, appended by ``_rowarrow.replay_run``) writes the
    same files, byte for byte, summary and report included, as with ``Rows`` values through the
    writer (the path before it): every fixture archive (the first of each set; all with
    ``ROWARROW_ALL_ARCHIVES=1``), every corpus file, damaged copies (checksum, end_log_pos, cut),
    with row groups of 7 and parts of 40 rows (the flushes and part closes inside a run), the
    servers' archives with the defaults too."""
    import binlogkit.export as exp

    from test_rowtext import CORPUS

    real = changes.committed_changes
    monkeypatch.setattr(exp, "committed_changes", real)
    archives = _fixture_archives(first_only=not os.environ.get("ROWARROW_ALL_ARCHIVES"))
    if CORPUS.is_dir():
        archives += [(f"corpus/{p.name}", [str(p)]) for p in sorted(CORPUS.rglob("*"))
                     if p.is_file() and "expected" not in p.parts and p.suffix[1:].isdigit()]
    archives += _damaged_copies(tmp_path)
    walked = problems = 0
    spy = []
    real_replay = changes._Walk._replay_run

    def replay_run(self, *a):
        spy.append(1)
        return (yield from real_replay(self, *a))
    monkeypatch.setattr(changes._Walk, "_replay_run", replay_run)
    for k, (label, inputs) in enumerate(archives):
        for sizes in ({"row_group_rows": 7, "part_rows": 40}, {}) if label.startswith(("mariadb", "mysql")) \
                else ({"row_group_rows": 7, "part_rows": 40},):
            n = len(spy)
            exp.export(inputs, str(tmp_path / f"c{k}"), **sizes)
            walked += len(spy) > n
            with monkeypatch.context() as m:
                _without_sink(m)
                exp.export(inputs, str(tmp_path / f"rows{k}"), **sizes)
            c, rows = _dataset(tmp_path / f"c{k}"), _dataset(tmp_path / f"rows{k}")
            assert c == rows, label
            problems += b'"problems": []' not in c["_SUCCESS"]
            for d in (f"c{k}", f"rows{k}"):
                shutil.rmtree(tmp_path / d)
    assert walked > len(archives) // 2, (walked, len(archives))
    assert problems >= 3, "the damaged copies reported nothing: the failure paths went unchecked"


def test_the_c_walk_and_the_rows_agree_on_damaged_events_with_good_checksums(rowarrow, tmp_path, monkeypatch):
    """Table maps and rows events damaged where the C walk parses them (table id, width,
    bitmaps, lengths), their CRC32s made right: the C walk writes what the ``Rows`` path writes,
    the report included (more rounds: ``make asan-rowarrow``)."""
    import random

    import binlogkit.export as exp

    src = store.materialize("row-types-full-metadata")
    path = sorted(p for p in src.rglob("*") if p.is_file() and "bin.0" in p.name)[0]
    data = path.read_bytes()
    rnd = random.Random(34)
    reported = 0
    for k in range(30):
        (tmp_path / f"in{k}").mkdir()
        f = tmp_path / f"in{k}" / path.name
        f.write_bytes(damaged_plain_events(data, rnd))
        c = export_outcome([str(f)], tmp_path / f"c{k}", row_group_rows=7)
        with monkeypatch.context() as m:
            _without_sink(m)
            assert c == export_outcome([str(f)], tmp_path / f"rows{k}", row_group_rows=7), k
        reported += isinstance(c, tuple) or b'"problems": []' not in c["_SUCCESS"]
    assert reported, "no damage reported: the damage went nowhere"


def export_outcome(inputs, out: Path, **kw):
    """An export's files (``_dataset``), or the typed error it raised: (type, message, file, offset, event)."""
    import binlogkit.export as exp

    try:
        exp.export(inputs, str(out), **kw)
    except BinlogError as exc:
        return (type(exc).__name__, exc.message, exc.file, exc.offset, exc.event_type)
    return _dataset(out)


@pytest.mark.parametrize("name,server", [("row-types-full-metadata", "mariadb-10.11"), ("replication-gtid", "mysql-9.7")])
def test_change_batches_are_the_exports_rows(rowarrow, tmp_path, name, server):
    """``dataset.change_batches`` (no files: what Spark's ``changes`` reader can take) hands out
    the rows the export writes, per table version, in the same schema."""
    from binlogkit.export.dataset import change_batches

    src = store.materialize(name, server=server)
    folder = sorted({p.parent for p in src.rglob("*") if p.is_file() and ".0" in p.name and "bin" in p.name})[0]
    export([str(folder)], str(tmp_path / "out"))
    files: dict[str, list] = {}
    for f, t in _export_files(tmp_path / "out").items():
        files.setdefault(t.schema.metadata[b"binlogkit.schema_version"].decode(), []).append(t)
    got: dict[str, list] = {}
    for lay, batch in change_batches([str(folder)], batch_rows=7):
        assert batch.num_rows <= 7 and batch.schema.equals(lay.schema, check_metadata=True)
        got.setdefault(lay.version, []).append(pa.Table.from_batches([batch]))
    assert got.keys() == files.keys() and got
    order = [("file", "ascending"), ("offset", "ascending"), ("row_index", "ascending")]
    for version in got:
        mine = pa.concat_tables(got[version]).sort_by(order)
        want = pa.concat_tables(files[version]).sort_by(order).cast(mine.schema)  # Parquet keeps no timestamp[s]
        assert same(mine, want), version


_KINDS = {"I": (st.integers(0, 2**32 - 1), "uint32"), "q": (st.integers(-2**63, 2**63 - 1), "int64"),
          "r": (st.integers(-2**40, 2**40), "int64"), "s": (st.text(max_size=12) | st.binary(max_size=12), None)}


@given(st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_repeat_makes_the_column_python_makes(rowarrow, data):
    """``_rowarrow.repeat`` (the per-event columns of a chunk: op, gtid, file, offset, row_index …)
    against the same column made value by value in Python."""
    from array import array

    kind = data.draw(st.sampled_from(sorted(_KINDS)))
    values_st, typ = _KINDS[kind]
    runs = data.draw(st.lists(st.tuples(st.integers(0, 5), st.none() | values_st), max_size=8))
    if kind == "s":
        runs = [(c, v) for c, v in runs if not isinstance(v, bytes)] if data.draw(st.booleans()) else \
            [(c, v.encode("utf-8") if isinstance(v, str) else v) for c, v in runs]
        typ = "string" if all(not isinstance(v, bytes) for _, v in runs) else "binary"
    counts = array("q", [c for c, _ in runs]).tobytes()
    valid, nulls, offsets, body = rowarrow.repeat(counts, [v for _, v in runs], kind)
    n = sum(c for c, _ in runs)
    if kind == "r":
        want = [None if v is None else v + j for c, v in runs for j in range(c)]
    else:
        want = [v for c, v in runs for _ in range(c)]
    t = pa.type_for_alias(typ)
    got = pa.Array.from_buffers(t, n, [None if valid is None else pa.py_buffer(valid),
                                       *([] if offsets is None else [pa.py_buffer(offsets)]), pa.py_buffer(body)],
                                null_count=nulls)
    got.validate(full=True)
    assert got.equals(pa.array(want, t)) and nulls == want.count(None)


def test_repeat_refuses_what_it_cannot_hold(rowarrow):
    from array import array

    with pytest.raises(ValueError):
        rowarrow.repeat(b"\0" * 7, [1], "q")
    with pytest.raises(ValueError):
        rowarrow.repeat(array("q", [1]).tobytes(), [1], "x")
    with pytest.raises(OverflowError):
        rowarrow.repeat(array("q", [-1]).tobytes(), [1], "q")
    with pytest.raises(OverflowError):
        rowarrow.repeat(array("q", [2**31]).tobytes(), [1], "q")
    with pytest.raises(OverflowError):
        rowarrow.repeat(array("q", [1]).tobytes(), [2**32], "I")
    with pytest.raises(OverflowError):
        rowarrow.repeat(array("q", [2**20, 2**20]).tobytes(), ["x" * 2**11, "y"], "s")
    with pytest.raises(TypeError):
        rowarrow.repeat(array("q", [1]).tobytes(), [1.5], "s")


def _partial_files() -> list[Path]:
    """Real files with partial row images: MySQL 9.7 MINIMAL / NOBLOB and MariaDB 10.11 row-types
    (fixtures), the mysql-test and MariaDB test suites' partial-row and hidden generated column files."""
    from test_rowtext import CORPUS

    out = [p for p in _files() if "row-types" in str(p) or "replication-gtid" in str(p) or "partial-json" in p.name]
    if CORPUS.is_dir():
        out += sorted(p for p in CORPUS.rglob("*-partial-row.binlog")) + sorted(CORPUS.rglob("rpl_unfiltered_hidden_gcol.*"))
    return out


def test_the_builder_marks_partial_after_images_as_the_mirror_does(rowarrow):
    """``Builder.partial_rows`` / ``partial``: per row, whether its after image lacks columns of
    the table (binlog_row_image MINIMAL / NOBLOB, generated columns left out), computed in C from
    the columns-present bitmaps; equal to the local mirror's own test (``lake.batch.TableBatch``:
    an after image holding fewer columns than the table) for every event C takes of the real files
    with partial images, and the count of them at every step."""
    from binlogkit.export.lake.batch import batch_for

    taken = marked = 0
    for path in _partial_files():
        for table, fields, code in _rows_events(path):
            got = _c_rows(rowarrow, table, fields, code)
            if got is None:
                continue
            rows = decode_rows_python(table, fields, code)
            b = batch_for(Rows(table, code, rows, TRX, path.name, 4, 0))
            b.add(Rows(table, code, rows, TRX, path.name, 4, 0), ())
            want = bytes(p is not None for p in b.present)
            builder = rowarrow.Builder(got.plan.widths)
            assert builder.partial_rows() == b"" and builder.partial == 0
            assert builder.add(*got.arrow) == len(want)
            assert builder.partial_rows() == want, (path, table.name, code)
            assert builder.partial == sum(want)
            assert builder.add(*got.arrow) == len(want)  # appended after: the marks follow the rows
            assert builder.partial_rows() == want + want and builder.partial == 2 * sum(want)
            assert builder.add(got.arrow[0], got.arrow[1], got.arrow[2], got.arrow[3], got.arrow[4], False) == len(want)
            assert builder.partial_rows() == want + want  # a probe keeps no marks
            builder.finish()
            assert builder.partial_rows() == b"" and builder.partial == 0
            taken += 1
            marked += bool(sum(want))
    assert taken > 50 and marked >= 8, (taken, marked)

"""The C accelerator for `decode -v` prints exactly what the Python decoder prints.

``binlogkit._rowtext`` is optional (built by setup.py when a C compiler is there). Where it is
built, every rows event of every fixture and corpus file must come out byte-equal from both, and
on damaged images it must either agree or step aside (None) -- never print something the
Python decoder refuses, never crash.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from construct import Container
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlogkit import open_binlog, rowvalues
from binlogkit.errors import BinlogError
from binlogkit.reading.events import decode
from binlogkit.rowvalues.images import c_args, _c_inputs, decode_rows_python
from binlogkit.rowvalues import COMPRESSED_ROWS, ROWS_TYPES, table_from_map, verbose_lines

from fixtures import store
from c_builds import require_built
from test_codecs import fixture_files

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rowtext():
    return require_built(rowvalues._rowtext, "binlogkit._rowtext", "the Python decoder")


def _python_text(table, fields, type_code) -> bytes:
    rows = decode_rows_python(table, fields, type_code)
    return "".join(line + "\n" for line in verbose_lines(table, rows, type_code)).encode("utf-8", "surrogateescape")


def _c_text(mod, table, fields, type_code):
    """``mod.verbose`` called the way ``verbose_text`` calls the accelerator (None where it is
    not called: pre-GA events, tables with hints)."""
    args = _c_inputs(table, fields, type_code)
    return None if args is None else mod.verbose(*args, *c_args(table)[2:4], table.escape_strings)


def _rows_events(path):
    tables, out = {}, []
    try:
        for raw in open_binlog(str(path), verify=False):
            if raw.type_code == 19:
                tables[decode(raw).parsed.table_id] = table_from_map(decode(raw).parsed, raw.format.flavor)
            elif raw.type_code in ROWS_TYPES and raw.type_code != 39:
                ev = decode(raw)
                if ev.parsed.table_id in tables:
                    out.append((tables[ev.parsed.table_id], ev.parsed, raw.type_code))
    except BinlogError:
        pass  # torn tails and damaged corpus files: the events before them count
    return out


def _files():
    out = [p for p in fixture_files() if "mariadb-bin" in p.name or "relay" in p.name]
    # MySQL 9.7's files: strings quoted as its mysqlbinlog does (flavor.tool_escapes_strings)
    today = store.materialize("replication-gtid", server="mysql-9.7")
    out += sorted(p for p in today.rglob("*") if p.suffix[1:].isdigit() and p.is_file())
    out += sorted(p for p in (ROOT / "fixtures" / "samples" / "mysql-9.7").glob("*.0*"))
    if CORPUS.is_dir():
        out += sorted(p for p in CORPUS.rglob("*") if p.is_file() and "expected" not in p.parts
                      and p.suffix[1:].isdigit())
    return out


def _compare_everywhere(c_fn, py_fn, same) -> None:
    """Every rows event of every fixture and corpus file through C and through Python: C gives
    what Python gives, steps aside (None), or - where Python refuses - steps aside."""
    handled = total = 0
    for path in _files():
        for table, fields, code in _rows_events(path):
            total += 1
            got = c_fn(table, fields, code)
            try:
                want = py_fn(table, fields, code)
            except BinlogError:
                assert got is None, f"{path}: C decoded rows the Python decoder refuses"
                continue
            if got is not None:
                assert same(got, want), f"{path} table {table.name}"
                handled += 1
    assert total > 1000 and handled > 0.9 * total, (handled, total)


def test_c_and_python_print_the_same_rows(rowtext):
    _compare_everywhere(lambda *a: _c_text(rowtext, *a), _python_text, lambda a, b: a == b)


def test_c_steps_aside_for_what_it_does_not_print(rowtext):
    """A JSON column (MySQL binary JSON) is the Python decoder's: C returns None."""
    table = rowvalues.Table(1, "d", "t", (rowvalues.Column(0, rowvalues.JSON, 4),))
    assert rowtext.verbose(b"\x00\x02\x00\x00\x00\x04\x00", 0, bytes([rowvalues.JSON]), b"\x04\x00", b"\x01", b"",
                           b"`d`.`t`") is None
    fields = Container(rows=b"\x00\x00\x00\x00\x00", columns_before_image=b"\x01", columns_after_image=None, width=1)
    assert rowvalues.verbose_text(table, fields, 23) == b"### INSERT INTO `d`.`t`\n### SET\n###   @1='null'\n"


def _seed_events():
    out = []
    for path in fixture_files():
        if "row-types" in str(path) and "mariadb-bin.00000" in path.name:
            out += list(_rows_events(path))
    return out


SEEDS = _seed_events()


def _damaged(data):
    """A seed rows event with its images flipped, cut or grown at random."""
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
    damaged = Container(rows=bytes(rows), columns_before_image=fields.columns_before_image,
                        columns_after_image=fields.columns_after_image, width=fields.width)
    return table, damaged, code


def _agree_or_step_aside(data, c_fn, py_fn, same) -> None:
    table, damaged, code = _damaged(data)
    got = c_fn(table, damaged, code)
    try:
        want = py_fn(table, damaged, code)
    except BinlogError:
        assert got is None
        return
    assert got is None or same(got, want)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_c_on_damaged_images_agrees_or_steps_aside(rowtext, data):
    _agree_or_step_aside(data, lambda *a: _c_text(rowtext, *a), _python_text, lambda a, b: a == b)


def _same_rows(got, want) -> bool:
    """Equal values of equal types, equal texts."""
    if got == want:
        for g, w in zip(got, want):
            for side in ("before", "after"):
                for (gi, gv), (wi, wv) in zip(g[side] or (), w[side] or ()):
                    if gi != wi or (gv is None) != (wv is None):
                        return False
                    if gv is not None and (type(gv.value) is not type(wv.value) or gv.text != wv.text):
                        return False
        return True
    return False


def _c_rows(mod, table, fields, code):
    """``mod.rows`` called the way ``decode_rows`` calls the accelerator."""
    args = _c_inputs(table, fields, code)
    return None if args is None else mod.rows(*args, c_args(table)[4], table.escape_strings)


def test_c_typed_rows_equal_the_python_ones(rowtext):
    """decode_rows through C gives the Python decoder's rows: same values of the same types
    (int, float, Decimal, bytes, date, datetime, timedelta, Geometry...), same texts."""
    _compare_everywhere(lambda *a: _c_rows(rowtext, *a), decode_rows_python, _same_rows)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_c_typed_rows_on_damaged_images_agree_or_step_aside(rowtext, data):
    _agree_or_step_aside(data, lambda *a: _c_rows(rowtext, *a), decode_rows_python, _same_rows)


def test_pre_ga_events_are_left_to_python():
    """Pre-GA rows (20-22) have a layout of their own (rowvalues.images._pre_ga): the accelerator
    is never handed one, and decode_rows gives the reference's rows."""
    table = rowvalues.Table(1, "d", "t", (rowvalues.Column(0, rowvalues.LONG, 0), rowvalues.Column(1, rowvalues.STRING, 0)))
    fields = Container(rows=b"\xf9\x05\x00\x00\x00\x02ab", columns_before_image=b"\x03", columns_after_image=None, width=2)
    for code in (20, 22):
        assert _c_inputs(table, fields, code) is None
        assert rowvalues.decode_rows(table, fields, code) == decode_rows_python(table, fields, code)
    assert rowvalues.verbose_text(table, fields, 20) == b"### INSERT INTO `d`.`t`\n### SET\n###   @1=5\n###   @2='ab'\n"


TEXT_TYPES = [(rowvalues.VARCHAR, 1000), (rowvalues.BLOB, 2)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.binary(max_size=300) | st.text(alphabet="ab'\\\b\f\n\r\t\x00\x1a\x7f\u00e9", max_size=40).map(
    lambda t: t.encode("utf-8")), escape=st.booleans(), kind=st.sampled_from(TEXT_TYPES))
def test_c_quotes_strings_as_python_does(rowtext, value, escape, kind):
    """Any bytes in a VARCHAR or BLOB, quoted both ways (mariadb-binlog's, MySQL 8.0+'s
    mysqlbinlog's): the C accelerator prints what the Python decoder prints."""
    t, meta = kind
    table = rowvalues.Table(1, "d", "t", (rowvalues.Column(0, t, meta),), escape_strings=escape)
    prefix = len(value).to_bytes(2, "little")
    fields = Container(rows=b"\x00" + prefix + value, columns_before_image=b"\x01", columns_after_image=None, width=1)
    got = _c_text(rowtext, table, fields, 30)
    assert got is not None and got == _python_text(table, fields, 30)
    rows = _c_rows(rowtext, table, fields, 30)
    assert rows is not None and _same_rows(rows, decode_rows_python(table, fields, 30))


def test_strings_quoted_as_each_flavors_tool_does():
    """mysqlbinlog 8.0+ (its quote table): ' and \\ escaped, \\b \\f \\n \\r \\t by name, other
    control bytes as \\xNN; mariadb-binlog: control bytes as \\xNN, the rest raw."""
    from binlogkit.flavor import Flavor, tool_escapes_strings

    raw = b"it's \\ a\tb\nc\x00\x1a\x7f\xc3\xa9"
    fields = Container(rows=b"\x00" + len(raw).to_bytes(2, "little") + raw, columns_before_image=b"\x01",
                       columns_after_image=None, width=1)
    want = {True: "'it\\'s \\\\ a\\tb\\nc\\x00\\x1a\x7f\u00e9'", False: "'it's \\ a\\x09b\\x0ac\\x00\\x1a\x7f\u00e9'"}
    for escape in (True, False):
        table = rowvalues.Table(1, "d", "t", (rowvalues.Column(0, rowvalues.BLOB, 2),), escape_strings=escape)
        text = rowvalues.verbose_text(table, fields, 30).decode("utf-8")
        assert text.splitlines()[-1] == "###   @1=" + want[escape]
    assert tool_escapes_strings(Flavor.MYSQL)
    assert not tool_escapes_strings(Flavor.MARIADB) and not tool_escapes_strings(None)

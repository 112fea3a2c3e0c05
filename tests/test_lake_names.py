"""Source names are data: a database or table name from the archive never leaves the warehouse
(``..``, ``/``), never nests an Iceberg namespace (``.``), never reaches delta-rs as a control
character (found by ``make fuzz``, target export-lake). ``export/lake/names.py`` is the one rule."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from binlogkit.export.lake.names import source, stored

pytest.importorskip("pyarrow")


@given(st.text())
def test_stored_names_are_plain_segments_and_read_back(name):
    s = stored(name)
    assert s and all(c.isascii() and (c.isalnum() or c in "_$@") for c in s)
    assert source(s) == name
    assert s not in (".", "..") and "/" not in s and "." not in s


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$", min_size=1))
def test_ordinary_names_are_unchanged(name):
    assert stored(name) == name


def _hostile_copy(src: Path, dst: Path, db: bytes, tables: dict[bytes, bytes]) -> None:
    """The binlog with every Table_map's database and the named tables renamed in place (same
    lengths, so nothing else moves), each event's CRC32 made again."""
    from binlogkit.reading.reader import iter_raw_events

    data = bytearray(src.read_bytes())
    with open(src, "rb") as fh:
        events = [(e.offset, e.event_size, e.type_code) for e in iter_raw_events(fh, name=src.name)]
    for off, size, code in events:
        if code != 19:
            continue
        body = off + 19 + 8                     # after the header and table_id(6) flags(2)
        n = data[body]
        old_db = bytes(data[body + 1:body + 1 + n])
        assert len(db) == n, old_db
        data[body + 1:body + 1 + n] = db
        t = body + 1 + n + 1
        m = data[t]
        name = bytes(data[t + 1:t + 1 + m])
        if name in tables:
            assert len(tables[name]) == m
            data[t + 1:t + 1 + m] = tables[name]
        data[off + size - 4:off + size] = zlib.crc32(bytes(data[off:off + size - 4])).to_bytes(4, "little")
    dst.write_bytes(bytes(data))


@pytest.mark.parametrize("fmt", ["delta", "iceberg"])
def test_hostile_names_stay_inside_the_warehouse(fmt, tmp_path):
    pytest.importorskip("deltalake" if fmt == "delta" else "pyiceberg")
    from click.testing import CliRunner

    from binlogkit.cli import main
    from binlogkit.export.lake.mirror import CHANGES, open_sink
    from fixtures import store

    src = store.materialize("row-types-full-metadata") / "primary" / "mariadb-bin.000001"
    work = tmp_path / "w"
    (work / "in").mkdir(parents=True)
    _hostile_copy(src, work / "in" / src.name, b"../..", {b"ints": b"i/\x01t", b"strs": b"s.tr"})
    around = sorted(os.listdir(tmp_path))
    res = CliRunner().invoke(main, ["export", str(work / "in" / src.name), "-o", str(work / "out"),
                                    "--format", fmt, "--mirror"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert sorted(os.listdir(work)) == ["in", "out"] and sorted(os.listdir(tmp_path)) == around
    sink = open_sink(fmt, str(work / "out"))
    for name in ("i/\x01t", "s.tr"):
        got = sink.read("../..", name + CHANGES)
        assert got is not None and got.num_rows > 0, name
    stored_dirs = {p.name for p in (work / "out").iterdir()}
    assert "@002e@002e@002f@002e@002e" in stored_dirs
    if fmt == "iceberg":
        assert ("../..", "i/\x01t" + CHANGES) in sink.table_names()

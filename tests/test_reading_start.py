"""``Input.frames(start=N)`` (reading layer): the file's head (Format_description, a MariaDB
Start_encryption) and then the events from offset ``N`` on, equal to a walk from byte 0 that
drops the events before ``N``, on plain, ``.xz`` (read and dropped: no seek), MariaDB-encrypted
(per-event cipher at the right offset) and MySQL-encrypted (CTR stream seeks) files; the events
between the head and ``N`` are never framed (counted: the walk's window never holds them for
a seekable file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from binlogkit.constants import GTID_TYPES, EventType as T
from binlogkit.crypto.keys import load_keys
from binlogkit.reading.source import Input

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
HEAD = {T.FORMAT_DESCRIPTION_EVENT, T.START_ENCRYPTION_EVENT}


def _frames(inp: Input, start=None) -> list[tuple]:
    return [(f.offset, f.type_code, f.timestamp, f.event_size, f.checksum_ok, f.data)
            for f in inp.frames(want=None, start=start)]


def _check(inp: Input) -> int:
    whole = _frames(inp)
    cuts = [f[0] for f in whole if f[1] in GTID_TYPES]
    assert len(cuts) > 3
    head = [f for f in whole if f[1] in HEAD and f[0] < cuts[0]]
    for cut in (cuts[1], cuts[len(cuts) // 2], cuts[-1]):
        got = _frames(inp, cut)
        assert got == head + [f for f in whole if f[0] >= cut], (inp.name, cut)
    assert _frames(inp, 4) == whole   # at or before the head: the whole file
    return len(cuts)


@pytest.mark.parametrize("path", ["mariadb-10.11/row-types-full-metadata/primary/mariadb-bin.000003",
                                  "mariadb-10.11/row-types-full-metadata/primary/mariadb-bin.000001.xz",
                                  "mysql-9.7/replication-gtid/primary/binlog.000003"])
def test_start_equals_the_whole_walk_from_that_offset(path):
    _check(Input(str(FIX / path)))


def test_start_in_mariadb_encrypted_files(tmp_path):
    key = tmp_path / "keys.txt"
    key.write_bytes((FIX / "encrypted" / "mariadb-aes-cbc" / "keys" / "keys.txt").read_bytes())
    key.chmod(0o600)
    keys = load_keys(str(key))
    files = sorted(p for p in (FIX / "encrypted" / "mariadb-aes-cbc" / "primary").iterdir() if ".0" in p.name)
    assert sum(_check(Input(str(p), keys)) for p in files) > 50
    enc = _frames(Input(str(files[0]), keys))
    assert any(f[1] == T.START_ENCRYPTION_EVENT for f in enc)


def test_start_in_a_mysql_encrypted_file_seeks_the_ctr_stream(tmp_path):
    from binlogkit.crypto import mysql as my

    plain = FIX / "mysql-9.7" / "replication-gtid" / "primary" / "binlog.000003"
    kid = "MySQLReplicationKey_00000000-0000-0000-0000-000000000001_1"
    master = bytes(range(32))
    enc = tmp_path / plain.name
    enc.write_bytes(my.encrypt_file(plain.read_bytes(), kid, master))
    ring = tmp_path / "ring"
    ring.write_bytes(my.build_keyring_json({kid: master}))
    os.chmod(ring, 0o600)
    keys = load_keys(keyring_file=str(ring))
    _check(Input(str(enc), keys))
    assert _frames(Input(str(enc), keys)) == _frames(Input(str(plain)))


def test_a_seekable_file_is_not_read_between_the_head_and_start(tmp_path, monkeypatch):
    """The bytes read from a plain file with ``start`` near its end: the head's window and the
    tail, not the file (counted at the opener's ``readinto``; a 64 KiB window)."""
    import binlogkit.reading.framing as framing
    import binlogkit.reading.source as src

    monkeypatch.setattr(framing, "WINDOW", 64 << 10)

    big = tmp_path / "mariadb-bin.000001"
    from fixtures.faults import generate

    generate(tmp_path / "g", files=1, trx_per_file=1500, seed=1, faults=(), clock=1_800_000_000)
    big.write_bytes(next((tmp_path / "g").glob("mariadb-bin.0*")).read_bytes())
    size = big.stat().st_size
    assert size > 400_000
    cut = [f.offset for f in Input(str(big)).frames() if f.type_code in GTID_TYPES][-5]
    read = [0]
    whole = _frames(Input(str(big)))
    xz = tmp_path / "mariadb-bin.000002.xz"      # an archive cannot seek: read and dropped, same frames
    import lzma

    xz.write_bytes(lzma.compress(big.read_bytes()))
    for c in (cut, [f[0] for f in whole if f[1] in GTID_TYPES][20]):
        assert [f[:5] for f in _frames(Input(str(xz)), c)] == [f[:5] for f in whole if f[0] < 5 or f[0] >= c]
    monkeypatch.setattr(src.Input, "open", _counting(read))
    tail = list(Input(str(big)).frames(start=cut))
    assert tail[0].type_code == T.FORMAT_DESCRIPTION_EVENT and tail[1].offset == cut
    assert read[0] < size // 4


def test_the_head_read_before_a_jump_is_not_a_whole_window(tmp_path, monkeypatch):
    """With ``start``, what is read for the file's head before the jump is the head's own bytes
    (``framing.HEAD_READ`` at most), not a whole window of the file: a follower reads a growing
    file's head at every look."""
    import binlogkit.reading.framing as framing
    import binlogkit.reading.source as src
    from fixtures.faults import generate

    generate(tmp_path / "g", files=1, trx_per_file=3000, seed=1, faults=(), clock=1_800_000_000)
    big = next((tmp_path / "g").glob("mariadb-bin.0*"))
    size = big.stat().st_size
    head = 64 << 10      # framing.HEAD_READ
    assert framing.WINDOW > size > 8 * head
    whole = _frames(Input(str(big)))
    cut = [f[0] for f in whole if f[1] in GTID_TYPES][-3]
    read = [0]
    monkeypatch.setattr(src.Input, "open", _counting(read))
    for _ in range(3):      # the window of a walk that ended serves the next one
        assert _frames(Input(str(big)), cut) == [f for f in whole if f[1] in HEAD and f[0] < cut or f[0] >= cut]
    assert read[0] <= 3 * (head + size - cut)


def _counting(read: list):
    """An ``Input.open`` that adds the bytes every ``readinto`` returns to ``read[0]``."""
    import binlogkit.reading.source as src

    real_open = src.Input.open

    def counting(self):
        fh = real_open(self)
        inner = fh.readinto

        class Counted:
            def __getattr__(self, k):
                return getattr(fh, k)

            def readinto(self, b):
                n = inner(b)
                read[0] += n
                return n

            def __enter__(self):
                return self

            def __exit__(self, *a):
                fh.close()
        return Counted()
    return counting


def test_an_input_with_a_start_reads_from_there_in_every_reader():
    """``Input(path, start=N)``: ``frames()`` and what is built on it (``read_events``, the
    transaction grouper) read the head and then from ``N``; the C decode loop, which opens the
    stored bytes itself, does not take it (``plain()`` is False)."""
    from dataclasses import replace

    from binlogkit.reading.reader import read_events
    from binlogkit.transactions import group_files

    inp = Input(str(FIX / "mariadb-10.11/row-types-full-metadata/primary/mariadb-bin.000003"))
    whole = list(read_events(inp))
    cut = [e.offset for e in whole if e.type_code in GTID_TYPES][3]
    ranged = replace(inp, start=cut)
    assert not ranged.plain() and inp.plain()
    assert [e.offset for e in read_events(ranged)] == [4] + [e.offset for e in whole if e.offset >= cut]
    trx = [t.start_offset for t in group_files([ranged])]
    assert trx == [t.start_offset for t in group_files([inp]) if t.start_offset >= cut]


@pytest.mark.parametrize("path", ["mariadb-10.11/row-types-full-metadata/primary/mariadb-bin.000003",
                                  "mariadb-10.11/row-types-full-metadata/primary/mariadb-bin.000001.xz",
                                  "mysql-9.7/replication-gtid/primary/binlog.000003"])
def test_stop_ends_the_walk_before_that_offset(path):
    """``Input(path, start=A, stop=B)`` / ``frames(stop=B)``: the head, then the events of
    ``[A, B)`` (B a GTID event's offset: a range of whole transactions), as the whole walk has
    them; the readers built on ``frames`` (``read_events``, the grouper, export's walk with its
    C taker) end there too, and ``plain()`` is False (the C decode loop does not take it)."""
    from dataclasses import replace

    from binlogkit.export.changes import Filters, Report, Rows, committed_changes
    from binlogkit.reading.reader import read_events
    from binlogkit.transactions import group_files

    inp = Input(str(FIX / path))
    whole = _frames(inp)
    cuts = [f[0] for f in whole if f[1] in GTID_TYPES]
    head = [f for f in whole if f[1] in HEAD and f[0] < cuts[0]]
    a, b = cuts[1], cuts[len(cuts) // 2]
    assert [(f.offset, f.type_code, f.data) for f in inp.frames(want=None, stop=b)] == \
        [(f[0], f[1], f[5]) for f in whole if f[0] < b]
    ranged = replace(inp, start=a, stop=b)
    assert not ranged.plain()
    assert _frames(ranged) == head + [f for f in whole if a <= f[0] < b]
    assert [e.offset for e in read_events(ranged)] == [f[0] for f in head] + [f[0] for f in whole if a <= f[0] < b]
    assert [t.start_offset for t in group_files([ranged])] == \
        [t.start_offset for t in group_files([inp]) if a <= t.start_offset < b]

    def changes(i):
        return [(c.offset, c.row_index, len(c.rows)) for c in committed_changes([i], Filters(), Report())
                if isinstance(c, Rows)]
    got, want = changes(ranged), [c for c in changes(inp) if a <= c[0] < b]
    assert got == want and (want or path.endswith(".xz"))

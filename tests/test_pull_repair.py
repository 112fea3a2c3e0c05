"""The start-up repair of a pull folder (``Store.repair``) on real binlogs: whatever a kill -9
left at the tail (a file created but not yet holding the magic, a torn event, a transaction
without its commit) is cut, announced, and the pull resumes where the cut ends."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from binlogkit.pull.store import Store
from binlogkit.transactions import group_files

ROOT = Path(__file__).resolve().parent.parent
PRIMARY = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"


def _folder(tmp: Path, n: int = 2) -> tuple[Path, list[str]]:
    d = tmp / "pulled"
    d.mkdir()
    store = Store(d)   # a folder pull made: its state names the primary and the files' base
    try:
        store.claim(server_id=1, base="mariadb-bin", flavor="mariadb", source="127.0.0.1:3306")
    finally:
        store.close()
    names = []
    for x in sorted(PRIMARY.glob("mariadb-bin.*.xz"))[:n]:
        name = x.name.removesuffix(".xz")
        (d / name).write_bytes(lzma.decompress(x.read_bytes()))
        names.append(name)
    return d, names


def _repair(d: Path):
    store = Store(d)
    try:
        return store.repair()
    finally:
        store.close()


@pytest.mark.parametrize("size", [0, 1, 3])
def test_a_new_file_without_its_magic_is_removed_and_announced(tmp_path, size):
    d, names = _folder(tmp_path)
    nxt = names[-1][:-6] + f"{int(names[-1][-6:]) + 1:06d}"
    (d / nxt).write_bytes(b"\xfebin"[:size])
    rep = _repair(d)
    assert (rep.file, rep.position, rep.cut_from, rep.removed) == (nxt, 4, size, True)
    assert rep.reason and "magic" in rep.reason
    assert not (d / nxt).exists()
    assert (d / names[-1]).read_bytes() == lzma.decompress((PRIMARY / (names[-1] + ".xz")).read_bytes())


def test_a_file_holding_only_the_magic_is_kept_silently(tmp_path):
    d, names = _folder(tmp_path)
    nxt = names[-1][:-6] + f"{int(names[-1][-6:]) + 1:06d}"
    (d / nxt).write_bytes(b"\xfebin")
    rep = _repair(d)
    assert (rep.file, rep.position, rep.cut_from, rep.removed) == (nxt, 4, None, False)


def test_a_torn_tail_is_cut_to_the_last_whole_transaction(tmp_path):
    d, names = _folder(tmp_path, 1)
    f = d / names[0]
    whole = f.read_bytes()
    trx = [t for t in group_files([f], relay=False) if t.complete]
    last = trx[-1]
    # cut inside the last transaction's events: it loses its commit
    f.write_bytes(whole[:last.start_offset + 30])
    rep = _repair(d)
    assert (rep.file, rep.position, rep.cut_from, rep.removed) == (names[0], last.start_offset, last.start_offset + 30, False)
    assert rep.dropped_gtids in ([], [last.gtid])
    assert f.read_bytes() == whole[:last.start_offset]
    again = _repair(d)   # idempotent: nothing more to cut
    assert again.cut_from is None and again.position == last.start_offset

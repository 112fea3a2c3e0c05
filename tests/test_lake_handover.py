"""handover.same_bytes: an archive's copy of a file (plain or compressed) against pull's copy of it.

The two may differ only in the Format_description event (a copy taken while the server wrote the
file has the in-use flag set; its checksum differs with it); past it, the first differing byte is
named, and a copy shorter than the other is compared as far as it goes.
"""

from __future__ import annotations

import lzma
from pathlib import Path
from types import SimpleNamespace

import pytest

from binlogkit.export.lake.handover import same_bytes

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mariadb-11.8" / "replication-gtid" / "primary"


def _plain() -> bytes:
    plain = sorted(p for p in FIXTURE.iterdir() if p.name[-1].isdigit())
    assert plain, f"no plain binlog in {FIXTURE}"
    return plain[-1].read_bytes()


def _fde_end(data: bytes) -> int:
    return 4 + int.from_bytes(data[4 + 9:4 + 13], "little")


def _copy(path: Path, data: bytes, compressed: bool) -> SimpleNamespace:
    if compressed:
        path = path.with_name(path.name + ".xz")
        path.write_bytes(lzma.compress(data))
    else:
        path.write_bytes(data)
    return SimpleNamespace(name=str(path))


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "xz"])
def test_same_bytes_names_the_first_difference_after_the_format_description(tmp_path, compressed):
    data = _plain()
    end = _fde_end(data)
    assert len(data) > end + 100
    archive = _copy(tmp_path / "a", data, compressed)
    flagged = bytearray(data)
    flagged[4 + 17] ^= 0x01                  # the in-use flag of the Format_description event
    assert same_bytes(archive, _copy(tmp_path / "p1", bytes(flagged), False)) is None
    assert same_bytes(archive, _copy(tmp_path / "p2", data[:end + 50], False)) is None
    damaged = bytearray(data)
    damaged[end + 77] ^= 0xFF
    assert same_bytes(archive, _copy(tmp_path / "p3", bytes(damaged), False)) == end + 77
    far = bytearray(data)
    far[-1] ^= 0xFF
    assert same_bytes(archive, _copy(tmp_path / "p4", bytes(far), False)) == len(data) - 1


def test_same_bytes_reads_a_compressed_pulled_copy(tmp_path):
    data = _plain()
    archive = _copy(tmp_path / "a", data, False)
    damaged = bytearray(data)
    damaged[_fde_end(data) + 5] ^= 0x10
    assert same_bytes(archive, _copy(tmp_path / "p", bytes(damaged), True)) == _fde_end(data) + 5

"""``binlogkit._pullscan`` (the C loop of ``pull``'s receiver) against the Python path it
accelerates: the dump stream of real binlogs (fixtures made by MariaDB, and the shared corpus:
MySQL and MariaDB, with and without checksums), cut into arbitrary chunks, plain and semisync,
intact and damaged, goes through the receiver with the C loop and without it: the same files,
the same statistics, the same acknowledgements, the same error at the same place."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlogkit.reading.files import expand_paths, open_input
from binlogkit.pull import receiver as receiver_mod
from binlogkit.errors import BinlogError
from binlogkit.pull.protocol import Framer, packet
from binlogkit.pull.receiver import Receiver
from binlogkit.pull.store import Store
from c_builds import c_loop

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
# scripts/asan-pullscan.sh: the same tests on a sanitized build
C_LOOP = c_loop(receiver_mod._pullscan, "PULLSCAN_SO", "binlogkit._pullscan")

pytestmark = pytest.mark.skipif(C_LOOP is None, reason="binlogkit._pullscan not built (no C compiler)")

SERIES = [ROOT / "fixtures" / "mariadb-10.11" / name for name in
          ("replication-gtid/primary", "row-types/primary", "compressed-events/primary", "ring-duplicates-on/A/binlog",
           "replication-position-semisync/primary", "row-types-full-metadata/primary")] + [
    # MariaDB 11.8: end_log_pos 0 in the events inside a transaction (binlog_legacy_event_pos=OFF)
    ROOT / "fixtures" / "mariadb-11.8" / "replication-gtid" / "primary"]


def _events(data: bytes) -> list[bytes]:
    out, at = [], 4
    while at + 19 <= len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little")
        if size < 19 or at + size > len(data):
            break
        out.append(data[at:at + size])
        at += size
    return out


def _fake_rotate(name: str, checksums: bool) -> bytes:
    body = struct.pack("<Q", 4) + name.encode()
    ev = struct.pack("<IBIIIH", 0, 4, 1, 19 + len(body) + (4 if checksums else 0), 0, 0x20) + body
    return ev + (struct.pack("<I", zlib.crc32(ev)) if checksums else b"")


def _stream(files: list[tuple[str, bytes]], *, semisync: bool, ack_every: int = 0) -> tuple[bytes, int]:
    """The dump a primary sends for ``files`` (non-blocking: an EOF packet at the end)."""
    out, seq, acks = bytearray(), 1, 0
    for name, data in files:
        events = _events(data)
        checksums = bool(events) and zlib.crc32(events[0][:-4]) == int.from_bytes(events[0][-4:], "little")
        for i, ev in enumerate([_fake_rotate(name, checksums)] + events):
            need = bool(semisync and ack_every and i and i % ack_every == 0)
            acks += need
            head = (b"\x00\xef" + bytes([need])) if semisync else b"\x00"
            out += packet(head + ev, seq)
            seq = (seq + 1) & 0xFF
    out += packet(b"\xfe\x00\x00\x02\x00", seq)
    return bytes(out), acks


class _Conn:
    """The receiver's side of a connection, fed from bytes in the chunks given."""

    where = "stream"

    def __init__(self, data: bytes, cuts: list[int], semisync: bool) -> None:
        self.framer = Framer(semisync=semisync, seq=1)
        self.data, self.at, self.cuts, self.acks = data, 0, cuts or [1 << 20], []

    def read(self, timeout: float) -> int | None:
        if self.at >= len(self.data):
            return None
        n = self.cuts[len(self.acks) % len(self.cuts)] if self.cuts else 1 << 20
        chunk = self.data[self.at:self.at + max(1, n)]
        self.at += len(chunk)
        self.framer.feed(chunk)
        return len(chunk)

    def ack(self, name: str, pos: int) -> None:
        self.acks.append((name, pos))
        self.framer.ack_sent()


def _receive(tmp: Path, data: bytes, cuts: list[int], semisync: bool, c_loop, monkeypatch) -> dict:
    monkeypatch.setattr(receiver_mod, "_pullscan", c_loop)
    store = Store(tmp)
    conn = _Conn(data, cuts, semisync)
    rx = Receiver(store, conn, sync="off", semisync=semisync)  # type: ignore[arg-type]
    try:
        outcome: object = rx.run()
    except BinlogError as exc:   # PullError, ChecksumError...: the typed tree
        outcome = (type(exc).__name__, str(exc).replace(str(tmp), "<dir>"), getattr(exc, "offset", None))
    finally:
        store.close()
    s = rx.stats
    return {"outcome": outcome, "acks": conn.acks,
            "stats": (s.bytes, s.events, s.transactions, s.last_event_ts),
            "files": {p.name: p.read_bytes() for p in sorted(tmp.iterdir()) if p.name[-1].isdigit()}}


def _series(folder: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of the binlogs of a fixture folder (closed ones are kept compressed)."""
    out = []
    for p in expand_paths([folder]):
        with open_input(p) as fh:
            out.append((p.name.removesuffix(".xz"), fh.read()))
    assert out, folder
    return out


def _corpus_series() -> list[list[tuple[str, bytes]]]:
    if not CORPUS.is_dir():
        return []
    picked = []
    for p in sorted(q for q in CORPUS.rglob("*") if q.is_file()):
        data = p.read_bytes()
        ev = _events(data)
        if data[:4] == b"\xfebin" and ev and ev[0][4] == 15 and sum(map(len, ev)) + 4 == len(data):
            picked.append([(p.name, data)])
    return picked[:40]


def _check_same(tmp_path: Path, files: list[tuple[str, bytes]], semisync: bool, cuts: list[int], monkeypatch,
                damage: int | None = None) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    data, _ = _stream(files, semisync=semisync, ack_every=7)
    if damage is not None:
        b = bytearray(data)
        b[damage % len(b)] ^= 0x5A
        data = bytes(b)
    got_c = _receive(tmp_path / "c", data, cuts, semisync, C_LOOP, monkeypatch)
    got_py = _receive(tmp_path / "py", data, cuts, semisync, None, monkeypatch)
    assert got_c == got_py
    return got_c


@pytest.mark.parametrize("folder", SERIES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
@pytest.mark.parametrize("semisync", [False, True])
def test_fixture_series_same_with_and_without_c(folder, semisync, tmp_path, monkeypatch):
    files = _series(folder)
    got = _check_same(tmp_path, files, semisync, [65536, 4093, 1 << 20], monkeypatch)
    assert got["outcome"] == "end"
    # and the copy is the primary's files (the last one keeps its in-use flag, as the primary's)
    assert sorted(got["files"]) == [name for name, _ in files]
    for name, data in files:
        ours, theirs = bytearray(got["files"][name]), bytearray(data)
        ours[4 + 17] &= ~1
        theirs[4 + 17] &= ~1
        assert ours == theirs, name
    assert got["stats"][1] > 0
    if semisync:
        assert got["acks"]


def test_corpus_files_same_with_and_without_c(tmp_path, monkeypatch):
    series = _corpus_series()
    if not series:
        pytest.skip("../shared/corpus is absent")
    for i, files in enumerate(series):
        got = _check_same(tmp_path / str(i), files, False, [4096, 1 << 20], monkeypatch)
        assert got["outcome"] == "end" or isinstance(got["outcome"], tuple), files


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(SERIES) - 1), semisync=st.booleans(), damage=st.integers(0, 1 << 30),
       cuts=st.lists(st.integers(16, 70000), min_size=1, max_size=5))
def test_damaged_streams_same_error_same_bytes(which, semisync, damage, cuts, tmp_path_factory, monkeypatch):
    """One byte of the stream changed anywhere (packet headers, event headers, bodies, CRCs):
    the C loop hands the packet to the Python path, which decides; both end the same way."""
    tmp = tmp_path_factory.mktemp("dmg")
    _check_same(tmp, _series(SERIES[which])[:2], semisync, cuts, monkeypatch, damage=damage)


def test_the_loop_checks_crc32_itself_as_through_a_callable(tmp_path, monkeypatch):
    """With ``isal`` the C loop calls ISA-L's CRC32 directly (``bind_crc``, crc None); with a
    callable (zlib's) it calls that: on intact and damaged streams both end the same way."""
    import isal.isal_zlib

    probe = bytes(range(256)) * 5
    assert C_LOOP.bind_crc(isal.isal_zlib.__file__, probe, zlib.crc32(probe))
    assert receiver_mod._scan_crc(C_LOOP) is None   # the receiver uses it
    files = _series(SERIES[0])[:2]
    data, _ = _stream(files, semisync=False)
    for i, damage in enumerate([None, 777, 5000, len(data) // 2, len(data) - 40]):
        b = bytearray(data)
        if damage is not None:
            b[damage] ^= 0x20
        got = []
        for crc in (None, zlib.crc32):
            monkeypatch.setitem(receiver_mod._SCAN_CRCS, id(C_LOOP), crc)
            got.append(_receive(tmp_path / f"{i}-{crc is None}", bytes(b), [65536], False, C_LOOP, monkeypatch))
        assert got[0] == got[1]
        assert (got[0]["outcome"] == "end") == (damage is None)
    # a library without the function, or one that does not give zlib's answer, is not used
    assert not C_LOOP.bind_crc("/nonexistent/libisal.so", probe, zlib.crc32(probe))
    ev = next(e for e in _events(files[0][1]) if e[4] == 162)   # a MariaDB GTID: the loop takes it, CRC32 checked
    at = int.from_bytes(ev[13:17], "little") - len(ev)
    packet = bytearray(struct.pack("<I", len(ev) + 1)[:3] + b"\x01\x00" + ev)
    assert C_LOOP.run(bytearray(packet), 0, len(packet), 1, False, True, at, 0, 13, zlib.crc32)[4] == 1
    with pytest.raises(ValueError, match="bind_crc"):
        C_LOOP.run(packet, 0, len(packet), 1, False, True, at, 0, 13, None)
    assert not C_LOOP.bind_crc(isal.isal_zlib.__file__, probe, zlib.crc32(probe) ^ 1)
    assert C_LOOP.bind_crc(isal.isal_zlib.__file__, probe, zlib.crc32(probe))

"""``serve`` at the end of a file that is still being written (a ``pull`` folder), in process
and without a server: bytes that land while a dump's read is reaching the end of the file are
sent without waiting for a later growth. A replica waited for a growth that never came when the
last write of a primary killed -9 landed between serve's read and its wait."""

from __future__ import annotations

import lzma
import threading
import time
from pathlib import Path

import pytest

from binlogkit.reading.source import inputs
from binlogkit.serve import Server, Settings
from binlogkit.transactions import group_files

ROOT = Path(__file__).resolve().parent.parent
PRIMARY = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"
PASSWORD = "tail-pw"


def _live_folder(tmp: Path) -> tuple[Path, bytes, int]:
    """A folder of two binlogs, the second cut after its third transaction (pull still writing
    it): (the file, its whole bytes, the cut)."""
    d = tmp / "pulled"
    d.mkdir()
    first, second = sorted(PRIMARY.glob("mariadb-bin.*.xz"))[:2]
    (d / first.name.removesuffix(".xz")).write_bytes(lzma.decompress(first.read_bytes()))
    f = d / second.name.removesuffix(".xz")
    whole = lzma.decompress(second.read_bytes())
    f.write_bytes(whole)
    ends = [t.end_offset for t in group_files([f], relay=False) if t.complete]
    assert len(ends) > 4
    f.write_bytes(whole[:ends[2]])
    return f, whole, ends[2]


def test_bytes_written_while_the_read_reached_the_end_are_sent(tmp_path):
    from binlogkit.pull import iter_events

    f, whole, cut = _live_folder(tmp_path)
    srv = Server(Settings(inputs([str(f.parent)]), "repl", PASSWORD.encode(), port=0, server_id=77, heartbeat=0.5))
    real = srv.archive.events
    grown = threading.Event()

    def events(inp, start):
        # the read of the live file reaches its end; the rest of the file lands just then (after
        # the read saw the end, before the dump waits), and never grows again
        yield from real(inp, start)
        if inp.basename == f.name and not grown.is_set():
            with open(f, "ab") as fh:
                fh.write(whole[cut:])
            grown.set()
    srv.archive.events = events   # type: ignore[method-assign]
    port = srv.start()
    runner = threading.Thread(target=srv.run, daemon=True)
    runner.start()
    got: list[int] = []

    def dump():
        try:
            for e in iter_events("127.0.0.1", port, "repl", PASSWORD, server_id=5, file=f.name, until_end=False):
                got.append(e.offset + e.event_size)
        except Exception:   # the server stopping under it at the end of the test
            pass
    t = threading.Thread(target=dump, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 15
        while (not got or got[-1] < len(whole)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert grown.is_set()
        assert got and got[-1] == len(whole), (cut, len(whole), got[-3:])
    finally:
        srv.stop()
        runner.join(5)

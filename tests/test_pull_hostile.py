"""``binlogkit pull`` against a hostile primary (fixtures/fake_primary.py on 127.0.0.1): every
attack of issue 28 points 1-4 (the trust section of docs/pull.md). Each test runs the real CLI
in a child process and asserts what a careful operator would check: nothing created outside
--dir (a snapshot of the whole tmp tree), no link followed, the child's peak RSS (VmHWM of its
own address space, read while it runs), the time to exit, SIGTERM answered, one typed error line and the exit code."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from binlogkit.pull.protocol import MAX_PAYLOAD
from fixtures.fake_primary import Dump, FakePrimary, events_of, fake_rotate, fixture_files, honest

BIN = [sys.executable, "-m", "binlogkit.cli"]
MB = 1 << 20
FILES = fixture_files(2)
NAME1, DATA1 = FILES[0]


class Child:
    """A pull child process: exit code, seconds, peak RSS (bytes), stderr."""

    def __init__(self, port: int, d: Path, *args: str, env: dict | None = None) -> None:
        self.err_path = d.parent / f"{d.name}.stderr"
        self.err = open(self.err_path, "wb")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(BIN + ["pull", "--host", "127.0.0.1", "--port", str(port), "--user", "repl",
                                         "--server-id", "99", "--dir", str(d), *args],
                                  stdout=subprocess.DEVNULL, stderr=self.err, env={**os.environ, **(env or {})})
        self.rc: int | None = None
        self.rss = 0
        self.seconds = 0.0

    def _hwm(self) -> None:
        """The child's peak RSS so far: VmHWM of its own address space (rusage's ru_maxrss would
        carry the forking test process's peak across exec), read while it runs: it only grows."""
        try:
            with open(f"/proc/{self.p.pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        self.rss = max(self.rss, int(line.split()[1]) * 1024)
        except (OSError, ValueError):
            pass

    def wait(self, timeout: float) -> "Child":
        deadline = time.monotonic() + timeout
        while True:
            self._hwm()
            pid, status, _ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                self.rc = os.waitstatus_to_exitcode(status)
                self.p.returncode = self.rc
                self.seconds = time.monotonic() - self.t0
                self.err.close()
                assert self.rss > 10 << 20   # it was measured (a Python process holds more than 10 MB)
                return self
            if time.monotonic() > deadline:
                self.p.kill()
                self.p.wait()
                self.err.close()
                pytest.fail(f"pull did not exit within {timeout}s: {self.stderr}")
            time.sleep(0.02)

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture()
def area(tmp_path):
    """tmp/out (a decoy folder beside --dir, where escapes would land), tmp/pulled = --dir."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "victim.000002").write_bytes(b"keep me")
    return tmp_path


def _untouched(area: Path, before: set[str]) -> None:
    after = {n for n in _tree(area) if not n.startswith("pulled") and not n.endswith(".stderr")}
    assert after == {n for n in before if not n.startswith("pulled")}, after
    assert (area / "out" / "victim.000002").read_bytes() == b"keep me"


def _one_line(c: Child, *words: str) -> str:
    lines = [ln for ln in c.stderr.splitlines() if "error:" in ln or "Traceback" in ln]
    assert "Traceback" not in c.stderr, c.stderr
    assert len(lines) == 1, c.stderr
    for w in words:
        assert w in lines[0], c.stderr
    return lines[0]


def _same(got: bytes, data: bytes) -> bool:
    """The copy of a file is its bytes, the Format_description's in-use flag aside."""
    return len(got) == len(data) and got[:4 + 17] + got[4 + 19:] == data[:4 + 17] + data[4 + 19:]


def _first_then(name: bytes):
    """An honest first file, then a Rotate to ``name``."""
    def run(d: Dump, _req: bytes) -> None:
        d.file(NAME1, DATA1)
        d.event(fake_rotate(name))
        d.eof()
    return run


# -- 1. names: only plain base names, only inside --dir ----------------------------------------
HOSTILE_NAMES = {
    "absolute": lambda area: str(area / "out" / "abs.000002").encode(),
    "dotdot": lambda area: b"../out/pwn.000002",
    "parent": lambda area: b"../pwn.000002",
    "nul": lambda area: b"mariadb-bin.000002\x00.x",
    "hidden": lambda area: b".binlogkit-pull.json.000002",
    "long": lambda area: b"m" * 300 + b".000002",
    "control": lambda area: b"mariadb\n-bin.000002",
    "other-base": lambda area: b"victim.000002",
    "not-utf8": lambda area: b"mariadb-bin\xff.000002",
}


@pytest.mark.parametrize("where", ["first", "rotate"])
@pytest.mark.parametrize("kind", sorted(HOSTILE_NAMES))
def test_rotate_names_outside_dir_refused(area, where, kind):
    name = HOSTILE_NAMES[kind](area)
    if where == "first" and kind == "other-base":
        pytest.skip("the first file sets the base")
    before = _tree(area)
    scenario = _first_then(name) if where == "rotate" else (lambda d, _r: (d.event(fake_rotate(name)), d.eof()))
    with FakePrimary(scenario) as fp:
        c = Child(fp.port, area / "pulled", "--until-end").wait(20)
    assert c.rc == 2, c.stderr
    _one_line(c, "refused")
    _untouched(area, before)
    inside = sorted(os.listdir(area / "pulled"))
    assert all("/" not in n and not n.endswith("000002") for n in inside), inside
    if where == "rotate":   # the honest file before it is whole, and the state saved
        assert _same((area / "pulled" / NAME1).read_bytes(), DATA1)
        assert ".binlogkit-pull.json" in inside


def test_rotate_through_planted_dir_link_refused(area):
    """A Rotate to sub/NAME with ``sub`` a link planted in --dir: refused ('/'), the link never
    followed (the folder the link points to stays empty)."""
    d = area / "pulled"
    d.mkdir()
    (d / "sub").symlink_to(area / "out")
    before = _tree(area)
    with FakePrimary(_first_then(b"sub/mariadb-bin.000002")) as fp:
        c = Child(fp.port, d, "--until-end").wait(20)
    assert c.rc == 2, c.stderr
    _one_line(c, "refused")
    _untouched(area, before)


@pytest.mark.parametrize("planted", ["mariadb-bin.000001", ".binlogkit-pull.json", "mariadb-bin.index"])
def test_planted_file_links_not_followed(area, planted):
    """A link planted in --dir under the name pull would write: refused, its target untouched."""
    d = area / "pulled"
    d.mkdir()
    (d / planted).symlink_to(area / "out" / "victim.000002")
    before = _tree(area)
    with FakePrimary(honest(FILES[:1])) as fp:
        c = Child(fp.port, d, "--until-end").wait(20)
    assert c.rc == 2, c.stderr
    _untouched(area, before)
    assert (d / planted).is_symlink()


# -- 2. memory: continued packets bounded, a big event streamed to disk -------------------------
def _stream_big(d: Dump, size: int, at: int, *, declared: int | None = None, extra: int = 0) -> None:
    """One event of ``size`` bytes (CRC32 right) in continued packets, generated as it is sent;
    ``declared``: another event_size in its header; ``extra``: bytes past it, never ending."""
    decl = size if declared is None else declared
    head = struct.pack("<IBIIIH", 1700000000, 30, 1, decl, (at + decl) & 0xFFFFFFFF, 0)
    block = bytes(range(256)) * 4096          # 1 MiB
    body_len = size - 19 - 4
    crc = zlib.crc32(head)
    payload_total = 1 + size + extra
    # the payload: 0x00, header, body (blocks), CRC32, then ``extra`` zero bytes
    def chunks():
        nonlocal crc
        yield b"\x00" + head
        left = body_len
        while left:
            b = block[:min(left, len(block))]
            crc = zlib.crc32(b, crc)
            left -= len(b)
            yield b
        yield struct.pack("<I", crc)
        left = extra
        while left:
            b = bytes(min(left, MB))
            left -= len(b)
            yield b
    buf = bytearray()
    sent = 0
    for ch in chunks():
        buf += ch
        while len(buf) >= MAX_PAYLOAD:
            d.raw(MAX_PAYLOAD.to_bytes(3, "little") + bytes([d.seq]) + bytes(buf[:MAX_PAYLOAD]))
            d.seq = (d.seq + 1) & 0xFF
            del buf[:MAX_PAYLOAD]
            sent += MAX_PAYLOAD
    d.raw(len(buf).to_bytes(3, "little") + bytes([d.seq]) + bytes(buf))
    d.seq = (d.seq + 1) & 0xFF
    assert sent + len(buf) == payload_total


def test_big_event_streams_to_disk_rss_bounded(area):
    """A 600 MB event (a legitimate one: right size, right CRC32) is written as it arrives:
    the copy holds it byte for byte, the child's peak RSS stays under 300 MB."""
    size = 600 * MB
    fde = next(events_of(DATA1))
    at = 4 + len(fde)

    def run(d: Dump, _r: bytes) -> None:
        d.event(fake_rotate(NAME1.encode()))
        d.event(fde)
        _stream_big(d, size, at)
        d.eof()

    with FakePrimary(run) as fp:
        c = Child(fp.port, area / "pulled", "--until-end").wait(60)
    assert c.rc == 0, c.stderr
    assert c.rss < 300 * MB, c.rss
    f = area / "pulled" / NAME1
    assert f.stat().st_size == at + size
    with open(f, "rb") as fh:   # the event in the copy: its CRC32 is right (checked in 16 MiB reads)
        fh.seek(at)
        crc, left = 0, size - 4
        while left:
            b = fh.read(min(left, 16 * MB))
            crc = zlib.crc32(b, crc)
            left -= len(b)
        assert struct.unpack("<I", fh.read(4))[0] == crc
    f.unlink()


@pytest.mark.parametrize("case", ["declared-too-big", "runs-past-its-size"])
def test_endless_chain_refused_rss_bounded(area, case):
    """Continued packets with no end: refused as soon as they pass the event's declared size or
    --max-event-size (here 64M), never held in memory; nothing of the event stays in the copy."""
    fde = next(events_of(DATA1))
    at = 4 + len(fde)

    def run(d: Dump, _r: bytes) -> None:
        d.event(fake_rotate(NAME1.encode()))
        d.event(fde)
        try:
            if case == "declared-too-big":
                _stream_big(d, 20 * MB, at, declared=1 << 31)
            else:
                _stream_big(d, 40 * MB, at, extra=400 * MB)
        except OSError:
            pass   # the client hung up: what it should do

    with FakePrimary(run) as fp:
        c = Child(fp.port, area / "pulled", "--until-end", "--max-event-size", "64M").wait(30)
    assert c.rc == 2, c.stderr
    _one_line(c, "refused" if case == "declared-too-big" else "run past")
    assert c.rss < 300 * MB, c.rss
    assert (area / "pulled" / NAME1).stat().st_size == at   # the partial event cut away


def test_endless_reply_to_a_query_refused_rss_bounded(area):
    with FakePrimary(answers={"@@server_id": "endless"}) as fp:
        c = Child(fp.port, area / "pulled").wait(30)
    assert c.rc == 2, c.stderr
    _one_line(c, "refused")
    assert c.rss < 300 * MB, c.rss


# -- 3. hangs: every wait bounded, every signal answered --------------------------------------
@pytest.mark.parametrize("stall", ["greeting", "SHOW SLAVE HOSTS", "@master_heartbeat_period"])
def test_silent_server_times_out(area, stall):
    fp_args: dict = {"greet": False} if stall == "greeting" else {"answers": {stall: "stall"}}
    with FakePrimary(**fp_args) as fp:
        c = Child(fp.port, area / "pulled", "--read-timeout", "1", "--until-end", "--max-reconnects", "0").wait(15)
    assert c.rc == 2, c.stderr
    _one_line(c)
    assert c.seconds < 8, c.seconds


@pytest.mark.parametrize("stall", ["greeting", "SHOW SLAVE HOSTS", "dump"])
def test_sigterm_answered_within_2s(area, stall):
    """SIGTERM while pull waits on a silent server (no greeting, a query never answered, a dump
    that went quiet): exit 0 within 2 s; in the dump, the events received are in the file,
    fsynced, and the state saved (a rerun resumes)."""
    if stall == "dump":
        def run(d: Dump, _r: bytes) -> None:
            d.file(NAME1, DATA1)    # then silence (no heartbeat, no end)
        fp = FakePrimary(run)
    elif stall == "greeting":
        fp = FakePrimary(greet=False)
    else:
        fp = FakePrimary(answers={stall: "stall"})
    with fp:
        c = Child(fp.port, area / "pulled", "--read-timeout", "60", "--heartbeat", "30")
        d = area / "pulled"
        deadline = time.monotonic() + 10
        if stall == "dump":
            while time.monotonic() < deadline and not ((d / NAME1).exists()
                                                       and (d / NAME1).stat().st_size == len(DATA1)):
                time.sleep(0.05)
        else:
            while time.monotonic() < deadline and fp.connections == 0:
                time.sleep(0.05)
            time.sleep(0.5)
        t = time.monotonic()
        c.p.send_signal(signal.SIGTERM)
        c.wait(10)
        took = time.monotonic() - t
    assert c.rc == 0, c.stderr
    assert took < 2.0, took
    assert "Traceback" not in c.stderr
    if stall == "dump":
        assert "stopped" in c.stderr
        assert (d / ".binlogkit-pull.json").exists()
        got = (d / NAME1).read_bytes()
        assert len(got) == len(DATA1) and got[4 + 19:] == DATA1[4 + 19:]   # the in-use flag aside


def test_until_end_gives_up_after_failed_reconnects(area):
    """A primary whose every dump fails at once: --until-end retries --max-reconnects times with a
    growing backoff (not every 0.5 s for ever), then exits 2 naming the last failure."""
    def run(d: Dump, _r: bytes) -> None:
        d.sock.shutdown(socket_shut())

    with FakePrimary(run) as fp:
        c = Child(fp.port, area / "pulled", "--until-end", "--start-file", NAME1, "--max-reconnects", "3").wait(30)
        conns = fp.connections
    assert c.rc == 2, c.stderr
    _one_line(c, "gave up after 3")
    assert conns == 4
    assert c.seconds > 0.5 + 1 + 2   # the backoff grew: 0.5, 1, 2 s


def socket_shut() -> int:
    import socket
    return socket.SHUT_RDWR


# -- 4. a LOCAL INFILE request ---------------------------------------------------------------------
def test_local_infile_request_refused(area):
    with FakePrimary(answers={"@@server_id": "local_infile"}) as fp:
        c = Child(fp.port, area / "pulled").wait(20)
        time.sleep(0.2)
        sent = b"".join(fp.after_local_infile)
    assert c.rc == 2, c.stderr
    _one_line(c, "LOCAL INFILE", "refused")
    assert b"root:" not in sent and len(sent) <= 64, sent   # no file content went out (a COM_QUIT at most)


def test_honest_fake_primary_copies_identically(area):
    """The same fake primary, honest: the copy is the fixture's bytes (the in-use flag of the
    last file aside), so the refusals above are the attacks', not the fixture's."""
    with FakePrimary(honest(FILES)) as fp:
        c = Child(fp.port, area / "pulled", "--until-end").wait(30)
    assert c.rc == 0, c.stderr
    for name, data in FILES:
        assert _same((area / "pulled" / name).read_bytes(), data)


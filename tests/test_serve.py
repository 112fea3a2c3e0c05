"""``binlogkit serve`` without a server: the CLI run as a child process, read by pull's own client
(``binlogkit.pull.iter_events``) and by raw sockets. The archive is the committed MariaDB 10.11
fixture (15 ``.xz`` files and a plain one): what serve sends equals what the files hold; logins,
garbage, stalls, --max-connections and damaged bytes. Replicas of every lab kind: test_serve_e2e.py."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from binlogkit.pull.protocol import PullError

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"
PASSWORD = "serve-pw"

pytestmark = pytest.mark.skipif(not ARCHIVE.is_dir(), reason="fixture archive absent")


class Serve:
    def __init__(self, tmp: Path, archive: Path, *extra: str) -> None:
        pw = tmp / "pw"
        pw.write_text(PASSWORD + "\n")
        pw.chmod(0o600)
        self.proc = subprocess.Popen([sys.executable, "-m", "binlogkit", "serve", str(archive), "--port", "0",
                                      "--user", "repl", "--password-file", str(pw), "--server-id", "99", *extra],
                                     cwd=ROOT, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        assert "listening on" in line, line
        self.port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _out, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, err = self.proc.communicate()
        return err


@pytest.fixture
def serve(tmp_path):
    started: list[Serve] = []

    def start(archive: Path = ARCHIVE, *extra: str) -> Serve:
        s = Serve(tmp_path, archive, *extra)
        started.append(s)
        return s
    yield start
    for s in started:
        if s.proc.poll() is None:
            s.stop()


def _local_events(archive: Path, first: str):
    from binlogkit.reading.reader import iter_raw_events
    from binlogkit.reading.source import inputs

    out = []
    for inp in inputs([str(archive)]):
        if inp.basename.removesuffix(".xz") < first:
            continue
        with inp.open() as fh:
            out += [(inp.basename.removesuffix(".xz"), e.offset, e.type_code, bytes(e.data))
                    for e in iter_raw_events(fh, name=inp.name)]
    return out


def test_a_compressed_archive_is_served_as_its_events(serve):
    """pull's client, non-blocking from the first file: every event of every file (the .xz ones
    decompressed), in order, byte for byte; from a position inside a file: the events from there."""
    from binlogkit.pull import iter_events

    s = serve()
    got = [(e.file, e.offset, e.type_code, bytes(e.data)) for e in
           iter_events("127.0.0.1", s.port, "repl", PASSWORD, server_id=5, file="mariadb-bin.000001")]
    want = _local_events(ARCHIVE, "mariadb-bin.000001")
    assert len(got) == len(want) > 1000
    assert got == want
    mid = next(w for w in want if w[0] == "mariadb-bin.000015" and w[2] == 162)   # a GTID event inside file 15
    got = [(e.file, e.offset, e.type_code, bytes(e.data)) for e in
           iter_events("127.0.0.1", s.port, "repl", PASSWORD, server_id=5, file="mariadb-bin.000015", position=mid[1])]
    # (the file's Format_description re-sent first, log_pos 0: artificial, left out by iter_events)
    assert got == [w for w in want if (w[0], w[1]) >= ("mariadb-bin.000015", mid[1])]
    err = s.stop()
    assert PASSWORD not in err


def test_wrong_password_and_unknown_file(serve):
    from binlogkit.pull import iter_events

    s = serve()
    with pytest.raises(PullError) as exc:
        list(iter_events("127.0.0.1", s.port, "repl", "wrong", server_id=5, file="mariadb-bin.000001"))
    assert exc.value.code == 1045
    with pytest.raises(PullError) as exc:
        list(iter_events("127.0.0.1", s.port, "nobody", PASSWORD, server_id=5, file="mariadb-bin.000001"))
    assert exc.value.code == 1045
    with pytest.raises(PullError) as exc:
        list(iter_events("127.0.0.1", s.port, "repl", PASSWORD, server_id=5, file="mariadb-bin.000099"))
    assert exc.value.code == 1236 and "Could not find first log file name" in str(exc.value)
    err = s.stop()
    assert "login refused" in err and PASSWORD not in err


def _read_packet(sock) -> bytes:
    head = b""
    while len(head) < 4:
        got = sock.recv(4 - len(head))
        if not got:
            return b""
        head += got
    n = int.from_bytes(head[:3], "little")
    body = b""
    while len(body) < n:
        got = sock.recv(n - len(body))
        if not got:
            break
        body += got
    return body


def _closed(sock, timeout: float) -> bool:
    """Whether the peer closes the connection within ``timeout`` (what it sends before is read)."""
    sock.settimeout(timeout)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True


def test_unauthenticated_garbage_and_stalls_are_dropped(serve):
    """Before the login a client gets the greeting and nothing else: a dump command sent instead of
    a login is a bad handshake, garbage is dropped, a client that sends nothing is dropped after
    --timeout; a packet header announcing 16 MiB is dropped without reading it."""
    s = serve(ARCHIVE, "--timeout", "1")
    dump = bytes([0x12]) + struct.pack("<IHI", 4, 0, 5) + b"mariadb-bin.000001"
    with socket.create_connection(("127.0.0.1", s.port)) as c:
        greet = _read_packet(c)
        assert greet[:1] == b"\x0a"
        c.sendall(len(dump).to_bytes(3, "little") + b"\x01" + dump)
        reply = _read_packet(c)
        assert reply[:1] == b"\xff" and int.from_bytes(reply[1:3], "little") == 1043
        assert _closed(c, 5)
    with socket.create_connection(("127.0.0.1", s.port)) as c:
        _read_packet(c)
        c.sendall(os.urandom(64))
        assert _closed(c, 5)
    with socket.create_connection(("127.0.0.1", s.port)) as c:
        _read_packet(c)
        t0 = time.monotonic()
        assert _closed(c, 10)
        assert time.monotonic() - t0 < 5
    with socket.create_connection(("127.0.0.1", s.port)) as c:
        _read_packet(c)
        c.sendall(b"\xff\xff\xff\x01" + b"x" * 1000)
        assert _closed(c, 5)
    err = s.stop()
    assert "Traceback" not in err and "internal error" not in err


def test_max_connections(serve):
    s = serve(ARCHIVE, "--max-connections", "1", "--timeout", "3")
    with socket.create_connection(("127.0.0.1", s.port)) as first:
        assert _read_packet(first)[:1] == b"\x0a"
        with socket.create_connection(("127.0.0.1", s.port)) as second:
            reply = _read_packet(second)
            assert reply[:1] == b"\xff" and int.from_bytes(reply[1:3], "little") == 1040
    assert "--max-connections 1 reached" in s.stop()


def test_damaged_bytes_are_never_sent(serve, tmp_path):
    """A byte flipped inside an event of the archive: the events before it are served, the damaged
    one is not; the replica gets 1236 naming the file, serve's log names file and offset."""
    from binlogkit.pull import iter_events
    from binlogkit.reading.reader import iter_raw_events

    arch = tmp_path / "arch"
    arch.mkdir()
    src = ARCHIVE / "mariadb-bin.000016"
    shutil.copy(src, arch / src.name)
    with open(src, "rb") as fh:
        evs = list(iter_raw_events(fh, name=src.name))
    bad = evs[len(evs) // 2]
    raw = bytearray(src.read_bytes())
    raw[bad.offset + 19 + 2] ^= 0xFF
    (arch / src.name).write_bytes(bytes(raw))
    s = serve(arch)
    got = []
    with pytest.raises(PullError) as exc:
        for e in iter_events("127.0.0.1", s.port, "repl", PASSWORD, server_id=5, file=src.name):
            got.append(e.offset)
    assert exc.value.code == 1236 and src.name in str(exc.value) and "crc" in str(exc.value)
    assert got == [e.offset for e in evs if e.offset < bad.offset]
    err = s.stop()
    assert f"offset {bad.offset}" in err and src.name in err


def test_listening_beyond_loopback_needs_tls(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text("x\n")
    r = subprocess.run([sys.executable, "-m", "binlogkit", "serve", str(ARCHIVE), "--port", "0", "--bind", "0.0.0.0",
                        "--user", "u", "--password-file", str(pw)], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert r.returncode == 2 and "--ssl-cert" in r.stderr and "Traceback" not in r.stderr


ENC = ROOT / "fixtures" / "encrypted" / "mariadb-aes-cbc"


def _blocks(text: str) -> list[str]:
    """mariadb-binlog output cut at its ``# at N`` lines, each block without that line (the
    client counts it itself: after a left-out event it differs), the header before the first left out."""
    return [p.split("\n", 1)[1] if "\n" in p else "" for p in text.split("\n# at ")[1:]]


@pytest.mark.skipif(not ENC.is_dir() or not shutil.which("mariadb-binlog"), reason="encrypted fixture or mariadb-binlog absent")
def test_mariadb_binlog_reads_an_encrypted_archive_as_from_the_server(serve, tmp_path):
    """MariaDB's own client, ``mariadb-binlog --read-from-remote-server``, reading serve's stream of
    the encrypted fixture (with its key file) prints what it printed reading the real server
    (the fixture's oracle), event for event; the one difference: the file's Start_encryption,
    which serve does not send (its events go out decrypted)."""
    import lzma

    keys = tmp_path / "keys.txt"
    shutil.copy(ENC / "keys" / "keys.txt", keys)
    keys.chmod(0o600)
    s = serve(ENC / "primary", "--key-file", str(keys))
    for n in ("mariadb-bin.000001", "mariadb-bin.000002"):
        r = subprocess.run(["mariadb-binlog", "--read-from-remote-server", "--host=127.0.0.1", f"--port={s.port}",
                            "--user=repl", f"--password={PASSWORD}", "--skip-gtid-strict-mode", n],
                           capture_output=True, text=True, errors="surrogateescape", env={**os.environ, "TZ": "UTC"},
                           timeout=60)
        assert r.returncode == 0, r.stderr
        want = _blocks(lzma.decompress((ENC / "oracle" / "primary" / f"{n}.txt.xz").read_bytes()).decode(
            "utf-8", "surrogateescape"))
        got = _blocks(r.stdout)
        enc = [b for b in want if "Start_encryption" in b]
        assert len(enc) == 1 and enc[0] not in got
        assert len(got) == len(want) - 1 > 50
        assert got == [b for b in want if b not in enc]


def test_a_replica_that_floods_during_its_dump_is_dropped(serve):
    """During the dump a replica sends nothing but COM_QUIT: bytes it sends are read and dropped,
    and past 1 MiB the connection ends (memory stays bounded whatever it sends). Before that, at
    the end of the archive, it gets heartbeats."""
    from binlogkit.pull.conn import Connection

    s = serve(ARCHIVE, "--heartbeat", "0.2")
    conn = Connection("127.0.0.1", s.port, "repl", PASSWORD)
    conn.start_dump(5, "mariadb-bin.000016", 4, heartbeat_s=0.2)
    sock = conn.sock
    got = b""
    sock.settimeout(5)
    deadline = time.monotonic() + 10
    while b"mariadb-bin.000016" not in got[-200:] and time.monotonic() < deadline:
        got += sock.recv(1 << 16)
    time.sleep(0.5)
    beat = sock.recv(1 << 16)
    assert beat[4] == 0 and beat[5 + 4] == 27            # a heartbeat event (type 27)
    try:
        for _ in range(64):
            sock.sendall(b"\0" * (64 << 10))
    except OSError:
        pass
    assert _closed(sock, 10)
    conn.close()
    assert "bytes sent during the dump: dropped" in s.stop()


def test_an_s3_prefix_is_served(s3_server, serve, tmp_path):
    """The fixture archive uploaded to a real S3 server (SeaweedFS), served from its ``s3://``
    prefix: the same events, byte for byte, as from the folder."""
    from binlogkit.pull import iter_events
    from binlogkit.reading import storage

    s3_server.make_bucket("serve")
    fs = storage.filesystem("s3://serve/")[0]
    for f in sorted(ARCHIVE.iterdir()):
        fs.put_file(str(f), f"serve/arch/{f.name}")
    storage.forget()
    s = Serve(tmp_path, "s3://serve/arch")   # type: ignore[arg-type]
    try:
        got = [(e.file, e.offset, e.type_code, bytes(e.data)) for e in
               iter_events("127.0.0.1", s.port, "repl", PASSWORD, server_id=5, file="mariadb-bin.000014")]
    finally:
        s.stop()
    assert got == _local_events(ARCHIVE, "mariadb-bin.000014") and len(got) > 100


def _packets(sock, until: bytes, timeout: float = 10):
    """(sequence, payload) of the packets read until one whose payload holds ``until``."""
    sock.settimeout(timeout)
    buf, out = b"", []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:3], "little"):
            n = int.from_bytes(buf[:3], "little")
            out.append((buf[3], buf[4:4 + n]))
            buf = buf[4 + n:]
            if until in out[-1][1]:
                return out
        buf += sock.recv(1 << 16)
    return out


def test_semisync_header_acks_and_a_semisync_pull(serve, tmp_path):
    """A client that sets @rpl_semi_sync_slave = 1 gets every dump message as 0x00 0xef flag, the
    flag on exactly the last event of each transaction (the boundary rules), the sequence 1 after
    each flagged event; its acks are read and counted. Then pull --semisync copies the archive
    through serve (each transaction acknowledged after its fsync): the copy is the archive, and
    serve's log says the acks it got, the last one the end of the archive's last transaction."""
    from binlogkit.boundary import advance, ends
    from binlogkit.pull.conn import Connection
    from binlogkit.pull.protocol import semisync_ack
    from binlogkit.reading.format import format_of_event

    s = serve()
    want = _local_events(ARCHIVE, "mariadb-bin.000016")
    conn = Connection("127.0.0.1", s.port, "repl", PASSWORD)
    conn.start_dump(5, "mariadb-bin.000016", 4, semisync=True)
    got = _packets(conn.sock, want[-1][3][19:])
    assert len(got) == len(want) + 1                       # the artificial Rotate first
    state, flagged, acks, fmt = 0, 0, b"", None
    for i, ((seq, p), (_f, off, code, data)) in enumerate(zip(got[1:], want)):
        assert p[:2] == b"\0\xef" and p[3:] == data
        fmt = format_of_event(data) if code == 15 else fmt
        state, decision = advance(state, code, data, fmt)
        assert p[2] == ends(decision), (off, code)
        if p[2]:
            flagged += 1
            acks += struct.pack("<I", 9 + 18)[:3] + b"\0" + semisync_ack("mariadb-bin.000016", off + len(data))
            if i + 2 < len(got):
                assert got[i + 2][0] == 1                   # the packet after a flagged one: sequence 1
    assert flagged > 10
    conn.sock.sendall(acks)
    time.sleep(0.5)
    conn.close()
    time.sleep(0.5)
    copy = tmp_path / "copy"
    pw = tmp_path / "pw"
    run = subprocess.run([sys.executable, "-m", "binlogkit", "pull", "--port", str(s.port), "--user", "repl",
                          "--password-file", str(pw), "--server-id", "6", "--dir", str(copy), "--semisync",
                          "--until-end"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert "reconnect" not in run.stderr, run.stderr
    every = _local_events(ARCHIVE, "mariadb-bin.000001")
    for name in sorted({e[0] for e in every}):
        mine = b"".join(e[3] for e in every if e[0] == name)
        theirs = bytearray((copy / name).read_bytes()[4:])
        theirs[17] &= ~1            # LOG_EVENT_BINLOG_IN_USE_F: pull marks its last file in use
        assert theirs == mine[:17] + bytes([mine[17] & ~1]) + mine[18:], name
    state, trx, last, fmt = 0, 0, None, None
    for name, off, code, data in every:
        fmt = format_of_event(data) if code == 15 else fmt
        state, decision = advance(state, code, data, fmt)
        if ends(decision):
            trx, last = trx + 1, f"{name}:{off + len(data)}"
    log = s.stop()
    assert f"semisync: {flagged} acks of {flagged} asked, the last for mariadb-bin.000016:" in log, log
    line = [ln for ln in log.splitlines() if f"asked, the last for {last})" in ln]
    assert len(line) == 2 and f"acks of {trx} asked" in line[1], log

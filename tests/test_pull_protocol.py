"""The replication protocol layer of ``pull``, offline: packets a replica sends (layouts as the
servers read them), the dump stream's framing under any chunking, artificial events. The live
behaviour is in tests/test_pull_e2e.py against a real primary."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from binlogkit.pull.protocol import (MAX_PAYLOAD, Framer, Joiner, ProtocolError, binlog_dump, binlog_dump_gtid,
                                     is_artificial, packet, parse_error, register_slave, rotate_target,
                                     semisync_ack)


def _event(code: int, body: bytes, *, log_pos: int = 100, flags: int = 0) -> bytes:
    size = 19 + len(body) + 4
    ev = struct.pack("<IBIIIH", 1700000000, code, 1, size, log_pos, flags) + body
    return ev + struct.pack("<I", zlib.crc32(ev))


def _stream(payloads: list[bytes], seq: int = 1) -> bytes:
    out = b""
    for p in payloads:
        out += packet(p, seq)
        seq = (seq + len(p) // MAX_PAYLOAD + 1) & 0xFF
    return out


def test_commands_layouts():
    assert register_slave(77, host="h", port=3307) == (b"\x15" + struct.pack("<I", 77) + b"\x01h\x00\x00"
                                                       + struct.pack("<HII", 3307, 0, 0))
    assert binlog_dump(9, "mariadb-bin.000002", 4, flags=2) == (b"\x12" + struct.pack("<IHI", 4, 2, 9)
                                                               + b"mariadb-bin.000002")
    assert semisync_ack("b.000001", 1666) == b"\xef" + struct.pack("<Q", 1666) + b"b.000001"
    g = binlog_dump_gtid(9, "f", 2**33, sids=b"\x00" * 8)
    assert g[:11] == b"\x1e" + struct.pack("<HII", 4, 9, 1) and g[11:12] == b"f"
    assert struct.unpack_from("<Q", g, 12)[0] == 2**33 and g[20:24] == struct.pack("<I", 8)
    with pytest.raises(Exception, match="32-bit position"):
        binlog_dump(9, "f", 2**32)


def test_mysql_gtid_dump_sends_the_held_set():
    """--gtid on MySQL: COM_BINLOG_DUMP_GTID from '' at 4, BINLOG_THROUGH_GTID set, the set in the
    Previous_gtids encoding (tagged when it holds a tag), read back equal; bad text is a PullError."""
    from binlogkit.gtid.mysql import MysqlGtidSet
    from binlogkit.pull.protocol import BINLOG_THROUGH_GTID, PullError, mysql_gtid_dump

    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    for text in (f"{u}:1-5:7", f"{u}:1-3,{u}:audit:1-2"):
        g = mysql_gtid_dump(9, text, 1)
        flags, sid, n = struct.unpack_from("<HII", g, 1)
        assert g[0] == 0x1E and flags == 1 | BINLOG_THROUGH_GTID and sid == 9 and n == 0
        assert struct.unpack_from("<Q", g, 11)[0] == 4
        size = struct.unpack_from("<I", g, 19)[0]
        assert len(g) == 23 + size
        assert MysqlGtidSet.decode(g[23:]) == MysqlGtidSet.parse(text)
    with pytest.raises(PullError, match="not a MySQL GTID set"):
        mysql_gtid_dump(9, "0-1-100", 0)


def test_packet_split_at_16mb():
    payload = b"x" * MAX_PAYLOAD
    raw = packet(payload, 5)
    assert raw[:4] == b"\xff\xff\xff\x05" and raw[-4:] == b"\x00\x00\x00\x06"   # then an empty packet
    assert len(packet(b"y" * (MAX_PAYLOAD + 3), 0)) == MAX_PAYLOAD + 3 + 8


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.sampled_from([20, 100, 4000, MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 7]), min_size=1,
                      max_size=4),
       semisync=st.booleans(), cuts=st.lists(st.integers(1, 5 << 20), min_size=1, max_size=8))
def test_framer_any_chunking(sizes, semisync, cuts):
    """Events (some over 16 MB, some exactly at the packet limit) cut into arbitrary chunks come
    out whole, in order, with their semisync flag."""
    events = [_event(30, bytes([i % 251]) * (n - 23)) for i, n in enumerate(sizes)]
    head = (lambda i: b"\x00\xef" + bytes([i % 2])) if semisync else (lambda i: b"\x00")
    raw = _stream([head(i) + e for i, e in enumerate(events)] + [b"\xfe\x00\x00\x02\x00"])
    f, j = Framer(semisync=semisync, seq=1), Joiner()
    got, at, k, parts = [], 0, 0, 0
    while at < len(raw):
        n = cuts[k % len(cuts)]
        k += 1
        f.feed(raw[at:at + n])
        at += n
        for m in f.messages():
            parts += m.kind == "part"
            assert len(f.buf) <= 2 * MAX_PAYLOAD + (5 << 20)   # one packet held, never a whole chain
            whole = j.take(m)
            if whole is not None:
                got.append(whole)
    # an event of 16 MiB - 1 bytes or more came as parts (one a packet), joined here
    assert parts == sum(len(e) + (3 if semisync else 1) >= MAX_PAYLOAD for e in events) + sum(
        (len(e) + (3 if semisync else 1)) // MAX_PAYLOAD for e in events if len(e) + (3 if semisync else 1) >= MAX_PAYLOAD)
    assert [m.kind for m in got] == ["event"] * len(events) + ["eof"]
    assert [m.data for m in got[:-1]] == events
    assert [m.need_ack for m in got[:-1]] == ([bool(i % 2) for i in range(len(events))] if semisync
                                              else [False] * len(events))


def test_framer_sequence_and_errors():
    ev = _event(30, b"abc")
    f = Framer(seq=1)
    f.feed(packet(b"\x00" + ev, 2))
    with pytest.raises(ProtocolError, match="out of sequence: 2, expected 1"):
        list(f.messages())
    # after an ack the primary's sequence may restart at 1 (MariaDB reads the reply on the dump NET)
    f = Framer(semisync=True, seq=1)
    f.feed(packet(b"\x00\xef\x01" + ev, 1) + packet(b"\x00\xef\x00" + ev, 2))
    assert len(list(f.messages())) == 2
    f.ack_sent()
    f.feed(packet(b"\x00\xef\x00" + ev, 3) + packet(b"\x00\xef\x00" + ev, 1) + packet(b"\x00\xef\x00" + ev, 2))
    assert len(list(f.messages())) == 3
    f.feed(packet(b"\x00\xef\x00" + ev, 1))   # no ack since: a restart is a broken stream
    with pytest.raises(ProtocolError, match="out of sequence"):
        list(f.messages())
    # a primary may restart the sequence right after the flagged event, before the ack went out
    # (MySQL's source, binlogkit serve): the flag allows it, once
    f = Framer(semisync=True, seq=1)
    f.feed(packet(b"\x00\xef\x00" + ev, 1) + packet(b"\x00\xef\x01" + ev, 2) + packet(b"\x00\xef\x00" + ev, 1)
           + packet(b"\x00\xef\x00" + ev, 2))
    assert [m.need_ack for m in f.messages()] == [False, True, False, False]
    f.feed(packet(b"\x00\xef\x00" + ev, 1))
    with pytest.raises(ProtocolError, match="out of sequence"):
        list(f.messages())
    f = Framer(semisync=True, seq=1)
    f.feed(packet(b"\x00\x00\x00" + ev, 1))
    with pytest.raises(ProtocolError, match="semisync header missing"):
        list(f.messages())
    f = Framer(seq=1)
    f.feed(packet(b"\xff\xd4\x04#HY000Could not find first log file name", 1))
    m = next(f.messages())
    assert (m.kind, m.code, m.text) == ("error", 1236, "Could not find first log file name")
    assert parse_error(b"\xff") == (0, "malformed error packet")
    f = Framer(seq=1)
    f.feed(packet(b"\x07abc", 1))
    with pytest.raises(ProtocolError, match="unexpected packet type 0x07"):
        list(f.messages())


def test_artificial_events_and_rotate():
    rot = _event(4, struct.pack("<Q", 4) + b"mariadb-bin.000007", log_pos=0, flags=0x20)
    assert is_artificial(4, 0, 0x20) and rotate_target(rot) == ("mariadb-bin.000007", 4)
    # the first fake Rotate may come without a checksum (before any Format_description)
    bare = struct.pack("<IBIIIH", 0, 4, 1, 19 + 8 + 18, 0, 0x20) + struct.pack("<Q", 4) + b"mariadb-bin.000001"
    assert rotate_target(bare) == ("mariadb-bin.000001", 4)
    assert is_artificial(27, 500, 0) and is_artificial(41, 500, 0)      # heartbeats
    assert is_artificial(15, 0, 0)                                     # the re-sent Format_description
    assert not is_artificial(30, 500, 0)
    # MariaDB 11.8 writes end_log_pos 0 inside a transaction: real events, not artificial ones
    assert not any(is_artificial(code, 0, 0) for code in (2, 19, 30, 160, 162))
    assert is_artificial(4, 0, 0) and is_artificial(163, 285, 0x20)


def test_framer_bounds_a_chain_and_names():
    """Continued packets past ``max_packet`` are refused as they arrive (only one packet is ever
    held); a chain must be an event; Rotate names are plain base names."""
    from binlogkit.pull.protocol import HostileServer, check_name

    f = Framer(seq=1, max_packet=MAX_PAYLOAD + 10)
    part = b"\x00" + b"z" * (MAX_PAYLOAD - 1)
    f.feed(part[:0] + MAX_PAYLOAD.to_bytes(3, "little") + b"\x01" + part)
    assert [m.kind for m in f.messages()] == ["part"]
    f.feed(MAX_PAYLOAD.to_bytes(3, "little") + b"\x02" + b"z" * MAX_PAYLOAD)
    with pytest.raises(HostileServer, match="more than"):
        list(f.messages())
    assert len(f.buf) - f.pos <= MAX_PAYLOAD + 4
    f = Framer(seq=1)
    f.feed(MAX_PAYLOAD.to_bytes(3, "little") + b"\x01" + b"\xff" * MAX_PAYLOAD)
    with pytest.raises(HostileServer, match="only an event"):
        list(f.messages())
    assert check_name(b"mariadb-bin.000002") == "mariadb-bin.000002"
    for bad in (b"/etc/cron.d/x.000002", b"../pwn.000002", b"a/b.000002", b"x.000002\x00", b".x.000002", b"..",
                b"x" * 250 + b".000002", b"bin\xff.000001", b"bin.01", b"bin\t.000001", b""):
        with pytest.raises(HostileServer):
            check_name(bad)
    rot = _event(4, struct.pack("<Q", 4) + b"../x.000002", log_pos=0, flags=0x20)
    with pytest.raises(HostileServer, match="not a plain binlog file name"):
        rotate_target(rot)


def test_greeting_and_rows_parse_as_the_servers_send_them():
    """pull's own client (no PyMySQL): a MariaDB greeting and a text row as the servers send them."""
    from binlogkit.pull.auth import CLIENT_PLUGIN_AUTH, CLIENT_PROTOCOL_41, CLIENT_SECURE_CONNECTION, parse_greeting
    from binlogkit.pull.protocol import text_row

    caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | 0x0800
    nonce = bytes(range(65, 85))
    hello = (b"\x0a" + b"5.5.5-10.11.19-MariaDB-log\x00" + (7).to_bytes(4, "little") + nonce[:8] + b"\x00"
             + (caps & 0xFFFF).to_bytes(2, "little") + b"\x2d" + b"\x02\x00" + (caps >> 16).to_bytes(2, "little")
             + bytes([21]) + b"\x00" * 10 + nonce[8:] + b"\x00" + b"mysql_native_password\x00")
    g = parse_greeting(hello, "here")
    assert (g.version, g.nonce, g.plugin, bool(g.capabilities & 0x0800)) == (
        "5.5.5-10.11.19-MariaDB-log", nonce, "mysql_native_password", True)
    assert text_row(b"\x0242\xfb\x03abc", [8, 253, 253]) == (42, None, "abc")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_greeting_and_rows_from_a_broken_server_fail_typed(data):
    """Any bytes as a greeting or a row: parsed, or a ProtocolError or one of the errors
    ``conn`` turns into one (never anything else)."""
    from binlogkit.pull.auth import parse_greeting
    from binlogkit.pull.conn import _PARSE_ERRORS
    from binlogkit.pull.protocol import column_type, text_row

    for fn in (lambda: parse_greeting(b"\x0a" + data, "here"), lambda: text_row(data, [8, 253, 3]),
               lambda: column_type(data)):
        try:
            fn()
        except (ProtocolError, *_PARSE_ERRORS):
            pass

"""The pure pieces of ``binlogkit serve``: the greeting read back by pull's own parser, a
HandshakeResponse made by pull's client code checked here, the connect queries answered, the
dump requests pull makes parsed back, artificial events, and the GTID start plans."""

from __future__ import annotations

import zlib

import pytest

from binlogkit.gtid.mariadb import GtidPos, MariadbGtid
from binlogkit.gtid.mysql import MysqlGtid, MysqlGtidSet
from binlogkit.pull.auth import CLIENT_FLAGS, handshake_response, parse_greeting, native_scramble, caching_sha2_scramble
from binlogkit.pull.protocol import binlog_dump, is_artificial, mysql_gtid_dump, header, rotate_target
from binlogkit.serve.queries import answer
from binlogkit.serve.stream import (FileGtids, Skipper, StartRefused, fake_rotate, heartbeat, mariadb_covered,
                                    parse_dump, plan_mariadb, plan_mysql, resent_fde)
from binlogkit.serve.wire import CACHING_SHA2, NATIVE, err, greeting, parse_response, result_set, scramble_ok

NONCE = bytes(range(65, 85))


def test_greeting_parses_with_pulls_reader():
    g = parse_greeting(greeting("5.5.5-10.11.19-MariaDB-log", 7, NONCE, NATIVE, tls=True), "serve")
    assert g.nonce == NONCE and g.plugin == NATIVE and g.capabilities & 0x800
    assert g.version == "5.5.5-10.11.19-MariaDB-log"


@pytest.mark.parametrize("plugin, scramble", [(NATIVE, native_scramble), (CACHING_SHA2, caching_sha2_scramble)])
def test_a_clients_scramble_is_checked(plugin, scramble):
    resp = handshake_response(CLIENT_FLAGS, CLIENT_FLAGS, b"repl", plugin, scramble(b"pw", NONCE), {"a": "b"})
    r = parse_response(resp)
    assert (r.user, r.plugin, r.attrs) == ("repl", plugin, {"a": "b"})
    assert scramble_ok(plugin, r.answer, b"pw", NONCE)
    assert not scramble_ok(plugin, r.answer, b"other", NONCE)
    assert not scramble_ok("dialog", r.answer, b"pw", NONCE)


def _rows(payloads):
    from binlogkit.pull.protocol import column_type, text_row

    n = payloads[0][0]
    types = [column_type(c) for c in payloads[1:1 + n]]
    return [text_row(p, types) for p in payloads[2 + n:-1]]


def test_the_connect_queries():
    g = {"server_id": 77, "binlog_checksum": "CRC32", "server_uuid": "u-1", "gtid_domain_id": 0, "version": "9.7.4"}
    s: dict = {}
    assert answer("SET @master_binlog_checksum = @@global.binlog_checksum, @source_binlog_checksum = "
                  "@@global.binlog_checksum", g, s)[0][:1] == b"\x00"
    assert _rows(answer("SELECT @source_binlog_checksum", g, s)) == [("CRC32",)]
    assert _rows(answer("SELECT UNIX_TIMESTAMP()", g, s, clock=lambda: 1234.5)) == [(1234,)]
    assert _rows(answer("SELECT @@GLOBAL.SERVER_ID", g, s)) == [(77,)]
    assert _rows(answer("SHOW VARIABLES LIKE 'SERVER_ID'", g, s)) == [("server_id", "77")]
    assert _rows(answer("SELECT VERSION()", g, s)) == [("9.7.4",)]
    answer("SET @slave_connect_state='0-1-5,1-2-7'", g, s)
    assert s["slave_connect_state"] == "0-1-5,1-2-7"
    e = answer("SELECT @@GLOBAL.rpl_semi_sync_master_enabled", g, s)
    assert e == [err(1193, "Unknown system variable 'rpl_semi_sync_master_enabled'")]
    assert answer("DROP TABLE x", g, s)[0][:3] == b"\xff" + (1235).to_bytes(2, "little")
    assert answer("SET GLOBAL x=1", g, s)[0][:1] == b"\xff"


def test_result_set_types():
    rs = result_set(["a", "b"], [(1, None)])
    assert _rows(rs) == [(1, None)]


def test_dump_requests_pull_makes_parse_back():
    d = parse_dump(binlog_dump(5, "binlog.000003", 1234, flags=2))
    assert (d.file, d.position, d.flags, d.server_id, d.gtids) == ("binlog.000003", 1234, 2, 5, None)
    text = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7"
    d = parse_dump(mysql_gtid_dump(6, text, 0))
    assert d.gtids == MysqlGtidSet.parse(text) and d.server_id == 6 and d.file == ""


def test_artificial_events():
    r = fake_rotate("binlog.000002", 4, server_id=9, crc=True)
    assert rotate_target(r) == ("binlog.000002", 4)
    _ts, code, sid, size, pos, flags = header(r)
    assert (code, sid, size, pos) == (4, 9, len(r), 0) and is_artificial(code, pos, flags)
    assert zlib.crc32(r[:-4]) == int.from_bytes(r[-4:], "little")
    h = heartbeat("binlog.000002", 777, server_id=9, crc=False)
    assert header(h)[1] == 27 and header(h)[4] == 777 and h[19:] == b"binlog.000002"
    fde = bytearray(19 + 10 + 4)
    fde[4] = 15
    fde[13:17] = (120).to_bytes(4, "little")
    fde[17:19] = (1).to_bytes(2, "little")             # LOG_EVENT_BINLOG_IN_USE_F
    out = resent_fde(bytes(fde), crc=True)
    assert header(out)[4] == 0 and header(out)[5] == 0
    assert zlib.crc32(out[:-4]) == int.from_bytes(out[-4:], "little")


def _mg(t):
    return MariadbGtid.parse(t)


FILES = [FileGtids("b.000001", "", [(100, _mg("0-1-1")), (200, _mg("0-1-2")), (300, _mg("1-2-1"))]),
         FileGtids("b.000002", "0-1-2,1-2-1", [(100, _mg("0-1-3")), (200, _mg("1-2-2"))])]


def test_plan_mariadb():
    assert plan_mariadb(GtidPos(), FILES) == (0, 100)
    assert plan_mariadb(GtidPos.parse("0-1-1"), FILES) == (0, 200)
    assert plan_mariadb(GtidPos.parse("0-1-2,1-2-1"), FILES) == (1, 100)
    assert plan_mariadb(GtidPos.parse("0-1-3,1-2-1"), FILES) == (1, 200)      # inside domain 0, not inside a trx
    assert plan_mariadb(GtidPos.parse("0-1-3,1-2-2"), FILES) == (1, 4)        # has it all: waits at the end
    with pytest.raises(StartRefused, match="purged"):
        plan_mariadb(GtidPos(), FILES[1:])
    with pytest.raises(StartRefused, match="0-9-2, which is not in the master's binlog. Since"):
        plan_mariadb(GtidPos.parse("0-9-2"), FILES)
    with pytest.raises(StartRefused, match="0-1-9, which is not in the master's binlog$"):
        plan_mariadb(GtidPos.parse("0-1-9,1-2-2"), FILES)
    skip = Skipper(mariadb_covered(GtidPos.parse("0-1-3")))
    kept = [skip.keep(c, g) for c, g in [(162, _mg("0-1-3")), (30, None), (16, None), (162, _mg("1-2-2")),
                                         (30, None), (4, None)]]
    assert kept == [False, False, False, True, True, True]


U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_plan_mysql():
    files = [FileGtids("binlog.000002", f"{U}:1-10", [(200, MysqlGtid(U, 11)), (500, MysqlGtid(U, 12))]),
             FileGtids("binlog.000003", f"{U}:1-12", [(150, MysqlGtid(U, 13))])]
    assert plan_mysql(MysqlGtidSet.parse(f"{U}:1-10"), files) == (0, 4)
    assert plan_mysql(MysqlGtidSet.parse(f"{U}:1-11"), files) == (0, 4)     # the top of the file; 11 left out
    assert plan_mysql(MysqlGtidSet.parse(f"{U}:1-12"), files) == (1, 4)
    with pytest.raises(StartRefused, match="source purged required binary logs.*missing transactions are "
                                           f"'{U}:6-10'"):
        plan_mysql(MysqlGtidSet.parse(f"{U}:1-5"), files)
    with pytest.raises(StartRefused, match="Replica has more GTIDs than the source has"):
        plan_mysql(MysqlGtidSet.parse(f"{U}:1-20"), files)
    other = "aaaaaaaa-71ca-11e1-9e33-c80aa9429562"
    assert plan_mysql(MysqlGtidSet.parse(f"{U}:1-13,{other}:1-3"), files) == (1, 4)   # the replica's own: fine


def test_semisync_codec_against_pulls_ack():
    """The ack pull sends parsed back; what is not one is a ProtocolError; the packets of the
    dump's back channel cut out of any pieces; the session variables that ask for semisync."""
    from binlogkit.pull.protocol import ProtocolError, packet, semisync_ack
    from binlogkit.serve.semisync import MAX_ACK, Ack, Packets, asked, parse_ack

    assert parse_ack(semisync_ack("mariadb-bin.000016", 30761)) == Ack("mariadb-bin.000016", 30761)
    assert parse_ack(semisync_ack("binlog.000001", 1 << 40)) == Ack("binlog.000001", 1 << 40)
    for bad in (b"", b"\xef", b"\xef" + bytes(8), b"\x01" + bytes(9) + b"x", b"\xef" + bytes(8) + b"\xff\xfe",
                b"\xef" + bytes(8) + b"a/b", b"\xef" + bytes(8) + b"x" * 600):
        with pytest.raises(ProtocolError):
            parse_ack(bad)
    stream = packet(semisync_ack("b.000001", 100), 0) + packet(semisync_ack("b.000001", 200), 0) + packet(b"\x01", 0)
    for cut in range(len(stream) + 1):
        pk = Packets()
        assert pk.feed(stream[:cut]) + pk.feed(stream[cut:]) == [semisync_ack("b.000001", 100),
                                                                 semisync_ack("b.000001", 200), b"\x01"]
    with pytest.raises(ProtocolError, match="during the dump"):
        Packets().feed((MAX_ACK + 1).to_bytes(3, "little") + b"\0")
    assert asked({"rpl_semi_sync_slave": 1}) and asked({"rpl_semi_sync_replica": "1"})
    assert not asked({}) and not asked({"rpl_semi_sync_slave": 0}) and not asked({"rpl_semi_sync_replica": None})


def test_semisync_is_offered_to_the_replicas_probes():
    """MariaDB's SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled' (a row: semisync), MySQL's
    SELECT @@global.rpl_semi_sync_source_enabled (no 1193: semisync), as the servers answer."""
    g = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_source_enabled": True, "server_id": 1}
    s: dict = {}
    assert _rows(answer("SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'", g, s)) == [
        ("rpl_semi_sync_master_enabled", "ON")]
    assert _rows(answer("SELECT @@global.rpl_semi_sync_source_enabled", g, s)) == [(1,)]
    answer("SET @rpl_semi_sync_replica = 1, @rpl_semi_sync_slave = 1", g, s)
    assert s == {"rpl_semi_sync_replica": 1, "rpl_semi_sync_slave": 1}


def test_semisync_flags_the_last_event_of_each_transaction():
    """Over a real MySQL 9.7 binlog: the ends TrxEnds flags are those of the boundary rules."""
    from pathlib import Path

    from binlogkit.boundary import advance, ends
    from binlogkit.reading.format import format_of_event
    from binlogkit.reading.reader import iter_raw_events
    from binlogkit.serve.semisync import TrxEnds

    path = Path(__file__).resolve().parent.parent / "fixtures" / "mysql-9.7" / "replication-gtid" / "primary" / \
        "binlog.000003"
    if not path.is_file():
        pytest.skip("fixture absent")
    t, state, fmt, n = TrxEnds(), 0, None, 0
    with open(path, "rb") as fh:
        for e in iter_raw_events(fh, name=str(path)):
            data = bytes(e.data)
            if e.type_code == 15:
                fmt = format_of_event(data)
                t.format(data)
            state, decision = advance(state, e.type_code, data, fmt)
            assert t.ends(e.type_code, data, fmt.len_checksum if fmt else 0) == ends(decision)
            n += ends(decision)
    assert n > 5


def test_numbers_past_ints_digit_limit_are_typed():
    """int() refuses more than 4,300 digits (ValueError): a query's number is refused (1235), a
    GTID's or an interval's is a GtidError, as any number out of range."""
    from binlogkit.errors import GtidError
    from binlogkit.gtid.mariadb import GtidPos

    long = "9" * 4400
    for q in (f"SET @x = {long}", f"SELECT {long}", f"SET @x = 1.{long}"):
        assert answer(q, {}, {})[0][:3] == b"\xff\xd3\x04"
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    for parse, text in ((GtidPos.parse, f"0-1-{long}"), (MysqlGtidSet.parse, f"{uuid}:1-{long}"),
                        (MysqlGtidSet.parse, f"{uuid}:{long}"), (MysqlGtid.parse, f"{uuid}:{long}")):
        with pytest.raises(GtidError):
            parse(text)
    assert GtidPos.parse("0-1-18446744073709551615") and MysqlGtidSet.parse(f"{uuid}:1-9223372036854775806")


def test_heartbeat_v2_as_mysql_sends_it():
    """Heartbeat_log_event_v2 (type 41): fields 1 file name, 2 position (a packed int, past 4 GiB
    too), 0 end, as the project's own decoder reads them; log_pos the position's low 32 bits."""
    from binlogkit.codecs import payload
    from binlogkit.serve.stream import heartbeat_v2

    for pos, crc in ((4, False), (123456, True), (5_000_000_000, True)):
        ev = heartbeat_v2("binlog.000002", pos, server_id=77, crc=crc)
        _ts, code, sid, size, log_pos, flags = header(ev)
        assert (code, sid, size, log_pos, flags) == (41, 77, len(ev), pos & 0xFFFFFFFF, 0)
        if crc:
            assert zlib.crc32(ev[:-4]) == int.from_bytes(ev[-4:], "little")
        p = payload.HeartbeatV2Body.parse(ev[19:len(ev) - (4 if crc else 0)])
        assert payload.tlv_values(p.fields, payload.HEARTBEAT_FIELDS, {"log_filename"}) == {
            "log_filename": "binlog.000002", "log_position": pos}
        assert p.rest == b""

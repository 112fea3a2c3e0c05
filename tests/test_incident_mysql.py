"""The Incident on MySQL: a transaction of its own, opened by a Gtid event, as MySQL 9.7 writes it.

Ground truth: fixtures/mysql-9.7/incident (real MySQL 9.7.4 binlogs; manifest.json holds what
the server and its GTID auto-position replica answered)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from binlogkit import open_binlog
from binlogkit.codecs.gtid import decode_mysql_gtid_tail, encode_mysql_gtid_tail
from binlogkit.constants import EventType as T
from binlogkit.errors import WriteRefused
from binlogkit.incident import NO_FILTER_F
from binlogkit.reading.scan import scan
from binlogkit.writing.writer import record_incident

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "mysql-9.7" / "incident"
MANIFEST = json.loads((FIX / "manifest.json").read_text())
UUID = MANIFEST["server_uuid"]


def events(path: Path):
    return list(open_binlog(str(path)))


def stopped(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    shutil.copytree(FIX / "stopped-primary", d)
    return d


def gtid_fields(raw) -> dict:
    body = bytes(raw.body)
    return {"flags": body[0], "sid": body[1:17].hex(), "gno": int.from_bytes(body[17:25], "little"),
            **decode_mysql_gtid_tail(body[25:])}


def test_the_tail_builds_back_the_servers_bytes():
    """encode_mysql_gtid_tail is the inverse of the decoder on every Gtid event MySQL 9.7 wrote."""
    n = 0
    for raw in events(FIX / "by-server" / "primary-bin.000002"):
        if raw.type_code == T.GTID_LOG_EVENT:
            tail = bytes(raw.body)[25:]
            f = decode_mysql_gtid_tail(tail)
            assert encode_mysql_gtid_tail(**f) == tail
            n += 1
    assert n == 8


def test_server_writes_gtid_then_incident_as_one_transaction():
    """What binlogkit copies: the server's own incident (manifest 'by-server')."""
    evs = events(FIX / "by-server" / "primary-bin.000002")
    g, inc, rot = evs[-3:]
    assert [g.type_code, inc.type_code, rot.type_code] == [T.GTID_LOG_EVENT, T.INCIDENT_EVENT, T.ROTATE_EVENT]
    f = gtid_fields(g)
    assert f["transaction_length"] == len(g.data) + len(inc.data) == 164
    assert f["flags"] == 1 and inc.flags == NO_FILTER_F and rot.flags == 0


def test_binlogkit_appends_the_same_shape(tmp_path):
    d = stopped(tmp_path)
    before = (d / "primary-bin.000003").stat().st_size
    done = record_incident(d, code="LOST_EVENTS", message="binlogkit test gap")
    assert done.gtid == f"{UUID}:11"   # the file's last is :10 (no auto.cnf here: its own transactions say the uuid)
    evs = events(d / "primary-bin.000003")
    g, inc, rot = evs[-3:]
    assert (g.offset, inc.offset, rot.offset) == tuple(done.offsets) and g.offset == before
    assert [g.type_code, inc.type_code, rot.type_code] == [T.GTID_LOG_EVENT, T.INCIDENT_EVENT, T.ROTATE_EVENT]
    f = gtid_fields(g)
    server = gtid_fields(events(FIX / "by-server" / "primary-bin.000002")[-3])
    # every field the server writes, in the same layout (77 bytes), with this file's values
    assert len(g.data) == 77 and set(f) == set(server)
    assert f["flags"] == 1 and f["sid"] == UUID.replace("-", "") and f["gno"] == 11
    assert (f["last_committed"], f["sequence_number"]) == (2, 3)  # after the file's sequence_number 2
    assert f["transaction_length"] == len(g.data) + len(inc.data)
    assert f["immediate_server_version"] == server["immediate_server_version"] == 90704
    assert f["immediate_commit_timestamp"] // 1_000_000 == g.timestamp == inc.timestamp
    assert inc.flags == NO_FILTER_F and inc.server_id == g.server_id == 1
    assert bytes(rot.body)[8:] == b"primary-bin.000004"
    assert scan(d / "primary-bin.000003").problem is None
    # the file the real server restarted on and sent to its replica: the same events, but the clock
    truth = events(FIX / "after-binlogkit" / "primary-bin.000003")
    assert [(e.type_code, e.offset, len(e.data), e.flags) for e in truth] == \
        [(e.type_code, e.offset, len(e.data), e.flags) for e in evs]
    assert bytes(truth[-2].body) == bytes(inc.body)
    # a second run writes nothing
    again = record_incident(d, code="LOST_EVENTS", message="binlogkit test gap")
    assert again.already and (d / "primary-bin.000003").stat().st_size == done.new_size


def test_the_uuid_comes_from_auto_cnf_when_there(tmp_path):
    d = stopped(tmp_path)
    other = "11111111-2222-3333-4444-555555555555"
    (d / "auto.cnf").write_text(f"[auto]\nserver-uuid={other}\n")
    done = record_incident(d, message="x")
    assert done.gtid == f"{other}:1"


def test_explicit_gtid_and_none(tmp_path):
    d = stopped(tmp_path)
    with pytest.raises(WriteRefused, match="used once"):
        record_incident(d, message="x", gtid=f"{UUID}:10")
    with pytest.raises(WriteRefused, match="not UUID:GNO"):
        record_incident(d, message="x", gtid="nonsense")
    assert (d / "primary-bin.000003").stat().st_size == 796  # refused: nothing written
    done = record_incident(d, message="x", gtid=f"{UUID}:500")
    assert done.gtid == f"{UUID}:500"
    d2 = stopped(tmp_path / "b")
    done = record_incident(d2, message="x", gtid="none")
    assert done.gtid is None
    assert [e.type_code for e in events(d2 / "primary-bin.000003")[-3:]] == \
        [T.STOP_EVENT, T.INCIDENT_EVENT, T.ROTATE_EVENT]  # the server's Stop at shutdown, then the marker


def rewrite(path: Path, edit) -> None:
    """Rebuild the binlog at ``path`` event by event through the codecs' build side, with
    ``edit(type_code, body) -> (type_code, body)`` applied (sizes, end_log_pos and CRC32 redone)."""
    from binlogkit.reading.events import build_event

    out = bytearray(b"\xfebin")
    for raw in events(path):
        if raw.type_code == T.FORMAT_DESCRIPTION_EVENT:
            out += bytes(raw.data)
            continue
        tc, body = edit(raw.type_code, bytes(raw.body))
        size = len(raw.data) - len(raw.body) + len(body)
        out += build_event(type_code=tc, body=body, timestamp=raw.timestamp, server_id=raw.server_id,
                           log_pos=len(out) + size, flags=raw.flags, checksum=True)
    path.write_bytes(bytes(out))
    assert scan(path).problem is None


def test_gtid_mode_off_gets_an_anonymous_gtid(tmp_path):
    """A binlog without GTIDs (gtid_mode=OFF): Anonymous_gtid + Incident, no GTID invented.
    Made from the real file by turning its Gtid events into Anonymous_gtid ones (gno 0, no sid)
    and emptying its Previous_gtids."""
    d = stopped(tmp_path)

    def anonymous(tc, body):
        if tc == T.GTID_LOG_EVENT:
            return T.ANONYMOUS_GTID_LOG_EVENT, body[:1] + bytes(24) + body[25:]
        if tc == T.PREVIOUS_GTIDS_LOG_EVENT:
            return tc, bytes(8)
        return tc, body

    rewrite(d / "primary-bin.000003", anonymous)
    done = record_incident(d, message="x")
    assert done.gtid == "ANONYMOUS"
    g, inc, _ = events(d / "primary-bin.000003")[-3:]
    assert g.type_code == T.ANONYMOUS_GTID_LOG_EVENT and bytes(g.body)[1:25] == bytes(24)
    assert gtid_fields(g)["transaction_length"] == len(g.data) + len(inc.data)


@pytest.mark.parametrize("what", ["previous_gtids", "gtid"])
def test_a_gtid_event_that_does_not_decode_refuses(tmp_path, what):
    """Found by the fuzz campaign: a Previous_gtids body announcing sids it does not hold (CRC
    valid) raised ValueError; now a WriteRefused naming the event, and nothing is written."""
    d = stopped(tmp_path)

    def damage(tc, body):
        if what == "previous_gtids" and tc == T.PREVIOUS_GTIDS_LOG_EVENT:
            return tc, (5).to_bytes(8, "little")
        if what == "gtid" and tc == T.GTID_LOG_EVENT:
            return tc, body[:10]
        return tc, body

    rewrite(d / "primary-bin.000003", damage)
    size = (d / "primary-bin.000003").stat().st_size
    with pytest.raises(WriteRefused, match="does not decode") as exc:
        record_incident(d, message="x")
    assert exc.value.offset is not None
    assert (d / "primary-bin.000003").stat().st_size == size
    done = record_incident(d, message="x", gtid=f"{UUID}:99")  # the way out the message names
    assert done.gtid == f"{UUID}:99"

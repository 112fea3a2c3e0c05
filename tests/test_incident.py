"""Recording an incident: the event, the API, and a real replica stopping on it (seed 000)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit import open_binlog
from binlogkit.cli import main
from binlogkit.constants import EventType
from binlogkit.reading.events import decode
from binlogkit.writing.writer import WriteRefused, record_incident

from conftest import stopped_primary_copy


def _copy(tmp_path):
    return stopped_primary_copy(tmp_path)


def test_incident_then_rotate_appended(tmp_path):
    d = _copy(tmp_path)
    before = (d / "mariadb-bin.000016").read_bytes()
    done = record_incident(d, code="LOST_EVENTS", message="two files lost in transit")
    after = (d / "mariadb-bin.000016").read_bytes()
    assert after[:len(before)] == before  # nothing before it changed
    events = list(open_binlog(str(d / "mariadb-bin.000016")))  # CRC32 verified
    inc, rot = events[-2], events[-1]
    assert (inc.type_code, rot.type_code) == (EventType.INCIDENT_EVENT, EventType.ROTATE_EVENT)
    assert inc.offset == len(before) and inc.log_pos == inc.end_offset and rot.log_pos == rot.end_offset
    assert decode(inc).fields["text"] == ("The incident LOST_EVENTS occured on the master. "
                                         "Message: two files lost in transit")
    assert decode(rot).fields["new_log_ident"] == "mariadb-bin.000017" == done.next_file
    assert inc.server_id == events[0].server_id
    # idempotent: the same marker again changes nothing; another one is refused
    res = CliRunner().invoke(main, ["incident", str(d), "--code", "LOST_EVENTS", "--message", "two files lost in transit"])
    assert res.exit_code == 0 and "nothing to do" in res.output
    assert (d / "mariadb-bin.000016").read_bytes() == after
    res = CliRunner().invoke(main, ["incident", str(d), "--code", "77", "--message", "custom"])
    assert res.exit_code == 2 and "already ends with another Incident" in res.output
    assert (d / "mariadb-bin.000016").read_bytes() == after
    # a backup of the file as it was, verified, beside the folder
    backup = Path(done.backup)
    assert backup.parent == d.parent and (backup / "mariadb-bin.000016").read_bytes() == before


def test_incident_with_another_code(tmp_path):
    d = _copy(tmp_path)
    res = CliRunner().invoke(main, ["incident", str(d), "--code", "77", "--message", "custom"])
    assert res.exit_code == 0, res.output
    last = list(open_binlog(str(d / "mariadb-bin.000016")))[-2]
    assert decode(last).fields["incident_name"] == "77"


def test_refuses_unsafe_sets(tmp_path):
    d = _copy(tmp_path)
    with open(d / "mariadb-bin.000016", "r+b") as fh:  # torn tail
        fh.truncate(fh.seek(0, 2) - 5)
    with pytest.raises(WriteRefused, match="damaged"):
        record_incident(d, message="x")
    d2 = _copy(tmp_path / "b")
    raw = bytearray((d2 / "mariadb-bin.000016").read_bytes())
    raw[4 + 17] |= 1  # FDE in-use flag: the server did not stop cleanly (CRC ignores it)
    (d2 / "mariadb-bin.000016").write_bytes(bytes(raw))
    with pytest.raises(WriteRefused, match="in use"):
        record_incident(d2, message="x")
    assert CliRunner().invoke(main, ["incident", str(d2)]).exit_code == 2

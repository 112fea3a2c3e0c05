"""``export.lake.feed``: the follower's view of its pull child, from pull's ``--json`` reports
(the lines ``binlogkit pull --json`` prints), and its words on the status line."""

from __future__ import annotations

import json

from binlogkit.export.lake.feed import PullState, describe
from binlogkit.export.lake.follow import status_line


def _line(**ev) -> str:
    return json.dumps({"time": 1.0, **ev})


def test_reconnecting_then_streaming_again():
    s = PullState()
    assert s.doc["state"] == "starting"
    assert s.take_line(_line(event="start", file="binlog.000001", position=4, server_version="9.7.4", tls=None),
                       100.0)["event"] == "start"
    s.take_line(_line(event="status", file="binlog.000002", position=500, lag_s=0), 101.0)
    assert s.doc == {"state": "streaming", "file": "binlog.000002", "position": 500, "reconnects": 0,
                     "primary_lag_seconds": 0}
    s.take_line(_line(event="reconnect", reason="127.0.0.1:1 closed the connection", in_s=0.5), 102.0)
    s.take_line(_line(event="reconnect", reason="cannot connect to 127.0.0.1:1: refused", in_s=1.0), 102.6)
    d = s.doc
    assert d["state"] == "reconnecting" and d["failed_in_a_row"] == 2 and d["since"] == 102.0
    assert d["reason"] == "cannot connect to 127.0.0.1:1: refused" and d["retry_in_s"] == 1.0 and d["retry_at"] == 103.6
    words = describe(d, 103.0)
    assert "cannot reach the primary for 1 s (cannot connect to 127.0.0.1:1: refused), 2 tries failed" in words
    s.take_line(_line(event="reconnected", file="binlog.000002", position=500), 104.0)
    d = s.doc
    assert d["state"] == "streaming" and d["reconnects"] == 1 and "reason" not in d and describe(d, 105.0) == ""
    s.take_line(_line(event="done", outcome="stopped", file="binlog.000002", position=500), 106.0)
    assert s.doc["state"] == "stopped"


def test_lines_that_are_not_reports_are_left_to_the_caller():
    s = PullState()
    assert s.take_line("not json\n", 1.0) is None
    assert s.take_line("[1, 2]\n", 1.0) is None
    assert s.doc["state"] == "starting"


def test_status_line_names_a_pull_that_cannot_reach_the_primary():
    doc = {"lag_seconds": 0.0, "last_gtid": "0-1-9", "file": "mariadb-bin.000001", "position": 900, "rows": 9,
           "rows_per_second": 3.0, "commits": 2}
    assert status_line(doc, 10.0).endswith("2 commits")
    doc["pull"] = {"state": "reconnecting", "reason": "refused", "since": 3.0, "retry_at": 14.0, "failed_in_a_row": 3}
    assert status_line(doc, 10.0).endswith("2 commits; pull cannot reach the primary for 7 s (refused), "
                                           "3 tries failed, next in 4 s")


def test_a_follower_writes_its_status_before_pulls_first_binlog(tmp_path):
    """A follower whose pull has written nothing yet (the primary cannot be reached from the
    start: here nothing listens on the port) writes its status file all the same, saying it
    waits and what pull is doing; before, there was no status file until the first binlog."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from binlogkit.export.lake.follow import status

    doc = status(None, 0.0, 100.0, 2.0)
    assert doc["waiting"] and doc["commits"] == 0 and doc["last_gtid"] is None and doc["seconds"] == 2.0
    assert status_line(doc).startswith("following: waiting, no binlog in the folder yet")
    root = Path(__file__).resolve().parent.parent
    st, pw = tmp_path / "status.json", tmp_path / "pw"
    pw.write_text("x\n")
    p = subprocess.run([sys.executable, "-m", "binlogkit", "export", str(tmp_path / "pulled"), "-o", str(tmp_path / "wh"),
                        "--format", "delta", "--mirror", "--follow", "--host", "127.0.0.1", "--port", "1", "--user",
                        "repl", "--password-file", str(pw), "--server-id", "4999", "--status-file", str(st), "--json"],
                       capture_output=True, text=True, timeout=120, cwd=root,
                       env=dict(os.environ, PYTHONPATH=str(root)))
    assert p.returncode == 1 and "binlogkit pull stopped" in p.stderr, p.stderr[-2000:]
    got = json.loads(st.read_text())
    assert got["waiting"] and got["commits"] == 0 and got["pull"]["state"] in ("starting", "reconnecting", "stopped")

"""Relay-log recovery kill -9 trials on MySQL 9.7.4 (WL#4621), the CI subset of
``make soak KIND=mysql-9.7``: a file/position and a GTID auto-position replica killed with a
real SIGKILL (strace-armed at a relay-log write of the IO thread) while the primary runs the
mixed workload, then ``binlogkit recover --apply`` on a copy of its datadir, a restart with
relay_log_recovery=0, and a comparison with the primary: caught up, every table's row count
and CHECKSUM TABLE equal (0 rows lost or doubled), no [ERROR] in the restarted server's log."""

from __future__ import annotations

import re

import pytest

from fixtures.lab.soak import run

pytestmark = [pytest.mark.server, pytest.mark.kind("mysql-9.7")]


def test_mysql_replicas_killed_recovered_and_equal_to_the_primary(tmp_path, capsys):
    # seed 15: trial 0 a file/position replica killed at the 34th relay-log write, trial 1 a GTID
    # auto-position one at the 2nd (the soak's own draw), both from the start of the workload
    rc = run(2, seed=15, late_every=0, kind="mysql-9.7", base=tmp_path)
    out = capsys.readouterr().out
    assert "mysql-9.7 (mysql-client 9.7.4" in out or "mysql-9.7 (mysql-server 9.7.4" in out
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+ (gtid|position) ", line)]
    assert len(rows) == 2 and {r[1] for r in rows} == {"gtid", "position"}, out
    assert all(r[-3] == "True" for r in rows), out
    # the applier's position at the kill (mysql.slave_relay_log_info: MySQL has no relay-log.info)
    # is known, so "rr=1 would" is a byte count, not -1
    assert all(int(r[-1].replace(",", "")) >= 0 for r in rows), out
    assert re.search(r"trials 2, divergences 0\b", out), out
    assert rc == 0

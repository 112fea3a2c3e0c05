"""Seed 000 with real servers: an incident recorded in a stopped primary's binlogs stops the
replica's SQL thread with error 1590 (R3.1, and R3.2 for an unknown code); skipping it lets
replication go on with data equal to the primary's (R4).

In GTID mode a replica asks for the transactions after its GTID position, so it only meets an
incident recorded after transactions it has not received yet: the test keeps it behind (its
receiver stopped while the primary commits more), as a replica that actually missed the gap is.
"""

from __future__ import annotations

import pytest

from binlogkit.writing.writer import record_incident
from fixtures.lab import Lab, catch_up, connect, grant_replication, wait_replica
from fixtures.lab import workload
from fixtures.lab.oracle import table_fingerprints

pytestmark = pytest.mark.server


KINDS = [pytest.param(None, id="mariadb-10.11"),
         pytest.param("mariadb-11.8", id="mariadb-11.8", marks=pytest.mark.kind("mariadb-11.8"))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("gtid", [False, True])
def test_replica_stops_on_incident_and_resumes_after_skip(tmp_path, gtid, kind):
    """On MariaDB 10.11 and 11.8 (MySQL 9.7: test_seeds_mysql_e2e.py)."""
    with Lab(tmp_path, kind=kind) as lab:
        p = lab.server("primary", 1).start()
        r = lab.server("replica", 2).start()
        grant_replication(p)
        connect(r, p, gtid=gtid)
        workload.schema(p)
        workload.small(p, 30)
        catch_up(r, p)
        for n, (code, text) in enumerate([("LOST_EVENTS", "binlog cache overflowed"), ("77", "an unknown code")]):
            r.execute("STOP SLAVE IO_THREAD")
            workload.small(p, 10, start=500 + 50 * n)  # the replica has not received these
            p.stop()
            done = record_incident(p.datadir, code=code, message=text)
            p.start()
            r.execute("START SLAVE IO_THREAD")
            res = wait_replica(r, gtid_target="0-1-999999999", timeout=60)
            st = res["status"]
            assert res["outcome"] == "stopped", st
            if code == "LOST_EVENTS":  # R3.1: stops, and says why
                assert st["Last_SQL_Errno"] == 1590 and text in st["Last_SQL_Error"], st
            else:  # R3.2: an unknown code always stops it; MariaDB 10.11 cannot even build the event
                assert st["Last_SQL_Errno"] in (1590, 1594), st
            if st["Last_SQL_Errno"] == 1590:  # R4: the DBA skips the incident and goes on
                r.execute("SET GLOBAL sql_slave_skip_counter=1", "START SLAVE")
            else:  # an event the server cannot build cannot be skipped: resume after it instead
                r.execute("STOP SLAVE")
                where = "MASTER_USE_GTID=slave_pos" if gtid else \
                    f"MASTER_LOG_FILE='{done.next_file}', MASTER_LOG_POS=4"
                r.execute(f"CHANGE MASTER TO {where}", "START SLAVE")
            workload.small(p, 20, start=100 + 50 * n)
            catch_up(r, p)
        assert table_fingerprints(r) == table_fingerprints(p)

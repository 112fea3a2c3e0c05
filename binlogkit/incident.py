"""What ``writer.record_incident`` did, as lines for the CLI (the renderer of the incident room).

The GTID an Incident needs on MySQL is worked out in the writing layer: ``writing/incident.py``
(its names are importable from here as well).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from .writing.incident import (NO_FILTER_F, FileGtids, choose_gtid, gtid_body, read_file_gtids,  # noqa: F401
                               server_uuid, server_version_number)


def done_lines(done) -> Iterator[tuple[str, bool]]:
    """What ``writer.record_incident`` did, as (line, for stderr) pairs for the CLI."""
    name = Path(done.file).name
    if done.already:
        yield (f"{name}: already ends with an Incident at {done.offsets[0]} and a Rotate to "
               f"{done.next_file} at {done.offsets[1]}; nothing to do"), False
        return
    if done.gtid is not None:  # MySQL: Gtid (or Anonymous_gtid) + Incident, a transaction of its own
        yield (f"{name}: {'Anonymous_gtid' if done.gtid == 'ANONYMOUS' else 'Gtid ' + done.gtid} "
               f"at {done.offsets[0]}, Incident at {done.offsets[1]}, Rotate to {done.next_file} at "
               f"{done.offsets[2]}; the file now ends at {done.new_size}"), False
        if done.gtid != "ANONYMOUS":
            yield ("replicas stop there (MySQL 9.7: error 13119 ER_REPLICA_INCIDENT; older servers 1590); to resume "
                   f"past it: STOP REPLICA; SET GTID_NEXT='{done.gtid}'; BEGIN; COMMIT; SET GTID_NEXT='AUTOMATIC'; "
                   "START REPLICA;"), False
    else:
        yield (f"{name}: Incident at {done.offsets[0]}, Rotate to {done.next_file} at "
               f"{done.offsets[1]}; the file now ends at {done.new_size}"), False
    yield f"the file as it was is in {done.backup}", True

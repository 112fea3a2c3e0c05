"""The GTID an Incident needs on MySQL, read from the binlog it is appended to.

A MySQL server writes an incident as a transaction of its own (seen on MySQL 9.7.4: a
non-transactional statement overflowing ``max_binlog_stmt_cache_size``; kept as
``fixtures/mysql-9.7/incident-by-server``)::

    Gtid (33)      flags 1, the server's uuid, the next gno; last_committed, sequence_number,
                   commit timestamps, transaction_length = Gtid + Incident, server versions
    Incident (26)  header flag LOG_EVENT_NO_FILTER_F (0x100)
    Rotate (4)     outside the transaction

Without the Gtid event an auto-position replica never receives the marker: it already holds
every GTID of that file, so the primary starts its dump at the next file. With it, the next
file's Previous_gtids (the server computes them from this file when it starts) holds the
incident's GTID, the replica does not, and the dump starts in this file: every replica mode
sees it. A server with ``gtid_mode=OFF`` writes an Anonymous_gtid (34) there instead.

MariaDB needs none of this: its Incident is not part of a GTID group, and a GTID-mode replica
that missed the gap asks for it by GTID (docs/incident.md).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..codecs.gtid import decode_mysql_gtid_tail, decode_previous_gtids, encode_mysql_gtid_tail
from ..codecs.serialization import decode_tagged_gtid
from ..codecs.common import uuid_text
from ..constants import EventType as T
from ..errors import WriteRefused
from ..reading.format import Format

#: MySQL's LOG_EVENT_NO_FILTER_F, which the server sets on every Incident it writes
NO_FILTER_F = 0x100
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass
class FileGtids:
    """What one MySQL binlog says about GTIDs: enough to choose the incident's."""
    max_gno: dict[str, int] = field(default_factory=dict)   # untagged uuid -> highest gno (Previous_gtids + events)
    own_uuid: str | None = None        # uuid of the last Gtid event the server wrote itself (its server_id)
    gtid_events: int = 0
    anonymous_events: int = 0
    max_sequence_number: int = 0

    def see(self, uuid: str, gno: int) -> None:
        self.max_gno[uuid] = max(self.max_gno.get(uuid, 0), gno)


def read_file_gtids(raws, server_id: int, *, file: str | None = None, strict: bool = True) -> FileGtids:
    """Fold the raw events of one binlog into ``FileGtids``. A GTID event that does not decode
    refuses the write (``WriteRefused`` naming file, offset and event): no GTID is chosen blind.
    ``strict=False`` (the GTID was named by the caller) passes over such events."""
    f = FileGtids()
    for raw in raws:
        try:
            _fold(f, raw, server_id)
        except (ValueError, IndexError) as exc:
            if not strict:
                continue
            raise WriteRefused(f"{T(raw.type_code).name} at {raw.offset} does not decode ({exc}): cannot choose "
                               "the incident's GTID; pass --gtid UUID:GNO, or repair the file first",
                               file=file, offset=raw.offset) from None
    return f


def _fold(f: FileGtids, raw, server_id: int) -> None:
    tc = raw.type_code
    if tc == T.PREVIOUS_GTIDS_LOG_EVENT:
        for s in decode_previous_gtids(bytes(raw.body)):
            if not s["tag"] and s["intervals"]:
                f.see(s["sid"], s["intervals"][-1][1] - 1)
    elif tc in (T.GTID_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT):
        body = bytes(raw.body)
        if len(body) < 25:
            raise ValueError(f"body of {len(body)} bytes, shorter than flags + uuid + gno")
        tail = decode_mysql_gtid_tail(body[25:])
        f.max_sequence_number = max(f.max_sequence_number, tail.get("sequence_number", 0))
        if tc == T.ANONYMOUS_GTID_LOG_EVENT:
            f.anonymous_events += 1
            return
        f.gtid_events += 1
        uuid = uuid_text(body[1:17])
        f.see(uuid, int.from_bytes(body[17:25], "little"))
        if raw.server_id == server_id:
            f.own_uuid = uuid
    elif tc == T.GTID_TAGGED_LOG_EVENT:
        d = decode_tagged_gtid(bytes(raw.body))
        f.gtid_events += 1
        f.max_sequence_number = max(f.max_sequence_number, d.get("sequence_number", 0))
        if not d.get("tag") and "uuid" in d and "gno" in d:
            f.see(d["uuid"], d["gno"])
            if raw.server_id == server_id:
                f.own_uuid = d["uuid"]


def server_uuid(binlog_dir: Path) -> str | None:
    """``server-uuid`` from ``auto.cnf`` when the binlog folder is the datadir."""
    try:
        text = (binlog_dir / "auto.cnf").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"^\s*server-uuid\s*=\s*(\S+)", text, re.M)
    return m.group(1).lower() if m and _UUID.match(m.group(1).lower()) else None


def choose_gtid(facts: FileGtids, *, wanted: str, uuid_from_datadir: str | None, file: str) -> tuple[str, int] | None:
    """(uuid, gno) for the incident, or None for an Anonymous_gtid (the file has no GTIDs).

    ``wanted``: ``auto`` (the server's uuid, the next gno after everything the file shows),
    or an explicit ``UUID:GNO``."""
    if wanted != "auto":
        uuid, _, gno_text = wanted.rpartition(":")
        uuid = uuid.lower()
        if not _UUID.match(uuid) or not gno_text.isdigit() or not 0 < int(gno_text) < 1 << 63:
            raise WriteRefused(f"--gtid {wanted!r} is not UUID:GNO (or auto)", file=file)
        if int(gno_text) <= facts.max_gno.get(uuid, 0):
            raise WriteRefused(f"--gtid {wanted}: the binlog already holds GTIDs of {uuid} up to "
                               f"{facts.max_gno[uuid]}; a GTID is used once", file=file)
        return uuid, int(gno_text)
    if not facts.gtid_events and not facts.max_gno:
        return None  # gtid_mode=OFF: an Anonymous_gtid, as the server writes
    own = uuid_from_datadir or facts.own_uuid
    if own is None and len(facts.max_gno) == 1:
        own = next(iter(facts.max_gno))
    if own is None:
        raise WriteRefused("cannot tell this server's uuid (no auto.cnf in the binlog folder, no transaction of its "
                           f"own in the file, GTIDs of {len(facts.max_gno)} servers): pass --gtid UUID:GNO "
                           "(SELECT @@server_uuid; GNO one past its last in gtid_executed)", file=file)
    gno = facts.max_gno.get(own, 0) + 1
    if gno >= 1 << 63:
        raise WriteRefused(f"the file's last GNO of {own} is {gno - 1}: no GNO is left; pass --gtid UUID:GNO", file=file)
    return own, gno


def server_version_number(fmt: Format) -> int:
    major, minor, patch = fmt.version
    return major * 10000 + minor * 100 + patch


def gtid_body(gtid: tuple[str, int] | None, *, facts: FileGtids, fmt: Format, incident_size: int,
              commit_us: int | None = None) -> tuple[int, bytes]:
    """(type code, body) of the Gtid (or Anonymous_gtid) event that opens the incident's
    transaction. transaction_length counts both events; its packed size is part of the Gtid
    event's own size, so it is solved as the server does (until it no longer moves)."""
    us = commit_us if commit_us is not None else time.time_ns() // 1000
    seq = facts.max_sequence_number + 1
    version = server_version_number(fmt)
    if seq >= 1 << 63 or not 0 <= version < 1 << 31:
        raise WriteRefused(f"the file's sequence_number {seq - 1} or server version {fmt.server_version!r} leaves no "
                           "valid Gtid event to write: is the file damaged?")
    head = (b"\x01" + (bytes.fromhex(gtid[0].replace("-", "")) + gtid[1].to_bytes(8, "little")
                       if gtid else bytes(24)))
    length = 0
    while True:
        tail = encode_mysql_gtid_tail(last_committed=seq - 1, sequence_number=seq, immediate_commit_timestamp=us,
                                      transaction_length=length, immediate_server_version=version)
        want = 19 + len(head) + len(tail) + fmt.len_checksum + incident_size
        if want == length:
            break
        length = want
    return (T.GTID_LOG_EVENT if gtid else T.ANONYMOUS_GTID_LOG_EVENT), head + tail

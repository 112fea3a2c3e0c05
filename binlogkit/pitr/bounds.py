"""Where a recovery starts and stops, from ``binlogkit pitr``'s options: ``check`` (which of
them go together) and ``bounds`` (the ``From`` and ``Until`` values); ``PitrUsage`` says what
is wrong (exit 2)."""

from __future__ import annotations

from datetime import datetime

from .backup import read_backup_info
from .plan import From, PitrUsage, Until


def check(*, from_gtid: str | None, from_file: str | None, from_position: int | None, backup_info: str | None,
          until_datetime, until_gtid: str | None, until_position: str | None) -> None:
    """Exactly one start (--from-gtid, --from-file with --from-position, --backup-info) and
    exactly one target (--until-datetime, --until-gtid, --until-position)."""
    if len([x for x in (from_gtid, from_file or from_position is not None or None, backup_info) if x]) != 1:
        raise PitrUsage("give exactly one of --from-gtid, --from-file/--from-position, --backup-info")
    if (from_file is None) != (from_position is None):
        raise PitrUsage("--from-file and --from-position go together")
    if sum(x is not None for x in (until_datetime, until_gtid, until_position)) != 1:
        raise PitrUsage("give exactly one of --until-datetime, --until-gtid, --until-position")


def bounds(*, from_gtid: str | None, from_file: str | None, from_position: int | None, backup_info: str | None,
           until_datetime: datetime | None, until_gtid: str | None, until_position: str | None) -> tuple[From, Until]:
    """The start and the target (after ``check``); ``until_position`` is NAME:N."""
    if backup_info:
        b = read_backup_info(backup_info)
        frm = From(b.file, b.position, b.gtids, "backup-info", b.to_json())
    elif from_gtid:
        frm = From(gtids=from_gtid, origin="gtid")
    else:
        frm = From(from_file, from_position, origin="position")
    if until_datetime is not None:
        return frm, Until(timestamp=int(until_datetime.timestamp()))
    if until_gtid:
        return frm, Until(gtids=until_gtid)
    name, _, pos = (until_position or "").rpartition(":")
    if not name or not pos.isdigit():
        raise PitrUsage(f"--until-position {until_position!r}: expected NAME:N, e.g. mariadb-bin.000007:1234")
    return frm, Until(file=name, position=int(pos))

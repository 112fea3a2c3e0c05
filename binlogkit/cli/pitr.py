"""binlogkit pitr: options -> ``pitr.plan_pitr`` -> ``pitr.render.lines``."""

from __future__ import annotations

import json
import sys

import click

from ..errors import BinlogError
from .exits import EXIT_DAMAGED, EXIT_OK, EXIT_USAGE, fail, fail_on
from .options import check, jobs_option, datetime_value, inputs, json_option, key_options


@click.command()
@inputs()
@click.option("--from-gtid", metavar="POS", help="The backup's GTID state (MariaDB gtid_binlog_pos 0-1-42,...; MySQL gtid_executed).")
@click.option("--from-file", metavar="NAME", help="The backup's binlog file (with --from-position).")
@click.option("--from-position", metavar="N", type=int, help="The backup's position in --from-file.")
@click.option("--backup-info", type=click.Path(exists=True, dir_okay=False),
              help="xtrabackup_binlog_info / mariadb_backup_binlog_info, or a dump made with --master-data.")
@click.option("--until-datetime", "--stop-datetime", "until_datetime", metavar="T",
              help="Replay what committed before T (ISO 8601; UTC unless a zone is given).")
@click.option("--until-gtid", metavar="SET", help="Replay up to and including this GTID state.")
@click.option("--until-position", metavar="NAME:N", help="Replay up to this binlog position (exclusive).")
@json_option("The plan as one JSON document.")
@jobs_option("Worker processes for the files between start and stop (default: one per core).")
@key_options
def pitr(inputs, from_gtid, from_file, from_position, backup_info, until_datetime, until_gtid, until_position,
         as_json, jobs, keys) -> None:
    """Plan a point-in-time recovery from a binlog archive.

    From where a backup stands (--from-gtid, --from-file/--from-position, or --backup-info) to a
    target (--until-datetime, --until-gtid or --until-position), read from the archive (INPUTS) alone:
    whether it is reachable, the ordered files with exact start and stop positions, the
    transactions and bytes to replay, every gap, damaged or partial transaction, incident or
    duplicate on the way (file and offset), and the replay command (mariadb-binlog ... | mariadb,
    or mysqlbinlog ... | mysql) with no connection options. Nothing is run or written.
    An encrypted archive is read with --key-file / --keyring-file (the replay tool then needs a
    server to decrypt: mariadb-binlog --read-from-remote-server). Exit codes: 0 reachable, 1 not
    reachable (the problems say why), 2 usage (and an encrypted archive without its key).
    """
    from ..pitr import From, PitrUsage, Until, plan_pitr, read_backup_info
    from ..pitr.render import lines

    if len([x for x in (from_gtid, from_file or from_position is not None or None, backup_info) if x]) != 1:
        fail("give exactly one of --from-gtid, --from-file/--from-position, --backup-info", EXIT_USAGE)
    if (from_file is None) != (from_position is None):
        fail("--from-file and --from-position go together", EXIT_USAGE)
    if sum(x is not None for x in (until_datetime, until_gtid, until_position)) != 1:
        fail("give exactly one of --until-datetime, --until-gtid, --until-position", EXIT_USAGE)
    check(inputs, missing_ok=True, recursive=True)
    try:
        if backup_info:
            b = read_backup_info(backup_info)
            frm = From(b.file, b.position, b.gtids, "backup-info", b.to_json())
        else:
            frm = From(gtids=from_gtid, origin="gtid") if from_gtid else From(from_file, from_position,
                                                                                origin="position")
        if until_datetime:
            until = Until(timestamp=int(datetime_value(until_datetime).timestamp()))  # type: ignore[union-attr]
        elif until_gtid:
            until = Until(gtids=until_gtid)
        else:
            name, _, pos = until_position.rpartition(":")
            if not name or not pos.isdigit():
                fail(f"--until-position {until_position!r}: expected NAME:N, e.g. mariadb-bin.000007:1234", EXIT_USAGE)
            until = Until(file=name, position=int(pos))
        doc = plan_pitr(inputs, frm, until, jobs=jobs, keys=keys)
    except click.BadParameter as exc:
        fail(exc.format_message(), EXIT_USAGE)
    except (PitrUsage, BinlogError) as exc:  # GtidError: a GTID text that does not parse, etc.
        fail_on(exc, EXIT_USAGE)
    click.echo(json.dumps(doc, indent=1, default=str) if as_json else "\n".join(lines(doc)))
    sys.exit(EXIT_OK if doc["reachable"] else EXIT_DAMAGED)

"""binlogkit pitr: options -> ``pitr.plan_pitr`` -> ``pitr.render.lines``."""

from __future__ import annotations

import os
import shlex
import shutil
import sys

import click

from .exits import EXIT_DAMAGED, EXIT_OK, EXIT_USAGE, fail, fails, show
from .options import Command, check, jobs_option, datetime_value, inputs, json_option, key_options


@click.command(cls=Command)
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
@click.option("--replay-with", type=click.Choice(["binlogkit", "tool"]), default="binlogkit", show_default=True,
              help="Who prints the replayed SQL in the command: `binlogkit decode` (reads encrypted, compressed "
                   "and s3:// archives) or the server's own mariadb-binlog / mysqlbinlog (plain local files).")
@json_option("The plan as one JSON document.")
@jobs_option("Worker processes for the files between start and stop (default: one per core).")
@key_options("inputs")
@fails(EXIT_USAGE)  # PitrUsage; GtidError: a GTID text that does not parse, etc.
def pitr(inputs, from_gtid, from_file, from_position, backup_info, until_datetime, until_gtid, until_position,
         replay_with, as_json, jobs) -> None:
    """Plan a point-in-time recovery from a binlog archive.

    From where a backup stands (--from-gtid, --from-file/--from-position, or --backup-info) to a
    target (--until-datetime, --until-gtid or --until-position), read from the archive (INPUTS) alone:
    whether it is reachable, the ordered files with exact start and stop positions, the
    transactions and bytes to replay, every gap, damaged or partial transaction, incident or
    duplicate on the way (file and offset), and the replay command with no connection options:
    `binlogkit decode [KEY OPTIONS] --start-position=N --stop-position=M FILES | mariadb` (MySQL:
    `| mysql`), which reads encrypted (--key-file / --keyring-file: paths only on the line),
    compressed (.xz, .gz, .bz2) and s3:// archives directly, writing nothing to disk. For plain
    local files, --replay-with tool prints the server's own line instead (mariadb-binlog ... |
    mariadb, mysqlbinlog ... | mysql; compressed files through xz -dc); with --json both lines
    are there (binlogkit_command, tool_command). Nothing is run or written. Exit codes: 0
    reachable, 1 not reachable (the problems say why), 2 usage (and an encrypted archive without
    its key, or --replay-with tool on s3:// or encrypted files).
    """
    from ..pitr import plan_pitr
    from ..pitr.bounds import bounds, check as check_bounds
    from ..pitr.render import lines

    given = dict(from_gtid=from_gtid, from_file=from_file, from_position=from_position, backup_info=backup_info,
                 until_gtid=until_gtid, until_position=until_position)
    check_bounds(until_datetime=until_datetime, **given)
    check(inputs, missing_ok=True, recursive=True)
    try:
        until_dt = datetime_value(until_datetime)
    except click.BadParameter as exc:  # one line, as pitr's other option errors
        fail(exc.format_message(), EXIT_USAGE)
    from ..reading.progress import watching

    with watching(inputs, "pitr"):
        doc = plan_pitr(inputs, *bounds(until_datetime=until_dt, **given), jobs=jobs, replay_with=replay_with,
                        program=program())
    show(doc, as_json, lines)
    sys.exit(EXIT_OK if doc["reachable"] else EXIT_DAMAGED)



def program(argv0: str | None = None) -> str:
    """The words that run this binlogkit from any folder: ``binlogkit`` when the one on PATH is
    the one running; else the running script's absolute path (``.venv/bin/binlogkit``), or its
    interpreter with ``-m binlogkit`` (``python -m binlogkit``). Called in-process by another
    program (``argv0`` none of those): ``binlogkit``."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    on_path = shutil.which("binlogkit")
    if os.path.basename(argv0) == "binlogkit" and os.path.isfile(argv0):  # the console script
        return "binlogkit" if on_path and os.path.samefile(on_path, argv0) else shlex.quote(os.path.abspath(argv0))
    package = os.path.dirname(os.path.abspath(argv0))
    if os.path.basename(argv0) == "__main__.py" and "binlogkit" in (os.path.basename(package),
                                                                    os.path.basename(os.path.dirname(package))):
        if on_path and _interpreter(on_path) == os.path.realpath(sys.executable):
            return "binlogkit"
        return f"{shlex.quote(sys.executable)} -m binlogkit"
    return "binlogkit"


def _interpreter(script: str) -> str | None:
    """The interpreter a ``#!`` script names (resolved), or None."""
    try:
        with open(script, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return os.path.realpath(words[0]) if words else None

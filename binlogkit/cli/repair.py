"""binlogkit incident, recover, flashback: the commands that write (a plan, one step that writes)."""

from __future__ import annotations

import sys

import click

from .exits import EXIT_DAMAGED, EXIT_OK, EXIT_USAGE, echo, fails, leftovers, say_leftovers, show
from .options import (Command, backup_dir_option, check, datetime_value, follow_links_option, gtid_filters,
                      gtids_value, inputs, json_option, key_options, output_option, position_filters, table_filters,
                      time_filters)


@click.command(cls=Command)
@click.argument("binlog_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--code", default="LOST_EVENTS", show_default=True,
              help="LOST_EVENTS, NEW_INCIDENT, or a number (replicas stop on any incident).")
@click.option("--message", default="", help="Why (at most 255 bytes); replicas report it.")
@click.option("--index", type=click.Path(exists=True, dir_okay=False), help="The binlog index, when the folder holds several.")
@backup_dir_option("Where to keep the verified copy of the binlog before it changes (default: a new folder "
                   "beside BINLOG_DIR, BINLOG_DIR.binlogkit-incident-TIME-RANDOM).")
@follow_links_option
@click.option("--gtid", default="auto", show_default=True,
              help="MySQL: the GTID of the incident's own transaction: auto (the server's uuid, from auto.cnf or "
                   "its own transactions, and the next GNO after the file's last), UUID:GNO, or none (no Gtid "
                   "event: a GTID auto-position replica that holds every GTID of the file never receives it).")
@key_options("binlog_dir")
@fails(EXIT_USAGE, os_errors=True)
def incident(binlog_dir, code, message, index, backup_dir, follow_links, gtid) -> None:
    """Record an incident in a stopped server's binlog set: an Incident event then a Rotate to
    the next file, at the end of the last binlog, so the log after the gap starts clean.

    Replicas reading it stop with error 1590 and the message, until an operator decides
    (e.g. SET GLOBAL sql_slave_skip_counter=1; START SLAVE). Refuses while any process holds a
    file of the folder open (compared by device and inode, so a bind mount cannot hide a running
    server), while another binlogkit command writes there, and when the last binlog is torn,
    still marked in use, or a symbolic link. The binlog is copied (verified) before it changes and
    keeps its owner and mode. Running it again changes nothing. An encrypted binlog (MariaDB
    encrypt_binlog) needs --key-file: the two events are written encrypted, as the server would.

    Exit codes: 0 written (or already there), 2 refused or error (nothing changed), 3 the write
    failed part-way (the file is unchanged; the message says where the copy is).
    """
    from ..incident import done_lines
    from ..writing.writer import record_incident

    with leftovers() as cleaned:
        done = record_incident(binlog_dir, code=code, message=message, index=index,
                               backup_dir=backup_dir, follow_links=follow_links, cleaned=cleaned, gtid=gtid)
    echo(done_lines(done))


# where recover stops before writing (recover.render.stop_before_apply) -> its exit code
_RECOVER_STOPS = {"refused": EXIT_USAGE, "done": EXIT_OK, "unreachable": EXIT_DAMAGED, "dry run": EXIT_DAMAGED}


@click.command(cls=Command)
@click.argument("relaydir", type=click.Path(exists=True, file_okay=False))
@click.option("--apply", "do_apply", is_flag=True, help="Carry the plan out (backup first, atomic rewrites). Default: dry run.")
@json_option("The plan as JSON.")
@click.option("--connection", help="MariaDB multi-source connection name (master-NAME.info, relay-log-NAME.info).")
@click.option("--mode", type=click.Choice(["position", "gtid"]), help="Override the mode read from master.info.")
@click.option("--relay-index", "relay_base", help="Relay log base name (e.g. relay-bin) when it cannot be guessed.")
@backup_dir_option("Where to keep the copies (default: beside RELAYDIR, RELAYDIR.binlogkit-recover-TIME).")
@click.option("--applied-gtids", help="What the replica committed (MariaDB gtid_slave_pos / MySQL gtid_executed), "
              "to move relay-log.info past commits it did not record.")
@click.option("--replica-binlog", type=click.Path(exists=True, dir_okay=False),
              help="The replica's own binlog index (log_slave_updates), for the same check; found in RELAYDIR by default.")
@click.option("--former-primary", "--binlog", "is_binlog", is_flag=True,
              help="RELAYDIR is a crashed former primary's binlog folder: cut what no replica received.")
@click.option("--keep-through", help="With --former-primary: the GTIDs the surviving replica holds (position or set).")
@click.option("--replica", "replica_dir", type=click.Path(exists=True, file_okay=False),
              help="With --former-primary: the surviving replica's relay directory (or a `binlogkit pull` folder: "
                   "binlogs and their index), to compute --keep-through.")
@follow_links_option
@key_options("relaydir", "replica_binlog", "replica_dir")
@fails(EXIT_USAGE, os_errors=True)
def recover(relaydir, do_apply, as_json, connection, mode, relay_base, backup_dir, applied_gtids, replica_binlog,
            is_binlog, keep_through, replica_dir, follow_links) -> None:
    """Repair a stopped replica's relay directory so it resumes with nothing lost and nothing
    applied twice.

    Finds torn events, checksum failures, a dangling final Rotate, index mismatches and stray
    files; cuts back to the last complete event (position mode) or transaction (GTID mode);
    computes the next source position from the relay logs themselves (master.info can lag) and
    the retrieved GTIDs without the partial transaction; rewrites master.info / relay-log.info.
    Dry run by default. --apply holds the folder's lock, refuses while any process has one of its
    files open (by device and inode: bind mounts and symlinked paths included), copies every file
    it will change into a new backup folder and verifies the copies before the first change,
    keeps owners and modes, never writes through a link, and replaces files atomically. A run
    that was killed or failed part-way leaves a journal in the folder; the next run finishes it.
    Encrypted relay logs (--key-file / --keyring-file) are cut at event boundaries, which the
    encryption keeps in clear, so they stay encrypted and readable by the server; without the
    key (or with a wrong one) nothing is cut.

    Exit codes: 0 nothing to do or applied, 1 repair pending (dry run) or the replica cannot resume
    in file/position mode (its next source position is past 4 GiB: use GTID positioning), 2
    refused or error (nothing changed), 3 the apply failed part-way (originals in the backup; run
    again to finish).
    """
    from ..recover import apply_plan, plan as make_plan
    from ..recover.apply import held
    from ..recover.render import applied, lines, stop_before_apply

    with held(relaydir.name, do_apply, say_leftovers) as lock:
        plan = make_plan(relaydir, former_primary=is_binlog, keep_through=keep_through, replica=replica_dir,
                         connection=connection, mode=mode, relay_base=relay_base, applied_gtids=applied_gtids,
                         replica_binlog=replica_binlog)
        if as_json or not plan.refuse:  # refused: no plan, the reason (stop_before_apply)
            show(plan.to_json(), as_json, lambda _doc: lines(plan))
        stop, said = stop_before_apply(plan, do_apply, as_json)
        echo(said)
        if stop is not None:
            sys.exit(_RECOVER_STOPS[stop])
        backup = apply_plan(plan, backup_dir=backup_dir, follow_links=follow_links, held=lock)
    echo(applied(plan, backup, as_json))
    sys.exit(EXIT_DAMAGED if plan.position_unreachable else EXIT_OK)


def _timestamp_value(value: str | None):
    """--timestamp: ``now`` (this run's time, to the second) or a date-time."""
    if value is None:
        return None
    if value.strip().lower() == "now":
        from datetime import datetime, timezone

        return datetime.now(timezone.utc).replace(microsecond=0)
    return datetime_value(value)


@click.command(cls=Command)
@inputs(exists=False)
@output_option("The file to write: a binlog (or SQL with --sql). Never replaced without --force.", required=True,
               type=click.Path(dir_okay=False))
@position_filters("In the first file: undo transactions starting here or later.",
                  "In the last file: undo transactions ending here or before.")
@time_filters("Undo transactions that began at or after this time (UTC unless a zone is given).",
              "... and before this time.")
@gtid_filters("Undo the transactions of this GTID set (MySQL uuid:1-5, MariaDB 0-1-5,0-1-7..9).", exclude=False)
@table_filters("Undo only", dest="table")
@click.option("--sql", "as_sql", is_flag=True,
              help="Write the undo as SQL statements (needs binlog_row_metadata=FULL: column names).")
@click.option("--skip-statements", is_flag=True,
              help="Leave statement events (DDL, statement-format DML) in the range out instead of refusing.")
@click.option("--timestamp", metavar="now|TIME",
              help="Date every event of the undo binlog at the time of this run (now) or at TIME (UTC unless a "
                   "zone is given), instead of its damaged transaction's time: a replay then dates the server's "
                   "own events so. Not with --sql (statements are dated when they run).")
@click.option("--generated", multiple=True, metavar="DB.TABLE.COLUMN",
              help="A generated column of the server (the binlog does not say which columns are generated; "
                   "repeatable, or comma-separated): --sql leaves it out of INSERT and UPDATE SET, and row images "
                   "that leave it out (MariaDB 11.8's FULL images do) are undone.")
@click.option("--force", is_flag=True, help="Replace the output file when it exists.")
@backup_dir_option("With --force: where to keep the verified copy of the output it replaces (default: a new "
                   "folder beside the output's folder, OUTDIR.binlogkit-flashback-TIME-RANDOM).")
@click.option("--no-check-later", "no_check_later", is_flag=True,
              help="Do not read the inputs after the range for later changes to the rows the undo puts back.")
@json_option("The summary as one JSON object.")
@key_options("inputs")
@fails()  # refused (2); damaged input (1); an encrypted one without its key (2)
def flashback(inputs, output, start_position, stop_position, start_datetime, stop_datetime, include_gtids,
              database, table, as_sql, skip_statements, timestamp, generated, force, backup_dir, no_check_later,
              as_json) -> None:
    """Undo a range of row changes: write a binlog whose transactions undo the selected ones,
    last first (inserts deleted, deletes inserted, updates reversed). Replay it with the server's
    own tool: `mariadb-binlog OUTPUT | mariadb`, `mysqlbinlog OUTPUT | mysql` (gtid_mode ON or OFF:
    the server numbers the undo transactions itself); `binlogkit decode -v OUTPUT` shows what it
    will do. Needs row-based binlogs (binlog_format=ROW) with FULL row images. INPUTS are
    binlogs or relay logs (files, .index files, folders, archives), all from one server version.

    --sql writes SQL statements instead, all in one transaction (a failed replay changes
    nothing). The undo binlog's events keep the times of the transactions they undo unless
    --timestamp now (or TIME) dates them.

    Refuses (exit 2, nothing written) statements in the range, named (DDL, statement-format
    DML; --skip-statements leaves them out; with --table / --database, DDL and XA transactions
    of other tables are left as they are, named), MINIMAL/NOBLOB images, a range that cuts a
    transaction in two, an existing output without --force (with it: a verified copy first),
    a link as the output, an output that is one of the inputs. Exit 1: damaged input (nothing
    written).

    Then it reads the inputs after the range: a later transaction that updated or deleted a
    row the undo puts back is named in a warning (the replay would overwrite that later change,
    or stop on it in a table without a key); exit 0, the file is written.

    Encrypted inputs are read with --key-file (MariaDB) or --keyring-file (MySQL), an event at a
    time (no decrypted copy on disk); without the key: exit 2. The output is not encrypted.
    """
    from ..flashback import flashback as run
    from ..flashback.render import notes, summary_line
    from ..reading.progress import watching

    check(inputs)
    to_terminal = output in (None, "-") and sys.stdout.isatty()    # its SQL on the same terminal
    with leftovers() as cleaned, watching(inputs, "flashback", enabled=not to_terminal):
        res = run(inputs, output, start_position=start_position, stop_position=stop_position,
                  start_datetime=datetime_value(start_datetime), stop_datetime=datetime_value(stop_datetime),
                  gtids=gtids_value(include_gtids), database=database, table=table, skip_statements=skip_statements,
                  sql=as_sql, force=force, check_later=not no_check_later, backup_dir=backup_dir,
                  cleaned=cleaned, timestamp=_timestamp_value(timestamp),
                  generated=tuple(c.strip() for v in generated for c in v.split(",") if c.strip()))
    show(res.to_json(), as_json, lambda _doc: summary_line(res), indent=None)
    for line in () if as_json else notes(res):
        click.echo(line, err=True)

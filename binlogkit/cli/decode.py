"""binlogkit decode: options -> ``decoding.replay_chunks`` -> ``decoding.render.write_replay`` (replayable, the
default), or ``decoding.events`` -> ``decoding.render.write_events`` (the listing, JSON lines)."""

from __future__ import annotations

import sys

import click

from ..errors import KeyRequiredError
from .exits import EXIT_USAGE, exit_code, fail, fails
from .options import (Command, check, datetime_value, gtid_filters, gtids_value, inputs, json_option, key_options,
                      position_filters, time_filters)


@click.command(cls=Command)
@inputs(allow_dash=True)
@json_option("One JSON object per event (JSON lines), stable keys.")
@position_filters()
@time_filters("Skip events older than this (ISO 8601 date-time; without a zone: local time as mysqlbinlog, UTC with "
              "--utc; the listing and --json: UTC).", "Stop at the first event at or after this time.")
@click.option("--type", "types", multiple=True, help="Only these event types (names or codes, comma-separated).")
@gtid_filters()
@click.option("--no-verify", is_flag=True, help="Do not stop on CRC32 mismatches (they show as checksum_ok=false).")
@click.option("--lenient", is_flag=True, help="Carry on past events that do not decode (reported on stderr).")
@click.option("--utc/--local-time", default=False, show_default=True,
              help="Print times in UTC or in local time (the default, as mysqlbinlog; TZ=... chooses the zone).")
@click.option("--base64-output", "base64_output", type=click.Choice(["auto", "never", "decode-rows"], case_sensitive=False),
              default="auto", show_default=True,
              help="auto: replayable SQL as mysqlbinlog / mariadb-binlog print it (the Format_description and row "
                   "events as BINLOG '...' blocks; `binlogkit decode FILE | mysql` applies the binlog). never: the same "
                   "without BINLOG blocks (refused when there are row events). decode-rows: the readable listing, "
                   "no BINLOG blocks (rows as `###` comments with -v).")
@click.option("-v", "--verbose", "verbose", count=True,
              help="Decode row images: `### INSERT INTO ... ###   @1=...` like mysqlbinlog -v (after each BINLOG "
                   "block with --base64-output=auto); -vv also ends each value in the tools' type comment "
                   "(`/* INT meta=0 nullable=1 is_null=0 */`) and shows MySQL's Rows_query; with --json, `rows`.")
@click.option("--skip-gtids", is_flag=True, help="Replayable output: no GTID statements (the server assigns new ones).")
@click.option("--database", "-d", "database", multiple=True, metavar="DB",
              help="Replayable output: only statements and row events of this database (its default database for "
                   "statements, as mysqlbinlog --database).")
@click.option("--rewrite-db", "rewrite_db", multiple=True, metavar="FROM->TO",
              help="Replayable output: apply FROM's changes to database TO (Table_map events and `use`).")
@click.option("--column-type", "column_types", multiple=True, metavar="DB.TABLE.COLUMN=TYPE",
              help="With -v: show a column as uuid, inet6 or inet4 (MariaDB logs these types as BINARY(n)), or "
                   "give the precision of MariaDB's pre-10.1 fractional temporals: time(N), datetime(N), "
                   "timestamp(N) (the binlog does not carry it); COLUMN is a name (when the binlog carries "
                   "names) or @N; wildcards allowed.")
@key_options("inputs")
@fails(os_errors=True)
def decode(inputs, as_json, start_position, stop_position, start_datetime, stop_datetime, types,
           include_gtids, exclude_gtids, no_verify, lenient, utc, base64_output, verbose, skip_gtids, database,
           rewrite_db, column_types) -> None:
    """Print the events of binlog / relay-log INPUTS (.index files and folders too) with exact offsets.

    By default the output is what the server's own tool prints (mariadb-binlog for MariaDB files,
    mysqlbinlog for MySQL's), replayable: `binlogkit decode FILE | mysql` applies the binlog, from
    encrypted, compressed and object-storage archives too. Where no faithful replay is possible (an
    unknown event, LOAD DATA without its file, a damaged event, an input ending inside a
    transaction) the open transaction is rolled back, the reason goes to stderr and the exit code
    is 1. Positions and times filter as mysqlbinlog's do (--start-position in the first file,
    --stop-position in the last).

    --base64-output=decode-rows gives the readable listing: `# at OFFSET`, then the event's time,
    server id, end_log_pos, CRC32 and type with its key fields, then its SQL (queries, GTIDs, Xid
    COMMITs). Compressed archives (.xz, .gz, .bz2) are read as streams; `-` reads standard
    input. A torn tail or a damaged event is reported with its offset after everything before
    it was printed, and the exit code is 1. Events inside MySQL Transaction_payload events follow it, between
    `# Start/End of compressed events!`. With output redirected and stderr a terminal, progress
    shows on stderr.
    """
    from ..decoding import event_types, local_is_utc
    from ..reading.progress import Progress
    from ..rowvalues import parse_hints

    check(inputs)
    out = sys.stdout
    if verbose:  # row values carry non-UTF-8 bytes as surrogate escapes: write them back raw
        try:
            getattr(out, "reconfigure")(errors="surrogateescape")
        except (AttributeError, ValueError):
            pass
    try:
        hints = parse_hints(column_types)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        wanted = event_types(types)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    watch = sys.stderr.isatty() and not out.isatty()  # progress when the output goes elsewhere
    if base64_output.lower() != "decode-rows" and not as_json:
        if wanted:
            fail("--type lists events, it cannot make replayable output: add --base64-output=decode-rows", EXIT_USAGE)
        if lenient:
            fail("--lenient carries on past events that do not decode, which a replay cannot: add "
                 "--base64-output=decode-rows to list them", EXIT_USAGE)
        _replay(inputs, out, base64=base64_output.lower(), verbose=verbose, utc=utc, skip_gtids=skip_gtids,
                database=database, rewrite_db=rewrite_db, start_position=start_position,
                stop_position=stop_position, start_datetime=_when(start_datetime, utc),
                stop_datetime=_when(stop_datetime, utc), include_gtids=gtids_value(include_gtids),
                exclude_gtids=gtids_value(exclude_gtids), verify=not no_verify, hints=hints,
                progress=(lambda name, total: Progress(total, f"decode {name}")) if watch else None)
        return
    if database or rewrite_db or skip_gtids:
        fail("--database, --rewrite-db and --skip-gtids shape replayable output (--base64-output=auto)", EXIT_USAGE)
    _listing(inputs, out, as_json=as_json, utc=utc or local_is_utc(), watch=watch, start_position=start_position,
             stop_position=stop_position, start_datetime=datetime_value(start_datetime),
             stop_datetime=datetime_value(stop_datetime), types=wanted, include_gtids=gtids_value(include_gtids),
             exclude_gtids=gtids_value(exclude_gtids), verify=not no_verify, strict=not lenient, rows=verbose,
             column_types=hints)


def _listing(inputs, out, *, as_json, utc, watch, **options) -> None:
    """The readable listing or JSON lines (``decoding.events`` -> ``write_events``); each damaged
    input's error on stderr after what came before it, then the worst exit code."""
    from ..decoding import events
    from ..decoding.render import write_events
    from ..reading.progress import Progress

    damaged = 0

    def problem(p) -> bool:
        nonlocal damaged
        damaged = max(damaged, exit_code(p.error))
        click.echo(f"binlogkit: error: {p.error}", err=True)
        return not isinstance(p.error, KeyRequiredError)  # a usage error: the next files need the same key
    items = events(inputs, as_json=as_json, utc=utc, **options,
                   progress=(lambda name, total: Progress(total, f"decode {name}")) if watch else None)
    write_events(items, out, as_json=as_json, utc=utc, watch=watch, on_problem=problem)
    sys.exit(int(damaged))


def _replay(inputs, out, *, base64, verbose, utc, skip_gtids, database, rewrite_db, hints, verify,
            progress=None, **filters) -> None:
    """The replayable text (``decoding.replay_chunks``), written as it comes; each reason it is not
    a faithful replay on stderr (file, offset, event), then exit 1."""
    from ..decoding import replay_chunks
    from ..decoding.render import write_replay
    from ..decoding.replay import Replay, ReplayOptions, rewrite_pairs

    try:
        pairs = rewrite_pairs(rewrite_db)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    rp = Replay(ReplayOptions(base64=base64, verbose=verbose, utc=utc, skip_gtids=skip_gtids, databases=database,
                              rewrite_db=pairs))
    write_replay(replay_chunks(rp, inputs, verify=verify, column_types=hints, progress=progress, **filters), out)
    code = 0
    for p in rp.problems:  # the reader's errors as the listing reports them; the rest named as replay limits
        if p.error is not None:
            click.echo(f"binlogkit: error: {p.error}", err=True)
            code = max(code, int(exit_code(p.error)))
        else:
            click.echo(f"binlogkit: error: no faithful replay: {p}", err=True)
            code = max(code, 1)
    sys.exit(code)


def _when(value: str | None, utc: bool):
    """A --start/--stop-datetime for the replayable output: a time without a zone is local time,
    as mysqlbinlog reads it (UTC with --utc)."""
    from datetime import datetime

    if value is None or utc:
        return datetime_value(value)
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return datetime_value(value)  # its error
    return dt if dt.tzinfo else dt.astimezone()

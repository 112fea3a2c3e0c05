"""binlogkit decode: options -> ``decoding.events`` -> ``decoding.render.write_events``."""

from __future__ import annotations

import sys

import click

from ..errors import KeyRequiredError
from .exits import EXIT_USAGE, exit_code, fail, fails
from .options import (check, datetime_value, gtid_filters, gtids_value, inputs, json_option, key_options,
                      position_filters, time_filters)


@click.command()
@inputs(allow_dash=True)
@json_option("One JSON object per event (JSON lines), stable keys.")
@position_filters()
@time_filters("Skip events older than this (ISO 8601; UTC unless a zone is given).",
              "Stop at the first event at or after this time.")
@click.option("--type", "types", multiple=True, help="Only these event types (names or codes; repeat or comma-separate).")
@gtid_filters()
@click.option("--no-verify", is_flag=True, help="Do not stop on CRC32 mismatches (they show as checksum_ok=false).")
@click.option("--lenient", is_flag=True, help="Carry on past events that do not decode (reported on stderr).")
@click.option("--utc/--local-time", default=True, show_default=True, help="Print timestamps in UTC or in local time.")
@click.option("-v", "--verbose", "verbose", is_flag=True,
              help="Decode row images: `### INSERT INTO ... ###   @1=...` like mysqlbinlog -v; with --json, `rows`.")
@click.option("--column-type", "column_types", multiple=True, metavar="DB.TABLE.COLUMN=TYPE",
              help="With -v: show a column as uuid, inet6 or inet4 (MariaDB logs these types as BINARY(n)), or "
                   "give the precision of MariaDB's pre-10.1 fractional temporals: time(N), datetime(N), "
                   "timestamp(N) (the binlog does not carry it); COLUMN is a name (when the binlog carries "
                   "names) or @N; wildcards allowed; repeatable.")
@key_options("inputs")
@fails(os_errors=True)
def decode(inputs, as_json, start_position, stop_position, start_datetime, stop_datetime, types,
           include_gtids, exclude_gtids, no_verify, lenient, utc, verbose, column_types) -> None:
    """Print the events of binlog / relay-log INPUTS (.index files and folders too) with exact offsets.

    Text output is modelled on mysqlbinlog: `# at OFFSET`, then the event's time, server id,
    end_log_pos, CRC32 and type with its key fields, then its SQL (queries, GTIDs, Xid
    COMMITs). Compressed archives (.xz, .gz, .bz2) are read as streams; `-` reads standard
    input. A torn tail or a damaged event is reported with its offset after everything before
    it was printed, and the exit code is 1. Events inside MySQL Transaction_payload events follow it, between
    `# Start/End of compressed events!`. With output redirected and stderr a terminal, progress
    shows on stderr.
    """
    from ..decoding import event_types, events
    from ..decoding.render import Progress, write_events
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
    damaged = 0

    def problem(p) -> bool:
        nonlocal damaged
        damaged = max(damaged, exit_code(p.error))
        click.echo(f"binlogkit: error: {p.error}", err=True)
        return not isinstance(p.error, KeyRequiredError)  # a usage error: the next files need the same key
    items = events(inputs, start_position=start_position, stop_position=stop_position,
                   start_datetime=datetime_value(start_datetime), stop_datetime=datetime_value(stop_datetime),
                   types=wanted, include_gtids=gtids_value(include_gtids), exclude_gtids=gtids_value(exclude_gtids),
                   verify=not no_verify, strict=not lenient, rows=verbose, as_json=as_json, utc=utc,
                   column_types=hints,
                   progress=(lambda name, total: Progress(total, f"decode {name}")) if watch else None)
    write_events(items, out, as_json=as_json, utc=utc, watch=watch, on_problem=problem)
    sys.exit(int(damaged))

"""Command line: each command is a thin wrapper around one API call (``binlogkit.api``).

Exit codes scripts can rely on:

* 0 — done, nothing wrong found
* 1 — the input is damaged (torn event, checksum mismatch, undecodable event, not a binlog)
* 2 — usage or I/O error (bad option, missing file)
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone

import click

from . import __version__
from .api import Problem, decode_files, expand_paths, verify_files
from .constants import EventType
from .errors import BinlogError
from .render import render

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE = 0, 1, 2


class Progress:
    """Progress on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, label: str) -> None:
        self.on = sys.stderr.isatty() and total > (32 << 20)
        self.total, self.label = total, label

    def __call__(self, done: int) -> None:
        if self.on:
            sys.stderr.write(f"\r{self.label}: {done * 100 // max(1, self.total):3d}%")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * (len(self.label) + 6) + "\r")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="binlogkit")
def main() -> None:
    """binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

    Works from files alone: no server connection is needed for any command.
    Exit codes: 0 ok, 1 damaged input or findings, 2 usage or I/O error.
    """


def _datetime(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date-time like 2024-01-31 12:00:00") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _types(values: tuple[str, ...]) -> set[int] | None:
    if not values:
        return None
    out = set()
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if part.isdigit():
                out.add(int(part))
                continue
            key = part.upper()
            matches = [t for t in EventType if t.name == key or t.name == key + "_EVENT"
                       or t.name == key + "_LOG_EVENT"]
            if not matches:
                raise click.BadParameter(f"unknown event type {part!r} (try QUERY, XID, GTID, ROTATE, 162...)")
            out.update(matches)
    return out


def _fail(message: str, code: int) -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    click.echo(f"binlogkit: error: {message}", err=True)
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    """The reader of our output went away (``| head``): stop quietly, it is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_OK)


def _event_json(ev, path: str) -> dict:
    raw = ev.raw
    return {"file": path, "offset": raw.offset, "end_offset": raw.end_offset, "type": raw.type_name,
            "type_code": raw.type_code, "name": ev.name, "timestamp": raw.timestamp,
            "server_id": raw.server_id, "event_size": raw.event_size, "log_pos": raw.log_pos,
            "flags": raw.flags, "checksum_ok": raw.checksum_ok, "fields": ev.fields}


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event (JSON lines), stable keys.")
@click.option("--start-position", type=int, help="Skip events that start before this file offset.")
@click.option("--stop-position", type=int, help="Stop at the first event starting at or after this offset.")
@click.option("--start-datetime", help="Skip events older than this (ISO 8601; UTC unless a zone is given).")
@click.option("--stop-datetime", help="Stop at the first event at or after this time.")
@click.option("--type", "types", multiple=True, help="Only these event types (names or codes; repeat or comma-separate).")
@click.option("--no-verify", is_flag=True, help="Do not stop on CRC32 mismatches (they show as checksum_ok=false).")
@click.option("--lenient", is_flag=True, help="Carry on past events that do not decode (reported on stderr).")
@click.option("--utc/--local-time", default=True, show_default=True, help="Print timestamps in UTC or in local time.")
def decode(files, as_json, start_position, stop_position, start_datetime, stop_datetime, types,
           no_verify, lenient, utc) -> None:
    """Print the events of binlog / relay-log FILES (.index files and folders too) with exact offsets.

    Text output is modelled on mysqlbinlog: `# at OFFSET`, then the event's time, server id,
    end_log_pos, CRC32 and type with its key fields, then its SQL (queries, GTIDs, Xid
    COMMITs). Compressed archives (.xz, .gz, .bz2) are read as streams. A torn tail or a
    damaged event is reported with its offset after everything before it was printed, and the
    exit code is 1.
    """
    out = sys.stdout
    damaged = False
    try:
        items = decode_files(files, start_position=start_position, stop_position=stop_position,
                             start_datetime=_datetime(start_datetime), stop_datetime=_datetime(stop_datetime),
                             types=_types(types), verify=not no_verify, strict=not lenient)
        for item in items:
            if isinstance(item, Problem):
                damaged = True
                out.flush()
                click.echo(f"binlogkit: error: {item.error}", err=True)
                continue
            if as_json:
                out.write(json.dumps(_event_json(item, item.raw.file), default=str) + "\n")
            else:
                out.write("\n".join(render(item, utc)) + "\n")
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as exc:
        _fail(str(exc), EXIT_USAGE)
    sys.exit(EXIT_DAMAGED if damaged else EXIT_OK)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
def verify(files, as_json) -> None:
    """Check framing and CRC32 of every event of FILES (.index files and folders too) at full speed.

    Prints one line per file: OK with its event count, or BAD with the first problem and its
    offset (torn event, checksum mismatch, impossible size, not a binlog, encrypted). Exit
    code 0 only when every file is sound.
    """
    bad = False
    for path in expand_paths(files):
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            _fail(str(exc), EXIT_USAGE)
        prog = Progress(size, f"verify {path.name}")
        (res,) = verify_files([path], progress=prog)
        prog.close()
        bad |= not res.ok
        if as_json:
            click.echo(json.dumps({"file": str(path), "ok": res.ok, "size": res.size, "events": res.events,
                                   "checksummed": res.checksummed, "end_offset": res.end_offset,
                                   "problem": None if res.ok else {
                                       "kind": type(res.problem).__name__, "offset": res.problem.offset,
                                       "event_type": res.problem.event_type, "message": res.problem.message}}))
        elif res.ok:
            click.echo(f"OK   {path}  {res.events} events, {res.checksummed} checksummed, {res.size} bytes")
        else:
            p = res.problem
            click.echo(f"BAD  {path}  offset {p.offset}: {p.message}"
                       + (f" ({p.event_type})" if p.event_type else "")
                       + f"; {res.events} whole events before it")
    sys.exit(EXIT_DAMAGED if bad else EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()

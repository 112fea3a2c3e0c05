"""Command line: each command is a thin wrapper around one API call.

Exit codes scripts can rely on:

* 0 — done, nothing wrong found
* 1 — the input is damaged or a finding of severity error (a ``BinlogError``)
* 2 — usage or I/O error (bad option, missing file)
"""

from __future__ import annotations

import json
import os
import sys

import click

from . import __version__, open_binlog
from .errors import BinlogError

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="binlogkit")
def main() -> None:
    """binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

    Works from files alone: no server connection is needed for any command.
    Exit codes: 0 ok, 1 damaged input or findings, 2 usage or I/O error.
    """


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event (JSON lines).")
@click.option("--no-verify", is_flag=True, help="Do not stop on CRC32 mismatches (report them).")
def decode(file: str, as_json: bool, no_verify: bool) -> None:
    """Print the events of a binlog or relay log FILE with their exact offsets.

    Each line shows the event's offset in FILE, its type, server id, size, the end position
    it claims in the source binlog (end_log_pos) and its header flags.
    """
    out = sys.stdout
    if not as_json:
        out.write(f"{'offset':>10}  {'type':<28} {'server_id':>10} {'size':>9} {'end_log_pos':>11}  flags  crc\n")
    try:
        for ev in open_binlog(file, verify=not no_verify):
            crc = {True: "ok", False: "BAD", None: "-"}[ev.checksum_ok]
            if as_json:
                out.write(json.dumps({
                    "offset": ev.offset, "type": ev.type_name, "type_code": ev.type_code,
                    "server_id": ev.server_id, "event_size": ev.event_size,
                    "end_log_pos": ev.log_pos, "flags": ev.flags, "timestamp": ev.timestamp,
                    "checksum_ok": ev.checksum_ok,
                }) + "\n")
            else:
                out.write(f"{ev.offset:>10}  {ev.type_name:<28} {ev.server_id:>10} {ev.event_size:>9} "
                          f"{ev.log_pos:>11}  {ev.flags:#06x} {crc}\n")
    except BinlogError as exc:
        _fail(exc, EXIT_DAMAGED)
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as exc:
        _fail(exc, EXIT_USAGE)


def _fail(exc: Exception, code: int) -> None:
    """Print a one-line error after what was already written, and exit with ``code``."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    click.echo(f"binlogkit: error: {exc}", err=True)
    sys.exit(code)


def _quiet_broken_pipe() -> None:
    """The reader of our output went away (``| head``): stop quietly, it is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()

"""Command line: each command is a thin wrapper around one API call (``binlogkit.api``).

Exit codes scripts can rely on:

* 0 — done, nothing wrong found
* 1 — the input is damaged (torn event, checksum mismatch, undecodable event, not a binlog)
* 2 — usage or I/O error (bad option, missing file)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from datetime import datetime, timezone

import click
from pathlib import Path

from . import __version__
from .api import Problem, decode_files, expand_paths, gtid_summary, transactions as list_transactions, verify_files
from .constants import EventType
from ._optional import MissingDependency, need
from .errors import (BinlogError, KeyFileError, KeyRequiredError, NotRegularFileError, PartialWrite, StorageError,
                     WriteRefused)
from .render import render_text

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE, EXIT_PARTIAL = 0, 1, 2, 3
PAYLOAD = int(EventType.TRANSACTION_PAYLOAD_EVENT)


class Progress:
    """Progress on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, label: str) -> None:
        least = int(os.environ.get("BINLOGKIT_PROGRESS_MIN_BYTES", 32 << 20))  # small inputs: no noise
        self.on = sys.stderr.isatty() and total > least
        self.total, self.label = total, label

    def __call__(self, done: int) -> None:
        if self.on:
            sys.stderr.write(f"\r{self.label}: {done * 100 // max(1, self.total):3d}%")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * (len(self.label) + 6) + "\r")


class _Commands(click.Group):
    """Every command ends the same way on these, never with a traceback: a missing optional
    dependency is one line naming the extra to install, exit 2; output that cannot be written —
    a reader that went away (``| head``) quietly, as Unix tools do; a full disk or another I/O
    error with one line, exit 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MissingDependency as exc:
            _fail(str(exc), EXIT_USAGE)
        except StorageError as exc:  # the object store refused or failed: names the URL
            _fail(str(exc), EXIT_USAGE)
        except BrokenPipeError:
            _quiet_broken_pipe()
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            what = "" if exc.filename else "cannot write the output: "
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except OSError:
                pass
            click.echo(f"binlogkit: error: {what}{exc.strerror or exc}{where}", err=True)
            sys.exit(EXIT_USAGE)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="binlogkit")
def main() -> None:
    """binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

    Works from files alone: no command but `pull` (a live copy from a primary) connects to a server.
    Exit codes: 0 ok, 1 damaged input or findings, 2 usage or I/O error, 3 a repair stopped
    part-way (run it again to finish it).
    """


class InputPath(click.Path):
    """A local path, checked as ``click.Path`` does (must exist, ...), or a URL
    (``s3://bucket/prefix``, any fsspec URL), passed as it is: the store is asked when the
    command reads or writes it (its errors exit 2, naming the URL)."""

    def convert(self, value, param, ctx):
        from .reading.storage import is_url

        if isinstance(value, str) and is_url(value):
            return value
        if value == "-" and self.exists and not self.allow_dash:  # one line, not click's usage screen
            name = ctx.command.name if ctx is not None and ctx.command is not None else "this command"
            _fail(f"{name} cannot read standard input ('-'): it needs files it can reopen; give a path "
                  "(decode reads '-')", EXIT_USAGE)
        return super().convert(value, param, ctx)


OutputPath = InputPath  # outputs likewise: a local path checked by click, or a URL (storage.write_atomic)


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
            matches = [t for t in EventType if key in (t.name, t.name.replace("_LOG_EVENT", "").replace("_EVENT", ""))
                       or t.name == key + "_EVENT" or t.name == key + "_LOG_EVENT"]
            if not matches:
                raise click.BadParameter(f"unknown event type {part!r} (try QUERY, XID, GTID, ROTATE, 162...)")
            out.update(matches)
    return out


def _gtids(text: str | None):
    if text is None:
        return None
    from .api import gtid_matcher
    try:
        return gtid_matcher(text)
    except BinlogError as exc:
        raise click.BadParameter(str(exc)) from None


def _fail(message: str, code: int) -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    click.echo(f"binlogkit: error: {message}", err=True)
    sys.exit(code)


_KEY_OPTIONS = (
    click.option("--key-file", envvar="BINLOGKIT_KEY_FILE", type=click.Path(dir_okay=False),
                 help="MariaDB encrypted binlogs / relay logs: the server's file_key_management key file "
                      "(id;hexkey lines, plain or openssl-enc encrypted). Also BINLOGKIT_KEY_FILE."),
    click.option("--key-file-secret-file", type=click.Path(dir_okay=False),
                 help="File holding the secret of an encrypted key file (file_key_management_filekey); "
                      "or BINLOGKIT_KEY_FILE_SECRET. Never on the command line."),
    click.option("--cipher", type=click.Choice(["AES_CBC", "AES_CTR"], case_sensitive=False),
                 help="The server's file_key_management_encryption_algorithm (default: found from the events)."),
    click.option("--keyring-file", type=click.Path(dir_okay=False),
                 help="MySQL binlog_encryption: the keyring (component_keyring_file JSON or keyring_file)."),
)


def key_options(command):
    """The key options, declared once for every command that reads or writes log files; the
    command receives ``keys`` (a ``crypto.Keys`` or None). A key file that cannot be used is a
    usage error (exit 2); one that other users may read gives a warning, and so does the secret
    file of an encrypted key file."""
    @functools.wraps(command)
    def wrapper(*args, key_file=None, key_file_secret_file=None, cipher=None, keyring_file=None, **kw):
        from .crypto.keys import load_keys, loose_permissions

        try:
            keys = load_keys(key_file, secret_file=key_file_secret_file, cipher=cipher, keyring_file=keyring_file)
        except BinlogError as exc:
            _fail(str(exc), EXIT_USAGE)
        for f in filter(None, (key_file or os.environ.get("BINLOGKIT_KEY_FILE"), key_file_secret_file, keyring_file)):
            if loose_permissions(f):
                click.echo(f"binlogkit: warning: {f} is readable by other users (chmod 600 it)", err=True)
        return command(*args, keys=keys, **kw)
    for opt in reversed(_KEY_OPTIONS):
        wrapper = opt(wrapper)
    return wrapper


def _exit_for(exc: BaseException | None, damaged: int = 1) -> int:
    """A missing or unusable key is a usage error (2), like a missing file; damage is 1."""
    return EXIT_USAGE if isinstance(exc, (KeyRequiredError, KeyFileError, StorageError, NotRegularFileError)) else damaged


def _check_inputs(paths, *, missing_ok: bool = False, recursive: bool = False) -> None:
    """Every argument must stand for at least one log, and every log an index lists must exist:
    exit 2 saying what was looked for, instead of a silent success or a traceback. Only regular
    files are read: a FIFO, a device or a socket (or a link to one), as an argument, in a folder
    or listed by an index, is refused here, one line, exit 2 (``files.refuse_irregular``). An
    index written on another host (read beside itself: ``files.read_index``) is said once.
    ``recursive``: folders are searched all the way down (the audit's archives)."""
    from .reading.files import is_gtid_index_file, read_index, refuse_irregular
    from .reading.names import is_log_name
    from .reading import storage

    notes: list[str] = []
    for p in paths:
        if p == "-":
            continue
        try:
            refuse_irregular([p] if not os.path.isdir(p) else [])
            if recursive and os.path.isdir(p):
                found = [Path(r, f) for r, _d, fs in os.walk(p) for f in fs
                         if f.endswith(".index") or is_log_name(f)]
                refuse_irregular(found)
                for i in (f for f in found if f.name.endswith(".index") and f.is_file()):
                    listing = read_index(i)
                    refuse_irregular(listing.files)
                    notes += [listing.note()] if listing.elsewhere else []
            elif not storage.is_url(p):
                refuse_irregular(expand_paths([p], notes=notes))
        except NotRegularFileError as exc:
            _fail(str(exc), EXIT_USAGE)
    for n in dict.fromkeys(notes):  # once per index, not per file
        click.echo(f"binlogkit: note: {n}", err=True)
    for p in paths:
        if p == "-":
            continue
        files: list
        if storage.is_url(p):
            try:
                files = [u for u, _size in storage.find_logs(p)][:1] if recursive else expand_paths([p])
                if recursive and not files and storage.isdir(p):
                    files = [u for u in storage.expand(p) if u.endswith(".index")][:1]
            except BinlogError as exc:
                _fail(str(exc), EXIT_USAGE)
            if not files:
                _fail(f"no binlog or relay log in {p}: looked for *.index objects and objects named like NAME.000001 "
                      "(also .xz, .gz, .bz2)", EXIT_USAGE)
            for f in [] if missing_ok or recursive else files:
                if not storage.exists(f):
                    _fail(f"{f} is listed by the index in {p} but does not exist", EXIT_USAGE)
            continue
        if recursive and os.path.isdir(p):
            files = [Path(r, f) for r, _d, fs in os.walk(p) for f in fs
                     if f.endswith(".index") or is_log_name(f)][:1]
        else:
            files = expand_paths([p])
        if not files and is_gtid_index_file(Path(p)):
            click.echo(f"note: {p} is a MariaDB GTID index, not a binlog: skipped (verify and gtids read it)",
                       err=True)
            continue
        if not files:
            _fail(f"no binlog or relay log in {p}: looked for *.index files and files named like NAME.000001 "
                  "(also .xz, .gz, .bz2)", EXIT_USAGE)
        for f in [] if missing_ok else files:
            if not os.path.exists(f):
                _fail(f"{f} is listed by the index in {p} but does not exist", EXIT_USAGE)


def _quiet_broken_pipe() -> None:
    """The reader of our output went away (``| head``): stop quietly, it is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_OK)


def _event_json(ev, path: str | None) -> dict:
    raw = ev.raw
    doc = {"file": path, "offset": raw.offset, "end_offset": raw.end_offset, "type": raw.type_name,
           "type_code": raw.type_code, "name": ev.name, "timestamp": raw.timestamp,
           "server_id": raw.server_id, "event_size": raw.event_size, "log_pos": raw.log_pos,
           "flags": raw.flags, "checksum_ok": raw.checksum_ok, "fields": ev.fields}
    if raw.payload_offset is not None:  # inside a Transaction_payload: offset is the payload's end
        doc["end_offset"] = raw.offset
        doc["payload_offset"] = raw.payload_offset
        doc["inner_offset"] = raw.inner_offset
    return doc


@main.command()
@click.argument("files", nargs=-1, required=True, type=InputPath(exists=True, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event (JSON lines), stable keys.")
@click.option("--start-position", type=int, help="Skip events that start before this file offset.")
@click.option("--stop-position", type=int, help="Stop at the first event starting at or after this offset.")
@click.option("--start-datetime", help="Skip events older than this (ISO 8601; UTC unless a zone is given).")
@click.option("--stop-datetime", help="Stop at the first event at or after this time.")
@click.option("--type", "types", multiple=True, help="Only these event types (names or codes; repeat or comma-separate).")
@click.option("--include-gtids", help="Only transactions whose GTID is in this set (MySQL uuid:1-5; MariaDB d-s-n, d-s-a..b).")
@click.option("--exclude-gtids", help="Skip transactions whose GTID is in this set (same syntax).")
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
@key_options
def decode(files, as_json, start_position, stop_position, start_datetime, stop_datetime, types,
           include_gtids, exclude_gtids, no_verify, lenient, utc, verbose, column_types, keys) -> None:
    """Print the events of binlog / relay-log FILES (.index files and folders too) with exact offsets.

    Text output is modelled on mysqlbinlog: `# at OFFSET`, then the event's time, server id,
    end_log_pos, CRC32 and type with its key fields, then its SQL (queries, GTIDs, Xid
    COMMITs). Compressed archives (.xz, .gz, .bz2) are read as streams; `-` reads standard
    input. A torn tail or a damaged event is reported with its offset after everything before
    it was printed, and the exit code is 1. Events inside MySQL Transaction_payload events follow it, between
    `# Start/End of compressed events!`. With output redirected and stderr a terminal, progress
    shows on stderr.
    """
    _check_inputs(files)
    out = sys.stdout
    if verbose:  # row values carry non-UTF-8 bytes as surrogate escapes: write them back raw
        try:
            getattr(out, "reconfigure")(errors="surrogateescape")
        except (AttributeError, ValueError):
            pass
    damaged = 0
    try:
        from .rowvalues import parse_hints
        hints = parse_hints(column_types)
    except ValueError as exc:
        _fail(str(exc), EXIT_USAGE)
    # text goes out as bytes in ~1 MiB writes (row values are written as stored)
    sink = getattr(out, "buffer", None) if not as_json else None
    pending: list[bytes] = []
    size = 0

    def drain():
        nonlocal size
        assert sink is not None
        if pending:
            sink.write(b"".join(pending))
            pending.clear()
            size = 0
    try:
        # progress on stderr when it is a terminal and the output goes elsewhere (a file, a pipe)
        watch = sys.stderr.isatty() and not out.isatty()
        from .reading import fastdecode  # the C loop for plain files when no filter is asked for
        filters = (start_position, stop_position, start_datetime, stop_datetime, include_gtids, exclude_gtids)
        if keys is None and fastdecode.usable(utc=utc, filters=bool(types) or any(f is not None for f in filters)):
            items = fastdecode.decode_fast(files, verify=not no_verify, strict=not lenient, column_types=hints,
                                           rows=(verbose and ("text" if not as_json else True)), as_json=as_json,
                                           progress=(lambda name, total: Progress(total, f"decode {name}"))
                                           if watch else None)
        else:
            items = decode_files(files, start_position=start_position, stop_position=stop_position,
                                 start_datetime=_datetime(start_datetime), stop_datetime=_datetime(stop_datetime),
                                 types=_types(types), verify=not no_verify, strict=not lenient,
                                 include_gtids=_gtids(include_gtids), exclude_gtids=_gtids(exclude_gtids),
                                 rows=(verbose and ("text" if not as_json else True)), column_types=hints,
                                 payloads=True, keys=keys)
        in_payload = False  # text: the inner events of a Transaction_payload sit between markers
        prog, prog_file, count = None, None, 0
        for item in items:
            if type(item) is bytes:  # events fastdecode rendered, text or JSON lines
                if sink is None:
                    out.write(item.decode("utf-8", "surrogateescape"))
                    continue
                pending.append(item)
                size += len(item)
                if size > 1 << 20:
                    drain()
                continue
            count += 1
            if watch and not count & 1023 and not isinstance(item, Problem):
                if item.raw.file != prog_file:
                    if prog is not None:
                        prog.close()
                    prog_file = item.raw.file
                    name = prog_file or ""
                    plain = name and not name.endswith((".xz", ".gz", ".bz2")) and os.path.isfile(name)
                    prog = Progress(os.path.getsize(name) if plain else 0, f"decode {os.path.basename(name)}")
                if prog is not None:
                    prog(item.raw.offset)
            if isinstance(item, Problem):
                damaged = max(damaged, _exit_for(item.error))
                if sink is not None:
                    drain()
                    sink.flush()
                out.flush()
                click.echo(f"binlogkit: error: {item.error}", err=True)
                if isinstance(item.error, KeyRequiredError):
                    break  # a usage error: the next files need the same key
                continue
            if as_json:
                doc = _event_json(item, item.raw.file)
                if item.rows is not None:
                    from .rowvalues import rows_json
                    doc["table"] = f"{item.table.db}.{item.table.name}"
                    if item.table.primary_key is not None:  # from binlog_row_metadata=FULL
                        doc["primary_key"] = [item.table.column_name(i) for i in item.table.primary_key]
                    doc["rows"] = rows_json(item.rows, item.table)
                out.write(json.dumps(doc, default=str) + "\n")
            else:
                text = render_text(item, utc)
                inner = item.raw.payload_offset is not None
                if in_payload and not inner:
                    text = "# End of compressed events!\n" + text
                if item.raw.type_code == PAYLOAD:
                    text += "# Start of compressed events!\n"
                in_payload = (in_payload and inner) or item.raw.type_code == PAYLOAD  # markers in pairs
                if sink is None:  # a stream without a byte buffer: text as it is
                    out.write(text)
                    if item.rows_text is not None:
                        out.write(item.rows_text.decode("utf-8", "surrogateescape"))
                    continue
                data = text.encode("utf-8", "surrogateescape")
                pending.append(data)
                size += len(data)
                if item.rows_text is not None:
                    if len(item.rows_text) > 1 << 16:  # big images: written as they are, not copied again
                        drain()
                        sink.write(item.rows_text)
                        continue
                    pending.append(item.rows_text)
                    size += len(item.rows_text)
                if size > 1 << 20:
                    drain()
        if prog is not None:
            prog.close()
        if in_payload:
            if sink is None:
                out.write("# End of compressed events!\n")
            else:
                pending.append(b"# End of compressed events!\n")
        if sink is not None:
            drain()
            sink.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as exc:
        if sink is not None:  # what was decoded before the failure is still printed
            try:
                drain()
                sink.flush()
            except OSError:
                pass
        _fail(str(exc), EXIT_USAGE)
    sys.exit(int(damaged))


@main.command()
@click.argument("files", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
@key_options
def verify(files, as_json, keys) -> None:
    """Check framing and CRC32 of every event of FILES (.index files and folders too) at full speed.

    Prints one line per file: OK with its event count, or BAD with the first problem and its
    offset (torn event, checksum mismatch, impossible size, not a binlog, encrypted). Exit
    code 0 only when every file is sound.
    """
    from .reading.files import input_size, is_gtid_index_file
    from .gtid.index import index_summary, summary_line

    indexes = [f for f in files if is_gtid_index_file(Path(f))]
    files = [f for f in files if f not in indexes]
    bad = 0
    for f in indexes:  # MariaDB's <binlog>.idx: checked as what it is (pages, CRC32s, records)
        doc = index_summary(f)
        bad = max(bad, EXIT_DAMAGED if doc["problem"] else 0)
        if as_json:
            click.echo(json.dumps({**doc, "ok": doc["problem"] is None}))
        else:
            click.echo(f"{'BAD ' if doc['problem'] else 'OK  '} {f}  {summary_line(doc)}")
    if not files:
        sys.exit(bad)
    _check_inputs(files)

    for path in expand_paths(files):
        try:
            size = input_size(path)
        except OSError as exc:
            _fail(str(exc), EXIT_USAGE)
        prog = Progress(size, f"verify {path.name}")
        (res,) = verify_files([path], progress=prog, keys=keys)
        prog.close()
        p = res.problem
        bad = max(bad, 0 if p is None else _exit_for(p))
        if isinstance(p, KeyRequiredError) and not as_json:
            click.echo(f"binlogkit: error: {p}", err=True)  # one line: the next files need it too
            sys.exit(EXIT_USAGE)
        if as_json:
            click.echo(json.dumps({"file": str(path), "ok": res.ok, "size": res.size, "events": res.events,
                                   "checksummed": res.checksummed, "end_offset": res.end_offset,
                                   "encryption": res.encryption,
                                   "problem": None if p is None else {
                                       "kind": type(p).__name__, "offset": p.offset,
                                       "event_type": p.event_type, "message": p.message}}))
        elif p is None:
            click.echo(f"OK   {path}  {res.events} events, {res.checksummed} checksummed, {res.size} bytes"
                       + (f", encrypted ({res.encryption})" if res.encryption else ""))
        else:
            click.echo(f"BAD  {path}  offset {p.offset}: {p.message}"
                       + (f" ({p.event_type})" if p.event_type else "")
                       + f"; {res.events} whole events before it")
    sys.exit(bad)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--json", "as_json", is_flag=True, help="The whole summary as one JSON document.")
@click.option("--relay/--binlog", default=None, help="Force reading as relay logs or binlogs (default: detect).")
@click.option("--locate", "locate_gtid", metavar="D-S-N",
              help="MariaDB: where this GTID is, from the GTID index files (.idx) beside the binlogs alone.")
@key_options
def gtids(paths, as_json, relay, locate_gtid, keys) -> None:
    """The GTIDs that binlogs / relay logs contain: a MySQL GTID set or a MariaDB position.

    Per file: Previous_gtids (MySQL) or Gtid_list (MariaDB), the GTIDs the file adds, its first
    and last transaction and the incomplete ones. Overall: the set / position contained, and for
    MariaDB the GTIDs that strict mode would refuse (out of order or duplicated in a domain).
    Exit 1 when a file is damaged or a transaction is incomplete.
    """
    from .reading.files import is_gtid_index_file
    from .gtid.index import index_summary, locate, summary_line

    if locate_gtid is not None:  # the index files answer; the binlogs are not read
        try:
            d, _s, n = (int(x) for x in locate_gtid.split("-"))
        except ValueError:
            _fail(f"--locate {locate_gtid!r}: a MariaDB GTID is DOMAIN-SERVER-SEQ", EXIT_USAGE)
        logs = [str(p) for p in expand_paths([p for p in paths if not is_gtid_index_file(Path(p))])]
        hit = locate(logs, d, n)
        if as_json:
            click.echo(json.dumps({"gtid": locate_gtid, "file": hit and hit[0], "offset": hit and hit[1]}))
        elif hit is None:
            click.echo(f"{locate_gtid}: not placed by the GTID index files beside these binlogs")
        else:
            click.echo(f"{locate_gtid}: {hit[0]}, read from offset {hit[1]} (GTID index)")
        sys.exit(EXIT_OK if hit else EXIT_DAMAGED)
    indexes = [index_summary(p) for p in paths if is_gtid_index_file(Path(p))]
    paths = [p for p in paths if not is_gtid_index_file(Path(p))]
    if not paths:  # GTID index files only: what they hold, read without the binlogs
        if as_json:
            click.echo(json.dumps({"gtid_indexes": indexes}, indent=1))
        else:
            for doc in indexes:
                click.echo(f"{doc['file']}  {summary_line(doc)}")
        sys.exit(EXIT_DAMAGED if any(d["problem"] for d in indexes) else EXIT_OK)
    _check_inputs(paths)
    summary = gtid_summary(paths, relay=relay, keys=keys)
    if indexes:
        summary["gtid_indexes"] = indexes
    if summary.get("problem") and summary["problem"]["kind"] in ("KeyRequiredError", "KeyFileError") and not as_json:
        _fail(f"{summary['problem']['file']}, offset {summary['problem']['offset']}: {summary['problem']['message']}",
              EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        for f in summary["files"]:
            start = f["previous_gtids"] if f["previous_gtids"] is not None else (
                ",".join(f["gtid_list"]) if f["gtid_list"] is not None else "-")
            click.echo(f"{f['file']}  {'relay' if f['relay'] else 'binlog'}  {f['transactions']} trx")
            click.echo(f"  at start : {start or '(empty)'}")
            click.echo(f"  added    : {f['gtids_added'] or '-'}")
            click.echo(f"  first/last: {f['first_transaction']} / {f['last_transaction']}")
            if f["incomplete"]:
                click.echo(f"  incomplete: {', '.join(f['incomplete'])}")
            if f["problem"]:
                click.echo(f"  DAMAGED at offset {f['problem_offset']}: {f['problem']}")
        if "mysql" in summary:
            click.echo(f"MySQL GTID set contained: {summary['mysql']['contained'] or '(empty)'}")
        if "mariadb" in summary:
            m = summary["mariadb"]
            click.echo(f"MariaDB GTID position after these files: {m['position'] or '(empty)'}")
            if m["out_of_order"]:
                click.echo(f"  {len(m['out_of_order'])} GTIDs out of order or duplicated (gtid_strict_mode would stop): "
                           + ", ".join(f"{x['gtid']} after {x['after']}" for x in m["out_of_order"][:10]))
        if summary["incomplete"]:
            click.echo(f"incomplete transactions: {', '.join(map(str, summary['incomplete']))}")
        for doc in indexes:
            click.echo(f"{doc['file']}  {summary_line(doc)}")
    if summary.get("problem") and summary["problem"]["kind"] in ("KeyRequiredError", "KeyFileError"):
        click.echo(f"binlogkit: error: {summary['problem']['file']}, offset {summary['problem']['offset']}: "
                   f"{summary['problem']['message']}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_DAMAGED if summary.get("problem") or summary["incomplete"] or any(d["problem"] for d in indexes)
             else EXIT_OK)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per transaction.")
@click.option("--gtids", "gtid_filter", help="Only these GTIDs (MySQL set, or MariaDB d-s-n / d-s-a..b).")
@click.option("--relay/--binlog", default=None, help="Force reading as relay logs or binlogs (default: detect).")
@click.option("--source-file", help="Source binlog name for relay logs whose Rotate was purged (from relay-log.info).")
@click.option("--incomplete", is_flag=True, help="Only transactions that are not complete.")
@key_options
def transactions(paths, as_json, gtid_filter, relay, source_file, incomplete, keys) -> None:
    """One line per transaction: GTID, where it starts and ends in the files and at the source
    (file:end_log_pos), its times, events, bytes, terminator, and whether it is complete.

    Row bodies are never decoded; only the events that carry boundaries are. Transactions that
    span relay-log rotations are followed across files. Exit 1 when a file is damaged.
    """
    _check_inputs(paths)
    damaged = 0
    if not as_json:
        click.echo(f"{'gtid':<44} {'start':<28} {'end':<28} {'source end':<26} {'events':>6} {'bytes':>10}  state")
    problems: list[BinlogError] = []  # a damaged file is reported, and the next files are read on
    try:
        for t in list_transactions(paths, gtids=gtid_filter, relay=relay, source_file=source_file, keys=keys,
                                   problems=problems):
            if incomplete and t.complete:
                continue
            if as_json:
                click.echo(json.dumps(t.to_json()))
            else:
                start = f"{Path(t.start_file).name}:{t.start_offset}"
                end = f"{Path(t.end_file).name}:{t.end_offset}" if t.end_file else "-"
                src = f"{t.source_file}:{t.source_end}" if t.source_file else (str(t.source_end) if t.source_end else "-")
                state = t.terminator if t.complete else "INCOMPLETE"
                if t.repeats:  # a source range the relay logs held already: applied twice
                    r = t.repeats
                    state += f"  REPEATS {r['source_file']}:{r['start']}-{r['end']}"
                click.echo(f"{t.gtid or '(' + t.kind + ')':<44} {start:<28} {end:<28} {src:<26} {t.events:>6} {t.bytes:>10}  {state}")
    except BinlogError as exc:
        problems.append(exc)
    except BrokenPipeError:
        _quiet_broken_pipe()
    for problem in problems:
        damaged = max(damaged, _exit_for(problem))
        click.echo(f"binlogkit: error: {problem}", err=True)
    sys.exit(int(damaged))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Findings and summary as one JSON document.")
@click.option("--output", "output_dir", type=OutputPath(file_okay=False),
              help="Also write findings.json, findings.parquet (with pyarrow), summary.json and report.html into "
                   "this folder, or under this URL (s3://bucket/prefix: each object appears whole or not at all).")
@click.option("--jobs", type=int, help="Worker processes (default: one per core).")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="local: a process pool on this machine; spark: the spark-submit job in Spark local mode "
                   "(needs the 'spark' extra: pyspark, fsspec, pyarrow).")
@click.option("--live", "--may-be-active", "live", is_flag=True,
              help="A server may still be writing the last file of a series: its torn tail is a warning, "
                   "not an error.")
@click.option("--max-findings", type=click.IntRange(min=0),
              help="Show only the first N findings (the counts cover all; --output writes all); 0: all. "
                   "Default: all (local), 1000 (spark).")
@click.option("--max-series", type=click.IntRange(min=0),
              help="Show only the first N series' records (--output writes all); 0: all. "
                   "Default: all (local), 1000 (spark).")
@click.option("--report", "report", type=OutputPath(dir_okay=False),
              help="Also write a self-contained HTML page: a timeline of each series with its gaps and damage, "
                   "GTID coverage, the tables (opens offline). A path or a URL (s3://bucket/report.html).")
@key_options
def audit(paths, as_json, output_dir, jobs, engine, live, max_findings, max_series, report, keys) -> None:
    """Audit binlog / relay-log archives for anything missing, doubled or damaged.

    PATHS are files or folders (searched recursively for NAME.NNNNNN files, compressed or not).
    Files are grouped into series (one server's binlogs, one connection's relay logs) and checked
    for missing files, broken Rotate and position chains, GTID gaps, duplicates and disorder,
    Incident events, partial transactions, torn events, checksum failures, encrypted files
    without their key (an error: they were not checked) or unknown content. A torn tail on the
    last file of a series may be a live server's: it fails the audit unless --live says the
    series may be active. Exit codes: 0 clean, 1 findings of severity error, 2 usage or I/O error.
    """
    _check_inputs(paths, missing_ok=True, recursive=True)  # a missing file is a finding
    from .audit import run_local

    if engine == "spark":
        need("pyspark", "audit --engine spark")
        from .audit import job

        spark = job.session(f"local[{jobs}]" if jobs else None)
        try:
            spec = keys.spec if keys is not None else None
            key_args = [a for opt, v in (("--key-file", spec and spec.key_file),
                                          ("--key-file-secret-file", spec and spec.secret_file),
                                          ("--cipher", spec and spec.cipher),
                                          ("--keyring-file", spec and spec.keyring_file)) if v for a in (opt, v)]
            rc = job.main(spark, list(paths) + (["--output", output_dir] if output_dir else [])
                          + (["--json"] if as_json else []) + (["--live"] if live else [])
                          + (["--max-findings", str(max_findings)] if max_findings is not None else [])
                          + (["--max-series", str(max_series)] if max_series is not None else [])
                          + (["--report", report] if report else []) + key_args)
        finally:
            spark.stop()
        sys.exit(rc)
    show = sys.stderr.isatty()

    def prog(done: int, total: int) -> None:
        sys.stderr.write(f"\raudit: {done}/{total} files")
        sys.stderr.flush()
    try:
        result = run_local(paths, jobs=jobs, live=live, progress=prog if show else None, keys=keys)
    except OSError as exc:
        _fail(str(exc), EXIT_USAGE)
    if show:
        sys.stderr.write("\n")
    from .reading import storage

    if output_dir:
        try:
            if storage.is_url(output_dir):
                _write_audit_url(output_dir, result)
            else:
                _write_audit(Path(output_dir), result)
        except (OSError, BinlogError) as exc:
            _fail(f"--output {output_dir}: {exc}", EXIT_USAGE)
    for page in ([storage.join(output_dir, "report.html")] if output_dir else []) + ([report] if report else []):
        from .report import render as render_report, write as write_report

        try:  # the whole result, before any --max-* limit
            if storage.is_url(page):
                storage.write_atomic(page, render_report(result).encode("utf-8"))
            else:
                write_report(result, page)
        except (OSError, BinlogError) as exc:
            _fail(f"report {page}: {exc}", EXIT_USAGE)
    if max_findings or max_series:  # 0: all
        from .audit.merge import limit

        result = limit(result, max_findings=max_findings or None, max_series=max_series or None)
    if as_json:
        click.echo(json.dumps(result, indent=1, default=str))
    else:
        from .audit.render import lines

        for line in lines(result):  # streamed: every finding, each wrapped, none cut
            click.echo(line)
    sys.exit(EXIT_DAMAGED if result["counts"]["error"] else EXIT_OK)


def _audit_files(result: dict) -> list[tuple[str, bytes]]:
    """findings.json, findings.parquet (when pyarrow is there) and summary.json, as bytes."""
    out = [("findings.json", json.dumps(result["findings"], indent=1).encode())]
    try:  # Parquet as well when pyarrow is there (the 'spark' extra installs it)
        pa = need("pyarrow", "findings.parquet")
        pq = need("pyarrow.parquet", "findings.parquet")
    except MissingDependency as exc:  # the JSON files are written all the same: say so, go on
        click.echo(f"binlogkit: note: findings.parquet not written: {exc}", err=True)
    else:
        from .audit.merge import FINDING_COLUMNS

        buf = pa.BufferOutputStream()
        pq.write_table(pa.table({c: [f[c] for f in result["findings"]] for c in FINDING_COLUMNS}), buf)
        out.append(("findings.parquet", buf.getvalue().to_pybytes()))
    out.append(("summary.json", json.dumps({k: v for k, v in result.items() if k != "findings"}, indent=1).encode()))
    return out


def _write_audit_url(url: str, result: dict) -> None:
    """The same files as objects under ``url``, each written whole or not at all."""
    from .reading import storage

    for name, data in _audit_files(result):
        storage.write_atomic(storage.join(url, name), data)


def _write_audit(out: Path, result: dict) -> None:
    """findings.json, findings.parquet (with pyarrow) and summary.json, each replaced atomically
    through safeio (the folder locked, no writing through links)."""
    from .safeio import SafeDir

    out.mkdir(parents=True, exist_ok=True)
    files = _audit_files(result)
    with SafeDir(out) as d, d.locked():
        for name, data in files:
            d.replace(name, data, new_mode=0o644)


@main.command()
@click.argument("archive", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--from-gtid", metavar="POS", help="The backup's GTID state (MariaDB gtid_binlog_pos 0-1-42,...; MySQL gtid_executed).")
@click.option("--from-file", metavar="NAME", help="The backup's binlog file (with --from-position).")
@click.option("--from-position", metavar="N", type=int, help="The backup's position in --from-file.")
@click.option("--backup-info", type=click.Path(exists=True, dir_okay=False),
              help="xtrabackup_binlog_info / mariadb_backup_binlog_info, or a dump made with --master-data.")
@click.option("--until-datetime", metavar="T", help="Replay what committed before T (ISO 8601; UTC unless a zone is given).")
@click.option("--until-gtid", metavar="SET", help="Replay up to and including this GTID state.")
@click.option("--until-position", metavar="NAME:N", help="Replay up to this binlog position (exclusive).")
@click.option("--json", "as_json", is_flag=True, help="The plan as one JSON document.")
@click.option("--jobs", type=int, help="Worker processes for the files between start and stop (default: one per core).")
@key_options
def pitr(archive, from_gtid, from_file, from_position, backup_info, until_datetime, until_gtid, until_position,
         as_json, jobs, keys) -> None:
    """Plan a point-in-time recovery from a binlog archive.

    From where a backup stands (--from-gtid, --from-file/--from-position, or --backup-info) to a
    target (--until-datetime, --until-gtid or --until-position), read from the ARCHIVE alone:
    whether it is reachable, the ordered files with exact start and stop positions, the
    transactions and bytes to replay, every gap, damaged or partial transaction, incident or
    duplicate on the way (file and offset), and the replay command (mariadb-binlog ... | mariadb,
    or mysqlbinlog ... | mysql) with no connection options. Nothing is run or written.
    An encrypted archive is read with --key-file / --keyring-file (the replay tool then needs a
    server to decrypt: mariadb-binlog --read-from-remote-server). Exit codes: 0 reachable, 1 not
    reachable (the problems say why), 2 usage (and an encrypted archive without its key).
    """
    from .pitr import From, PitrUsage, Until, plan_pitr, read_backup_info
    from .pitr.render import lines

    starts = [x for x in (from_gtid, from_file or from_position is not None or None, backup_info) if x]
    if len(starts) != 1:
        _fail("give exactly one of --from-gtid, --from-file/--from-position, --backup-info", EXIT_USAGE)
    if (from_file is None) != (from_position is None):
        _fail("--from-file and --from-position go together", EXIT_USAGE)
    if sum(x is not None for x in (until_datetime, until_gtid, until_position)) != 1:
        _fail("give exactly one of --until-datetime, --until-gtid, --until-position", EXIT_USAGE)
    _check_inputs(archive, missing_ok=True, recursive=True)
    try:
        if backup_info:
            b = read_backup_info(backup_info)
            frm = From(b.file, b.position, b.gtids, "backup-info", b.to_json())
        elif from_gtid:
            frm = From(gtids=from_gtid, origin="gtid")
        else:
            frm = From(from_file, from_position, origin="position")
        if until_datetime:
            until_at = _datetime(until_datetime)
            assert until_at is not None  # a non-empty option always parses (or exits 2)
            until = Until(timestamp=int(until_at.timestamp()))
        elif until_gtid:
            until = Until(gtids=until_gtid)
        else:
            name, _, pos = until_position.rpartition(":")
            if not name or not pos.isdigit():
                _fail(f"--until-position {until_position!r}: expected NAME:N, e.g. mariadb-bin.000007:1234", EXIT_USAGE)
            until = Until(file=name, position=int(pos))
        doc = plan_pitr(archive, frm, until, jobs=jobs, keys=keys)
    except click.BadParameter as exc:
        _fail(exc.format_message(), EXIT_USAGE)
    except (PitrUsage, BinlogError) as exc:  # GtidError: a GTID text that does not parse, etc.
        _fail(str(exc), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(doc, indent=1, default=str))
    else:
        click.echo("\n".join(lines(doc)))
    sys.exit(EXIT_OK if doc["reachable"] else EXIT_DAMAGED)


@main.command()
@click.argument("primary", type=InputPath(exists=True))
@click.argument("replicas", nargs=-1, required=True, type=InputPath(exists=True))
@click.option("--json", "as_json", is_flag=True, help="The comparison as JSON.")
@key_options
def compare(primary, replicas, as_json, keys) -> None:
    """Compare a primary's binlogs with replicas' binlogs or relay logs, by GTID.

    PRIMARY and each of REPLICAS is a folder, an index file or a file. Prints the last
    transaction all sides share, the primary's transactions no replica received (after a
    semisync AFTER_SYNC crash: written but never acknowledged), and each replica's errant
    transactions (ones the primary lacks). Exit 1 when anything differs.
    """
    _check_inputs((primary, *replicas))
    from .compare import compare as run_compare

    def expand(p):
        from .api import expand_paths
        return expand_paths([p])

    try:
        res = run_compare(expand(primary), [expand(r) for r in replicas], keys=keys)
    except BinlogError as exc:  # a side that cannot be decrypted
        _fail(str(exc), _exit_for(exc))
    except OSError as exc:
        _fail(str(exc), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(res, indent=1))
    else:
        click.echo(f"primary: {res['primary']['transactions']} transactions, last {res['primary']['last'] or '-'}")
        click.echo("last transaction every side has: "
                   + (res["last_common"] or "none in common (no transaction of the primary is on every replica)"))
        un = res["unacknowledged"]
        where = (f" ({un[0]['file']}@{un[0]['offset']})" if len(un) == 1 else
                 f" ({len(un)}, from {un[0]['file']}@{un[0]['offset']})" if un else "")
        click.echo(f"on the primary only (un-acknowledged): {res['unacknowledged_ranges'] or 'none'}{where}")
        for r in res["replicas"]:  # GTID sets as ranges (gtid.ranges_text): one short line, not one per GTID
            missing = f"; missing: {r['missing_ranges']} ({r['missing_count']})" if r["missing_count"] else ""
            click.echo(f"replica {r['paths'][0] if r['paths'] else '?'}: {r['transactions']} transactions; errant: "
                       + (f"{r['errant_ranges']} ({r['errant_count']})" if r["errant"] else "none") + missing)
        if res["primary"]["incomplete"]:
            click.echo("primary's incomplete tail: " + ", ".join(str(i["gtid"]) for i in res["primary"]["incomplete"]))
    damage = [p for p in [res["primary"]["problem"]] + [r["problem"] for r in res["replicas"]] if p]
    for line in (x for p in damage for x in p.splitlines()):  # a damaged file: what it held is unknown
        click.echo(f"binlogkit: error: {line}", err=True)
    differs = res["unacknowledged"] or any(r["errant"] for r in res["replicas"]) or res["primary"]["incomplete"]
    sys.exit(EXIT_DAMAGED if differs or damage else EXIT_OK)


@main.command()
@click.argument("binlog_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--code", default="LOST_EVENTS", show_default=True,
              help="LOST_EVENTS, NEW_INCIDENT, or a number (replicas stop on any incident).")
@click.option("--message", default="", help="Why (at most 255 bytes); replicas report it.")
@click.option("--index", type=click.Path(exists=True, dir_okay=False), help="The binlog index, when the folder holds several.")
@click.option("--backup-dir", type=click.Path(file_okay=False),
              help="Where to keep the verified copy of the binlog before it changes (default: a new folder "
                   "beside BINLOG_DIR, BINLOG_DIR.binlogkit-incident-TIME-RANDOM).")
@click.option("--follow-links", is_flag=True,
              help="When the last binlog is a symbolic link, change the file it points to (default: refuse).")
@click.option("--gtid", default="auto", show_default=True,
              help="MySQL: the GTID of the incident's own transaction: auto (the server's uuid, from auto.cnf or "
                   "its own transactions, and the next GNO after the file's last), UUID:GNO, or none (no Gtid "
                   "event: a GTID auto-position replica that holds every GTID of the file never receives it).")
@key_options
def incident(binlog_dir, code, message, index, backup_dir, follow_links, gtid, keys) -> None:
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
    from .writer import record_incident

    cleaned: list[str] = []
    try:
        try:
            done = record_incident(binlog_dir, code=code, message=message, index=index, backup_dir=backup_dir,
                                   follow_links=follow_links, keys=keys, cleaned=cleaned, gtid=gtid)
        finally:  # said even when the run is then refused
            _say_leftovers(cleaned)
    except KeyError as exc:
        _fail(f"refused: unknown incident code {exc}", EXIT_USAGE)
    except WriteRefused as exc:
        _fail(f"refused: {exc}", EXIT_USAGE)
    except PartialWrite as exc:
        _fail(str(exc), EXIT_PARTIAL)
    except (BinlogError, OSError) as exc:
        _fail(str(exc), EXIT_USAGE)
    if done.already:
        click.echo(f"{Path(done.file).name}: already ends with an Incident at {done.offsets[0]} and a Rotate to "
                   f"{done.next_file} at {done.offsets[1]}; nothing to do")
        return
    if done.gtid is not None:  # MySQL: Gtid (or Anonymous_gtid) + Incident, a transaction of its own
        click.echo(f"{Path(done.file).name}: {'Anonymous_gtid' if done.gtid == 'ANONYMOUS' else 'Gtid ' + done.gtid} "
                   f"at {done.offsets[0]}, Incident at {done.offsets[1]}, Rotate to {done.next_file} at "
                   f"{done.offsets[2]}; the file now ends at {done.new_size}")
        if done.gtid != "ANONYMOUS":
            click.echo(f"replicas stop there (MySQL 9.7: error 13119 ER_REPLICA_INCIDENT; older servers 1590); to resume past it: "
                       f"STOP REPLICA; SET GTID_NEXT='{done.gtid}'; BEGIN; COMMIT; SET GTID_NEXT='AUTOMATIC'; "
                       "START REPLICA;")
    else:
        click.echo(f"{Path(done.file).name}: Incident at {done.offsets[0]}, Rotate to {done.next_file} at "
                   f"{done.offsets[1]}; the file now ends at {done.new_size}")
    click.echo(f"the file as it was is in {done.backup}", err=True)


@main.command()
@click.argument("relaydir", type=click.Path(exists=True, file_okay=False))
@click.option("--apply", "do_apply", is_flag=True, help="Carry the plan out (backup first, atomic rewrites). Default: dry run.")
@click.option("--json", "as_json", is_flag=True, help="The plan as JSON.")
@click.option("--connection", help="MariaDB multi-source connection name (master-NAME.info, relay-log-NAME.info).")
@click.option("--mode", type=click.Choice(["position", "gtid"]), help="Override the mode read from master.info.")
@click.option("--relay-index", "relay_base", help="Relay log base name (e.g. relay-bin) when it cannot be guessed.")
@click.option("--backup-dir", type=click.Path(file_okay=False), help="Where to keep the copies (default: beside RELAYDIR, RELAYDIR.binlogkit-recover-TIME).")
@click.option("--applied-gtids", help="What the replica committed (MariaDB gtid_slave_pos / MySQL gtid_executed), "
              "to move relay-log.info past commits it did not record.")
@click.option("--replica-binlog", type=click.Path(exists=True, dir_okay=False),
              help="The replica's own binlog index (log_slave_updates), for the same check; found in RELAYDIR by default.")
@click.option("--binlog", "is_binlog", is_flag=True,
              help="RELAYDIR is a crashed former primary's binlog folder: cut what no replica received.")
@click.option("--keep-through", help="With --binlog: the GTIDs the surviving replica holds (position or set).")
@click.option("--replica", "replica_dir", type=click.Path(exists=True, file_okay=False),
              help="With --binlog: the surviving replica's relay directory, to compute --keep-through.")
@click.option("--follow-links", is_flag=True,
              help="Relay logs / info files that are symbolic links: change the files they point to "
                   "(default: refuse, naming the link).")
@key_options
def recover(relaydir, do_apply, as_json, connection, mode, relay_base, backup_dir, applied_gtids, replica_binlog,
            is_binlog, keep_through, replica_dir, follow_links, keys) -> None:
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
    from .safeio import SafeDir

    with contextlib.ExitStack() as stack:
        held = None
        if do_apply:  # the lock is held from before the plan is made until the last write
            try:
                d = stack.enter_context(SafeDir(relaydir))
                stack.enter_context(d.locked())
            except WriteRefused as exc:
                _fail(f"refused: {exc}", EXIT_USAGE)
            from .recover.apply import remove_leftovers

            held = d
            _say_leftovers(remove_leftovers(d))  # before planning: the plan sees the folder as it is
        _recover(relaydir, do_apply, as_json, connection, mode, relay_base, backup_dir, applied_gtids,
                 replica_binlog, is_binlog, keep_through, replica_dir, follow_links, held, keys)


def _say_leftovers(gone: list[str]) -> None:
    """One stderr line naming what a writer removed of an interrupted earlier run."""
    if gone:
        from .safeio import leftovers_line

        click.echo(leftovers_line(gone), err=True)


def _recover(relaydir, do_apply, as_json, connection, mode, relay_base, backup_dir, applied_gtids, replica_binlog,
             is_binlog, keep_through, replica_dir, follow_links, held, keys=None) -> None:
    from .recover import RecoveryRefused, apply_plan, plan_recovery
    from .recover.primary import plan_binlog_recovery

    try:
        if is_binlog:
            plan = plan_binlog_recovery(relaydir, keep_through=keep_through, replica=replica_dir, keys=keys)
        else:
            plan = plan_recovery(relaydir, connection=connection, mode=mode,
                                 relay_base=relay_base.removesuffix(".index") if relay_base else None,
                                 applied_gtids=applied_gtids, replica_binlog=replica_binlog, keys=keys)
    except (BinlogError, OSError) as exc:
        _fail(str(exc), EXIT_USAGE)
    if as_json:
        click.echo(json.dumps(plan.to_json(), indent=1))
    else:
        _print_plan(plan)
    if plan.refuse:
        click.echo(f"binlogkit: refused: {plan.refuse}", err=True)
        sys.exit(EXIT_USAGE)
    if plan.nothing_to_do:
        sys.exit(EXIT_DAMAGED if plan.position_unreachable else EXIT_OK)
    if not do_apply:
        if not as_json:
            click.echo("dry run: nothing was changed; run again with --apply to repair")
        sys.exit(EXIT_DAMAGED)
    try:
        backup = apply_plan(plan, backup_dir=backup_dir, follow_links=follow_links, held=held)
    except RecoveryRefused as exc:
        _fail(f"refused: {exc}", EXIT_USAGE)
    except PartialWrite as exc:
        _fail(str(exc), EXIT_PARTIAL)
    except (BinlogError, OSError) as exc:
        _fail(str(exc), EXIT_USAGE)
    what = "finished the interrupted repair" if plan.resume else "applied"
    click.echo(f"{what}; the files changed were copied to {backup} and verified (journal.json says what was done)",
               err=as_json)
    if plan.position_unreachable:  # a script must not restart the replica in position mode blindly
        click.echo("binlogkit: warning: the replica cannot resume in file/position mode: see the warning above",
                   err=True)
        sys.exit(EXIT_DAMAGED)
    sys.exit(EXIT_OK)


def _print_mysql_answer(plan) -> None:
    """MySQL 8.0.23+ (metadata in tables): what to run, per mode (recover.plan.mysql_answer)."""
    a = plan.mysql
    gtid = a["partial_transaction"]
    ns = plan.next_source
    cut = next((t for t in plan.truncate), None)
    mode = plan.mode
    if mode in ("gtid", "unknown"):
        click.echo("\nMySQL, SOURCE_AUTO_POSITION=1 (relay_log_recovery ON or OFF): run START REPLICA; nothing else.")
        if gtid:
            click.echo(f"  MySQL drops the partial transaction {gtid} at startup (relay_log_recovery=OFF: its relay log "
                       f"sanitizer cuts {cut['file'] + ':' + str(cut['new_size']) if cut else 'the relay log'}, the "
                       "cut planned below; ON: the relay logs are discarded) and fetches it whole by GTID.")
        click.echo(f"  check after the restart, before START REPLICA: Retrieved_Gtid_Set is {a['retrieved_gtids'] or '-'}"
                   + (f" (without {gtid})" if gtid else "") + "; after it: Executed_Gtid_Set holds "
                   + (f"{gtid} and " if gtid else "") + "the primary's gtid_executed, tables equal.")
        click.echo("  not CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE=..., SOURCE_LOG_POS=...: refused while "
                   "SOURCE_AUTO_POSITION=1 (error 1776).")
    if mode in ("position", "unknown"):
        click.echo("\nMySQL, SOURCE_AUTO_POSITION=0 (file/position):")
        click.echo("  relay_log_recovery=ON: run START REPLICA; MySQL discards the relay logs and fetches from the "
                   "applier's position.")
        where = f"{ns['file']}:{ns['position']}" if ns and ns.get("file") else "the partial transaction's start"
        click.echo(f"  relay_log_recovery=OFF: MySQL 9.7 cuts the relay log itself and resumes the receiver at {where} "
                   "(Read_Source_Log_Pos after the restart): START REPLICA.")
        if a["file_position_statement"]:
            why = (f"the replica committed every complete transaction of the relay logs (up to {a['applied_prefix']}): "
                   "purging them loses nothing" if a["all_applied"] else
                   "the relay logs hold transactions not applied yet: RELAY_LOG_FILE/POS keep them and say where the "
                   "applier resumes" if a["applier_known"] else
                   "how far the applier got is in mysql.slave_relay_log_info: take Relay_Log_File and Relay_Log_Pos "
                   "from SHOW REPLICA STATUS, or give --applied-gtids (its gtid_executed) and the plan fills them in")
            click.echo("  a server that does not (Read_Source_Log_Pos elsewhere), after recover --apply, started with "
                       "skip_replica_start:")
            click.echo(f"    STOP REPLICA; {a['file_position_statement']} START REPLICA;")
            click.echo(f"    ({why})")


def _print_plan(plan) -> None:
    ns = plan.next_source
    binlog = plan.mode == "binlog"
    click.echo(f"{'binlog folder' if binlog else 'relay directory':<15} : {plan.relay_dir}"
               + (f"  (connection {plan.connection})" if plan.connection else ""))
    click.echo(f"mode            : {'crashed former primary' if binlog else plan.mode}"
               + (f"   flavor: {plan.flavor}" if plan.flavor else ""))
    if plan.problem:
        p = plan.problem
        click.echo(f"problem         : {p['kind']} event at {p['file']}:{p['offset']} ({p['message']})")
    if plan.partial_transaction and "cut" in plan.partial_transaction:
        for c in plan.partial_transaction["cut"]:
            click.echo(f"cut trx         : {c['gtid'] or '-'} at {c['file']}:{c['offset']} ({c['reason']})")
    elif plan.partial_transaction:
        p = plan.partial_transaction
        click.echo(f"partial trx     : {p['gtid'] or '-'} from {p['file']}:{p['offset']} (source {p['source_file']}:{p['source_start']})")
    click.echo(f"last complete   : {plan.last_complete_gtid or '-'}")
    if not binlog:
        click.echo(("next source     : " + (f"{ns['file']}:{ns['position']}"
                                             + ("  (past 4 GiB)" if ns['position'] and ns['position'] >= 1 << 32 else "")
                                             if ns['file'] else
                                             f"position {ns['position']} of a source file whose name is unknown"))
                   if ns else "next source     : unknown")
    click.echo(f"{'GTIDs kept' if binlog else 'retrieved GTIDs':<15} : {plan.retrieved_gtids or '-'}")
    if plan.metadata == "tables":
        click.echo("metadata        : in tables (mysql.slave_master_info, mysql.slave_relay_log_info): no info "
                   "file to write")
    rows = [("truncate", t["file"], f"{t['size']} -> {t['new_size']}", t["reason"]) for t in plan.truncate]
    rows += [("remove", r["file"], "", r["reason"]) for r in plan.remove]
    if plan.index is not None:
        rows.append(("rewrite", plan.relay_index, f"{len(plan.index)} files", "index"))
    if plan.master_info:
        rows.append(("rewrite", "master.info", f"{plan.master_info['file']}:{plan.master_info['position']}", "next source position"))
    if plan.relay_log_info:
        v = plan.relay_log_info
        rows.append(("rewrite", "relay-log.info", f"{v['relay_log_file']}:{v['relay_log_pos']}", "SQL thread position"))
    if plan.change_source_sql:
        click.echo(f"run on the replica: {plan.change_source_sql}")
    if plan.mysql:
        _print_mysql_answer(plan)
    if rows:
        click.echo(f"\n{'action':<9} {'file':<22} {'change':<34} reason")
        for a, f, c, r in rows:
            click.echo(f"{a:<9} {f:<22} {c:<34} {r}")
    elif not plan.refuse:
        click.echo("\nnothing to do")
    for w in plan.warnings:
        click.echo(f"warning: {w}")


@main.command()
@click.argument("binlogs", nargs=-1, required=True)
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="The file to write: a binlog (or SQL with --sql). Never replaced without --force.")
@click.option("--start-position", type=int, help="In the first file: undo transactions starting here or later.")
@click.option("--stop-position", type=int, help="In the last file: undo transactions ending here or before.")
@click.option("--start-datetime", help="Undo transactions that began at or after this time (UTC unless a zone is given).")
@click.option("--stop-datetime", help="... and before this time.")
@click.option("--include-gtids", "include_gtids", help="Undo the transactions of this GTID set (MySQL uuid:1-5, MariaDB 0-1-5,0-1-7..9).")
@click.option("--database", help="Undo only the changes to tables of this database.")
@click.option("--table", "table", help="Undo only the changes to this table (DB.TABLE).")
@click.option("--sql", "as_sql", is_flag=True,
              help="Write the undo as SQL statements (needs binlog_row_metadata=FULL: column names).")
@click.option("--skip-statements", is_flag=True,
              help="Leave statement events (DDL, statement-format DML) in the range out instead of refusing.")
@click.option("--force", is_flag=True, help="Replace the output file when it exists.")
@click.option("--backup-dir", type=click.Path(file_okay=False),
              help="With --force: where to keep the verified copy of the output it replaces (default: a new folder "
                   "beside the output's folder, OUTDIR.binlogkit-flashback-TIME-RANDOM).")
@click.option("--no-check-later", "no_check_later", is_flag=True,
              help="Do not read the inputs after the range for later changes to the rows the undo puts back.")
@click.option("--json", "as_json", is_flag=True, help="The summary as one JSON object.")
@key_options
def flashback(binlogs, output, start_position, stop_position, start_datetime, stop_datetime, include_gtids,
              database, table, as_sql, skip_statements, force, backup_dir, no_check_later, as_json, keys) -> None:
    """Undo a range of row changes: write a binlog whose transactions undo the selected ones,
    last first (inserts deleted, deletes inserted, updates reversed). Replay it with the server's
    own tool: `mariadb-binlog OUTPUT | mariadb`, `mysqlbinlog --skip-gtids OUTPUT | mysql`; `binlogkit decode -v
    OUTPUT` shows what it will do. Needs row-based binlogs with FULL row images. BINLOGS are
    binlogs or relay logs (files, .index files, folders, archives), all from one server version.

    Refuses (exit 2, nothing written) statements in the range, named (DDL, statement-format
    DML; --skip-statements leaves them out), MINIMAL/NOBLOB images, a range that cuts a
    transaction in two, an existing output without --force (with it: a verified copy first),
    a link as the output, an output that is one of the inputs. Exit 1: damaged input (nothing
    written).

    Then it reads the inputs after the range: a later transaction that updated or deleted a
    row the undo puts back is named in a warning (the replay would overwrite that later change,
    or stop on it in a table without a key); exit 0, the file is written.

    Encrypted inputs are read with --key-file (MariaDB) or --keyring-file (MySQL), an event at a
    time (no decrypted copy on disk); without the key: exit 2. The output is not encrypted.
    """
    from .flashback import FlashbackRefused, flashback as run

    if sum(x is not None for x in (start_position or stop_position, start_datetime or stop_datetime,
                                    include_gtids)) > 1:
        _fail("refused: choose one range: positions, date-times or --include-gtids", EXIT_USAGE)
    _check_inputs(binlogs)
    cleaned: list[str] = []
    try:
        try:
            res = run(binlogs, output, start_position=start_position, stop_position=stop_position,
                      start_datetime=_datetime(start_datetime), stop_datetime=_datetime(stop_datetime),
                      gtids=_gtids(include_gtids), database=database, table=table, skip_statements=skip_statements,
                      sql=as_sql, force=force, check_later=not no_check_later, backup_dir=backup_dir, keys=keys,
                      cleaned=cleaned)
        finally:  # said even when the run is then refused
            _say_leftovers(cleaned)
    except (FlashbackRefused, WriteRefused) as exc:
        _fail(f"refused: {exc}", EXIT_USAGE)
    except BinlogError as exc:  # damaged input (1); an encrypted one without its key (2)
        _fail(str(exc), _exit_for(exc, EXIT_DAMAGED))
    if as_json:
        click.echo(json.dumps(res.to_json()))
        return
    gt = f" ({res.first_gtid} .. {res.last_gtid})" if res.first_gtid else ""
    click.echo(f"{output}: {res.undone} undo transaction(s) of {res.transactions} selected{gt}, "
               f"{res.rows} row(s), {res.events} events, {res.bytes} bytes")
    for st in res.skipped:
        where = st["gtid"] or f"{os.path.basename(st['file'])}:{st['start']}"
        click.echo(f"left out (--skip-statements): {where} {st['statement'][:100]!r}", err=True)
    later = res.later or {}
    for c in later.get("conflicts", ()):
        where = f"{c['gtid'] + ' ' if c['gtid'] else ''}({os.path.basename(c['file'])}:{c['offset']})"
        what = f"{c['rows']} row(s)" if c["rows"] is not None else "rows (not compared: too many to track, or MINIMAL images)"
        click.echo(f"warning: a later transaction {where} changed {what} of {c['table']} that the undo puts back: "
                   "replaying overwrites that later change (tables with a key) or stops on it (row not found)",
                   err=True)
    if later.get("total", 0) > len(later.get("conflicts", ())):
        click.echo(f"warning: ... {later['total'] - len(later['conflicts'])} more later change(s) like these", err=True)
    if later.get("note"):
        click.echo(f"warning: later changes {later['note']}", err=True)
    if res.backup:
        click.echo(f"the file it replaced is in {res.backup}", err=True)
def _client_defaults(path: str | None) -> dict:
    """The [client] section of a mysql option file (user, password, host, port)."""
    if not path:
        return {}
    import configparser

    cp = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False)
    try:
        with open(path, encoding="utf-8") as fh:
            cp.read_file(fh)
    except (OSError, configparser.Error) as exc:
        _fail(f"cannot read --defaults-file {path}: {exc}", EXIT_USAGE)
    out: dict = {}
    for group in ("client", "binlogkit"):   # as the mysql clients: [client], then the tool's own group
        if cp.has_section(group):
            out.update({k.replace("-", "_"): (v or "").strip().strip("'\"") for k, v in cp.items(group)})
    return out


def _tls_options(d: dict, ssl_mode, ssl_ca, ssl_cert, ssl_key, server_public_key, get_server_public_key):
    """pull's TLS settings: the options, else ``ssl-*`` of --defaults-file; a CA given without a
    mode means VERIFY_CA (a CA given is a CA used), else PREFERRED as the mysql clients."""
    from .pull import SslMode, TlsOptions

    ca = ssl_ca or d.get("ssl_ca") or None
    implied = "DISABLED" if "skip_ssl" in d else "VERIFY_CA" if ca else "PREFERRED"
    mode_text = (ssl_mode or d.get("ssl_mode") or implied).upper()
    try:
        mode = SslMode(mode_text)
    except ValueError:
        _fail(f"ssl-mode must be one of {', '.join(m.value for m in SslMode)}, not {mode_text!r}", EXIT_USAGE)
    for path in (ca, ssl_cert or d.get("ssl_cert"), ssl_key or d.get("ssl_key"),
                 server_public_key or d.get("server_public_key_path")):
        if path and not os.path.isfile(path):
            _fail(f"no such file: {path}", EXIT_USAGE)
    get_key = get_server_public_key or d.get("get_server_public_key", "0") in ("", "1", "ON", "on", "true", "TRUE")
    return TlsOptions(mode=mode, ca=ca, cert=ssl_cert or d.get("ssl_cert") or None,
                      key=ssl_key or d.get("ssl_key") or None,
                      server_public_key=server_public_key or d.get("server_public_key_path") or None,
                      get_server_public_key=get_key)


@main.command()
@click.option("--host", help="The primary (default: 127.0.0.1, or host= in --defaults-file).")
@click.option("--port", type=int, help="Its port (default 3306, or port= in --defaults-file).")
@click.option("--user", help="A user with REPLICATION SLAVE (or user= in --defaults-file).")
@click.option("--password-file", type=click.Path(exists=True, dir_okay=False),
              help="A file whose first line is the password (never give it on the command line).")
@click.option("--defaults-file", type=click.Path(exists=True, dir_okay=False),
              help="A mysql option file: user, password, host, port, ssl-* from its [client] and [binlogkit] "
                   "sections. MYSQL_PWD is read too.")
@click.option("--ssl-mode", type=click.Choice(["DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"],
                                              case_sensitive=False),
              help="TLS as the mysql clients: PREFERRED (default) when offered, unverified; REQUIRED or refuse; "
                   "VERIFY_CA checks the chain against --ssl-ca; VERIFY_IDENTITY the host name too. "
                   "Default VERIFY_CA when --ssl-ca is given.")
@click.option("--ssl-ca", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s), PEM.")
@click.option("--ssl-cert", type=click.Path(exists=True, dir_okay=False), help="Client certificate, PEM.")
@click.option("--ssl-key", type=click.Path(exists=True, dir_okay=False), help="Client certificate's key, PEM.")
@click.option("--server-public-key", type=click.Path(exists=True, dir_okay=False),
              help="The server's RSA public key (PEM): caching_sha2/sha256_password send the password encrypted "
                   "to it when there is no TLS.")
@click.option("--get-server-public-key", is_flag=True,
              help="Without TLS, ask the server for its RSA key (protects from listeners, not from a fake server).")
@click.option("--server-id", type=int, required=True, help="The server_id this receiver registers with (unique among replicas).")
@click.option("--dir", "directory", required=True, type=click.Path(file_okay=False),
              help="Where the copies go (created if absent); run again with the same folder to resume.")
@click.option("--start-file", help="On an empty folder: the primary's binlog to start with (default: its oldest).")
@click.option("--start-position", type=int, help="Only 4: files are copied whole, from their first byte.")
@click.option("--gtid", help="On an empty folder (MariaDB): start with the binlog holding the transactions after this GTID position.")
@click.option("--semisync", is_flag=True, help="Be a semisync replica: acknowledge each transaction once its file is fsynced.")
@click.option("--sync", "sync_mode", default="trx", show_default=True,
              help="fsync: trx (every read that completed a transaction), N (every N events), off (rotation and exit only).")
@click.option("--until-end", is_flag=True, help="Stop at the end of the primary's last binlog (non-blocking dump).")
@click.option("--heartbeat", type=float, default=1.0, show_default=True, help="Heartbeat period asked of the primary, seconds.")
@click.option("--read-timeout", type=click.FloatRange(min=0.5), default=10.0, show_default=True,
              help="Seconds the primary may take to greet, log in, answer each query (the dump itself is dead after "
                   "3 heartbeat periods, at least 5 s, with nothing received).")
@click.option("--max-event-size", default="1G", show_default=True, metavar="BYTES",
              help="Refuse an event (continued packets) larger than this (K, M, G suffixes; at least 16M); larger "
                   "events are streamed to disk, never held whole.")
@click.option("--max-reconnects", type=click.IntRange(min=0),
              help="Failed reconnects in a row before giving up (default: 10 with --until-end, no limit otherwise).")
@click.option("--json", "as_json", is_flag=True, help="Status lines as JSON objects on stdout.")
def pull(host, port, user, password_file, defaults_file, ssl_mode, ssl_ca, ssl_cert, ssl_key, server_public_key,
         get_server_public_key, server_id, directory, start_file, start_position, gtid,
         semisync, sync_mode, until_end, heartbeat, read_timeout, max_event_size, max_reconnects, as_json) -> None:
    """Copy a primary's binlogs live over the replication protocol into DIR: the primary's own
    file names, byte for byte, with an index; crash-safe and resumable.

    Registers as a replica (COM_REGISTER_SLAVE, COM_BINLOG_DUMP). Runs until SIGINT/SIGTERM
    (then flushes, fsyncs and exits 0), or with --until-end until the primary's last event.
    The password never goes on the wire readable: a server asking for it in clear text
    (mysql_clear_password, dialog) or for caching_sha2/sha256 full authentication without TLS
    (and without --server-public-key / --get-server-public-key) is refused, exit 2.

    Run again on the same DIR: the torn tail or partial transaction a crash left is cut and the
    pull asks for exactly the next byte. A dropped connection is retried with backoff. With
    --semisync a transaction is acknowledged only after the file holding its commit is fsynced.

    Exit codes: 0 done (stopped or at the end), 1 a damaged event received (CRC32), 2 refused
    (login, purged binlog — error 1236 —, server id in use, a folder of another primary, lock held;
    a server that sends what no primary sends: a file name with '/' or a NUL, an event past
    --max-event-size, a LOCAL INFILE request; no answer within --read-timeout; --max-reconnects
    failed in a row). See "Trust" in docs/pull.md.
    """
    import re
    import signal
    import time as _time

    from .pull import PullConfig, PullError, pull as run_pull

    d = _client_defaults(defaults_file)
    if password_file:
        with open(password_file, encoding="utf-8") as fh:
            password = fh.readline().rstrip("\r\n")
    else:
        password = d.get("password") or os.environ.get("MYSQL_PWD", "")
    user = user or d.get("user")
    if not user:
        _fail("--user is required (or user= in the [client] section of --defaults-file)", EXIT_USAGE)
    if sync_mode not in ("trx", "off") and not (sync_mode.isdigit() and int(sync_mode) > 0):
        _fail(f"--sync must be trx, off or a number of events, not {sync_mode!r}", EXIT_USAGE)
    m = re.fullmatch(r"(\d+)([KMG]?)B?", max_event_size.strip().upper())
    max_event = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)] if m else 0
    if max_event < 1 << 24:
        _fail(f"--max-event-size must be a size of at least 16M (an event under 16 MiB comes in one packet), "
              f"not {max_event_size!r}", EXIT_USAGE)
    cfg = PullConfig(host=host or d.get("host") or "127.0.0.1", port=int(port or d.get("port") or 3306), user=user,
                     password=password, server_id=server_id, dir=directory, start_file=start_file,
                     start_position=start_position, gtid=gtid, semisync=semisync, sync=sync_mode,
                     until_end=until_end, heartbeat_s=heartbeat,
                     tls=_tls_options(d, ssl_mode, ssl_ca, ssl_cert, ssl_key, server_public_key, get_server_public_key))
    cfg.read_timeout, cfg.max_event_size, cfg.max_reconnects = read_timeout, max_event, max_reconnects
    stopping = []

    def on_signal(signum, _frame):
        stopping.append(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    tty = sys.stderr.isatty()

    def report(ev: dict) -> None:
        kind = ev.get("event")
        if as_json:
            click.echo(json.dumps({"time": round(_time.time(), 3), **ev}))
            return
        if kind == "status":
            if tty:
                el = max(ev["elapsed_s"], 1e-3)
                lag = "-" if ev["lag_s"] is None else f"{ev['lag_s']}s"
                sys.stderr.write(f"\r{ev['file']}:{ev['position']}  {ev['bytes'] / el / 1e6:.1f} MB/s  "
                                 f"{ev['events'] / el:.0f} events/s  lag {lag}   ")
                sys.stderr.flush()
        elif kind == "repair":
            click.echo(f"repaired {ev['file']}: cut from {ev['cut_from']} to {ev['position']} bytes ({ev['reason']})"
                       + (f"; re-fetching {', '.join(ev['dropped_gtids'])}" if ev["dropped_gtids"] else ""), err=True)
        elif kind == "start":
            tls = f" over {ev['tls']} ({cfg.tls.mode.value})" if ev.get("tls") else ""
            click.echo(f"pulling from {cfg.host}:{cfg.port} ({ev['server_version']}){tls} at {ev['file']}:{ev['position']}",
                       err=True)
        elif kind == "reconnect":
            click.echo(f"{chr(10) if tty else ''}connection lost ({ev['reason']}); reconnecting in {ev['in_s']:.1f}s",
                       err=True)
        elif kind == "refetch":
            click.echo(ev["reason"], err=True)
        elif kind == "reconnected":
            click.echo(f"reconnected; resuming at {ev['file']}:{ev['position']}", err=True)
        elif kind == "done":
            click.echo(f"{chr(10) if tty else ''}{ev['outcome']}: {ev['file']}:{ev['position']}, {ev['bytes']} bytes, "
                       f"{ev['events']} events, {ev['transactions']} transactions, {ev['fsyncs']} fsyncs, "
                       f"{ev['acks']} acks", err=True)

    try:
        run_pull(cfg, report=report, stop=lambda: bool(stopping))
    except WriteRefused as exc:
        _fail(f"refused: {exc}", EXIT_USAGE)
    except PullError as exc:
        _fail(str(exc), EXIT_USAGE)
    except BinlogError as exc:
        _fail(str(exc), EXIT_DAMAGED)
    sys.exit(EXIT_OK)


@main.command()
@click.argument("archive", nargs=-1, required=True)
@click.option("--output", required=True, metavar="DIR_OR_URL",
              help="Dataset root: a folder, or an fsspec URL (s3://bucket/prefix). What an earlier export wrote "
                   "there (db=*/, _schemas/, _statements/, _SUCCESS) is replaced; other files are left alone.")
@click.option("--tables", metavar="DB.T,...", help="Only these tables (comma-separated; shell wildcards: shop.*).")
@click.option("--start-datetime", help="Only transactions that began at or after this time (ISO 8601; UTC unless a "
                                       "zone is given).")
@click.option("--stop-datetime", help="Only transactions that began before this time.")
@click.option("--include-gtids", help="Only transactions whose GTID is in this set (MySQL uuid:1-5; MariaDB d-s-n, "
                                      "d-s-a..b).")
@click.option("--schema", "schema_file", type=click.Path(exists=True, dir_okay=False),
              help="CREATE TABLE statements (mariadb-dump --no-data, SHOW CREATE TABLE) giving column names, "
                   "signedness, character sets and ENUM/SET labels for tables whose table maps lack them "
                   "(binlog_row_metadata=MINIMAL).")
@click.option("--row-group-rows", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="Rows per Parquet row group (memory holds about one row group per open part).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary (as _SUCCESS holds it) as JSON.")
@key_options
def export(archive, output, tables, start_datetime, stop_datetime, include_gtids, schema_file, row_group_rows,
           as_json, keys) -> None:
    """Write the committed row changes of ARCHIVE (files, .index files, folders) as a typed Parquet
    change table: a dataset per table, db=DB/table=T/date=YYYY-MM-DD/part-*.parquet.

    One row per row change: op (insert/update/delete), gtid, server_id, commit_time, file,
    offset, row_index, schema_version, then before_<column> and after_<column>, typed
    (integers at their width and signedness, DECIMAL, date/timestamp/duration, text as UTF-8,
    binary, ...; docs/export.md). A new schema version (ALTER TABLE) starts new files and a row
    in _schemas; statement-format DML and DDL go to _statements. Rolled back and partial
    transactions are not exported. _SUCCESS, written last, holds the summary: a killed export
    leaves none, and a rerun replaces the dataset.

    Exit codes: 0 clean; 1 damage, undecodable rows or a partial transaction (reported; the sound
    part is exported); 2 usage error or an input that cannot be read.
    """
    need("pyarrow", "binlogkit export", extra="export")
    from .export import Filters, export as run_export, summary_exit_code
    from .export.render import render

    if include_gtids and (start_datetime or stop_datetime):
        _fail("give --start-datetime/--stop-datetime or --include-gtids, not both", EXIT_USAGE)
    schema: dict = {}
    if schema_file:
        from .export import ddl

        schema = ddl.index(ddl.parse(Path(schema_file).read_text(errors="replace")))
        if not schema:
            _fail(f"--schema {schema_file}: no CREATE TABLE statement in it", EXIT_USAGE)
    filters = Filters(tables=tuple(t.strip() for t in (tables or "").split(",") if t.strip()),
                      start=_datetime(start_datetime), stop=_datetime(stop_datetime),
                      gtids=_gtids(include_gtids), schema=schema)
    try:
        summary = run_export(archive, output, filters=filters, row_group_rows=row_group_rows, keys=keys)
    except BinlogError as exc:
        _fail(str(exc), _exit_for(exc, EXIT_USAGE))
    except (OSError, ValueError) as exc:
        _fail(str(exc), EXIT_USAGE)
    click.echo(json.dumps(summary, indent=1, default=str) if as_json else render(summary))
    sys.exit(summary_exit_code(summary))


if __name__ == "__main__":  # pragma: no cover
    main()

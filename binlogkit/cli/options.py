"""The options several commands share, declared once and named the same everywhere (old
spellings stay as aliases): the inputs argument, --json, -o/--output, the key options, the GTID,
database/table, position and time filters. Each is a decorator; a command may reword its help.

And the one rule for an option given more than once, on every command (``Command``, the class
of every command of the group): an option declared ``multiple=True`` is collected (the command
gets every value; its help says "May be given more than once."); any other option given twice
is refused before the command runs (exit 2, one line naming it and its values) — click alone
would keep the last value and drop the others silently. A flag given twice is the same flag; a
flag and its negation (``--utc --local-time``) both given are refused."""

from __future__ import annotations

import functools
import os
from datetime import datetime, timezone

import click

from ..errors import BinlogError
from .exits import EXIT_USAGE, echo_line, fail, fail_on

COLLECTED = "May be given more than once."


class Repeated(click.UsageError):
    """An option given more than once that takes one value: one line, exit 2 (``UsageError``'s
    code), said the way every other refusal is."""

    def show(self, file=None) -> None:
        echo_line(f"binlogkit: error: {self.format_message()}", err=True)


def _spelled(p: click.Option) -> str:
    return "/".join(p.opts)


def _occurrences(command: click.Command, ctx: click.Context, args: list[str]) -> dict:
    """Every value each option was given on ``args``, in order: click's own parser for
    ``command`` (same spellings, ``--x=v``, clustered short options, ``--``), each option made to
    append instead of keep the last (``store`` -> ``append``, ``store_const`` -> ``append_const``).
    Empty when the line does not parse (click's own parse says why)."""
    parser = type(command.make_parser(ctx))(ctx)
    add = parser.add_option

    def appending(obj, opts, dest, action=None, nargs=1, const=None):
        action = {None: "append", "store": "append", "store_const": "append_const"}.get(action, action)
        add(obj=obj, opts=opts, dest=dest, action=action, nargs=nargs, const=const)
    parser.add_option = appending  # type: ignore[method-assign]
    for p in command.get_params(ctx):
        p.add_to_parser(parser, ctx)
    try:
        opts, _rest, _order = parser.parse_args(args=list(args))
    except click.UsageError:
        return {}
    return opts


def repeated(command: click.Command, ctx: click.Context, args: list[str]) -> str | None:
    """Why ``args`` are refused for ``command``: an option that takes one value given more than
    once, or a flag and its negation both given; None when every option is given once, is
    collected (``multiple``), counted (``-vv``) or is the same flag again; None too when an eager
    option (``--help``) is given: it answers first."""
    given = _occurrences(command, ctx, args)
    params = command.get_params(ctx)
    if any(given.get(p.name) for p in params if isinstance(p, click.Option) and p.is_eager and p.name):
        return None
    for p in params:
        if not isinstance(p, click.Option) or p.multiple or p.count or p.name is None:
            continue
        values = given.get(p.name)
        if not isinstance(values, list) or len(values) < 2:
            continue
        if p.is_flag:
            if len({repr(v) for v in values}) > 1:
                return f"{_spelled(p)} and {'/'.join(p.secondary_opts) or 'its opposite'} both given: give one"
            continue
        shown = ", ".join(" ".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v) for v in values)
        times = "twice" if len(values) == 2 else f"{len(values)} times"
        return f"{_spelled(p)} given {times} ({shown}): give it once"
    return None


class Command(click.Command):
    """Every binlogkit command (``@click.command(cls=Command)``): the rule of this module's
    docstring. Collected options (``multiple=True``) say so in their help. The check runs before
    click converts a value (so no callback or conversion sees a value that is refused, and a
    refusal does not depend on the values being valid), after ``--help``."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        for p in self.params:
            if isinstance(p, click.Option) and p.multiple and COLLECTED not in (p.help or ""):
                p.help = f"{p.help.rstrip()} {COLLECTED}" if p.help else COLLECTED

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            why = repeated(self, ctx, args)
            if why is not None:
                raise Repeated(why, ctx)
        return super().parse_args(ctx, args)


class InputPath(click.Path):
    """A local path, checked as ``click.Path`` does (must exist, ...), or a URL
    (``s3://bucket/prefix``, any fsspec URL), passed as it is: the store is asked when the
    command reads or writes it (its errors exit 2, naming the URL)."""

    def convert(self, value, param, ctx):
        from ..reading.storage import is_url

        if isinstance(value, str) and is_url(value):
            return value
        if value == "-" and self.exists and not self.allow_dash:  # one line, not click's usage screen
            name = ctx.command.name if ctx is not None and ctx.command is not None else "this command"
            fail(f"{name} cannot read standard input ('-'): it needs files it can reopen; give a path "
                 "(decode reads '-')", EXIT_USAGE)
        return super().convert(value, param, ctx)


OutputPath = InputPath  # outputs likewise: a local path checked by click, or a URL (storage.write_atomic)


def inputs(*, exists: bool = True, allow_dash: bool = False):
    """INPUTS: binlogs / relay logs, .index files, folders, compressed archives, URLs."""
    return click.argument("inputs", nargs=-1, required=True,
                          type=InputPath(exists=True, allow_dash=allow_dash) if exists else None)


def json_option(help: str):
    return click.option("--json", "as_json", is_flag=True, help=help)


def output_option(help: str, *, required: bool = False, type=None, name: str = "output", aliases=()):
    return click.option("-o", "--output", *aliases, name, required=required, type=type, help=help,
                        metavar=None if type is not None else "DIR_OR_URL")


def backup_dir_option(help: str):
    return click.option("--backup-dir", type=click.Path(file_okay=False), help=help)


follow_links_option = click.option(
    "--follow-links", is_flag=True, help="When a file to change is a symbolic link, change the file it points to "
    "(default: refuse, naming the link).")
relay_option = click.option("--relay/--binlog", default=None,
                            help="Force reading as relay logs or binlogs (default: detect).")


def jobs_option(help: str = "Worker processes (default: one per core)."):
    return click.option("--jobs", type=int, help=help)


def _joined(ctx, param, values: tuple[str, ...]) -> str | None:
    """A collected GTID filter as one set: the texts given, joined (a transaction in any of
    them); None when none was given."""
    texts = [v.strip() for v in values if v.strip()]
    return ",".join(texts) if texts else None


def gtid_filters(include: str = "Only transactions whose GTID is in this set (MySQL uuid:1-5; MariaDB d-s-n, "
                 "d-s-a..b).", *, aliases=(), exclude: bool = True):
    """--include-gtids / --exclude-gtids, collected: each given more than once means the union
    of the sets (the command gets them as one text, None when not given)."""
    def deco(command):
        if exclude:
            command = click.option("--exclude-gtids", multiple=True, callback=_joined,
                                   help="Skip transactions whose GTID is in this set (same syntax).")(command)
        return click.option("--include-gtids", *aliases, "include_gtids", multiple=True, callback=_joined,
                            help=include)(command)
    return deco


def table_filters(what: str = "Only", *, dest: str = "tables"):
    """--database DB and --table DB.TABLE, both collected (DB.T,... and shell wildcards in
    --table); the command gets ``database`` and ``dest`` (``tables``, or ``table``), tuples."""
    def deco(command):
        command = click.option("--table", "--tables", dest, multiple=True, metavar="DB.TABLE",
                               help=f"{what} the changes to this table (or DB.T,...; shell wildcards: shop.*)."
                               )(command)
        return click.option("--database", multiple=True, metavar="DB",
                            help=f"{what} the changes to tables of this database.")(command)
    return deco


def tables_of(database: str | tuple[str, ...] | None, tables: tuple[str, ...]) -> tuple[str, ...]:
    """The table patterns --database and --table stand for (DB.* for a database)."""
    databases = (database,) if isinstance(database, str) else database or ()
    return tuple(t.strip() for v in tables for t in v.split(",") if t.strip()) + tuple(f"{d}.*" for d in databases if d)


def position_filters(start: str = "Skip events that start before this file offset.",
                     stop: str = "Stop at the first event starting at or after this offset."):
    def deco(command):
        command = click.option("--stop-position", type=int, help=stop)(command)
        return click.option("--start-position", type=int, help=start)(command)
    return deco


def time_filters(start: str = "Only transactions that began at or after this time (ISO 8601; UTC unless a zone is "
                 "given).", stop: str = "Only transactions that began before this time."):
    def deco(command):
        command = click.option("--stop-datetime", help=stop)(command)
        return click.option("--start-datetime", help=start)(command)
    return deco


def datetime_value(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date-time like 2024-01-31 12:00:00") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def gtids_value(text: str | None):
    """A GTID filter's text as a predicate (``api.gtid_matcher``)."""
    if text is None:
        return None
    from ..api import gtid_matcher
    try:
        return gtid_matcher(text)
    except BinlogError as exc:
        raise click.BadParameter(str(exc)) from None


def check(paths, **kw) -> None:
    """``api.check_inputs``: an unusable argument is one line, exit 2; its notes on stderr."""
    from ..api import check_inputs

    try:
        check_inputs([os.fspath(p) for p in paths], note=lambda text: click.echo(text, err=True), **kw)
    except BinlogError as exc:
        fail_on(exc, EXIT_USAGE)


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


def _with_keys(value, keys):
    """An argument as ``reading.source.Input`` values read with ``keys``: a tuple (``nargs=-1``)
    as a tuple of them, one path as one, None as None."""
    from ..reading.source import Input

    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(Input(p, keys) for p in value)
    return Input(value, keys)


def key_options(*names: str):
    """The key options, for every command that reads or writes log files. The arguments
    ``names`` reach the command as ``reading.source.Input`` values read with the keys (the one
    place the CLI puts keys into inputs; folders and indexes are expanded by the library, each
    file keeping its argument's keys); the command never holds the keys themselves. A key file
    that cannot be used is a usage error (exit 2); one that other users may read gives a
    warning, and so does the secret file of an encrypted key file."""
    def deco(command):
        @functools.wraps(command)
        def wrapper(*args, key_file=None, key_file_secret_file=None, cipher=None, keyring_file=None, **kw):
            from ..crypto.keys import load_keys, loose_permissions

            try:
                loaded = load_keys(key_file, secret_file=key_file_secret_file, cipher=cipher,
                                   keyring_file=keyring_file)
            except BinlogError as exc:
                fail(str(exc), EXIT_USAGE)
            for f in filter(None, (key_file or os.environ.get("BINLOGKIT_KEY_FILE"), key_file_secret_file,
                                   keyring_file)):
                if loose_permissions(f):
                    click.echo(f"binlogkit: warning: {f} is readable by other users (chmod 600 it)", err=True)
            return command(*args, **{**kw, **{n: _with_keys(kw[n], loaded) for n in names}})
        for opt in reversed(_KEY_OPTIONS):
            wrapper = opt(wrapper)
        return wrapper
    return deco

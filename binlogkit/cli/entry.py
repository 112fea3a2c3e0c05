"""Where ``binlogkit`` starts (the console script and ``python -m binlogkit.cli``).

A plain ``binlogkit pull ...`` — every option one that ``pull_options.OPTIONS`` names, each given
once as ``--name value``, ``--name=value`` or ``-o value``, every value one that click takes as
it is — is parsed here without importing click (issue 34: click was a third of pull's start-up)
and runs ``pull_run.run`` as the click command would, with the same ending (``exits.ends_clean``,
"Aborted!" on an interrupt). Anything else — ``--help``, a value click would refuse or convert
otherwise, an option given twice (the click command refuses it: ``options.Command``), a value
that begins with ``-``, another command — goes to the click group unchanged, which then says and
does what the click command says and does: this parser only takes command lines where its answer
is click's answer (``tests/test_pull_cli.py`` holds the two equal on generated command lines).

``pull_options.py`` is generated from the click declaration (``cli/pull.py``) by ``python -m
binlogkit.cli.entry --write`` (``make lean-cli``); ``tests/test_pull_cli.py`` fails when it is
stale. Each row: ``(name, opts, kind, default, required, check)``; the kinds are ``flag``,
``str``, ``int``, ``float``, ``choice`` (check: the choices, and whether case counts), ``path``
(check: exists, file_okay, dir_okay, readable, writable, executable, as ``click.Path``); ``int``
and ``float`` take ``check`` = (min, max) of a ``click.IntRange`` / ``FloatRange`` or None.
"""

from __future__ import annotations

import os
import sys

_NO = object()   # a value this parser leaves to click


def _number(kind: str, text: str, bounds):
    """An ``int`` or ``float`` option's value as click converts it, for plain decimal text only."""
    whole, dot, frac = text.partition(".")
    plain = whole.isascii() and whole.isdigit() and (not dot or (kind == "float" and frac.isascii() and frac.isdigit()))
    if not plain:
        return _NO
    value = int(text) if kind == "int" else float(text)
    if bounds is not None:
        low, high = bounds
        if (low is not None and value < low) or (high is not None and value > high):
            return _NO
    return value


def _path(text: str, check) -> object:
    """``click.Path.convert`` for a path click would accept (the same stat and access tests)."""
    import stat

    exists, file_okay, dir_okay, readable, writable, executable = check
    try:
        st = os.stat(text)
    except OSError:
        return _NO if exists else text
    if (not file_okay and stat.S_ISREG(st.st_mode)) or (not dir_okay and stat.S_ISDIR(st.st_mode)) or \
            (readable and not os.access(text, os.R_OK)) or (writable and not os.access(text, os.W_OK)) or \
            (executable and not os.access(text, os.X_OK)):
        return _NO
    return text


def _value(kind: str, text: str, check):
    if kind == "str":
        return text
    if kind in ("int", "float"):
        return _number(kind, text, check)
    if kind == "choice":
        choices, case_sensitive = check
        fold = (lambda s: s) if case_sensitive else str.casefold
        return next((c for c in choices if fold(c) == fold(text)), _NO)
    if kind == "path":
        return _path(text, check)
    return _NO


def parse(table, args: list[str]) -> dict | None:
    """The keyword arguments click would call the command with, or None where click should say
    (help, an error, a spelling this parser does not take)."""
    rows = {opt: row for row in table for opt in row[1]}
    got: dict = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        name, eq, text = token.partition("=") if token.startswith("--") else (token, "", "")
        row = rows.get(name)
        if row is None or row[0] in got:
            return None
        dest, _opts, kind, _default, _required, check = row
        if kind == "flag":
            if eq:
                return None
            got[dest] = True
            continue
        if not eq:
            if i >= len(args):
                return None
            text = args[i]
            i += 1
        if not text or text.startswith("-"):
            return None
        value = _value(kind, text, check)
        if value is _NO:
            return None
        got[dest] = value
    for dest, _opts, _kind, default, required, _check in table:
        if dest not in got:
            if required:
                return None
            got[dest] = default
    return got


def _lean_pull(args: list[str]) -> None:
    """``binlogkit pull`` without click; returns only if click must take the command line."""
    if any(k.endswith("_COMPLETE") for k in os.environ):   # click's shell completion
        return
    from .pull_options import OPTIONS

    kw = parse(OPTIONS, args)
    if kw is None:
        return
    from .exits import ends_clean
    from .pull_run import run

    try:   # as click.Command.main in standalone mode ends a command
        ends_clean(lambda: run(**kw))
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        sys.exit(1)
    except OSError as exc:
        import errno

        if exc.errno != errno.EPIPE:
            raise
        sys.exit(1)
    sys.exit(0)


def main() -> None:
    """The ``binlogkit`` command."""
    args = sys.argv[1:]
    if args[:1] == ["pull"]:
        _lean_pull(args[1:])
    from . import main as group

    group()


# -- the table, generated from the click declaration -------------------------------------------

def table_of(command) -> list[tuple]:
    """``command``'s options as rows of the table ``parse`` reads; a ValueError for what the
    table cannot say (then teach ``parse`` first)."""
    import click

    required = []
    for p in command.params:
        if p.required:   # a value click takes, for the defaults of the others
            if isinstance(p.type, click.Path) and not p.type.exists:
                required += [p.opts[0], os.path.join(os.sep, "nonexistent", "binlogkit-options-table")]
            elif type(p.type) in (click.types.StringParamType, click.types.IntParamType):
                required += [p.opts[0], "1"]
            else:
                raise ValueError(f"{p.name}: a required option of type {p.type!r}")
    defaults = command.make_context(command.name, list(required)).params
    if command.context_settings or command.allow_extra_args or command.ignore_unknown_options or \
            not command.allow_interspersed_args:
        raise ValueError(f"{command.name}: context settings the table does not say")
    rows = []
    for p in command.params:
        t = p.type
        if not isinstance(p, click.Option) or p.secondary_opts or p.multiple or p.nargs != 1 or p.envvar \
                or p.callback or p.is_eager or not p.expose_value or p.prompt or p.count or p.deprecated:
            raise ValueError(f"{p.name}: an option the table does not say")
        check: object = None
        if p.is_flag:
            given = command.make_context(command.name, [*required, p.opts[0]]).params[p.name]
            if not isinstance(t, click.types.BoolParamType) or given is not True or defaults[p.name] is not False:
                raise ValueError(f"{p.name}: a flag that is not a plain on/off")
            kind = "flag"
        elif type(t) is click.types.StringParamType:
            kind = "str"
        elif type(t) in (click.types.IntParamType, click.types.IntRange, click.types.FloatParamType,
                         click.types.FloatRange):
            kind = "int" if isinstance(t, click.types.IntParamType) else "float"
            if isinstance(t, (click.IntRange, click.FloatRange)):
                if t.min_open or t.max_open or t.clamp:
                    raise ValueError(f"{p.name}: an open or clamped range")
                check = (t.min, t.max)
        elif type(t) is click.Choice:
            if not all(isinstance(c, str) for c in t.choices):
                raise ValueError(f"{p.name}: choices that are not text")
            kind, check = "choice", (tuple(t.choices), t.case_sensitive)
        elif type(t) is click.Path:
            if t.resolve_path or t.allow_dash or t.type is not None:
                raise ValueError(f"{p.name}: a path that is resolved, '-' or converted")
            kind, check = "path", (t.exists, t.file_okay, t.dir_okay, t.readable, t.writable, t.executable)
        else:
            raise ValueError(f"{p.name}: type {t!r} is not in the table")
        rows.append((p.name, tuple(p.opts), kind, None if p.required else defaults[p.name], p.required, check))
    return rows


def table_source(command) -> str:
    """The text of ``pull_options.py``."""
    rows = "".join(f"    {row!r},\n" for row in table_of(command))
    return ('"""Generated from the click declaration of ``binlogkit pull`` (``cli/pull.py``) by ``python -m\n'
            'binlogkit.cli.entry --write`` (``make lean-cli``): do not edit. ``entry.parse`` reads it."""\n\n'
            "OPTIONS = (\n" + rows + ")\n")


if __name__ == "__main__":
    from .pull import pull

    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pull_options.py")
    text = table_source(pull)
    if sys.argv[1:] == ["--write"]:
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)

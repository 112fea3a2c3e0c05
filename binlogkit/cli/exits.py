"""Exit codes and the one-line error message: one table from error class to exit code.

* 0 — done, nothing wrong found
* 1 — the input is damaged (torn event, checksum mismatch, undecodable event, not a binlog)
* 2 — usage or I/O error (bad option, missing file, a key that is missing, a refusal)
* 3 — a repair stopped part-way (run it again to finish it)
"""

from __future__ import annotations

import functools
import json
import os
import sys
from contextlib import contextmanager

from .._optional import MissingDependency
from ..errors import (BinlogError, KeyFileError, KeyRequiredError, NotRegularFileError, PartialWrite, StorageError, UsageError,
                      WriteRefused)

EXIT_OK, EXIT_DAMAGED, EXIT_USAGE, EXIT_PARTIAL = 0, 1, 2, 3

# error class -> (exit code, prefix of its message); the nearest class in the MRO wins. A class
# not here (FormatError, ChecksumError, DecryptionError...) is damage: the command's `damaged`.
TABLE: dict[type, tuple[int, str]] = {
    MissingDependency: (EXIT_USAGE, ""),
    StorageError: (EXIT_USAGE, ""),           # the object store refused or failed: names the URL
    KeyRequiredError: (EXIT_USAGE, ""),       # a missing key is a usage error, like a missing file
    KeyFileError: (EXIT_USAGE, ""),
    NotRegularFileError: (EXIT_USAGE, ""),
    WriteRefused: (EXIT_USAGE, "refused: "),  # FlashbackRefused, RecoveryRefused: nothing changed
    PartialWrite: (EXIT_PARTIAL, ""),
    UsageError: (EXIT_USAGE, ""),            # an input or option that cannot be used
}
# error classes of command rooms that only some commands load (``pull`` and its ``ssl``), named by
# module: an instance can only exist once its module is imported, so the class is looked up in
# ``sys.modules`` (never imported here) and joins ``TABLE`` then — ``decode`` starts without them
LAZY: dict[tuple[str, str], tuple[int, str]] = {
    ("binlogkit.pull.protocol", "PullError"): (EXIT_USAGE, ""),
}


def _table() -> dict[type, tuple[int, str]]:
    for (module, name), entry in list(LAZY.items()):
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None:
            TABLE[cls] = entry
            del LAZY[(module, name)]
    return TABLE


def exit_code(exc: BaseException | None, damaged: int = EXIT_DAMAGED) -> int:
    table = _table()
    for cls in type(exc).__mro__:
        if cls in table:
            return table[cls][0]
    return damaged


def message(exc: BaseException) -> str:
    table = _table()
    return next((table[c][1] for c in type(exc).__mro__ if c in table), "") + str(exc)


def echo_line(text: str, err: bool = False) -> None:
    """One line on stdout (or stderr): ``click.echo``'s once click is loaded (every command but a
    plain ``pull``, which starts without click: ``cli.entry``), else the same write and flush."""
    click = sys.modules.get("click")
    if click is not None:
        click.echo(text, err=err)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def fail(text: str, code: int = EXIT_USAGE):
    """``binlogkit: error: TEXT`` on stderr (after what stdout holds), then exit ``code``."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_broken_pipe()
    echo_line(f"binlogkit: error: {text}", err=True)
    sys.exit(code)


def fail_on(exc: BaseException, damaged: int = EXIT_DAMAGED, where: str = ""):
    """An error as its one line and its code from ``TABLE``."""
    fail(where + message(exc), exit_code(exc, damaged))


def fails(damaged: int = EXIT_DAMAGED, os_errors: bool = False):
    """A command's errors, handled once: a ``BinlogError`` becomes its one line and its code
    from ``TABLE`` (``damaged`` for a class not there); with ``os_errors`` an ``OSError`` (not a
    broken pipe) is one line, exit 2."""
    def deco(command):
        @functools.wraps(command)
        def wrapper(*args, **kw):
            try:
                return command(*args, **kw)
            except BinlogError as exc:
                fail_on(exc, damaged)
            except BrokenPipeError:
                quiet_broken_pipe()
            except OSError as exc:
                if not os_errors:
                    raise
                fail(str(exc), EXIT_USAGE)
        return wrapper
    return deco


def show(doc, as_json: bool, text, indent: int | None = 1) -> None:
    """``doc`` on stdout: JSON, or the text its renderer ``text`` makes (a string or lines)."""
    if as_json:
        echo_line(json.dumps(doc, indent=indent, default=str))
    else:
        out = text(doc)
        echo_line(out if isinstance(out, str) else "\n".join(out))


def echo(lines) -> None:
    """Each ``(text, to_stderr)`` a renderer made, on its stream."""
    for text, err in lines:
        echo_line(text, err=err)


@contextmanager
def leftovers():
    """The list a writer fills with what it removed of an interrupted earlier run; named in one
    stderr line at the end, even when the run is then refused."""
    cleaned: list[str] = []
    try:
        yield cleaned
    finally:
        say_leftovers(cleaned)


def say_leftovers(gone: list[str]) -> None:
    if gone:
        from ..writing.safeio import leftovers_line

        echo_line(leftovers_line(gone), err=True)


def quiet_broken_pipe() -> None:
    """The reader of our output went away (``| head``): stop quietly, it is not an error."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(EXIT_OK)


def ends_clean(invoke):
    """Every command ends the same way on these, never with a traceback: a missing optional
    dependency or an object store's failure is one line, exit 2; output that cannot be written —
    a reader that went away (``| head``) quietly, as Unix tools do; a full disk or another I/O
    error with one line, exit 2."""
    try:
        return invoke()
    except (MissingDependency, StorageError) as exc:
        fail_on(exc)
    except BrokenPipeError:
        quiet_broken_pipe()
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        what = "" if exc.filename else "cannot write the output: "
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        echo_line(f"binlogkit: error: {what}{exc.strerror or exc}{where}", err=True)
        sys.exit(EXIT_USAGE)

"""Exit codes and the one-line error message: one table from error class to exit code.

* 0 — done, nothing wrong found
* 1 — the input is damaged (torn event, checksum mismatch, undecodable event, not a binlog)
* 2 — usage or I/O error (bad option, missing file, a key that is missing, a refusal)
* 3 — a repair stopped part-way (run it again to finish it)
"""

from __future__ import annotations

import os
import sys

import click

from .._optional import MissingDependency
from ..errors import (KeyFileError, KeyRequiredError, NotRegularFileError, PartialWrite, StorageError, UsageError,
                      WriteRefused)
from ..pull.protocol import PullError

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
    PullError: (EXIT_USAGE, ""),
    UsageError: (EXIT_USAGE, ""),            # an input or option that cannot be used
}


def exit_code(exc: BaseException | None, damaged: int = EXIT_DAMAGED) -> int:
    for cls in type(exc).__mro__:
        if cls in TABLE:
            return TABLE[cls][0]
    return damaged


def message(exc: BaseException) -> str:
    return next((TABLE[c][1] for c in type(exc).__mro__ if c in TABLE), "") + str(exc)


def fail(text: str, code: int = EXIT_USAGE):
    """``binlogkit: error: TEXT`` on stderr (after what stdout holds), then exit ``code``."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_broken_pipe()
    click.echo(f"binlogkit: error: {text}", err=True)
    sys.exit(code)


def fail_on(exc: BaseException, damaged: int = EXIT_DAMAGED, where: str = ""):
    """An error as its one line and its code from ``TABLE``."""
    fail(where + message(exc), exit_code(exc, damaged))


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
        click.echo(f"binlogkit: error: {what}{exc.strerror or exc}{where}", err=True)
        sys.exit(EXIT_USAGE)

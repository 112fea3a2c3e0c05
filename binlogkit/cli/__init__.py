"""Command line: each command parses its options, makes one library call and renders the
result (``binlogkit.api`` and the command rooms: audit/, decoding/, export/, flashback/, pitr/,
pull/, recover/). Options shared by several commands are declared once (``options.py``); errors
become one line and an exit code (0 ok, 1 damaged, 2 usage or I/O, 3 part-way) through one table
and one decorator (``exits.py``, which says each code at length).
"""

from __future__ import annotations

import click

from .. import __version__
from .exits import ends_clean


class _Commands(click.Group):
    def invoke(self, ctx):
        return ends_clean(lambda: super(_Commands, self).invoke(ctx))


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="binlogkit")
def main() -> None:
    """binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

    Works from files alone: no command but `pull` (a live copy from a primary) connects to a server.
    Exit codes: 0 ok, 1 damaged input or findings, 2 usage or I/O error, 3 a repair stopped
    part-way (run it again to finish it).
    """


def _register() -> None:
    from . import audit, decode, export, inspect, pitr, pull, repair

    for cmd in (decode.decode, inspect.verify, inspect.gtids, inspect.transactions, audit.audit, pitr.pitr,
                inspect.compare, repair.incident, repair.recover, repair.flashback, pull.pull, export.export):
        main.add_command(cmd)


_register()

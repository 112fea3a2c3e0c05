"""Command line: each command parses its options, makes one library call and renders the
result (``binlogkit.api`` and the command rooms: audit/, decoding/, export/, flashback/, pitr/,
pull/, recover/). Options shared by several commands are declared once (``options.py``); errors
become one line and an exit code (0 ok, 1 damaged, 2 usage or I/O, 3 part-way) through one table
and one decorator (``exits.py``, which says each code at length).

The click group (``group.main``, its commands named in ``group.COMMANDS``) is made when
``binlogkit.cli.main`` is first asked for (PEP 562): ``python -m binlogkit.cli`` and the
``binlogkit`` script start in ``entry.main``, which runs a plain ``binlogkit pull`` without
importing click (its options parsed with the table ``pull_options`` generated from the click
command), and hands every other command line to the group.
"""

from __future__ import annotations


def __getattr__(name: str):
    if name != "main":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .group import main

    return main

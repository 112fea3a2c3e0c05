"""The ``binlogkit`` click group: each command's module imported when it is run or its help is
asked for (``COMMANDS``); every command ends through ``exits.ends_clean``."""

from __future__ import annotations

import click

from .. import __version__
from .exits import ends_clean

# name -> (module of binlogkit.cli, function): a command's module is imported when the command
# is run or its help is asked for, not at start-up (``binlogkit pull`` loads no decode, export
# or audit code: tests/test_pull_startup.py); ``binlogkit --help`` loads them all for their help
COMMANDS = {
    "decode": ("decode", "decode"), "verify": ("inspect", "verify"), "gtids": ("inspect", "gtids"),
    "transactions": ("inspect", "transactions"), "audit": ("audit", "audit"), "pitr": ("pitr", "pitr"),
    "compare": ("inspect", "compare"), "incident": ("repair", "incident"), "recover": ("repair", "recover"),
    "flashback": ("repair", "flashback"), "pull": ("pull", "pull"), "export": ("export", "export"),
    "serve": ("serve", "serve"),
    "lake": ("lake", "lake"),
}


class _LazyCommands(dict):
    """``Group.commands`` whose values are imported on first access (the names are known at once)."""

    def _load(self, name: str) -> click.Command:
        cmd = dict.__getitem__(self, name)
        if isinstance(cmd, tuple):
            import importlib

            module, attr = cmd
            cmd = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
            dict.__setitem__(self, name, cmd)
        return cmd

    def __getitem__(self, name: str) -> click.Command:
        return self._load(name)

    def get(self, name, default=None):
        return self._load(name) if name in self else default

    def values(self):
        return [self._load(n) for n in self]

    def items(self):
        return [(n, self._load(n)) for n in self]


class _Commands(click.Group):
    def invoke(self, ctx):
        return ends_clean(lambda: super(_Commands, self).invoke(ctx))


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="binlogkit")
def main() -> None:
    """binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

    Works from files alone: no command but `pull` (a live copy from a primary) connects to a server,
    and `serve` (a binlog server replicas connect to) listens for them.
    Exit codes: 0 ok, 1 damaged input or findings, 2 usage or I/O error, 3 a repair stopped
    part-way (run it again to finish it).
    """


main.commands = _LazyCommands(COMMANDS)

"""The reference pages made from the code, so they cannot drift from it: one page per command
with the text of ``binlogkit COMMAND --help`` (from the click declarations), and the Python API
from its signatures and docstrings.

The site's build (``make docs``: mkdocs with ``scripts/mkdocs_hooks.py``) adds these pages as it
builds; nothing here is committed. ``python scripts/doc_reference.py OUT_DIR`` writes them as
files (to read them without the site); ``tests/test_docsite.py`` holds each command page equal
to what the command prints for ``--help``.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WIDTH = 80   # the help text's width, as the command prints it with COLUMNS=80
COMMANDS_DIR = "reference/commands"

# the public Python API: the package's names and the calls the commands wrap (binlogkit.api)
API_MODULES = {
    "binlogkit": ["open_binlog", "iter_raw_events", "decode", "RawEvent", "Event", "Input", "Format", "Flavor",
                  "BinlogError"],
    "binlogkit.api": ["decode_files", "verify_files", "transactions", "gtid_summary", "gtid_matcher", "Problem",
                      "check_inputs", "split_gtid_indexes"],
}


def command_names() -> list[str]:
    from binlogkit.cli.group import COMMANDS

    return sorted(COMMANDS)


def help_text(name: str, sub: str | None = None) -> str:
    """What ``binlogkit NAME --help`` (``binlogkit NAME SUB --help``: a group's command) prints
    (COLUMNS=80)."""
    import click

    from binlogkit.cli.group import main

    import copy

    # a copy without click's cached help option: a command first shown in another context (a
    # test's, without the group's -h) would otherwise keep that one's option names
    cmd = copy.copy(main.commands[name])
    cmd._help_option = None
    parent = click.Context(main, info_name="binlogkit", terminal_width=WIDTH - 2, **main.context_settings)
    with click.Context(cmd, info_name=name, parent=parent, terminal_width=WIDTH - 2) as ctx:
        if sub is None:
            return cmd.get_help(ctx) + "\n"
        inner = copy.copy(cmd.commands[sub])  # type: ignore[attr-defined]
        inner._help_option = None
        with click.Context(inner, info_name=sub, parent=ctx, terminal_width=WIDTH - 2) as sub_ctx:
            return inner.get_help(sub_ctx) + "\n"


def subcommand_names(name: str) -> list[str]:
    """The commands of a group command (``binlogkit lake history``...); [] for a plain command."""
    from binlogkit.cli.group import main

    return sorted(getattr(main.commands[name], "commands", {}) or {})


def short_help(name: str) -> str:
    from binlogkit.cli.group import main

    return main.commands[name].get_short_help_str(limit=120)


def command_page(name: str) -> str:
    page = (f"# binlogkit {name}\n\n{short_help(name)}\n\n"
            f"This page is `binlogkit {name} --help`, made from the command's declaration when the site "
            f"is built.\n\n```text\n{help_text(name)}```\n")
    for sub in subcommand_names(name):
        page += f"\n## binlogkit {name} {sub}\n\n```text\n{help_text(name, sub)}```\n"
    return page


def commands_index() -> str:
    lines = ["# Commands", "",
             "Every command of `binlogkit`, its page the text of `binlogkit COMMAND --help`. No command "
             "but `pull` (and `serve`, where installed) connects to a server; the others read files.", "",
             "| command | what it does |", "|---|---|"]
    lines += [f"| [`{n}`]({n}.md) | {short_help(n).replace('|', '&#124;')} |" for n in command_names()]
    return "\n".join(lines) + "\n\nExit codes: [exit codes](../exit-codes.md).\n"


def _api_object(module: str, name: str):
    import importlib

    return getattr(importlib.import_module(module), name)


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def api_entries() -> list[tuple[str, str, str, str]]:
    """(module, name, signature, docstring) of every public name."""
    out = []
    for module, names in API_MODULES.items():
        for name in names:
            obj = _api_object(module, name)
            sig = _signature(obj) if inspect.isfunction(obj) else ""
            out.append((module, name, sig, inspect.getdoc(obj) or ""))
    return out


def api_page() -> str:
    lines = ["# Python API", "",
             "The public names, their signatures and docstrings, taken from the code when the site is built. "
             "`binlogkit` frames and decodes events one file at a time; `binlogkit.api` holds the calls "
             "the commands wrap, with the same parameter names. Errors are one tree: every damaged input "
             "raises a `BinlogError` (or, from `decode_files`, yields a `Problem`) naming file, offset and "
             "event. The package is typed (`py.typed`).", ""]
    for module, name, sig, doc in api_entries():
        kind = "class" if sig == "" else "def"
        lines += [f"## `{module}.{name}`", "", "```python", f"{kind} {name}{sig}" if kind == "def" else f"class {name}",
                  "```", "", doc.replace("``", "`"), ""]
    return "\n".join(lines)


def pages() -> dict[str, str]:
    """Site path -> Markdown of every generated page."""
    out = {f"{COMMANDS_DIR}/index.md": commands_index(), "reference/python-api.md": api_page()}
    for name in command_names():
        out[f"{COMMANDS_DIR}/{name}.md"] = command_page(name)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/doc_reference.py OUT_DIR", file=sys.stderr)
        return 2
    for rel, text in pages().items():
        path = Path(argv[0]) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The audit as a page people look at: one self-contained HTML file (no network) with a timeline
of each series (files as bars over the time they span; gaps, incidents, torn or partial
transactions, checksum failures and duplicates marked where they are, details on hover and
click), GTID coverage per stream, and the summary tables. ``model.py`` is the pure arithmetic,
``template.py`` the Jinja2 template; ``render(result)`` returns the page's text.
"""

from __future__ import annotations

import os

from .model import build


def render(result: dict, *, title: str = "binlogkit audit") -> str:
    """The HTML page of an audit result (``binlogkit.audit.run_local`` / the Spark job)."""
    import jinja2

    from .template import TEMPLATE

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.from_string(TEMPLATE).render(**build(result, title=title))


def write(result: dict, path: str | os.PathLike[str], *, title: str = "binlogkit audit") -> None:
    """Write the page to ``path`` through ``binlogkit.writing.safeio`` (folder lock, no links, exclusive
    temporary file, atomic replace keeping an existing file's owner and mode)."""
    from ..writing.safeio import SafeDir

    page = render(result, title=title).encode("utf-8")
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    with SafeDir(folder) as d, d.locked():
        d.target(name)  # refuses a link or anything but a regular file where the page goes
        d.replace(name, page, new_mode=0o644)


__all__ = ["build", "render", "write"]

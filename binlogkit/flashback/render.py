"""flashback's result as text: one summary line (stdout) and its warnings (stderr)."""

from __future__ import annotations

import os
from typing import Iterator

SHOWN = 10   # statements left apart that the notes name one by one


def summary_line(res) -> str:
    gt = f" ({res.first_gtid} .. {res.last_gtid})" if res.first_gtid else ""
    return (f"{res.output}: {res.undone} undo transaction(s) of {res.transactions} selected{gt}, "
            f"{res.rows} row(s), {res.events} events, {res.bytes} bytes")


def notes(res) -> Iterator[str]:
    """What was left out, later changes the replay would overwrite, where the replaced file is."""
    for st in res.skipped:
        where = st["gtid"] or f"{os.path.basename(st['file'])}:{st['start']}"
        yield f"left out (--skip-statements): {where} {st['statement'][:100]!r}"
    apart = getattr(res, "outside", None) or []
    if apart:
        yield (f"left as they are: {len(apart)} statement(s) or XA transaction(s) in the range that touch no table "
               "of --database / --table (DDL of other tables, XA transactions of other tables' rows)")
    for st in apart[:SHOWN]:
        where = st["gtid"] or f"{os.path.basename(st['file'])}:{st['start']}"
        yield f"  not a filtered table's: {where} {' '.join(st['statement'].split())[:100]!r}"
    if len(apart) > SHOWN:
        yield f"  ... and {len(apart) - SHOWN} more (--json lists them all: outside)"
    later = res.later or {}
    for c in later.get("conflicts", ()):
        where = f"{c['gtid'] + ' ' if c['gtid'] else ''}({os.path.basename(c['file'])}:{c['offset']})"
        what = f"{c['rows']} row(s)" if c["rows"] is not None else "rows (not compared: too many to track, or MINIMAL images)"
        yield (f"warning: a later transaction {where} changed {what} of {c['table']} that the undo puts back: "
               "replaying overwrites that later change (tables with a key) or stops on it (row not found)")
    if later.get("total", 0) > len(later.get("conflicts", ())):
        yield f"warning: ... {later['total'] - len(later['conflicts'])} more later change(s) like these"
    if later.get("note"):
        yield f"warning: later changes {later['note']}"
    if res.backup:
        yield f"the file it replaced is in {res.backup}"

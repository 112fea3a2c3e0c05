"""The audit's text report (the CLI and the Spark job print the same): pure, lines out.

Nothing is cut: a GTID set or a detail longer than its column is wrapped onto the next lines
(at a comma or a space; a piece longer than the column stays whole), so every character of the
result document's text reaches the reader. Lines are yielded one by one (``lines``): a result
with very many findings is printed as it is read, not built as one string first."""

from __future__ import annotations

import os
import re
from typing import Iterator

GTID_WIDTH = 60    # the GTID column of the series table
DETAIL_WIDTH = 110  # the detail column of the findings table
_WORDS = re.compile(r"[^ ,]*[ ,]*")
_GTIDS = re.compile(r"[^ ,:]*[ ,:]*")  # a MySQL set's intervals are separated by colons


def wrap(text: str, width: int, pieces: re.Pattern = _WORDS) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after a comma or a space (or
    what ``pieces`` ends at); a piece longer than ``width`` keeps its own line whole.
    ``"".join`` of the lines, spaces at the breaks aside, gives ``text`` back."""
    lines: list[str] = []
    cur = ""
    for piece in pieces.findall(text):
        if not piece:
            continue
        if cur and len(cur) + len(piece.rstrip()) > width:
            lines.append(cur.rstrip(" "))
            cur = ""
        cur += piece
    if cur or not lines:
        lines.append(cur.rstrip(" "))
    return lines


def lines(result: dict, *, max_rows: int | None = None) -> Iterator[str]:
    """The report's lines; ``max_rows`` (None: all) series and findings, the rest counted."""
    c = result["counts"]
    yield f"{result['files']} files, {result['bytes']:,} bytes: {c['error']} errors, {c['warning']} warnings"
    names = list(result["summary"])
    common = os.path.commonpath(names) if len(names) > 1 else os.path.dirname(names[0]) if names else ""
    short = {n: os.path.relpath(n, common) if common else n for n in names}
    width = max([len(v) for v in short.values()] + [6])
    yield f"{'series':<{width}} {'files':>5} {'bytes':>12}  GTIDs covered"
    pad = " " * (width + 1 + 5 + 1 + 12 + 2)
    for name, s in list(result["summary"].items())[:max_rows]:
        covered = s["gtids_covered"] or "-"
        if covered.endswith("..."):  # the record keeps 4 KB of a set with very many holes: say so
            covered += f" ({s['gtid_intervals']:,} intervals in all; each hole is a gtid_gap finding)"
        first, *rest = wrap(covered, GTID_WIDTH, _GTIDS)
        yield f"{short[name]:<{width}} {s['files']:>5} {s['bytes']:>12,}  {first}"
        for more_line in rest:
            yield pad + more_line
    shown = len(names) if max_rows is None else min(len(names), max_rows)
    more = len(names) - shown + result.get("series_omitted", 0)
    if more:
        yield f"... and {more:,} more series (--json or --output for all)"
    findings = result["findings"]
    if findings:
        yield ""
        yield f"{'severity':<8} {'kind':<20} {'where':<48} detail"
        pad = " " * (8 + 1 + 20 + 1 + 48 + 1)
        for f in findings[:max_rows]:
            first, *rest = wrap(f["detail"], DETAIL_WIDTH)
            yield f"{f['severity']:<8} {f['kind']:<20} {where(f, short):<48} {first}"
            for more_line in rest:
                yield pad + more_line
        shown = len(findings) if max_rows is None else min(len(findings), max_rows)
        more = len(findings) - shown + result.get("findings_omitted", 0)
        if more:
            yield f"... and {more:,} more (--json or --output for all)"


def table(result: dict, *, max_rows: int | None = None) -> list[str]:
    """``lines`` as a list."""
    return list(lines(result, max_rows=max_rows))


def where(f: dict, short: dict[str, str] | None = None) -> str:
    """The place of a finding: ``file@offset``; for a missing file its series' folder, its name
    and its neighbours; for a series-wide finding the series."""
    place = f.get("place") or ""
    if f["file"] or not f["series"]:
        return place
    series = (short or {}).get(f["series"], f["series"])
    folder = os.path.dirname(series)
    return f"{folder}/{place}" if folder and place else place or series

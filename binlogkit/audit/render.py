"""The audit's text report (the CLI and the Spark job print the same): pure, lines out."""

from __future__ import annotations

import os


def table(result: dict, *, max_rows: int = 200) -> list[str]:
    c = result["counts"]
    out = [f"{result['files']} files, {result['bytes']:,} bytes: {c['error']} errors, {c['warning']} warnings"]
    names = list(result["summary"])
    common = os.path.commonpath(names) if len(names) > 1 else os.path.dirname(names[0]) if names else ""
    short = {n: os.path.relpath(n, common) if common else n for n in names}
    width = max([len(v) for v in short.values()] + [6])
    out.append(f"{'series':<{width}} {'files':>5} {'bytes':>12}  GTIDs covered")
    for name, s in list(result["summary"].items())[:max_rows]:
        out.append(f"{short[name]:<{width}} {s['files']:>5} {s['bytes']:>12,}  {(s['gtids_covered'] or '-')[:60]}")
    more = max(0, len(names) - max_rows) + result.get("series_omitted", 0)
    if more:
        out.append(f"... and {more:,} more series (--json or --output for all)")
    findings = result["findings"]
    if findings:
        out.append("")
        out.append(f"{'severity':<8} {'kind':<20} {'where':<48} detail")
        for f in findings[:max_rows]:
            out.append(f"{f['severity']:<8} {f['kind']:<20} {where(f, short):<48} {f['detail'][:110]}")
        more = len(findings) - max_rows if len(findings) > max_rows else 0
        more += result.get("findings_omitted", 0)
        if more:
            out.append(f"... and {more:,} more (--json or --output for all)")
    return out


def where(f: dict, short: dict[str, str] | None = None) -> str:
    """The place of a finding: ``file@offset``; for a missing file its series' folder, its name
    and its neighbours; for a series-wide finding the series."""
    place = f.get("place") or ""
    if f["file"] or not f["series"]:
        return place
    series = (short or {}).get(f["series"], f["series"])
    folder = os.path.dirname(series)
    return f"{folder}/{place}" if folder and place else place or series

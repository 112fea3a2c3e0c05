"""The export summary as a short table for people (``--json`` gives the document itself)."""

from __future__ import annotations


def render(s: dict) -> str:
    lines = [f"exported {s['rows']:,} row changes of {s['transactions']:,} transactions from {s['files']} files "
             f"({s['bytes']:,} bytes) to {s['output']} in {s['seconds']:.1f} s",
             "", f"{'table':<40} {'insert':>12} {'update':>12} {'delete':>12}"]
    for name, ops in s["tables"].items():
        lines.append(f"{name:<40} {ops['insert']:>12,} {ops['update']:>12,} {ops['delete']:>12,}")
    lines.append("")
    lines.append(f"statements: {s['statements']:,}   schema versions: {s['schema_versions']}   parts: {s['parts']}   "
                 f"rolled back: {s['rolled_back']}   outside the filters: {s['filtered_out']}")
    if s.get("xa_prepared"):
        lines.append(f"XA PREPARE groups not exported: {s['xa_prepared']}")
    for t in s["incomplete"]:
        lines.append(f"partial transaction {t['gtid'] or ''} at {t['file']}:{t['offset']}: not exported")
    for p in s["problems"]:
        lines.append(f"problem ({p['kind']}): {p['file']}:{p['offset']}: {p['message']}")
    return "\n".join(lines)

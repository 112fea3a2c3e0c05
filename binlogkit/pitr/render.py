"""The plan as text for people (the CLI prints it): pure, lines out."""

from __future__ import annotations

import os


def _at(path: str | None, pos: int | None) -> str:
    return f"{os.path.basename(path)}:{pos}" if path else "-"


def lines(doc: dict) -> list[str]:
    out = [f"reachable: {'yes' if doc['reachable'] else 'NO'}  ({doc['flavor']}, series {doc['series']})"]
    st, sp = doc["start"], doc["stop"]
    if st:
        src = st["origin"]
        if st.get("backup"):
            b = st["backup"]
            src = f"backup info: {b['file']}:{b['position']}" + (f", GTIDs {b['gtids']}" if b.get("gtids") else "")
        out.append(f"start:  {_at(st['file'], st['position'])}  after GTID state {st['gtids'] or '(empty)'}  ({src})")
    if sp:
        out.append(f"stop:   {_at(sp['file'], sp['position'])}  target {sp['target']}: {sp['reason']}")
        if sp.get("before"):
            b = sp["before"]
            out.append(f"        stops before {b['gtid'] or 'transaction'} at {_at(b['file'], b['offset'])} ({b['why']})")
    files = doc["files"]
    if files:
        names = [os.path.basename(f) for f in files]
        span = names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}"
        out.append(f"replay: {len(files)} file{'s' if len(files) != 1 else ''} ({span}), "
                   f"{doc['transactions']:,} transactions, {doc['bytes']:,} bytes")
    probs = doc["problems"]
    if probs:
        out.append(f"problems ({len(probs)}):")
        for p in probs[:200]:
            out.append(f"  {p['severity']:<7} {p['kind']:<22} {p['place'] or '-':<40} {p['detail']}")
        if len(probs) > 200:
            out.append(f"  ... and {len(probs) - 200:,} more (--json for all)")
    else:
        out.append("problems: none")
    for n in doc.get("notes") or ():
        out.append(f"note: {n}")
    if doc["command"] and doc["reachable"]:
        out.append("command:")
        out.append(f"  {doc['command']}")
    elif doc["command"]:
        out.append("command (NOT safe to run: the archive cannot reach the target, see the problems):")
        out.append(f"  {doc['command']}")
    return out

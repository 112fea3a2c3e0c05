"""Where an archive stops being whole: the audit's findings (missing file, rotate mismatch,
position gap, GTID gap) as the first place a mirror may not pass (pure over the findings)."""

from __future__ import annotations

from .props import order_key

GAP_KINDS = ("missing_file", "rotate_mismatch", "position_gap", "gtid_gap")


def first_gap(findings: list[dict]) -> tuple[tuple, dict] | None:
    """(order key of the first place past a gap, the finding), None when the archive is whole.
    A transaction that starts at or after that place is not applied."""
    best: tuple[tuple, dict] | None = None
    for f in findings:
        if f.get("severity") != "error" or f.get("kind") not in GAP_KINDS:
            continue
        if f.get("file"):
            key = order_key(f["file"], int(f.get("offset") or 0))
        elif f["kind"] == "missing_file":
            key = order_key(f["detail"].split(" is missing", 1)[0], 0)
        else:
            continue
        if best is None or key < best[0]:
            best = (key, f)
    return best


def audit_gap(inputs) -> tuple[tuple, dict] | None:
    """``first_gap`` of the audit of ``inputs`` (in this process)."""
    from ...audit import run_local

    return first_gap(run_local(inputs, jobs=1)["findings"])

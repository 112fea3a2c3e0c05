"""pull's progress reports (``pull(report=...)``) as lines: (text, for stderr, ends a \\r status line)."""

from __future__ import annotations

import json
import time


def line(ev: dict, cfg, *, as_json: bool, tty: bool) -> tuple[str, bool] | None:
    """The line for one report, or None (a status without a terminal). A status on a terminal
    is a ``\\r`` line (ending without a newline)."""
    kind = ev.get("event")
    nl = "\n" if tty else ""
    if as_json:
        return json.dumps({"time": round(time.time(), 3), **ev}), False
    if kind == "status":
        if not tty:
            return None
        el = max(ev["elapsed_s"], 1e-3)
        lag = "-" if ev["lag_s"] is None else f"{ev['lag_s']}s"
        return (f"\r{ev['file']}:{ev['position']}  {ev['bytes'] / el / 1e6:.1f} MB/s  "
                f"{ev['events'] / el:.0f} events/s  lag {lag}   "), True
    if kind == "repair":
        what = (f"removed {ev['file']} ({ev['cut_from']} bytes, {ev['reason']}); it is fetched again from its start"
                if ev.get("removed") else
                f"repaired {ev['file']}: cut from {ev['cut_from']} to {ev['position']} bytes ({ev['reason']})")
        return (what
                + (f"; re-fetching {', '.join(ev['dropped_gtids'])}" if ev["dropped_gtids"] else "")), True
    if kind == "start":
        tls = f" over {ev['tls']} ({cfg.tls.mode.value})" if ev.get("tls") else ""
        return f"pulling from {cfg.host}:{cfg.port} ({ev['server_version']}){tls} at {ev['file']}:{ev['position']}", True
    if kind == "reconnect":
        return f"{nl}connection lost ({ev['reason']}); reconnecting in {ev['in_s']:.1f}s", True
    if kind == "refetch":
        return ev["reason"], True
    if kind == "reconnected":
        return f"reconnected; resuming at {ev['file']}:{ev['position']}", True
    if kind == "done":
        return (f"{nl}{ev['outcome']}: {ev['file']}:{ev['position']}, {ev['bytes']} bytes, "
                f"{ev['events']} events, {ev['transactions']} transactions, {ev['fsyncs']} fsyncs, "
                f"{ev['acks']} acks"), True
    return None

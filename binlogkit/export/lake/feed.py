"""What the ``binlogkit pull`` child of ``export --follow --host`` is doing, from its reports.

The follower runs pull with ``--json`` and gives each line it prints (``pull.pull``'s reports:
start, status, reconnect, reconnected, rotate, done) to ``PullState.take``. The follower's status
(the ``--status-file`` JSON and the terminal line) then carries ``pull``: whether pull is
``starting``, ``streaming``, ``reconnecting`` (the primary cannot be reached, or dropped the
dump: the last reason, the seconds to the next try — pull's backoff, doubling up to 30 s —,
how many tries failed in a row and since when) or ``stopped``. Without it a follower whose pull
cannot get back to the primary reports ``lag_seconds`` 0 (it has applied all pull wrote) while
the primary moves on. Pure: the caller reads the pipe and gives the time.
"""

from __future__ import annotations

import json
import threading


class PullState:
    """The last state pull reported, as a dict (``doc``); thread-safe (a reader thread takes the
    lines, the follower's loop reads ``doc``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._doc: dict = {"state": "starting", "file": None, "position": None, "reconnects": 0}

    def take_line(self, text: str, now: float) -> dict | None:
        """One line of pull's stdout (``--json``): the report it holds, taken, or None (not a
        report: a line of another kind is left to the caller)."""
        try:
            ev = json.loads(text)
        except ValueError:
            return None
        if not isinstance(ev, dict) or "event" not in ev:
            return None
        self.take(ev, now)
        return ev

    def take(self, ev: dict, now: float) -> None:
        kind = ev.get("event")
        with self._lock:
            d = dict(self._doc)
            if ev.get("file") is not None:
                d["file"], d["position"] = ev.get("file"), ev.get("position", d.get("position"))
            if kind in ("start", "reconnected"):
                if kind == "reconnected":
                    d["reconnects"] = d.get("reconnects", 0) + 1
                d["state"] = "streaming"
                for k in ("reason", "retry_in_s", "retry_at", "failed_in_a_row", "since"):
                    d.pop(k, None)
            elif kind == "status":
                d["state"] = "streaming"
                d["primary_lag_seconds"] = ev.get("lag_s")
            elif kind == "reconnect":
                d["failed_in_a_row"] = d.get("failed_in_a_row", 0) + 1 if d["state"] == "reconnecting" else 1
                if d["state"] != "reconnecting":
                    d["since"] = round(now, 3)
                d["state"] = "reconnecting"
                d["reason"] = ev.get("reason")
                d["retry_in_s"] = ev.get("in_s")
                d["retry_at"] = round(now + float(ev.get("in_s") or 0), 3)
            elif kind == "done":
                d["state"] = "stopped"
            self._doc = d

    @property
    def doc(self) -> dict:
        with self._lock:
            return dict(self._doc)


def describe(doc: dict, now: float) -> str:
    """The terminal line's words for pull's state ``doc`` (empty while it streams)."""
    if doc.get("state") != "reconnecting":
        return ""
    since = max(0.0, now - float(doc.get("since") or now))
    nxt = max(0.0, float(doc.get("retry_at") or now) - now)
    return (f"; pull cannot reach the primary for {since:.0f} s ({doc.get('reason')}), "
            f"{doc.get('failed_in_a_row', 1)} tries failed, next in {nxt:.0f} s")

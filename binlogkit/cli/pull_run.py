"""What ``binlogkit pull`` does with its options (``pull.py`` declares them for click,
``entry.py`` reads a plain command line with the table generated from them): no click here."""

from __future__ import annotations

import sys

from .exits import EXIT_OK, echo_line, fails


@fails()  # refused, a PullError or UsageError: 2; a damaged event received: 1
def run(as_json, **options) -> None:
    import signal

    from ..pull import pull as run_pull
    from ..pull.render import line
    from ..pull.settings import config

    cfg = config(**options)
    stopping = []
    signal.signal(signal.SIGINT, lambda signum, _frame: stopping.append(signum))
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopping.append(signum))
    tty = sys.stderr.isatty()

    def report(ev: dict) -> None:
        out = line(ev, cfg, as_json=as_json, tty=tty)
        if out is not None and ev.get("event") == "status" and not as_json:
            sys.stderr.write(out[0])
            sys.stderr.flush()
        elif out is not None:
            echo_line(out[0], err=out[1])
    run_pull(cfg, report=report, stop=lambda: bool(stopping))
    sys.exit(EXIT_OK)

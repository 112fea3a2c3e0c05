"""Follower processes (``binlogkit export --follow``) a lab test starts: ``STARTED`` holds them and
the autouse fixture ``reap_followers`` (import it into the test module) stops those a failed test
left running (SIGTERM: each stops its pull child too; SIGKILL after a minute)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def reap_followers():
    yield
    while STARTED:
        p = STARTED.pop()
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def lock_free(folder: Path) -> bool:
    """Nobody holds ``folder``'s lock (pull's): a follower's pull child has stopped."""
    import fcntl

    if not folder.exists():
        return True
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def mirror_rows(fmt: str, wh: Path, cols: tuple) -> list:
    """The mirror's ``lab.small`` as sorted tuples of ``cols`` ([] until the table is made)."""
    from binlogkit.export.lake.mirror import open_sink

    try:
        rows = open_sink(fmt, str(wh)).read("lab", "small").to_pylist()
    except Exception:        # not made yet
        return []
    return sorted(tuple(r.get(c) for c in cols) for r in rows)


def pulled_whole(primary, folder: Path) -> bool:
    """``folder`` (pull's) holds the primary's newest binlog whole."""
    last = primary.query("SHOW BINARY LOGS")[-1]
    p = folder / last["Log_name"]
    return p.exists() and p.stat().st_size == int(last["File_size"])

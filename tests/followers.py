"""Follower processes (``binlogkit export --follow``) a lab test starts: ``STARTED`` holds them and
the autouse fixture ``reap_followers`` (import it into the test module) stops those a failed test
left running (SIGTERM: each stops its pull child too; SIGKILL after a minute)."""

from __future__ import annotations

import signal
import subprocess

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

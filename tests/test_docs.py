"""The examples in docs/ are what the commands print today (scripts/doc_examples.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_docs_examples_match_the_commands_output():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "doc_examples.py"), "--check"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_example_block_is_checked():
    """A block that shows a binlogkit command is marked, so the check covers it."""
    for md in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        lines = md.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("$ binlogkit"):
                j = i
                while not lines[j].startswith("```"):
                    j -= 1
                assert lines[j - 1].startswith("<!-- example: "), f"{md.name}:{i + 1} is not checked"

"""Which modules a ``binlogkit`` command imports: the start-up tests of decode and pull."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import atexit, sys\n"
         "def _dump():\n"
         "    with open(out, 'w') as fh:\n"
         "        fh.write('\\n'.join(sorted(n for n, m in sys.modules.items() if m is not None)))\n"
         "atexit.register(_dump)\n"
         "out = sys.argv[1]; sys.argv = ['binlogkit'] + sys.argv[2:]\n"
         "from binlogkit.cli.entry import main   # the console script's\n"
         "main()\n")


def imported(tmp_path: Path, *args: str, env: dict | None = None,
             text: bool = False) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``binlogkit ARGS`` in a child (no BINLOGKIT_ switches inherited, ``env`` on top);
    what it had imported at exit."""
    out = tmp_path / "modules.txt"
    base = {k: v for k, v in os.environ.items() if not k.startswith("BINLOGKIT_")}
    res = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True, text=text, cwd=ROOT,
                         timeout=120, env={**base, "PYTHONPATH": str(ROOT), **(env or {})})
    return res, set(out.read_text().split("\n"))

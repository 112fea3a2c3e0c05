"""docs/report.png: the HTML report of the lab's faulty archive, as headless Chromium shows it.

    python scripts/report_screenshot.py [OUT.png]      # make report-screenshot

The archive is ``fixtures.faults.generate`` (seed 7: every fault kind), dated one second per
transaction from 2026-11-18 11:06:40 UTC; ``binlogkit audit --report`` writes the page.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(out: Path) -> None:
    from fixtures.faults import generate

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        sys.exit("chromium is not installed (Debian: apt-get install chromium; scripts/install-deps.sh does it)")
    with tempfile.TemporaryDirectory(prefix="binlogkit-report-") as tmp:
        arch = Path(tmp) / "archive"
        generate(arch, files=10, trx_per_file=120, seed=7, clock=1_795_000_000)
        page = Path(tmp) / "audit.html"
        subprocess.run([sys.executable, "-m", "binlogkit.cli", "audit", "--report", str(page), "archive"],
                       cwd=tmp, stdout=subprocess.DEVNULL, check=False)
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1200,1000",
                        f"--user-data-dir={tmp}/chrome", f"--screenshot={out.resolve()}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report.png")

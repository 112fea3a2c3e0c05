"""The audit's HTML report, opened in a real headless Chromium (Debian's ``chromium``): the
rendered page carries a mark for every fault the generator injected, at its file and offset;
it loads nothing from the network; binlog text stays text; thousands of files stay drawable.
Screenshots are kept in build/test-artifacts/."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.report import build, render

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts"
CLOCK = 1_795_000_000  # 2026-11-18 11:06:40 UTC


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.environ.get("CI"):
        pytest.fail("CI run without chromium: `make test` (scripts/install-deps.sh) must install Debian's chromium")
    pytest.skip("chromium is not installed (scripts/install-deps.sh installs it as root)")


def browse(page: Path, *, screenshot: Path | None = None, size: str = "1280,1100") -> str:
    """The DOM after the page's script ran, from a headless Chromium with every host name
    unresolvable (a page that needed the network would show it)."""
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={size}", f"--user-data-dir={page.parent / '.chrome'}"]
    if screenshot:
        subprocess.run(args + [f"--screenshot={screenshot}", page.as_uri()], check=True, capture_output=True, timeout=120)
    out = subprocess.run(args + ["--dump-dom", page.as_uri()], check=True, capture_output=True, text=True, timeout=120)
    return out.stdout


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.items.append((tag, dict(attrs)))


def elements(dom: str) -> list[tuple[str, dict]]:
    p = Elements()
    p.feed(dom)
    return p.items


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_every_injected_fault_is_marked_in_the_rendered_page(tmp_path):
    from fixtures.faults import generate

    m = generate(tmp_path / "arch", files=10, trx_per_file=120, seed=7, clock=CLOCK)
    page = tmp_path / "audit.html"
    res = CliRunner().invoke(main, ["audit", "--report", str(page), str(tmp_path / "arch")])
    assert res.exit_code == 1, res.output
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report-faults.png"
    dom = browse(page, screenshot=shot)
    assert png_size(shot) == (1280, 1100) and shot.stat().st_size > 20_000
    els = elements(dom)
    marks = [a for t, a in els if "mark" in (a.get("class") or "").split()]
    for e in m["expected"]:
        if e["file"] is None:  # a deleted file: a gap region naming it
            name = f"mariadb-bin.{m['faults']['delete_file']:06d}"
            assert any(a["data-kind"] == "missing_file" and name in a.get("data-missing", "").split() for a in marks), e
        else:
            assert any(a["data-kind"] == e["kind"] and a.get("data-file") == e["file"]
                       and a.get("data-offset") == str(e["offset"]) and a["data-severity"] == e["severity"]
                       for a in marks), e
    # nothing else is marked
    assert len(marks) == len(m["expected"])
    # one bar per file, the findings table, the coverage row with its two holes
    assert sum(1 for t, a in els if t == "rect" and "bar" in (a.get("class") or "")) == 9
    assert sum(1 for t, a in els if t == "tr" and a.get("class") == "finding") == len(m["expected"])
    cov = [a for t, a in els if t == "tr" and a.get("class") == "coverage"]
    assert [(c["data-key"], c["data-holes"]) for c in cov] == [("0-1", "2")]


def test_the_page_is_self_contained_and_binlog_text_stays_text(tmp_path):
    nasty = '<script>alert("x")</script><img src="http://example.invalid/x.png">'
    result = {"findings": [{"kind": "incident", "severity": "error", "file": "/a/mariadb-bin.000001", "offset": 400,
                            "detail": nasty, "gtids": [], "source": None, "series": "/a/mariadb-bin",
                            "place": "mariadb-bin.000001@400"}],
              "summary": {"/a/mariadb-bin": {"files": 1, "bytes": 1000, "events": 10, "first_timestamp": CLOCK,
                                             "last_timestamp": CLOCK + 60, "relay": False, "gtids_covered": "0-1-9",
                                             "timeline": [[nasty, 1, CLOCK, CLOCK + 60, 1000, 10, 9]],
                                             "coverage": {"0-1": [[1, 9]]}}},
              "counts": {"error": 1, "warning": 0, "info": 0}, "files": 1, "bytes": 1000, "findings_omitted": 0}
    html = render(result)
    assert "<script>alert" not in html and "<img" not in html and "&lt;script&gt;" in html
    import re

    loads = re.findall(r"""(?:src|href|action)\s*=\s*["']?[a-z]+:|url\(\s*["']?[a-z]+:|<link|@import""", html, re.I)
    assert loads == []  # nothing is fetched: no URL in any attribute or style that loads
    page = tmp_path / "p.html"
    page.write_text(html)
    dom = browse(page)
    assert not any(t == "img" for t, _a in elements(dom))
    assert "alert(" in dom  # shown, as text


def test_thousands_of_files_are_drawn_in_bins(tmp_path):
    n = 20_000
    rows = [[f"mariadb-bin.{k:06d}", k, CLOCK + 30 * k, CLOCK + 30 * k + 29, 1 << 20, 5000, 900] for k in range(1, n + 1)
            if k != 777]
    findings = [{"kind": "checksum_mismatch", "severity": "error", "file": f"/x/mariadb-bin.{k:06d}", "offset": 1000,
                 "detail": "CRC32 does not match", "gtids": [], "source": None, "series": "/x/mariadb-bin",
                 "place": f"mariadb-bin.{k:06d}@1000"} for k in range(1, n + 1, 4)]  # 777 too: its file is missing
    findings.append({"kind": "missing_file", "severity": "error", "file": None, "offset": None,
                     "detail": "/x/mariadb-bin.000777 is missing between 000776 and 000778", "gtids": [],
                     "source": None, "series": "/x/mariadb-bin",
                     "place": "mariadb-bin.000777 missing, between .000776 and .000778"})
    result = {"findings": findings, "summary": {"/x/mariadb-bin": {
        "files": len(rows), "bytes": sum(r[4] for r in rows), "events": 5000 * len(rows), "first_timestamp": CLOCK,
        "last_timestamp": CLOCK + 30 * n, "relay": False, "gtids_covered": "0-1-1", "timeline": rows,
        "coverage": {"0-1": [[1 + 10 * k, 9 + 10 * k] for k in range(50_000)]}}},
        "counts": {"error": len(findings), "warning": 0, "info": 0}, "files": len(rows), "bytes": 0,
        "findings_omitted": 0}
    model = build(result)
    s = model["series"][0]
    assert s["binned"] and len(s["bars"]) <= 260 and sum(b["n"] for b in s["bars"]) == len(rows)
    assert len(s["marks"]) <= 400 and sum(m["count"] for m in s["marks"]) == len(findings) - 2
    assert [f["place"] for f in s["wide"]] == ["mariadb-bin.000777@1000"]  # no bar to mark: said in words
    assert len(s["gaps"]) == 1 and s["gaps"][0]["names"] == ["mariadb-bin.000777"]
    assert len(s["coverage"][0]["segs"]) <= 1001 and s["coverage"][0]["holes"] == 49_999
    html = render(result)
    assert len(html) < 3_000_000
    page = tmp_path / "big.html"
    page.write_text(html)
    dom = browse(page, screenshot=ARTIFACTS / "report-20000-files.png")
    els = elements(dom)
    assert sum(1 for t, a in els if t == "rect" and "bar" in (a.get("class") or "")) == len(s["bars"])


def test_report_written_safely(tmp_path):
    arch = Path(__file__).resolve().parent.parent / "fixtures"
    from fixtures import store

    src = str(store.materialize("replication-gtid") / "primary")
    page = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["audit", "--report", str(page), src]).exit_code == 0
    first = page.read_text()
    assert "No findings." in first and first.count('class="bar ') == 16
    os.chmod(page, 0o600)
    assert CliRunner().invoke(main, ["audit", "--report", str(page), src]).exit_code == 0
    assert oct(page.stat().st_mode & 0o777) == "0o600"  # replaced, mode kept
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    res = CliRunner().invoke(main, ["audit", "--report", str(link), src])
    assert res.exit_code == 2 and "link" in res.output and not (tmp_path / "elsewhere.html").exists()
    # the Spark job's writer (its --output DIR/report.html and --report)
    from binlogkit.audit import job, run_local

    job._write_report(run_local([src], jobs=1), str(tmp_path / "job.html"))
    assert (tmp_path / "job.html").read_text() == first.replace(first, (tmp_path / "job.html").read_text())
    assert 'class="bar ' in (tmp_path / "job.html").read_text()
    del arch

"""The audit's HTML report, opened in a real headless Chromium (Debian's ``chromium``): the
rendered page carries a mark for every fault the generator injected, at its file and offset;
it loads nothing from the network; binlog text stays text; thousands of files stay drawable.
Screenshots are kept in build/test-artifacts/."""

from __future__ import annotations

import json
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


def _summary(k: int, t0: int, *, size: int = 1 << 20) -> dict:
    """A file's summary as the audit's per-file pass gives it (the fields the report reads)."""
    return {"file": f"/x/mariadb-bin.{k:06d}", "number": k, "first_timestamp": t0, "last_timestamp": t0 + 29,
            "size": size, "events": 5000, "transactions": 900}


def _record(files: list[dict], gtids: dict) -> dict:
    from binlogkit.report import digest

    return {"files": len(files), "bytes": sum(f["size"] for f in files), "events": sum(f["events"] for f in files),
            "first_timestamp": files[0]["first_timestamp"], "last_timestamp": files[-1]["last_timestamp"],
            "relay": False, "gtids_covered": "0-1-9", "timeline": digest.timeline(files),
            "coverage": digest.coverage(gtids)}


def test_the_page_is_self_contained_and_binlog_text_stays_text(tmp_path):
    nasty = '<script>alert("x")</script><img src="http://example.invalid/x.png">'
    rec = _record([_summary(1, CLOCK)], {"0-1": [[1, 9]]})
    rec["timeline"][0][0] = nasty + ".000001"
    result = {"findings": [{"kind": "incident", "severity": "error", "file": "/x/mariadb-bin.000001", "offset": 400,
                            "detail": nasty, "gtids": [], "source": None, "series": "/x/mariadb-bin",
                            "place": "mariadb-bin.000001@400"}],
              "summary": {"/x/mariadb-bin": rec},
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
    files = [_summary(k, CLOCK + 30 * k) for k in range(1, n + 1) if k != 777]
    findings = [{"kind": "checksum_mismatch", "severity": "error", "file": f"/x/mariadb-bin.{k:06d}", "offset": 1000,
                 "detail": "CRC32 does not match", "gtids": [], "source": None, "series": "/x/mariadb-bin",
                 "place": f"mariadb-bin.{k:06d}@1000"} for k in range(1, n + 1, 4) if k != 777]
    findings.append({"kind": "missing_file", "severity": "error", "file": None, "offset": None,
                     "detail": "/x/mariadb-bin.000777 is missing between 000776 and 000778", "gtids": [],
                     "source": None, "series": "/x/mariadb-bin",
                     "place": "mariadb-bin.000777 missing, between .000776 and .000778"})
    rec = _record(files, {"0-1": [[1 + 10 * k, 9 + 10 * k] for k in range(50_000)]})
    # what reaches the report is bounded: 1000 timeline rows, 1000 coverage bins
    assert len(rec["timeline"]) == 1000 and len(rec["coverage"]["0-1"]["bins"]) == 1000
    assert len(json.dumps(rec)) < 120_000
    result = {"findings": findings, "summary": {"/x/mariadb-bin": rec},
              "counts": {"error": len(findings), "warning": 0, "info": 0}, "files": len(files), "bytes": 0,
              "findings_omitted": 0}
    model = build(result)
    s = model["series"][0]
    assert s["binned"] and len(s["bars"]) <= 260 and sum(b["n"] for b in s["bars"]) == len(files)
    assert sum(b["inside"] for b in s["bars"]) == 1  # 777 is missing inside one bar
    assert len(s["marks"]) <= 400 and sum(m["count"] for m in s["marks"]) == len(findings) - 1
    assert s["wide"] == []
    cov = s["coverage"][0]
    assert cov["holes"] == 49_999 and cov["count"] == 450_000 and len(cov["hole_px"]) <= 1000
    html = render(result)
    assert len(html) < 3_000_000
    page = tmp_path / "big.html"
    page.write_text(html)
    dom = browse(page, screenshot=ARTIFACTS / "report-20000-files.png")
    els = elements(dom)
    bars = [a for t, a in els if t == "rect" and "bar" in (a.get("class") or "")]
    assert len(bars) == len(s["bars"]) and sum(int(a["data-missing-inside"]) for a in bars) == 1


def test_a_missing_file_in_a_small_archive_is_a_gap_between_its_neighbours(tmp_path):
    files = [_summary(k, CLOCK + 100 * k) for k in range(1, 11) if k not in (4, 5)]
    model = build({"findings": [], "summary": {"/x/mariadb-bin": _record(files, {"0-1": [[1, 5], [9, 20]]})},
                   "counts": {"error": 0, "warning": 0, "info": 0}, "files": 8, "bytes": 0, "findings_omitted": 0})
    s = model["series"][0]
    assert not s["binned"] and len(s["bars"]) == 8
    assert [g["names"] for g in s["gaps"]] == [["mariadb-bin.000004", "mariadb-bin.000005"]]
    bar3, bar6 = s["bars"][2], s["bars"][3]
    assert bar3["x"] + bar3["w"] <= s["gaps"][0]["x"] + 0.01 and s["gaps"][0]["x"] + s["gaps"][0]["w"] <= bar6["x"] + 0.01
    assert s["coverage"][0]["hole_text"] == "0-1-6..8"


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
    from binlogkit.audit import run_local
    from binlogkit.spark.jobs import audit as job

    job._write_report(run_local([src], jobs=1), str(tmp_path / "job.html"))
    assert (tmp_path / "job.html").read_text() == first.replace(first, (tmp_path / "job.html").read_text())
    assert 'class="bar ' in (tmp_path / "job.html").read_text()
    del arch

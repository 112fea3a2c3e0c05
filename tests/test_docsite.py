"""The documentation site (mkdocs.yml, `make docs`): it builds in strict mode (every internal
link, anchor and nav entry resolves), its reference pages are what the code says (each command's
page is its `--help`, the Python API page every public name's docstring), no page speaks of
issue numbers, and the built site renders in a real headless Chromium (Debian's ``chromium``),
served on 127.0.0.1, with every asset it asks for there. Screenshots: build/test-artifacts/."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fixtures.scripts import load_script
from test_report import ARTIFACTS, browse

ROOT = Path(__file__).resolve().parent.parent


def _reference():
    return load_script("doc_reference")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra (pip install '.[docs]'; make test installs it)")
    pytest.importorskip("material", reason="the docs extra (pip install '.[docs]'; make test installs it)")
    out = tmp_path_factory.mktemp("site") / "site"
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1"))
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def test_site_builds_strict_with_every_page_in_it(site):
    """Every page of docs/ is in the site (strict mode fails on a page left out of the nav, a
    broken link or anchor), and so is a page per command."""
    ref = _reference()
    for md in (ROOT / "docs").rglob("*.md"):
        assert (site / md.relative_to(ROOT / "docs").with_suffix(".html")).is_file(), md
    for name in ref.command_names():
        assert (site / "reference" / "commands" / f"{name}.html").is_file(), name
    assert (site / "search" / "search_index.json").is_file()


def test_a_broken_link_fails_the_build(tmp_path):
    """Strict mode is on: a link to a page that does not exist stops the build."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "docs", tree / "docs")
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    shutil.copy(ROOT / "mkdocs.yml", tree / "mkdocs.yml")
    (tree / "docs" / "index.md").write_text((tree / "docs" / "index.md").read_text() + "\n[gone](no-such-page.md)\n")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")], cwd=tree,
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1"))
    assert res.returncode != 0 and "no-such-page.md" in res.stdout + res.stderr


def test_each_command_page_is_its_help():
    """The page of each command holds exactly what `binlogkit COMMAND --help` prints."""
    ref = _reference()
    pages = ref.pages()
    names = ref.command_names()
    assert {"decode", "recover", "pull", "export", "flashback", "pitr", "audit"} <= set(names)
    for name in names:
        res = subprocess.run([sys.executable, "-m", "binlogkit", name, "--help"], capture_output=True, text=True,
                             timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80"))
        assert res.returncode == 0, res.stderr
        assert f"```text\n{res.stdout}```" in pages[f"reference/commands/{name}.md"], name
        for sub in ref.subcommand_names(name):   # a group's commands: each its own --help on the page
            res = subprocess.run([sys.executable, "-m", "binlogkit", name, sub, "--help"], capture_output=True,
                                 text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80"))
            assert res.returncode == 0, res.stderr
            assert f"## binlogkit {name} {sub}\n\n```text\n{res.stdout}```" in pages[f"reference/commands/{name}.md"]
    assert {"history", "show"} <= set(ref.subcommand_names("lake"))


def test_every_public_name_is_documented():
    """The Python API page names every public name of `binlogkit` (its __all__) and the calls
    of `binlogkit.api`, each with its own docstring."""
    import inspect

    import binlogkit
    import binlogkit.api

    ref = _reference()
    listed = {(m, n) for m, names in ref.API_MODULES.items() for n in names}
    assert {("binlogkit", n) for n in binlogkit.__all__ if n != "__version__"} <= listed
    api_funcs = {n for n, v in vars(binlogkit.api).items()
                 if inspect.isfunction(v) and v.__module__ == "binlogkit.api" and not n.startswith("_")}
    assert {("binlogkit.api", n) for n in api_funcs} <= listed
    page = ref.api_page()
    for module, name, _sig, doc in ref.api_entries():
        obj = getattr(sys.modules[module], name)
        own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        assert own and own.strip(), f"{module}.{name} has no docstring of its own"
        assert f"## `{module}.{name}`" in page and doc.split("\n")[0].replace("``", "`") in page


def test_exit_codes_page_names_every_code():
    from binlogkit.cli import exits

    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    codes = {v for k, v in vars(exits).items() if k.startswith("EXIT_")}
    assert codes == {0, 1, 2, 3}
    for code in codes:
        assert re.search(rf"^\| `{code}` \|", page, re.M), code


def test_no_page_speaks_of_issue_numbers():
    """User pages speak of the tool, not of its development: no "issue 34", "issue #12", "the issue"."""
    for md in [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]:
        for i, line in enumerate(md.read_text().split("\n"), 1):
            assert not re.search(r"\bissues?\s*#?\d|\bthe issue\b|\bthis issue\b", line, re.I), \
                f"{md.relative_to(ROOT)}:{i}: {line.strip()}"


class _Log(http.server.SimpleHTTPRequestHandler):
    seen: list[tuple[str, int]] = []

    def log_request(self, code="-", size="-"):
        type(self).seen.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, *args):
        pass


# (page, its <title> (the nav's name), its heading, a text of its body)
PAGES = [("index.html", "binlogkit", "binlogkit", "Start here"),
         ("tutorial.html", "Tutorial - binlogkit", "Tutorial: ten minutes with a crashed replica",
          "A replica crashed: what broke?"),
         ("howto/crashed-replica.html", "A replica crashed, resume it - binlogkit",
          "A replica crashed: resume it without losing or doubling a transaction", "next source"),
         ("reference/commands/recover.html", "binlogkit recover - binlogkit", "binlogkit recover",
          "Usage: binlogkit recover [OPTIONS] RELAYDIR")]


def test_pages_render_in_headless_chromium(site):
    """The home page and three others, served on 127.0.0.1 and opened by Chromium with every host
    name unresolvable: the title and heading are there, the theme's styles and scripts loaded
    (no request answered 404), and a screenshot of each is kept."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    handler = type("Handler", (_Log,), {"seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    shots = site.parent / "shots"
    shots.mkdir(exist_ok=True)
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        for page, title, heading, text in PAGES:
            shot = ARTIFACTS / f"docsite-{page.replace('/', '-').replace('.html', '')}.png"
            dom = browse_url(f"{base}/{page}", shots, screenshot=shot)
            plain = dom.replace("&amp;", "&").replace("&#39;", "'")
            assert f"<title>{title}</title>" in plain, (page, re.findall(r"<title>.*?</title>", plain))
            assert re.search(r"<h1[^>]*>" + re.escape(heading), plain), (page, re.findall(r"<h1.*?</h1>", plain))
            assert text in plain, (page, text)
            assert 'class="md-header' in dom and "md-search" in dom, page   # the theme's header and search
            assert shot.stat().st_size > 20_000, shot
    finally:
        server.shutdown()
        server.server_close()
    seen = handler.seen
    assert any(p.endswith(".css") and c == 200 for p, c in seen), seen
    assert any(p.endswith(".js") and c == 200 for p, c in seen), seen
    broken = [(p, c) for p, c in seen if c >= 400 and not p.endswith("favicon.ico")]
    assert not broken, broken


def browse_url(url: str, profile: Path, *, screenshot: Path) -> str:
    from test_report import chromium

    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,1000", f"--user-data-dir={profile / '.chrome'}",
            "--virtual-time-budget=3000"]
    subprocess.run(args + [f"--screenshot={screenshot}", url], check=True, capture_output=True, timeout=120)
    return subprocess.run(args + ["--dump-dom", url], check=True, capture_output=True, text=True, timeout=120).stdout


assert browse  # test_report's browser helpers are the ones used here


def test_readme_first_screen_and_table():
    """The README's first screen (up to its second `##` heading) is at most 60 lines and says how
    to install and shows a tour of five binlogkit commands with their output (checked by
    scripts/doc_examples.py); the capability table has one line per row, at most 400 characters,
    each linking into the docs; the links resolve to pages."""
    text = (ROOT / "README.md").read_text()
    lines = text.split("\n")
    heads = [i for i, l in enumerate(lines) if l.startswith("## ")]
    assert len(heads) >= 2
    first = lines[:heads[1]]
    assert len(first) <= 60, len(first)
    screen = "\n".join(first)
    assert "make demo" in screen and "pip install" in screen
    tour = [l for l in first if l.startswith("$ binlogkit")]
    assert len(tour) == 5, tour
    at = first.index(next(l for l in first if l.startswith("$ binlogkit")))
    assert first[at + 1] and not first[at + 1].startswith("$"), "the tour shows output"
    table = [l for l in lines[heads[1]:] if l.startswith("|")]
    rows = table[2:]
    assert len(rows) >= 10
    for row in rows:
        assert len(row) <= 400, row
        assert re.search(r"\]\(docs/[\w/.-]+\.md(#[\w-]+)?\)", row), row
    for target in re.findall(r"\]\((docs/[\w/.-]+\.md)", text):
        assert (ROOT / target).is_file(), target

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
    for md in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]:
        lines = md.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("$ binlogkit"):
                j = i
                while not lines[j].startswith("```"):
                    j -= 1
                assert lines[j - 1].startswith("<!-- example: "), f"{md.name}:{i + 1} is not checked"


def _python_blocks(md: Path) -> list[str]:
    blocks, cur = [], None
    for line in md.read_text().split("\n"):
        if cur is None and line.strip() == "```python":
            cur = []
        elif cur is not None and line.startswith("```"):
            blocks.append("\n".join(cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def test_readme_python_api_runs_on_damaged_files(tmp_path):
    """The README's Python blocks, run as a reader would, on files that are damaged: the
    examples' own names hold a torn relay log and a binlog with a bad row event."""
    from binlogkit import open_binlog
    from fixtures import store

    relay = (store.materialize("crash-rotation-position") / "relay" / "relay-bin.000005").read_bytes()
    (tmp_path / "relay-bin.000005").write_bytes(relay[:2_000_000])  # torn inside a Write_rows
    src = store.materialize("row-types") / "primary" / "mariadb-bin.000003"
    events = list(open_binlog(str(src)))
    bad = [e for e in events if e.type_name == "DELETE_ROWS_EVENT_V1"][-1]
    data = bytearray(src.read_bytes())
    data[bad.offset + 30] ^= 0xFF  # its checksum no longer matches
    (tmp_path / "mariadb-bin.000042").write_bytes(bytes(data))
    blocks = _python_blocks(ROOT / "README.md")
    assert blocks, "the README has Python examples"
    for code in blocks:
        res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                             timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert res.returncode == 0, res.stderr
        assert "Traceback" not in res.stderr
    out = res.stdout
    assert out.count("damaged:") == 2, out
    assert "mariadb-bin.000042" in out and f" {bad.offset} " in out  # the Problem names file and offset
    assert out.splitlines()[0].startswith("4 ")  # the events before the damage were printed
    assert "damaged: " in out.splitlines()[-1]  # ... and the second file's rows before its damage


def test_problem_answers_what_an_event_loop_reads():
    from binlogkit.api import Problem, decode_files

    from binlogkit.errors import TruncatedEventError

    p = Problem("x", TruncatedEventError("short", offset=7))
    assert (p.rows, p.table, p.rows_text, dict(p.fields), p.name, p.offset, p.problem) == \
        (None, None, None, {}, "PROBLEM", 7, True)
    clean = ROOT / "fixtures" / "mariadb-10.11" / "row-types" / "primary" / "mariadb-bin.000003"
    assert all(not ev.problem for ev in decode_files([clean]))


def test_each_doc_names_the_command_that_makes_its_examples_folder(tmp_path):
    """A doc whose examples read folders (data/, binlogs/, archive/, keys/, schema.sql...) says
    at its top the one command that makes them, and that command makes what the examples use."""
    import re

    from fixtures import docs_data

    made: dict[str, list[str]] = {}
    for md in sorted((ROOT / "docs").rglob("*.md")):
        text = md.read_text()
        # "checkout" examples read the committed fixtures by their paths in a checkout: no folder to make
        used = set(re.findall(r"^<!-- example: (\S+) -->", text, re.M)) - {"checkout"}
        if not used:
            continue
        named = re.findall(r"`python -m fixtures\.docs_data (\S+) DIR`", text.split("\n\n", 2)[1])
        assert named, f"{md.name}: its top does not name the command that makes its examples' folder"
        for setup in used:
            want = "archive" if setup.startswith("s3") else setup
            assert want in named, f"{md.name}: uses {setup}, names {named}"
            if want not in made:
                made[want] = docs_data.make(want, tmp_path / want)
            assert made[want], want
    assert made.keys() >= {"archive", "archive-schema", "row-types-full-metadata", "encrypted-mariadb",
                           "stopped-primary", "crash-rotation-small-position"}
    assert made["archive-schema"] == ["archive/", "schema.sql"] and made["encrypted-mariadb"] == ["binlogs/", "keys/"]
    # the CLI form, as a reader runs it: a fresh interpreter, refusing a folder in use
    res = subprocess.run([sys.executable, "-m", "fixtures.docs_data", "archive", str(tmp_path / "archive")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 2 and "not an empty folder" in res.stderr


def test_by_hand_commands_make_the_examples_folder(tmp_path):
    """Where a doc's top gives, beside `python -m fixtures.docs_data SETUP DIR`, the plain shell
    commands that make the same folder from a checkout's fixtures/ ("by hand: `...`"), those
    commands make exactly what the setup makes: the same names, the same bytes, the same modes."""
    import re

    from fixtures import docs_data

    def tree(root: Path) -> dict:
        return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode & 0o777) if p.is_file() else None
                for p in sorted(root.rglob("*")) if p.name != "fixtures"}

    pairs = set()
    for md in sorted((ROOT / "docs").rglob("*.md")):
        pairs |= set(re.findall(r"`python -m fixtures\.docs_data (\S+) DIR` \(or, staying in a checkout's top folder, "
                                r"by hand: `([^`]+)`\)", md.read_text()))
    assert {s for s, _ in pairs} >= {"archive", "crash-rotation-small-position", "row-types-full-metadata",
                                     "encrypted-mariadb", "stopped-primary"}
    for n, (setup, shell) in enumerate(sorted(pairs)):
        made = tmp_path / f"made{n}"
        docs_data.make(setup, made)
        hand = tmp_path / f"hand{n}"
        hand.mkdir()
        (hand / "fixtures").symlink_to(ROOT / "fixtures")
        res = subprocess.run(["bash", "-c", shell], cwd=hand, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, (setup, res.stderr)
        want, got = tree(made), tree(hand)
        assert got.keys() == want.keys(), (setup, sorted(got.keys() ^ want.keys()))
        for name in want:
            assert got[name] == want[name], (setup, name)

"""scripts/arch_counts.py: the counts of issue 30 run on this tree (every key there; the numbers
change as the work goes on) and its rules on a small tree in the target layout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "arch_counts.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def _keys() -> list[str]:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import arch_counts
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return arch_counts.KEYS


def test_the_repo_has_every_count():
    res = _run("--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    keys = _keys()
    assert list(out["counts"]) == keys
    for k in keys:
        v = out["counts"][k]
        tool = k.startswith("repeated_pairs_duplicates_tool")  # null where the tool is not installed
        assert isinstance(v, int) or (tool and v is None), k
    assert out["layout"] in ("flat", "target")
    table = _run()
    assert table.returncode == 0 and all(k in table.stdout for k in keys)


def test_the_saved_before_counts_have_the_same_keys():
    before = json.loads((ROOT / "docs" / "architecture-counts-before.json").read_text())
    assert list(before["counts"]) == _keys()
    assert before["revision"] == "45c8d83" and before["layout"] == "flat"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / "binlogkit" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_the_rules_on_a_tree_in_the_target_layout(tmp_path):
    _write(tmp_path, {
        "__init__.py": "",
        "flavor.py": "class Flavor:\n    pass\n\ndef of(v):\n    return 'mariadb' in v\n",
        "reading/__init__.py": "",
        "reading/files.py": "def open_input(p):\n    return open(p, 'rb')\n",
        "reading/format.py": "class Format:\n    @classmethod\n    def from_fde_body(cls, b):\n        return cls()\n",
        "reading/source.py": ("from .files import open_input\nfrom .format import Format\n"
                              "def events(p, keys=None):\n    with open_input(p) as fh:\n"
                              "        return Format.from_fde_body(fh.read())\n"),
        "reading/boundary.py": ("XID_EVENT = 16\n\ndef _classify(q):\n    return q\n\n"
                                "def step(code, q):\n    return code == XID_EVENT or _classify(q) == 'begin'\n"),
        "writing/__init__.py": "",
        "writing/writer.py": "from ..audit import report\n",   # up: writing -> commands
        "audit/__init__.py": ("from ..reading.boundary import _classify\nfrom ..reading.files import open_input\n"
                              "def report(t, keys):\n    if t.kind == 'mysql' or ':' in t.gtid:\n"
                              "        return open_input(t)\n"),
        "gtid/__init__.py": "def parse(g):\n    return ':' in g\n",   # where text becomes a GTID value
        "decoding/__init__.py": "from ..cli import main\n",            # a room the table does not name
        "cli/__init__.py": "import click\n\n@click.command()\n@click.option('--x')\ndef main(x):\n    pass\n",
        "_pullscan.c": 'static int f(void) { return query_is("BEGIN") || query_is("COMMIT"); }\n',
    })
    res = _run(str(tmp_path), "--json", "--no-duplicates-tool")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    c, d = out["counts"], out["details"]
    assert out["layout"] == "target"
    assert (c["input_open_modules"], c["input_open_functions"], c["input_open_modules_all"]) == (1, 1, 2)
    assert c["fde_to_format_steps"] == 1                   # source.py's; the definition is not one
    assert c["boundary_rule_copies"] == 2, d["boundary_rule_copies"]   # reading/boundary.py + the C loop
    assert (c["keys_parameters"], c["keys_parameter_files"]) == (2, 2)
    assert c["flavor_string_comparisons"] == 2             # kind == 'mysql', ':' in gtid; flavor.py, gtid/ left out
    assert (c["cli_lines"], c["cli_longest_function_lines"]) == (6, 4)   # its decorators counted
    assert c["underscore_imports_across_modules"] == 1
    assert d["imports_up_the_layers"] == ["decoding (commands) -> cli (cli) line 1",
                                          "writing.writer (writing) -> audit (commands) line 1"]
    assert c["imports_up_the_layers"] == 2 and d["assumed_rooms"] == ["decoding"]
    assert c["repeated_pairs_duplicates_tool"] is None
    assert d["unclassified"] == []

"""Imports run only down the layers (issue 30, "rooms"): read from the files with ast, so a
function-level import counts as much as one at the top, and absolute imports (``from binlogkit
import storage``) as much as relative ones.

* the core -- constants, errors, flavor, collations, codecs/, gtid/, rowvalues/, crypto/ -- imports
  only the core (and the C loops); ``crypto/build.py``, which imported the reader, is now
  ``fixtures/crypto_build.py``;
* no library module imports the CLI (``binlogkit.cli``, a module or a package);
* no library module imports the test builders in ``fixtures/``;
* no import circles among binlogkit's modules (tests/test_imports.py counts relative imports
  only; this graph has the absolute ones too).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "binlogkit"
CORE = ("binlogkit.constants", "binlogkit.errors", "binlogkit.flavor", "binlogkit.collations", "binlogkit.codecs",
        "binlogkit.gtid", "binlogkit.rowvalues", "binlogkit.crypto", "binlogkit._optional")
C_LOOPS = ("binlogkit._rowtext", "binlogkit._fastdecode", "binlogkit._pullscan", "binlogkit._rowarrow",
           "binlogkit._eventcols")  # leaves: they import nothing
CLI = "binlogkit.cli"


def _within(name: str, roots: tuple[str, ...] | str) -> bool:
    return any(name == r or name.startswith(r + ".") for r in ((roots,) if isinstance(roots, str) else roots))


@functools.cache
def _modules() -> dict[str, Path]:
    mods = {}
    for path in PKG.rglob("*.py"):
        mods[".".join(path.relative_to(PKG.parent).with_suffix("").parts).removesuffix(".__init__")] = path
    for path in PKG.glob("_*.c"):  # the C accelerators: leaves
        mods[f"binlogkit.{path.stem}"] = path
    return mods


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> every name it imports: a binlogkit module (the longest that exists) or, for
    anything else, the dotted name as written; a C loop loaded by ``_optional.load_c`` too."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        if path.suffix != ".py":
            continue
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = pkg.split(".")
                    target = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names]
                # ``from . import mod`` names a submodule: the edge is to it alone
                names = [s for s in subs if s in mods] or [target]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "load_c" and node.args
                  and isinstance(node.args[0], ast.Constant)):   # _optional.load_c("_pullscan", ...)
                names = [f"binlogkit.{node.args[0].value}"]
            else:
                continue
            for name in names:
                if name.split(".")[0] == "binlogkit":
                    while name not in mods:
                        name = name.rpartition(".")[0]
                if name != m:
                    edges[m].add(name)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next((w for w in it if w in edges), None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_core_imports_only_the_core():
    edges = _imports(_modules())
    up = {m: sorted(e for e in edges[m] if _within(e, "binlogkit") and not _within(e, CORE + C_LOOPS))
          for m in edges if _within(m, CORE)}
    assert {m: e for m, e in up.items() if e} == {}


def test_the_library_never_imports_the_cli():
    edges = _imports(_modules())
    entry = (CLI, "binlogkit.__main__")  # python -m binlogkit is the CLI's other door
    assert sorted((m, e) for m in edges for e in edges[m] if _within(e, CLI) and not _within(m, entry)) == []


def test_no_module_imports_the_fixtures():
    edges = _imports(_modules())
    assert sorted((m, e) for m in edges for e in edges[m] if _within(e, ("fixtures", "tests"))) == []


def test_no_import_circles():
    edges = _imports(_modules())
    assert _cycles({m: {e for e in es if e in edges} for m, es in edges.items()}) == []


def test_the_checks_see_what_they_look_for():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    edges = _imports(_modules())
    # relative, absolute and function-level imports are all edges (modules chosen to stay where they are)
    assert "binlogkit.errors" in edges["binlogkit.gtid.mysql"]
    assert any(e.endswith(".storage") for e in edges["binlogkit.spark.jobs.audit"])  # ``from binlogkit import storage``
    assert "binlogkit._pullscan" in edges["binlogkit.pull.receiver"]            # through _optional.load_c
    assert not _within("binlogkit.client", CLI) and _within("binlogkit.cli.decode", CLI)


READING, WRITING, BOUNDARY = "binlogkit.reading", "binlogkit.writing", "binlogkit.boundary"


def test_the_reading_layer_imports_only_the_core_and_itself():
    """Reading (files, storage, framing, the opener, the decoders) sits on the core alone: not on
    writing/ (a whole-or-nothing write is ``writing.objects``'), nor on a command room."""
    edges = _imports(_modules())
    up = {m: sorted(e for e in edges[m] if _within(e, "binlogkit") and not _within(e, CORE + C_LOOPS + (READING,)))
          for m in edges if _within(m, READING)}
    assert {m: e for m, e in up.items() if e} == {}


def test_the_writing_layer_imports_no_command_room():
    """Writing (safeio, the binlog writer, the incident helpers, objects) sits on reading, the
    boundary machine and the core, never on a command's room or the public api above them."""
    edges = _imports(_modules())
    below = CORE + C_LOOPS + (READING, WRITING, BOUNDARY, "binlogkit.transactions", "binlogkit.positions")
    up = {m: sorted(e for e in edges[m] if _within(e, "binlogkit") and not _within(e, below))
          for m in edges if _within(m, WRITING)}
    assert {m: e for m, e in up.items() if e} == {}


SPARK = "binlogkit.spark"


def test_the_spark_room_sits_above_the_rooms_it_scales_out():
    """The Spark room (the data source, its file plan, the spark-submit jobs in ``spark/jobs/``)
    imports the rooms whose work it spreads over a cluster (audit, export, reading); none of
    them imports it back (the export job once lived in ``export/`` and imported
    ``spark.files``). Only the CLI reaches the jobs (``audit --engine spark``)."""
    edges = _imports(_modules())
    up = sorted((m, e) for m in edges for e in edges[m]
                if _within(e, SPARK) and not _within(m, (SPARK, CLI)))
    assert up == []
    jobs = sorted((m, e) for m in edges for e in edges[m]
                  if _within(e, SPARK + ".jobs") and not _within(m, (SPARK + ".jobs", CLI)))
    assert jobs == []
    assert "binlogkit.spark.files" in edges["binlogkit.spark.jobs.export"]   # the check sees the jobs' imports

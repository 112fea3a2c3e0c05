"""No import circles inside binlogkit (issue 17: api <-> transactions, codecs.mysql_json <->
rowvalues.values, reader <-> scan were circles; what both sides need lives in a lower module:
files.expand_paths, codecs.newdecimal, framing). Function-level imports count too."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "binlogkit"


def _graph() -> dict[str, set[str]]:
    mods = {}
    for path in PKG.rglob("*.py"):
        rel = ".".join(path.relative_to(PKG.parent).with_suffix("").parts)
        mods[rel.removesuffix(".__init__")] = path
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        pkg = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                subs = [f"{target}.{a.name}" for a in node.names]
                # ``from . import mod`` names a submodule, not the package's own names: the edge is
                # to the submodule alone (the package is the importer's own, already importing)
                whole = [] if node.module is None and all(c in mods for c in subs) else [target]
                for cand in whole + subs:
                    if cand in mods and cand != m:
                        edges[m].add(cand)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    edges = _graph()
    assert "binlogkit.reading.framing" in edges["binlogkit.reading.scan"] and "binlogkit.reading.framing" in edges["binlogkit.reading.reader"]
    assert _cycles(edges) == []


def test_the_checker_sees_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]

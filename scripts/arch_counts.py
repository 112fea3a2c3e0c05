"""The counts of issue 30's "Done when", measured on a source tree (today's flat layout or the
target one with ``binlogkit/reading/``, ``binlogkit/writing/``, ``binlogkit/cli/``).

    python scripts/arch_counts.py                 # this checkout, a table
    python scripts/arch_counts.py /tmp/base --json  # another tree (a worktree of a base revision)
    make arch-counts                              # the same as the first line

Every count is read from the source text (``ast`` for Python, regular expressions for C); nothing
is imported or run, so any revision can be measured. Modules are named by their path below
``binlogkit/`` (``audit.summary``, ``reading.source``, ``cli`` for ``cli.py`` or ``cli/__init__.py``;
``binlogkit`` is the package's own ``__init__.py``). The JSON has ``counts`` (one number a key,
the numbers of the closing note) and ``details`` (where each number comes from: look there
before believing a number).

The rules, one per key of ``counts``:

``input_open_modules`` / ``input_open_functions``
    modules (functions) OUTSIDE the reading layer that open an input: they call a primitive
    (``open_input``, ``open_regular``, ``walk_events``, ``open_binlog``, ``iter_raw_events``,
    ``open_read`` of object storage) or open anything read-binary (``open(x, "rb")``,
    ``fs.open(x, "rb")``, ``os.fdopen(fd, "rb")``: key files, state files and ``.idx`` files
    are inputs too, but some of those will stay where they are; see ``details.input_open``). The
    reading layer is ``binlogkit/reading/*`` and, in the flat layout, the modules the target
    layout moves there (``READING`` below) plus the package ``__init__`` (``open_binlog``, the one
    convenience function). ``input_open_modules_primitives`` counts only the modules calling a
    primitive (the issue's "a dozen ways in"); ``input_open_modules_all`` the same in every
    module, the reading layer included (goal: the one opener, plus ``files`` / ``storage`` that
    the primitives live in, and the package's convenience function).
``fde_to_format_steps``
    calls that turn a Format_description body into a ``Format`` by hand: ``*.from_fde_body(...)``
    and ``FormatDescriptionBody.parse(...)`` outside the ``from_fde_body`` definition itself, plus
    ``Format(...)`` constructions outside the module that defines ``class Format``.
    ``details.fde_checksum_aware_calls`` lists the ``fde_is_checksum_aware`` calls that go with
    them (information only).
``boundary_rule_copies``
    Python modules with a boundary step plus C files with a boundary loop. A Python function is a
    boundary step when it both decides on a Query's text (compares it, with ``==`` / ``in`` /
    ``startswith``, to the string constant ``BEGIN``, ``XA START`` or ``XA BEGIN``, or calls a
    ``*classify*`` function) and handles the Xid event (a name or attribute containing
    ``XID``); a renderer that only prints "COMMIT" is not one. A C file has a boundary loop when
    it holds both string literals ``"BEGIN"`` and ``"COMMIT"`` (comments left out). Goal: 1
    Python module, plus the C loops tested equal to it.
``keys_parameters`` / ``keys_parameter_files``
    functions (and the files they are in) with a parameter named ``keys``.
``flavor_string_comparisons``
    comparisons (``==``, ``!=``, ``in``, ``not in``, ``case``) of anything with the strings
    ``"mysql"`` / ``"mariadb"`` (any case; ``t.kind == "mysql"`` and ``"mysql" in summary``
    included), plus ``":" in X`` / ``":" not in X`` (GTID text tested for its flavor: a MySQL GTID
    has a colon; ``details.gtid_colon_tests``). Left out: the module defining ``class Flavor``
    (where a server version string becomes a Flavor) and the ``gtid`` package (where GTID text
    becomes a typed value): the places allowed to look.
    Comparisons with ``Flavor`` members are not counted (``details.flavor_enum_comparisons``,
    for information).
``cli_lines`` / ``cli_longest_function_lines``
    lines of ``binlogkit/cli.py`` or of every file of ``binlogkit/cli/``; the longest function
    there, its decorators (the click options) included.
``underscore_imports_across_modules``
    ``from X import _name`` (not a dunder, not a submodule such as ``_rowtext``) where X is
    another module of binlogkit, one per imported name.
``imports_up_the_layers`` / ``imports_up_the_layers_statements``
    distinct (module, imported module) pairs (and the import statements behind them), lazy
    imports included, where the imported module's layer is above the importer's:
    core < reading < writing < commands < cli (``LAYERS`` below, by the first part of the dotted
    name; ``--layer NAME=LAYER`` adds or corrects one; a package at the top that the table does
    not name is taken for a command's room, ``details.assumed_rooms``). A module in no layer is listed under
    ``details.unclassified`` and not counted; the C accelerators (``_*.c``) are leaves, in no
    layer. ``crypto.build`` (a test builder the issue moves to fixtures/) counts as core.
``repeated_blocks_6_lines``
    blocks of six or more lines of ``binlogkit/**/*.py`` that stand, the same after folding white
    space, in two places or more (blank, comment-only, import and lone-punctuation lines left
    out; a block is a maximal run of repeated 6-line windows in one file; each place counts).
``repeated_pairs_duplicates_tool`` / ``repeated_pairs_duplicates_tool_exact``
    what the workplace's ``duplicates`` tool says about ``binlogkit/`` (.py and .c): pairs of
    places sharing six or more lines of the same shape, and of those the identical ones;
    ``null`` where the tool is not installed (or ``--no-duplicates-tool``).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# today's flat modules by name; a module below reading/, writing/ or cli/ takes that folder's layer
CORE = {"constants", "errors", "flavor", "collations", "_optional", "codecs", "gtid", "rowvalues", "crypto"}
READING = {"files", "storage", "compression", "framing", "reader", "scan", "format", "formats", "registry",
           "events", "decoder", "fastdecode", "crc", "source", "names", "reading", "binlogkit",
           "boundary"}  # the boundary step, should it land at the top (docs/architecture.md: pure, in reading)
WRITING = {"writer", "safeio", "writing"}
COMMANDS = {"transactions", "api", "positions", "compare", "incident", "render", "audit", "export",
            "flashback", "pitr", "pull", "recover", "report"}
CLI = {"cli", "__main__"}
ORDER = ["core", "reading", "writing", "commands", "cli"]
LAYERS: dict[str, str] = {**{m: "core" for m in CORE}, **{m: "reading" for m in READING},
                          **{m: "writing" for m in WRITING}, **{m: "commands" for m in COMMANDS},
                          **{m: "cli" for m in CLI}}

OPENERS = {"open_input", "open_regular", "walk_events", "open_binlog", "iter_raw_events", "open_read"}
BOUNDARY_TEXT = {"BEGIN", "XA START", "XA BEGIN"}  # where a transaction opens: its end alone is also printed
FLAVOR_STRINGS = {"mysql", "mariadb"}

KEYS = ["input_open_modules", "input_open_functions", "input_open_modules_primitives", "input_open_modules_all", "fde_to_format_steps",
        "boundary_rule_copies", "keys_parameters", "keys_parameter_files", "flavor_string_comparisons",
        "cli_lines", "cli_longest_function_lines", "underscore_imports_across_modules", "imports_up_the_layers",
        "imports_up_the_layers_statements", "repeated_blocks_6_lines", "repeated_pairs_duplicates_tool",
        "repeated_pairs_duplicates_tool_exact"]

HELP = {
    "input_open_modules": "modules outside reading/ that open inputs (goal 0)",
    "input_open_functions": "functions outside reading/ that open inputs",
    "input_open_modules_primitives": "... of those, calling open_input/walk_events/...",
    "input_open_modules_all": "modules calling those, reading/ included (goal ~1)",
    "fde_to_format_steps": "hand-written FDE -> Format steps (goal 1)",
    "boundary_rule_copies": "copies of the boundary rules, Python + C (goal 1 + C loops)",
    "keys_parameters": "functions with a `keys` parameter (goal: a handful)",
    "keys_parameter_files": "files with such functions",
    "flavor_string_comparisons": "flavor string comparisons (goal 0)",
    "cli_lines": "lines of cli.py / cli/ (aim < 600)",
    "cli_longest_function_lines": "longest function in the CLI",
    "underscore_imports_across_modules": "underscore-name imports across modules (goal 0)",
    "imports_up_the_layers": "imports that run up the layers, module pairs (goal 0)",
    "imports_up_the_layers_statements": "... as import statements",
    "repeated_blocks_6_lines": "repeated blocks of >= 6 lines (own hash)",
    "repeated_pairs_duplicates_tool": "pairs of places, `duplicates` tool",
    "repeated_pairs_duplicates_tool_exact": "... identical (not only same shape)",
}


@dataclass
class Module:
    name: str          # dotted below binlogkit/, "binlogkit" for the package __init__
    path: Path
    rel: str           # path relative to the tree root, for the details
    tree: ast.Module
    is_package: bool
    lines: int


@dataclass
class Tree:
    root: Path
    modules: dict[str, Module] = field(default_factory=dict)
    c_files: list[Path] = field(default_factory=list)
    c_modules: set[str] = field(default_factory=set)


def module_name(pkg: Path, path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(pkg).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return (".".join(parts) or "binlogkit"), is_package


def load(root: Path) -> Tree:
    pkg = root / "binlogkit"
    if not pkg.is_dir():
        raise SystemExit(f"{root}: no binlogkit/ folder")
    t = Tree(root)
    for path in sorted(pkg.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        name, is_package = module_name(pkg, path)
        t.modules[name] = Module(name, path, str(path.relative_to(root)), ast.parse(text, str(path)), is_package,
                                 text.count("\n"))
    t.c_files = sorted(pkg.rglob("_*.c"))
    t.c_modules = {module_name(pkg, p)[0] for p in t.c_files}
    return t


def layer_of(name: str, overrides: dict[str, str]) -> str | None:
    """The layer of a dotted module name: an override, else its first part's (``reading.x`` is
    reading, ``audit.summary`` commands), else None (unclassified)."""
    if name in overrides:
        return overrides[name]
    if name == "crypto.build":  # a builder of encrypted test files: belongs in fixtures/ (issue 30)
        return "core"
    first = name.split(".")[0]
    return overrides.get(first, LAYERS.get(first))


def in_reading(name: str, overrides: dict[str, str]) -> bool:
    return layer_of(name, overrides) == "reading"


# --- ast helpers -------------------------------------------------------------------------------

def functions(tree: ast.AST):
    """(qualified name, node) of every function and method, nested ones too."""
    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{child.name}"
                yield q, child
                yield from visit(child, q + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")
            else:
                yield from visit(child, prefix)
    yield from visit(tree, "")


def enclosing(tree: ast.AST) -> dict[int, str]:
    """id(node) -> qualified name of the innermost function holding it ("<module>" outside)."""
    out: dict[int, str] = {}

    def visit(node, owner):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = owner
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, names.get(id(child), child.name))
            else:
                visit(child, owner)
    names = {id(n): q for q, n in functions(tree)}
    visit(tree, "<module>")
    return out


def call_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def is_rb(call: ast.Call) -> bool:
    """``open(x, "rb")`` / ``fs.open(x, "rb")`` / ``os.fdopen(fd, "rb")`` / ``mode="rb"``."""
    if call_name(call) not in ("open", "fdopen"):
        return False
    modes = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and "r" in m.value and "b" in m.value
               for m in modes)


def resolve(mod: Module, level: int, target: str | None) -> str:
    """The dotted name an ``ImportFrom`` reads from, relative to binlogkit."""
    if level == 0:
        name = target or ""
        if name == "binlogkit":
            return "binlogkit"
        return name[len("binlogkit."):] if name.startswith("binlogkit.") else ""
    base = [] if mod.name == "binlogkit" else mod.name.split(".")
    if not mod.is_package:
        base = base[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    parts = base + ([target] if target else [])
    return ".".join(p for p in parts if p) or "binlogkit"


def imports(mod: Module, known: set[str]):
    """(imported module, imported name or None, line) for every import of binlogkit code."""
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "binlogkit" or a.name.startswith("binlogkit."):
                    yield resolve(mod, 0, a.name), None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            src = resolve(mod, node.level, node.module)
            if not src:
                continue
            for a in node.names:
                sub = a.name if src == "binlogkit" else f"{src}.{a.name}"
                if sub in known:          # ``from . import events``: a module, not a name
                    yield sub, None, node.lineno
                else:
                    yield src, a.name, node.lineno


# --- the counts --------------------------------------------------------------------------------

def count_openers(t: Tree, overrides):
    mods_out, funcs_out, prim_out, prim_all = defaultdict(list), set(), set(), set()
    for m in t.modules.values():
        owner = enclosing(m.tree)
        defined = {q.split(".")[-1] for q, _ in functions(m.tree)}
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.Call):
                continue
            name = call_name(node)
            primitive = name in OPENERS and name not in defined
            rb = is_rb(node)
            if not (primitive or rb):
                continue
            if primitive:
                prim_all.add(m.name)
            if not in_reading(m.name, overrides):
                mods_out[m.name].append(f"{m.rel}:{node.lineno} {owner[id(node)]} {name}{'(rb)' if rb else ''}")
                funcs_out.add(f"{m.name}:{owner[id(node)]}")
                if primitive:
                    prim_out.add(m.name)
    return ({"input_open_modules": len(mods_out), "input_open_functions": len(funcs_out),
             "input_open_modules_primitives": len(prim_out), "input_open_modules_all": len(prim_all)},
            {"input_open": {k: sorted(v, key=_line_order) for k, v in sorted(mods_out.items())},
             "input_open_modules_all": sorted(prim_all)})


def _line_order(s: str):
    f, _, rest = s.partition(":")
    n = re.match(r"\d+", rest)
    return f, int(n.group()) if n else 0


def count_fde(t: Tree):
    format_home = {m.name for m in t.modules.values()
                   for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef) and n.name == "Format"}
    steps, aware = [], []
    for m in t.modules.values():
        owner = enclosing(m.tree)
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.Call):
                continue
            name, f = call_name(node), node.func
            where = f"{m.rel}:{node.lineno} {owner[id(node)]}"
            if name == "from_fde_body" or (name == "parse" and isinstance(f, ast.Attribute)
                                           and isinstance(f.value, ast.Name) and f.value.id == "FormatDescriptionBody"):
                if owner[id(node)].split(".")[-1] != "from_fde_body":
                    steps.append(f"{where} {name}")
            elif name == "Format" and isinstance(f, ast.Name) and m.name not in format_home:
                steps.append(f"{where} Format(...)")
            elif name == "fde_is_checksum_aware":
                aware.append(where)
    return {"fde_to_format_steps": len(steps)}, {"fde_to_format_steps": steps, "fde_checksum_aware_calls": aware}


def _boundary_text(n: ast.AST) -> bool:
    return isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip().upper() in BOUNDARY_TEXT


def _boundary_step(fn: ast.AST) -> bool:
    """Decides on a Query's text (compares it with BEGIN / XA START, or calls a classifier) and
    handles the Xid event. A constant only printed (``"BEGIN" if ... else ...``) is no decision."""
    text = xid = False
    for n in ast.walk(fn):
        if isinstance(n, ast.Compare) and any(_boundary_text(x) for x in (n.left, *n.comparators)):
            text = True
        elif isinstance(n, ast.Call) and ("classify" in (call_name(n) or "")
                                          or call_name(n) in ("startswith", "endswith", "match", "fullmatch")
                                          and any(_boundary_text(a) for a in n.args)):
            text = True
        elif isinstance(n, ast.Name) and "XID" in n.id or isinstance(n, ast.Attribute) and "XID" in n.attr:
            xid = True
    return text and xid


def count_boundary(t: Tree):
    py = {}
    for m in t.modules.values():
        hits = [q for q, fn in functions(m.tree) if _boundary_step(fn)]
        # a method counts once: the innermost functions that qualify
        hits = [q for q in hits if not any(o != q and o.startswith(q + ".") for o in hits)]
        if hits:
            py[m.rel] = hits
    c = []
    for p in t.c_files:
        src = re.sub(r"/\*.*?\*/|//[^\n]*", "", p.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        if '"BEGIN"' in src and '"COMMIT"' in src:
            c.append(str(p.relative_to(t.root)))
    return ({"boundary_rule_copies": len(py) + len(c)},
            {"boundary_rule_copies": {"python": py, "c": c}})


def count_keys(t: Tree):
    found = []
    for m in t.modules.values():
        for q, fn in functions(m.tree):
            a = fn.args
            if any(x.arg == "keys" for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]):
                found.append(f"{m.rel}:{fn.lineno} {q}")
    files = {f.split(":")[0] for f in found}
    return {"keys_parameters": len(found), "keys_parameter_files": len(files)}, {"keys_parameters": found}


def _flavor_const(n: ast.AST) -> bool:
    if isinstance(n, ast.Constant) and isinstance(n.value, str):
        return n.value.lower() in FLAVOR_STRINGS
    if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
        return any(_flavor_const(e) for e in n.elts)
    return False


def _flavor_enum(n: ast.AST) -> bool:
    return (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Flavor")


def count_flavor(t: Tree):
    strings, colon, enums = [], [], []
    home = {m.name for m in t.modules.values()
            for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef) and n.name == "Flavor"}
    for m in t.modules.values():
        if m.name in home:  # where a version string becomes a Flavor: the one place allowed to look
            continue
        for node in ast.walk(m.tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                for i, op in enumerate(node.ops):
                    left, right = sides[i], sides[i + 1]
                    where = f"{m.rel}:{node.lineno}"
                    if isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) and (_flavor_const(left) or _flavor_const(right)):
                        strings.append(f"{where} {ast.unparse(node)[:80]}")
                    elif (isinstance(op, (ast.In, ast.NotIn)) and isinstance(left, ast.Constant) and left.value == ":"
                          and m.name.split(".")[0] != "gtid"):  # gtid/ turns text into typed values
                        colon.append(f"{where} {ast.unparse(node)[:80]}")
                    elif isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and (_flavor_enum(left) or _flavor_enum(right)):
                        enums.append(f"{where} {ast.unparse(node)[:80]}")
            elif isinstance(node, ast.MatchValue) and _flavor_const(node.value):
                strings.append(f"{m.rel}:{node.lineno} case {ast.unparse(node.value)}")
    return ({"flavor_string_comparisons": len(strings) + len(colon)},
            {"flavor_string_comparisons": strings, "gtid_colon_tests": colon, "flavor_enum_comparisons": enums})


def count_cli(t: Tree):
    mods = [m for m in t.modules.values() if m.name == "cli" or m.name.startswith("cli.")]
    longest, where = 0, ""
    for m in mods:
        for q, fn in functions(m.tree):
            first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])  # its click options too
            n = (fn.end_lineno or fn.lineno) - first + 1
            if n > longest:
                longest, where = n, f"{m.rel}:{first} {q}"
    return ({"cli_lines": sum(m.lines for m in mods), "cli_longest_function_lines": longest},
            {"cli_files": {m.rel: m.lines for m in mods}, "cli_longest_function": where})


def count_imports(t: Tree, overrides):
    known = set(t.modules) | t.c_modules
    under: list[str] = []
    up_pairs: dict[tuple[str, str], set[int]] = defaultdict(set)
    unclassified: set[str] = set()
    for m in t.modules.values():
        for src, name, line in imports(m, known):
            if name and name.startswith("_") and not name.startswith("__") and src != m.name:
                under.append(f"{m.rel}:{line} from {src} import {name}")
            if src in t.c_modules or src == m.name:
                continue
            a, b = layer_of(m.name, overrides), layer_of(src, overrides)
            for x, lay in ((m.name, a), (src, b)):
                if lay is None:
                    unclassified.add(x)
            if a and b and ORDER.index(b) > ORDER.index(a):
                up_pairs[(m.name, src)].add(line)
    ups = [f"{a} ({layer_of(a, overrides)}) -> {b} ({layer_of(b, overrides)}) line {','.join(map(str, sorted(ls)))}"
           for (a, b), ls in sorted(up_pairs.items())]
    return ({"underscore_imports_across_modules": len(under), "imports_up_the_layers": len(up_pairs),
             "imports_up_the_layers_statements": sum(len(ls) for ls in up_pairs.values())},
            {"underscore_imports_across_modules": under, "imports_up_the_layers": ups,
             "unclassified": sorted(unclassified)})


_SKIP = re.compile(r"^(#.*|from \S+ import .*|import .*|[\[\](){}:,]*)$")


def count_repeats(t: Tree, window: int = 6):
    """Blocks of ``window``+ normalized lines standing in two places or more."""
    files = []
    for m in t.modules.values():
        norm = []
        for i, line in enumerate(m.path.read_text(encoding="utf-8").split("\n"), 1):
            s = " ".join(line.split())
            if s and not _SKIP.match(s):
                norm.append((i, s))
        files.append((m.rel, norm))
    places = defaultdict(list)
    for rel, norm in files:
        for k in range(len(norm) - window + 1):
            h = hashlib.blake2b("\n".join(s for _, s in norm[k:k + window]).encode(), digest_size=12).digest()
            places[h].append((rel, k))
    repeated = defaultdict(set)
    for h, ps in places.items():
        if len(ps) > 1:
            for rel, k in ps:
                repeated[rel].add(k)
    blocks = []
    for rel, norm in files:
        runs: list[list[int]] = []
        for k in sorted(repeated.get(rel, ())):
            if runs and k == runs[-1][-1] + 1:
                runs[-1].append(k)
            else:
                runs.append([k])
        blocks += [f"{rel}:{norm[r[0]][0]}-{norm[r[-1] + window - 1][0]}" for r in runs]
    return {"repeated_blocks_6_lines": len(blocks)}, {"repeated_blocks_6_lines": blocks}


def count_duplicates_tool(t: Tree, seconds: int = 120):
    exe = shutil.which("duplicates")
    none = {"repeated_pairs_duplicates_tool": None, "repeated_pairs_duplicates_tool_exact": None}
    if not exe:
        return none, {"duplicates_tool": "not installed"}
    res = subprocess.run([exe, "--repo", str(t.root / "binlogkit"), "--most", "200", "--seconds", str(seconds)],
                         capture_output=True, text=True, cwd=t.root, timeout=seconds + 60)
    out = res.stdout.splitlines()
    head = out[0] if out else ""
    m = re.match(r"(\d+) pairs? of places", head)
    total = int(m.group(1)) if m else (0 if head.startswith("no duplicates") else None)
    rows = [r for r in out if re.match(r"D\d+ ", r)]
    more = sum(int(x) for r in out for x in re.findall(r"^\(\+(\d+) more pairs\)", r))
    exact = sum(1 for r in rows if " shape" not in r)
    if more:  # rows cut by --most: the exact count is a lower bound
        exact_note = f"lower bound: {more} pairs not listed"
    else:
        exact_note = ""
    notes = [r for r in out if r.startswith(("left out:", "incomplete:"))]
    return ({"repeated_pairs_duplicates_tool": total, "repeated_pairs_duplicates_tool_exact": exact},
            {"duplicates_tool": {"head": head, "rows": rows, "notes": notes + ([exact_note] if exact_note else [])}})


def measure(root: Path, overrides: dict[str, str] | None = None, *, duplicates_tool: bool = True) -> dict:
    t = load(root)
    # a package at the top that the table does not name is a command's room (audit/, export/...)
    rooms = sorted(m.name for m in t.modules.values() if m.is_package and "." not in m.name
                   and m.name != "binlogkit" and m.name not in LAYERS and m.name not in (overrides or {}))
    overrides = {**{r: "commands" for r in rooms}, **(overrides or {})}
    counts: dict[str, int | None] = {}
    details: dict[str, object] = {"assumed_rooms": rooms}
    steps = [lambda: count_openers(t, overrides), lambda: count_fde(t), lambda: count_boundary(t),
             lambda: count_keys(t), lambda: count_flavor(t), lambda: count_cli(t),
             lambda: count_imports(t, overrides), lambda: count_repeats(t)]
    if duplicates_tool:
        steps.append(lambda: count_duplicates_tool(t))
    else:
        counts.update(repeated_pairs_duplicates_tool=None, repeated_pairs_duplicates_tool_exact=None)
    for step in steps:
        c, d = step()
        counts.update(c)
        details.update({k: sorted(v, key=_line_order) if isinstance(v, list) else v for k, v in d.items()})
    rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "binlogkit"],
                           capture_output=True, text=True)
    return {"revision": (rev.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")) or None,
            "layout": "target" if (root / "binlogkit" / "reading").is_dir() else "flat",
            "counts": {k: counts[k] for k in KEYS}, "details": details}


def table(result: dict, before: dict | None = None) -> str:
    c = result["counts"]
    b = before["counts"] if before else None
    head = f"{'count':<38} {'now':>6}" + (f" {'before':>7}" if b else "") + "  meaning"
    out = [f"revision {result['revision']} ({result['layout']} layout)"
           + (f", before: {before['revision']}" if before else ""), head, "-" * len(head)]
    for k in KEYS:
        v = "-" if c[k] is None else str(c[k])
        was = "" if not b else f" {'-' if b.get(k) is None else b[k]:>7}"
        out.append(f"{k:<38} {v:>6}{was}  {HELP[k]}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", type=Path, default=ROOT, help="a source tree holding binlogkit/ (default: this one)")
    ap.add_argument("--json", action="store_true", help="counts and details as JSON")
    ap.add_argument("--before", type=Path, help="a JSON of an earlier run (docs/architecture-counts-before.json): "
                                               "shown beside the counts in the table")
    ap.add_argument("--layer", action="append", default=[], metavar="MODULE=LAYER",
                    help=f"put a module (dotted below binlogkit/) in a layer: {', '.join(ORDER)}")
    ap.add_argument("--no-duplicates-tool", action="store_true", help="skip the `duplicates` tool")
    args = ap.parse_args(argv)
    overrides = {}
    for spec in args.layer:
        name, _, lay = spec.partition("=")
        if lay not in ORDER:
            ap.error(f"--layer {spec}: the layer is one of {', '.join(ORDER)}")
        overrides[name] = lay
    result = measure(args.root.resolve(), overrides, duplicates_tool=not args.no_duplicates_tool)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        before = json.loads(args.before.read_text()) if args.before else None
        print(table(result, before))
        if result["details"].get("unclassified"):
            print(f"\nnot in a layer (--layer NAME=LAYER): {', '.join(result['details']['unclassified'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

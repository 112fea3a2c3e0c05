"""A/B: this tree against a base revision, the same commands on the same input, interleaved.

    make bench-ab BASE=45c8d83                   # HEAD = this working tree
    python bench/ab.py --base 45c8d83 --mb 100 --runs 3 --only verify --only audit
    python bench/ab.py --base 45c8d83 --head 45c8d83 --mb 20 --runs 3   # A/A: the noise

The base (and ``--head REV`` when given) is checked out with ``git archive`` into a temporary
folder, no wheel and no install: its C accelerators (``binlogkit/_*.c``) are built there with gcc
against this Python's headers, as ``pip install -e .`` would; this working tree's are rebuilt in
place only when missing or older than their sources. Both trees run under this interpreter with
``PYTHONPATH`` pointing at each (checked: ``binlogkit.__file__`` is inside the tree), from a
scratch folder, through the console script's entry point read from each tree's
pyproject.toml (so a CLI that became a package still runs).

The input is ``bench/data/mariadb-bin.000001`` (``make bench-data``, a real server's binlog) when it
exists, else (or with ``--generated``) a clean MariaDB archive of ``--mb`` MB in 8 files written by
``fixtures.faults.generate`` (real 10.11 row transactions cloned by the codecs' build side, new
GTIDs, CRC32 recomputed), kept in ``bench/data-ab-<MB>mb/`` for the next run. ``--input PATH`` takes
any file or folder.

Timed: ``verify``, ``decode``, ``decode --json``, ``decode -v``, ``transactions --json``, ``audit``
(local engine, ``--jobs 1``, the folder) and ``export`` (to a fresh temporary folder), stdout to
/dev/null. First one untimed run of each command in each tree, its stdout hashed: "same output"
says whether both trees printed the same bytes (export: its ``--json`` summary without times).
Then ``--runs`` rounds, each running every command in both trees, base first in even rounds and
head first in odd ones, so drift in the machine's load falls on both. Printed per command: the
median wall seconds and CPU seconds (user + system of the child and its workers, which a shared
machine disturbs less) of each tree and the ratios HEAD/BASE; ``--json`` writes them as a document.
An A/A run (``--head`` = ``--base``) shows how far from 1.00 noise alone moves the ratio: at
45c8d83, 20 MB, 3 rounds, load average 5 on 2 shared cores, wall 0.82-1.29, CPU 0.95-1.09.

Cost: the generated archive runs at 1-40 MB/s depending on the command (export and transactions
are the slow ones), so the defaults (100 MB, 3 rounds, every command, both trees) take about 25
minutes on two loaded cores; the time is estimated after the warm-up. ``--only`` narrows it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DATA = ROOT / "bench" / "data" / "mariadb-bin.000001"
FILES = 8


@dataclass
class Tree:
    label: str
    root: Path
    rev: str
    entry: tuple[str, str] = ("binlogkit.cli", "main")
    times: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    codes: dict[str, set[int]] = field(default_factory=dict)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def build_extensions(tree: Path, *, only_stale: bool = False) -> list[str]:
    """gcc each ``binlogkit/_*.c`` into an extension module beside it (as /work/build_so.sh and
    setup.py do); returns the names built. ``only_stale``: skip those newer than their sources."""
    inc = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    gcc = shutil.which("gcc") or shutil.which("cc")
    pkg = tree / "binlogkit"
    headers = list(pkg.glob("*.h"))
    built = []
    for c in sorted(pkg.glob("_*.c")):
        so = c.with_name(c.stem + suffix)
        if only_stale and so.exists() and so.stat().st_mtime >= max(p.stat().st_mtime for p in [c, *headers]):
            continue
        if not gcc:
            print(f"ab: no C compiler: {tree.name} runs {c.stem} in pure Python", file=sys.stderr)
            continue
        subprocess.run([gcc, "-O2", "-shared", "-fPIC", f"-I{inc}", f"-I{pkg}", str(c), "-o", str(so)], check=True)
        built.append(c.stem)
    return built


def checkout(rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "binlogkit", "pyproject.toml"],
                               stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    if archive.wait():
        raise SystemExit(f"ab: git archive {rev} failed")
    build_extensions(into)
    return into


def entry_point(tree: Path) -> tuple[str, str]:
    scripts = tomllib.loads((tree / "pyproject.toml").read_text())["project"]["scripts"]
    mod, _, func = scripts["binlogkit"].partition(":")
    return mod, func


def command(tree: Tree, args: list[str]) -> list[str]:
    mod, func = tree.entry
    code = f"import sys; sys.argv[0] = 'binlogkit'; from {mod} import {func}; sys.exit({func}())"
    return [sys.executable, "-c", code, *args]


def env_for(tree: Tree) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree.root)
    env["PYTHONHASHSEED"] = "0"
    return env


def check_import(tree: Tree, cwd: Path) -> None:
    out = subprocess.run([sys.executable, "-c", "import binlogkit; print(binlogkit.__file__)"], cwd=cwd,
                         env=env_for(tree), capture_output=True, text=True, check=True).stdout.strip()
    if not Path(out).resolve().is_relative_to(tree.root.resolve()):
        raise SystemExit(f"ab: {tree.label} imports binlogkit from {out}, not from {tree.root}")


def make_input(mb: int) -> Path:
    out = ROOT / "bench" / f"data-ab-{mb}mb"
    if (out / "mariadb-bin.index").exists():
        return out
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    per_file = max(1, int(mb * 1e6 / FILES / 321))  # ~321 bytes a cloned transaction
    print(f"ab: writing a {mb} MB archive ({FILES} files of {per_file:,} transactions) into {out}", flush=True)
    code = ("import sys; from pathlib import Path; from fixtures.faults import generate; "
            "generate(Path(sys.argv[1]), files=int(sys.argv[2]), trx_per_file=int(sys.argv[3]), seed=1, faults=(), "
            "clock=1_700_000_000)")
    subprocess.run([sys.executable, "-c", code, str(tmp), str(FILES), str(per_file)], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    (tmp / "faults.json").unlink()
    tmp.rename(out)
    return out


def commands(data: Path, scratch: Path) -> dict[str, list[str]]:
    """name -> arguments; ``{out}`` is replaced by a fresh folder for each run."""
    files = [str(data)] if data.is_file() else sorted(str(p) for p in data.glob("*-bin.[0-9]*"))
    folder = str(data if data.is_dir() else data.parent)
    return {
        "verify": ["verify", *files],
        "decode": ["decode", *files],
        "decode --json": ["decode", "--json", *files],
        "decode -v": ["decode", "-v", *files],
        "transactions --json": ["transactions", "--json", *files],
        "audit": ["audit", "--engine", "local", "--jobs", "1", folder],
        "export": ["export", *files, "--output", "{out}", "--json"],
    }


_TIMES = re.compile(rb'"(seconds|elapsed|started|finished|written_at|time)[a-z_]*": *[^,}]+')


def run_once(tree: Tree, name: str, args: list[str], scratch: Path, *, digest: bool) -> tuple[float, float, int]:
    """Wall and CPU seconds (the child and its workers: wait4's rusage covers the reaped
    descendants) and the exit code of one run; with ``digest`` its stdout is hashed."""
    out_dir = scratch / "out"  # the same path for both trees: export prints it
    args = [str(out_dir) if a == "{out}" else a for a in args]
    shutil.rmtree(out_dir, ignore_errors=True)
    h = hashlib.sha256()
    t = time.perf_counter()
    proc = subprocess.Popen(command(tree, args), cwd=scratch, env=env_for(tree), stderr=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if digest else subprocess.DEVNULL)
    if digest:
        assert proc.stdout is not None
        chunks = []
        while block := proc.stdout.read(1 << 20):
            if name == "export":
                chunks.append(block)
            else:
                h.update(block)
        if chunks:  # export's summary holds times: hash the rest
            h.update(_TIMES.sub(b"", b"".join(chunks)))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    shutil.rmtree(out_dir, ignore_errors=True)
    if digest:
        tree.digests[name] = h.hexdigest()
    tree.codes.setdefault(name, set()).add(proc.returncode)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the revision to compare against (any git revision)")
    ap.add_argument("--head", help="a revision for the other side too (default: this working tree as it is)")
    ap.add_argument("--mb", type=int, default=100, help="size of the generated archive (default 100)")
    ap.add_argument("--generated", action="store_true", help="the generated archive even when bench/data exists")
    ap.add_argument("--input", type=Path, help="a binlog or a folder of binlogs instead")
    ap.add_argument("--runs", type=int, default=3, help="timed rounds (default 3)")
    ap.add_argument("--only", action="append", help="only this command (repeat), e.g. --only verify")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary checkouts (their path is printed)")
    args = ap.parse_args(argv)

    if args.input:
        data = args.input.resolve()
    elif BENCH_DATA.exists() and not args.generated:
        data = BENCH_DATA
    else:
        data = make_input(args.mb)
    size = data.stat().st_size if data.is_file() else sum(p.stat().st_size for p in data.glob("*-bin.[0-9]*"))

    work = Path(tempfile.mkdtemp(prefix="binlogkit-ab-"))
    try:
        base_rev = git("rev-parse", "--short", args.base)
        base = Tree("base", checkout(args.base, work / "base"), base_rev)
        if args.head:
            head = Tree("head", checkout(args.head, work / "head"), git("rev-parse", "--short", args.head))
        else:
            built = build_extensions(ROOT, only_stale=True)
            dirty = git("status", "--porcelain", "--untracked-files=no")
            head = Tree("head", ROOT, git("rev-parse", "--short", "HEAD") + ("+changes" if dirty else ""))
            if built:
                print(f"ab: rebuilt this tree's {', '.join(built)} (older than their sources)")
        scratch = work / "scratch"
        scratch.mkdir()
        trees = [base, head]
        for t in trees:
            t.entry = entry_point(t.root)
            check_import(t, scratch)
        cmds = commands(data, scratch)
        if args.only:
            unknown = set(args.only) - set(cmds)
            if unknown:
                ap.error(f"--only: no command {', '.join(sorted(unknown))} (one of: {', '.join(cmds)})")
            cmds = {k: v for k, v in cmds.items() if k in args.only}
        print(f"A/B: HEAD {head.rev} vs BASE {base.rev} on {data} ({size / 1e6:,.0f} MB), "
              f"{args.runs} interleaved rounds, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
              flush=True)
        t0 = time.perf_counter()
        for name, a in cmds.items():  # warm-up (page cache, .pyc) and the output check
            for t in trees:
                run_once(t, name, a, scratch, digest=True)
        warm = time.perf_counter() - t0
        print(f"  warm-up and output check: {warm:.0f} s; the rounds will take about {warm * args.runs / 60:.0f} min",
              flush=True)
        for r in range(args.runs):
            for name, a in cmds.items():
                for t in (trees if r % 2 == 0 else trees[::-1]):
                    wall, cpu, _ = run_once(t, name, a, scratch, digest=False)
                    t.times.setdefault(name, []).append(wall)
                    t.cpu.setdefault(name, []).append(cpu)
            print(f"  round {r + 1}/{args.runs} done", flush=True)
        rows: list[dict] = []
        print(f"\n{'command':<22} {'BASE s':>8} {'HEAD s':>8} {'ratio':>6}   {'BASE cpu':>8} {'HEAD cpu':>8} "
              f"{'ratio':>6}  {'MB/s HEAD':>9}  same output")
        for name in cmds:
            bw, hw = statistics.median(base.times[name]), statistics.median(head.times[name])
            bc, hc = statistics.median(base.cpu[name]), statistics.median(head.cpu[name])
            same = base.digests[name] == head.digests[name]
            codes = sorted(base.codes[name] | head.codes[name])
            note = "" if codes == [0] else f"  (exit {','.join(map(str, codes))})"
            print(f"{name:<22} {bw:>8.2f} {hw:>8.2f} {hw / bw:>6.2f}   {bc:>8.2f} {hc:>8.2f} {hc / bc:>6.2f}  "
                  f"{size / 1e6 / hw:>9.0f}  {'yes' if same else 'NO'}{note}")
            rows.append({"command": name, "base_wall": base.times[name], "head_wall": head.times[name],
                         "base_cpu": base.cpu[name], "head_cpu": head.cpu[name], "ratio_wall": hw / bw,
                         "ratio_cpu": hc / bc, "same_output": same, "exit_codes": codes})
        worst = max(abs(r["ratio_wall"] - 1) for r in rows)
        print(f"\nlargest |ratio - 1| (wall): {worst:.2f}; load average now {os.getloadavg()[0]:.1f}")
        if args.json:
            args.json.write_text(json.dumps({"base": base.rev, "head": head.rev, "input": str(data), "mb": size / 1e6,
                                             "runs": args.runs, "commands": rows}, indent=1))
        return 0
    finally:
        if args.keep:
            print(f"ab: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""The embedded default engine: the per-file pass over a process pool on this machine.

The parent process lists the files, hands paths to the pool (largest first), keeps the compact
summaries that come back, and runs the pure merge (``merge.py``) directory by directory; the
few files the merge wants scanned again with a context go back to the same pool.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from ..files import OPENERS
from .merge import merge
from .summary import file_summary


def audit_paths(paths: Iterable[str | os.PathLike]) -> list[str]:
    """Every binlog / relay-log file under the given files and folders, largest first."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and _looks_like_log(f):
                    out.append(str(f))
        elif p.is_file():
            out.append(str(p))
    return sorted(set(out), key=lambda f: -os.path.getsize(f))


def _looks_like_log(p: Path) -> bool:
    name = p.name
    for suffix in OPENERS:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    tail = name.rsplit(".", 1)
    return len(tail) == 2 and tail[1].isdigit()


def _again(item: tuple[str, dict]) -> dict:
    return file_summary(item[0], item[1])


def run_local(paths: Iterable[str | os.PathLike], *, jobs: int | None = None, live: bool = False,
              progress: Callable[[int, int], None] | None = None, max_findings: int | None = None,
              max_series: int | None = None) -> dict:
    """Audit with a process pool (``jobs`` workers; 1 = in this process). ``live``: the last
    file of a series may still be written by a server (a torn tail is then a warning).
    ``max_findings`` / ``max_series``: keep only the first ones in the result (None: all), as
    the Spark job's driver does; the counts cover everything."""
    files = audit_paths(paths)
    jobs = jobs or os.cpu_count() or 1
    summaries = []
    if jobs == 1 or len(files) <= 1:
        for i, f in enumerate(files):
            summaries.append(file_summary(f))
            if progress:
                progress(i + 1, len(files))
        return merge(summaries, live=live, max_findings=max_findings, max_series=max_series)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, s in enumerate(pool.map(file_summary, files, chunksize=1)):
            summaries.append(s)
            if progress:
                progress(i + 1, len(files))
        return merge(summaries, live=live, rescan=lambda items: pool.map(_again, items, chunksize=1),
                     max_findings=max_findings, max_series=max_series)

"""The embedded default engine: the per-file pass over a process pool on this machine."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from ..files import OPENERS
from .manifest import file_manifest
from .merge import merge


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


def run_local(paths: Iterable[str | os.PathLike], *, jobs: int | None = None,
              progress: Callable[[int, int], None] | None = None, keys=None) -> dict:
    """Audit with a process pool (``jobs`` workers; 1 = in this process). ``keys`` (a
    ``crypto.Keys``) reads encrypted files; workers get only its ``KeySpec`` (paths) and load
    the keys themselves, so no key bytes cross a pipe."""
    spec = keys.spec if keys is not None else None
    files = audit_paths(paths)
    jobs = jobs or os.cpu_count() or 1
    manifests = []
    if jobs == 1 or len(files) <= 1:
        for i, f in enumerate(files):
            manifests.append(file_manifest(f, keys))
            if progress:
                progress(i + 1, len(files))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for i, m in enumerate(pool.map(file_manifest, files, [spec] * len(files), chunksize=1)):
                manifests.append(m)
                if progress:
                    progress(i + 1, len(files))
    return merge(manifests)

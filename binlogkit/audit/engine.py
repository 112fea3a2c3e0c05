"""The embedded default engine: the per-file pass over a process pool on this machine.

The parent process lists the files, hands paths to the pool (largest first, a few at a time),
puts the compact summaries that come back aside per directory (a temporary folder), and runs the
pure merge (``merge.py``) directory by directory; the few files the merge wants scanned again
with a context go back to the same pool.
"""

from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..reading.names import is_log_name
from .merge import Results, merge_directory, plan_directory
from ..reading.source import Input, as_input
from .summary import file_summary


def audit_paths(paths: Iterable[Input | str | os.PathLike]) -> list[str]:
    """Every binlog / relay-log file under the given files and folders (or object-storage
    prefixes: ``storage.find_logs``), largest first; an ``.index`` given stands for the files
    it lists that exist (``listed_missing`` gives the others). Anything named like a log that
    is not a regular file (a FIFO, a device, a link to one) is ``NotRegularFileError``: refused,
    not skipped (skipping it made "0 files: 0 errors")."""
    return [i.name for i in audit_inputs(paths)]


def audit_inputs(paths: Iterable[Input | str | os.PathLike]) -> list[Input]:
    """``audit_paths`` as ``Input`` values: each file read with the options (keys) of the
    argument it was found under."""
    from ..reading.files import same_file

    sizes: dict[str, int] = {}
    found: dict[tuple[str, str], Input] = {}   # each file once, however often it is named
    for src in map(as_input, paths):
        for f in _logs_under(src.path, sizes):
            found.setdefault(same_file(f), src.with_options(path=f))
    return sorted(found.values(), key=lambda i: -(sizes[i.name] if i.name in sizes else os.path.getsize(i.name)))


def _logs_under(arg, sizes: dict[str, int]) -> list[str]:
    """The logs one argument stands for (``audit_paths``); object sizes go into ``sizes``."""
    from ..reading.files import check_regular, read_index
    from ..reading.storage import find_logs, is_url

    out: list[str] = []
    if is_url(arg):
        for url, size in find_logs(os.fspath(arg)):
            sizes[url] = size
            out.append(url)
        return out
    p = Path(arg)
    if p.is_dir():
        for f in sorted(p.rglob("*")):
            if not f.is_dir() and is_log_name(f.name):
                check_regular(f)
                out.append(str(f))
    elif p.suffix == ".index" and p.is_file():
        for f in read_index(p).files:
            if f.exists():
                check_regular(f)
                out.append(str(f))
    else:
        check_regular(p)
        out.append(str(p))
    return out


def listed_missing(paths: Iterable[str | os.PathLike], notes: list[str] | None = None) -> dict[str, str]:
    """``{path: index}`` for every file an ``.index`` under the given files and folders lists
    but the archive does not have: a missing file (the index says it existed), an error of the
    audit. Index entries are resolved as every command resolves them (``files.read_index``: the
    files of their names beside the index; ``notes`` gets one line per index naming another folder;
    under an object-storage prefix ``storage.index_entries``)."""
    from ..reading.files import read_index
    from ..reading.storage import is_url

    out: dict[str, str] = {}
    for arg in paths:
        if is_url(arg):
            from ..reading import storage

            for url in storage.find_indexes(os.fspath(arg)):  # objects: by base name beside the index
                for u in storage.index_entries(url):
                    if not storage.exists(u):
                        out.setdefault(u, url)
            continue
        p = Path(arg)
        indexes = sorted(f for f in p.rglob("*.index") if f.is_file()) if p.is_dir() else (
            [p] if p.suffix == ".index" and p.is_file() else [])
        for index in indexes:
            listing = read_index(index)
            if listing.elsewhere and notes is not None:
                notes.append(listing.note())
            for f in listing.files:
                if not (f.exists() or f.is_symlink()):
                    out.setdefault(str(f), str(index))
    return out


def within(missing: dict[str, str], directory: str) -> dict[str, str]:
    """The entries of ``listed_missing`` in one directory (the merge's unit)."""
    return {m: i for m, i in missing.items() if os.path.dirname(m) == directory}


def _again(item: tuple[Input, dict]) -> dict:
    return file_summary(item[0], item[1])


class _Spill:
    """The summaries as they come back, in one JSON-lines file per directory in a private
    temporary folder: the parent holds one directory's summaries at a time, not the archive's."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.index: dict[str, int] = {}

    def add(self, s: dict) -> None:
        k = self.index.setdefault(s["directory"], len(self.index))
        with open(os.path.join(self.folder, f"{k}.jsonl"), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(s, separators=(",", ":")) + "\n")

    def directories(self) -> Iterator[list[dict]]:
        for d in sorted(self.index):
            with open(os.path.join(self.folder, f"{self.index[d]}.jsonl"), encoding="utf-8") as fh:
                yield [json.loads(line) for line in fh]


def _as_done(pool: ProcessPoolExecutor, fn, items: list, window: int) -> Iterator:
    """``fn`` over ``items`` on the pool, results in completion order, with at most ``window``
    tasks submitted at a time (``pool.map`` would hold a future for every file)."""
    it = iter(items)
    pending = {pool.submit(fn, x) for x in islice(it, window)}
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for fut in done:
            nxt = next(it, _END)
            if nxt is not _END:
                pending.add(pool.submit(fn, nxt))
            yield fut.result()


_END = object()


def run_local(paths: Iterable[Input | str | os.PathLike], *, jobs: int | None = None, live: bool = False,
              progress: Callable[[int, int], None] | None = None, max_findings: int | None = None,
              max_series: int | None = None) -> dict:
    """Audit with a process pool (``jobs`` workers; 1 = in this process). ``live``: the last
    file of a series may still be written by a server (a torn tail is then a warning).
    ``max_findings`` / ``max_series``: keep only the first ones in the result (None: all), as
    the Spark job's driver does; the counts cover everything.

    The parent holds the list of file paths, one directory's summaries at a time (the others
    wait in a temporary folder, about 1-4 KB per file) and the result: with both limits set its
    memory does not grow with the archive."""
    given = [as_input(p) for p in paths]
    files = audit_inputs(given)
    by_name = {f.name: f for f in files}
    missing = listed_missing([g.path for g in given])  # what the indexes list and the archive lacks: errors
    jobs = jobs or os.cpu_count() or 1
    # an Input's keys (a ``crypto.Keys``) read encrypted files; workers get only their
    # ``KeySpec`` (paths: ``Input.for_worker``) and load the keys themselves, so no key bytes
    # cross a pipe
    acc = Results(limit=max_findings, max_series=max_series)
    total = 0
    with tempfile.TemporaryDirectory(prefix="binlogkit-audit-") as tmp:
        spill = _Spill(tmp)
        if jobs == 1 or len(files) <= 1:
            pool = None
            summaries: Iterable[dict] = (file_summary(f) for f in files)
        else:
            pool = ProcessPoolExecutor(max_workers=jobs)
            summaries = _as_done(pool, file_summary, [f.for_worker() for f in files], 4 * jobs)
        try:
            for i, s in enumerate(summaries):
                spill.add(s)
                total += s["size"]
                if progress:
                    progress(i + 1, len(files))
            for directory in sorted({os.path.dirname(m) for m in missing} - set(spill.index)):
                acc.add(*merge_directory([], {}, live=live, listed_missing=within(missing, directory)))
            for group in spill.directories():
                wanted = plan_directory(group)
                if not wanted:
                    again = {}
                elif pool is None:
                    again = {p: file_summary(by_name[p], c) for p, c in sorted(wanted.items())}
                else:
                    again = {r["file"]: r for r in pool.map(_again, [(by_name[p].for_worker(), c) for p, c
                                                                     in sorted(wanted.items())], chunksize=1)}
                acc.add(*merge_directory(group, again, live=live,
                                         listed_missing=within(missing, group[0]["directory"])))
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
    return acc.result(files=len(files), bytes_=total)

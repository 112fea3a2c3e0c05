"""Compare a primary's binlogs with what replicas hold, transaction by transaction (by GTID).

The answer a failover needs: the last transaction every side has, the primary's transactions
no replica received (the un-acknowledged tail after a semisync AFTER_SYNC crash: written to the
binlog, never confirmed), and transactions a replica has that the primary lacks (errant).
Only complete transactions count; the primary's incomplete tail is reported apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .api import transactions
from .reading.source import Input, inputs
from .gtid import ranges_text
from .transactions import Transaction
from .errors import BinlogError, DecryptionError, KeyFileError, KeyRequiredError


@dataclass(frozen=True)
class _Side:
    paths: list[str]
    gtids: set[str]
    problem: str | None


def _gtid_trx(side: list[Input], relay: bool | None) -> tuple[list, list, str | None]:
    """Complete and incomplete GTID transactions of one side, and its damage (every damaged
    file, one per line; the files after one are read on), or None."""
    complete: list[Transaction] = []
    incomplete: list[Transaction] = []
    problems: list[BinlogError] = []
    for t in transactions(side, relay=relay, problems=problems):
        if t.gtid:
            (complete if t.complete else incomplete).append(t)
    for exc in problems:
        if isinstance(exc, (KeyRequiredError, KeyFileError, DecryptionError)):
            raise exc  # a side that cannot be read is not a side that holds nothing
    return complete, incomplete, "\n".join(map(str, problems)) or None


def compare(primary: Iterable[Input | str | os.PathLike], replicas: list[Iterable[Input | str | os.PathLike]]) -> dict:
    """``Input`` values carry the keys of encrypted sides; one that cannot be decrypted raises."""
    p_done, p_open, p_problem = _gtid_trx(inputs(primary), relay=None)
    sides: list[_Side] = []
    for paths in replicas:
        paths = list(paths)
        done, _open, problem = _gtid_trx(inputs(paths), relay=None)
        sides.append(_Side([os.fspath(x) for x in paths], {t.gtid for t in done if t.gtid}, problem))
    p_gtids = [t.gtid for t in p_done]
    p_set = set(p_gtids)
    held_by_any: set[str] = set().union(*(s.gtids for s in sides)) if sides else set()
    held_by_all: set[str] = set.intersection(*(s.gtids for s in sides)) if sides else set()
    last_common = None
    for g in p_gtids:
        if g in held_by_all:
            last_common = g
    # the un-acknowledged tail: primary transactions after the last one some replica holds
    last_any = max((i for i, g in enumerate(p_gtids) if g in held_by_any), default=-1)
    tail = [t for t in p_done[last_any + 1:]]
    return {
        "primary": {"transactions": len(p_done), "last": p_gtids[-1] if p_gtids else None,
                    "incomplete": [{"gtid": t.gtid, "file": Path(t.start_file).name, "offset": t.start_offset}
                                   for t in p_open], "problem": p_problem},
        "last_common": last_common,
        "unacknowledged": [{"gtid": t.gtid, "file": Path(t.start_file).name, "offset": t.start_offset,
                            "end_offset": t.end_offset} for t in tail],
        "unacknowledged_ranges": ranges_text(t.gtid for t in tail if t.gtid),
        "replicas": [_replica(s, p_set, p_gtids, {t.gtid for t in tail}) for s in sides],
    }


def _replica(s: _Side, p_set: set[str], p_gtids: list[str], tail: set[str | None]) -> dict:
    """One replica's part: what it lacks (the first 100 in the primary's order, and all of it as
    ranges), its errant GTIDs (a list, and as ranges)."""
    missing = p_set - s.gtids - tail
    rank = {g: i for i, g in enumerate(p_gtids)}
    errant = s.gtids - p_set
    return {"paths": s.paths, "transactions": len(s.gtids),
            "missing_from_replica": sorted(missing, key=rank.__getitem__)[:100],
            "missing_count": len(missing), "missing_ranges": ranges_text(missing),
            "errant": sorted(errant), "errant_count": len(errant), "errant_ranges": ranges_text(errant),
            "problem": s.problem}


def damage(res: dict) -> list[str]:
    """The lines of the problems of ``compare``'s sides (a damaged file: what it held is unknown)."""
    return [x for p in [res["primary"]["problem"]] + [r["problem"] for r in res["replicas"]] if p
            for x in p.splitlines()]


def differs(res: dict) -> bool:
    """Whether ``compare``'s sides differ: unacknowledged, errant or incomplete transactions."""
    return bool(res["unacknowledged"] or any(r["errant"] for r in res["replicas"]) or res["primary"]["incomplete"])

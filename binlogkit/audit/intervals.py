"""Interval sets keyed by GTID stream: the audit's one representation of "which GTIDs".

A **key** names a stream of sequence numbers: ``"domain-server"`` for MariaDB (``0-1``), the
uuid (or ``uuid:tag``) for MySQL. A set is ``{key: [[a, b], ...]}`` with closed, sorted,
disjoint, non-adjacent intervals (the convention of ``binlogkit.gtid``): JSON-able as it is, and
its size depends on the number of holes, not of transactions.

``Runs`` builds one while a file is scanned (appending the next number is O(1)); the functions
below are pure and never mutate their arguments.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

from ..gtid.forms import key_form, text_form

IntervalSet = dict[str, list[list[int]]]


def split_gtid(gtid: str) -> tuple[str, int]:
    """``"0-1-7"`` -> ``("0-1", 7)``; ``"uuid:7"`` -> ``("uuid", 7)``; ``"uuid:tag:7"`` -> ``("uuid:tag", 7)``."""
    return text_form(gtid).split(gtid)


def mysql_mapping(s: IntervalSet) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """A MySQL set's ``{"uuid[:tag]": [[a, b], ...]}`` as ``{(uuid, tag): [(a, b), ...]}`` (tag ""
    when untagged): the mapping ``gtid.MysqlGtidSet`` is built from."""
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for k, ivs in s.items():
        uuid, _sep, tag = k.partition(":")
        out[(uuid, tag)] = [(a, b) for a, b in ivs]
    return out


def join_gtid(key: str, n: int) -> str:
    return key_form(key).join(key, n)


class Runs:
    """A growing interval set (the per-file pass adds one number per transaction)."""

    __slots__ = ("m",)

    def __init__(self) -> None:
        self.m: IntervalSet = {}

    def add(self, key: str, n: int) -> None:
        ivs = self.m.get(key)
        if ivs is None:
            self.m[key] = [[n, n]]
            return
        last = ivs[-1]
        if n == last[1] + 1:
            last[1] = n
        elif n > last[1] + 1:
            ivs.append([n, n])
        elif not contains_ivs(ivs, n):
            _insert(ivs, n)

    def __contains__(self, item: tuple[str, int]) -> bool:
        ivs = self.m.get(item[0])
        return ivs is not None and contains_ivs(ivs, item[1])


def _insert(ivs: list[list[int]], n: int) -> None:
    i = bisect_right(ivs, [n, n])
    ivs.insert(i, [n, n])
    # merge with neighbours
    if i + 1 < len(ivs) and ivs[i + 1][0] == n + 1:
        ivs[i][1] = ivs[i + 1][1]
        del ivs[i + 1]
    if i > 0 and ivs[i - 1][1] + 1 >= ivs[i][0]:
        ivs[i - 1][1] = max(ivs[i - 1][1], ivs[i][1])
        del ivs[i]


def contains_ivs(ivs: list[list[int]], n: int) -> bool:
    i = bisect_right(ivs, [n, float("inf")]) - 1
    return i >= 0 and ivs[i][0] <= n <= ivs[i][1]


def contains(s: IntervalSet, key: str, n: int) -> bool:
    ivs = s.get(key)
    return ivs is not None and contains_ivs(ivs, n)


def normalize(ivs: Iterable[Iterable[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for a, b in sorted((int(a), int(b)) for a, b in ivs):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def union(*sets: IntervalSet) -> IntervalSet:
    acc: dict[str, list[list[int]]] = {}
    for s in sets:
        for k, ivs in s.items():
            acc.setdefault(k, []).extend(ivs)
    return {k: normalize(v) for k, v in sorted(acc.items()) if v}


def add_into(acc: IntervalSet, s: IntervalSet) -> None:
    """``acc |= s`` in place (``acc`` is the caller's own): appending intervals that lie past
    ``acc``'s end, the common case of a series read in order, costs O(len(s))."""
    for k, ivs in s.items():
        mine = acc.get(k)
        if not mine:
            acc[k] = [list(iv) for iv in ivs]
        elif ivs[0][0] > mine[-1][1] + 1:
            mine.extend(list(iv) for iv in ivs)
        elif ivs[0][0] == mine[-1][1] + 1:
            mine[-1][1] = ivs[0][1]
            mine.extend(list(iv) for iv in ivs[1:])
        else:
            acc[k] = normalize(mine + list(ivs))


def intersect(a: IntervalSet, b: IntervalSet) -> IntervalSet:
    out: IntervalSet = {}
    for k in sorted(a.keys() & b.keys()):
        x, y, i, j = a[k], b[k], 0, 0
        r: list[list[int]] = []
        while i < len(x) and j < len(y):
            lo, hi = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
            if lo <= hi:
                r.append([lo, hi])
            if x[i][1] < y[j][1]:
                i += 1
            else:
                j += 1
        if r:
            out[k] = r
    return out


def subtract(a: IntervalSet, b: IntervalSet) -> IntervalSet:
    out: IntervalSet = {}
    for k, ivs in sorted(a.items()):
        holes = b.get(k)
        if not holes:
            if ivs:
                out[k] = [list(iv) for iv in ivs]
            continue
        r: list[list[int]] = []
        j = 0
        for lo, hi in ivs:
            cur = lo
            while j < len(holes) and holes[j][1] < cur:
                j += 1
            jj = j
            while jj < len(holes) and holes[jj][0] <= hi:
                if holes[jj][0] > cur:
                    r.append([cur, holes[jj][0] - 1])
                cur = max(cur, holes[jj][1] + 1)
                jj += 1
            if cur <= hi:
                r.append([cur, hi])
        if r:
            out[k] = r
    return out


def count(s: IntervalSet) -> int:
    return sum(b - a + 1 for ivs in s.values() for a, b in ivs)


def first_elements(s: IntervalSet) -> dict[str, int]:
    return {k: ivs[0][0] for k, ivs in s.items() if ivs}

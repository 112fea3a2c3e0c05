"""The current state of a table from its change rows: pure (keys and row numbers in, the
state's delta out; no I/O, no Arrow).

A change is ``(op, before_key, after_key)``: the key (the primary key's values, a tuple) of
the before image (update, delete) and of the after image (insert, update). Folding a batch
of changes in commit order gives, for every key the batch touched, the number of the change
whose after image is the key's row at the end of the batch, or None when the key holds no
row at the end (deleted, or moved away by a key update)::

    insert k            k -> i
    update k -> k       k -> i
    update k -> k2      k -> None, k2 -> i          (a key update: the old key is gone)
    delete k            k -> None

A mirror commit of a batch: delete every touched key, then append the rows named. The same
fold applied to a whole change table gives the table (``state``).
"""

from __future__ import annotations

from typing import Iterable, Sequence

Key = tuple
Change = tuple[str, "Key | None", "Key | None"]


def fold(changes: Iterable[Change]) -> dict[Key, int | None]:
    """Touched key -> the number (position in ``changes``) of the change holding its final row,
    or None (no row at the end). Insertion order of the result: first touch."""
    out: dict = {}
    for i, (op, before, after) in enumerate(changes):
        if op == "insert":
            out[after] = i
        elif op == "delete":
            out[before] = None
        else:
            if before != after:
                out[before] = None
            out[after] = i
    return out


def state(changes: Sequence[Change], start: dict[Key, int] | None = None) -> dict[Key, int]:
    """The rows at the end of a whole change history (key -> number of the change that holds
    it), from ``start`` (key -> a row number of the snapshot) on."""
    out = dict(start or {})
    for k, i in fold(changes).items():
        if i is None:
            out.pop(k, None)
        else:
            out[k] = i
    return out


def keys_of(rows: Sequence[dict], names: Sequence[str]) -> list[Key | None]:
    """The key tuple of each row (a dict of column values), None for a row that is None."""
    return [None if r is None else tuple(r[n] for n in names) for r in rows]

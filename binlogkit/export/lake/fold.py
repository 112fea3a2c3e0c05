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


# a change with its after image as a row: (op, before key, after row (column -> value) or None,
# the columns the after image holds (None: every column; binlog_row_image MINIMAL / NOBLOB
# log only the changed ones))
RowChange = tuple[str, "Key | None", "dict | None", "frozenset | None"]


def _after_key(before: Key | None, row: dict, present: frozenset | None, key: Sequence[str]) -> Key:
    """The key of an after image: a key column it lacks (MINIMAL: not changed) keeps the
    before image's value."""
    if present is None or before is None:
        return tuple(row[k] for k in key)
    return tuple(row[k] if k in present else b for k, b in zip(key, before))


def base_keys(changes: Sequence[RowChange], key: Sequence[str]) -> list[Key]:
    """The keys whose row before the batch a partial after image needs (their first touch in
    the batch is a partial update): to read from the table before ``fold_rows``."""
    seen: set = set()
    need: list = []
    for op, before, row, present in changes:
        if op == "update" and present is not None and before not in seen:
            need.append(before)
            seen.add(before)
        if op == "update":
            seen.add(before)
            seen.add(_after_key(before, row or {}, present, key))
        elif op == "insert":
            seen.add(_after_key(None, row or {}, None, key))
        else:
            seen.add(before)
    return need


def fold_rows(changes: Sequence[RowChange], key: Sequence[str], base: dict) -> tuple[dict, int | None]:
    """The rows at the end of a batch whose after images may be partial: touched key -> its
    row (column -> value) or None (gone), and the number of the first change that could not
    be applied (a partial image of a row neither the batch nor ``base``, the table's rows of
    ``base_keys``, holds), None when every change was: the result then holds the changes
    before it. A partial image's columns overwrite the row's; the others keep their values."""
    state: dict = {}
    for i, (op, before, row, present) in enumerate(changes):
        if op == "delete":
            state[before] = None
            continue
        assert row is not None
        if op == "insert" or present is None:
            new = row
        else:
            old = state[before] if before in state else base.get(before)
            if old is None:
                return state, i
            new = {**old, **{c: row[c] for c in present if c in row}}
        after = _after_key(before if op == "update" else None, row, present if op == "update" else None, key)
        if op == "update" and after != before:
            state[before] = None
        state[after] = new
    return state, None

"""The tables of the ``binlog`` data source as Arrow record batches, one file at a time, without
Spark (``source.py`` is the glue): each table's Arrow schema and a generator of batches of at
most ``batch_rows`` rows for one ``FileTask``. Memory: one batch of columns (and, for
``changes``, the export's row-group buffer), never a file.

=============  ========================================================================  ==========================
table          rows                                                                      made by
=============  ========================================================================  ==========================
events         one per event, the fields of ``binlogkit decode --json`` (``fields`` as    ``api.decode_files``
               its JSON text; ``gtid``: the GTID of the transaction the event is in)
transactions   one per transaction, the fields of ``binlogkit transactions --json``       ``transactions.group_files``
changes        one per changed row, export's columns; long form (``before`` / ``after``   ``export.changes`` +
               as JSON objects, a ``db`` / ``table`` column) or, with ``changes_table``,  ``export.dataset``
               that table's typed export columns
summaries      one per file, audit's per-file summary (``summary``: all of it as JSON)     ``audit.summary``
=============  ========================================================================  ==========================

One module per table (``events.py``, ``transactions.py``, ``changes.py``, ``summaries.py``) and
what they share (``common.py``); this one hands a read to its table's module (``batches``) and
names the four modules' functions (imported when first asked for: importing it costs nothing
but ``common``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from .common import BATCH_ROWS, Query, _Batcher, _pa, _range_frames, _rows_to_batches, note_open, schema

if TYPE_CHECKING:
    from .files import FileTask

__all__ = ["BATCH_ROWS", "Query", "_Batcher", "_pa", "_range_frames", "_rows_to_batches", "note_open", "schema", "batches"]

_MODULES = ("events", "transactions", "changes", "summaries")


def batches(q: Query, task: FileTask, resolve=None) -> Iterator[Any]:
    """The Arrow batches of ``q.table`` for one file (its table's module imported here: a worker
    that reads ``transactions`` never imports the export's walk)."""
    note_open(q, task)
    inp = task.input(resolve)
    if q.table == "changes":
        from .changes import _changes

        yield from _changes(q, task, inp)
        return
    if q.table == "transactions":
        from .transactions import _transactions

        yield from _transactions(q, task, inp)
        return
    if q.table == "summaries":
        from .summaries import _summaries

        yield from _rows_to_batches(_summaries(q, task, inp), schema(q.table), q.batch_rows)
        return
    from . import events as E

    if E._eventcols() is not None:
        if not q.fields:
            yield from E.header_batches(q, task, inp)
            return
        if E.decoded_usable(task, inp):
            yield from E.decoded_batches(q, task, inp)
            return
    yield from _rows_to_batches(E._events(q, task, inp), schema(q.table), q.batch_rows)


def __getattr__(name: str) -> Any:
    """A function of one of the table modules (``tables.long_batch``, ``tables._headers``...)."""
    import importlib

    if name.startswith("__"):   # the import system's and pickle's questions: not a table's function
        raise AttributeError(name)
    for mod in _MODULES:
        m = importlib.import_module(f"{__name__.rsplit('.', 1)[0]}.{mod}")
        if hasattr(m, name):
            return getattr(m, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

The public API::

    from binlogkit import open_binlog, iter_raw_events, BinlogError
    for event in open_binlog("mariadb-bin.000001"):
        print(event.offset, event.type_name, event.event_size)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

from .errors import BinlogError

if TYPE_CHECKING:
    from .flavor import Flavor
    from .reading.events import Event, decode
    from .reading.format import Format
    from .reading.reader import RawEvent, iter_raw_events
    from .reading.source import Input

# public name -> the module that defines it, imported on first use (PEP 562): ``binlogkit decode``
# prints replayable text from the C loop and need not load Construct and every codec at start-up
_LAZY = {"Event": ".reading.events", "decode": ".reading.events", "Format": ".reading.format", "Flavor": ".flavor",
         "RawEvent": ".reading.reader", "iter_raw_events": ".reading.reader", "Input": ".reading.source"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = ["BinlogError", "Event", "Flavor", "Format", "Input", "RawEvent", "decode", "iter_raw_events", "open_binlog",
           "__version__"]


def open_binlog(path: "Input | str | os.PathLike", *, verify: bool = True) -> "Iterator[RawEvent]":
    """Iterate the raw events of the binlog or relay log at ``path`` (opened read-only).

    Archives compressed as ``.xz``, ``.gz`` or ``.bz2`` are decompressed as a stream; encrypted
    files are decrypted with the keys of an ``Input`` (``Input(path, keys)``, keys from
    ``binlogkit.crypto.load_keys``).
    """
    from .reading.reader import read_events
    from .reading.source import as_input

    yield from read_events(as_input(path, verify=verify))

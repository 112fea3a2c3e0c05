"""binlogkit: read, check and repair MySQL and MariaDB binary logs and relay logs.

The public API::

    from binlogkit import open_binlog, iter_raw_events, BinlogError
    for event in open_binlog("mariadb-bin.000001"):
        print(event.offset, event.type_name, event.event_size)
"""

from __future__ import annotations

import os
from typing import Iterator

from .errors import BinlogError
from .reading.events import Event, decode
from .reading.format import Format
from .flavor import Flavor
from .reading.reader import RawEvent, iter_raw_events
from .reading.source import Input

__version__ = "0.1.0"

__all__ = ["BinlogError", "Event", "Flavor", "Format", "Input", "RawEvent", "decode", "iter_raw_events", "open_binlog",
           "__version__"]


def open_binlog(path: Input | str | os.PathLike, *, verify: bool = True) -> Iterator[RawEvent]:
    """Iterate the raw events of the binlog or relay log at ``path`` (opened read-only).

    Archives compressed as ``.xz``, ``.gz`` or ``.bz2`` are decompressed as a stream; encrypted
    files are decrypted with the keys of an ``Input`` (``Input(path, keys)``, keys from
    ``binlogkit.crypto.load_keys``).
    """
    from .reading.reader import read_events
    from .reading.source import as_input

    yield from read_events(as_input(path, verify=verify))

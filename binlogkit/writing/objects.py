"""Whole-or-nothing writes of one file or object: a local path through ``safeio`` (folder lock,
exclusive temporary file, fsync, rename; never through a link), an object-storage URL through
``reading.storage.write_atomic`` (an object appears only when its upload completes). The writers
(audit's and export's outputs, the report, the Spark jobs' parts and markers) call this one
function for both, so the reading layer never imports the writing one."""

from __future__ import annotations

import os
from typing import Any, Union

from ..reading import storage
from ..reading.storage import Writer
from .safeio import SafeDir


def write_atomic(url: str | os.PathLike, data: Union[bytes, bytearray, memoryview, Writer]) -> None:
    """Write ``data`` (bytes, or a function that writes to the binary file it is given) to
    ``url`` (a local path or an object-storage URL) so that readers see the whole of it or nothing."""
    if storage.is_url(url) and storage.protocol(os.fspath(url)) != "file":
        storage.write_atomic(url, data)
        return
    path = os.fspath(url).removeprefix("file://")
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if callable(data):
        writer = data

        def content(fd: int) -> None:
            with os.fdopen(os.dup(fd), "wb") as fh:
                writer(fh)
        body: Any = content
    else:
        body = bytes(data)
    with SafeDir(folder) as d, d.locked():
        d.target(name)  # refuses a link or anything but a regular file
        d.replace(name, body, new_mode=0o644)

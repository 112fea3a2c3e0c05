"""The one step of flashback that writes: the output file, through ``safeio``.

The output is created under an exclusive, unpredictable temporary name beside it, written,
fsynced and renamed into place (``SafeDir.replace``): a refusal or an error half-way leaves no
output at all. An existing output is replaced only with ``force``; a link as the output is
refused, always.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ..errors import WriteRefused
from ..safeio import SafeDir


class _Sink:
    """Buffered writes to a descriptor, counting bytes."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.size = fd, [], 0
        self.pending = 0

    def write(self, data: bytes) -> None:
        self.buf.append(data)
        self.size += len(data)
        self.pending += len(data)
        if self.pending >= 1 << 20:
            self.flush()

    def flush(self) -> None:
        from ..safeio import write_all

        if self.buf:
            write_all(self.fd, b"".join(self.buf))
        self.buf, self.pending = [], 0


def write_output(output: str | os.PathLike, produce: Callable[[_Sink], None], *, force: bool = False) -> None:
    """Create ``output`` with what ``produce`` writes to the sink it is given."""
    path = Path(output)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise WriteRefused(f"the folder of the output does not exist: {parent}", file=str(path))
    with SafeDir(parent) as d:
        old = d.lstat(path.name)
        if old is not None:
            import stat

            if stat.S_ISLNK(old.st_mode):
                raise WriteRefused(f"{path} is a symbolic link: the output is never written through a link",
                                   file=str(path))
            if not stat.S_ISREG(old.st_mode):
                raise WriteRefused(f"{path} exists and is not a regular file", file=str(path))
            if not force:
                raise WriteRefused(f"{path} exists: --force to replace it", file=str(path))

        def fill(fd: int) -> None:
            sink = _Sink(fd)
            produce(sink)
            sink.flush()

        d.replace(path.name, fill, new_mode=0o640)

"""The one step of flashback that writes: the output file, through ``safeio``.

With the output folder's lock held (``SafeDir.locked``: two binlogkit writers never work in one
folder at once), the output is created under an exclusive, unpredictable temporary name beside
it, written, fsynced and renamed into place (``SafeDir.replace``): a refusal or an error
half-way leaves no output at all. An existing output is replaced only with ``force``, and only
after a verified copy of it was put in a fresh folder beside the output's folder
(``OUTDIR.binlogkit-flashback-TIME-RANDOM``, or ``backup_dir``; ``safeio.Backup``); it keeps its owner and mode. A
link as the output is refused, always, and so is an output that is one of the inputs (same
device and inode). What a killed run left — the temporary output (``.OUTPUT.binlogkit-<random>``,
full size) and a backup folder whose copy equals the output still in place — is removed first,
under the lock (``safeio.remove_leftovers``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

from ..errors import WriteRefused
from ..writing.safeio import Backup, SafeDir, remove_leftovers, write_all


class _Sink:
    """Buffered writes to a descriptor, counting bytes."""

    def __init__(self, fd: int) -> None:
        self.fd, self.size = fd, 0
        self.buf: list[bytes] = []
        self.pending = 0

    def write(self, data: bytes) -> None:
        self.buf.append(data)
        self.size += len(data)
        self.pending += len(data)
        if self.pending >= 1 << 20:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            write_all(self.fd, b"".join(self.buf))
        self.buf, self.pending = [], 0


def write_output(output: str | os.PathLike, produce: Callable[[_Sink], None], *, force: bool = False,
                 inputs: Iterable[str] = (), backup_dir: str | os.PathLike | None = None,
                 cleaned: list[str] | None = None) -> str | None:
    """Create ``output`` with what ``produce`` writes to the sink it is given; the backup
    folder of the file it replaced (``force``), or None. ``cleaned`` gets what a killed earlier
    run writing the same output left and this one removed."""
    path = Path(output)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise WriteRefused(f"the folder of the output does not exist: {parent}", file=str(path))
    with SafeDir(parent) as d, d.locked():
        gone = remove_leftovers(d, "flashback", lambda n: n == path.name)
        if cleaned is not None:
            cleaned += gone
        old = d.lstat(path.name)
        kept = None
        if old is not None:
            import stat

            if stat.S_ISLNK(old.st_mode):
                raise WriteRefused(f"{path} is a symbolic link: the output is never written through a link",
                                   file=str(path))
            if not stat.S_ISREG(old.st_mode):
                raise WriteRefused(f"{path} exists and is not a regular file", file=str(path))
            for f in inputs:
                try:
                    st = os.stat(f)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) == (old.st_dev, old.st_ino):
                    raise WriteRefused(f"{path} is one of the inputs ({f}): write the undo elsewhere",
                                       file=str(path))
            if not force:
                raise WriteRefused(f"{path} exists: --force to replace it", file=str(path))
            target = d.target(path.name)
            if target is None:  # it was there a moment ago (lstat above)
                raise WriteRefused(f"{path} disappeared while it was being replaced", file=str(path))
            backup = Backup.beside(d, "flashback", backup_dir)
            try:
                backup.copy(target)
                backup.finish()
                kept = str(backup.path)
            finally:
                backup.close()

        def fill(fd: int) -> None:
            sink = _Sink(fd)
            produce(sink)
            sink.flush()

        d.replace(path.name, fill, new_mode=0o640)
    return kept

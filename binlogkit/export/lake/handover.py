"""The archive, then the primary: ``export --follow --host`` on an archive (a copy of a primary's
older binlogs, plain or compressed) continues live through ``binlogkit pull``, whose folder (the
durable buffer) is another one.

Where pull starts (``pull_start``): with the file the archive's last file hands over to — the
one its closing Rotate names (a Stop event: the next number) — or, when the archive's last file
was copied while the server wrote it (no Rotate, no Stop at its end), with that file itself,
whose copy pull then writes whole from its first byte. The follower reads the archive's files
and pull's as one list (``merge``): for a name both hold, the archive's copy until pull's holds
everything the follower has read of it (pull's copy is then checked to hold the same bytes,
``same_bytes``), so nothing is applied twice (each transaction's place is its file and offset,
the same in both copies) and nothing skipped. The junction is audited as any archive (the
audit's gap rules over the merged list); a primary that no longer holds the file pull asks for
(error 1236) stops the follower with that gap named.
"""

from __future__ import annotations

import os

from ...errors import UsageError
from ...reading.names import series_of, strip_compressed
from .props import order_key

PULL_STATE = ".binlogkit-pull.json"    # pull.store.STATE (not imported: pull's start-up path)
BUFFER = "_binlogkit_pull"             # pull's folder inside the warehouse, by default


def holds_binlogs(folder: str) -> bool:
    try:
        return any(series_of(n) for n in os.listdir(folder))
    except FileNotFoundError:
        return False


def pull_folder(inputs: list[str], pull_dir: str | None, warehouse: str) -> tuple[str, bool]:
    """(the folder ``pull`` writes, whether the inputs are an archive it continues). Without
    ``pull_dir``, one input folder that is absent, holds no binlog or is pull's own (its state
    file) is pull's folder (the inputs are what pull writes); other inputs are an archive, and
    pull writes ``WAREHOUSE/_binlogkit_pull``."""
    if pull_dir is not None:
        here = {os.path.realpath(p) for p in inputs}
        if os.path.realpath(pull_dir) in here:
            raise UsageError(f"--pull-dir {pull_dir} is an input: give the archive as INPUTS and another folder "
                             "to --pull-dir (or the pull folder alone as INPUTS, without --pull-dir)")
        return pull_dir, True
    if len(inputs) == 1 and "://" not in inputs[0] and (
            not os.path.isdir(inputs[0]) or os.path.exists(os.path.join(inputs[0], PULL_STATE))
            or not holds_binlogs(inputs[0])):
        return inputs[0], False
    if "://" in warehouse:
        raise UsageError("--follow --host on an archive: give --pull-dir (pull's folder) for an object-store "
                         "warehouse")
    return os.path.join(warehouse, BUFFER), True


def archive_end(last) -> tuple[str, str | None]:
    """(name of the archive's last file ``last``, an ``Input``; the file its closing Rotate
    names, or after a Stop event the next number; None when it ends with neither: a copy of
    the file the server was writing)."""
    from ...constants import EventFlag, EventType
    from ...errors import BinlogError
    from ...reading.reader import read_events

    name = strip_compressed(last.basename)
    nxt = None
    try:
        for ev in read_events(last):
            nxt = None
            if ev.type_code == EventType.ROTATE_EVENT and not ev.flags & EventFlag.ARTIFICIAL:
                nxt = ev.body[8:].decode("utf-8", "replace")
            elif ev.type_code == EventType.STOP_EVENT:
                base, n = series_of(name) or (name, 0)
                nxt = f"{base}.{n + 1:06d}"
    except BinlogError:     # a torn tail: a copy taken while the server wrote
        nxt = None
    return name, nxt


def pull_start(archive: list, checkpoint: dict | None = None) -> str:
    """The file pull starts with on an empty folder: where the archive hands over
    (``archive_end``), or the checkpoint's file when it is past that (pull's folder was emptied)."""
    name, nxt = archive_end(archive[-1])
    start = nxt or name
    if checkpoint and order_key(checkpoint["file"], 0) > order_key(start, 0):
        start = strip_compressed(checkpoint["file"])
    return start


def merge(archive: list, pulled: list, at: tuple | None, size=os.path.getsize) -> list:
    """The archive's files and pull's as one list in binlog order (pure but for ``size``):
    for a name both hold, pull's copy when pull has finished it (a newer file follows it) or
    holds every byte the follower has read (``at``, the order key it has read whole up to, is
    in that file and pull's copy reaches it, or is past that file); else the archive's."""
    if not pulled:
        return list(archive)
    a, p = series_of(archive[0].name), series_of(pulled[0].name)
    if a and p and a[0] != p[0]:
        raise UsageError(f"the archive holds {a[0]}.* and the primary writes {p[0]}.*: not one server's binlogs")
    out = {strip_compressed(i.basename): i for i in archive}
    newest = pulled[-1].basename
    for i in pulled:
        n = i.basename
        if n in out and n == newest:
            k = order_key(n, 0)[:2]
            if at is None or at[:2] < k or (at[:2] == k and size(i.name) < at[2]):
                continue            # the archive's copy still holds more than pull's
        out[n] = i
    return [out[n] for n in sorted(out, key=lambda n: order_key(n, 0))]


def same_bytes(archive_copy, pulled_copy) -> int | None:
    """None when the two copies of one file hold the same bytes after the Format_description
    event (whose in-use flag and checksum a copy of a file being written differs in) as far as
    both go; else the first offset where they differ."""
    from ...reading.files import open_input

    def full(fh, n: int) -> bytes:      # a decompressing stream may give less than asked
        out = b""
        while len(out) < n:
            got = fh.read(n - len(out))
            if not got:
                break
            out += got
        return out
    with open_input(archive_copy.name) as fa, open_input(pulled_copy.name) as fp:
        a, p = full(fa, 4 + 19), full(fp, 4 + 19)
        if len(a) < 23 or len(p) < 23:
            return None
        at = 4 + int.from_bytes(a[4 + 9:4 + 13], "little")
        if at != 4 + int.from_bytes(p[4 + 9:4 + 13], "little"):
            return 4
        full(fa, at - 23)
        full(fp, at - 23)
        while True:
            x, y = full(fa, 1 << 20), full(fp, 1 << 20)
            n = min(len(x), len(y))
            if x[:n] != y[:n]:
                return at + next(j for j in range(n) if x[j] != y[j])
            if n < (1 << 20):
                return None
            at += n

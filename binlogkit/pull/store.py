"""The folder ``pull`` writes: the primary's binlog files under their own names, an index, a state file.

Every write goes through ``binlogkit.writing.safeio``: the folder is opened once and locked for the
whole run (a second ``pull`` on the same folder is refused), names are opened relative to its
descriptor with ``O_NOFOLLOW`` (a planted link is refused, never written through), new files are
created ``O_EXCL`` and get the folder's owner, the index and the state file are replaced
atomically (temporary file, fsync, rename, fsync the folder).

Repair on start (what ``recover --binlog`` does, for the last file only — earlier files were
closed, flagged and fsynced before the next one began, unless ``--sync none`` (``durable=False``)
said not to: docs/pull.md): the last file is cut back to the end of
its last complete transaction (a torn event, a checksum failure, or a transaction without its
commit are cut), so that the next dump starts at exactly the next byte and no transaction is
skipped (MySQL bug #69943) or doubled.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat

from ..constants import BINLOG_MAGIC, OFS_FLAGS, EventFlag
from ..errors import BinlogError
from ..writing.safeio import SafeDir, write_all
from .protocol import HostileServer, PullError, check_name

STATE = ".binlogkit-pull.json"
_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
FDE_FLAGS_AT = 4 + OFS_FLAGS
_STALE = re.compile(r"\.(" + re.escape(STATE) + r"|[^/]+\.index)\.binlogkit-[0-9a-f]{16}")


def split_name(name: str) -> tuple[str, int]:
    m = re.fullmatch(r"(.+)\.(\d{6,})", name)
    if not m:
        raise PullError(f"{name!r} is not a binlog file name (BASE.NNNNNN)")
    return m.group(1), int(m.group(2))


class Repair:
    """What the start-up repair found and did. (A plain class, as the others on ``pull``'s
    start-up path: importing ``dataclasses`` — and its ``inspect`` — and making each class was
    a tenth of that start-up.)"""

    def __init__(self, file: str | None = None, position: int = 4) -> None:
        self.file = file                          # the file the pull resumes in (None: the folder is empty)
        self.position = position                  # ... at this byte
        self.cut_from: int | None = None          # the size before the cut, when one was made
        self.reason: str | None = None
        self.removed = False                      # the file was too short to keep (resumes at 4)
        self.dropped_gtids: list[str] = []

    def to_json(self) -> dict:
        return dict(vars(self))


class Store:
    """The pull folder, opened and locked for a run."""

    def __init__(self, path: str | os.PathLike, *, durable: bool = True) -> None:
        """``durable=False`` (``--sync none``): a binlog is not fsynced when it is closed (the
        index and state file still are, as every replace of ``safeio``)."""
        self.durable = durable
        p = os.path.abspath(path)
        if not os.path.lexists(p):
            os.mkdir(p, 0o750)
        self.dir = SafeDir(p)
        self._lock: contextlib.AbstractContextManager[SafeDir] | None = self.dir.locked()
        self._lock.__enter__()
        self.state = self._read_state()
        self.fd = -1
        self.name: str | None = None
        self.size = 0

    @property
    def path(self):
        return self.dir.path

    def close(self) -> None:
        self.close_file()
        if self._lock is not None:
            self._lock.__exit__(None, None, None)
            self._lock = None
        self.dir.close()

    # -- state ------------------------------------------------------------------------------
    def _read_state(self) -> dict | None:
        st = self.dir.lstat(STATE)
        if st is None:
            return None
        if not stat.S_ISREG(st.st_mode):
            raise PullError(f"{STATE} is not a regular file (a link?): refusing the folder", file=str(self.path))
        fd = os.open(STATE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.dir.fd)
        with os.fdopen(fd, "rb") as fh:
            try:
                state = json.loads(fh.read(1 << 20))
            except ValueError:
                raise PullError(f"{STATE} is not valid JSON", file=str(self.path / STATE)) from None
        base = state.get("base") if isinstance(state, dict) else None
        if not isinstance(base, str):
            raise PullError(f"{STATE} names no binlog base name", file=str(self.path / STATE))
        check_name(base + ".000001", STATE)   # its base names the index: a plain name too
        return state

    def write_state(self, state: dict) -> None:
        self.dir.replace(STATE, (json.dumps(state, indent=1, sort_keys=True) + "\n").encode(), new_mode=0o640)
        self.state = dict(state)

    def claim(self, *, server_id: int, base: str, flavor: str, source: str) -> None:
        """Check the folder belongs to this primary (or is new), and record it."""
        check_name(base + ".000001", "the first file")
        if self.state is None:
            stray = [n for n in self.dir.names() if re.fullmatch(r".+\.\d{6,}", n)]
            if stray:
                raise PullError(f"the folder holds binlog files ({', '.join(sorted(stray)[:3])}) but no {STATE}: "
                                "not a folder binlogkit pull made; use an empty folder", file=str(self.path))
            self.write_state({"primary_server_id": server_id, "base": base, "flavor": flavor, "source": source})
            return
        if self.state.get("primary_server_id") != server_id or self.state.get("base") != base:
            raise PullError(f"the folder holds binlogs of server_id {self.state.get('primary_server_id')} "
                            f"({self.state.get('base')}.*, pulled from {self.state.get('source')}); this primary "
                            f"is server_id {server_id} with {base}.*: use another folder", file=str(self.path))

    # -- files ----------------------------------------------------------------------------------
    def binlogs(self) -> list[str]:
        base = (self.state or {}).get("base")
        if not base:
            return []
        names = [n for n in self.dir.names() if re.fullmatch(re.escape(base) + r"\.\d{6,}", n)]
        return sorted(names, key=lambda n: split_name(n)[1])

    def write_index(self) -> None:
        base = (self.state or {}).get("base")
        if base:
            body = "".join(f"./{n}\n" for n in self.binlogs()).encode()
            self.dir.replace(f"{base}.index", body, new_mode=0o640)

    def remove_stale_temporaries(self) -> list[str]:
        """Temporary files of an index or state replace that a kill interrupted (safeio names
        them ``.NAME.binlogkit-<16 hex>``): ours, never renamed into place; removed."""
        gone = []
        for n in self.dir.names():
            if _STALE.fullmatch(n):
                st = self.dir.lstat(n)
                if st is not None and stat.S_ISREG(st.st_mode):
                    self.dir.unlink(n)
                    gone.append(n)
        if gone:
            self.dir.fsync()
        return gone

    def repair(self) -> Repair:
        """Cut the last file back to its last complete transaction; where to resume."""
        self.remove_stale_temporaries()
        names = self.binlogs()
        if not names:
            return Repair()
        last = names[-1]
        t = self.dir.target(last)  # refuses a link or anything but a regular file
        if t is None:  # listed a moment ago: only someone else in the folder removes it
            raise PullError(f"{last} disappeared from the folder while it was being repaired", file=str(self.path))
        keep, reason, dropped = _complete_prefix(self.path / last, t.st.st_size)
        rep = Repair(file=last, position=max(keep, 4))
        # a file shorter than the magic (killed between its creation and its first write) is
        # a cut too: announced and removed, never silently reused
        if keep < t.st.st_size or t.st.st_size < 4:
            rep.cut_from, rep.reason, rep.dropped_gtids = t.st.st_size, reason, dropped
            if keep <= 4:
                self.dir.unlink(last)
                self.dir.fsync()
                rep.removed, rep.position = True, 4
            else:
                self.dir.truncate(last, keep, identity=t.identity)
        if rep.removed or (rep.cut_from is None and keep <= 4):
            rep.position = 4
        self.write_index()
        return rep

    def fde_of(self, name: str) -> bytes | None:
        """The Format_description event at the top of ``name`` in the folder."""
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.dir.fd)
        try:
            head = os.pread(fd, 19, 4)
            if len(head) < 19:
                return None
            size = int.from_bytes(head[9:13], "little")
            return os.pread(fd, size, 4)
        finally:
            os.close(fd)

    def open_file(self, name: str, position: int) -> None:
        """Make ``name`` the file being written, at ``position`` (4: a new file). ``name`` comes
        from the server: a plain base name of this folder's binlogs (``BASE.NNNNNN``), opened
        relative to the folder's descriptor, never through a link."""
        name = check_name(name, "the primary")
        base = (self.state or {}).get("base")   # None only for a Store driven without claim (tests)
        if base is not None and split_name(name)[0] != base:
            raise HostileServer(f"the primary names {name}, not a {base}.NNNNNN file of the binlogs this folder "
                                "copies: refused", file=str(self.path))
        self.close_file()
        if position <= 4:
            if self.dir.lstat(name) is not None:
                t = self.dir.target(name)
                if t is None:  # it was there a moment ago (lstat above)
                    raise PullError(f"{name} disappeared from the folder while it was being opened",
                                    file=str(self.path))
                if t.st.st_size > 4:
                    raise PullError(f"{name} already exists in the folder with {t.st.st_size} bytes; the primary "
                                    "starts it anew: the folder does not match the primary", file=str(self.path / name))
                self.dir.unlink(name)
            fd = os.open(name, _NEW, 0o640, dir_fd=self.dir.fd)
            try:
                if os.geteuid() == 0 and (self.dir.st.st_uid, self.dir.st.st_gid) != (0, 0):
                    os.fchown(fd, self.dir.st.st_uid, self.dir.st.st_gid)
                write_all(fd, BINLOG_MAGIC)
            except BaseException:
                os.close(fd)
                raise
            self.fd, self.name, self.size = fd, name, 4
            self.write_index()
            return
        t = self.dir.target(name)
        if t is None:
            raise PullError(f"{name} is not in the folder, cannot resume in it at {position}", file=str(self.path))
        if t.st.st_size != position:
            raise PullError(f"{name} is {t.st.st_size} bytes, the resume point is {position}", file=str(self.path / name))
        fd = os.open(name, _APPEND, dir_fd=self.dir.fd)
        os.lseek(fd, position, os.SEEK_SET)
        self.fd, self.name, self.size = fd, name, position

    def pread(self, offset: int, size: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def write_parts(self, parts: list) -> None:
        """Append ``parts`` (bytes) in order with writev, 1024 at a time, short writes resumed."""
        i = 0
        while i < len(parts):
            batch = parts[i:i + 1024]
            want = sum(len(b) for b in batch)
            n = os.writev(self.fd, batch)
            self.size += n
            if n < want:   # a short write: the rest of this batch byte-exact, then on
                done = 0
                for b in batch:
                    if done + len(b) <= n:
                        done += len(b)
                        continue
                    rest = memoryview(b)[max(0, n - done):]
                    write_all(self.fd, rest)
                    self.size += len(rest)
                    done += len(b)
            i += 1024

    def truncate_to(self, size: int) -> None:
        """Cut the file being written back to ``size`` (an event that arrived only in part)."""
        if self.fd >= 0 and size < self.size:
            os.ftruncate(self.fd, size)
            os.lseek(self.fd, size, os.SEEK_SET)
            self.size = size

    def write(self, data) -> None:
        write_all(self.fd, data)
        self.size += len(data)

    def sync(self) -> None:
        if self.fd >= 0:
            os.fsync(self.fd)

    def finish_file(self) -> None:
        """The primary moved on from this file: clear its Format_description's in-use flag (as
        the server does in its own file when it rotates), fsync, close."""
        if self.fd < 0:
            return
        flags = os.pread(self.fd, 1, FDE_FLAGS_AT)
        if flags and flags[0] & EventFlag.BINLOG_IN_USE:
            os.pwrite(self.fd, bytes([flags[0] & ~EventFlag.BINLOG_IN_USE & 0xFF]), FDE_FLAGS_AT)
        self.close_file()

    def close_file(self) -> None:
        if self.fd >= 0:
            try:
                if self.durable:
                    os.fsync(self.fd)
            finally:
                os.close(self.fd)
                self.fd = -1


def _complete_prefix(path, size: int) -> tuple[int, str | None, list[str]]:
    """(bytes to keep, why the rest goes, GTIDs of the transactions cut) of one binlog file."""
    from ..transactions import group_files

    if size < 4:
        return 0, "shorter than the binlog magic", []
    with open(path, "rb") as fh:
        if fh.read(4) != BINLOG_MAGIC:
            raise PullError(f"{os.path.basename(path)} in the pull folder is not a binlog (bad magic)", file=str(path))
    reason, err_at = None, None
    trx = []
    try:
        for t in group_files([path], relay=False):
            trx.append(t)
    except BinlogError as exc:
        err_at, reason = exc.offset, f"{type(exc).__name__}: {exc.message}"
    first_open = next((t for t in trx if not t.complete), None)
    keep = size if err_at is None else err_at
    if first_open is not None:
        keep = min(keep, first_open.start_offset)
        reason = reason or "a transaction without its commit event"
    dropped = [t.gtid for t in trx if t.gtid and t.start_offset >= keep]
    return keep, reason, dropped

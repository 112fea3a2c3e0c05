"""Writing into a database server's directories safely — as root or as the server's user.

Every binlogkit command that changes files (``recover --apply``, ``recover --binlog --apply``,
``incident``, and any later writer) goes through these primitives and nothing else:

* **One directory handle.** The directory is opened once; every name is looked up relative to
  that descriptor (``dir_fd``), so renaming a parent folder mid-run cannot redirect a write.
* **A lock.** ``flock`` on the directory's descriptor: two binlogkit writers never work on one
  directory at once. The kernel drops it when the process dies, so ``kill -9`` leaves no stale lock.
* **No links.** Every entry a writer touches is ``lstat``-ed: a symbolic link (or anything but a
  regular file) is refused by default, or — when the caller asks (``follow_links``) — its target
  is written in the target's own directory, the link left as it is. Files are opened with
  ``O_NOFOLLOW``.
* **Temporary files are exclusive and unpredictable**: ``O_CREAT | O_EXCL | O_NOFOLLOW`` with a
  random name. A name planted beforehand (a link to ``/etc/shadow``, say) makes the create fail;
  it is never written through.
* **Owners and modes are kept.** A replaced file gets its predecessor's owner, group and mode
  (``fchown`` / ``fchmod`` before the rename); a new file gets the directory's owner and group.
  A run as root leaves nothing root-owned where the server's user must write.
* **Replacing is atomic**: write, fsync, rename over, fsync the directory.
* **Backups are verified before the first change**: each copy is written under an exclusive
  temporary name, fsynced, read back and compared (size and SHA-256) with what was read from the
  original while copying, and the original must not have changed during the copy; only then is
  it renamed into a backup folder that was created fresh (never reused) and is not inside the
  directory being changed.
* **A live server is seen by identity, not by path**: the files of the directory are compared by
  device and inode with every file any process has open (``/proc/PID/fd``) or mapped
  (``/proc/PID/maps``) — a bind mount, a container volume or a symlinked path shows the same
  file.

* **What a kill leaves, the next run removes** (``remove_leftovers``): with the folder's lock
  held, a writer removes the temporary files of the names it writes (``.NAME.binlogkit-<16 hex>``,
  regular files of this user, never a link) and, in the backup folders of its own label beside
  the folder, the temporary copies of an interrupted backup; a backup folder left holding only
  copies byte-equal to the files in place (and, for recover, a journal not finished and not the
  one its folder's journal names) protected nothing and is removed too. A journal of an
  interrupted apply is not a leftover: ``recover`` finishes that apply.

Failures before the first change are ``WriteRefused`` (nothing written); the callers turn a
failure after it into ``PartialWrite`` (the backup is whole, a rerun finishes the work).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

from ..errors import WriteRefused

CHUNK = 1 << 20
_RW = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
_RO = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def temp_name(name: str) -> str:
    """An unpredictable name beside ``name``: ``.NAME.binlogkit-<random>``."""
    return f".{name}.binlogkit-{os.urandom(8).hex()}"


class Target(NamedTuple):
    """A regular file a writer will change: its directory handle, name, and lstat."""
    dir: "SafeDir"
    name: str
    st: os.stat_result
    link: str | None = None          # the link text, when reached through a followed link

    @property
    def path(self) -> Path:
        return self.dir.path / self.name

    @property
    def identity(self) -> tuple[int, int]:
        return self.st.st_dev, self.st.st_ino


class SafeDir:
    """A directory opened once; every operation is relative to its descriptor."""

    def __init__(self, path: str | os.PathLike, *, create: bool = False, mode: int = 0o700) -> None:
        self.path = Path(os.path.abspath(path))
        if create:
            try:
                os.mkdir(self.path, mode)
            except FileExistsError:
                raise WriteRefused(f"{self.path} already exists", file=str(self.path)) from None
        try:
            # the folder itself may be reached through a link (/var/lib/mysql -> /data/mysql);
            # names inside it never are
            self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
                              | (os.O_NOFOLLOW if create else 0))
        except OSError as exc:
            raise WriteRefused(f"cannot open the folder: {exc.strerror}", file=str(self.path)) from None
        self.st = os.fstat(self.fd)
        self._locked = False

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "SafeDir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- locking -----------------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator["SafeDir"]:
        """Hold an exclusive lock on the directory for the duration (never waits)."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WriteRefused("another binlogkit command is writing in this folder (it holds the "
                               "folder's lock); wait for it to finish", file=str(self.path)) from None
        self._locked = True
        try:
            yield self
        finally:
            self._locked = False
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    # -- looking -----------------------------------------------------------------------------
    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def target(self, name: str, *, follow_links: bool = False) -> Target | None:
        """The regular file ``name`` a writer will change (None when absent). Refuses links
        (unless ``follow_links``) and anything but regular files."""
        st = self.lstat(name)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            text = os.readlink(name, dir_fd=self.fd)
            real = Path(os.path.realpath(self.path / name))
            if not follow_links:
                raise WriteRefused(f"{name} is a symbolic link (to {text}): binlogkit does not write through "
                                   "links; pass --follow-links to change the file it points to",
                                   file=str(self.path / name))
            if not real.parent.is_dir():
                raise WriteRefused(f"{name} is a link to {text}, which does not exist", file=str(self.path / name))
            d = SafeDir(real.parent)
            t = d.target(real.name, follow_links=False)
            if t is None:
                raise WriteRefused(f"{name} is a link to {text}, which does not exist", file=str(self.path / name))
            return Target(d, t.name, t.st, text)
        if not stat.S_ISREG(st.st_mode):
            raise WriteRefused(f"{name} is not a regular file", file=str(self.path / name))
        return Target(self, name, st)

    def identities(self) -> set[tuple[int, int]]:
        """(device, inode) of every regular file in the folder, and of what its links point to."""
        out = set()
        for name in self.names():
            for follow in (False, True):
                try:
                    st = os.stat(name, dir_fd=self.fd, follow_symlinks=follow)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.add((st.st_dev, st.st_ino))
        return out

    def free_bytes(self) -> int:
        v = os.fstatvfs(self.fd)
        return v.f_bavail * v.f_frsize

    # -- checks before any change --------------------------------------------------------------
    def check_writable(self, t: Target) -> None:
        """Refuse now what would fail later: an immutable or append-only file, a file whose owner
        this process could not keep, a folder where no file can be created."""
        try:
            fd = os.open(t.name, _RW, dir_fd=t.dir.fd)
        except OSError as exc:
            hint = " (immutable or append-only? see lsattr)" if exc.errno == errno.EPERM else ""
            raise WriteRefused(f"{t.name} cannot be opened for writing: {exc.strerror}{hint}",
                               file=str(t.path)) from None
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if (st.st_dev, st.st_ino) != t.identity:
            raise WriteRefused(f"{t.name} was replaced while binlogkit looked at it", file=str(t.path))
        if os.geteuid() != 0 and (st.st_uid != os.geteuid() or st.st_gid not in os.getgroups() + [os.getegid()]):
            raise WriteRefused(f"{t.name} belongs to uid {st.st_uid} gid {st.st_gid}: a rewrite by this user "
                               "could not keep its owner; run as root or as its owner", file=str(t.path))
        t.dir.check_creatable()

    def check_creatable(self) -> None:
        tmp = temp_name("probe")
        try:
            fd = os.open(tmp, _NEW, 0o600, dir_fd=self.fd)
        except OSError as exc:
            raise WriteRefused(f"no file can be created in the folder: {exc.strerror}", file=str(self.path)) from None
        os.close(fd)
        os.unlink(tmp, dir_fd=self.fd)

    # -- changing ------------------------------------------------------------------------------
    def fsync(self) -> None:
        os.fsync(self.fd)

    def truncate(self, name: str, size: int, *, identity: tuple[int, int] | None = None) -> bool:
        """Cut ``name`` to ``size`` bytes in place (owner and mode unchanged). True if it was cut."""
        fd = os.open(name, _RW, dir_fd=self.fd)
        try:
            st = os.fstat(fd)
            if identity is not None and (st.st_dev, st.st_ino) != identity:
                raise WriteRefused(f"{name} was replaced by another file", file=str(self.path / name))
            if st.st_size < size:
                raise WriteRefused(f"{name} is {st.st_size} bytes, shorter than the {size} to keep",
                                   file=str(self.path / name))
            if st.st_size == size:
                return False
            os.ftruncate(fd, size)
            os.fsync(fd)
            return True
        finally:
            os.close(fd)

    def unlink(self, name: str) -> bool:
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        return True

    def replace(self, name: str, content: bytes | Callable[[int], None], *,
                owner_like: os.stat_result | None = None, owner: tuple[int, int] | None = None,
                new_mode: int = 0o640, durable: bool = True) -> None:
        """Replace (or create) ``name`` atomically: exclusive temporary file, owner / group / mode
        of the file it replaces (or of the folder, for a new file; or ``owner`` and ``new_mode``
        when given), fsync, rename, fsync the folder.
        ``content`` is bytes or a function that writes to the descriptor it is given.
        ``durable=False``: no fsync (a report rewritten every few moments, never read back:
        readers still see the old file or the new one whole, a crash may leave the old one)."""
        old = self.lstat(name)
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise WriteRefused(f"{name} is not a regular file", file=str(self.path / name))
        like = owner_like or old
        uid, gid = (like.st_uid, like.st_gid) if like is not None else (self.st.st_uid, self.st.st_gid)
        mode = stat.S_IMODE(like.st_mode) if like is not None else new_mode
        if owner is not None:
            (uid, gid), mode = owner, new_mode
        tmp = temp_name(name)
        fd = os.open(tmp, _NEW, 0o600, dir_fd=self.fd)
        try:
            try:
                if isinstance(content, (bytes, bytearray, memoryview)):
                    write_all(fd, content)
                else:
                    content(fd)
                cur = os.fstat(fd)
                if (cur.st_uid, cur.st_gid) != (uid, gid):
                    os.fchown(fd, uid, gid)
                os.fchmod(fd, mode)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise
        if durable:
            self.fsync()


def write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:CHUNK])
        view = view[n:]


def copy_range(src_fd: int, dst_fd: int, size: int, digest=None) -> None:
    """Copy the first ``size`` bytes of ``src_fd`` to ``dst_fd`` (hashing them into ``digest``)."""
    done = 0
    while done < size:
        block = os.pread(src_fd, min(CHUNK, size - done), done)
        if not block:
            raise WriteRefused(f"the file ended at {done} bytes, {size} were expected")
        if digest is not None:
            digest.update(block)
        write_all(dst_fd, block)
        done += len(block)


def sha256_fd(fd: int) -> tuple[int, str]:
    import hashlib

    h, size = hashlib.sha256(), 0
    while True:
        block = os.pread(fd, CHUNK, size)
        if not block:
            return size, h.hexdigest()
        h.update(block)
        size += len(block)


# -- backups -----------------------------------------------------------------------------------
class Backup:
    """A backup folder created fresh for one run; ``copy`` puts verified copies into it."""

    def __init__(self, where: Path) -> None:
        self.dir = SafeDir(where, create=True)
        self.path = self.dir.path
        self.files: dict[str, dict] = {}

    @classmethod
    def beside(cls, source: SafeDir, label: str, requested: str | os.PathLike | None = None) -> "Backup":
        """A new backup folder for ``source``: ``SOURCE.binlogkit-LABEL-TIME-RANDOM`` beside it, or
        the ``requested`` folder (used as it is when absent or empty, else a fresh folder inside
        it). Never the source folder itself nor anywhere inside it."""
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        fresh = f"{source.path.name}.binlogkit-{label}-{stamp}-{os.urandom(3).hex()}"
        if requested is None:
            where = Path(os.path.realpath(source.path)).parent / fresh
        else:
            where = Path(os.path.abspath(requested))
            _refuse_inside(where, source)
            if where.is_dir() and not os.listdir(where):
                os.rmdir(where)
            elif where.exists():
                if not where.is_dir():
                    raise WriteRefused(f"the backup folder {where} is not a folder", file=str(where))
                where = where / fresh
            else:
                where.parent.mkdir(parents=True, exist_ok=True)
        _refuse_inside(where, source)
        return cls(where)

    def copy(self, t: Target) -> dict:
        """Copy ``t`` into the backup, verified; returns {size, sha256, uid, gid, mode}."""
        src = os.open(t.name, _RO, dir_fd=t.dir.fd)
        try:
            before = os.fstat(src)
            if (before.st_dev, before.st_ino) != t.identity:
                raise WriteRefused(f"{t.name} was replaced while binlogkit looked at it", file=str(t.path))
            tmp = temp_name(t.name)
            dst = os.open(tmp, _NEW, 0o600, dir_fd=self.dir.fd)
            try:
                import hashlib

                h = hashlib.sha256()
                try:
                    copy_range(src, dst, before.st_size, h)
                    os.fchown(dst, before.st_uid, before.st_gid)
                    os.fchmod(dst, stat.S_IMODE(before.st_mode))
                    os.fsync(dst)
                    size, digest = sha256_fd(dst)
                finally:
                    os.close(dst)
                after = os.fstat(src)
                if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
                    raise WriteRefused(f"{t.name} changed while it was copied: is something writing to it?",
                                       file=str(t.path))
                if (size, digest) != (before.st_size, h.hexdigest()):
                    raise WriteRefused(f"the copy of {t.name} in {self.path} does not read back equal "
                                       f"({size} bytes, {digest[:12]}… vs {before.st_size}, {h.hexdigest()[:12]}…)",
                                       file=str(t.path))
                os.rename(tmp, t.name, src_dir_fd=self.dir.fd, dst_dir_fd=self.dir.fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=self.dir.fd)
                except OSError:
                    pass
                raise
        except OSError as exc:
            raise WriteRefused(f"could not back up {t.name} to {self.path}: {exc.strerror}; nothing was changed",
                               file=str(t.path)) from None
        finally:
            os.close(src)
        info = {"size": before.st_size, "sha256": digest, "uid": before.st_uid, "gid": before.st_gid,
                "mode": oct(stat.S_IMODE(before.st_mode))}
        self.files[t.name] = info
        return info

    def finish(self) -> None:
        self.dir.fsync()

    def write(self, name: str, data: bytes) -> None:
        self.dir.replace(name, data, new_mode=0o600)

    def close(self) -> None:
        self.dir.close()


def verify_backup(where: str | os.PathLike, files: dict[str, dict]) -> None:
    """Re-read a backup (from a journal) and check every file's size and SHA-256."""
    d = Path(where)
    for name, info in files.items():
        try:
            fd = os.open(d / name, _RO)
        except OSError as exc:
            raise WriteRefused(f"the backup {d} lacks {name} ({exc.strerror}): cannot resume safely; "
                               "restore the originals by hand", file=str(d)) from None
        try:
            size, digest = sha256_fd(fd)
        finally:
            os.close(fd)
        if (size, digest) != (info["size"], info["sha256"]):
            raise WriteRefused(f"the backup copy of {name} in {d} no longer matches its checksum: "
                               "cannot resume safely", file=str(d))


def _refuse_inside(where: Path, source: SafeDir) -> None:
    """Refuse a backup folder that is the source folder or inside it (by device and inode, so
    links and bind mounts cannot hide it)."""
    p = Path(os.path.abspath(where))
    for q in [p, *p.parents]:
        try:
            st = os.stat(q)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (source.st.st_dev, source.st.st_ino):
            raise WriteRefused(f"the backup folder {where} is inside the folder being changed "
                               f"({source.path}); choose one outside it", file=str(where))


# -- live processes ----------------------------------------------------------------------------
class Holder(NamedTuple):
    pid: int
    command: str
    file: str

    def __str__(self) -> str:
        return f"{self.command} (pid {self.pid}) has {self.file} open"


def processes_holding(identities: set[tuple[int, int]], *, names: dict | None = None) -> list[Holder]:
    """Processes (other than this one) that have a file of ``identities`` open or mapped,
    compared by device and inode."""
    if not identities:
        return []
    me = os.getpid()
    devs = {(os.major(d), os.minor(d), i): (d, i) for d, i in identities}
    out: list[Holder] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        hit = _fd_hit(pid, identities) or _maps_hit(pid, devs)
        if hit is not None:
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if any(b"binlogkit" in a for a in argv[:3]):
                    comm = "another binlogkit command"
            except OSError:
                comm = "?"
            label = (names or {}).get(hit) or f"inode {hit[1]}"
            out.append(Holder(pid, comm, label))
    return out


def _fd_hit(pid: int, identities: set) -> tuple[int, int] | None:
    try:
        fds = os.scandir(f"/proc/{pid}/fd")
    except OSError:
        return None
    with fds:
        for fd in fds:
            try:
                st = os.stat(fd.path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in identities:
                return key
    return None


def _maps_hit(pid: int, devs: dict) -> tuple[int, int] | None:
    try:
        with open(f"/proc/{pid}/maps", "rb") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) < 6 or parts[4] == b"0":
                    continue
                major, minor = (int(x, 16) for x in parts[3].split(b":"))
                key = devs.get((major, minor, int(parts[4])))
                if key is not None:
                    return key
    except (OSError, ValueError):
        return None
    return None


def refuse_if_in_use(d: SafeDir, extra: Iterable[Target] = ()) -> None:
    """Refuse while any process holds a file of the folder (or one of ``extra``) open."""
    ids = d.identities()
    names = {}
    for name in d.names():
        st = d.lstat(name)
        if st is not None:
            names[(st.st_dev, st.st_ino)] = name
    for t in extra:
        ids.add(t.identity)
        names[t.identity] = str(t.path)
    holders = processes_holding(ids, names=names)
    if holders:
        raise WriteRefused("; ".join(str(h) for h in holders[:5]) + ": stop the server first",
                           file=str(d.path))


# -- leftovers of a killed run -------------------------------------------------------------------
_TEMP = re.compile(r"\.(?P<name>.+)\.binlogkit-[0-9a-f]{16}")
BACKUP_JOURNAL = "journal.json"


def stale_temporaries(d: SafeDir, owns: Callable[[str], bool]) -> list[str]:
    """Temporary files (``temp_name``) a killed writer left in ``d``: the temporary name of a
    file ``owns`` accepts, a regular file (never a link), owned by this process's user. Only
    meaningful with the folder's lock held: no live binlogkit writer is then writing in it."""
    me = os.geteuid()
    out = []
    for n in d.names():
        m = _TEMP.fullmatch(n)
        if m is None or not owns(m.group("name")):
            continue
        st = d.lstat(n)
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid == me:
            out.append(n)
    return sorted(out)


def remove_leftovers(d: SafeDir, label: str, owns: Callable[[str], bool], *,
                     keep_backup: str | os.PathLike | None = None, backups: bool = True) -> list[str]:
    """With ``d``'s lock held, remove what a killed run of the writer ``label`` (recover,
    incident, flashback) left: its temporary files in ``d`` (``stale_temporaries``), the
    temporary copies in its backup folders beside ``d`` (``D.binlogkit-LABEL-TIME-RANDOM``,
    made by ``Backup.beside``), and such a folder when what is left in it protects nothing: a
    journal that was not finished (recover) and copies byte-equal to the files in ``d``
    (the run was killed before its first change). ``keep_backup``: the backup an interrupted
    apply's journal names (only its temporary files go); ``backups=False`` leaves every backup
    folder alone.
    Returns what was removed (paths as text)."""
    gone = []
    for n in stale_temporaries(d, owns):
        if d.unlink(n):
            gone.append(str(d.path / n))
    if gone:
        d.fsync()
    if not backups:
        return gone
    parent_path = Path(os.path.realpath(d.path)).parent
    keep = os.path.realpath(keep_backup) if keep_backup is not None else None
    pattern = re.compile(re.escape(d.path.name) + r"\.binlogkit-" + re.escape(label)
                         + r"-\d{8}T\d{6}Z-[0-9a-f]{6}")
    try:
        pfd = os.open(parent_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return gone
    try:
        for name in sorted(os.listdir(pfd)):
            if pattern.fullmatch(name):
                gone += _abandoned_backup(pfd, parent_path / name, name, d, str(parent_path / name) == keep)
    finally:
        os.close(pfd)
    return gone


def _abandoned_backup(pfd: int, path: Path, name: str, d: SafeDir, keep: bool) -> list[str]:
    me = os.geteuid()
    try:
        st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != me:
            return []
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=pfd)
    except OSError:
        return []
    gone: list[str] = []
    try:
        entries = {}
        for n in os.listdir(fd):
            entries[n] = os.stat(n, dir_fd=fd, follow_symlinks=False)
        for n, est in sorted(entries.items()):  # an interrupted copy: never renamed into place
            if _TEMP.fullmatch(n) and stat.S_ISREG(est.st_mode) and est.st_uid == me:
                os.unlink(n, dir_fd=fd)
                gone.append(str(path / n))
        rest = {n: est for n, est in entries.items() if str(path / n) not in gone}
        if keep or any(not stat.S_ISREG(est.st_mode) for est in rest.values()):
            return gone
        if BACKUP_JOURNAL in rest:
            try:
                jfd = os.open(BACKUP_JOURNAL, _RO, dir_fd=fd)
                with os.fdopen(jfd, "rb") as fh:
                    journal = json.loads(fh.read(16 << 20))
            except (OSError, ValueError):
                return gone
            if not isinstance(journal, dict) or journal.get("finished"):
                return gone  # a finished run's backup: the user's to keep
        copies = [n for n in rest if n != BACKUP_JOURNAL]
        for n in copies:  # each copy must equal the file still in place, else it protects something
            cur = d.lstat(n)
            if cur is None or not stat.S_ISREG(cur.st_mode) or cur.st_size != rest[n].st_size:
                return gone
            if _sha256_at(fd, n) != _sha256_at(d.fd, n):
                return gone
        for n in rest:
            os.unlink(n, dir_fd=fd)
        os.rmdir(name, dir_fd=pfd)
        os.fsync(pfd)
        gone.append(str(path) + "/")
    except OSError:
        return gone
    finally:
        os.close(fd)
    return gone


def _sha256_at(dir_fd: int, name: str) -> str:
    fd = os.open(name, _RO, dir_fd=dir_fd)
    try:
        return sha256_fd(fd)[1]
    finally:
        os.close(fd)


def leftovers_line(gone: list[str]) -> str:
    """The one stderr line a writer's CLI prints for what ``remove_leftovers`` removed."""
    shown = ", ".join(gone[:6]) + (f" and {len(gone) - 6} more" if len(gone) > 6 else "")
    return f"binlogkit: removed {len(gone)} leftover(s) of an interrupted earlier run: {shown}"

"""Carry a recovery plan out, crash-safely. With ``writing/writer.py``, the only code that writes.

Every file operation goes through ``binlogkit.writing.safeio`` (one directory handle, a lock, no links,
exclusive temporary files, owners and modes kept, atomic replaces). The order:

1. lock the folder; refuse while any process holds one of its files (by device and inode);
   refuse links (unless ``follow_links``), files that changed since the plan, files that cannot be
   written (immutable, append-only, an owner this user could not keep), too little free space;
2. copy every file that will change or go into a **fresh** backup folder, each copy fsynced,
   read back and compared (size, SHA-256) — nothing has changed yet;
3. compute every new file content (index, master.info, relay-log.info) up front and write the
   journal (plan, backup, checksums, contents) to the backup and, as ``JOURNAL``, into the
   folder itself;
4. the steps: truncate (fsync), unlink removed files (their copies are in the backup), replace
   the index and info files atomically with the journal's contents;
5. mark the journal finished in the backup and remove it from the folder.

A run killed or failed anywhere after step 3 leaves ``JOURNAL`` in the folder: the next plan is
that journal (``Plan.resume``), the backup is verified again, and the steps — each idempotent —
finish exactly the interrupted run, so the end state is byte-identical to an uninterrupted one.
What else a kill leaves — the temporary file of a replace cut short, a backup folder of a run
killed before its journal (nothing changed: its copies equal the files) — the next apply
removes under the lock, before it plans (``remove_leftovers``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Callable, Iterator

from ..errors import BinlogError, PartialWrite, WriteRefused
from ..writing.safeio import Backup, SafeDir, Target, refuse_if_in_use, verify_backup
from ..writing.safeio import remove_leftovers as _remove_leftovers
from .info import MasterInfo, RelayLogInfo, parse_info
from .plan import JOURNAL, Plan, pending_journal


class RecoveryRefused(WriteRefused):
    """The repair must not run (server running on the directory, or it would lose data)."""


def processes_using(directory: Path) -> list[int]:
    """PIDs that hold a file of ``directory`` open, by device and inode (kept for API users)."""
    from ..writing.safeio import processes_holding

    with SafeDir(directory) as d:
        return sorted({h.pid for h in processes_holding(d.identities())})


def _crash_point(step: str) -> None:
    """Test hooks: BINLOGKIT_RECOVER_KILL_AT=<step> makes this process SIGKILL itself there;
    BINLOGKIT_RECOVER_PAUSE_AT=<step> stops it (SIGSTOP) until the test sends SIGCONT."""
    if os.environ.get("BINLOGKIT_RECOVER_KILL_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("BINLOGKIT_RECOVER_PAUSE_AT") == step:
        os.kill(os.getpid(), signal.SIGSTOP)


def _replaced_here(name: str) -> bool:
    """The names an apply replaces through a temporary file: the journal, index and info files."""
    return name == JOURNAL or name.endswith((".index", ".info"))


@contextlib.contextmanager
def held(relay_dir, apply: bool, said: Callable[[list[str]], None] = lambda gone: None) -> Iterator[SafeDir | None]:
    """For ``apply``: the folder's lock, held from before the plan is made until the last write
    (``apply_plan(held=...)``), and what killed applies left removed before planning (so the
    plan sees the folder as it is; ``said`` gets their names). A dry run: None, nothing held.
    ``WriteRefused`` when another writer holds the lock."""
    if not apply:
        yield None
        return
    with SafeDir(relay_dir) as d, d.locked():
        said(remove_leftovers(d))
        yield d


def remove_leftovers(d: SafeDir) -> list[str]:
    """With ``d``'s lock held: what killed applies left in and beside the folder, removed
    (``safeio.remove_leftovers``). The journal of an interrupted apply is not removed — planning
    finishes that apply — and neither is the backup it names; a journal that cannot be read keeps
    every backup folder."""
    try:
        pending = pending_journal(d.path)
    except BinlogError:
        return _remove_leftovers(d, "recover", _replaced_here, backups=False)
    keep = pending.resume["backup"] if pending is not None and pending.resume else None
    return _remove_leftovers(d, "recover", _replaced_here, keep_backup=keep)


def _info_names(plan: Plan) -> tuple[str, str]:
    suffix = f"-{plan.connection}" if plan.connection else ""
    return f"master{suffix}.info", f"relay-log{suffix}.info"


def _read(t: Target) -> bytes:
    fd = os.open(t.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=t.dir.fd)
    try:
        out = bytearray()
        while chunk := os.read(fd, 1 << 16):
            out += chunk
        return bytes(out)
    finally:
        os.close(fd)


def _new_contents(plan: Plan, targets: dict[str, Target]) -> dict[str, str]:
    """The index / info files' new texts, computed once from the originals (before any change)."""
    mi_name, ri_name = _info_names(plan)
    out = {}
    if plan.index is not None:
        out[plan.relay_index] = "\n".join(plan.index) + "\n"
    if plan.master_info:
        mi = MasterInfo(parse_info(_read(targets[mi_name]), kind="master", path=str(targets[mi_name].path)))
        out[mi_name] = mi.moved_to(plan.master_info["file"], plan.master_info["position"]).info.render() \
            .decode("utf-8", "surrogateescape")
    if plan.relay_log_info:
        ri = RelayLogInfo(parse_info(_read(targets[ri_name]), kind="relay", path=str(targets[ri_name].path)))
        v = plan.relay_log_info
        out[ri_name] = ri.moved_to(v["relay_log_file"], v["relay_log_pos"], v["master_log_file"],
                                   v["master_log_pos"]).info.render().decode("utf-8", "surrogateescape")
    return out


def apply_plan(plan: Plan, *, backup_dir: str | os.PathLike | None = None, check_processes: bool = True,
               follow_links: bool = False, held: SafeDir | None = None) -> Path | None:
    """Apply ``plan`` to its directory. Returns the backup folder (None when nothing to do).

    ``held``: the directory, already locked by the caller (``SafeDir.locked``) — hold the lock
    from before planning, as the CLI does, and no other writer can make the plan stale.
    Raises ``RecoveryRefused`` (a ``WriteRefused``) when nothing was changed, ``PartialWrite``
    when a step failed after the first change (run again to finish)."""
    if plan.refuse:
        raise RecoveryRefused(plan.refuse, file=plan.relay_dir)
    if plan.nothing_to_do and not plan.resume:
        return None
    try:
        if held is not None:
            return _apply_locked(plan, held, backup_dir, check_processes, follow_links)
        d = SafeDir(plan.relay_dir)
        try:
            with d.locked():
                return _apply_locked(plan, d, backup_dir, check_processes, follow_links)
        finally:
            d.close()
    except WriteRefused as exc:
        if isinstance(exc, RecoveryRefused):
            raise
        raise RecoveryRefused(exc.message, file=exc.file, offset=exc.offset) from None


def _apply_locked(plan: Plan, d: SafeDir, backup_dir, check_processes: bool, follow_links: bool) -> Path:
    mi_name, ri_name = _info_names(plan)
    resume = plan.resume
    remove_leftovers(d)  # the CLI did it before planning; an API caller's plan was made unlocked
    if resume is None and d.lstat(JOURNAL) is not None:
        raise RecoveryRefused(f"an interrupted run left {JOURNAL}: plan again (binlogkit recover) to resume it",
                              file=str(d.path))
    touched = [t["file"] for t in plan.truncate] + [r["file"] for r in plan.remove]
    if plan.index is not None:
        touched.append(plan.relay_index)
    if plan.master_info:
        touched.append(mi_name)
    if plan.relay_log_info:
        touched.append(ri_name)
    targets: dict[str, Target] = {}
    for name in touched:
        t = d.target(name, follow_links=follow_links)
        if t is not None:
            targets[name] = t
    if check_processes:
        refuse_if_in_use(d, extra=[t for t in targets.values() if t.dir is not d])
    # nothing may have changed since the plan was made (a resumed plan: either state)
    for tr in plan.truncate:
        cur = targets.get(tr["file"])
        ok = {tr["size"], tr["new_size"]} if resume else {tr["size"]}
        if cur is None or cur.st.st_size not in ok:
            raise RecoveryRefused(f"{tr['file']} changed since the plan was made "
                                  f"({cur.st.st_size if cur else 'gone'} bytes, planned from {tr['size']}): plan again",
                                  file=str(d.path / tr["file"]))
    for name in (mi_name, ri_name, plan.relay_index):
        if name in touched and name not in targets and not (name == plan.relay_index):
            raise RecoveryRefused(f"{name} is missing", file=str(d.path / name))
    for t in targets.values():
        if t.name in [r["file"] for r in plan.remove] and resume:
            continue
        t.dir.check_writable(t)
    d.check_creatable()

    if resume:
        jr = resume
        if not _same_journal(d, jr):
            raise RecoveryRefused("the interrupted run was finished (or changed) by another command meanwhile: "
                                  "plan again", file=str(d.path))
        backup_path = Path(jr["backup"])
        verify_backup(backup_path, jr["files"])
        contents = jr["contents"]
        journal = jr
    else:
        backup = Backup.beside(d, "recover", backup_dir)
        backup_path = backup.path
        try:
            need = sum(t.st.st_size for t in targets.values())
            if backup.dir.free_bytes() < need + (1 << 20):
                raise RecoveryRefused(f"the backup folder's file system has {backup.dir.free_bytes()} bytes free, "
                                      f"{need} are needed: nothing was changed", file=str(backup_path))
            contents = _new_contents(plan, targets)
            journal = {"plan": plan.to_json(), "started": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                       "backup": str(backup_path), "files": {}, "contents": contents, "done": []}
            backup.write("journal.json", _dump(journal))
            for name, t in targets.items():
                _crash_point("during-backup")
                journal["files"][name] = backup.copy(t)
            backup.write("journal.json", _dump(journal))
            backup.finish()
        finally:
            backup.close()
        _crash_point("after-backup")
        if d.free_bytes() < sum(len(c) for c in contents.values()) + (64 << 10):
            raise RecoveryRefused(f"{d.path} has too little free space to rewrite the info files: nothing was "
                                  f"changed (the backup is in {backup_path})", file=str(d.path))
        d.replace(JOURNAL, _dump(journal), owner=(os.geteuid(), os.getegid()), new_mode=0o600)
        _crash_point("after-journal")

    step = "start"

    def done(what: str) -> None:
        if what not in journal["done"]:
            journal["done"].append(what)
        d.replace(JOURNAL, _dump(journal), owner=(os.geteuid(), os.getegid()), new_mode=0o600)

    try:
        for tr in plan.truncate:
            step = f"truncate {tr['file']} to {tr['new_size']}"
            tg = targets[tr["file"]]
            tg.dir.truncate(tg.name, tr["new_size"], identity=tg.identity)
            _crash_point("after-truncate")
            done(step)
        for r in plan.remove:
            step = f"remove {r['file']} (its copy is in the backup)"
            gone = targets.get(r["file"])
            if gone is not None:
                gone.dir.unlink(gone.name)
                gone.dir.fsync()
            _crash_point("after-remove")
            done(step)
        for name, text in contents.items():
            step = f"rewrite {name}"
            old = targets.get(name)
            owner = old.st if old is not None else None
            where, wname = (old.dir, old.name) if old is not None else (d, name)
            where.replace(wname, text.encode("utf-8", "surrogateescape"), owner_like=owner,
                          new_mode=_mode_of_index(d, plan))
            _crash_point({plan.relay_index: "after-index", mi_name: "after-master-info"}.get(name, "after-relay-log-info"))
            done(step)
        step = "finish the journal"
        journal["finished"] = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        with SafeDir(backup_path) as b:
            b.replace("journal.json", _dump(journal), new_mode=0o600)
        d.unlink(JOURNAL)
        d.fsync()
    except (OSError, WriteRefused) as exc:
        why = exc.strerror if isinstance(exc, OSError) else exc.message
        raise PartialWrite(f"step '{step}' failed: {why}. The repair is partial (done: "
                           f"{'; '.join(journal['done']) or 'nothing yet'}). Every original file is in {backup_path} "
                           f"(verified); run the same command again to finish the repair", file=str(d.path),
                           backup=str(backup_path), done=journal["done"]) from None
    return backup_path


def _same_journal(d: SafeDir, journal: dict) -> bool:
    try:
        fd = os.open(JOURNAL, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=d.fd)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        try:
            return json.loads(fh.read(16 << 20)) == journal
        except ValueError:
            return False


def _mode_of_index(d: SafeDir, plan: Plan) -> int:
    st = d.lstat(plan.relay_index)
    return (st.st_mode & 0o777) if st is not None else 0o660


def _dump(obj: dict) -> bytes:
    return json.dumps(obj, indent=1).encode()


__all__ = ["BinlogError", "PartialWrite", "RecoveryRefused", "apply_plan", "processes_using", "remove_leftovers"]

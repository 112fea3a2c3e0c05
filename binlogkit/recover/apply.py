"""Carry a recovery plan out, crash-safely. The only code in binlogkit that writes.

Order: refuse if a process has the directory's files open; copy every file that will change
into a backup folder (fsync'd) and write a journal there; truncate (fsync); move removed files
into the backup; rewrite the index, master.info and relay-log.info atomically (temp file,
fsync, rename, fsync the directory). Each step moves the directory toward the planned state and
a plan is always recomputed from the files, so a run killed anywhere and run again ends in the
same state, and a second run finds nothing to do.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from ..errors import BinlogError
from .info import MasterInfo, RelayLogInfo, read_info
from .plan import Plan


class RecoveryRefused(BinlogError):
    """The repair must not run (server running on the directory, or it would lose data)."""


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".binlogkit-tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)
    _fsync_path(path.parent)


def processes_using(directory: Path) -> list[int]:
    """PIDs that hold a file of ``directory`` open (from /proc)."""
    d = str(directory.resolve())
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                try:
                    if os.readlink(fd).startswith(d + "/"):
                        pids.append(int(proc.name))
                        break
                except OSError:
                    continue
        except OSError:
            continue
    return pids


def _crash_point(step: str) -> None:
    """Test hook: BINLOGKIT_RECOVER_KILL_AT=<step> makes this process SIGKILL itself there."""
    if os.environ.get("BINLOGKIT_RECOVER_KILL_AT") == step:
        os.kill(os.getpid(), signal.SIGKILL)


def apply_plan(plan: Plan, *, backup_dir: str | os.PathLike | None = None, check_processes: bool = True) -> Path | None:
    """Apply ``plan`` to its directory. Returns the backup folder (None when nothing to do)."""
    d = Path(plan.relay_dir)
    if plan.refuse:
        raise RecoveryRefused(plan.refuse, file=str(d))
    if plan.nothing_to_do:
        return None
    if check_processes:
        pids = processes_using(d)
        if pids:
            raise RecoveryRefused(f"process(es) {pids} have files of {d} open: stop the server first", file=str(d))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    # beside the relay directory, never in it: a server takes a folder in its datadir for a schema
    backup = Path(backup_dir) if backup_dir else d.resolve().parent / f"{d.resolve().name}.binlogkit-recover-{stamp}"
    backup.mkdir(parents=True, exist_ok=True)
    suffix = f"-{plan.connection}" if plan.connection else ""
    mi_path, ri_path, index_path = d / f"master{suffix}.info", d / f"relay-log{suffix}.info", d / plan.relay_index
    changing = [t["file"] for t in plan.truncate]
    if plan.index is not None:
        changing.append(index_path.name)
    if plan.master_info:
        changing.append(mi_path.name)
    if plan.relay_log_info:
        changing.append(ri_path.name)
    journal = {"plan": plan.to_json(), "started": stamp, "backup": str(backup), "done": []}
    jpath = backup / "journal.json"
    atomic_write(jpath, json.dumps(journal, indent=1).encode())
    for name in changing:
        if (d / name).exists() and not (backup / name).exists():
            shutil.copy2(d / name, backup / name)
            _fsync_path(backup / name)
    _fsync_path(backup)
    _crash_point("after-backup")

    def done(step: str) -> None:
        journal["done"].append(step)
        atomic_write(jpath, json.dumps(journal, indent=1).encode())

    for t in plan.truncate:
        p = d / t["file"]
        if p.exists() and p.stat().st_size > t["new_size"]:
            with open(p, "r+b") as fh:
                fh.truncate(t["new_size"])
                fh.flush()
                os.fsync(fh.fileno())
        _crash_point("after-truncate")
        done(f"truncate {t['file']} to {t['new_size']}")
    for r in plan.remove:
        p = d / r["file"]
        if p.exists():
            shutil.move(str(p), str(backup / r["file"]))
        _crash_point("after-remove")
        done(f"move {r['file']} to the backup")
    _fsync_path(d)
    if plan.index is not None:
        atomic_write(index_path, ("\n".join(plan.index) + "\n").encode())
        _crash_point("after-index")
        done("rewrite the index")
    if plan.master_info:
        mi = MasterInfo(read_info(mi_path, kind="master"))
        atomic_write(mi_path, mi.moved_to(plan.master_info["file"], plan.master_info["position"]).info.render())
        _crash_point("after-master-info")
        done("rewrite master.info")
    if plan.relay_log_info:
        ri = RelayLogInfo(read_info(ri_path, kind="relay"))
        v = plan.relay_log_info
        atomic_write(ri_path, ri.moved_to(v["relay_log_file"], v["relay_log_pos"], v["master_log_file"],
                                          v["master_log_pos"]).info.render())
        done("rewrite relay-log.info")
    journal["finished"] = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    atomic_write(jpath, json.dumps(journal, indent=1).encode())
    return backup

"""The plain mutation engine: round-robin over the targets in time slices, one process.

A hang is an input that takes more than ``timeout`` seconds of CPU time (``ITIMER_PROF``, so a
busy shared machine does not make false hangs); memory over the bound is a peak RSS (VmHWM,
reset before each input) more than ``rss_mb`` above what the process held before the input,
and the address space is capped so a runaway allocation fails instead of swapping the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .mutate import mutate
from .targets import TARGETS, Crash, seeds_for


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang("over the time bound")


def _hwm_kb() -> int:
    with open("/proc/self/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return 0


def _rss_kb() -> int:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _reset_hwm() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


@dataclass
class Finding:
    target: str
    kind: str  # crash, hang, memory
    signature: str
    message: str
    data: bytes = field(repr=False)
    trace: str = field(repr=False, default="")


def signature(exc: BaseException) -> str:
    """Where it went wrong: exception type and the innermost binlogkit frame."""
    inner = exc.__cause__ or exc
    frames = traceback.extract_tb(inner.__traceback__)
    ours = [f for f in frames if "binlogkit" in f.filename] or frames
    where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
    return f"{type(inner).__name__}@{where}"


def run_one(target: str, data: bytes, work: Path, *, timeout: float = 5.0, rss_mb: int = 256,
            others=None) -> Finding | None:
    fn = TARGETS[target]
    _reset_hwm()
    before = _rss_kb()
    old = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        fn(work, data, others)
    except Hang as exc:
        return Finding(target, "hang", f"hang@{signature(exc)}", f"over {timeout}s of CPU", data,
                       traceback.format_exc())
    except Crash as exc:
        if isinstance(exc.__cause__, Hang):
            return Finding(target, "hang", f"hang@{signature(exc.__cause__)}", f"over {timeout}s of CPU", data,
                           "".join(traceback.format_exception(exc.__cause__)))
        kind = "memory" if isinstance(exc.__cause__, MemoryError) else "crash"
        return Finding(target, kind, signature(exc), str(exc), data,
                       "".join(traceback.format_exception(exc.__cause__ or exc)))
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    grown = (_hwm_kb() - before) // 1024
    if grown > rss_mb:
        return Finding(target, "memory", f"memory:{target}", f"peak RSS {grown} MB above the start", data)
    return None


def minimise(f: Finding, work: Path, *, budget: int = 300, timeout: float = 5.0, rss_mb: int = 256) -> bytes:
    """Smaller input with the same signature: whole events dropped, bodies shortened."""
    from .mutate import join, split

    def same(data: bytes) -> bool:
        g = run_one(f.target, data, work, timeout=timeout, rss_mb=rss_mb)
        return g is not None and g.signature == f.signature

    best = f.data
    events, tail = split(best)
    if not events:
        return best
    tries = 0
    i = len(events) - 1
    while i >= 1 and tries < budget:  # drop events (the first, the format, stays)
        cand = events[:i] + events[i + 1:]
        tries += 1
        if same(join(cand, tail, fix_log_pos=False)):
            events = cand
        i -= 1
    if tail and tries < budget:
        tries += 1
        if same(join(events, b"", fix_log_pos=False)):
            tail = b""
    for e in events[1:]:  # shorten bodies from the end
        step = len(e.body) // 2
        while step and tries < budget:
            old = e.body
            e.body = old[:len(old) - step]
            tries += 1
            if not same(join(events, tail, fix_log_pos=False)):
                e.body = old
                step //= 2
    best = join(events, tail, fix_log_pos=False)
    return best if same(best) else f.data


def campaign(targets: list[str], seconds: float, *, out: Path, seed: int = 0, slice_s: float = 10.0,
             timeout: float = 5.0, rss_mb: int = 256, mem_cap_mb: int = 3072, minimise_budget: int = 300,
             log=print) -> dict:
    """Fuzz ``targets`` for ``seconds`` in all; findings saved in ``out``; stats returned."""
    out.mkdir(parents=True, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _vm_kb() * 1024 + (mem_cap_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    rnd = random.Random(seed)
    seeds = {t: seeds_for(t) for t in targets}
    stats = {t: {"inputs": 0, "seconds": 0.0, "findings": 0} for t in targets}
    found: dict[str, Finding] = {}
    started = time.monotonic()
    deadline = started + seconds
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="binlogkit-fuzz-", dir=shm) as tmp:
        work = Path(tmp)
        first_turn = True   # every target is fed in the first turn, even past the deadline
        while time.monotonic() < deadline or first_turn:
            for t in targets:
                pool = seeds[t]
                if not pool:
                    continue
                end = min(deadline, time.monotonic() + slice_s)
                t0 = time.monotonic()
                n = 0
                while n == 0 or time.monotonic() < end:  # every target fed in its turn, even when
                    parent = rnd.choice(pool)                # the ones before it ran past their slices
                    data = mutate(parent, rnd, others=pool)
                    f = run_one(t, data, work, timeout=timeout, rss_mb=rss_mb, others=pool)
                    n += 1
                    if f is not None and f.signature not in found:
                        found[f.signature] = f
                        stats[t]["findings"] += 1
                        small = minimise(f, work, budget=minimise_budget, timeout=timeout, rss_mb=rss_mb)
                        name = f"{t}-{f.kind}-{hashlib.sha1(f.signature.encode()).hexdigest()[:10]}"
                        (out / f"{name}.bin").write_bytes(small)
                        (out / f"{name}.txt").write_text(f"{f.signature}\n{f.message}\n\n{f.trace}")
                        log(f"FOUND {f.kind} in {t}: {f.signature} ({len(small)} bytes) -> {out / name}.bin")
                stats[t]["inputs"] += n
                stats[t]["seconds"] += time.monotonic() - t0
                _snapshot(out, stats, found, started, seed)  # a long run can be read while it runs
                if time.monotonic() >= deadline and not first_turn:
                    break
            first_turn = False
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    total = sum(s["inputs"] for s in stats.values())
    for s in stats.values():
        s["per_second"] = round(s["inputs"] / s["seconds"], 1) if s["seconds"] else 0.0
        s["seconds"] = round(s["seconds"], 1)
    result = {"engine": "plain", "inputs": total, "findings": [
        {"target": f.target, "kind": f.kind, "signature": f.signature, "message": f.message} for f in found.values()],
        "targets": stats, "seconds": seconds, "seed": seed}
    (out / "stats.json").write_text(json.dumps(result, indent=1))
    return result


def _snapshot(out: Path, stats: dict, found: dict, started: float, seed: int) -> None:
    done = sum(s["inputs"] for s in stats.values())
    snap = {"elapsed": round(time.monotonic() - started), "inputs": done,
            "cpu_seconds": round(time.process_time()), "findings": sorted(found), "seed": seed,
            "targets": {t: {"inputs": s["inputs"], "seconds": round(s["seconds"], 1)} for t, s in stats.items()}}
    tmp = out / "progress.json.tmp"
    tmp.write_text(json.dumps(snap, indent=1))
    tmp.replace(out / "progress.json")


def _vm_kb() -> int:
    with open("/proc/self/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmSize:"):
                return int(line.split()[1])
    return 0

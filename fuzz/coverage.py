"""Coverage-guided mode: atheris (libFuzzer) drives one target, with binlogkit instrumented
and the same structure-aware mutator as the plain engine (``mutate``), libFuzzer's own byte
mutator applied to event bodies. libFuzzer's ``-timeout`` finds hangs and ``-rss_limit_mb``
memory over the bound; an exception escaping the target is a crash (``targets.Crash``).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fuzz_atheris(target: str, libfuzzer_args: list[str]) -> int:
    import atheris

    with atheris.instrument_imports(include=["binlogkit"]):
        import binlogkit.cli  # noqa: F401  (instrumented: every module the commands use)
        import binlogkit.audit  # noqa: F401
        import binlogkit.recover  # noqa: F401
    from .mutate import mutate
    from .targets import TARGETS, seeds_for

    fn = TARGETS[target]
    pool = seeds_for(target)
    work = Path(tempfile.mkdtemp(prefix="binlogkit-atheris-", dir="/dev/shm"))

    def one(data: bytes) -> None:
        fn(work, data, pool)  # Crash propagates: libFuzzer records the input

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        rnd = random.Random(seed)
        out = mutate(data, rnd, others=pool, body_mutator=lambda b: atheris.Mutate(b, len(b) + 64))
        return out[:max_size]

    atheris.Setup([sys.argv[0], *libfuzzer_args], one, custom_mutator=mutator)
    atheris.Fuzz()
    return 0


def run_all(minutes: float, out: Path, targets: list[str] | None = None) -> dict:
    """Every target for an equal share of ``minutes``, each in its own process (libFuzzer
    runs one target per process); inputs and speed read from libFuzzer's summary."""
    from .targets import TARGETS, seeds_for

    targets = targets or list(TARGETS)
    share = max(5, int(minutes * 60 / len(targets)))
    stats = {}
    for t in targets:
        seeds = out / f"corpus-{t}"
        seeds.mkdir(parents=True, exist_ok=True)
        for i, s in enumerate(seeds_for(t)):
            (seeds / f"seed-{i:04d}").write_bytes(s)
        arts = out / f"artifacts-{t}"
        arts.mkdir(exist_ok=True)
        t0 = time.monotonic()
        proc = subprocess.run(
            ["nice", "-n", "19", sys.executable, "-m", "fuzz", "atheris", t, f"-max_total_time={share}",
             "-timeout=5", "-rss_limit_mb=2048", "-max_len=65536", f"-artifact_prefix={arts}/",
             str(seeds)], capture_output=True, text=True)
        spent = time.monotonic() - t0
        m = re.findall(r"Done (\d+) runs in (\d+) second", proc.stderr)
        runs = int(m[-1][0]) if m else 0
        crashes = sorted(p.name for p in arts.iterdir())
        stats[t] = {"inputs": runs, "seconds": round(spent, 1), "per_second": round(runs / spent, 1) if spent else 0,
                    "findings": crashes, "exit": proc.returncode}
        (out / f"atheris-{t}.log").write_text(proc.stderr[-20000:])
        print(f"{t:<15} {runs:>9} inputs {spent:>7.1f} s  {len(crashes)} findings (exit {proc.returncode})",
              flush=True)
    return stats

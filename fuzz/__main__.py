"""python -m fuzz {run,atheris,replay,targets} — see fuzz/__init__.py and docs/fuzz.md."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from .targets import TARGETS

    ap = argparse.ArgumentParser(prog="python -m fuzz")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the plain mutation engine over the targets")
    r.add_argument("--minutes", type=float, default=float(os.environ.get("FUZZ_MINUTES", 5)))
    r.add_argument("--seconds", type=float, help="instead of --minutes")
    r.add_argument("--targets", default="all", help="comma-separated, or all: " + ",".join(TARGETS))
    r.add_argument("--out", default="fuzz-out")
    r.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)))
    r.add_argument("--slice", type=float, default=10.0, help="seconds per target before the next")
    r.add_argument("--timeout", type=float, default=5.0, help="CPU seconds before an input is a hang")
    r.add_argument("--rss-mb", type=int, default=256, help="peak memory growth that counts as a finding")
    a = sub.add_parser("atheris", help="coverage-guided (atheris); libFuzzer options after the target")
    a.add_argument("target", choices=list(TARGETS))
    a.add_argument("libfuzzer", nargs=argparse.REMAINDER)
    aa = sub.add_parser("atheris-all", help="coverage-guided, every target for an equal share of the time")
    aa.add_argument("--minutes", type=float, default=float(os.environ.get("FUZZ_MINUTES", 5)))
    aa.add_argument("--out", default="fuzz-out")
    p = sub.add_parser("replay", help="run one input through one target")
    p.add_argument("target", choices=list(TARGETS))
    p.add_argument("file")
    sub.add_parser("targets", help="list the targets")
    args = ap.parse_args(argv)

    if args.cmd == "targets":
        print("\n".join(TARGETS))
        return 0
    if args.cmd == "replay":
        from .runner import run_one

        with tempfile.TemporaryDirectory() as tmp:
            f = run_one(args.target, Path(args.file).read_bytes(), Path(tmp))
        print("clean" if f is None else f"{f.kind}: {f.signature}\n{f.trace}")
        return 0 if f is None else 1
    if args.cmd == "atheris":
        from .coverage import fuzz_atheris

        return fuzz_atheris(args.target, args.libfuzzer)
    if args.cmd == "atheris-all":
        from .coverage import run_all

        stats = run_all(args.minutes, Path(args.out))
        (Path(args.out) / "atheris-stats.json").write_text(json.dumps(stats, indent=1))
        return 1 if any(s["findings"] or s["exit"] not in (0,) for s in stats.values()) else 0
    from .runner import campaign

    targets = list(TARGETS) if args.targets == "all" else args.targets.split(",")
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    res = campaign(targets, seconds, out=Path(args.out), seed=args.seed, slice_s=args.slice,
                   timeout=args.timeout, rss_mb=args.rss_mb)
    width = max(map(len, targets))
    for t, s in res["targets"].items():
        print(f"{t:<{width}} {s['inputs']:>9} inputs {s['seconds']:>8.1f} s {s['per_second']:>8.1f}/s "
              f"{s['findings']} findings")
    print(f"{'total':<{width}} {res['inputs']:>9} inputs, {len(res['findings'])} findings "
          f"(stats in {args.out}/stats.json)")
    if res["findings"]:
        print(json.dumps(res["findings"], indent=1))
    return 1 if res["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())

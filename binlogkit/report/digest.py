"""What the report needs from a series, bounded whatever the series' size: computed where the
merge runs (on executors for the Spark job) and carried in the series' record. Pure, no markup,
no third-party import.

* ``timeline(files)``: at most ``TIMELINE_MAX`` rows ``[first name, first number, last number,
  first time, last time, bytes, events, transactions, files]`` — one per file, or one per run of
  consecutive files when there are more (a row whose numbers span more than its files count
  has missing files inside).
* ``coverage(sets)``: per GTID stream, its intervals when there are at most ``COVERAGE_MAX``,
  else ``COVERAGE_MAX`` bins over its range with the count present in each, the number of holes
  and the first few.
"""

from __future__ import annotations

import os

TIMELINE_MAX = 1000
COVERAGE_MAX = 1000
FIRST_HOLES = 12


def timeline(files: list[dict]) -> list[list]:
    per = max(1, -(-len(files) // TIMELINE_MAX))
    rows = []
    for k in range(0, len(files), per):
        run = files[k:k + per]
        firsts = [s["first_timestamp"] for s in run if s["first_timestamp"]]
        lasts = [s["last_timestamp"] for s in run if s["last_timestamp"]]
        rows.append([os.path.basename(run[0]["file"]), run[0]["number"], run[-1]["number"],
                     min(firsts, default=None), max(lasts, default=None), sum(s["size"] for s in run),
                     sum(s["events"] for s in run), sum(s["transactions"] for s in run), len(run)])
    return rows


def coverage(gtids: dict[str, list[list[int]]]) -> dict[str, dict]:
    out = {}
    for key, ivs in sorted(gtids.items()):
        if not ivs:
            continue
        lo, hi = ivs[0][0], ivs[-1][1]
        count = sum(b - a + 1 for a, b in ivs)
        holes = len(ivs) - 1
        first = [[a[1] + 1, b[0] - 1] for a, b in zip(ivs[:FIRST_HOLES + 1], ivs[1:FIRST_HOLES + 1])]
        if len(ivs) <= COVERAGE_MAX:
            out[key] = {"lo": lo, "hi": hi, "count": count, "holes": holes, "first_holes": first,
                        "intervals": [list(x) for x in ivs]}
            continue
        width = (hi - lo + 1) / COVERAGE_MAX
        bins = [0] * COVERAGE_MAX
        for a, b in ivs:
            i = int((a - lo) / width)
            while a <= b and i < COVERAGE_MAX:
                end = min(b, int(lo + (i + 1) * width) - 1) if i < COVERAGE_MAX - 1 else b
                if end >= a:
                    bins[i] += end - a + 1
                    a = end + 1
                i += 1
        sizes = [int(lo + (i + 1) * width) - int(lo + i * width) for i in range(COVERAGE_MAX - 1)]
        sizes.append(hi + 1 - int(lo + (COVERAGE_MAX - 1) * width))
        out[key] = {"lo": lo, "hi": hi, "count": count, "holes": holes, "first_holes": first,
                    "bins": bins, "bin_sizes": sizes}
    return out

"""The audit result as a picture's model: pure arithmetic, no markup.

Input: the audit's result document (``binlogkit.audit.merge.combine``: findings, and per series
its ``timeline`` and ``coverage`` digests, ``digest.py``: bounded whatever the archive). Output:
plain dicts of pixel coordinates that the template draws.

The x axis is time, shared by every series (UTC); an archive whose events all carry one
timestamp falls back to file order. Nothing grows with the archive past what a screen shows:
files are drawn one bar each while bars stay at least ``MIN_BAR`` pixels apart on average,
else in bins (a bar per bin, its tooltip says how many files); findings are drawn one mark each
up to ``MAX_MARKS`` per series, else one mark per kind and pixel column with a count; coverage
segments are merged per pixel.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..gtid.forms import key_form

WIDTH = 1000          # the plot area, px
LEFT = 8
MIN_BAR = 2.0         # average px per file below which files are binned
MAX_MARKS = 1500      # per series, beyond which marks are binned per pixel column
LANE = 11             # px per finding kind
KINDS = ["missing_file", "gtid_gap", "duplicate_gtid", "out_of_order_gtid", "partial_transaction", "torn_event",
         "checksum_mismatch", "incident", "rotate_mismatch", "position_gap", "duplicated_range", "unreadable",
         "encrypted", "unknown_event"]
LABELS = {"missing_file": "missing file", "gtid_gap": "GTID gap", "duplicate_gtid": "duplicate GTID",
          "out_of_order_gtid": "GTID out of order", "partial_transaction": "partial transaction",
          "torn_event": "torn event", "checksum_mismatch": "checksum failure", "incident": "incident",
          "rotate_mismatch": "Rotate mismatch", "position_gap": "position gap",
          "duplicated_range": "source range twice", "unreadable": "unreadable",
          "encrypted": "encrypted", "unknown_event": "unknown event"}


def utc(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S") if ts is not None else "-"


class Axis:
    def __init__(self, lo: float, hi: float, by_time: bool) -> None:
        self.lo, self.hi, self.by_time = lo, hi if hi > lo else lo + 1, by_time

    def x(self, v: float) -> float:
        return LEFT + (v - self.lo) * WIDTH / (self.hi - self.lo)

    def ticks(self, n: int = 5) -> list[dict]:
        """n + 1 ticks; times after the first one without the date when it does not change."""
        out = []
        day = None
        for k in range(n + 1):
            v = self.lo + (self.hi - self.lo) * k / n
            if self.by_time:
                label = utc(v)
                label = label[11:] if label[:10] == day else label
                day = label[:10] if len(label) > 8 else day
            else:
                label = f"file {v:,.0f}"
            out.append({"x": round(self.x(v), 1), "label": label})
        return out


# a timeline row: [first name, first number, last number, first time, last time, bytes, events,
#                  transactions, files]
NAME, FIRST, LAST, T0, T1, SIZE, EVENTS, TRX, FILES = range(9)
Row = list[Any]  # a JSON list of the types above (digest.timeline)


def _span(row: Row) -> tuple[float, float] | None:
    """(first, last) time of a row, one standing for the other when missing; None without either."""
    a, b = row[T0], row[T1]
    if a is None and b is None:
        return None
    a = b if a is None else a
    b = a if b is None else b
    return min(a, b), max(a, b)


def _axis(result: dict) -> Axis:
    times = [t for s in result["summary"].values() for row in s.get("timeline", []) for t in (_span(row) or ())
             if t]
    if times and max(times) > min(times):
        return Axis(min(times), max(times), True)
    numbers = [n for s in result["summary"].values() for row in s.get("timeline", []) for n in (row[FIRST], row[LAST])]
    numbers = numbers or [0, 1]
    return Axis(min(numbers), max(numbers) + 1, False)


def _where(axis: Axis, row: Row) -> tuple[float, float]:
    if axis.by_time:
        span = _span(row)
        if span is None:
            return axis.x(axis.lo), axis.x(axis.lo)
        return axis.x(span[0]), axis.x(span[1])
    return axis.x(row[FIRST]), axis.x(row[LAST] + 1)


def _name(base: str, n: int) -> str:
    return f"{base}.{n:06d}"


def _bars(axis: Axis, rows: list[Row]) -> list[dict]:
    bars = []
    for k, row in enumerate(rows):
        x0, x1 = _where(axis, row)
        a, b = _span(row) or (None, None)
        base = row[NAME].rsplit(".", 1)[0]
        last = _name(base, row[LAST])
        what = row[NAME] if row[FILES] == 1 else f"{row[FILES]:,} files {row[NAME]} .. {last}"
        inside = row[LAST] - row[FIRST] + 1 - row[FILES]
        bars.append({"x": round(x0, 2), "w": round(max(1.0, x1 - x0), 2), "n": row[FILES], "shade": k % 2,
                     "first": row[NAME], "last": last, "bytes": row[SIZE], "inside": inside,
                     "title": f"{what}: {utc(a)} .. {utc(b)} UTC, {row[SIZE]:,} bytes, {row[EVENTS]:,} events, "
                              f"{row[TRX]:,} transactions" + (f"; {inside:,} missing among them" if inside else "")})
    if not bars or WIDTH / len(bars) >= MIN_BAR:
        return bars
    bins: dict[int, dict] = {}
    for bar in bars:
        key = int((bar["x"] + bar["w"] / 2) // 4)
        cur = bins.get(key)
        if cur is None:
            bins[key] = dict(bar)
        else:
            end = max(cur["x"] + cur["w"], bar["x"] + bar["w"])
            cur["x"] = min(cur["x"], bar["x"])
            cur["w"] = end - cur["x"]
            cur["n"] += bar["n"]
            cur["last"] = bar["last"]
            cur["bytes"] += bar["bytes"]
            cur["inside"] += bar["inside"]
    out = []
    for k, bar in enumerate(sorted(bins.values(), key=lambda bn: bn["x"])):
        bar["title"] = f"{bar['n']:,} files {bar['first']} .. {bar['last']}, {bar['bytes']:,} bytes" + (
            f"; {bar['inside']:,} missing among them" if bar["inside"] else "")
        bar["shade"] = k % 2
        out.append(bar)
    return out


def _gaps(axis: Axis, rows: list[Row], findings: list[dict]) -> list[dict]:
    """Missing files: a region between the neighbours that are there."""
    details = {f["place"].split(" ", 1)[0]: f["detail"] for f in findings if f["kind"] == "missing_file" and not f["file"]}
    out = []
    for a, b in zip(rows, rows[1:]):
        if b[FIRST] <= a[LAST] + 1:
            continue
        _x0, x_end_a = _where(axis, a)
        x_start_b, _x1 = _where(axis, b)
        lo, hi = min(x_end_a, x_start_b), max(x_end_a, x_start_b)
        if hi - lo < 4:
            lo, hi = (lo + hi) / 2 - 2, (lo + hi) / 2 + 2
        base = a[NAME].rsplit(".", 1)[0]
        names = [_name(base, n) for n in range(a[LAST] + 1, min(b[FIRST], a[LAST] + 1 + 50))]
        more = b[FIRST] - a[LAST] - 1 - len(names)
        said = next((details[n] for n in names if n in details), None)
        out.append({"x": round(lo, 2), "w": round(hi - lo, 2), "names": names,
                    "title": f"{', '.join(names[:5])}{' ...' if len(names) > 5 or more else ''} missing "
                             f"({b[FIRST] - a[LAST] - 1:,} files), between {_name(base, a[LAST])} and {b[NAME]}"
                             + (f": {said}" if said else "")})
    return out


def _mark_x(axis: Axis, rows: list[Row], firsts: list[int], f: dict) -> float | None:
    if not f["file"]:
        return None
    from bisect import bisect_right

    from ..reading.names import strip_compressed

    name = strip_compressed(f["file"].rsplit("/", 1)[-1])
    tail = name.rsplit(".", 1)[-1] if "." in name else ""
    if not tail.isdigit():
        return None
    n = int(tail)
    i = bisect_right(firsts, n) - 1
    if i < 0 or n > rows[i][LAST]:
        return None
    row = rows[i]
    x0, x1 = _where(axis, row)
    files = row[LAST] - row[FIRST] + 1
    per = (row[SIZE] or 1) / max(1, row[FILES])
    frac = ((n - row[FIRST]) + min(1.0, max(0.0, (f["offset"] or 0) / per))) / files
    return x0 + (x1 - x0) * min(1.0, frac)


def _marks(axis: Axis, rows: list[Row], findings: list[dict], lanes: list[str],
           rowid: dict[int, str]) -> tuple[list[dict], list[dict]]:
    firsts = [r[FIRST] for r in rows]
    placed, unplaced = [], []
    for f in findings:
        if f["kind"] == "missing_file" and not f["file"]:
            continue  # drawn as a gap
        x = _mark_x(axis, rows, firsts, f)
        if x is None:
            unplaced.append(f)
        else:
            placed.append((x, f))
    out = []
    if len(placed) <= MAX_MARKS:
        for x, f in placed:
            out.append({"x": round(x, 2), "lane": lanes.index(f["kind"]), "kind": f["kind"], "severity": f["severity"],
                        "file": f["file"].rsplit("/", 1)[-1], "offset": f["offset"], "count": 1,
                        "row": rowid.get(id(f)), "title": f"{LABELS.get(f['kind'], f['kind'])} at {f['place']}: "
                                                        f"{f['detail']}"})
        return out, unplaced
    bins: dict[tuple, dict] = {}
    for x, f in placed:
        key = (f["kind"], int(x // 3))
        b = bins.get(key)
        if b is None:
            bins[key] = {"x": round(x, 2), "lane": lanes.index(f["kind"]), "kind": f["kind"], "severity": f["severity"],
                         "file": f["file"].rsplit("/", 1)[-1], "offset": f["offset"], "count": 1, "row": rowid.get(id(f)),
                         "first": f["place"], "last": f["place"]}
        else:
            b["count"] += 1
            b["last"] = f["place"]
            if f["severity"] == "error":
                b["severity"] = "error"
    for b in bins.values():
        b["title"] = (f"{b['count']:,} × {LABELS.get(b['kind'], b['kind'])}, {b['first']} .. {b['last']}"
                      if b["count"] > 1 else f"{LABELS.get(b['kind'], b['kind'])} at {b['first']}")
    return sorted(bins.values(), key=lambda b: b["x"]), unplaced


def _coverage(cov: dict[str, dict] | None) -> list[dict]:
    out = []
    for key, c in sorted((cov or {}).items()):
        lo, hi = c["lo"], c["hi"]
        span = max(1, hi - lo + 1)
        segs: list[list[float]] = []
        hole_px: list[dict] = []
        if "intervals" in c:
            ivs = c["intervals"]
            for a, b in ivs:
                x0, x1 = LEFT + (a - lo) * WIDTH / span, LEFT + (b - lo + 1) * WIDTH / span
                if segs and x0 - segs[-1][1] < 0.5:
                    segs[-1][1] = max(segs[-1][1], x1)
                else:
                    segs.append([x0, x1])
            for h in ([a[1] + 1, b[0] - 1] for a, b in zip(ivs, ivs[1:])):  # every hole, merged per pixel
                x0 = LEFT + (h[0] - lo) * WIDTH / span
                x1 = max(x0 + 1.5, LEFT + (h[1] - lo + 1) * WIDTH / span)
                if hole_px and x0 - hole_px[-1]["x1"] < 1:
                    hole_px[-1].update(x1=max(hole_px[-1]["x1"], x1), last=h)
                    hole_px[-1]["n"] += 1
                else:
                    hole_px.append({"x0": x0, "x1": x1, "n": 1, "first": h, "last": h})
        else:  # binned: a bin is green when whole, red when anything in it is missing
            w = WIDTH / len(c["bins"])
            for i, (have, size) in enumerate(zip(c["bins"], c["bin_sizes"])):
                x0 = LEFT + i * w
                if have:
                    if segs and abs(segs[-1][1] - x0) < 0.01:
                        segs[-1][1] = x0 + w
                    else:
                        segs.append([x0, x0 + w])
                if have < size:
                    a = lo + int(i * span / len(c["bins"]))
                    if hole_px and abs(hole_px[-1]["x1"] - x0) < 0.01:
                        hole_px[-1].update(x1=x0 + w)
                        hole_px[-1]["n"] += 1
                        hole_px[-1]["last"] = [a, a + size - 1]
                    else:
                        hole_px.append({"x0": x0, "x1": max(x0 + 1.5, x0 + w), "n": 1, "first": [a, a + size - 1],
                                        "last": [a, a + size - 1], "bin": True})
        for px in hole_px:
            a, b = px["first"][0], px["last"][1]
            px.update(x=round(px["x0"], 2), w=round(px["x1"] - px["x0"], 2),
                      title=(f"{key}: numbers missing in {a}..{b}" if px.get("bin") or px["n"] > 1
                             else f"{key}: {a}" + (f"-{b}" if b > a else "") + " missing"))
        sep = key_form(key).sep
        shown = c["first_holes"]
        out.append({"key": key, "lo": lo, "hi": hi, "count": c["count"], "holes": c["holes"],
                    "segs": [{"x": round(a, 2), "w": round(max(0.5, b - a), 2)} for a, b in segs],
                    "hole_px": hole_px,
                    "hole_text": ", ".join(f"{key}{sep}{a}" + (f"..{b}" if b > a else "") for a, b in shown)
                    + (f" and {c['holes'] - len(shown):,} more" if c["holes"] > len(shown) else "")})
    return out


def build(result: dict, *, title: str = "binlogkit audit") -> dict:
    axis = _axis(result)
    findings = result["findings"]
    rowid = {id(f): f"f{k}" for k, f in enumerate(findings)}
    series = []
    for name, s in result["summary"].items():
        rows = sorted(s.get("timeline", []), key=lambda r: r[FIRST])
        mine = [f for f in findings if f["series"] == name]
        lanes = [k for k in KINDS if any(f["kind"] == k for f in mine)] + sorted(
            {f["kind"] for f in mine} - set(KINDS))
        marks, unplaced = _marks(axis, rows, mine, lanes, rowid)
        gaps = _gaps(axis, rows, mine)
        # series-wide findings (MySQL holes), and any whose file has no bar: said in words
        wide = [f for f in mine if not f["file"] and f["kind"] != "missing_file"] + unplaced
        counts = {"error": sum(f["severity"] == "error" for f in mine),
                  "warning": sum(f["severity"] == "warning" for f in mine)}
        series.append({
            "name": name, "relay": s.get("relay"), "files": s["files"], "bytes": s["bytes"], "events": s["events"],
            "first": utc(s["first_timestamp"]), "last": utc(s["last_timestamp"]),
            "covered": s.get("gtids_covered") or "-", "counts": counts,
            "lanes": [{"kind": k, "label": LABELS.get(k, k), "y": 4 + i * LANE} for i, k in enumerate(lanes)],
            "bar_y": 8 + len(lanes) * LANE, "height": 8 + len(lanes) * LANE + 34,
            "bars": _bars(axis, rows), "binned": any(r[FILES] > 1 for r in rows) or len(rows) > WIDTH / MIN_BAR,
            "gaps": gaps, "marks": marks,
            "wide": wide, "coverage": _coverage(s.get("coverage")),
        })
    return {"title": title, "axis": {"by_time": axis.by_time, "ticks": axis.ticks()}, "width": WIDTH, "left": LEFT,
            "series": series, "counts": result["counts"], "files": result["files"], "bytes": result["bytes"],
            "findings": [dict(f, row=rowid[id(f)]) for f in findings[:2000]], "findings_total": len(findings),
            "findings_omitted": result.get("findings_omitted", 0), "lane": LANE, "kinds": LABELS}

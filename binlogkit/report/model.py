"""The audit result as a picture's model: pure arithmetic, no markup.

Input: the audit's result document (``binlogkit.audit.merge.combine``: findings, and per series
its ``timeline`` — one row per file: name, number, first and last event time, size, events,
transactions — and ``coverage``, the GTIDs present as interval sets). Output: plain dicts of
pixel coordinates that the template draws.

The x axis is time, shared by every series (UTC); an archive whose events all carry one
timestamp falls back to file order. Nothing grows with the archive past what a screen shows:
files are drawn one bar each while bars stay at least ``MIN_BAR`` pixels apart on average,
else in bins (a bar per bin, its tooltip says how many files); findings are drawn one mark each
up to ``MAX_MARKS`` per series, else one mark per kind and pixel column with a count; coverage
segments are merged per pixel.
"""

from __future__ import annotations

from datetime import datetime, timezone

WIDTH = 1000          # the plot area, px
LEFT = 8
MIN_BAR = 2.0         # average px per file below which files are binned
MAX_MARKS = 1500      # per series, beyond which marks are binned per pixel column
LANE = 11             # px per finding kind
KINDS = ["missing_file", "gtid_gap", "duplicate_gtid", "out_of_order_gtid", "partial_transaction", "torn_event",
         "checksum_mismatch", "incident", "rotate_mismatch", "position_gap", "unreadable", "encrypted",
         "unknown_event"]
LABELS = {"missing_file": "missing file", "gtid_gap": "GTID gap", "duplicate_gtid": "duplicate GTID",
          "out_of_order_gtid": "GTID out of order", "partial_transaction": "partial transaction",
          "torn_event": "torn event", "checksum_mismatch": "checksum failure", "incident": "incident",
          "rotate_mismatch": "Rotate mismatch", "position_gap": "position gap", "unreadable": "unreadable",
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


def _span(row) -> tuple[float | None, float | None]:
    a, b = row[2], row[3]
    if a is None and b is None:
        return None, None
    a = b if a is None else a
    b = a if b is None else b
    return min(a, b), max(a, b)


def _axis(result: dict) -> Axis:
    times = [t for s in result["summary"].values() for row in s.get("timeline", []) for t in _span(row) if t]
    if times and max(times) > min(times):
        return Axis(min(times), max(times), True)
    numbers = [row[1] for s in result["summary"].values() for row in s.get("timeline", [])] or [0, 1]
    return Axis(min(numbers), max(numbers) + 1, False)


def _where(axis: Axis, row) -> tuple[float, float]:
    if axis.by_time:
        a, b = _span(row)
        if a is None:
            return axis.x(axis.lo), axis.x(axis.lo)
        return axis.x(a), axis.x(b)
    return axis.x(row[1]), axis.x(row[1] + 1)


def _bars(axis: Axis, rows: list) -> list[dict]:
    bars = []
    for k, row in enumerate(rows):
        x0, x1 = _where(axis, row)
        a, b = _span(row)
        bars.append({"x": round(x0, 2), "w": round(max(1.0, x1 - x0), 2), "n": 1, "shade": k % 2,
                     "title": f"{row[0]}: {utc(a)} .. {utc(b)} UTC, {row[4]:,} bytes, {row[5]:,} events, "
                              f"{row[6]:,} transactions", "first": row[0], "last": row[0], "bytes": row[4]})
    if not bars or WIDTH / len(bars) >= MIN_BAR:
        return bars
    bins: dict[int, dict] = {}
    for b in bars:
        key = int((b["x"] + b["w"] / 2) // 4)
        cur = bins.get(key)
        if cur is None:
            bins[key] = dict(b)
        else:
            end = max(cur["x"] + cur["w"], b["x"] + b["w"])
            cur["x"] = min(cur["x"], b["x"])
            cur["w"] = end - cur["x"]
            cur["n"] += 1
            cur["last"] = b["last"]
            cur["bytes"] += b["bytes"]
    out = []
    for k, b in enumerate(sorted(bins.values(), key=lambda b: b["x"])):
        if b["n"] > 1:
            b["title"] = f"{b['n']:,} files {b['first']} .. {b['last']}, {b['bytes']:,} bytes"
        b["shade"] = k % 2
        out.append(b)
    return out


def _gaps(axis: Axis, rows: list, findings: list[dict]) -> list[dict]:
    """Missing files: a region between the neighbours that are there."""
    by_place = {f["place"]: f for f in findings if f["kind"] == "missing_file" and not f["file"]}
    out = []
    for a, b in zip(rows, rows[1:]):
        if b[1] <= a[1] + 1:
            continue
        _x0, x_end_a = _where(axis, a)
        x_start_b, _x1 = _where(axis, b)
        lo, hi = min(x_end_a, x_start_b), max(x_end_a, x_start_b)
        if hi - lo < 4:
            lo, hi = (lo + hi) / 2 - 2, (lo + hi) / 2 + 2
        names = [f"{a[0].rsplit('.', 1)[0]}.{n:06d}" for n in range(a[1] + 1, b[1])]
        details = [by_place[p]["detail"] for p in by_place if any(p.startswith(n + " ") for n in names)]
        out.append({"x": round(lo, 2), "w": round(hi - lo, 2), "names": names,
                    "title": f"{', '.join(names[:5])}{' ...' if len(names) > 5 else ''} missing, between "
                             f"{a[0]} and {b[0]}" + (f": {details[0]}" if details else "")})
    return out


def _mark_x(axis: Axis, rows_by_name: dict, f: dict) -> float | None:
    row = rows_by_name.get(f["file"].rsplit("/", 1)[-1]) if f["file"] else None
    if row is None:
        return None
    x0, x1 = _where(axis, row)
    size = row[4] or 1
    frac = min(1.0, max(0.0, (f["offset"] or 0) / size))
    return x0 + (x1 - x0) * frac


def _marks(axis: Axis, rows: list, findings: list[dict], lanes: list[str], rowid: dict) -> list[dict]:
    by_name = {r[0]: r for r in rows}
    placed = []
    for f in findings:
        if f["kind"] == "missing_file" and not f["file"]:
            continue  # drawn as a gap
        x = _mark_x(axis, by_name, f)
        if x is None:
            continue
        placed.append((x, f))
    out = []
    if len(placed) <= MAX_MARKS:
        for x, f in placed:
            out.append({"x": round(x, 2), "lane": lanes.index(f["kind"]), "kind": f["kind"], "severity": f["severity"],
                        "file": f["file"].rsplit("/", 1)[-1], "offset": f["offset"], "count": 1,
                        "row": rowid.get(id(f)), "title": f"{LABELS.get(f['kind'], f['kind'])} at {f['place']}: "
                                                        f"{f['detail']}"})
        return out
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
    return sorted(bins.values(), key=lambda b: b["x"])


def _coverage(cov: dict) -> list[dict]:
    out = []
    for key, ivs in sorted((cov or {}).items()):
        if not ivs:
            continue
        lo, hi = ivs[0][0], ivs[-1][1]
        span = max(1, hi - lo + 1)
        segs: list[list[float]] = []
        for a, b in ivs:
            x0 = LEFT + (a - lo) * WIDTH / span
            x1 = LEFT + (b - lo + 1) * WIDTH / span
            if segs and x0 - segs[-1][1] < 0.5:
                segs[-1][1] = max(segs[-1][1], x1)
            else:
                segs.append([x0, x1])
        holes = [[a[1] + 1, b[0] - 1] for a, b in zip(ivs, ivs[1:])]
        hole_px: list[dict] = []  # every hole, merged per pixel (at least 1.5 px wide, so one number shows)
        for h in holes:
            x0 = LEFT + (h[0] - lo) * WIDTH / span
            x1 = max(x0 + 1.5, LEFT + (h[1] - lo + 1) * WIDTH / span)
            if hole_px and x0 - hole_px[-1]["x1"] < 1:
                cur = hole_px[-1]
                cur["x1"] = max(cur["x1"], x1)
                cur["n"] += 1
                cur["last"] = h
            else:
                hole_px.append({"x0": x0, "x1": x1, "n": 1, "first": h, "last": h})
        for c in hole_px:
            a, b = c["first"][0], c["last"][1]
            c.update(x=round(c["x0"], 2), w=round(c["x1"] - c["x0"], 2),
                     title=(f"{key}: {a}" + (f"-{b}" if b > a else "") + " missing" if c["n"] == 1
                            else f"{key}: {c['n']:,} holes between {a} and {b}"))
        count = sum(b - a + 1 for a, b in ivs)
        sep = ":" if ":" in key or len(key) == 36 else "-"
        out.append({"key": key, "lo": lo, "hi": hi, "count": count, "holes": len(holes),
                    "segs": [{"x": round(a, 2), "w": round(max(0.5, b - a), 2)} for a, b in segs],
                    "hole_px": hole_px,
                    "hole_text": ", ".join(f"{key}{sep}{a}" + (f"..{b}" if b > a else "") for a, b in holes[:12])
                    + (f" and {len(holes) - 12:,} more" if len(holes) > 12 else "")})
    return out


def build(result: dict, *, title: str = "binlogkit audit") -> dict:
    axis = _axis(result)
    findings = result["findings"]
    rowid = {id(f): f"f{k}" for k, f in enumerate(findings)}
    series = []
    for name, s in result["summary"].items():
        rows = sorted(s.get("timeline", []), key=lambda r: r[1])
        mine = [f for f in findings if f["series"] == name]
        lanes = [k for k in KINDS if any(f["kind"] == k for f in mine)] + sorted(
            {f["kind"] for f in mine} - set(KINDS))
        marks = _marks(axis, rows, mine, lanes, rowid)
        gaps = _gaps(axis, rows, mine)
        names = {r[0] for r in rows}
        # series-wide findings (MySQL holes), and any whose file has no bar: said in words
        wide = [f for f in mine if (not f["file"] and f["kind"] != "missing_file")
                or (f["file"] and f["file"].rsplit("/", 1)[-1] not in names)]
        counts = {"error": sum(f["severity"] == "error" for f in mine),
                  "warning": sum(f["severity"] == "warning" for f in mine)}
        series.append({
            "name": name, "relay": s.get("relay"), "files": s["files"], "bytes": s["bytes"], "events": s["events"],
            "first": utc(s["first_timestamp"]), "last": utc(s["last_timestamp"]),
            "covered": s.get("gtids_covered") or "-", "counts": counts,
            "lanes": [{"kind": k, "label": LABELS.get(k, k), "y": 4 + i * LANE} for i, k in enumerate(lanes)],
            "bar_y": 8 + len(lanes) * LANE, "height": 8 + len(lanes) * LANE + 34,
            "bars": _bars(axis, rows), "binned": len(rows) > WIDTH / MIN_BAR, "gaps": gaps, "marks": marks,
            "wide": wide, "coverage": _coverage(s.get("coverage")),
        })
    return {"title": title, "axis": {"by_time": axis.by_time, "ticks": axis.ticks()}, "width": WIDTH, "left": LEFT,
            "series": series, "counts": result["counts"], "files": result["files"], "bytes": result["bytes"],
            "findings": [dict(f, row=rowid[id(f)]) for f in findings[:2000]], "findings_total": len(findings),
            "findings_omitted": result.get("findings_omitted", 0), "lane": LANE, "kinds": LABELS}

"""The merge: per-file summaries in, findings out, with interval-set algebra. Pure functions.

A **series** is the files ``dir/base.NNNNNN`` of one directory and base name: one server's
binlogs, or one replica connection's relay logs. The relay series of one directory are the
connections of one replica, so the unit of work is a **directory**: its summaries are all the
merge needs, and directories are merged independently (in parallel by the Spark job).

For one directory, in three steps that both engines run the same way:

1. ``plan_directory(summaries)`` folds each series' GTID state over its files, in order: the
   highest GTID per MariaDB domain (seeded by the first file's Gtid_list) and the interval sets
   seen so far (MySQL: seeded by the first file's Previous_gtids). A file whose own GTIDs reach
   back into that state (its first GTID of a domain is not above the highest so far; a MySQL
   GTID already seen) is to be scanned again *with* the state as its context; every other
   file's order findings follow from its summary. Across the relay series: C_s (completed
   GTIDs), A_s (all), the owner of a GTID is the first series (by name) that completed it;
   the flagged GTIDs of series s are A_s ∩ (∪C − Own_s). Files holding flagged GTIDs, and the
   owners' files holding their first copies, are scanned again to list those occurrences.
2. The engine runs those scans (``summary.file_summary(path, context)``) wherever it likes.
3. ``merge_directory(summaries, rescans)`` derives the findings.

The work and memory of a merge grow with files, GTID streams, holes and findings — never with
bytes or transactions. Findings are fail-closed: whatever cannot be vouched for is reported.

Kinds: missing_file, rotate_mismatch, position_gap, duplicated_range, gtid_gap, duplicate_gtid,
out_of_order_gtid, incident, partial_transaction, torn_event, checksum_mismatch, encrypted (no
key: an error), unsupported, unreadable, unknown_event.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

from ..gtid import GtidPos, MariadbGtid, MysqlGtidSet
from ..reading.names import strip_compressed
from ..report import digest
from . import intervals as iv

INCIDENT_NAMES = {1: "LOST_EVENTS", 2: "NEW_INCIDENT"}
SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
FINDING_COLUMNS = ["kind", "severity", "file", "offset", "detail", "gtids", "series", "place", "source"]


@dataclass
class Finding:
    kind: str
    severity: str          # error, warning, info
    file: str | None
    offset: int | None
    detail: str
    gtids: list[str] = field(default_factory=list)
    source: dict | None = None   # {"file", "position"} where known
    series: str | None = None
    place: str = ""              # where, for people: "file@offset", or the missing file and its neighbours

    def __post_init__(self) -> None:
        if not self.place and self.file:
            name = os.path.basename(self.file)
            self.place = f"{name}@{self.offset}" if self.offset is not None else name

    def to_json(self) -> dict:
        return asdict(self)


def sort_key(f: dict, index: int = 0) -> tuple:
    """The report order: severity, series, file, offset, then the order the merge found them."""
    return (SEVERITY_RANK[f["severity"]], f["series"] or "", f["file"] or "", f["offset"] or 0, index)


def series_name(s: dict) -> str:
    return f"{s['directory']}/{s['base']}"


def group_series(summaries: Iterable[dict]) -> dict[str, list[dict]]:
    series: dict[str, list[dict]] = defaultdict(list)
    for s in summaries:
        series[series_name(s)].append(s)
    for files in series.values():
        files.sort(key=lambda s: s["number"])
    return dict(sorted(series.items()))


# --- step 1: the plan ---------------------------------------------------------------------------

class _Fold:
    """A series' GTID state before each of its files, from the summaries alone."""

    def __init__(self, first: dict) -> None:
        self.last: dict[int, list] = {}
        for g in first["gtid_list"] or []:
            x = MariadbGtid.parse(g)
            if x.domain_id not in self.last or x.seq_no > self.last[x.domain_id][1]:
                self.last[x.domain_id] = [str(x), x.seq_no]
        self.maria_seen: iv.IntervalSet = {}  # owned by the fold: grown in place
        self.mysql_seen: iv.IntervalSet = _previous_set(first["previous_gtids"]) if first["previous_gtids"] else {}
        self.any_maria = bool(first["gtid_list"])

    def needs_context(self, s: dict) -> bool:
        maria = s["maria"]
        if maria:
            for d, (_g, _off, _src, seq) in maria["first"].items():
                p = self.last.get(int(d))
                if p is not None and seq <= p[1]:
                    return True
        return bool(s["mysql"] and iv.intersect(s["mysql"], self.mysql_seen))

    def context(self) -> dict:
        """The state as a rescan's context (a copy: the fold goes on)."""
        return {"maria_last": {str(d): list(v) for d, v in self.last.items()},
                "maria_seen": iv.union(self.maria_seen), "mysql_seen": iv.union(self.mysql_seen)}

    def advance(self, s: dict) -> None:
        maria = s["maria"]
        if maria:
            self.any_maria = True
            for d, (g, seq) in maria["high"].items():
                p = self.last.get(int(d))
                if p is None or seq > p[1]:
                    self.last[int(d)] = [g, seq]
            iv.add_into(self.maria_seen, maria["all"])
        if s["mysql"]:
            iv.add_into(self.mysql_seen, s["mysql"])


def _previous_set(prev: list[dict]) -> iv.IntervalSet:
    m = MysqlGtidSet.from_previous_gtids(prev)
    return {(f"{u}:{t}" if t else u): [list(x) for x in ivs] for (u, t), ivs in m.intervals().items()}


def _all_gtids(s: dict) -> iv.IntervalSet:
    return iv.union((s["maria"] or {}).get("all") or {}, s["mysql"] or {})


def _relay_collects(series: dict[str, list[dict]]) -> tuple[dict[str, iv.IntervalSet], dict[str, iv.IntervalSet]]:
    """(flagged GTIDs per relay series, GTIDs to collect per file) across one replica's connections."""
    relay = [n for n, files in series.items() if any(s["relay"] for s in files)]
    if len(relay) < 2:
        return {}, {}
    complete = {n: iv.union(*(s["complete"] for s in series[n])) for n in relay}
    every = {n: iv.union(*(_all_gtids(s) for s in series[n])) for n in relay}
    u = iv.union(*complete.values())
    own: dict[str, iv.IntervalSet] = {}
    before: iv.IntervalSet = {}
    for n in relay:
        own[n] = iv.subtract(complete[n], before)
        before = iv.union(before, complete[n])
    flagged = {n: iv.intersect(every[n], iv.subtract(u, own[n])) for n in relay}
    flagged = {n: f for n, f in flagged.items() if f}
    collect: dict[str, iv.IntervalSet] = defaultdict(dict)
    for n, f in flagged.items():
        for s in series[n]:
            hit = iv.intersect(f, _all_gtids(s))
            if hit:
                collect[s["file"]] = iv.union(collect[s["file"]], hit)
    for n in relay:
        wanted = iv.intersect(own[n], iv.union(*(f for m, f in flagged.items() if m != n)))
        for s in series[n]:
            if not wanted:
                break
            hit = iv.intersect(wanted, s["complete"])
            if hit:
                collect[s["file"]] = iv.union(collect[s["file"]], hit)
                wanted = iv.subtract(wanted, hit)
    return flagged, dict(collect)


def plan_directory(summaries: list[dict]) -> dict[str, dict]:
    """{file: context} of the files of one directory to scan again (usually none)."""
    series = group_series(summaries)
    out: dict[str, dict] = {}
    for files in series.values():
        fold = _Fold(files[0])
        for s in files:
            if fold.needs_context(s):
                out[s["file"]] = fold.context()
            fold.advance(s)
    _flagged, collect = _relay_collects(series)
    if collect:
        for files in series.values():
            fold = _Fold(files[0])
            for s in files:
                if s["file"] in collect:
                    ctx = out.setdefault(s["file"], fold.context())
                    ctx["collect"] = collect[s["file"]]
                fold.advance(s)
    return out


def by_directory(summaries: Iterable[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for s in summaries:
        out[s["directory"]].append(s)
    return dict(sorted(out.items()))


# --- step 3: the findings ------------------------------------------------------------------------

def listed_series(listed_missing: dict[str, str]) -> dict[str, dict[int, tuple[str, str]]]:
    """``{missing path: the .index that lists it}`` by series name (as ``series_name``) and
    number: ``{series: {number: (path, index)}}``."""
    out: dict[str, dict[int, tuple[str, str]]] = defaultdict(dict)
    for path, index in listed_missing.items():
        directory, name = os.path.split(path)
        base, _, num = strip_compressed(name).rpartition(".")
        if base and num.isdigit():
            out[f"{directory}/{base}"][int(num)] = (path, index)
    return dict(out)


def merge_directory(summaries: list[dict], rescans: dict[str, dict] | None = None, *,
                    live: bool = False, listed_missing: dict[str, str] | None = None
                    ) -> tuple[list[dict], dict[str, dict]]:
    """(findings, per-series summary) of one directory; ``rescans`` are the summaries that
    ``plan_directory`` asked for, by file. ``listed_missing``: the files of this directory an
    ``.index`` lists but the archive does not have (path -> index): each a ``missing_file``
    error — the index says the file existed. Findings come in report order."""
    rescans = rescans or {}
    series = group_series(summaries)
    flagged, _ = _relay_collects(series)
    per_series: dict[str, list[Finding]] = {}
    summary = {}
    listed = listed_series(listed_missing or {})
    for name in sorted(set(listed) - set(series)):  # series the archive has no file of at all
        per_series[name] = _listed_left(name, listed[name])
    for name, files in series.items():
        found = _files_and_chain(name, files, live, listed.get(name, {}))
        gfound, covered, intervals = _gtids(name, files, rescans)
        per_series[name] = found + gfound
        summary[name] = series_record(files, covered, intervals)
    if flagged:
        owners = _owners(series, flagged, rescans)
        for name, f in flagged.items():
            for s in series[name]:
                for gtid, offset, _complete, source in rescans.get(s["file"], {}).get("collected", []):
                    key, n = iv.split_gtid(gtid)
                    if not iv.contains(f, key, n):
                        continue
                    oname, ofile, ooff = owners[gtid]
                    per_series[name].append(Finding(
                        "duplicate_gtid", "warning", s["file"], offset,
                        f"{gtid} was also received over {oname} ({ofile}@{ooff}); without "
                        "gtid_ignore_duplicates this copy would be applied a second time", [gtid],
                        source=source, series=name))
    rows = [f.to_json() for found in per_series.values() for f in found]
    order = sorted(range(len(rows)), key=lambda i: sort_key(rows[i], i))
    findings = [rows[i] for i in order]
    return findings, summary


COVERED_MAX = 4096  # characters of a series' GTID set text kept in its record


def series_record(files: list[dict], covered: str | None, intervals: int = 0) -> dict:
    """A series' line in the result: files, bytes, events, first / last timestamps and files,
    and the GTIDs it covers. Bounded whatever the series' size: a MySQL set with very many holes
    (each of them a ``gtid_gap`` finding) is cut after ``COVERED_MAX`` characters at an interval
    boundary and ends in ``...`` (so it does not parse as a smaller set); ``gtid_intervals``
    counts the set's intervals (MariaDB: its domains) either way."""
    if covered is not None and len(covered) > COVERED_MAX:
        cut = max(i for i in range(COVERED_MAX) if covered[i] in ",:" and covered[i - 1].isdigit())
        covered = covered[:cut] + covered[cut] + "..."
    return {
        "files": len(files), "bytes": sum(s["size"] for s in files), "events": sum(s["events"] for s in files),
        "first_timestamp": min((s["first_timestamp"] for s in files if s["first_timestamp"]), default=None),
        "last_timestamp": max((s["last_timestamp"] for s in files if s["last_timestamp"]), default=None),
        "relay": any(s["relay"] for s in files), "gtids_covered": covered, "gtid_intervals": intervals,
        "first_file": files[0]["file"], "last_file": files[-1]["file"],
        # for the HTML report (binlogkit/report): files over time and the GTIDs present, bounded
        "timeline": digest.timeline(files), "coverage": digest.coverage(iv.union(*(_all_gtids(s) for s in files))),
    }


def _owners(series: dict[str, list[dict]], flagged: dict[str, iv.IntervalSet],
            rescans: dict[str, dict]) -> dict[str, tuple[str, str, int]]:
    """GTID -> (series, file, offset) of its first completed copy, for the flagged GTIDs."""
    out: dict[str, tuple[str, str, int]] = {}
    for name, files in series.items():
        for s in files:
            for gtid, offset, complete, _src in rescans.get(s["file"], {}).get("collected", []):
                if complete and gtid not in out:
                    key, n = iv.split_gtid(gtid)
                    if any(iv.contains(f, key, n) for m, f in flagged.items() if m != name):
                        out[gtid] = (name, s["file"], offset)
    return out


def _missing_place(base: str, n: int, a: int, b: int) -> str:
    return f"{base}.{n:06d} missing, between .{a:06d} and .{b:06d}"


def _listed_left(name: str, listed: dict[int, tuple[str, str]]) -> list[Finding]:
    """A ``missing_file`` error per file an index lists that the archive lacks (not already
    reported as a gap or as the target of the last Rotate)."""
    base = os.path.basename(name)
    return [Finding("missing_file", "error", None, None,
                    f"{path} is listed by {index} but the archive does not have it", series=name,
                    place=f"{base}.{n:06d} missing (listed by {os.path.basename(index)})")
            for n, (path, index) in sorted(listed.items())]


def _files_and_chain(name: str, files: list[dict], live: bool,
                     listed: dict[int, tuple[str, str]] | None = None) -> list[Finding]:
    out: list[Finding] = []
    numbers = [s["number"] for s in files]
    present = set(numbers)
    base = files[0]["base"]
    listed = dict(listed or {})  # what an index lists and the archive lacks: number -> (path, index)
    for a, b in zip(numbers, numbers[1:]):
        for missing in range(a + 1, b):
            by = listed.pop(missing, None)
            out.append(Finding("missing_file", "error", None, None,
                               f"{name}.{missing:06d} is missing between {a:06d} and {b:06d}"
                               + (f" ({by[1]} lists it)" if by else ""), series=name,
                               place=_missing_place(base, missing, a, b)))
    out += _source_repeats(name, files)
    for i, s in enumerate(files):
        last_of_series = i == len(files) - 1
        p = s["problem"]
        if p:
            kind = p["kind"]
            if kind == "TruncatedEventError":
                if not last_of_series:
                    sev, note = "error", ""
                elif live:
                    sev, note = "warning", " (the tail of the last file: in flight?)"
                else:
                    sev, note = "error", (" (the tail of the series' last file: a live server may still be "
                                          "writing it; if this series may be active, audit with --live)")
                out.append(Finding("torn_event", sev, s["file"], p["offset"], p["message"] + note, series=name))
            elif kind == "KeyRequiredError":  # fail closed: what cannot be read was not checked
                out.append(Finding("encrypted", "error", s["file"], p["offset"],
                                   p["message"] + "; the file was not checked", series=name))
            elif kind == "UnsupportedFormatError":
                out.append(Finding("unsupported", "warning", s["file"], p["offset"], p["message"], series=name))
            else:
                out.append(Finding("unreadable", "error", s["file"], p["offset"], f"{kind}: {p['message']}",
                                   series=name))
        for off in s["bad_checksums"]:
            out.append(Finding("checksum_mismatch", "error", s["file"], off, "CRC32 does not match", series=name))
        for inc in s["incidents"]:
            nm = INCIDENT_NAMES.get(inc["code"], str(inc["code"]))
            out.append(Finding("incident", "error", s["file"], inc["offset"],
                               f"The incident {nm} occured on the master. Message: {inc['message']}", series=name))
        for u in s["unknown_events"]:
            out.append(Finding("unknown_event", "warning", s["file"], u["offset"],
                               f"event type {u['type_code']} is unknown and not ignorable", series=name))
        for b in s["position_breaks"]:
            out.append(Finding("position_gap", "error", s["file"], b["offset"],
                               f"end_log_pos {b['log_pos']} where the event ends at {b['expected']}", series=name))
        # the Rotate that ends a binlog must name the next file
        r = s["end_rotate"]
        if r:
            tnum = _number(r["target"])
            if tnum is not None and not last_of_series and tnum != numbers[i + 1]:
                out.append(Finding("rotate_mismatch", "error", s["file"], r["offset"],
                                   f"rotates to {r['target']} but the next file is number {numbers[i + 1]:06d}",
                                   series=name))
            elif tnum is not None and last_of_series and tnum not in present:
                by = listed.pop(tnum, None)  # the index says it existed: lost, not merely not yet written
                out.append(Finding("missing_file", "error" if by else "warning", s["file"], r["offset"],
                                   f"the last file rotates to {r['target']}, which the archive does not have"
                                   + (f" ({by[1]} lists it)" if by else ""), series=name))
        # transactions cut between files
        tail = s["tail"]
        if tail:
            gt = [tail["gtid"]] if tail["gtid"] else []
            if last_of_series:
                out.append(Finding("partial_transaction", "warning", s["file"], tail["offset"],
                                   "begun at the tail of the archive, not finished (in flight)", gt,
                                   source=tail["source"], series=name))
            elif not files[i + 1]["head"]["continuation"]:
                out.append(Finding("partial_transaction", "error", s["file"], tail["offset"],
                                   "begun but never finished: the next file does not continue it (lost data)", gt,
                                   source=tail["source"], series=name))
        for t in s["interrupted"]:  # interrupted inside the file by the next transaction
            out.append(Finding("partial_transaction", "error", s["file"], t["offset"],
                               "begun but interrupted by the next transaction (lost data)",
                               [t["gtid"]] if t["gtid"] else [], source=t["source"], series=name))
    return out + _listed_left(name, listed)


def _source_repeats(name: str, files: list[dict]) -> list[Finding]:
    """A relay series that holds a range of a source binlog twice: the source's stream restarted
    behind what the relay logs already held (a replica that reconnected at a stale position),
    so an applier reads those events twice. From the files' source runs, in order; the state is
    one entry per (source file, relay file) stretch — it grows with files, not events.

    A run whose source file no relay log names (the series' first files, when the one with the
    source's Rotate was purged) continues the file of the run before it; before any, it is taken
    to be the file that the next restart (a new connection, a jump back) names, when no Rotate
    of the source's own (the end of its file) comes between: a stream changes file only there."""
    out: list[Finding] = []
    held: dict[str, list[list]] = {}   # source file -> [[start, end, relay file, offset]]
    high: dict[str, int] = {}          # source file -> highest end so far
    flat = [(s["file"], r) for s in files for r in s.get("source_runs") or []]
    ahead: list[str | None] = [None] * len(flat)   # the file of the next restart, none between
    nxt = None
    for i in range(len(flat) - 1, -1, -1):
        ahead[i] = nxt
        r = flat[i][1]
        if r[0] is not None:
            nxt = r[0] if r[5] else None
    current = None
    for (file, (f, a, b, at, _upto, _restart)), guess in zip(flat, ahead):
        f = f or current or guess
        current = f
        if f is None:
            continue
        runs = held.setdefault(f, [])
        if a < high.get(f, 0):
            for a0, b0, file0, _at0 in runs:
                lo, hi = max(a, a0), min(b, b0)
                if lo < hi:
                    out.append(Finding(
                        "duplicated_range", "error", file, at,
                        f"duplicated source range {f}:{lo}-{hi} in relay files {os.path.basename(file0)} and "
                        f"{os.path.basename(file)}: the source's stream restarted behind what the relay log held, "
                        "so the SQL thread reads these events twice (applied twice unless skipped by GTID: "
                        "on a row insert MariaDB stops with error 1062)",
                        source={"file": f, "position": lo}, series=name))
        if runs and runs[-1][2] == file and runs[-1][1] == a:
            runs[-1][1] = b
        else:
            runs.append([a, b, file, at])
        high[f] = max(high.get(f, 0), b)
    return out


def _number(name: str) -> int | None:
    tail = name.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _gtid_finding(name: str, file: str, a: dict) -> Finding:
    g, prev, kind = a["gtid"], a["prev"], a["kind"]
    if kind == "duplicate_gtid":
        return Finding(kind, "error", file, a["offset"], f"{g} appears again in the stream", [g],
                       source=a["source"], series=name)
    x, p = MariadbGtid.parse(g), MariadbGtid.parse(prev)
    if kind == "out_of_order_gtid":
        return Finding(kind, "error", file, a["offset"], f"{g} comes after {prev} in domain {x.domain_id}",
                       [g, prev], source=a["source"], series=name)
    return Finding("gtid_gap", "error", file, a["offset"],
                   f"domain {x.domain_id}: seq_no {p.seq_no + 1}..{x.seq_no - 1} missing between {prev} and {g}",
                   [prev, g], source=a["source"], series=name)


def _gtids(name: str, files: list[dict], rescans: dict[str, dict]) -> tuple[list[Finding], str | None, int]:
    out: list[Finding] = []
    fold = _Fold(files[0])
    for s in files:
        again = rescans.get(s["file"])  # scanned again with this very state: exact as it is
        if again is not None:
            anomalies = again["gtid_anomalies"]
        elif fold.needs_context(s):
            raise ValueError(f"{s['file']}: the merge needs it scanned again with its context (plan_directory)")
        else:
            anomalies = _resolve(s, fold)
        out += [_gtid_finding(name, s["file"], a) for a in anomalies]
        fold.advance(s)
    covered, intervals = None, 0
    if fold.mysql_seen:
        final = MysqlGtidSet(iv.mysql_mapping(fold.mysql_seen))
        for (uuid, tag), ivs in final.intervals().items():
            for (a1, b1), (a2, b2) in zip(ivs, ivs[1:]):
                hole = f"{uuid}:{tag + ':' if tag else ''}{b1 + 1}" + (f"-{a2 - 1}" if a2 - 1 > b1 + 1 else "")
                out.append(Finding("gtid_gap", "error", None, None, f"{hole} missing", [hole], series=name,
                                   place=f"{os.path.basename(name)} (the series' GTID set)"))
        covered, intervals = str(final), sum(len(ivs) for ivs in final.intervals().values())
    elif fold.any_maria:
        covered, intervals = str(GtidPos(MariadbGtid.parse(g) for g, _n in fold.last.values())), len(fold.last)
    return out, covered, intervals


def _resolve(s: dict, fold: _Fold) -> list[dict]:
    """A file's order findings from its summary, when its GTIDs do not reach back into the
    series' state: its first GTID of a domain may open a gap after the state's highest; a GTID
    out of order inside the file is a duplicate when an earlier file had it."""
    out = []
    maria = s["maria"]
    if maria:
        for d, (g, off, src, seq) in maria["first"].items():
            p = fold.last.get(int(d))
            if p is not None and seq > p[1] + 1:
                out.append({"kind": "gtid_gap", "gtid": g, "prev": p[0], "offset": off, "source": src})
    for a in s["gtid_anomalies"]:
        if a["kind"] == "out_of_order_gtid":
            key, n = iv.split_gtid(a["gtid"])
            if iv.contains(fold.maria_seen, key, n):
                a = dict(a, kind="duplicate_gtid", prev=None)
        out.append(a)
    out.sort(key=lambda a: a["offset"])
    return out


# --- all directories -------------------------------------------------------------------------------

class Results:
    """The result document, built directory by directory. Without limits it keeps every
    finding and series' record; with ``limit`` / ``max_series`` it keeps only the first ones in
    report order (at most twice as many at any time), so its memory is bounded by the limits
    whatever the number of directories, series or findings."""

    def __init__(self, *, limit: int | None = None, max_series: int | None = None) -> None:
        self.limit, self.max_series = limit, max_series
        self.findings: list[tuple[tuple, dict]] = []
        self.series: dict[str, dict] = {}
        self.counts = {"error": 0, "warning": 0, "info": 0}
        self.n_findings = self.n_series = 0

    def add(self, found: list[dict], summary: dict[str, dict]) -> None:
        """One directory's ``merge_directory`` output."""
        for f in found:
            self.counts[f["severity"]] += 1
            self.findings.append((sort_key(f, self.n_findings), f))
            self.n_findings += 1
        if self.limit is not None and len(self.findings) > 2 * self.limit:
            self.findings.sort(key=lambda kf: kf[0])
            del self.findings[self.limit:]
        self.series.update(summary)
        self.n_series += len(summary)
        if self.max_series is not None and len(self.series) > 2 * self.max_series:
            self.series = {n: self.series[n] for n in sorted(self.series)[: self.max_series]}

    def result(self, *, files: int, bytes_: int) -> dict:
        self.findings.sort(key=lambda kf: kf[0])
        findings = [f for _k, f in self.findings[: self.limit]]
        names = sorted(self.series)[: self.max_series]
        return {"findings": findings, "summary": {n: self.series[n] for n in names}, "counts": self.counts,
                "files": files, "bytes": bytes_, "findings_omitted": self.n_findings - len(findings),
                "series": self.n_series, "series_omitted": self.n_series - len(names)}


def combine(parts: Iterable[tuple[list[dict], dict[str, dict]]], *, files: int, bytes_: int,
            limit: int | None = None, max_series: int | None = None) -> dict:
    """The result document from the directories' (findings, summary) pairs: every finding in
    report order (the first ``limit``; ``findings_omitted`` counts the rest), the per-series
    records by name (the first ``max_series``; ``series`` counts them all, ``series_omitted``
    the rest), counts by severity, files and bytes."""
    acc = Results(limit=limit, max_series=max_series)
    for found, summ in parts:
        acc.add(found, summ)
    return acc.result(files=files, bytes_=bytes_)


def limit(result: dict, *, max_findings: int | None = None, max_series: int | None = None) -> dict:
    """The result document with only the first ``max_findings`` findings / ``max_series``
    series' records (None: all), the omitted ones counted — what ``combine`` gives with the same
    limits."""
    out = dict(result)
    if max_findings is not None and len(out["findings"]) > max_findings:
        out["findings_omitted"] += len(out["findings"]) - max_findings
        out["findings"] = out["findings"][:max_findings]
    if max_series is not None and len(out["summary"]) > max_series:
        out["series_omitted"] += len(out["summary"]) - max_series
        out["summary"] = dict(list(out["summary"].items())[:max_series])
    return out


def merge(summaries: list[dict], *, live: bool = False,
          rescan: Callable[[list[tuple[str, dict]]], Iterable[dict]] | None = None,
          max_findings: int | None = None, max_series: int | None = None) -> dict:
    """Findings and per-series summaries of an archive from its files' summaries. ``rescan``
    scans files again with contexts (default: one after the other, in this process);
    ``max_findings`` / ``max_series`` as ``combine``'s ``limit`` / ``max_series``."""
    if rescan is None:
        from .summary import file_summary

        def rescan(items: list[tuple[str, dict]]) -> Iterable[dict]:
            return [file_summary(p, c) for p, c in items]
    parts = []
    for _d, group in by_directory(summaries).items():
        wanted = plan_directory(group)
        again = {r["file"]: r for r in rescan(sorted(wanted.items()))} if wanted else {}
        parts.append(merge_directory(group, again, live=live))
    return combine(parts, files=len(summaries), bytes_=sum(s["size"] for s in summaries),
                   limit=max_findings, max_series=max_series)

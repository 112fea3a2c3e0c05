"""The merge: order the per-file manifests into series and derive the findings.

A **series** is the files ``dir/base.NNNNNN`` of one directory and base name: one server's
binlogs, or one replica connection's relay logs. Findings are fail-closed: whatever cannot be
vouched for is reported.

Kinds: missing_file, rotate_mismatch, position_gap, gtid_gap, duplicate_gtid,
out_of_order_gtid, incident, partial_transaction, torn_event, checksum_mismatch, encrypted (no
key: an error), unsupported, unreadable, unknown_event.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field

from ..gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet

INCIDENT_NAMES = {1: "LOST_EVENTS", 2: "NEW_INCIDENT"}


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

    def to_json(self) -> dict:
        return asdict(self)


def _src(t: dict) -> dict | None:
    """Source coordinates of a transaction, as far as its file says them: a relay file whose
    source Rotate was purged gives the position (end_log_pos) but no source file name."""
    if t.get("source_start") is not None:
        return {"file": t.get("source_file"), "position": t["source_start"]}
    return None


def _series_name(m: dict) -> str:
    return f"{m['directory']}/{m['base']}"


def merge(manifests: list[dict]) -> dict:
    """Findings and a per-series summary from the manifests of every file of an archive."""
    findings: list[Finding] = []
    series: dict[str, list[dict]] = defaultdict(list)
    for m in manifests:
        series[_series_name(m)].append(m)
    summary = {}
    relay_gtids: dict[str, dict[str, tuple[str, int, str]]] = defaultdict(dict)  # directory -> gtid -> (file, offset, series)
    for name, files in sorted(series.items()):
        files.sort(key=lambda m: m["number"])
        findings += _files_and_chain(name, files)
        gfind, covered = _gtids(name, files)
        findings += gfind
        summary[name] = {
            "files": len(files), "bytes": sum(m["size"] for m in files), "events": sum(m["events"] for m in files),
            "first_timestamp": min((m["first_timestamp"] for m in files if m["first_timestamp"]), default=None),
            "last_timestamp": max((m["last_timestamp"] for m in files if m["last_timestamp"]), default=None),
            "relay": any(m["relay"] for m in files), "gtids_covered": covered,
            "first_file": files[0]["file"], "last_file": files[-1]["file"],
        }
        if summary[name]["relay"]:
            for m in files:
                for t in m["transactions"]:
                    if t["gtid"] and t["complete"]:
                        relay_gtids[m["directory"]].setdefault(t["gtid"], (m["file"], t["offset"], name))
    # the same GTID received over several connections of one replica
    for name, files in sorted(series.items()):
        if not summary[name]["relay"]:
            continue
        directory = files[0]["directory"]
        for m in files:
            for t in m["transactions"]:
                first = relay_gtids[directory].get(t["gtid"]) if t["gtid"] else None
                if first and first[2] != name:
                    findings.append(Finding(
                        "duplicate_gtid", "warning", m["file"], t["offset"],
                        f"{t['gtid']} was also received over {first[2]} ({first[0]}@{first[1]}); without "
                        "gtid_ignore_duplicates this copy would be applied a second time", [t["gtid"]],
                        source=_src(t), series=name))
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], f.series or "", f.file or "", f.offset or 0))
    counts: dict[str, int] = defaultdict(int)
    for f in findings:
        counts[f.severity] += 1
    return {"findings": [f.to_json() for f in findings], "summary": summary,
            "counts": {"error": counts["error"], "warning": counts["warning"], "info": counts["info"]},
            "files": len(manifests), "bytes": sum(m["size"] for m in manifests)}


def _files_and_chain(name: str, files: list[dict]) -> list[Finding]:
    out: list[Finding] = []
    numbers = [m["number"] for m in files]
    present = set(numbers)
    for a, b in zip(numbers, numbers[1:]):
        for missing in range(a + 1, b):
            out.append(Finding("missing_file", "error", None, None,
                               f"{name}.{missing:06d} is missing between {a:06d} and {b:06d}", series=name))
    for i, m in enumerate(files):
        last_of_series = i == len(files) - 1
        p = m["problem"]
        if p:
            kind = p["kind"]
            if kind == "TruncatedEventError":
                sev = "warning" if last_of_series else "error"
                out.append(Finding("torn_event", sev, m["file"], p["offset"],
                                   p["message"] + ("" if sev == "error" else " (the tail of the last file: in flight?)"),
                                   series=name))
            elif kind == "KeyRequiredError":  # fail closed: what cannot be read was not checked
                out.append(Finding("encrypted", "error", m["file"], p["offset"],
                                   p["message"] + "; the file was not checked", series=name))
            elif kind == "UnsupportedFormatError":
                out.append(Finding("unsupported", "warning", m["file"], p["offset"], p["message"], series=name))
            else:
                out.append(Finding("unreadable", "error", m["file"], p["offset"], f"{kind}: {p['message']}", series=name))
        for off in m["bad_checksums"]:
            out.append(Finding("checksum_mismatch", "error", m["file"], off, "CRC32 does not match", series=name))
        for inc in m["incidents"]:
            nm = INCIDENT_NAMES.get(inc["code"], str(inc["code"]))
            out.append(Finding("incident", "error", m["file"], inc["offset"],
                               f"The incident {nm} occured on the master. Message: {inc['message']}", series=name))
        for u in m["unknown_events"]:
            out.append(Finding("unknown_event", "warning", m["file"], u["offset"],
                               f"event type {u['type_code']} is unknown and not ignorable", series=name))
        for b in m["position_breaks"]:
            out.append(Finding("position_gap", "error", m["file"], b["offset"],
                               f"end_log_pos {b['log_pos']} where the event ends at {b['expected']}", series=name))
        # the Rotate that ends a binlog must name the next file
        own = [r for r in m["rotates"] if not m["relay"] or r["relay"]]
        if own and not (m["relay"] and not own[-1]["relay"]):
            r = own[-1]
            tnum = _number(r["target"])
            if tnum is not None and not last_of_series and tnum != numbers[i + 1]:
                out.append(Finding("rotate_mismatch", "error", m["file"], r["offset"],
                                   f"rotates to {r['target']} but the next file is number {numbers[i + 1]:06d}",
                                   series=name))
            elif tnum is not None and last_of_series and tnum not in present:
                out.append(Finding("missing_file", "warning", m["file"], r["offset"],
                                   f"the last file rotates to {r['target']}, which the archive does not have",
                                   series=name))
        # transactions cut between files
        if m["open_at_end"]:
            nxt = files[i + 1] if not last_of_series else None
            open_trx = m["transactions"][-1] if m["transactions"] else {"gtid": None, "offset": None}
            if nxt is None:
                out.append(Finding("partial_transaction", "warning", m["file"], open_trx["offset"],
                                   "begun at the tail of the archive, not finished (in flight)",
                                   [open_trx["gtid"]] if open_trx["gtid"] else [], source=_src(open_trx),
                                   series=name))
            elif not nxt["starts_inside_transaction"]:
                out.append(Finding("partial_transaction", "error", m["file"], open_trx["offset"],
                                   "begun but never finished: the next file does not continue it (lost data)",
                                   [open_trx["gtid"]] if open_trx["gtid"] else [], source=_src(open_trx),
                                   series=name))
        for t in m["transactions"][:-1] if m["open_at_end"] else m["transactions"]:
            if not t["complete"]:  # interrupted inside the file by the next transaction
                out.append(Finding("partial_transaction", "error", m["file"], t["offset"],
                                   "begun but interrupted by the next transaction (lost data)",
                                   [t["gtid"]] if t["gtid"] else [], source=_src(t), series=name))
    return out


def _number(name: str) -> int | None:
    tail = name.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _gtids(name: str, files: list[dict]) -> tuple[list[Finding], str | None]:
    out: list[Finding] = []
    first = files[0]
    mysql_seen = MysqlGtidSet.from_previous_gtids(first["previous_gtids"] or []) if first["previous_gtids"] else MysqlGtidSet()
    mysql_added: list[MysqlGtid] = []
    maria_last: dict[int, MariadbGtid] = {g.domain_id: g for g in GtidPos.from_gtid_list(first["gtid_list"] or [])}
    maria_seen: set[MariadbGtid] = set()
    any_maria = bool(first["gtid_list"])
    for m in files:
        for t in m["transactions"]:
            g = t["gtid"]
            if not g:
                continue
            if t["kind"] == "mariadb":
                any_maria = True
                x = MariadbGtid.parse(g)
                prev = maria_last.get(x.domain_id)
                if x in maria_seen:
                    out.append(Finding("duplicate_gtid", "error", m["file"], t["offset"],
                                       f"{g} appears again in the stream", [g], source=_src(t), series=name))
                elif prev is not None and x.seq_no <= prev.seq_no:
                    out.append(Finding("out_of_order_gtid", "error", m["file"], t["offset"],
                                       f"{g} comes after {prev} in domain {x.domain_id}", [g, str(prev)],
                                       source=_src(t), series=name))
                elif prev is not None and x.seq_no > prev.seq_no + 1:
                    out.append(Finding("gtid_gap", "error", m["file"], t["offset"],
                                       f"domain {x.domain_id}: seq_no {prev.seq_no + 1}..{x.seq_no - 1} missing "
                                       f"between {prev} and {g}", [str(prev), g], source=_src(t), series=name))
                maria_seen.add(x)
                if prev is None or x.seq_no > prev.seq_no:
                    maria_last[x.domain_id] = x
            elif t["kind"] == "mysql":
                y = MysqlGtid.parse(g)
                if y in mysql_seen:
                    out.append(Finding("duplicate_gtid", "error", m["file"], t["offset"],
                                       f"{g} appears again in the stream", [g], series=name))
                mysql_seen = mysql_seen.add(y)
                mysql_added.append(y)
    covered = None
    if mysql_seen:
        for (uuid, tag), ivs in mysql_seen.intervals().items():
            for (a1, b1), (a2, b2) in zip(ivs, ivs[1:]):
                hole = f"{uuid}:{tag + ':' if tag else ''}{b1 + 1}" + (f"-{a2 - 1}" if a2 - 1 > b1 + 1 else "")
                out.append(Finding("gtid_gap", "error", None, None, f"{hole} missing", [hole], series=name))
        covered = str(mysql_seen)
    elif any_maria:
        covered = str(GtidPos(maria_last.values()))
    return out, covered

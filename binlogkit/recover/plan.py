"""Scan a stopped replica's relay directory and plan its repair. Pure: reads, never writes.

What is found: torn events, checksum failures, a dangling final Rotate (naming a relay file
that does not exist), files missing from or extra to the index, stray ``*.~rec~`` files, the
last complete event and the last complete transaction — in relay and in **source** coordinates
(source file from the Rotate events, position from end_log_pos; master.info's position is never
trusted, it can lag) — and the SQL thread's position from relay-log.info.

The cut:

* position mode keeps every complete event and cuts the torn tail; the next source position is
  the end of the last complete source event;
* GTID mode cuts back to the start of the first incomplete transaction; the retrieved GTIDs are
  those of complete transactions only (the defect of MySQL bug #69943: a partially received
  transaction counted as retrieved is skipped after a restart);
* a corrupt event in the middle is cut with everything after it (later files are moved aside)
  and re-fetched — refused when the SQL thread already applied past it;
* when relay-log.info says the SQL thread is past what the relay log still holds, the next
  source position is the SQL thread's and relay-log.info is pointed at the end of what is kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import cast

from ..constants import BINLOG_MAGIC
from ..errors import (BadMagicError, BinlogError, ChecksumError, DecryptionError, KeyFileError, KeyRequiredError,
                      TruncatedEventError)
from ..reading.names import COMPRESSED_SUFFIXES as COMPRESSED
from ..flavor import Flavor, replica_metadata_may_be_tables
from ..positions import WRAP, reachable_by_dump
from ..transactions import Grouper, Transaction, gtid_values
from ..reading.source import Input, as_input, stored_offset
from .info import MasterInfo, RelayLogInfo, read_info

_NUM = re.compile(r"\.(\d+)$")

#: the journal an apply leaves in the folder it changes until it has finished
JOURNAL = ".binlogkit-recover.journal"


@dataclass
class Plan:
    relay_dir: str
    connection: str | None
    mode: str                                   # "position" or "gtid"
    flavor: str | None
    relay_index: str
    next_source: dict | None = None             # {"file", "position"}
    retrieved_gtids: str | None = None
    last_complete_gtid: str | None = None
    last_complete_event: dict | None = None
    partial_transaction: dict | None = None
    problem: dict | None = None                 # the torn / corrupt event met, if any
    truncate: list[dict] = field(default_factory=list)   # {file, size, new_size, reason}
    remove: list[dict] = field(default_factory=list)     # {file, reason}
    index: list[str] | None = None              # the index lines to write, when it changes
    master_info: dict | None = None             # {"file", "position"} to write, when it changes
    relay_log_info: dict | None = None          # values to write, when they change
    change_source_sql: str | None = None        # a file/position statement (no master.info, not MySQL)
    metadata: str = "files"                     # "tables": MySQL 8.0.23+ keeps them in mysql.slave_*_info
    mysql: dict | None = None                   # metadata in tables: MySQL's answer per mode (mysql_answer)
    warnings: list[str] = field(default_factory=list)
    refuse: str | None = None
    resume: dict | None = None                  # the journal of an interrupted apply, when finishing it
    # the next source position is past 4 GiB and the replica is in file/position mode: the dump
    # request cannot ask for it (binlogkit.positions); the CLI exits 1 while this stands
    position_unreachable: bool = False

    @property
    def nothing_to_do(self) -> bool:
        return not (self.truncate or self.remove or self.index is not None or self.master_info
                    or self.relay_log_info or self.resume)

    def to_json(self) -> dict:
        d = asdict(self)
        if self.resume is not None:  # the journal carries checksums and file contents: say less
            d["resume"] = {k: self.resume[k] for k in ("backup", "started", "done")}
        d["nothing_to_do"] = self.nothing_to_do
        return d

    @classmethod
    def from_json(cls, doc: dict) -> "Plan":
        import copy

        names = set(cls.__dataclass_fields__)
        return cls(**{k: copy.deepcopy(v) for k, v in doc.items() if k in names and k != "resume"})


def pending_journal(directory: str | os.PathLike) -> Plan | None:
    """The plan of an apply that was interrupted in ``directory`` (its journal is still there),
    to be finished before anything else; None when there is none."""
    import json

    import stat as stat_

    path = Path(directory) / JOURNAL
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    # binlogkit writes its journal as a regular file owned by the user who ran it: anything else
    # (a link, a file another user planted) is not trusted to say what to cut
    if not stat_.S_ISREG(st.st_mode) or st.st_uid not in (os.geteuid(), 0):
        raise BinlogError(f"{JOURNAL} is not a journal binlogkit wrote (a link, or owned by uid {st.st_uid}): "
                          "not trusted; remove it if no binlogkit run was interrupted here", file=str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(16 << 20)
    except OSError as exc:
        raise BinlogError(f"cannot read the journal of an interrupted run: {exc.strerror}", file=str(path)) from None
    try:
        journal = json.loads(raw)
        plan = Plan.from_json(journal["plan"])
        journal["backup"], journal["files"], journal["contents"], journal["done"]  # noqa: B018 (shape check)
        names = ([t["file"] for t in plan.truncate] + [r["file"] for r in plan.remove] + list(journal["files"])
                 + list(journal["contents"]) + [plan.relay_index])
        bad = [n for n in names if not isinstance(n, str) or "/" in n or n in ("", ".", "..") or "\0" in n]
        if bad:
            raise ValueError(f"file names that are not plain names: {bad[:3]}")
    except (ValueError, KeyError, TypeError) as exc:
        raise BinlogError(f"the journal of an interrupted run is unreadable ({exc}); the backup it names "
                          "holds the originals: restore them by hand and remove the journal", file=str(path)) from None
    plan.resume = journal
    plan.relay_dir = str(directory)
    plan.warnings.insert(0, f"an earlier apply was interrupted (started {journal.get('started')}, done: "
                            f"{'; '.join(journal['done']) or 'nothing yet'}); this finishes it, the originals "
                            f"are in {journal['backup']}")
    return plan


def relay_paths(connection: str | None, base: str | None, relay_dir: Path) -> tuple[Path, Path, Path]:
    """(relay index, master.info, relay-log.info) for the default or a named connection."""
    suffix = f"-{connection}" if connection else ""
    mi = relay_dir / f"master{suffix}.info"
    ri = relay_dir / f"relay-log{suffix}.info"
    if base:
        return relay_dir / f"{base}.index", mi, ri
    cands = sorted(p for p in relay_dir.glob("*.index") if "relay" in p.name)
    if connection:
        cands = [p for p in cands if p.name.endswith(f"-{connection}.index")]
    else:
        conns = _connections(relay_dir)
        cands = [p for p in cands if not any(p.name.endswith(f"-{c}.index") for c in conns)]
    if not cands and not connection:  # only the crash-safe copy of the index (see plan_recovery)
        cands = [p.with_name(p.name[: -len("_crash_safe")]) for p in relay_dir.glob("*.index_crash_safe")
                 if "relay" in p.name]
    if not cands and not base:
        binlog_index = sorted(p.name for p in relay_dir.glob("*.index") if "relay" not in p.name)
        if binlog_index:
            raise BinlogError(f"{relay_dir} is a binlog folder ({', '.join(binlog_index)}), not a replica's relay "
                              "directory: for a crashed former primary's binlogs pass --former-primary (or "
                              "--binlog); for relay logs named otherwise, --relay-index BASE", file=str(relay_dir))
    if len(cands) != 1:
        raise BinlogError(f"cannot tell which relay-log index to use in {relay_dir} "
                          f"(found {[p.name for p in cands] or 'none'}); pass --relay-index", file=str(relay_dir))
    return cands[0], mi, ri


def _connections(relay_dir: Path) -> list[str]:
    p = relay_dir / "multi-master.info"
    if not p.exists():
        return []
    return [line.strip() for line in p.read_text(errors="replace").splitlines() if line.strip()]


def _key(name: str) -> int:
    m = _NUM.search(name)
    return int(m.group(1)) if m else -1


def _later(a: tuple[str, int], b: tuple[str, int]) -> bool:
    """Whether source coordinate a is after b (binlog files compare by their number)."""
    return (_key(a[0]), a[1]) > (_key(b[0]), b[1])


def plan_recovery(relay_dir: Input | str | os.PathLike, *, connection: str | None = None, mode: str | None = None,
                  relay_base: str | None = None, verify: bool = True, applied_gtids: str | None = None,
                  replica_binlog: Input | str | os.PathLike | None = None) -> Plan:
    """Read the relay directory and return what ``apply_plan`` would do. Never writes.

    ``applied_gtids`` (what the replica committed: MariaDB gtid_slave_pos, MySQL
    gtid_executed) or the replica's own binlog (``replica_binlog``: an index file; found in the
    directory by default when the replica logs its updates) let the plan move relay-log.info
    past transactions the SQL thread committed but did not record there before the crash —
    relay-log.info is rewritten after the commit, not with it, so a crash between the two
    would apply such a transaction twice.

    When an earlier ``apply_plan`` in this directory was interrupted, its journal is the plan.
    Encrypted relay logs are read with the keys of ``relay_dir`` given as an ``Input`` (``Input(dir,
    keys)``); cuts stay at event boundaries, which the encryption leaves in clear, so the server
    still reads what is kept."""
    src = as_input(relay_dir, verify=verify)  # the folder: its keys read every log in it
    pending = pending_journal(src.path)
    if pending is not None:
        return pending
    d = Path(src.path)
    index_path, mi_path, ri_path = relay_paths(connection, relay_base, d)
    base = index_path.name[: -len(".index")]
    # MySQL updates its index through <index>_crash_safe: new list written there, old index deleted,
    # then renamed into place; a kill between the last two leaves only the new list, which MySQL
    # itself renames to the index at startup (found by make soak KIND=mysql-9.7)
    safe = index_path.with_name(index_path.name + "_crash_safe")
    read_from = safe if not index_path.exists() and safe.is_file() else index_path
    index_lines = [l for l in read_from.read_text(errors="surrogateescape").splitlines() if l.strip()]
    listed = [Path(l.strip()).name for l in index_lines]
    prefix = {Path(l.strip()).name: l.strip()[: -len(Path(l.strip()).name)] for l in index_lines}
    on_disk = sorted((p.name for p in d.glob(f"{base}.[0-9]*") if p.is_file() and p.suffix not in COMPRESSED),
                     key=_key)
    mi = MasterInfo(read_info(mi_path, kind="master")) if mi_path.exists() else None
    ri = RelayLogInfo(read_info(ri_path, kind="relay")) if ri_path.exists() else None
    plan = Plan(str(d), connection, "position", None, index_path.name)
    if read_from is safe:
        plan.warnings.append(f"{index_path.name} is missing: read {safe.name}, the list MySQL was moving into "
                             f"place when it died (it renames it to {index_path.name} at startup)")
    _choose_mode(plan, mode, mi)
    _stale_bytes(plan, mi, ri)

    # relay logs stored compressed cannot be cut where the server reads them; a compressed copy
    # beside its plain file (what xz -dk leaves) is not what the server reads: left alone
    squeezed = sorted(p.name for p in d.glob(f"{base}.[0-9]*") if p.suffix in COMPRESSED)
    twins = [n for n in squeezed if (d / Path(n).stem).is_file()]
    squeezed = [n for n in squeezed if n not in twins]
    if squeezed:
        plan.refuse = (f"relay logs stored compressed ({', '.join(squeezed[:3])}{'...' if len(squeezed) > 3 else ''}): "
                       "recover repairs the files the server reads; decompress them in place first "
                       "(e.g. xz -d, or xz -dk: a compressed copy beside its plain file is left alone), "
                       "or read them with decode / transactions / audit")
        return plan
    if twins:
        plan.warnings.append(f"{', '.join(twins[:3])}{'...' if len(twins) > 3 else ''}: compressed "
                             f"cop{'ies' if len(twins) > 1 else 'y'} of the plain relay logs beside them, which "
                             "are read and repaired; left alone (not repaired: remove them once the replica runs)")
    present, missing = _files(plan, d, listed, on_disk)

    # the walk
    g = Grouper(relay=True, source_file=ri.master_file if ri else None)
    trx: list[Transaction] = []
    err: BinlogError | None = None
    for name in present:
        try:
            for t in g.feed(src.with_options(path=str(d / name))):
                trx.append(t)
        except BinlogError as exc:
            err = exc.with_context(file=str(d / name))
            break
    trx.extend(g.finish())
    _name_repeats(plan, trx)
    if g.files and g.fmt is not None:
        plan.flavor = g.fmt.flavor.value

    # where to cut and where the source resumes
    cut: tuple[str, int] | None = None
    if err is not None:
        plan.refuse = _refusal(err)
        if plan.refuse is not None:
            return plan
        plan.problem = _problem(err)
        cut = (plan.problem["file"], plan.problem["offset"])
    complete = [t for t in trx if t.complete]
    partial = [t for t in trx if not t.complete]
    _last_transactions(plan, complete, partial)
    tables = _metadata_in_tables(plan, mode, mi, ri)
    unplaced = _no_source_end(plan, g.last_event, partial)
    if (plan.mode == "gtid" or tables or unplaced) and partial:
        cut = _back_to_partial(plan, present, cut, partial[-1], complete)
    elif g.last_event is not None:
        _after_last_event(plan, g.last_event)
    if cut is None:
        cut = _dangling_rotate(plan, d, g)
    # retrieved GTIDs: complete transactions only
    plan.retrieved_gtids = _retrieved(g, complete)

    keep = _cut(plan, d, present, cut, tables or unplaced)
    if keep != listed or missing:
        plan.index = [_index_line(prefix, n) for n in keep]
        if plan.index == index_lines:
            plan.index = None
    if ri is not None:
        _sql_thread(plan, ri, d, keep, cut, prefix)
        # relay-log.info lagging the commits
        if ri.relay_file in present and ri.relay_pos is not None:
            applied = _applied(src, index_path.name, applied_gtids, replica_binlog)
            if applied is not None:
                _past_the_commits(plan, ri.relay_file, ri.relay_pos, present, trx, applied, prefix)
    _past_4gib(plan)
    _source_coordinates(plan, mi, tables, connection)
    if tables:
        plan.mysql = mysql_answer(plan, trx, _applied(src, index_path.name, applied_gtids, replica_binlog))
    return plan


# --- the steps of plan_recovery: each reads the plan so far and sets its own part of it -------

def _index_line(prefix: dict[str, str], name: str) -> str:
    """A relay log's line in the index, with the folder prefix the index gave it (``./`` if none)."""
    return prefix.get(name, "./") + name


def _relay_log_info(prefix: dict[str, str], name: str, pos: int, source_file, source_pos) -> dict:
    return {"relay_log_file": _index_line(prefix, name), "relay_log_pos": pos, "master_log_file": source_file,
            "master_log_pos": source_pos}


def _choose_mode(plan: Plan, mode: str | None, mi: MasterInfo | None) -> None:
    """The mode asked for, else master.info's (MariaDB's Using_Gtid; MySQL 5.6/5.7's Auto_position)."""
    if mode:
        plan.mode = mode
    elif mi is not None and mi.info.extra:
        plan.mode = "gtid" if mi.using_gtid else "position"
    elif mi is not None and mi.info.field(23) == "1":  # MySQL 5.6/5.7: Auto_position
        plan.mode = "gtid"


def _stale_bytes(plan: Plan, mi: MasterInfo | None, ri: RelayLogInfo | None) -> None:
    for name, info in (("master.info", mi), ("relay-log.info", ri)):
        if info is not None and info.info.stale_bytes:
            plan.warnings.append(f"{name} has {info.info.stale_bytes} stale bytes after its last line (ignored)")


def _files(plan: Plan, d: Path, listed: list[str], on_disk: list[str]) -> tuple[list[str], list[str]]:
    """(the index's files on disk, those missing); files not in the index and leftovers of an
    interrupted index update go, or are warned about."""
    present = [n for n in listed if (d / n).exists()]
    missing = [n for n in listed if n not in present]
    for n in missing:
        plan.warnings.append(f"{n} is in the index but not on disk: dropped from the index")
    extra = [n for n in on_disk if n not in listed]
    for n in extra:
        if not listed or _key(n) > _key(listed[-1]):
            plan.remove.append({"file": n, "reason": "relay log not in the index (created by a crash)"})
        else:
            plan.warnings.append(f"{n} is on disk but not in the index: left alone")
    for leftover in sorted(d.glob("*.~rec~")):
        plan.remove.append({"file": leftover.name, "reason": "leftover of an interrupted index update"})
    return present, missing


def _refusal(err: BinlogError) -> str | None:
    """Why the walk's error forbids a cut; None: the cut goes at its offset."""
    if unreadable_encrypted(err):
        return encrypted_refusal(err)
    err_file = Path(err.file or "").name  # the walk names the file
    if _not_a_binlog(err):
        return (f"{err_file} is not a binlog or relay log (it does not start with the binlog "
                "magic): refusing to plan a cut; move it out of the folder if it does not belong there")
    if err.offset is None:  # every error of the walk carries one; never cut blind
        return f"{err_file}: {err.message} (no offset to cut at): refusing to plan a cut"
    return None


def _problem(err: BinlogError) -> dict:
    """The torn / corrupt event the walk met, as the plan reports it."""
    kind = "torn" if isinstance(err, TruncatedEventError) else (
        "checksum" if isinstance(err, ChecksumError) else "corrupt")
    return {"file": Path(err.file or "").name, "offset": err.offset, "kind": kind, "message": err.message,
            "event_type": err.event_type}


def _last_transactions(plan: Plan, complete: list[Transaction], partial: list[Transaction]) -> None:
    if partial:
        p = partial[-1]
        plan.partial_transaction = {"gtid": p.gtid, "file": Path(p.start_file).name, "offset": p.start_offset,
                                    "source_file": p.source_file, "source_start": p.source_start}
    if complete:
        plan.last_complete_gtid = complete[-1].gtid


def _metadata_in_tables(plan: Plan, mode: str | None, mi: MasterInfo | None, ri: RelayLogInfo | None) -> bool:
    """MySQL 8.0.23+ keeps the connection and applier metadata in tables, not files: nothing here
    says the mode, and the cut is the one MySQL's own relay log sanitizer makes at startup
    (back to the start of the partial transaction, in either mode; seen on 9.7.4)."""
    tables = mi is None and ri is None and replica_metadata_may_be_tables(
        Flavor(plan.flavor) if plan.flavor else None)
    if tables:
        plan.metadata = "tables"
        if not mode:
            plan.mode = "unknown"
    return tables


def _no_source_end(plan: Plan, last: dict | None, partial: list[Transaction]) -> bool:
    """Position mode, and the partial transaction's last event carries no source position:
    MariaDB 11.4+ writes end_log_pos 0 inside transactions (binlog_legacy_event_pos=OFF, the
    default), so the source cannot resume after it; the cut goes back to the transaction's
    start, whose GTID event has its position, as in GTID mode."""
    if plan.mode == "gtid" or not partial or last is None or last.get("source_end"):
        return False
    plan.warnings.append("the source wrote no positions inside transactions (end_log_pos 0, MariaDB "
                         "binlog_legacy_event_pos=OFF): the partial transaction is cut and fetched again "
                         "from its start")
    return True


def _back_to_partial(plan: Plan, present: list[str], cut: tuple[str, int] | None, p: Transaction,
                     complete: list[Transaction]) -> tuple[str, int]:
    """GTID mode (or metadata in tables): cut back to the start of the partial transaction ``p``
    (unless damage cuts earlier) and re-fetch it from where it starts at the source."""
    pcut = (Path(p.start_file).name, p.start_offset)
    if cut is None or (present.index(pcut[0]), pcut[1]) < (present.index(cut[0]), cut[1]):
        cut = pcut
    if p.source_file is not None and p.source_start is not None:
        plan.next_source = {"file": p.source_file, "position": p.source_start}
    elif p.resume_source_file is not None:
        plan.next_source = {"file": p.resume_source_file, "position": p.resume_source_pos}
    last_end = complete[-1] if complete and complete[-1].end_file is not None else None
    plan.last_complete_event = {"file": Path(last_end.end_file).name if last_end and last_end.end_file else None,
                                "end": last_end.end_offset if last_end else None,
                                "source_file": plan.next_source and plan.next_source["file"],
                                "source_end": plan.next_source and plan.next_source["position"]}
    return cut


def _after_last_event(plan: Plan, last: dict) -> None:
    """Position mode: every complete event is kept; the source resumes after the last one."""
    plan.next_source = {"file": last["source_file"], "position": last["source_end"]}
    plan.last_complete_event = {"file": Path(last["file"]).name, "end": last["end"],
                                "source_file": last["source_file"], "source_end": last["source_end"]}


def _dangling_rotate(plan: Plan, d: Path, g: Grouper) -> tuple[str, int] | None:
    """A Rotate at the very end naming a file that does not exist: cut it."""
    rr = g.last_relay_rotate
    if rr is not None and g.last_whole == (rr["file"], rr["end"]) and not (d / rr["target"]).exists():
        plan.warnings.append(f"{Path(rr['file']).name} ends with a Rotate to {rr['target']}, which does not exist: cut")
        return (Path(rr["file"]).name, rr["offset"])
    return None


def _cut(plan: Plan, d: Path, present: list[str], cut: tuple[str, int] | None, tables: bool) -> list[str]:
    """The files kept: the cut file truncated at the cut, the later ones removed."""
    if cut is None:
        return present
    cf, co = cut
    i = present.index(cf)
    size = (d / cf).stat().st_size
    new_size = stored_offset(d / cf, co)   # an encrypted MySQL relay log: past its 512-byte header
    if size > new_size:
        plan.truncate.append({"file": cf, "size": size, "new_size": new_size,
                              "reason": (plan.problem or {}).get("kind", "partial transaction")
                              if plan.problem or plan.mode == "gtid" or tables else "dangling Rotate"})
    for n in present[i + 1:]:
        plan.remove.append({"file": n, "reason": f"after the cut in {cf} at {co}"})
    return present[: i + 1]


def _sql_thread(plan: Plan, ri: RelayLogInfo, d: Path, keep: list[str], cut: tuple[str, int] | None,
                prefix: dict[str, str]) -> None:
    """The SQL thread's position: past what the relay log keeps, the source resumes from it
    (refused past a corrupt event) and relay-log.info points at the end of what is kept."""
    if not (plan.next_source and ri.master_file and ri.master_pos is not None):
        return
    sql = (ri.master_file, ri.master_pos)
    nxt = (plan.next_source["file"], plan.next_source["position"])
    cut_file = cut[0] if cut else (keep[-1] if keep else None)
    cut_off = cut[1] if cut else ((d / keep[-1]).stat().st_size if keep else 4)
    beyond_relay = ri.relay_file not in keep or (
        ri.relay_file == cut_file and ri.relay_pos is not None and ri.relay_pos > cut_off)
    if nxt[0] and _later(sql, nxt):
        if plan.problem and plan.problem["kind"] != "torn":
            plan.refuse = (f"the SQL thread already applied up to {sql[0]}:{sql[1]}, past the corrupt event "
                           f"at {plan.problem['file']}:{plan.problem['offset']} (source {nxt[0]}:{nxt[1]}); "
                           "the relay log cannot be repaired without losing what it applied")
        plan.warnings.append(f"the SQL thread is at {sql[0]}:{sql[1]}, past what the relay log keeps "
                             f"({nxt[0]}:{nxt[1]}): resuming from the SQL thread's position")
        plan.next_source = {"file": sql[0], "position": sql[1]}
        beyond_relay = True
    if beyond_relay and keep:
        plan.relay_log_info = _relay_log_info(prefix, cut_file or keep[-1], cut_off, plan.next_source["file"],
                                              plan.next_source["position"])


def _past_the_commits(plan: Plan, relay_file: str, relay_pos: int, present: list[str], trx: list[Transaction],
                      applied, prefix: dict[str, str]) -> None:
    """relay-log.info lagging the commits: moved past the transactions after it that the replica
    already committed (``applied(gtid)``)."""
    order = {n: i for i, n in enumerate(present)}
    here = (order[relay_file], relay_pos)
    moved, moved_end = None, ("", 0)
    for t in trx:
        start = (order.get(Path(t.start_file).name, -1), t.start_offset)
        if start < here:
            continue
        if not (t.complete and t.gtid and applied(t.gtid)) or t.end_file is None or t.end_offset is None:
            break
        moved, moved_end = t, (Path(t.end_file).name, t.end_offset)
        here = (order[moved_end[0]], moved_end[1])
    if moved is not None:
        plan.relay_log_info = _relay_log_info(prefix, moved_end[0], moved_end[1], moved.source_file, moved.source_end)
        plan.warnings.append(f"relay-log.info is behind the commits: the replica already committed "
                             f"up to {moved.gtid}; the SQL thread position is moved past it")


def _past_4gib(plan: Plan) -> None:
    """Past 4 GiB only GTID positioning can resume."""
    ns = plan.next_source
    if not (ns and ns.get("position") and not reachable_by_dump(ns["position"])):
        return
    pos = ns["position"]
    if plan.mode != "gtid":
        plan.position_unreachable = True
        plan.warnings.append(
            f"the next source position {ns['file']}:{pos} is past 4 GiB: a replica in file/position mode "
            f"cannot ask for it (the dump request carries 4 bytes: it would ask for {pos % WRAP}, inside a "
            "transaction). Resume with GTID positioning instead: MariaDB CHANGE MASTER TO "
            "MASTER_USE_GTID=slave_pos, MySQL SOURCE_AUTO_POSITION=1"
            + (f" (the retrieved GTIDs: {plan.retrieved_gtids})" if plan.retrieved_gtids else "")
            + "; the relay logs do not show the source rotating after it, so its next file cannot be assumed")
    else:
        plan.warnings.append(f"the next source position {ns['file']}:{pos} is past 4 GiB: GTID positioning "
                             "resumes there (no file position is asked for)")


def _source_coordinates(plan: Plan, mi: MasterInfo | None, tables: bool, connection: str | None) -> None:
    """master.info: its positions are what position mode resumes from; in GTID mode the server
    resumes from GTIDs and does not keep them current, so they are left alone there. Without
    master.info: a warning, or the CHANGE statement to run."""
    if plan.mode == "position" and plan.next_source and plan.next_source["file"] and mi is not None:
        if (mi.file, mi.position) != (plan.next_source["file"], plan.next_source["position"]):
            plan.master_info = dict(plan.next_source)
    elif mi is None and plan.next_source and not plan.next_source["file"]:
        plan.warnings.append("the source binlog's name is unknown (no master.info, and no Rotate from the source "
                             "in the relay logs): resume with GTID positioning (MariaDB MASTER_USE_GTID=slave_pos, "
                             "MySQL SOURCE_AUTO_POSITION=1)")
    elif mi is None and plan.next_source and not tables:
        plan.change_source_sql = (
            f"CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='{plan.next_source['file']}', "
            f"SOURCE_LOG_POS={plan.next_source['position']}"
            + (f" FOR CHANNEL '{connection}'" if connection else "") + ";")


def mysql_answer(plan: Plan, trx: list[Transaction], applied) -> dict:
    """What to do on a MySQL replica whose metadata is in tables, for each mode.

    Auto-position: nothing to run. At startup MySQL cuts a partial transaction off the relay
    log's end (its relay log sanitizer, relay_log_recovery=OFF) or drops the relay logs
    (relay_log_recovery=ON), leaves that GTID out of Retrieved_Gtid_Set and fetches it whole.
    File/position: relay_log_recovery=ON resumes from the applier's position; OFF, the
    sanitizer moves the receiver to the partial transaction's start; where it does not, the
    exact statement (SOURCE_LOG_FILE/POS are refused while SOURCE_AUTO_POSITION=1, error 1776)
    — with RELAY_LOG_FILE/POS when the relay logs still hold transactions not applied, since a
    CHANGE that names source coordinates alone purges the relay logs."""
    ns = plan.next_source
    p = plan.partial_transaction
    out: dict = {"partial_transaction": p["gtid"] if p else None,
                 "retrieved_gtids": plan.retrieved_gtids,
                 "auto_position": "START REPLICA;",
                 "relay_log_recovery_on": "START REPLICA;"}
    # how far the applier got: the longest prefix of the relay logs' complete transactions that
    # the replica committed (its own binlog, or --applied-gtids), when that is known
    complete = [t for t in trx if t.complete and t.gtid]
    done = None
    if applied is not None:
        done = 0
        for t in complete:
            if not applied(t.gtid):
                break
            done += 1
    out["applied_prefix"] = None if done is None else (complete[done - 1].gtid if done else None)
    stmt = None
    if ns and ns.get("file"):
        stmt = f"CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='{ns['file']}', SOURCE_LOG_POS={ns['position']}"
        if done is None or done < len(complete):
            last = complete[done - 1] if done else None
            if last is not None and last.end_file is not None:
                stmt += f", RELAY_LOG_FILE='{Path(last.end_file).name}', RELAY_LOG_POS={last.end_offset}"
            else:
                stmt += ", RELAY_LOG_FILE='<Relay_Log_File>', RELAY_LOG_POS=<Relay_Log_Pos>"
        stmt += (f" FOR CHANNEL '{plan.connection}'" if plan.connection else "") + ";"
    out["file_position_statement"] = stmt
    out["all_applied"] = done is not None and done == len(complete)
    out["applier_known"] = done is not None
    return out


def _name_repeats(plan: Plan, trx: list[Transaction]) -> None:
    """A warning per source range that the relay logs hold twice (``Transaction.repeats``:
    the source's stream restarted behind what was held). This plan does not cut them out."""
    ranges: list[list] = []  # [source file, start, end, relay file, offset]
    for t in trx:
        r = t.repeats
        if not r:
            continue
        if ranges and ranges[-1][0] == r["source_file"] and ranges[-1][2] == r["start"]:
            ranges[-1][2] = r["end"]
        else:
            ranges.append([r["source_file"], r["start"], r["end"], Path(t.start_file).name, t.start_offset])
    for f, a, b, name, at in ranges:
        plan.warnings.append(
            f"duplicated source range {f}:{a}-{b}: {name} from @{at} holds events the relay logs held already "
            "(the source's stream restarted behind them); the SQL thread would apply them twice, and this plan "
            "does not remove them: start the replica with relay_log_recovery=1 (it fetches again from the SQL "
            "thread's position) instead")


def unreadable_encrypted(err: BinlogError) -> bool:
    """An encrypted file read without its key, or with a wrong one: never a place to cut."""
    return isinstance(err, (KeyRequiredError, DecryptionError, KeyFileError))


def encrypted_refusal(err: BinlogError) -> str:
    return (f"{Path(err.file or '?').name} at {err.offset}: {err.message}: refusing to plan a cut in a file "
            "that cannot be read (give the right --key-file / --keyring-file)")


def _not_a_binlog(err: BinlogError) -> bool:
    """A file that is not a binlog at all (not one torn before its magic was written whole)."""
    if not isinstance(err, BadMagicError) or err.file is None:
        return False
    try:
        with open(err.file, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return not BINLOG_MAGIC.startswith(head)


def _applied(src: Input, relay_index: str, text: str | None, replica_binlog):
    """A predicate telling whether a GTID was committed by the replica, or None if unknown
    (the replica's binlog found in the folder ``src`` is read with its keys)."""
    from ..gtid import MariadbGtid
    from ..gtid.forms import text_form

    if text:
        text = text.strip()
        return text_form(text).holds(text)
    if replica_binlog is None:
        cands = [p for p in Path(src.path).glob("*.index") if "relay" not in p.name and p.name != relay_index]
        if len(cands) != 1:
            return None
        replica_binlog = src.with_options(path=cands[0], verify=True)
    pos, s = held_gtids([src.alongside(replica_binlog)], relay=False)
    held = {Flavor.MYSQL: lambda g: g in s, Flavor.MARIADB: lambda g: pos.covers(MariadbGtid.parse(g))}
    return lambda g: held[text_form(g).flavor](g)


def held_gtids(paths, *, relay: bool):
    """The GTIDs of the complete transactions of ``paths`` (``Input`` values carry their keys):
    a MariaDB position (highest seq_no
    per domain) and a MySQL set. A damaged tail ends the reading; what was read still counts
    (a crashed server's logs may end torn); a file that cannot be decrypted is an error."""
    from ..api import transactions
    from ..gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet

    complete: list[Transaction] = []
    try:
        for t in transactions(paths, relay=relay):
            if t.complete:
                complete.append(t)
    except BinlogError as exc:
        if unreadable_encrypted(exc):
            raise
        pass
    held = gtid_values(complete)
    return (GtidPos.from_gtid_list(cast(list[MariadbGtid], held[Flavor.MARIADB])),
            MysqlGtidSet.of(cast(list[MysqlGtid], held[Flavor.MYSQL])))


def _retrieved(g: Grouper, complete: list[Transaction]) -> str | None:
    from ..gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet

    held = gtid_values(complete)
    mysql = cast(list[MysqlGtid], held[Flavor.MYSQL])
    maria = cast(list[MariadbGtid], held[Flavor.MARIADB])
    if mysql or any(f.previous_gtids is not None for f in g.files):
        prev = next((f.previous_gtids for f in g.files if f.previous_gtids is not None), [])
        return str(MysqlGtidSet.from_previous_gtids(prev) | MysqlGtidSet.of(mysql))
    if maria:
        last: dict[int, MariadbGtid] = {}
        for x in maria:  # the last complete GTID of each domain, in stream order
            last[x.domain_id] = x
        return str(GtidPos(last.values()))
    return None

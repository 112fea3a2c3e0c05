"""Repairing a crashed former primary's binlogs after semisync (seed 002).

With ``rpl_semi_sync_master_wait_point=AFTER_SYNC`` a transaction is written and synced to the
binlog *before* a replica acknowledges it, and committed in the storage engine only after. A
primary killed while waiting leaves such transactions in its binlog, prepared but not committed;
on restart its crash recovery commits every prepared transaction whose Xid it finds in the
binlog — rows no replica ever had (phantoms), and a GTID history the promoted replica lacks.

The plan cuts the last binlog(s) back to what the surviving replica holds (``keep_through``, or
computed from its relay logs), plus any torn tail or partial transaction, and leaves the rest as
the server needs it (the file stays marked in use, so the server still runs its own crash
recovery): on restart the storage engine finds no Xid for the cut transactions and rolls them
back. Same plan / apply / backup rules as the relay-log recovery.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BinlogError
from ..gtid.forms import text_form
from ..gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet
from ..reading.names import COMPRESSED_SUFFIXES as COMPRESSED
from ..reading.source import Input, as_input, stored_offset
from .plan import Plan
from ..transactions import Transaction


def keep_predicate(keep_through: str):
    text = keep_through.strip()
    return text_form(text).holds(text)


def replica_holds(relay_dir: Input | str | os.PathLike) -> str:
    """The GTIDs a replica holds, from its relay logs (complete transactions) — the position
    (MariaDB) or set (MySQL) to keep the primary's binlog through (an ``Input``'s keys read them).
    A folder with a binlog index and no relay log (a ``binlogkit pull`` folder: the acknowledging
    member of a semisync primary) holds what its binlogs contain. MySQL: with the first file's
    Previous_gtids (what was retrieved before it: a replica purges the relay logs it applied)."""
    from .plan import relay_paths, held_gtids

    src = as_input(relay_dir)
    d = Path(src.path)
    binlog_index = sorted(p for p in d.glob("*.index") if "relay" not in p.name)
    if len(binlog_index) == 1 and not any("relay" in p.name for p in d.glob("*.index*")):
        index, relay = binlog_index[0], False
    else:
        index, relay = relay_paths(None, None, d)[0], True
    paths = [src.with_options(path=index)]
    pos, mysql = held_gtids(paths, relay=relay)   # raises when a file cannot be decrypted
    return _with_previous(paths, relay, pos, mysql)


def _with_previous(paths: list[Input], relay: bool, pos: GtidPos, mysql: MysqlGtidSet) -> str:
    """The MySQL set with the first file's Previous_gtids (``gtid_summary``'s ``contained``), or
    the MariaDB position (from the first file's Gtid_list when no transaction follows it)."""
    from ..api import gtid_summary

    s = gtid_summary(paths, relay=relay)
    if "mysql" in s:
        return str(MysqlGtidSet.parse(s["mysql"]["previous_gtids"]) | mysql)
    if pos:
        return str(pos)
    return str(s.get("mariadb", {}).get("position", ""))


def plan_binlog_recovery(binlog_dir: Input | str | os.PathLike, *, keep_through: str | None = None,
                         replica: Input | str | os.PathLike | None = None, index: str | None = None) -> Plan:
    """Plan the cut of a crashed primary's binlog set. Pure: reads only. ``binlog_dir`` (and
    ``replica``) as ``Input`` values carry the keys of encrypted logs."""
    from ..api import transactions
    from .plan import encrypted_refusal, pending_journal, unreadable_encrypted

    src = as_input(binlog_dir)
    pending = pending_journal(src.path)
    if pending is not None:
        return pending
    d = Path(src.path)
    idx = Path(index) if index else None
    if idx is None:
        cands = [p for p in d.glob("*.index") if "relay" not in p.name]
        if len(cands) != 1:
            raise BinlogError(f"cannot tell which binlog index to use in {d}: pass --index", file=str(d))
        idx = cands[0]
    lines = [l.strip() for l in idx.read_text().splitlines() if l.strip()]
    files = [Path(l).name for l in lines]
    plan = Plan(str(d), None, "binlog", None, idx.name)
    absent = [n for n in files if not (d / n).exists()]
    if absent:
        squeezed = [n for n in absent if any((d / (n + sfx)).exists() for sfx in COMPRESSED)]
        if squeezed:
            plan.refuse = (f"binlogs stored compressed ({', '.join(squeezed[:3])}{'...' if len(squeezed) > 3 else ''}"
                           " with a compression suffix): recover repairs the files the server reads; decompress "
                           "them in place first (e.g. xz -d, or xz -dk: a compressed copy beside its plain "
                           "file is left alone)")
        else:
            plan.refuse = (f"{idx.name} lists {', '.join(absent[:3])}{'...' if len(absent) > 3 else ''}, not on disk: "
                           "restore the missing files (or remove them from the index) first")
        return plan
    if replica is not None and keep_through is None:
        keep_through = replica_holds(src.alongside(replica))
        plan.warnings.append(f"the replica holds {keep_through or '(nothing)'}")
    keep = keep_predicate(keep_through) if keep_through else None
    trx: list[Transaction] = []
    err: BinlogError | None = None
    try:
        for t in transactions([src.with_options(path=idx)], relay=False):
            trx.append(t)
    except BinlogError as exc:
        err = exc
    cut: tuple[str, int] | None = None
    if err is not None and unreadable_encrypted(err):
        plan.refuse = encrypted_refusal(err)
        return plan
    if err is not None:
        err_file = Path(err.file or "").name  # the walk names the file
        if err.offset is None:  # every error of the walk carries one; never cut blind
            plan.refuse = f"{err_file}: {err.message} (no offset to cut at): refusing to plan a cut"
            return plan
        plan.problem = {"file": err_file, "offset": err.offset, "kind": type(err).__name__,
                        "message": err.message, "event_type": err.event_type}
        cut = (err_file, err.offset)
    order = {n: i for i, n in enumerate(files)}
    cut_trx: list[dict] = []
    for t in trx:
        unacked = keep is not None and t.gtid is not None and not keep(t.gtid)
        if not t.complete or unacked:
            cut_trx.append({"gtid": t.gtid, "file": Path(t.start_file).name, "offset": t.start_offset,
                            "reason": "partial transaction" if not t.complete else "not held by the replica"})
    if cut_trx:
        first = cut_trx[0]
        c = (first["file"], first["offset"])
        if cut is None or (order[c[0]], c[1]) < (order[cut[0]], cut[1]):
            cut = c
    kept = [t for t in trx if t.complete and t.end_file is not None and t.end_offset is not None and (
        cut is None or (order[Path(t.end_file).name], t.end_offset) <= (order[cut[0]], cut[1]))]
    plan.last_complete_gtid = kept[-1].gtid if kept else None
    plan.partial_transaction = {"cut": cut_trx} if cut_trx else None
    if cut is not None:
        cf, co = cut
        size = (d / cf).stat().st_size
        new_size = stored_offset(d / cf, co)   # an encrypted MySQL binlog: past its 512-byte header
        if size > new_size:
            plan.truncate.append({"file": cf, "size": size, "new_size": new_size,
                                  "reason": ", ".join(sorted({c["reason"] for c in cut_trx} or {"torn tail"}))})
        later = files[order[cf] + 1:]
        for n in later:
            plan.remove.append({"file": n, "reason": f"after the cut in {cf} at {co}"})
        if later:
            prefix = {Path(l).name: l[: -len(Path(l).name)] for l in lines}
            plan.index = [prefix.get(n, "./") + n for n in files[: order[cf] + 1]]
    gt = [t.gtid for t in kept if t.gtid]
    plan.retrieved_gtids = _position(gt)
    return plan


def _position(gtids: list[str]) -> str | None:
    if not gtids:
        return None
    return text_form(gtids[0]).position(gtids)

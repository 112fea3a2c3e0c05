"""recover's plan as text (``binlogkit recover`` without --json)."""

from __future__ import annotations

import os
from typing import Iterator


def mysql_answer(plan) -> Iterator[str]:
    """MySQL 8.0.23+ (metadata in tables): what to run, per mode (recover.plan.mysql_answer)."""
    a = plan.mysql
    gtid = a["partial_transaction"]
    ns = plan.next_source
    # where MySQL's sanitizer cuts, as a relay-log position (an encrypted file's truncate size is
    # past its 512-byte header: stream offsets are what the server names)
    pt = plan.partial_transaction or {}
    cut = f"{pt['file']}:{pt['offset']}" if "offset" in pt and plan.truncate else None
    mode = plan.mode
    if mode in ("gtid", "unknown"):
        yield ("\nMySQL, SOURCE_AUTO_POSITION=1 (relay_log_recovery ON or OFF): run START REPLICA; nothing else.")
        if gtid:
            yield (f"  MySQL drops the partial transaction {gtid} at startup (relay_log_recovery=OFF: its relay log "
                       f"sanitizer cuts {cut or 'the relay log'}, the "
                       "cut planned below; ON: the relay logs are discarded) and fetches it whole by GTID.")
        yield (f"  check after the restart, before START REPLICA: Retrieved_Gtid_Set is {a['retrieved_gtids'] or '-'}"
                   + (f" (without {gtid})" if gtid else "") + "; after it: Executed_Gtid_Set holds "
                   + (f"{gtid} and " if gtid else "") + "the primary's gtid_executed, tables equal.")
        yield ("  not CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE=..., SOURCE_LOG_POS=...: refused while "
                   "SOURCE_AUTO_POSITION=1 (error 1776).")
    if mode in ("position", "unknown"):
        yield ("\nMySQL, SOURCE_AUTO_POSITION=0 (file/position):")
        yield ("  relay_log_recovery=ON: run START REPLICA; MySQL discards the relay logs and fetches from the "
                   "applier's position.")
        where = f"{ns['file']}:{ns['position']}" if ns and ns.get("file") else "the partial transaction's start"
        yield (f"  relay_log_recovery=OFF: MySQL 9.7 cuts the relay log itself and resumes the receiver at {where} "
                   "(Read_Source_Log_Pos after the restart): START REPLICA.")
        if a["file_position_statement"]:
            why = (f"the replica committed every complete transaction of the relay logs (up to {a['applied_prefix']}): "
                   "purging them loses nothing" if a["all_applied"] else
                   "the relay logs hold transactions not applied yet: RELAY_LOG_FILE/POS keep them and say where the "
                   "applier resumes" if a["applier_known"] else
                   "how far the applier got is in mysql.slave_relay_log_info: take Relay_Log_File and Relay_Log_Pos "
                   "from SHOW REPLICA STATUS, or give --applied-gtids (its gtid_executed) and the plan fills them in")
            yield ("  a server that does not (Read_Source_Log_Pos elsewhere), after recover --apply, started with "
                       "skip_replica_start:")
            yield (f"    STOP REPLICA; {a['file_position_statement']} START REPLICA;")
            yield (f"    ({why})")


def mariadb_steps(plan) -> Iterator[str]:
    """MariaDB (master.info, relay-log.info): what to run after ``recover --apply``, for its mode."""
    conn = f" '{plan.connection}'" if plan.connection else ""
    ns = plan.next_source
    pt = plan.partial_transaction or {}
    yield ("\nMariaDB, after recover --apply: start the server with relay_log_recovery=OFF (the default; ON "
           "discards the relay logs and fetches them again) and skip_slave_start, then:")
    if plan.mode == "position" and plan.position_unreachable:
        yield (f"  STOP SLAVE{conn}; CHANGE MASTER{conn} TO MASTER_USE_GTID=slave_pos; START SLAVE{conn};")
        yield ("  (file/position mode cannot ask for a position past 4 GiB: see the warning; GTID positioning resumes "
               "from gtid_slave_pos)")
    elif plan.mode == "position":
        where = f"{ns['file']}:{ns['position']}" if ns and ns.get("file") else None
        if where:
            yield (f"  check SHOW SLAVE STATUS{conn}: Master_Log_File / Read_Master_Log_Pos {where}"
                   + (" (the rewritten master.info)" if plan.master_info else "")
                   + (f", Relay_Log_File / Relay_Log_Pos {os.path.basename(plan.relay_log_info['relay_log_file'])}:"
                      f"{plan.relay_log_info['relay_log_pos']}" if plan.relay_log_info else "") + ";")
        yield (f"  START SLAVE{conn}; the IO thread asks the primary for {where or 'the next source position'}, "
               "nothing it already received" + (f" (the rest of {pt['gtid']})" if pt.get("gtid") else "") + ".")
    else:
        yield (f"  START SLAVE{conn}; (MASTER_USE_GTID) the replica asks the primary by GTID"
               + (f", fetching {pt['gtid']} again whole" if pt.get("gtid") else "") + "; nothing else to run.")
    yield (f"  after it: Slave_IO_Running and Slave_SQL_Running Yes, gtid_slave_pos reaching the primary's "
           "gtid_binlog_pos.")


def lines(plan) -> Iterator[str]:
    """The plan as text: what is wrong, where the replica resumes, each action."""
    ns = plan.next_source
    binlog = plan.mode == "binlog"
    yield (f"{'binlog folder' if binlog else 'relay directory':<15} : {plan.relay_dir}"
               + (f"  (connection {plan.connection})" if plan.connection else ""))
    yield (f"mode            : {'crashed former primary' if binlog else plan.mode}"
               + (f"   flavor: {plan.flavor}" if plan.flavor else ""))
    if plan.problem:
        p = plan.problem
        yield (f"problem         : {p['kind']} event at {p['file']}:{p['offset']} ({p['message']})")
    if plan.partial_transaction and "cut" in plan.partial_transaction:
        for c in plan.partial_transaction["cut"]:
            yield (f"cut trx         : {c['gtid'] or '-'} at {c['file']}:{c['offset']} ({c['reason']})")
    elif plan.partial_transaction:
        p = plan.partial_transaction
        yield (f"partial trx     : {p['gtid'] or '-'} from {p['file']}:{p['offset']} (source {p['source_file']}:{p['source_start']})")
    yield (f"last complete   : {plan.last_complete_gtid or '-'}")
    if not binlog:
        yield (("next source     : " + (f"{ns['file']}:{ns['position']}"
                                             + ("  (past 4 GiB)" if ns['position'] and ns['position'] >= 1 << 32 else "")
                                             if ns['file'] else
                                             f"position {ns['position']} of a source file whose name is unknown"))
                   if ns else "next source     : unknown")
    yield (f"{'GTIDs kept' if binlog else 'retrieved GTIDs':<15} : {plan.retrieved_gtids or '-'}")
    if plan.metadata == "tables":
        yield ("metadata        : in tables (mysql.slave_master_info, mysql.slave_relay_log_info): no info "
                   "file to write")
    rows = [("truncate", t["file"], f"{t['size']} -> {t['new_size']}", t["reason"]) for t in plan.truncate]
    rows += [("remove", r["file"], "", r["reason"]) for r in plan.remove]
    if plan.index is not None:
        rows.append(("rewrite", plan.relay_index, f"{len(plan.index)} files", "index"))
    if plan.master_info:
        rows.append(("rewrite", "master.info", f"{plan.master_info['file']}:{plan.master_info['position']}", "next source position"))
    if plan.relay_log_info:
        v = plan.relay_log_info
        rows.append(("rewrite", "relay-log.info", f"{v['relay_log_file']}:{v['relay_log_pos']}", "SQL thread position"))
    if plan.change_source_sql:
        yield (f"run on the replica: {plan.change_source_sql}")
    if plan.mysql:
        yield from mysql_answer(plan)
    elif plan.flavor == "mariadb" and plan.mode in ("position", "gtid") and not plan.resume:
        yield from mariadb_steps(plan)
    if rows:
        yield (f"\n{'action':<9} {'file':<22} {'change':<34} reason")
        for a, f, c, r in rows:
            yield (f"{a:<9} {f:<22} {c:<34} {r}")
    elif not plan.refuse:
        yield ("\nnothing to do")
    for w in plan.warnings:
        yield (f"warning: {w}")


def stop_before_apply(plan, apply: bool, as_json: bool) -> tuple[str | None, list[tuple[str, bool]]]:
    """Where a run stops before anything is written, and the lines it says (text, to stderr):
    ``refused``, ``done`` (nothing to do), ``unreachable`` (nothing to do, but the replica cannot
    resume in file/position mode: its next source position is past 4 GiB), ``dry run``; None:
    go on and apply."""
    if plan.refuse:  # the text shows no plan: its warnings go with the reason
        said = [] if as_json else [(f"binlogkit: warning: {w}", True) for w in plan.warnings]
        return "refused", said + [(f"binlogkit: refused: {plan.refuse}", True)]
    if plan.nothing_to_do:
        return "unreachable" if plan.position_unreachable else "done", []
    if not apply:
        return "dry run", [] if as_json else [("dry run: nothing was changed; run again with --apply to repair", False)]
    return None, []


def applied(plan, backup, as_json: bool) -> list[tuple[str, bool]]:
    """What an apply says when it is done (text, to stderr)."""
    what = "finished the interrupted repair" if plan.resume else "applied"
    out = [(f"{what}; the files changed were copied to {backup} and verified (journal.json says what was done)",
            as_json)]
    if plan.position_unreachable:  # a script must not restart the replica in position mode blindly
        out.append(("binlogkit: warning: the replica cannot resume in file/position mode: see the warning above",
                    True))
    return out

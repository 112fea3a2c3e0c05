"""Text rendering of decoded events, modelled on mysqlbinlog: grep-able, one header line per
event with its exact offset. Pure: events in, lines out."""

from __future__ import annotations

import datetime as _dt
import functools
import json
import time
from typing import Callable, Iterator

from .constants import EventType as T
from .errors import KeyFileError, KeyRequiredError
from .reading.events import Event
from .flavor import Flavor

# USE_SQL_FOREIGN_KEY_F: MySQL 9.x (foreign keys run by the SQL layer; mysqlbinlog 9.7 names it)
ROW_FLAGS = {1: "STMT_END_F", 2: "NO_FOREIGN_KEY_CHECKS_F", 4: "RELAXED_UNIQUE_CHECKS_F", 8: "COMPLETE_ROWS_F",
             16: "USE_SQL_FOREIGN_KEY_F"}
ROWS_NAMES = {
    T.WRITE_ROWS_EVENT: "Write_rows", T.UPDATE_ROWS_EVENT: "Update_rows", T.DELETE_ROWS_EVENT: "Delete_rows",
    T.WRITE_ROWS_EVENT_V1: "Write_rows", T.UPDATE_ROWS_EVENT_V1: "Update_rows",
    T.DELETE_ROWS_EVENT_V1: "Delete_rows", T.PARTIAL_UPDATE_ROWS_EVENT: "Update_rows_partial",
    T.PRE_GA_WRITE_ROWS_EVENT: "Write_rows_pre_ga", T.PRE_GA_UPDATE_ROWS_EVENT: "Update_rows_pre_ga",
    T.PRE_GA_DELETE_ROWS_EVENT: "Delete_rows_pre_ga",
    T.WRITE_ROWS_COMPRESSED_EVENT: "Write_compressed_rows", T.UPDATE_ROWS_COMPRESSED_EVENT: "Update_compressed_rows",
    T.DELETE_ROWS_COMPRESSED_EVENT: "Delete_compressed_rows",
    T.WRITE_ROWS_COMPRESSED_EVENT_V1: "Write_compressed_rows",
    T.UPDATE_ROWS_COMPRESSED_EVENT_V1: "Update_compressed_rows",
    T.DELETE_ROWS_COMPRESSED_EVENT_V1: "Delete_compressed_rows",
}


# Each flavor's own tool prints a Query header its way: mariadb-binlog adds the Q_XID value.
QUERY_SHOWS_XID = {Flavor.MARIADB}
# and an XA_prepare header: mysqlbinlog ``XA PREPARE X'..',X'..',1``, mariadb-binlog ``XID = X'..'...``
XA_PREPARE_HEAD = {Flavor.MYSQL: "XA PREPARE", Flavor.MARIADB: "XID =", None: "XID ="}


def _flavor(ev) -> Flavor | None:
    return ev.raw.format.flavor if ev.raw.format is not None else None


def stamp(ts: int, utc: bool) -> str:
    """``YYMMDD HH:MM:SS`` as the server's tools print it, in UTC or the local zone (cached per
    zone: a process that changes TZ and calls tzset gets its new local times)."""
    return _stamp(ts, utc, None if utc else (time.tzname, time.timezone, time.altzone))


@functools.lru_cache(maxsize=4096)
def _stamp(ts: int, utc: bool, _zone: object) -> str:
    t = time.gmtime(ts) if utc else time.localtime(ts)
    return f"{t.tm_year % 100:02d}{t.tm_mon:02d}{t.tm_mday:02d} {t.tm_hour:2d}:{t.tm_min:02d}:{t.tm_sec:02d}"


def end_log_pos(raw) -> int:
    """end_log_pos as mysqlbinlog prints it: binlog v3 writers stored the event's *start*
    there, and the readers add the event's size (for the types before Format_description)."""
    fmt = raw.format
    if fmt is not None and fmt.binlog_version == 3 and raw.type_code < T.FORMAT_DESCRIPTION_EVENT and raw.log_pos:
        return raw.log_pos + raw.event_size
    return raw.log_pos


def header_line(ev: Event, utc: bool) -> str:
    raw = ev.raw
    crc = f" CRC32 0x{int.from_bytes(raw.data[-4:], 'little'):08x}" if raw.len_checksum else ""
    text = summary(ev, utc)
    return (f"#{stamp(raw.timestamp, utc)} server id {raw.server_id}  end_log_pos {end_log_pos(raw)}{crc} "
            + (f"\t{text}" if text else ""))


def _xid(f: dict) -> str:
    """An XID as the servers print it: X'gtrid',X'bqual',formatID (made by ``events._view``
    from the parsed bytes: rendering never parses the display fields back)."""
    return f["xid"]


def _sql(text: str) -> str:
    return f"{text}\n/*!*/;"


def _start(ev, f, utc):
    startup = " at startup" if f.get("create_timestamp") else ""
    return (f"Start: binlog v {f['binlog_version']}, server v {f['server_version']} created "
            f"{stamp(ev.raw.timestamp, utc)}{startup}")


def _query(ev, f, utc):
    shows_xid = ev.raw.format is not None and ev.raw.format.flavor in QUERY_SHOWS_XID
    if shows_xid:
        xid = f"\txid={f['status_vars'].get('xid', 0)}"
    else:  # MySQL: an atomic DDL's Q_DDL_LOGGED_WITH_XID, as mysqlbinlog prints it
        ddl = f["status_vars"].get("ddl_logged_with_xid")
        xid = f"\tXid = {ddl}" if ddl is not None else ""
    return f"{ev.name}\tthread_id={f['thread_id']}\texec_time={f['exec_time']}\terror_code={f['error_code']}{xid}"


def _mariadb_gtid(ev, f, utc):
    """As mariadb-binlog 11.8 prints it: ``GTID 0-2-5 ddl COMMIT ALTER id= 4 thread_id=4``."""
    kind = "ddl" if "DDL" in f["flags"] else ("trans" if "TRANSACTIONAL" in f["flags"] else "")
    cid = f" cid={f['commit_id']}" if f.get("commit_id") is not None else ""
    text = f"GTID {f['gtid']}{cid} {kind}".rstrip()
    fx = f.get("flags_extra") or 0
    if fx & 2:
        text += " START ALTER"
    elif fx & (4 | 8) and f.get("sa_seq_no") is not None:
        text += f" {'COMMIT' if fx & 4 else 'ROLLBACK'} ALTER id= {f['sa_seq_no']}"
    if f.get("thread_id") is not None:
        text += f" thread_id={f['thread_id']}"
    return text


def _rows(ev, f, utc):
    flags = " ".join(n for b, n in ROW_FLAGS.items() if f["flags"] & b)
    return f"{ROWS_NAMES[ev.raw.type_code]}: table id {f['table_id']}" + (f" flags: {flags}" if flags else "")


def _mysql_gtid(ev, f, utc):
    t = ev.raw.type_code
    name = "Anonymous_GTID" if t == T.ANONYMOUS_GTID_LOG_EVENT else "GTID"
    lc = (f"\tlast_committed={f['last_committed']}\tsequence_number={f['sequence_number']}"
          if "last_committed" in f and "sequence_number" in f else "")  # a damaged body may carry one
    tl = f"\ttransaction_length={f['transaction_length']}" if "transaction_length" in f else ""
    flags = f.get("flags", f.get("gtid_flags", 0))
    ts = ""
    if "immediate_commit_timestamp" in f:  # MySQL 8.0.1+ writers; an event from a replica keeps the original
        ts = (f"\toriginal_committed_timestamp={f.get('original_commit_timestamp', f['immediate_commit_timestamp'])}"
              f"\timmediate_commit_timestamp={f['immediate_commit_timestamp']}")
    return f"{name}{lc}\trbr_only={'no' if flags & 1 else 'yes'}{ts}{tl}"


def _payload(ev, f, utc):
    return (f"Transaction_Payload\t\tpayload_size={f.get('payload_size')}\tcompression_type={f['compression']}"
            f"\tuncompressed_size={f.get('uncompressed_size')}")


# the summary after the header fields, per event type (a dict: this runs for every event)
_SUMMARY = {
    T.FORMAT_DESCRIPTION_EVENT: _start, T.START_EVENT_V3: _start,
    T.ROTATE_EVENT: lambda ev, f, utc: f"Rotate to {f['new_log_ident']}  pos: {f.get('position')}",
    T.QUERY_EVENT: _query, T.QUERY_COMPRESSED_EVENT: _query, T.EXECUTE_LOAD_QUERY_EVENT: _query,
    T.XID_EVENT: lambda ev, f, utc: f"Xid = {f['xid']}",
    T.GTID_EVENT: _mariadb_gtid,
    T.GTID_LIST_EVENT: lambda ev, f, utc: f"Gtid list [{','.join(f['gtids'])}]",
    T.BINLOG_CHECKPOINT_EVENT: lambda ev, f, utc: f"Binlog checkpoint {f['binlog_file']}",
    T.ANNOTATE_ROWS_EVENT: lambda ev, f, utc: "Annotate_rows:",
    T.TABLE_MAP_EVENT: lambda ev, f, utc: f"Table_map: `{f['db']}`.`{f['table']}` mapped to number {f['table_id']}",
    **{t: _rows for t in ROWS_NAMES},
    T.GTID_LOG_EVENT: _mysql_gtid, T.ANONYMOUS_GTID_LOG_EVENT: _mysql_gtid, T.GTID_TAGGED_LOG_EVENT: _mysql_gtid,
    T.PREVIOUS_GTIDS_LOG_EVENT: lambda ev, f, utc: "Previous-GTIDs",
    T.INCIDENT_EVENT: lambda ev, f, utc: f"Incident: {f['incident_name']}",
    T.TRANSACTION_PAYLOAD_EVENT: _payload,
    T.INTVAR_EVENT: lambda ev, f, utc: "Intvar",
    T.XA_PREPARE_LOG_EVENT: lambda ev, f, utc: f"{XA_PREPARE_HEAD[_flavor(ev)]} {_xid(f)}",
    T.USER_VAR_EVENT: lambda ev, f, utc: "User_var",
    **{t: lambda ev, f, utc: f"Query\tthread_id={f['thread_id']}\texec_time={f['exec_time']}"
       for t in (T.LOAD_EVENT, T.NEW_LOAD_EVENT, T.CREATE_FILE_EVENT)},
    **{t: lambda ev, f, utc: "" for t in (T.APPEND_BLOCK_EVENT, T.EXEC_LOAD_EVENT, T.DELETE_FILE_EVENT)},
}
_SUMMARY_BY_CODE: dict[int, Callable[[Event, dict, bool], str]] = {int(k): v for k, v in _SUMMARY.items()}


def summary(ev: Event, utc: bool = False) -> str:
    t = ev.raw.type_code
    if ev.codec is None:
        if t == T.PARTIAL_ROW_DATA_EVENT:  # MariaDB 12.3: recognised, not read (binlogkit/reading/formats.py)
            return "Partial_row_data: a fragment of a rows event (MariaDB 12.3), not supported yet"
        return f"Unknown event type {t}" + (" (ignorable)" if ev.raw.flags & 0x80 else "")
    fn = _SUMMARY_BY_CODE.get(t)
    return fn(ev, ev.fields, utc) if fn is not None else ev.name


_HAS_BODY = frozenset(int(t) for t in (
    T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT, T.EXECUTE_LOAD_QUERY_EVENT, T.XID_EVENT, T.GTID_EVENT,
    T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT, T.ANONYMOUS_GTID_LOG_EVENT, T.PREVIOUS_GTIDS_LOG_EVENT,
    T.ANNOTATE_ROWS_EVENT, T.ROWS_QUERY_LOG_EVENT, T.INCIDENT_EVENT, T.INTVAR_EVENT, T.RAND_EVENT,
    T.USER_VAR_EVENT, T.XA_PREPARE_LOG_EVENT, T.START_ENCRYPTION_EVENT, T.LOAD_EVENT, T.NEW_LOAD_EVENT,
    T.CREATE_FILE_EVENT, T.APPEND_BLOCK_EVENT, T.EXEC_LOAD_EVENT, T.DELETE_FILE_EVENT))


def commit_stamp(us: int, utc: bool) -> str:
    """A commit timestamp (microseconds) as mysqlbinlog's GTID comments show it:
    ``2026-11-25 17:13:41.414533 UTC`` (the zone's abbreviation; local time unless utc)."""
    t = time.gmtime(us // 1_000_000) if utc else time.localtime(us // 1_000_000)
    return time.strftime("%Y-%m-%d %H:%M:%S", t) + f".{us % 1_000_000:06d} " + ("UTC" if utc else time.strftime("%Z", t))


def mysql_gtid_body(f: dict, gtid: str, utc: bool, *, gtid_next: bool = True) -> list[str]:
    """What mysqlbinlog (8.0+) prints under a GTID header: the isolation level a row-only
    transaction needs, the commit timestamps (comments, then the session variable), the
    server versions, then GTID_NEXT (left out with ``gtid_next=False``: --skip-gtids)."""
    flags = f.get("flags", f.get("gtid_flags", 0))
    rbr_only = not (flags if isinstance(flags, int) else 0) & 1  # as the header's rbr_only=
    out = ["/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*//*!*/;"] if rbr_only else []
    if "immediate_commit_timestamp" in f:
        imm = f["immediate_commit_timestamp"]
        orig = f.get("original_commit_timestamp", imm)
        out += [f"# original_commit_timestamp={orig} ({commit_stamp(orig, utc)})",
                f"# immediate_commit_timestamp={imm} ({commit_stamp(imm, utc)})",
                f"/*!80001 SET @@session.original_commit_timestamp={orig}*//*!*/;"]
    if "original_server_version" in f:
        out.append(f"/*!80014 SET @@session.original_server_version={f['original_server_version']}*//*!*/;")
    if "immediate_server_version" in f:
        out.append(f"/*!80014 SET @@session.immediate_server_version={f['immediate_server_version']}*//*!*/;")
    return out + [f"SET @@SESSION.GTID_NEXT= '{gtid}'/*!*/;"] if gtid_next else out


def body_lines(ev: Event, utc: bool = False) -> list[str]:
    f, t = ev.fields, ev.raw.type_code
    if ev.codec is None or t not in _HAS_BODY:
        return []
    if t in (T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT, T.EXECUTE_LOAD_QUERY_EVENT):
        out = []
        if f.get("db"):
            out.append(f"use `{f['db']}`/*!*/;")
        out.append(f"SET TIMESTAMP={ev.raw.timestamp}/*!*/;")
        phase = f.get("two_phase_alter")
        if phase is not None:
            # binlog_alter_two_phase: the ALTER runs once, at its COMMIT ALTER; each phase's statement
            # is also shown commented, as mariadb-binlog -v shows it (### ALTER ...)
            if phase == "COMMIT":
                out.append(_sql(f["query"]))
            out += [f"### {line}" for line in f["query"].splitlines()]
            if phase != "COMMIT":
                out.append(f"# {phase} ALTER: not run here")
            return out
        out.append(_sql(f["query"]))
        return out
    if t == T.XID_EVENT:
        return ["COMMIT/*!*/;"]
    if t == T.GTID_EVENT:
        return [] if "STANDALONE" in f["flags"] else ["START TRANSACTION", "/*!*/;"]
    if t in (T.GTID_LOG_EVENT, T.GTID_TAGGED_LOG_EVENT) and f.get("gtid"):
        return mysql_gtid_body(f, f["gtid"], utc)
    if t == T.ANONYMOUS_GTID_LOG_EVENT:
        return mysql_gtid_body(f, "ANONYMOUS", utc)
    if t == T.PREVIOUS_GTIDS_LOG_EVENT:  # as Gtid_set::commented_string_format prints it
        text = f["gtid_set"]
        return [f"# {line}" for line in text.replace(",", ",\n").split("\n")] if text else ["# [empty]"]
    if t == T.ANNOTATE_ROWS_EVENT:
        return [f"#Q> {line}" for line in f["query"].splitlines()]
    if t == T.ROWS_QUERY_LOG_EVENT:
        return [f"# {line}" for line in f["query"].splitlines()]
    if t == T.INCIDENT_EVENT:
        return [f"# {f['text']}"]
    if t == T.INTVAR_EVENT:
        name = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}.get(f["kind"], f"INTVAR_{f['kind']}")
        return [f"SET {name}={f['value']}/*!*/;"]
    if t == T.RAND_EVENT:
        return [f"SET @@RAND_SEED1={f['seed1']}, @@RAND_SEED2={f['seed2']}/*!*/;"]
    if t == T.USER_VAR_EVENT:
        name = f["name"]
        if f["value"] is None:
            return [f"SET @`{name}`:=NULL/*!*/;"]
        return [f"SET @`{name}`:=0x{f['value']['value']}/*!*/;"]
    if t == T.XA_PREPARE_LOG_EVENT:
        verb = "XA COMMIT" if f["one_phase"] else "XA PREPARE"
        return [f"{verb} {_xid(f)}" + (" ONE PHASE" if f["one_phase"] else ""), "/*!*/;"]
    if t == T.START_ENCRYPTION_EVENT:
        return ["# The rest of this file is encrypted"]
    if t == T.CREATE_FILE_EVENT:  # the file is in the events: the statement is a comment
        return [f"# {f['query']}/*!*/;", f"# file_id: {f['file_id']}  block_len: {f['block_len']}"]
    if t in (T.LOAD_EVENT, T.NEW_LOAD_EVENT):
        return ([f"use `{f['db']}`/*!*/;"] if f.get("db") else []) + [f"{f['query']}/*!*/;"]
    if t == T.APPEND_BLOCK_EVENT:
        return [f"#Append_block: file_id: {f['file_id']}  block_len: {f['block_len']}"]
    if t == T.EXEC_LOAD_EVENT:
        return [f"#Exec_load: file_id={f['file_id']}"]
    if t == T.DELETE_FILE_EVENT:
        return [f"#Delete_file: file_id={f['file_id']}"]
    return []


def render_text(ev: Event, utc: bool = False) -> str:
    """``render`` as one newline-terminated string (the `decode` command's hot path)."""
    head = f"# at {ev.raw.offset}\n{header_line(ev, utc)}\n"
    body = body_lines(ev, utc)
    return head + "\n".join(body) + "\n" if body else head


def render(ev: Event, utc: bool = False) -> Iterator[str]:
    yield f"# at {ev.raw.offset}"
    yield header_line(ev, utc)
    yield from body_lines(ev, utc)


# --- the summaries of verify, gtids, transactions and compare (documents in, lines out) --------

def verify_json(path, res) -> dict:
    p = res.problem
    return {"file": str(path), "ok": res.ok, "size": res.size, "events": res.events,
            "checksummed": res.checksummed, "end_offset": res.end_offset, "encryption": res.encryption,
            "problem": None if p is None else {"kind": type(p).__name__, "offset": p.offset,
                                               "event_type": p.event_type, "message": p.message}}


def verify_line(path, res) -> str:
    p = res.problem
    if p is None:
        return (f"OK   {path}  {res.events} events, {res.checksummed} checksummed, {res.size} bytes"
                + (f", encrypted ({res.encryption})" if res.encryption else ""))
    return (f"BAD  {path}  offset {p.offset}: {p.message}" + (f" ({p.event_type})" if p.event_type else "")
            + f"; {res.events} whole events before it")


def verify_text(path, res, as_json: bool) -> str:
    """One file of ``binlogkit verify``: its JSON object or its line."""
    return json.dumps(verify_json(path, res)) if as_json else verify_line(path, res)


def verify_index_text(doc: dict, as_json: bool) -> str:
    """A MariaDB GTID index file of ``binlogkit verify`` (``gtid.index.index_summary``)."""
    from .gtid.index import summary_line

    return (json.dumps({**doc, "ok": doc["problem"] is None}) if as_json else
            f"{'BAD ' if doc['problem'] else 'OK  '} {doc['file']}  {summary_line(doc)}")


def gtids_output(summary: dict, indexes: list[dict], as_json: bool) -> tuple[list[tuple[str, bool]], str]:
    """``binlogkit gtids``: ``api.gtid_summary`` and the GTID index files given
    (``gtid.index.index_summary``) as lines (text, to stderr), and the verdict: ``no key`` (an
    encrypted file without its key: the text output is the error alone), ``damaged`` (a damaged
    file, an incomplete transaction, a bad GTID index file) or ``ok``."""
    from .gtid.index import index_line

    doc = {**summary, "gtid_indexes": indexes} if indexes else summary
    out = [json.dumps(doc, indent=1)] if as_json else [*gtid_summary_lines(doc), *map(index_line, indexes)]
    p = doc.get("problem") or {}
    if p and p["kind"] in (KeyRequiredError.__name__, KeyFileError.__name__):
        error = f"binlogkit: error: {p['file']}, offset {p['offset']}: {p['message']}"
        return [(line, False) for line in out if as_json] + [(error, True)], "no key"
    bad = p or doc["incomplete"] or any(d["problem"] for d in indexes)
    return [(line, False) for line in out], "damaged" if bad else "ok"


def _mysql_summary_lines(m: dict) -> Iterator[str]:
    yield f"MySQL GTID set contained: {m['contained'] or '(empty)'}"


def _mariadb_summary_lines(m: dict) -> Iterator[str]:
    yield f"MariaDB GTID position after these files: {m['position'] or '(empty)'}"
    if m["out_of_order"]:
        yield (f"  {len(m['out_of_order'])} GTIDs out of order or duplicated (gtid_strict_mode would stop): "
               + ", ".join(f"{x['gtid']} after {x['after']}" for x in m["out_of_order"][:10]))


_GTID_SUMMARY_LINES = {Flavor.MYSQL: _mysql_summary_lines, Flavor.MARIADB: _mariadb_summary_lines}


def gtid_summary_lines(summary: dict) -> Iterator[str]:
    """``api.gtid_summary`` as text: per file, then the set / position contained."""
    for f in summary["files"]:
        start = f["previous_gtids"] if f["previous_gtids"] is not None else (
            ",".join(f["gtid_list"]) if f["gtid_list"] is not None else "-")
        yield f"{f['file']}  {'relay' if f['relay'] else 'binlog'}  {f['transactions']} trx"
        yield f"  at start : {start or '(empty)'}"
        yield f"  added    : {f['gtids_added'] or '-'}"
        yield f"  first/last: {f['first_transaction']} / {f['last_transaction']}"
        if f["incomplete"]:
            yield f"  incomplete: {', '.join(f['incomplete'])}"
        if f["problem"]:
            yield f"  DAMAGED at offset {f['problem_offset']}: {f['problem']}"
    for flavor, lines in _GTID_SUMMARY_LINES.items():   # registered per flavor, MySQL first
        part = summary.get(flavor.value)
        if part is not None:
            yield from lines(part)
    if summary["incomplete"]:
        yield f"incomplete transactions: {', '.join(map(str, summary['incomplete']))}"


TRANSACTIONS_HEAD = (f"{'gtid':<44} {'time (UTC)':<19} {'start':<28} {'end':<28} {'source end':<26} {'events':>6} "
                     f"{'bytes':>10}  state")


def transaction_line(t) -> str:
    from pathlib import Path

    start = f"{Path(t.start_file).name}:{t.start_offset}"
    end = f"{Path(t.end_file).name}:{t.end_offset}" if t.end_file else "-"
    src = f"{t.source_file}:{t.source_end}" if t.source_file else (str(t.source_end) if t.source_end else "-")
    state = t.terminator if t.complete else "INCOMPLETE"
    if t.repeats:  # a source range the relay logs held already: applied twice
        r = t.repeats
        state += f"  REPEATS {r['source_file']}:{r['start']}-{r['end']}"
    when = _dt.datetime.fromtimestamp(t.first_timestamp, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S") \
        if t.first_timestamp else "-"
    tables = getattr(t, "tables", None)  # transactions --tables (touched.TablesTransaction)
    if tables is not None:
        state = f"{state:<11}  " + (",".join(tables) or "-")
    return (f"{t.gtid or '(' + t.kind + ')':<44} {when:<19} {start:<28} {end:<28} {src:<26} {t.events:>6} "
            f"{t.bytes:>10}  {state}")


def transaction_text(t, as_json: bool) -> str:
    """One transaction of ``binlogkit transactions``: its JSON object or its line."""
    return json.dumps(t.to_json()) if as_json else transaction_line(t)


def compare_lines(res: dict) -> Iterator[str]:
    """``compare.compare`` as text."""
    yield f"primary: {res['primary']['transactions']} transactions, last {res['primary']['last'] or '-'}"
    yield ("last transaction every side has: "
           + (res["last_common"] or "none in common (no transaction of the primary is on every replica)"))
    un = res["unacknowledged"]
    where = (f" ({un[0]['file']}@{un[0]['offset']})" if len(un) == 1 else
             f" ({len(un)}, from {un[0]['file']}@{un[0]['offset']})" if un else "")
    yield f"on the primary only (un-acknowledged): {res['unacknowledged_ranges'] or 'none'}{where}"
    for r in res["replicas"]:  # GTID sets as ranges (gtid.ranges_text): one short line, not one per GTID
        missing = f"; missing: {r['missing_ranges']} ({r['missing_count']})" if r["missing_count"] else ""
        yield (f"replica {r['paths'][0] if r['paths'] else '?'}: {r['transactions']} transactions; errant: "
               + (f"{r['errant_ranges']} ({r['errant_count']})" if r["errant"] else "none") + missing)
    if res["primary"]["incomplete"]:
        yield "primary's incomplete tail: " + ", ".join(str(i["gtid"]) for i in res["primary"]["incomplete"])

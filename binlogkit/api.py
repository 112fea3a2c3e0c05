"""The calls the commands wrap, with the same parameter names: ``decode_files`` and
``verify_files``. Inputs are paths, ``.index`` files, folders, URLs, or ``reading.source.Input``
values; they are read through the one opener (``reading.source``), read-only. Encrypted files are
read with the keys of their ``Input`` (``Input(path, keys)``, keys from ``crypto.load_keys``):
the keys travel inside the inputs, no function here takes them apart.

Decoding has one documented way: ``decode_files`` (inputs -> ``Event`` values, ``Problem`` where
an input is damaged). Under it, ``events.decode(raw)`` is the pure step for one framed event and
``decoder.EventDecoder`` the state kept across events (table maps); ``fastdecode.decode_fast``
is the CLI's accelerated rendering of the same events, tested equal to it."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator

from .errors import BinlogError
from .reading.events import Event, decode
from .reading.decoder import EventDecoder, Problem  # noqa: F401  (part of the API)
from .reading.files import COMPRESSED_SUFFIXES, expand_paths  # noqa: F401  (part of the API)
from .reading.source import Input, as_input, inputs
from .reading.scan import ScanResult, scan


def decode_files(paths: Iterable[Input | str | os.PathLike], *, start_position: int | None = None,
                 stop_position: int | None = None, start_datetime: datetime | None = None,
                 stop_datetime: datetime | None = None, types: set[int] | None = None,
                 verify: bool = True, strict: bool = True, include_gtids=None,
                 exclude_gtids=None, rows: bool | str = False,
                 column_types: dict[str, str] | None = None, payloads: bool = False) -> Iterator[Event | Problem]:
    """Decoded events of every file, filtered; a ``Problem`` where a file is damaged (then the
    next file). Positions are file offsets of the event start (per file, like mysqlbinlog).
    ``include_gtids`` / ``exclude_gtids`` are predicates on GTID text (``gtid_matcher``): the
    events of a transaction follow its GTID event's verdict until the next GTID event; events
    outside transactions (FDE, Rotate, ...) are always kept, as mysqlbinlog does.
    ``rows=True`` decodes row images (``Event.rows``, ``Event.table``); ``rows="text"`` gives
    only their `decode -v` lines (``Event.rows_text``, bytes: the fast path; ``rows="types"``: with
    the -vv type comments); ``column_types`` maps
    ``db.table.column`` patterns to types the binlog cannot name (``uuid``, ``inet6``, ``inet4``:
    MariaDB writes them as BINARY(n)), see ``rowvalues.parse_hints``. ``payloads=True`` also
    yields the events inside MySQL's Transaction_payload events, right after each (their raw
    events carry ``payload_offset``). An ``Input``'s keys decrypt its encrypted files."""
    from .transactions import GTID_TYPES, OUTSIDE

    gtid_filter = include_gtids is not None or exclude_gtids is not None
    keep_trx = True
    from .reading.reader import read_events

    dec = EventDecoder(strict=strict, rows=rows, column_types=column_types)
    t0 = start_datetime.timestamp() if start_datetime else None
    t1 = stop_datetime.timestamp() if stop_datetime else None
    for inp in inputs(paths, verify=verify):
        path = inp.name
        try:
            for raw in read_events(inp):
                if stop_position is not None and raw.offset >= stop_position:
                    break
                if start_position is not None and raw.offset < start_position:
                    continue
                if t1 is not None and raw.timestamp >= t1 and raw.type_code != 15:
                    break
                if t0 is not None and raw.timestamp < t0:
                    continue
                if gtid_filter and raw.type_code in GTID_TYPES:
                    g = decode(raw, strict=False).fields.get("gtid")
                    keep_trx = ((include_gtids is None or (g is not None and include_gtids(g)))
                                and (exclude_gtids is None or g is None or not exclude_gtids(g)))
                if gtid_filter and not keep_trx and raw.type_code not in OUTSIDE:
                    continue
                yield from dec.each(raw, str(path), types=types, payloads=payloads)
                if dec.failed and strict:
                    break
        except BinlogError as exc:
            yield Problem(str(path), exc.with_context(file=str(path)))


def verify_files(paths: Iterable[Input | str | os.PathLike], *, progress=None) -> list[ScanResult]:
    """Framing and CRC32 of every file at full speed (the fast scan path; its loop in C for
    plain files when the accelerator is built: ``fastdecode.verify_fast``; an ``Input`` with
    keys: the Python walk, which decrypts)."""
    from .reading.fastdecode import verify_fast

    return [verify_fast(inp.path, progress=progress) if inp.keys is None else scan(inp, progress=progress)
            for inp in inputs(paths)]


def transactions(paths: Iterable[Input | str | os.PathLike], *, gtids: str | None = None, verify: bool = True,
                 relay: bool | None = None, source_file: str | None = None,
                 problems: list[BinlogError] | None = None, exclude_gtids: str | None = None,
                 start_datetime: datetime | None = None, stop_datetime: datetime | None = None,
                 incomplete: bool = False, tables: bool = False):
    """Transactions of the files, optionally only those whose GTID is in ``gtids`` (a MySQL
    GTID set, or MariaDB GTIDs ``d-s-n`` / ranges ``d-s-a..b``) and not in ``exclude_gtids``
    (a transaction without a GTID is never excluded), that began at or after
    ``start_datetime`` and before ``stop_datetime``, and (``incomplete``) only those that are
    not complete. See ``transactions.py``;
    ``problems`` (a list): damaged files' errors go there and the next files are read on.
    ``tables``: each transaction also says the tables it touches (``touched.TablesTransaction``)."""
    from .transactions import group_files

    match = gtid_matcher(gtids) if gtids else None
    skip = gtid_matcher(exclude_gtids) if exclude_gtids else None
    t0 = start_datetime.timestamp() if start_datetime else None
    t1 = stop_datetime.timestamp() if stop_datetime else None
    grouper = None
    if tables:
        from .touched import TablesGrouper

        grouper = TablesGrouper(source_file=source_file, relay=relay)
    for t in group_files((as_input(p, verify=verify) for p in paths), relay=relay, source_file=source_file,
                         problems=problems, grouper=grouper):
        if (match is None or (t.gtid is not None and match(t.gtid))) and (
                skip is None or t.gtid is None or not skip(t.gtid)) and (
                t0 is None or t.first_timestamp >= t0) and (t1 is None or t.first_timestamp < t1) and (
                not (incomplete and t.complete)):
            yield t


def gtid_matcher(text: str):
    """A predicate on GTID text from a MySQL set (``uuid:1-5``) or MariaDB GTIDs/ranges."""
    from .gtid.forms import text_form

    text = text.strip()
    return text_form(text).matcher(text)


def gtid_summary(paths: Iterable[Input | str | os.PathLike], *, verify: bool = True,
                 relay: bool | None = None) -> dict:
    """What GTIDs the files contain, overall and per file (``binlogkit gtids``)."""
    from .gtid import GtidPos, MariadbGtid, MysqlGtid, MysqlGtidSet, order_violations
    from .flavor import Flavor
    from .transactions import Grouper, group_files, gtid_values

    g = Grouper(relay=relay)
    problems: list[BinlogError] = []  # every damaged file is reported; the next files are read on
    trx = []
    try:
        for t in group_files((as_input(p, verify=verify) for p in paths), grouper=g,
                             problems=problems):
            trx.append(t)
    except BinlogError as exc:  # no key for an encrypted file: the first problem, and the last
        problems.append(exc)
    problem = problems[0] if problems else None
    held = gtid_values(t for t in trx if t.complete)  # what is contained: complete transactions only
    mysql_added: list = held[Flavor.MYSQL]
    maria_added: list = held[Flavor.MARIADB]
    files = []
    for info in g.files:
        files.append({"file": info.file, "relay": info.relay, "server_version": info.server_version,
                      "previous_gtids": str(MysqlGtidSet.from_previous_gtids(info.previous_gtids))
                      if info.previous_gtids is not None else None,
                      "gtid_list": info.gtid_list, "gtids_added": _compact(info.gtids),
                      "transactions": info.transactions, "first_transaction": info.first_transaction,
                      "last_transaction": info.last_transaction, "incomplete": info.incomplete,
                      "problem": info.problem, "problem_offset": info.problem_offset})
    out: dict = {"files": files, "transactions": len(trx),
                 "incomplete": [t.gtid or f"@{t.start_file}:{t.start_offset}" for t in trx if not t.complete]}
    first = g.files[0] if g.files else None
    if mysql_added or (first and first.previous_gtids is not None):
        prev = MysqlGtidSet.from_previous_gtids(first.previous_gtids or []) if first else MysqlGtidSet()
        added = MysqlGtidSet.of(mysql_added)
        out["mysql"] = {"previous_gtids": str(prev), "added": str(added), "contained": str(prev | added),
                        "gtids_added": len(mysql_added), "duplicates": len(mysql_added) - len(added)}
    if maria_added or (first and first.gtid_list is not None):
        start = GtidPos.from_gtid_list(first.gtid_list or []) if first else GtidPos()
        pos = start
        for x in maria_added:
            if not pos.covers(x):
                pos = pos.advance(x)
        bad = order_violations(maria_added, start)
        out["mariadb"] = {"gtid_list": str(start), "position": str(pos), "gtids_added": len(maria_added),
                          "out_of_order": [{"gtid": str(a), "after": str(b)} for a, b in bad]}
    if problem is not None:
        out["problem"] = {"file": problem.file, "offset": problem.offset, "message": problem.message,
                          "kind": type(problem).__name__}
        out["problems"] = [{"file": p.file, "offset": p.offset, "message": p.message, "kind": type(p).__name__}
                           for p in problems]
    return out


def _compact(gtids: list[str]) -> str:
    """GTIDs added by one file, compactly: a MySQL set text, or MariaDB runs ``d-s-a..b``."""
    from .gtid.forms import FORMS, by_flavor

    groups = by_flavor(gtids)
    for flavor, form in FORMS.items():   # MySQL's set first, as the one text shown
        if groups.get(flavor):
            return form.compact(groups[flavor])
    return ""


def split_gtid_indexes(paths: Iterable[Input | str | os.PathLike]) -> tuple[list, list]:
    """(the logs, the MariaDB GTID index files) among ``paths`` (``verify`` and ``gtids`` read
    the index files as what they are)."""
    from .reading.files import is_gtid_index_file

    paths = list(paths)
    return [p for p in paths if not is_gtid_index_file(Path(p))], [p for p in paths if is_gtid_index_file(Path(p))]


def _logs_below(folder: str) -> list[Path]:
    from .reading.names import is_log_name

    return [Path(r, f) for r, _d, fs in os.walk(folder) for f in fs if f.endswith(".index") or is_log_name(Path(f))]


def check_inputs(paths, *, missing_ok: bool = False, recursive: bool = False, note=lambda text: None) -> None:
    """Every argument must stand for at least one log, and every log an index lists must exist:
    ``UsageError`` saying what was looked for, instead of a silent success or a traceback. Only
    regular files are read: a FIFO, a device or a socket (or a link to one), as an argument, in a
    folder or listed by an index, is refused (``NotRegularFileError``, ``files.refuse_irregular``).
    An index naming files in another folder (read beside itself all the same: ``files.read_index``)
    is said once through ``note``, and so is a MariaDB GTID index given as a log (skipped). ``recursive``:
    folders are searched all the way down (the audit's archives)."""
    from .errors import UsageError
    from .reading.files import is_gtid_index_file, read_index, refuse_irregular
    from .reading import storage

    notes: list[str] = []
    for p in paths:
        if p == "-":
            continue
        refuse_irregular([p] if not os.path.isdir(p) else [])
        if recursive and os.path.isdir(p):
            found = _logs_below(p)
            refuse_irregular(found)
            for i in (f for f in found if f.name.endswith(".index") and f.is_file()):
                listing = read_index(i)
                refuse_irregular(listing.files)
                notes += [listing.note()] if listing.elsewhere else []
        elif not storage.is_url(p):
            refuse_irregular(expand_paths([p], notes=notes))
    for n in dict.fromkeys(notes):  # once per index, not per file
        note(f"binlogkit: note: {n}")
    looked = "looked for *.index {0} and {0} named like NAME.000001 (also .xz, .gz, .bz2)"
    for p in paths:
        if p == "-":
            continue
        files: list
        if storage.is_url(p):
            try:
                files = [u for u, _size in storage.find_logs(p)][:1] if recursive else expand_paths([p])
                if recursive and not files and storage.isdir(p):
                    files = [u for u in storage.expand(p) if u.endswith(".index")][:1]
            except BinlogError as exc:
                raise UsageError(str(exc)) from None
            if not files:
                raise UsageError(f"no binlog or relay log in {p}: {looked.format('objects')}")
            for u in [] if missing_ok or recursive else files:
                if not storage.exists(str(u)):
                    raise UsageError(f"{u} is listed by the index in {p} but does not exist")
            continue
        files = _logs_below(p)[:1] if recursive and os.path.isdir(p) else expand_paths([p])
        if not files and is_gtid_index_file(Path(p)):
            note(f"note: {p} is a MariaDB GTID index, not a binlog: skipped (verify and gtids read it)")
            continue
        if not files:
            raise UsageError(f"no binlog or relay log in {p}: {looked.format('files')}")
        for f in [] if missing_ok else files:
            if not os.path.exists(f):
                raise UsageError(f"{f} is listed by the index in {p} but does not exist (a missing file: an index's "
                                 "entries are the files of their names in its own folder)")

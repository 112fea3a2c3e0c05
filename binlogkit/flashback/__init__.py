"""``binlogkit flashback``: undo a chosen range of row changes, from binlog files alone.

Three steps, as every command that writes (``STYLE.md`` 12)::

    plan.select      which transactions (pure over the inputs: they are only read)
    undo / invert    each one's undo events, built with the codecs (invert is pure)
    write            the one step that writes: the output file, atomically (safeio)

The output is a binlog: the magic, the source's Format_description (same flavor, version,
checksum), for MySQL the ``SET @@SESSION.GTID_NEXT='AUTOMATIC'`` line, then one undo transaction
per selected transaction, last first (``undo``'s docstring has the layout and why it carries no
GTID events). ``timestamp`` dates every event of it; otherwise each keeps its source event's
time. With ``sql=True`` the output is SQL text instead, one transaction (``sql``). See
docs/flashback.md.

Inputs that are archives (``.xz``, ``.gz``...) or URLs are copied, decompressed, into a
temporary file first: the undo reads every transaction backwards, which needs a seekable file.
That file (``binlogkit-flashback-input-*`` in the temporary folder) is locked (``flock``) while
its run lives; a run killed with ``kill -9`` cannot delete it, so each run removes the unlocked
ones of its user before it starts (``remove_stale_inputs``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterable

from ..codecs.format_description import fde_is_checksum_aware
from ..codecs.header import LEN_HEADER
from ..constants import LEN_CHECKSUM, EventFlag, EventType as T
from ..errors import FormatError
from ..flavor import replay_needs_gtid_next
from ..reading.events import build_event
from ..reading.source import Input, inputs
from ..reading.format import Format
from .conflicts import Expected, later_changes
from .invert import MinimalImage
from .plan import ROW_FORMAT, FlashbackRefused, Plan, nothing, select
from .undo import GTID_NEXT_AUTOMATIC, Filters, Out, is_gtid_next_automatic, session_query, undo_plan
from .write import write_output

__all__ = ["flashback", "FlashbackRefused", "MinimalImage", "Result", "select", "Filters"]


@dataclass
class Result:
    output: str
    transactions: int          # selected by the range
    undone: int                # written (a filter can leave some with nothing to undo)
    events: int
    rows: int
    bytes: int
    first_gtid: str | None
    last_gtid: str | None
    skipped: list[dict]        # statements left out (--skip-statements): one-statement transactions, then
    # those inside the undone transactions (gtid None), each {file, start, end, gtid, statement}
    # later transactions of the inputs that changed rows the undo expects (conflicts.py):
    # {"conflicts": [{file, offset, gtid, table, rows}...], "total": n, "note": str|None}
    later: dict | None = None
    backup: str | None = None  # where the output it replaced (--force) was copied, verified
    cleaned: list[str] = field(default_factory=list)  # leftovers of killed earlier runs, removed
    # with --database / --table: the one-statement transactions (DDL) that touch no filtered
    # table (scope.outside) and XA transactions of other tables' rows (undo.XaScope), left as
    # they are: {file, start, end, gtid, statement}
    outside: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(vars(self))


INPUT_PREFIX = "binlogkit-flashback-input-"
_INPUT = re.compile(re.escape(INPUT_PREFIX) + r"[A-Za-z0-9_]{8}")


def remove_stale_inputs(tmpdir: str | None = None) -> list[str]:
    """The decompressed input copies killed runs left in the temporary folder, removed: this
    user's regular files named ``binlogkit-flashback-input-*`` that no live run holds locked."""
    where = tmpdir or tempfile.gettempdir()
    try:
        dfd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    gone = []
    try:
        for name in sorted(os.listdir(dfd)):
            if not _INPUT.fullmatch(name):
                continue
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                    continue
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live run holds it: BlockingIOError
                cur = os.fstat(fd)
                if (cur.st_dev, cur.st_ino) == (st.st_dev, st.st_ino):
                    os.unlink(name, dir_fd=dfd)
                    gone.append(os.path.join(where, name))
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        os.close(dfd)
    return gone


def _seekable(path: str, stack: contextlib.ExitStack, tmpdir: str | None) -> str:
    inp = Input(path)
    if not inp.is_url and inp.compression is None:
        return path
    tmp = stack.enter_context(tempfile.NamedTemporaryFile(prefix=INPUT_PREFIX, dir=tmpdir))
    fcntl.flock(tmp.fileno(), fcntl.LOCK_EX)  # tells a later run this copy is in use
    with inp.open() as src:
        shutil.copyfileobj(src, tmp, 1 << 20)
    tmp.flush()
    return tmp.name


def _source_fde(inp: Input):
    """(FDE body, format, FDE carries a checksum, the raw FDE) of the input's first event."""
    from ..reading.reader import read_events

    path = inp.name
    with contextlib.closing(read_events(inp)) as events:
        for raw in events:
            if raw.type_code != T.FORMAT_DESCRIPTION_EVENT:
                raise FormatError("the file does not start with a Format_description: only binlogs v4 "
                                  "can be flashed back", file=path, offset=raw.offset)
            if raw.format is None:  # the reader gives a Format_description its own format
                raise FormatError("the Format_description does not decode", file=path, offset=raw.offset)
            if raw.format.header_length != LEN_HEADER:
                raise FlashbackRefused(f"events with a {raw.format.header_length}-byte header are not supported",
                                       file=path)
            return raw.body, raw.format, fde_is_checksum_aware(raw.data), raw
    raise FormatError("the file holds no event", file=path)


def flashback(paths, output: str | os.PathLike, *, start_position: int | None = None,
              stop_position: int | None = None, start_datetime: datetime | None = None,
              stop_datetime: datetime | None = None, gtids: Callable[[str], bool] | None = None,
              database: str | Iterable[str] | None = None, table: str | Iterable[str] | None = None,
              skip_statements: bool = False,
              sql: bool = False, force: bool = False, tmpdir: str | None = None,
              check_later: bool = True, backup_dir: str | os.PathLike | None = None,
              cleaned: list[str] | None = None, timestamp: datetime | None = None,
              generated: tuple[str, ...] = ()) -> Result:
    """Write the undo of the selected transactions to ``output``. Raises ``FlashbackRefused``
    (nothing written) for what cannot be undone, another ``BinlogError`` for damaged input
    (``KeyRequiredError``: an encrypted input and no key for it).
    ``check_later``: then read the inputs after the range for later changes to the rows the
    undo puts back (``Result.later``; ``conflicts``). ``paths`` are paths or ``Input`` values:
    encrypted inputs are read with their keys, an event at a time (``source``); the output is plain.
    ``database`` / ``table``: a name or several (``DB.TABLE``, shell wildcards; a table is undone
    when it is in one of the databases, if given, and matches one of the tables, if given).
    ``timestamp``: the time every event of the undo binlog is dated with (``--timestamp``; a
    replay then dates the server's own events so), instead of its source event's.
    ``generated``: ``db.table.column`` names of generated columns (the binlog does not say which
    columns are): left out of ``--sql`` statements, and row images may leave them out (MariaDB
    11.8's FULL images do; ``invert``)."""
    databases, tables = _names(database), tuple(t for v in _names(table) for t in v.split(",") if t)
    for t in tables:
        if "." not in t:
            raise FlashbackRefused(f"--table takes DB.TABLE, not {t!r}")
    stamp = _stamp(timestamp, sql)
    omit = _generated(generated)
    if sum(x is not None for x in (start_position or stop_position, start_datetime or stop_datetime, gtids)) > 1:
        raise FlashbackRefused("choose one range: positions, date-times or --include-gtids")
    found = inputs(paths)
    given = {i.name: i for i in found}  # name -> Input, with its keys
    plan = select(found, start_position=start_position, stop_position=stop_position,
                  start_datetime=start_datetime, stop_datetime=stop_datetime, gtids=gtids)
    filters = Filters(databases, tables, skip_statements, omit)
    # the caller's list is filled as leftovers go, so a refusal later still tells what went
    cleaned = cleaned if cleaned is not None else []
    cleaned += remove_stale_inputs(tmpdir)
    with contextlib.ExitStack() as stack:
        local = {f: given[f].with_options(path=_seekable(f, stack, tmpdir)) for f in plan.files}  # name -> seekable
        _body, fmt, fde_crc, fde_raw = _source_fde(local[plan.files[0]])
        for f in plan.files[1:]:
            other = _source_fde(local[f])[1]
            if (other.flavor, other.post_header_lengths) != (fmt.flavor, fmt.post_header_lengths):
                raise FlashbackRefused(f"{f} was written by {other.server_version}, {plan.files[0]} by "
                                       f"{fmt.server_version}: flash back one server version at a time", file=f)
        statements, apart = _statements(plan, local, fmt, filters)
        if statements and not skip_statements:
            shown = "; ".join(f"{s['gtid'] or s['file'] + ':' + str(s['start'])}: {s['statement'][:120]!r}"
                              for s in statements[:5])
            more = f" and {len(statements) - 5} more" if len(statements) > 5 else ""
            raise FlashbackRefused(f"{len(statements)} statement(s) in the range cannot be undone from row images "
                                   f"(DDL or statement-format DML): {shown}{more}; --skip-statements leaves "
                                   f"them out (their effect stays); {ROW_FORMAT}", file=statements[0]["file"],
                                   offset=statements[0]["start"])
        if not len(plan):
            raise FlashbackRefused(nothing(False, len(statements)))
        res = Result(str(output), len(plan), 0, 0, 0, 0, plan.first_gtid, plan.last_gtid, statements,
                     cleaned=cleaned, outside=apart)
        expected = Expected() if check_later else None
        if sql:
            from .sql import produce_sql
            produce = produce_sql(plan, local, fmt, filters, res, expected, omit)
        else:
            produce = _produce_binlog(plan, local, fmt, fde_raw, fde_crc, filters, res, expected, stamp)
        res.backup = write_output(output, produce, force=force, inputs=[*plan.files, *(i.name for i in local.values())],
                                  backup_dir=backup_dir, cleaned=cleaned)
        if expected:
            res.later = later_changes(plan.files, local, fmt, plan.file_index[-1], plan.ends[-1], expected)
    return res


def _names(given: str | Iterable[str] | None) -> tuple[str, ...]:
    """--database / --table as given: one name, several, or none."""
    if given is None:
        return ()
    return tuple(n.strip() for n in ((given,) if isinstance(given, str) else given) if n.strip())


def _stamp(timestamp: datetime | None, sql: bool) -> int | None:
    if timestamp is None:
        return None
    if sql:
        raise FlashbackRefused("--timestamp dates the events of the binlog output; --sql statements carry no "
                               "time (the server dates them when they run): leave --timestamp out")
    stamp = int(timestamp.timestamp())
    if not 0 < stamp < 1 << 32:
        raise FlashbackRefused(f"--timestamp {timestamp.isoformat()} is outside what a binlog event header "
                               "holds (1970-01-01 .. 2106-02-07 UTC)")
    return stamp


def _generated(names: tuple[str, ...]) -> frozenset[tuple[str, str, str]]:
    out = set()
    for name in names:
        parts = name.split(".")
        if len(parts) != 3 or not all(parts):
            raise FlashbackRefused(f"--generated takes DB.TABLE.COLUMN, not {name!r}")
        out.add((parts[0], parts[1], parts[2]))
    return frozenset(out)


def _statements(plan: Plan, local: dict[str, Input], fmt: Format, filters: Filters) -> tuple[list[dict], list[dict]]:
    """The one-statement transactions of the range: those that block the undo (refused, or
    left out by --skip-statements), and those a filtered undo leaves as they are (DDL touching
    no filtered table: ``scope.outside``)."""
    from .scope import outside
    from .source import EventFile
    from .undo import statement_of

    out: list[dict] = []
    apart: list[dict] = []
    for name, start, end, gtid in plan.statements:
        with EventFile(local[name]) as fh:
            text, db = statement_of(fh, name, start, end, fmt)
        if gtid is None and is_gtid_next_automatic(text):
            continue  # the GTID_NEXT line of an undo binlog (flashing back a flashback): no change
        st = {"file": name, "start": start, "end": end, "gtid": gtid, "statement": text[:1000]}
        (apart if outside(text, db, filters.databases, filters.tables) else out).append(st)
    return out, apart


def _produce_binlog(plan: Plan, local: dict[str, Input], fmt: Format, fde_raw, fde_crc: bool, filters: Filters,
                    res: Result, expected: Expected | None = None, stamp: int | None = None):
    """``produce(sink)`` writing the undo binlog. ``stamp``: the header timestamp of every event
    (``--timestamp``), else each keeps its source event's."""
    checksum = fmt.len_checksum > 0

    def produce(sink) -> None:
        fde_body = fde_raw.body
        sink.write(b"\xfebin")
        at = 4
        size = LEN_HEADER + len(fde_body) + (LEN_CHECKSUM if fde_crc else 0)
        fde_time = fde_raw.timestamp if stamp is None else stamp
        sink.write(build_event(type_code=T.FORMAT_DESCRIPTION_EVENT, body=fde_body, timestamp=fde_time,
                               server_id=fde_raw.server_id, log_pos=at + size, flags=0, checksum=fde_crc))
        at += size
        res.events = 1

        def write(out: Out) -> None:
            nonlocal at
            size = LEN_HEADER + len(out.body) + (LEN_CHECKSUM if checksum else 0)
            sink.write(build_event(type_code=out.type_code, body=out.body,
                                   timestamp=out.timestamp if stamp is None else stamp,
                                   server_id=out.server_id, log_pos=(at + size) & 0xFFFFFFFF,
                                   flags=out.flags & ~EventFlag.BINLOG_IN_USE, checksum=checksum))
            at += size
            res.events += 1

        if replay_needs_gtid_next(fmt.flavor):
            write(session_query(GTID_NEXT_AUTOMATIC, fde_time, fde_raw.server_id, fmt))
        with contextlib.closing(undo_plan(plan, local, fmt, filters, res.skipped, res.outside)) as transactions:
            for _name, events in transactions:
                wrote = False
                for out in events:
                    write(out)
                    if out.rows is not None:
                        res.rows += len(out.rows)
                        if expected is not None:
                            expected.add(out)
                    wrote = True
                res.undone += wrote
        if not res.undone:
            raise FlashbackRefused(nothing(filters.filtered, len(res.skipped)))
        res.bytes = at
    return produce

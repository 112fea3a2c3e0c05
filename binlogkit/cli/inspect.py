"""binlogkit verify, gtids, transactions, compare: read-only looks at logs."""

from __future__ import annotations

import sys

import click

from ..errors import BinlogError, KeyRequiredError
from .exits import EXIT_DAMAGED, EXIT_OK, EXIT_USAGE, echo, exit_code, fail, fails, show
from .options import (Command, InputPath, check, datetime_value, gtid_filters, inputs, json_option, key_options,
                      relay_option, time_filters)


@click.command(cls=Command)
@inputs()
@json_option("One JSON object per file.")
@key_options("inputs")
def verify(inputs, as_json) -> None:
    """Check framing and CRC32 of every event of INPUTS (.index files and folders too) at full speed.

    Prints one line per file: OK with its event count, or BAD with the first problem and its
    offset (torn event, checksum mismatch, impossible size, not a binlog, encrypted). Exit
    code 0 only when every file is sound.
    """
    from ..api import inputs as logs_of, split_gtid_indexes, verify_files
    from ..reading.progress import Progress
    from ..gtid.index import index_summary
    from ..render import verify_index_text, verify_text

    files, indexes = split_gtid_indexes(inputs)
    bad = 0
    for f in indexes:  # MariaDB's <binlog>.idx: checked as what it is (pages, CRC32s, records)
        doc = index_summary(f.name)
        bad = max(bad, EXIT_DAMAGED if doc["problem"] else 0)
        click.echo(verify_index_text(doc, as_json))
    if not files:
        sys.exit(bad)
    check(files)
    for inp in logs_of(files):
        try:
            size = inp.size()
        except OSError as exc:
            fail(str(exc), EXIT_USAGE)
        prog = Progress(size, f"verify {inp.basename}")
        (res,) = verify_files([inp], progress=prog)
        prog.close()
        bad = max(bad, 0 if res.problem is None else exit_code(res.problem))
        if isinstance(res.problem, KeyRequiredError) and not as_json:
            click.echo(f"binlogkit: error: {res.problem}", err=True)  # one line: the next files need it too
            sys.exit(EXIT_USAGE)
        click.echo(verify_text(inp.path, res, as_json))
    sys.exit(bad)


@click.command(cls=Command)
@inputs()
@json_option("The whole summary as one JSON document.")
@relay_option
@click.option("--locate", "locate_gtid", metavar="D-S-N",
              help="MariaDB: where this GTID is, from the GTID index files (.idx) beside the binlogs alone.")
@key_options("inputs")
@fails()
def gtids(inputs, as_json, relay, locate_gtid) -> None:
    """The GTIDs that binlogs / relay logs contain: a MySQL GTID set or a MariaDB position.

    Per file: Previous_gtids (MySQL) or Gtid_list (MariaDB), the GTIDs the file adds, its first
    and last transaction and the incomplete ones. Overall: the set / position contained, and for
    MariaDB the GTIDs that strict mode would refuse (out of order or duplicated in a domain).
    Exit 1 when a file is damaged or a transaction is incomplete.
    """
    from ..api import gtid_summary, inputs as logs_of, split_gtid_indexes
    from ..gtid.index import index_line, index_summary, locate_line, locate_text
    from ..render import gtids_output

    paths, index_files = split_gtid_indexes(inputs)
    if locate_gtid is not None:  # the index files answer; the binlogs are not read
        doc = locate_text([i.name for i in logs_of(paths)], locate_gtid)
        show(doc, as_json, locate_line, indent=None)
        sys.exit(EXIT_OK if doc["file"] else EXIT_DAMAGED)
    indexes = [index_summary(p.name) for p in index_files]
    if not paths:  # GTID index files only: what they hold, read without the binlogs
        show({"gtid_indexes": indexes}, as_json, lambda doc: map(index_line, doc["gtid_indexes"]))
        sys.exit(EXIT_DAMAGED if any(d["problem"] for d in indexes) else EXIT_OK)
    from ..reading.progress import watching

    check(paths)
    with watching(paths, "gtids"):
        said, verdict = gtids_output(gtid_summary(paths, relay=relay), indexes, as_json)
    echo(said)
    sys.exit({"no key": EXIT_USAGE, "damaged": EXIT_DAMAGED, "ok": EXIT_OK}[verdict])


@click.command(cls=Command)
@inputs()
@json_option("One JSON object per transaction.")
@gtid_filters("Only these GTIDs (MySQL set, or MariaDB d-s-n / d-s-a..b).", aliases=("--gtids",))
@time_filters()
@relay_option
@click.option("--source-file", help="Source binlog name for relay logs whose Rotate was purged (from relay-log.info).")
@click.option("--incomplete", is_flag=True, help="Only transactions that are not complete.")
@click.option("--tables", "with_tables", is_flag=True,
              help="Also the tables each transaction touches (its Table_map events, its statements' tables).")
@key_options("inputs")
def transactions(inputs, as_json, include_gtids, exclude_gtids, start_datetime, stop_datetime, relay, source_file,
                 incomplete, with_tables) -> None:
    """One line per transaction: GTID, its first event's time (UTC), where it starts and ends in
    the files and at the source (file:end_log_pos), events, bytes, terminator, and whether it is
    complete; --json: the first and last event times as Unix seconds. --tables adds the tables
    it touches (db.table, in the order first met: from its Table_map events and the first
    table each statement names; db.* for a statement on a whole database).

    Row bodies are never decoded; only the events that carry boundaries are. Transactions that
    span relay-log rotations are followed across files. Exit 1 when a file is damaged.
    """
    from ..api import transactions as list_transactions
    from ..render import TRANSACTIONS_HEAD, transaction_text

    check(inputs)
    if not as_json:
        click.echo(f"{TRANSACTIONS_HEAD:<{len(TRANSACTIONS_HEAD) + 6}}  tables" if with_tables else TRANSACTIONS_HEAD)
    from ..reading.progress import watching

    problems: list[BinlogError] = []  # a damaged file is reported, and the next files are read on
    # progress only when the lines go elsewhere (they would break the progress line)
    with watching(inputs, "transactions", enabled=not sys.stdout.isatty()):
        try:
            for t in list_transactions(inputs, gtids=include_gtids, exclude_gtids=exclude_gtids, relay=relay,
                                       start_datetime=datetime_value(start_datetime),
                                       stop_datetime=datetime_value(stop_datetime), source_file=source_file,
                                       incomplete=incomplete, problems=problems, tables=with_tables):
                click.echo(transaction_text(t, as_json))
        except BinlogError as exc:
            problems.append(exc)
    for problem in problems:
        click.echo(f"binlogkit: error: {problem}", err=True)
    sys.exit(max([0, *(exit_code(p) for p in problems)]))


@click.command(cls=Command)
@click.argument("primary", type=InputPath(exists=True))
@click.argument("replicas", nargs=-1, required=True, type=InputPath(exists=True))
@json_option("The comparison as JSON.")
@key_options("primary", "replicas")
@fails(os_errors=True)  # a side that cannot be decrypted: 2
def compare(primary, replicas, as_json) -> None:
    """Compare a primary's binlogs with replicas' binlogs or relay logs, by GTID.

    PRIMARY and each of REPLICAS is a folder, an index file or a file. Prints the last
    transaction all sides share, the primary's transactions no replica received (after a
    semisync AFTER_SYNC crash: written but never acknowledged), and each replica's errant
    transactions (ones the primary lacks). Exit 1 when anything differs.
    """
    from ..api import inputs as logs_of
    from ..compare import compare as run_compare, damage, differs
    from ..render import compare_lines

    check((primary, *replicas))
    res = run_compare(logs_of([primary]), [logs_of([r]) for r in replicas])
    show(res, as_json, compare_lines)
    for line in damage(res):  # a damaged file: what it held is unknown
        click.echo(f"binlogkit: error: {line}", err=True)
    sys.exit(EXIT_DAMAGED if differs(res) or damage(res) else EXIT_OK)

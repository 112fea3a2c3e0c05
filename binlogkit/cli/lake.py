"""binlogkit lake: a mirror's commits (``history``) and its rows as of a GTID set / position or a
time (``show``) -> ``export.lake.look``."""

from __future__ import annotations

import click

from .exits import EXIT_USAGE, fail, fails, show as show_doc
from .options import Command, json_option

_FORMAT = click.option("--format", "fmt", type=click.Choice(["iceberg", "delta"]),
                       help="The table's format (default: Delta when WAREHOUSE/DB/T/_delta_log exists, else "
                            "Iceberg of WAREHOUSE/catalog.sqlite).")
_CATALOG = click.option("--catalog", help="iceberg: the catalog (default: catalog.sqlite in WAREHOUSE).")


@click.group("lake", context_settings={"help_option_names": ["-h", "--help"]})
def lake() -> None:
    """Look at the tables `binlogkit export --format iceberg|delta` wrote (offline: DuckDB's
    iceberg and delta extensions from their PyPI packages)."""


@lake.command("history", cls=Command)
@click.argument("warehouse", type=click.Path(exists=True, file_okay=False))
@click.argument("table", metavar="DB.T")
@_FORMAT
@_CATALOG
@json_option("Print the commits as JSON.")
@fails(EXIT_USAGE, os_errors=True)
def history(warehouse, table, fmt, catalog, as_json) -> None:
    """The commits of the table DB.T (or DB.T__changes), oldest first, each with the coordinates
    it records: the executed GTID state after its batch (MySQL: the GTID set; MariaDB: the
    position per domain), the batch's last GTID, file:position and commit time."""
    from ..export.lake.look import history as history_of, render_history, split_name

    db, t = split_name(table)
    show_doc(history_of(warehouse, db, t, fmt, catalog), as_json, render_history)


@lake.command("show", cls=Command)
@click.argument("warehouse", type=click.Path(exists=True, file_okay=False))
@click.argument("table", metavar="DB.T")
@click.option("--as-of-gtid", metavar="SET",
              help="The table as of this GTID state: MySQL a GTID set (uuid:1-20,uuid2:1-4; a single uuid:N means "
                   "uuid:1-N), MariaDB a position (D-S-N,...): the last commit whose recorded state it contains.")
@click.option("--as-of-time", metavar="TIME",
              help="The table as of this time (ISO 8601, UTC unless a zone is given): the last commit of a batch "
                   "committed at or before it.")
@click.option("--csv", "as_csv", is_flag=True, help="Every row as CSV (a header line, then the rows).")
@json_option("Every row as a JSON list of objects.")
@click.option("--limit", type=click.IntRange(min=0), help="At most N rows (by the table's first column).")
@_FORMAT
@_CATALOG
@fails(EXIT_USAGE, os_errors=True)
def show(warehouse, table, as_of_gtid, as_of_time, as_csv, as_json, limit, fmt, catalog) -> None:
    """The rows of the table DB.T, now or as of a GTID state or a time, ordered by its first
    column (a terminal shows DuckDB's table, cut to the first and last rows of a long one: --csv
    or --json print every row)."""
    import json

    from ..export.lake.look import show as show_rows, split_name
    from .exits import echo_line

    if as_of_gtid is not None and as_of_time is not None:
        fail("--as-of-gtid and --as-of-time: give one", EXIT_USAGE)
    if as_csv and as_json:
        fail("--csv and --json: give one", EXIT_USAGE)
    db, t = split_name(table)
    _version, rel = show_rows(warehouse, db, t, fmt=fmt, catalog=catalog, gtid=as_of_gtid, time=as_of_time,
                              limit=limit)
    if as_json:
        rows = rel.fetch_arrow_table().to_pylist()
        echo_line(json.dumps(rows, indent=1, default=str))
    elif as_csv:
        import csv
        import sys

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(rel.columns)
        for r in rel.fetchall():
            w.writerow(["" if v is None else v for v in r])
        sys.stdout.flush()
    else:
        echo_line(str(rel))

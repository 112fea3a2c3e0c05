"""binlogkit export: options -> ``export.export`` -> ``export.render.render``."""

from __future__ import annotations

import sys

import click

from .._optional import need
from .exits import EXIT_USAGE, fail, fails, show
from .options import (datetime_value, gtid_filters, gtids_value, inputs, json_option, key_options, output_option,
                      table_filters, tables_of, time_filters)


@click.command()
@inputs(exists=False)
@output_option("Dataset root: a folder, or an fsspec URL (s3://bucket/prefix). What an earlier export wrote "
               "there (db=*/, _schemas/, _statements/, _SUCCESS) is replaced; other files are left alone.",
               required=True)
@table_filters()
@time_filters()
@gtid_filters()
@click.option("--schema", "schema_file", type=click.Path(exists=True, dir_okay=False),
              help="CREATE TABLE statements (mariadb-dump --no-data, SHOW CREATE TABLE) giving column names, "
                   "signedness, character sets and ENUM/SET labels for tables whose table maps lack them "
                   "(binlog_row_metadata=MINIMAL).")
@click.option("--row-group-rows", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="Rows per Parquet row group (memory holds about one row group per open part).")
@json_option("Print the summary (as _SUCCESS holds it) as JSON.")
@key_options("inputs")
@fails(EXIT_USAGE, os_errors=True)
def export(inputs, output, database, tables, start_datetime, stop_datetime, include_gtids, exclude_gtids,
           schema_file, row_group_rows, as_json) -> None:
    """Write the committed row changes of INPUTS (files, .index files, folders) as a typed Parquet
    change table: a dataset per table, db=DB/table=T/date=YYYY-MM-DD/part-*.parquet.

    One row per row change: op (insert/update/delete), gtid, server_id, commit_time, file,
    offset, row_index, schema_version, then before_<column> and after_<column>, typed
    (integers at their width and signedness, DECIMAL, date/timestamp/duration, text as UTF-8,
    binary, ...; docs/export.md). A new schema version (ALTER TABLE) starts new files and a row
    in _schemas; statement-format DML and DDL go to _statements. Rolled back and partial
    transactions are not exported. _SUCCESS, written last, holds the summary: a killed export
    leaves none, and a rerun replaces the dataset.

    Exit codes: 0 clean; 1 damage, undecodable rows or a partial transaction (reported; the sound
    part is exported); 2 usage error or an input that cannot be read.
    """
    need("pyarrow", "binlogkit export", extra="export")
    from ..export import Filters, export as run_export, summary_exit_code
    from ..export.ddl import load
    from ..export.render import render

    if include_gtids and (start_datetime or stop_datetime):
        fail("give --start-datetime/--stop-datetime or --include-gtids, not both", EXIT_USAGE)
    filters = Filters(tables=tables_of(database, tables), start=datetime_value(start_datetime),
                      stop=datetime_value(stop_datetime), gtids=gtids_value(include_gtids), schema=load(schema_file),
                      exclude_gtids=gtids_value(exclude_gtids))
    try:
        summary = run_export(inputs, output, filters=filters, row_group_rows=row_group_rows)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    show(summary, as_json, render)
    sys.exit(summary_exit_code(summary))

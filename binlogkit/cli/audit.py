"""binlogkit audit: options -> ``audit.run_local`` (or the Spark job's ``run``) -> files and lines."""

from __future__ import annotations

import sys

import click

from .._optional import need
from .exits import EXIT_DAMAGED, EXIT_OK, EXIT_USAGE, fails, show
from .options import Command, OutputPath, check, jobs_option, inputs, json_option, key_options, output_option


@click.command(cls=Command)
@inputs()
@json_option("Findings and summary as one JSON document.")
@output_option("Also write findings.json, findings.parquet (with pyarrow), summary.json and report.html into "
               "this folder, or under this URL (s3://bucket/prefix: each object appears whole or not at all).",
               type=OutputPath(file_okay=False))
@jobs_option()
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="local: a process pool on this machine; spark: the spark-submit job in Spark local mode "
                   "(needs the 'spark' extra: pyspark, fsspec, pyarrow).")
@click.option("--live", "--may-be-active", "live", is_flag=True,
              help="A server may still be writing the last file of a series: its torn tail is a warning, "
                   "not an error.")
@click.option("--max-findings", type=click.IntRange(min=0),
              help="Show only the first N findings (the counts cover all; --output writes all); 0: all. "
                   "Default: all (local), 1000 (spark).")
@click.option("--max-series", type=click.IntRange(min=0),
              help="Show only the first N series' records (--output writes all); 0: all. "
                   "Default: all (local), 1000 (spark).")
@click.option("--report", "report", type=OutputPath(dir_okay=False),
              help="Also write a self-contained HTML page: a timeline of each series with its gaps and damage, "
                   "GTID coverage, the tables (opens offline). A path or a URL (s3://bucket/report.html).")
@key_options("inputs")
@fails(EXIT_USAGE, os_errors=True)
def audit(inputs, as_json, output, jobs, engine, live, max_findings, max_series, report) -> None:
    """Audit binlog / relay-log archives for anything missing, doubled or damaged.

    INPUTS are files or folders (searched recursively for NAME.NNNNNN files, compressed or not).
    Files are grouped into series (one server's binlogs, one connection's relay logs) and checked
    for missing files, broken Rotate and position chains, GTID gaps, duplicates and disorder,
    Incident events, partial transactions, torn events, checksum failures, encrypted files
    without their key (an error: they were not checked) or unknown content. A torn tail on the
    last file of a series may be a live server's: it fails the audit unless --live says the
    series may be active. Exit codes: 0 clean, 1 findings of severity error, 2 usage or I/O error.
    """
    check(inputs, missing_ok=True, recursive=True)  # a missing file is a finding
    if engine == "spark":
        need("pyspark", "audit --engine spark")
        from ..spark.jobs.audit import AuditOptions, run_here

        sys.exit(run_here(AuditOptions.of(inputs, output=output, report=report, as_json=as_json, live=live,
                                          max_findings=max_findings, max_series=max_series), jobs))
    from ..audit import run_local
    from ..audit.output import deliver
    from ..audit.render import lines

    show_progress = sys.stderr.isatty()

    def prog(done: int, total: int) -> None:
        sys.stderr.write(f"\raudit: {done}/{total} files")
        sys.stderr.flush()
    result = run_local(inputs, jobs=jobs, live=live, progress=prog if show_progress else None)
    if show_progress:
        sys.stderr.write("\n")
    result = deliver(result, output, report, max_findings=max_findings, max_series=max_series,
                     note=lambda text: click.echo(f"binlogkit: note: {text}", err=True))
    show(result, as_json, lines)
    sys.exit(EXIT_DAMAGED if result["counts"]["error"] else EXIT_OK)

"""binlogkit export: options -> ``export.export`` -> ``export.render.render``."""

from __future__ import annotations

import sys

import click

from .._optional import need
from .exits import EXIT_DAMAGED, EXIT_USAGE, fail, fails, show
from .options import (Command, datetime_value, gtid_filters, gtids_value, inputs, json_option, key_options,
                      output_option, table_filters, tables_of, time_filters)


@click.command(cls=Command)
@inputs(exists=False)
@output_option("Dataset root: a folder, or an fsspec URL (s3://bucket/prefix). What an earlier export wrote "
               "there (db=*/, _schemas/, _statements/, _SUCCESS) is replaced; other files are left alone.",
               required=True)
@table_filters()
@time_filters()
@gtid_filters()
@click.option("--schema", "schema_file", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="CREATE TABLE statements (mariadb-dump --no-data, SHOW CREATE TABLE) giving column names, "
                   "signedness, character sets and ENUM/SET labels for tables whose table maps lack them "
                   "(binlog_row_metadata=MINIMAL).")
@click.option("--row-group-rows", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="Rows per Parquet row group (memory holds about one row group per open part).")
@click.option("--format", "fmt", type=click.Choice(["parquet", "iceberg", "delta"]), default="parquet",
              show_default=True, help="parquet: the change dataset; iceberg / delta: a change table per source "
                                      "table (DB.T__changes), continued by a rerun (docs/lakehouse.md).")
@click.option("--mirror", is_flag=True, help="iceberg / delta: also a current-state table per source table with a "
                                               "primary key (DB.T), one commit per batch carrying its last GTID, "
                                               "file:position and commit time (time travel by GTID or time).")
@click.option("--catalog", help="iceberg: the catalog, a SQLite file (default: catalog.sqlite in the --output "
                                "folder) or a REST catalog's http(s):// URL.")
@click.option("--snapshot", "snapshot", type=click.Path(exists=True),
              help="--mirror: loaded first: a SQL dump (mariadb-dump / mysqldump --master-data=2 [--gtid], "
                   ".sql[.gz|.xz]) at the coordinates its head names, or a Parquet snapshot folder "
                   "(DB.T.parquet per table) with its coordinates by --from-gtid or --backup-info.")
@click.option("--from-gtid", help="Transactions inside this GTID position (the snapshot's or backup's: MariaDB "
                                  "gtid_binlog_pos D-S-N,..., MySQL gtid_executed) are in the tables already.")
@click.option("--backup-info", type=click.Path(exists=True, dir_okay=False),
              help="A mariabackup/xtrabackup binlog_info file (FILE POSITION GTID): the snapshot's coordinates.")
@click.option("--batch-transactions", type=click.IntRange(min=1), default=1000, show_default=True,
              help="iceberg / delta: source transactions per table commit (at most).")
@click.option("--series", metavar="NAME",
              help="Read only the files of this binlog series (NAME.NNNNNN) of the inputs: a folder holding a "
                   "primary's and a replica's binlogs, say. --mirror refuses inputs of several series without it.")
@click.option("--skip-statements", is_flag=True,
              help="--mirror: ignore statement-format row changes (binlog_format STATEMENT / MIXED) of mirrored "
                   "tables (counted in the summary) instead of stopping those tables' mirrors before them.")
@click.option("--follow", is_flag=True,
              help="iceberg / delta: after what INPUTS hold, keep applying what arrives in them (a folder "
                   "`binlogkit pull` is filling: whole committed transactions only) until SIGTERM / Ctrl-C, which "
                   "commit what is whole and stop (exit 0); a restart continues from the warehouse's checkpoint.")
@click.option("--commit-interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="--follow: commit what is pending at least this often (seconds).")
@click.option("--status-file", type=click.Path(dir_okay=False),
              help="--follow: this file is replaced with the follower's status as JSON (lag_seconds, last_gtid, "
                   "file, position, rows, rows_per_second, commits; with --host pull's state: pull) at most once a "
                   "second, at every commit and at the end.")
@click.option("--host", help="--follow: also run `binlogkit pull` from this primary into INPUTS (one folder): the "
                             "follower applies what pull has written (its folder is the durable buffer); pull's "
                             "client, trust rules and resume (docs/pull.md). Another server than the one the "
                             "warehouse was followed from (a failover to a GTID replica) is followed by GTID state, "
                             "into its own folder WAREHOUSE/_binlogkit_pull.server-ID; exit 1 if it lacks "
                             "transactions the mirror holds or purged some it lacks.")
@click.option("--pull-dir", type=click.Path(file_okay=False),
              help="--host: the folder pull writes when INPUTS are an archive of the primary's older binlogs (plain "
                   "or compressed; default WAREHOUSE/_binlogkit_pull): the mirror is built from the archive, then "
                   "continues with what pull writes, starting where the archive ends (docs/lakehouse.md). After a "
                   "failover: the new primary's folder (not the old one's).")
@click.option("--port", type=int, help="--host: the primary's port (default 3306).")
@click.option("--user", help="--host: a user with REPLICATION SLAVE.")
@click.option("--password-file", type=click.Path(exists=True, dir_okay=False),
              help="--host: a file whose first line is the password.")
@click.option("--server-id", type=int, help="--host: the server_id pull registers with (unique among replicas).")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="iceberg / delta: spark builds the tables on a Spark cluster (executors decode and fold by key, "
                   "the driver commits; docs/spark.md), up to the first schema change of a table exported, from "
                   "where the local engine continues.")
@click.option("--spark-master", metavar="URL", help="--engine spark: the master (default: local[*], or what "
                                                       "spark-submit configured).")
@json_option("Print the summary (as _SUCCESS holds it) as JSON.")
@key_options("inputs")
@fails(EXIT_USAGE, os_errors=True)
def export(inputs, output, database, tables, start_datetime, stop_datetime, include_gtids, exclude_gtids,
           schema_file, row_group_rows, fmt, mirror, catalog, snapshot, from_gtid, backup_info, batch_transactions,
           series, skip_statements, follow, commit_interval, status_file, host, pull_dir, port, user, password_file,
           server_id, engine, spark_master, as_json) -> None:
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
    part is exported), or a mirror stopped (a statement it cannot apply: named); 2 usage error or an
    input that cannot be read.
    """
    if fmt == "parquet":
        _system_allocator()  # before pyarrow loads: its C++ default pool is chosen then
    need("pyarrow", "binlogkit export", extra="export")
    if fmt == "parquet" and (mirror or catalog or snapshot or from_gtid or backup_info):
        fail("--mirror, --catalog, --snapshot, --from-gtid and --backup-info go with --format iceberg or delta",
             EXIT_USAGE)
    if status_file and not follow:
        fail("--status-file goes with --follow", EXIT_USAGE)
    pull_args = [a for k, v in (("--host", host), ("--port", port), ("--user", user),
                                ("--password-file", password_file), ("--server-id", server_id))
                 if v is not None for a in (k, str(v))]
    if pull_dir is not None and not pull_args:
        fail("--pull-dir goes with --follow --host", EXIT_USAGE)
    if pull_args and not follow:
        fail("--host, --port, --user, --password-file and --server-id go with --follow", EXIT_USAGE)
    if pull_args and (host is None or server_id is None):
        fail("--follow from a primary needs --host and --server-id (pull's; --user and --password-file as pull "
             "takes them)", EXIT_USAGE)
    if follow and fmt == "parquet":
        fail("--follow goes with --format iceberg or delta", EXIT_USAGE)
    if follow and (snapshot or from_gtid or backup_info):
        fail("--follow starts from the archive or from its checkpoint: load a snapshot with a plain export first, "
             "then follow", EXIT_USAGE)
    if skip_statements and not mirror:
        fail("--skip-statements goes with --mirror (statement-format changes stop a mirror, never a change table)",
             EXIT_USAGE)
    if spark_master and engine != "spark":
        fail("--spark-master goes with --engine spark", EXIT_USAGE)
    if engine == "spark":
        if fmt == "parquet" or follow:
            fail("--engine spark builds iceberg / delta tables from an archive (--format iceberg|delta, no --follow; "
                 "the spark-submit export job writes Parquet)", EXIT_USAGE)
        if snapshot or from_gtid or backup_info or start_datetime or stop_datetime or include_gtids or exclude_gtids:
            fail("--engine spark takes the whole archive (--table / --database, --series, --skip-statements, "
                 "--schema): --snapshot, --from-gtid, --backup-info and the time and GTID filters go with the local "
                 "engine", EXIT_USAGE)
        _spark(inputs, output, fmt, mirror, catalog, tables_of(database, tables), series, skip_statements,
               spark_master, as_json, schema_file)
    from ..export import Filters, export as run_export, summary_exit_code
    from ..export.ddl import load
    from ..export.render import render

    if include_gtids and (start_datetime or stop_datetime):
        fail("give --start-datetime/--stop-datetime or --include-gtids, not both", EXIT_USAGE)
    filters = Filters(tables=tables_of(database, tables), start=datetime_value(start_datetime),
                      stop=datetime_value(stop_datetime), gtids=gtids_value(include_gtids), schema=load(schema_file),
                      exclude_gtids=gtids_value(exclude_gtids))
    if follow:
        _follow(inputs, output, fmt, mirror, filters, catalog, batch_transactions, commit_interval, as_json, series,
                skip_statements, status_file, pull_args, pull_dir, (host, port or 3306, user, password_file))
    if fmt != "parquet":
        _lake(inputs, output, fmt, mirror, filters, catalog, snapshot, from_gtid, backup_info, batch_transactions,
              as_json, series, skip_statements)
    from ..reading.progress import watching

    try:
        with watching(inputs, "export"):
            summary = run_export(inputs, output, filters=filters, row_group_rows=row_group_rows, series=series)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    show(summary, as_json, render)
    sys.exit(summary_exit_code(summary))


def _lake(inputs, output, fmt, mirror, filters, catalog, snapshot, from_gtid, backup_info, batch_transactions,
          as_json, series=None, skip_statements=False) -> None:
    """``export.lake.export_lake`` with the options; exits."""
    from ..errors import ArchiveGap
    from ..export.lake import export_lake
    from ..export.lake.mirror import exit_code, render

    start: tuple[str | None, int] = (None, 0)
    if backup_info:
        from ..export.lake.snapshot import backup_info as read_info

        file, pos, gtid = read_info(backup_info)
        start, from_gtid = (file, pos), from_gtid or gtid or None
    elif snapshot and not from_gtid:
        from ..export.lake.dump import dump_point, is_dump

        if is_dump(snapshot):  # a dump names its own coordinates
            point = dump_point(snapshot)
            start, from_gtid = (point.file, point.position), point.gtids
    from ..reading.progress import watching

    try:
        with watching(inputs, f"export --format {fmt}"):
            summary = export_lake(inputs, output, fmt=fmt, mirror=mirror, filters=filters, catalog=catalog,
                                  batch_transactions=batch_transactions, from_gtid=from_gtid, snapshot=snapshot,
                                  snapshot_at=start, series=series, skip_statements=skip_statements)
    except ArchiveGap as exc:
        show(exc.summary, as_json, render)  # type: ignore[attr-defined]
        fail(str(exc), EXIT_DAMAGED)
    show(summary, as_json, render)
    sys.exit(exit_code(summary))


def _spark(inputs, output, fmt, mirror, catalog, tables, series, skip_statements, master, as_json,
           schema_files=()) -> None:
    """``spark.jobs.mirror.run`` in a Spark session of this process; exits."""
    from ..errors import ArchiveGap

    need("pyspark", "binlogkit export --engine spark", extra="spark")
    from ..spark.jobs import mirror as job
    from ..spark.start import Starting

    schema = job.schema_text(schema_files)
    # Spark starts once the inputs are checked (a bad one: refused at once), while the driver plans the archive
    spark = Starting(master, "binlogkit-mirror", later=True)
    try:
        summary = job.run(spark, inputs, output, fmt=fmt, mirror=mirror, catalog=catalog, tables=tables,
                          series=series, skip_statements=skip_statements, schema=schema)
    except ArchiveGap as exc:
        show(exc.summary, as_json, job.render)  # type: ignore[attr-defined]
        fail(str(exc), EXIT_DAMAGED)
    finally:
        spark.stop()
    show(summary, as_json, job.render)
    sys.exit(job.exit_code(summary))


def _follow(inputs, output, fmt, mirror, filters, catalog, batch_transactions, commit_interval, as_json, series,
            skip_statements, status_file=None, pull_args=(), pull_dir=None, primary=None) -> None:
    """``export.lake.follow.follow_lake`` with the options; exits. On a terminal, the status
    line is rewritten on stderr after every look. ``pull_args``: ``binlogkit pull`` runs as a
    child (its stderr is this command's), stopped when the follower stops; a pull that ends by
    itself stops the follower (exit 1 unless pull's was 0; a primary that no longer holds the
    binlog pull asks for is a gap, named). Pull writes into the input folder, or, when INPUTS
    are an archive (``handover.pull_folder``), into its own folder, starting where the archive
    ends (``handover.pull_start``) unless that folder holds binlogs already (pull resumes).
    A primary other than the one the checkpoint was written from (a failover) is followed by
    GTID state (``_failover``)."""
    import functools
    import os
    import subprocess
    import threading
    import time
    from ..errors import ArchiveGap
    from ..export.lake.feed import PullState
    from ..export.lake.follow import follow_lake
    from ..export.lake.mirror import exit_code, render
    from ..pull.render import line as pull_line

    line = None
    if sys.stderr.isatty():
        def line(text: str) -> None:
            sys.stderr.write("\r\x1b[K" + text)
            sys.stderr.flush()
    feeder = None
    pull_state = None
    relaying: list = []
    buffer = None
    start = None
    said: list[str] = []
    source, cross, held = None, False, None
    if pull_args:
        from ..export.changes import checked_inputs
        from ..export.lake.follow import read_checkpoint
        from ..export.lake.handover import holds_binlogs, pull_folder, pull_start

        names = [getattr(i, "name", str(i)) for i in inputs]
        folder, archive = pull_folder(names, pull_dir, output)
        if not archive and len(names) != 1:
            fail("--follow --host: give one local folder as the input (pull writes the primary's binlogs there), "
                 "or an archive and --pull-dir", EXIT_USAGE)
        extra: list[str] = []
        ck = read_checkpoint(output)
        source, new = _failover(ck, folder, pull_dir, output, fmt, catalog, primary, as_json)
        if new is not None:
            cross, folder, held = new
            inputs, archive = [folder], False
            if ck is not None and not holds_binlogs(folder):
                extra = ["--gtid", ck["gtid_state"]]
        if archive:
            buffer = folder
            if not holds_binlogs(folder):
                start = pull_start(checked_inputs(inputs, series=series, one_series=True), read_checkpoint(output))
                extra = ["--start-file", start]
        os.makedirs(folder, exist_ok=True)
        # pull's reports as JSON lines on its stdout: its state goes into the follower's status
        # (reconnecting: why, since when, the next try), each said on stderr as pull says it
        feeder = subprocess.Popen([sys.executable, "-m", "binlogkit", "pull", *pull_args, *extra, "--dir", folder,
                                   "--json"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True, preexec_fn=functools.partial(_with_parent, os.getpid()))
        pulling = PullState()
        pull_state = lambda: pulling.doc     # noqa: E731

        def relay(pipe=feeder.stderr) -> None:    # pull's stderr to ours, its last error kept
            for raw in iter(pipe.readline, b""):
                text = raw.decode("utf-8", "replace")
                if text.startswith("binlogkit: error: "):
                    said.append(text[len("binlogkit: error: "):].strip())
                sys.stderr.write(text)
                sys.stderr.flush()

        def reports(pipe=feeder.stdout, cfg=_PullWhere(pull_args)) -> None:   # pull's reports: its state
            for raw in iter(pipe.readline, b""):
                text = raw.decode("utf-8", "replace")
                ev = pulling.take_line(text, time.time())
                said_as = pull_line(ev, cfg, as_json=False, tty=False) if ev is not None else (text.rstrip("\n"), True)
                if said_as is not None:
                    sys.stderr.write(said_as[0] + "\n")
                    sys.stderr.flush()
        relaying = [threading.Thread(target=relay, daemon=True), threading.Thread(target=reports, daemon=True)]
        for t in relaying:
            t.start()
    try:
        summary = follow_lake(inputs, output, fmt=fmt, mirror=mirror, filters=filters, catalog=catalog,
                              batch_transactions=batch_transactions, commit_interval=commit_interval, series=series,
                              skip_statements=skip_statements, status_file=status_file, status_line_to=line,
                              feeder=feeder, buffer=buffer, source=source, cross=cross, pull_state=pull_state)
    except ArchiveGap as exc:
        show(exc.summary, as_json, render)  # type: ignore[attr-defined]
        fail(str(exc), EXIT_DAMAGED)
    for t in relaying:
        t.join(10)
    if line is not None:
        sys.stderr.write("\n")
    if summary.get("pull_exit") and said and "error 1236" in said[-1]:
        detail = (f"the primary no longer holds {start}, the binlog after the archive's last one" if start else
                  f"the new primary no longer holds the binlogs after the mirror's GTID state {held}" if held else
                  f"the primary no longer holds the binlog after those in {buffer or 'the pull folder'}") + \
            " (pull: error 1236)"
        summary["gap"] = {"kind": "purged_on_primary", "file": start, "detail": detail,
                          "place": start or "pull's next binlog"}
        show(summary, as_json, render)
        fail(f"archive gap (purged_on_primary: {detail}): the tables hold every change before it; the follower "
             "stopped", EXIT_DAMAGED)
    show(summary, as_json, render)
    if summary.get("pull_exit"):
        fail(f"binlogkit pull stopped (exit {summary['pull_exit']}): the tables hold what it had written; the "
             "follower stopped", EXIT_DAMAGED)
    sys.exit(exit_code(summary))


def _failover(ck, folder, pull_dir, output, fmt, catalog, primary, as_json):
    """A warehouse followed from one primary, now pointed at another (a failover; or already
    following it after one): (its server_id, (whether this run crosses over to it, pull's folder
    for it, the mirror's GTID state)), else (its server_id or None, None). A new primary lacking transactions the mirror
    holds, or that purged some it lacks, stops here: exit 1, named (``failover.check_primary``)."""
    import json as _json
    import os

    from ..export.lake.failover import BY_GTID, check_primary, held_by, previous_source, probe, pull_dir_for
    from ..export.lake.mirror import open_sink
    from ..pull import PullError

    if ck is None or not ck.get("gtid_state"):
        return None, None
    host, port, user, password_file = primary
    password = ""
    if password_file:
        with open(password_file, encoding="utf-8") as fh:
            password = fh.readline().rstrip("\r\n")
    try:
        now = probe(host, port, user or "", password)
    except (PullError, OSError):
        return None, None   # pull, started next, says why it cannot connect
    before = previous_source(ck, folder)
    if not ck.get(BY_GTID) and (before is None or before == now["server_id"]):
        return now["server_id"], None
    cross = before != now["server_id"]
    held = held_by(open_sink(fmt, output, catalog), ck)
    bad = check_primary(held, now)
    if bad is not None:
        if as_json:
            print(_json.dumps({"follow": True, "gap": bad}, indent=1))
        fail(f"archive gap ({bad['kind']}: {bad['detail']}): the tables hold every change the mirror's GTID state "
             f"{held} names; the follower did not start", EXIT_DAMAGED)
    new = pull_dir or pull_dir_for(output, now["server_id"])
    if cross and os.path.realpath(new) == os.path.realpath(folder):
        fail(f"--pull-dir {new} holds the binlogs of the primary before the failover (server_id {before}): give "
             f"the new primary's folder, or leave --pull-dir out ({pull_dir_for(output, now['server_id'])})",
             EXIT_USAGE)
    return now["server_id"], (cross, new, held)


class _PullWhere:
    """What ``pull.render.line`` reads of pull's settings to say its start: the primary given to
    the follower (``pull_args``) and the TLS mode (pull's default: the follower passes none)."""

    def __init__(self, pull_args) -> None:
        from ..pull.auth import TlsOptions

        opts = dict(zip(pull_args[::2], pull_args[1::2]))
        self.host, self.port = opts.get("--host"), opts.get("--port", "3306")
        self.tls = TlsOptions()


def _with_parent(parent: int) -> None:
    """In the pull child, before it runs: SIGTERM when the follower dies (Linux's parent-death
    signal), so that a follower killed with SIGKILL leaves no pull behind holding its folder's
    lock (pull stops on SIGTERM as on its own: flushed, fsynced). Elsewhere nothing."""
    import ctypes
    import os
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:      # the follower died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)


def _system_allocator() -> None:
    """Arrow's buffers from the C library's allocator in this process (unless
    ``ARROW_DEFAULT_MEMORY_POOL`` chooses): the row groups' buffers are freed and taken again
    every row group, and pyarrow's default mimalloc hands freed pages back to the kernel, which
    zeroes them again on the next fault; the system allocator keeps them. On the 1 GB bench binlog,
    best of 4 interleaved runs in three sessions: 3.17-3.43 s of CPU against 3.63-4.02 s. The
    bytes written are the same.

    Called before pyarrow is imported: Arrow's C++ default pool, which the Parquet writer's own
    page, encoder and compression buffers come from (pyarrow's ``set_memory_pool`` does not
    reach them), is chosen by ``ARROW_DEFAULT_MEMORY_POOL`` when the library loads; it is set
    for that import only (child processes do not inherit it). Where pyarrow is loaded already (an
    in-process caller), pyarrow's own default pool is set, as far as that reaches."""
    import os
    import sys

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    if "pyarrow.lib" not in sys.modules:
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
        try:
            import pyarrow  # noqa: F401  (the pool is chosen now)
        except ImportError:
            return  # (``need`` says what to install)
        finally:
            del os.environ["ARROW_DEFAULT_MEMORY_POOL"]
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())

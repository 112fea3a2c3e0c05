"""binlogkit pull: options -> ``pull.settings.config`` -> ``pull.pull`` -> ``pull.render.line``.

The options are declared here, once; ``pull_options.py`` is generated from them (``make lean-cli``)
for ``entry.py``, which parses a plain ``binlogkit pull`` without click; both call ``pull_run.run``."""

from __future__ import annotations

import click

from .options import Command, json_option
from .pull_run import run


@click.command(cls=Command)
@click.option("--host", help="The primary (default: 127.0.0.1, or host= in --defaults-file).")
@click.option("--port", type=int, help="Its port (default 3306, or port= in --defaults-file).")
@click.option("--user", help="A user with REPLICATION SLAVE (or user= in --defaults-file).")
@click.option("--password-file", type=click.Path(exists=True, dir_okay=False),
              help="A file whose first line is the password (never give it on the command line).")
@click.option("--defaults-file", type=click.Path(exists=True, dir_okay=False),
              help="A mysql option file: user, password, host, port, ssl-* from its [client] and [binlogkit] "
                   "sections. MYSQL_PWD is read too.")
@click.option("--ssl-mode", type=click.Choice(["DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"],
                                              case_sensitive=False),
              help="TLS as the mysql clients: PREFERRED (default) when offered, unverified; REQUIRED or refuse; "
                   "VERIFY_CA checks the chain against --ssl-ca; VERIFY_IDENTITY the host name too. "
                   "Default VERIFY_CA when --ssl-ca is given.")
@click.option("--ssl-ca", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s), PEM.")
@click.option("--ssl-cert", type=click.Path(exists=True, dir_okay=False), help="Client certificate, PEM.")
@click.option("--ssl-key", type=click.Path(exists=True, dir_okay=False), help="Client certificate's key, PEM.")
@click.option("--server-public-key", type=click.Path(exists=True, dir_okay=False),
              help="The server's RSA public key (PEM): caching_sha2/sha256_password send the password encrypted "
                   "to it when there is no TLS.")
@click.option("--get-server-public-key", is_flag=True,
              help="Without TLS, ask the server for its RSA key (protects from listeners, not from a fake server).")
@click.option("--server-id", type=int, required=True, help="The server_id this receiver registers with (unique among replicas).")
@click.option("-o", "--output", "--dir", "directory", required=True, type=click.Path(file_okay=False),
              help="Where the copies go (created if absent); run again with the same folder to resume.")
@click.option("--start-file", help="On an empty folder: the primary's binlog to start with (default: its oldest).")
@click.option("--start-position", type=int, help="Only 4: files are copied whole, from their first byte.")
@click.option("--gtid", help="On an empty folder: start with the binlog holding the first transaction the primary should send: "
                   "MariaDB, after this GTID position (0-1-100,1-2-7); MySQL, not in this GTID set (the set a replica "
                   "holds, as auto-positioning sends it).")
@click.option("--semisync", is_flag=True, help="Be a semisync replica: acknowledge each transaction once its file is fsynced.")
@click.option("--sync", "sync_mode", default="trx", show_default=True,
              help="fsync: trx (every read that completed a transaction), N (every N events), off (rotation and exit "
                   "only), none (never: a crash of the machine may take any unsynced part of any file, see "
                   "docs/pull.md; not with --semisync).")
@click.option("--until-end", is_flag=True, help="Stop at the end of the primary's last binlog (non-blocking dump).")
@click.option("--heartbeat", type=float, default=1.0, show_default=True, help="Heartbeat period asked of the primary, seconds.")
@click.option("--read-timeout", type=click.FloatRange(min=0.5), default=10.0, show_default=True,
              help="Seconds the primary may take to greet, log in, answer each query (the dump itself is dead after "
                   "3 heartbeat periods, at least 5 s, with nothing received).")
@click.option("--max-event-size", default="1G", show_default=True, metavar="BYTES",
              help="Refuse an event (continued packets) larger than this (K, M, G suffixes; at least 16M); larger "
                   "events are streamed to disk, never held whole.")
@click.option("--max-reconnects", type=click.IntRange(min=0),
              help="Failed reconnects in a row before giving up (default: 10 with --until-end, no limit otherwise).")
@json_option("Status lines as JSON objects on stdout.")
def pull(as_json, **options) -> None:
    """Copy a primary's binlogs live over the replication protocol into DIR: the primary's own
    file names, byte for byte, with an index; crash-safe and resumable.

    Registers as a replica (COM_REGISTER_SLAVE, COM_BINLOG_DUMP). Runs until SIGINT/SIGTERM
    (then flushes, fsyncs and exits 0), or with --until-end until the primary's last event.
    The password never goes on the wire readable: a server asking for it in clear text
    (mysql_clear_password, dialog) or for caching_sha2/sha256 full authentication without TLS
    (and without --server-public-key / --get-server-public-key) is refused, exit 2.

    Run again on the same DIR: the torn tail or partial transaction a crash left is cut and the
    pull asks for exactly the next byte. A dropped connection is retried with backoff. With
    --semisync a transaction is acknowledged only after the file holding its commit is fsynced.

    Exit codes: 0 done (stopped or at the end), 1 a damaged event received (CRC32), 2 refused
    (login, purged binlog — error 1236 —, server id in use, a folder of another primary, lock held;
    a server that sends what no primary sends: a file name with '/' or a NUL, an event past
    --max-event-size, a LOCAL INFILE request; no answer within --read-timeout; --max-reconnects
    failed in a row). See "Trust" in docs/pull.md.
    """
    run(as_json, **options)

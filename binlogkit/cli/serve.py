"""binlogkit serve: options -> ``serve.Settings`` -> ``serve.Server`` (runs until SIGINT/SIGTERM)."""

from __future__ import annotations

import signal
import sys

import click

from ..errors import BinlogError
from .exits import EXIT_USAGE, fail, fail_on
from .options import Command, inputs, key_options


@click.command(cls=Command)
@inputs()
@click.option("--port", type=click.IntRange(0, 65535), required=True, help="The port to listen on (0: any free one, printed).")
@click.option("--bind", default="127.0.0.1", show_default=True,
              help="The address to listen on. Anything but loopback needs --ssl-cert/--ssl-key (or --allow-cleartext).")
@click.option("--user", required=True, help="The user replicas log in as.")
@click.option("--password-file", type=click.Path(exists=True, dir_okay=False), required=True,
              help="A file whose first line is that user's password (never on the command line; never printed).")
@click.option("--server-id", type=click.IntRange(1, 0xFFFFFFFF), default=1, show_default=True,
              help="serve's own server_id (replicas must have another).")
@click.option("--heartbeat", type=click.FloatRange(min=0.05), default=1.0, show_default=True,
              help="Heartbeat period at the end of the archive, seconds, when the replica asks for none.")
@click.option("--ssl-cert", type=click.Path(exists=True, dir_okay=False), help="Server certificate, PEM (TLS offered).")
@click.option("--ssl-key", type=click.Path(exists=True, dir_okay=False), help="Its private key, PEM.")
@click.option("--require-tls", is_flag=True, help="Refuse a login outside TLS.")
@click.option("--allow-cleartext", is_flag=True, help="Listen beyond loopback without TLS.")
@click.option("--max-connections", type=click.IntRange(min=1), default=16, show_default=True,
              help="Connections at once; the next is refused with error 1040.")
@click.option("--timeout", type=click.FloatRange(min=1), default=30.0, show_default=True,
              help="Seconds a client may take to send each packet before its dump, and to take each one sent.")
@key_options("inputs")
def serve(inputs, port, bind, user, password_file, server_id, heartbeat, ssl_cert, ssl_key, require_tls,
          allow_cleartext, max_connections, timeout) -> None:
    """Be the primary of real MySQL / MariaDB replicas, fed from an archive of binlogs.

    INPUTS: binlog files, folders (a `binlogkit pull` folder, followed as it grows), .index
    files, compressed archives, s3:// prefixes. Replicas log in with --user and the password of
    --password-file (mysql_native_password, or caching_sha2_password for a MySQL archive), and
    replicate by file/position or by GTID (MariaDB MASTER_USE_GTID, MySQL SOURCE_AUTO_POSITION).
    Runs until SIGINT or SIGTERM; one line per connection on stderr.
    """
    from ..serve import Server, Settings
    from ..serve.tls import check_listener, server_context

    if bool(ssl_cert) != bool(ssl_key):
        fail("--ssl-cert and --ssl-key go together", EXIT_USAGE)
    if require_tls and not ssl_cert:
        fail("--require-tls needs --ssl-cert and --ssl-key", EXIT_USAGE)
    try:
        check_listener(bind, bool(ssl_cert), allow_cleartext)
        with open(password_file, "rb") as fh:
            password = fh.readline().rstrip(b"\r\n")
        ctx = server_context(ssl_cert, ssl_key) if ssl_cert else None
        srv = Server(Settings(list(inputs), user, password, bind=bind, port=port, server_id=server_id,
                              heartbeat=heartbeat, timeout=timeout, max_connections=max_connections, tls=ctx,
                              require_tls=require_tls),
                     on_log=lambda line: click.echo(f"binlogkit serve: {line}", err=True))
        bound = srv.start()
    except BinlogError as exc:
        fail_on(exc, EXIT_USAGE)
    except OSError as exc:
        fail(f"cannot listen on {bind}:{port}: {exc.strerror or exc}", EXIT_USAGE)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: srv.stop())
    h = srv.head
    click.echo(f"binlogkit serve: listening on {bind}:{bound} as a {h.flavor.value if h else '?'} primary "
               f"({h.version if h else '?'}, binlog_checksum {'CRC32' if h and h.crc else 'NONE'}, server_id {server_id}, "
               f"{'TLS' if ctx else 'no TLS'})", err=True)
    sys.stderr.flush()
    srv.run()


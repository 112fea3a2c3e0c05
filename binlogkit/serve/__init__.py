"""``binlogkit serve``: a binlog server. Real MySQL and MariaDB replicas connect to it as to their
primary and replicate from an archive of binlogs (plain, compressed, encrypted, ``s3://``, a
folder ``binlogkit pull`` is filling).

A command is a room: the pure pieces apart from the socket loop::

    wire      the server side of the client/server protocol: greeting, login check, OK/ERR/EOF,
              result sets (framing and scrambles shared with ``pull``, the client side)
    queries   the queries a replica sends before its dump, answered
    stream    the dump requests parsed, the artificial events, where a GTID dump starts
    semisync  the semisync header, which events ask for an ack, the replica's acks read back
    archive   the archive's files, heads, GTIDs and events (the only file I/O)
    server    the socket loop: a thread per connection, bounds, the dump with heartbeats
"""

from __future__ import annotations

from .server import Server, Settings

__all__ = ["Server", "Settings"]

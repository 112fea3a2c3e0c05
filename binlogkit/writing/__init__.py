"""The writing layer: the only code that changes files in a server's directories.

::

    safeio.py   the primitives: one directory handle, a lock, no links, exclusive temporary
                files, verified backups, atomic replace, leftovers of an interrupted run
    writer.py   ``BinlogAppender`` (append events the way the server writes them) and
                ``record_incident`` (an Incident event and a Rotate, through safeio)

Every command that writes (recover, incident, flashback, export, audit's outputs, pull's folder,
the report, and ``storage.write_atomic`` for local paths) goes through ``safeio``.
"""

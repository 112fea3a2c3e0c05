"""The reading layer: every input reaches binlogkit through it.

Layers, lowest first (each imports only the ones above it in this list)::

    names        compressed suffixes, the binlog / relay log-name rule, .index files
    storage      object-storage URLs (fsspec)            compression   archives as streams
    files        a path or URL -> a read-only byte stream; paths -> the files they stand for
    crc, format  the CRC32 rule; the Format in force (the one FDE -> Format step)
    framing      the one framing loop: Frame records with their Format attached
    source       the one opener: ``Input`` (path or URL, compression, keys, verify) and
                 ``Input.frames()``; containers (a MySQL-encrypted file) unwrapped in one place
    reader       RawEvent values             scan      verdicts (``verify``)
    registry, formats, events, decoder       decoding: pure, one event at a time
    fastdecode   the C loop over plain inputs, behind ``source``'s opener

Nothing is imported here: ``import binlogkit.reading.source`` and friends name what they use.
"""

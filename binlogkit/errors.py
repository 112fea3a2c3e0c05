"""The one exception tree of binlogkit.

::

    BinlogError                      every error binlogkit raises on purpose
    ├── FormatError                  bytes that do not follow the binlog format
    │   ├── BadMagicError            file does not start with the binlog magic
    │   ├── NoFormatDescriptionError the first event is not a Format_description (nor Start_v3)
    │   ├── TruncatedEventError      an event runs past the end of the file (torn)
    │   ├── EventSizeError           event_size smaller than a header, or absurd
    │   ├── BodyLengthError          a body ran short of, or left bytes over, its window
    │   ├── UnsupportedFormatError   a format we recognise but cannot read (v1/v3, MariaDB 12.3's
    │   │                            InnoDB-stored binlog .ibb, PARTIAL_ROW_DATA events)
    │   ├── GtidIndexError           a MariaDB GTID index (.idx) that does not read
    │   ├── CompressionError         a compressed archive (.xz/.gz/.bz2) that is corrupt or cut
    │   │                            short (names the decompressed offset reached)
    │   └── DecryptionError          an encrypted event that no key/cipher makes sound
    │                                (wrong key, or a damaged event)
    ├── KeyRequiredError             an encrypted file and no key for it (names key id, version)
    ├── KeyFileError                 a key file / keyring / secret that cannot be used
    ├── ChecksumError                CRC32 of an event does not match its trailer
    ├── GtidError                    GTID text that does not parse, or an impossible operation
    ├── WriteRefused                 a writer refused before changing anything (server running,
    │                                lock held, a link, a backup that could not be made...)
    ├── NotRegularFileError          an input that is a FIFO, a device, a socket... (usage, exit 2)
    ├── UsageError                   an argument that names no log, a log an index lists that is
    │                                missing, options that do not go together (exit 2)
    ├── ArchiveGap                   a lakehouse mirror reached a hole in the archive (missing
    │                                file, GTID gap): applied up to it, stopped there (exit 1)
    ├── StorageError                 object storage (an fsspec URL) refused or failed: no such
    │                                bucket / key, access denied, endpoint down (names the URL)
    ├── PartialWrite                 a writer's step failed after changes began: the backup is
    │                                whole, the journal says what was done, a rerun finishes it
    ├── LabError                     the real-server lab could not do what was asked
    └── PullError                    (binlogkit.pull.protocol) pull cannot go on: the primary
        │                            refused, the folder is another primary's...     exit 2
        ├── ProtocolError            a stream that breaks the protocol (retried)
        ├── ConnectionLost           dropped, or silent past the timeouts (retried)
        ├── HostileServer            what no primary sends: a file name that is not a plain
        │                            base name, an event past --max-event-size, a LOCAL
        │                            INFILE request (never retried)
        └── Stopped                  a signal while waiting for the server (not a failure)

Context (file, offset, event type, field path) is attached where it is known, usually at
the boundary: the reader knows file and offset, a codec knows the field. ``str()`` of any
error names all of it, so the CLI can print it as it is.
"""

from __future__ import annotations


class BinlogError(Exception):
    """Base of every error binlogkit raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        offset: int | None = None,
        event_type: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.offset = offset
        self.event_type = event_type
        self.field = field

    def with_context(self, **ctx: object) -> "BinlogError":
        """Fill in context that is not set yet (the boundary adds what it knows)."""
        for key, value in ctx.items():
            if getattr(self, key, None) is None and value is not None:
                setattr(self, key, value)
        return self

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.event_type is not None:
            where.append(f"event {self.event_type}")
        if self.field is not None:
            where.append(f"field {self.field}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class FormatError(BinlogError):
    """Bytes that do not follow the binlog format."""


class BadMagicError(FormatError):
    """The file does not start with the 4-byte binlog magic ``\\xfebin``."""


class NoFormatDescriptionError(FormatError):
    """The first event is not a Format_description (nor a v3 Start): nothing after can be trusted."""


class TruncatedEventError(FormatError):
    """An event's declared size runs past the end of the file: a torn event."""


class EventSizeError(FormatError):
    """event_size is smaller than the common header (or than header + checksum)."""


class BodyLengthError(FormatError):
    """A body ran short of its window, or left bytes over in it."""


class UnsupportedFormatError(FormatError):
    """A format we recognise but cannot read: v1/v3 legacy files, encrypted files."""


class GtidIndexError(FormatError):
    """A MariaDB GTID index file (``<binlog>.idx``) that does not read: bad magic, a newer
    major version, a page failing its CRC32, a record running past its node."""


class CompressionError(FormatError):
    """A compressed archive whose stream does not decompress: corrupt data, a bad CRC, or cut
    short before its end marker. ``decompressed`` is how many bytes came out before it failed;
    ``offset`` / ``event_type`` (added by the framing loop) name the event being read."""

    def __init__(self, message: str, *, decompressed: int | None = None, **ctx):
        super().__init__(message, **ctx)
        self.decompressed = decompressed


class DecryptionError(FormatError):
    """An encrypted event that does not decrypt to a sound event: wrong key, or damaged."""


class KeyRequiredError(BinlogError):
    """The file is encrypted and no key for it was given: names the key id and version needed
    and the option that gives it. A usage problem (exit 2), not damage. ``key_id`` is an int for
    MariaDB (file_key_management) and the keyring's text id for MySQL (binlog_encryption)."""

    def __init__(self, message: str, *, key_id: int | str | None = None, key_version: int | None = None, **ctx):
        super().__init__(message, **ctx)
        self.key_id = key_id
        self.key_version = key_version


class KeyFileError(BinlogError):
    """A key file, keyring or secret that cannot be read or used. Never quotes key material."""


class ChecksumError(BinlogError):
    """The CRC32 of an event does not match the 4 bytes that end it."""

    def __init__(self, message: str, *, expected: int | None = None, actual: int | None = None, **ctx):
        super().__init__(message, **ctx)
        self.expected = expected
        self.actual = actual


class GtidError(BinlogError, ValueError):
    """GTID, GTID set or GTID position text that does not parse; ``part`` is the culprit."""

    def __init__(self, message: str, *, part: str | None = None, **ctx):
        super().__init__(message if part is None else f"{message}: {part!r}", **ctx)
        self.part = part


class LabError(BinlogError):
    """The real-server lab could not do what was asked (port in use, server failed...)."""


class WriteRefused(BinlogError):
    """A command that writes refused before changing anything: nothing was written."""


class PartialWrite(BinlogError):
    """A writing step failed after the first change. The backup holds every original (verified),
    the journal names the steps done; running the same command again finishes the work."""

    def __init__(self, message: str, *, backup: str | None = None, done: list[str] | None = None, **ctx):
        super().__init__(message, **ctx)
        self.backup = backup
        self.done = list(done or [])


class NotRegularFileError(BinlogError):
    """An input that is not a regular file (a FIFO, a character or block device, a socket, a
    folder where a log was expected): refused before anything is read, since reading it could
    block for ever or read nothing. A usage error (exit 2), not damage; ``what`` says what it is."""

    def __init__(self, message: str, *, what: str | None = None, **ctx):
        super().__init__(message, **ctx)
        self.what = what


class UsageError(BinlogError):
    """Inputs or options a command cannot use: an argument that stands for no binlog or relay
    log, a log an index lists that does not exist, options that do not go together (exit 2)."""


class ArchiveGap(BinlogError):
    """A lakehouse mirror reached a hole in the archive (the audit's missing file, rotate
    mismatch, position or GTID gap): the tables hold every change before it; ``file`` and
    ``offset`` name the place (exit 1)."""


class StorageError(BinlogError):
    """Object storage refused or failed (no such bucket or key, access denied, endpoint down);
    ``file`` is the URL. A usage / I/O error (exit 2), not damage."""

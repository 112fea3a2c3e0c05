"""The two binlog flavors, and the one place where a server version string becomes one."""

from __future__ import annotations

import enum
import re


class Flavor(enum.Enum):
    """Which server family wrote a file: ``Flavor.MYSQL`` or ``Flavor.MARIADB`` (from its
    Format_description event's server version; ``Format.flavor``)."""

    MYSQL = "mysql"
    MARIADB = "mariadb"

    @classmethod
    def of_server_version(cls, text: str) -> Flavor:
        """The flavor of a server version string (an FDE's, or a server's greeting):
        MariaDB's say so (``10.11.6-MariaDB-log``, ``5.5.5-10.3.7-MariaDB``), all others are MySQL."""
        return cls.MARIADB if "mariadb" in text.lower() else cls.MYSQL


_VERSION_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def parse_server_version(text: str) -> tuple[Flavor, tuple[int, int, int]]:
    """Flavor and (major, minor, patch) of a server version string as an FDE carries it.

    ``10.11.6-MariaDB-log`` is MariaDB 10.11.6; MariaDB servers that pretend to be MySQL 5.5.5
    for old clients (``5.5.5-10.3.7-MariaDB``) are read past the prefix.
    """
    flavor = Flavor.of_server_version(text)
    if text.startswith("5.5.5-") and flavor is Flavor.MARIADB:
        text = text[len("5.5.5-"):]
    m = _VERSION_RE.search(text)
    if not m:
        return flavor, (0, 0, 0)
    return flavor, (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def checksum_aware(flavor: Flavor, version: tuple[int, int, int]) -> bool:
    """Whether an FDE written by this server carries the checksum-algorithm byte and a CRC.

    MySQL from 5.6.1, MariaDB from 5.3.0 (both introduced binlog_checksum there).
    """
    if flavor is Flavor.MARIADB:
        return version >= (5, 3, 0)
    return version >= (5, 6, 1)


def fde_is_checksum_aware(event: bytes) -> bool:
    """Whether a whole FDE (header included) was written by a checksum-aware server,
    i.e. whether its last 5 bytes are checksum_alg + CRC32. Decided by the version field alone."""
    raw = event[19 + 2 : 19 + 52].split(b"\x00", 1)[0].decode("ascii", "replace")
    return checksum_aware(*parse_server_version(raw))


def geometry_has_charset(flavor: Flavor | None) -> bool:
    """Whether GEOMETRY columns count among the character columns that a Table_map's optional
    DEFAULT_CHARSET / COLUMN_CHARSET fields index. MariaDB counts them (its geometry field is a
    blob with a charset: ``is_character_type`` in ``sql/log_event.cc``), MySQL does not. Unknown
    flavor: MariaDB's rule, the flavor whose servers write this metadata most."""
    return flavor is not Flavor.MYSQL


def old_temporals_may_be_fractional(flavor: Flavor | None) -> bool:
    """Whether a Table_map's TIME / DATETIME / TIMESTAMP (types 11, 12, 7, no metadata) may be
    MariaDB's pre-10.1 fractional layout, whose size the binlog does not carry (MariaDB with
    mysql56_temporal_format=OFF or tables made before 10.1: ``sql/field.cc`` Field_*_hires).
    MySQL's old types have no fractions. Unknown flavor: MariaDB's rule."""
    return flavor is not Flavor.MYSQL


def status_vars_mariadb(flavor: Flavor | None) -> bool:
    """Whether a Query's status variables use MariaDB's codes above 128 (``codecs.status_vars``)."""
    return flavor is Flavor.MARIADB


def has_two_phase_alter(flavor: Flavor | None) -> bool:
    """Whether the flavor may split an ALTER into START / COMMIT / ROLLBACK ALTER transactions
    (MariaDB's binlog_alter_two_phase)."""
    return flavor is Flavor.MARIADB


def replica_metadata_may_be_tables(flavor: Flavor | None) -> bool:
    """Whether a replica may keep its connection and applier metadata in tables rather than
    master.info / relay-log.info files (MySQL 8.0.23+: nothing in the folder says the mode)."""
    return flavor is Flavor.MYSQL


def tool_escapes_strings(flavor: Flavor | None) -> bool:
    """Whether the flavor's own binlog tool, ``-v``, prints a quoted string value (CHAR, VARCHAR,
    BINARY, TEXT, BLOB, GEOMETRY, JSON) with ``'`` and ``\\`` backslash-escaped and
    ``\\b \\f \\n \\r \\t`` by name, other bytes below 0x20 as ``\\xNN``: MySQL's
    ``mysqlbinlog`` since 8.0 (the quote table of ``my_b_write_quoted``, ``sql/log_event.cc``).
    The tool's version decides, not the file's: today's mysqlbinlog prints a MySQL 5.7 file's
    strings so too (mysqlbinlog 5.6 of 2018 printed ``'`` and ``\\`` as ``\\x27`` / ``\\x5c``,
    its first releases as they are). Otherwise (``mariadb-binlog``, every version; unknown flavor) only bytes below
    0x20 are escaped, as ``\\xNN``."""
    return flavor is Flavor.MYSQL


def vector_is_floats(flavor: Flavor | None) -> bool:
    """Whether a VECTOR column's values are a VECTOR in the binlog (MySQL 9: a list of float32,
    export's ``list<float32>``) rather than the bytes of the VARBINARY MariaDB (11.7+) logs."""
    return flavor is Flavor.MYSQL


def replay_needs_gtid_next(flavor: Flavor | None) -> bool:
    """Whether a file replayed by the flavor's client (``mysqlbinlog FILE | mysql``) must set the
    session's GTID_NEXT itself: MySQL's client-side ``BINLOG`` of a Format_description makes
    GTID_NEXT "not yet determined", and the next statement without a GTID event before it then
    runs as ANONYMOUS, which a gtid_mode=ON server refuses (ERROR 1782); ``SET
    @@SESSION.GTID_NEXT='AUTOMATIC'`` lets the server number it (gtid_mode=ON) or not (OFF).
    MariaDB has no GTID_NEXT: its server numbers a client's transactions itself."""
    return flavor is Flavor.MYSQL


def refuses_generated_column_values(flavor: Flavor | None) -> bool:
    """Whether the flavor's server refuses an INSERT / UPDATE that names a generated column
    with a value (MySQL: ERROR 3105, whatever the sql_mode) rather than ignoring the value with a
    warning under a non-strict sql_mode (MariaDB: warning 1906). Unknown flavor: MySQL's rule."""
    return flavor is not Flavor.MARIADB

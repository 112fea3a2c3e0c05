"""The format in force: a frozen value made from a Format_description event.

It travels explicitly to every decode call; nothing about it is global state.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..codecs.format_description import FormatDescriptionBody, fde_is_checksum_aware
from ..codecs.header import LEN_HEADER
from ..constants import LEN_CHECKSUM, ChecksumAlg
from ..errors import FormatError
from ..flavor import Flavor, parse_server_version


@dataclass(frozen=True, slots=True)
class Format:
    binlog_version: int
    server_version: str
    flavor: Flavor
    version: tuple[int, int, int]
    header_length: int
    post_header_lengths: bytes
    checksum_alg: ChecksumAlg | None  # None: the writer predates checksums
    create_timestamp: int = 0

    @property
    def len_checksum(self) -> int:
        """Bytes of checksum that end every event written under this format (not the FDE)."""
        return LEN_CHECKSUM if self.checksum_alg is ChecksumAlg.CRC32 else 0

    def post_header_length(self, type_code: int) -> int | None:
        """Post-header length the FDE announces for ``type_code``, or None if it names none."""
        if 1 <= type_code <= len(self.post_header_lengths):
            return self.post_header_lengths[type_code - 1]
        return None

    @classmethod
    def from_fde_body(cls, body: bytes) -> "Format":
        """Build from an FDE body (between the common header and the trailing CRC, if any)."""
        try:
            parsed = FormatDescriptionBody.parse(body, len_body=len(body))
        except Exception as exc:  # construct's own errors become ours here, at the boundary
            raise FormatError(f"cannot parse Format_description body: {exc}",
                              event_type="FORMAT_DESCRIPTION_EVENT") from exc
        text = parsed.server_version.split(b"\x00", 1)[0].decode("ascii", "replace")
        flavor, version = parse_server_version(text)
        alg = None
        if parsed.checksum_alg is not None:
            try:
                alg = ChecksumAlg(parsed.checksum_alg)
            except ValueError:
                raise FormatError(f"unknown checksum algorithm {parsed.checksum_alg}",
                                  event_type="FORMAT_DESCRIPTION_EVENT", field="checksum_alg") from None
        return cls(
            binlog_version=parsed.binlog_version,
            server_version=text,
            flavor=flavor,
            version=version,
            header_length=parsed.header_length,
            post_header_lengths=bytes(parsed.post_header_lengths),
            checksum_alg=alg,
            create_timestamp=parsed.create_timestamp,
        )


def format_of_event(data: bytes) -> Format:
    """The Format a whole event announces: a Format_description (its body between the 19-byte
    header and its own CRC, when it is checksum-aware), or a binlog v3 Start_v3 (server version
    at body offset 2, 50 bytes). The one FDE -> ``Format`` step: the framing loop calls it for
    every such event and attaches the result to the events that follow (``framing.Frame``)."""
    if data[4] == 1:  # START_EVENT_V3
        return v3_format(data[LEN_HEADER + 2:LEN_HEADER + 52].split(b"\x00", 1)[0].decode("ascii", "replace"))
    aware = fde_is_checksum_aware(data)
    return Format.from_fde_body(data[LEN_HEADER:len(data) - (LEN_CHECKSUM if aware else 0)])


# Binlog v3 (MySQL 4.0.2 - 4.1): no Format_description; Start_v3 fixes the layout. Post-header
# lengths per type 1..14 as MySQL's Format_description_event sets them for binlog_version 3.
V3_POST_HEADER_LENGTHS = bytes([0, 11, 0, 8, 0, 18, 0, 4 + 18, 4, 4, 4, 18, 0, 0])


def v3_format(server_version: str) -> Format:
    flavor, version = parse_server_version(server_version)
    return Format(binlog_version=3, server_version=server_version, flavor=flavor, version=version,
                  header_length=19, post_header_lengths=V3_POST_HEADER_LENGTHS, checksum_alg=None)

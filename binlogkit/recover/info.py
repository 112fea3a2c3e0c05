"""master.info and relay-log.info, as the servers write them, parsed and rewritten exactly.

Both start with a line count N (MySQL >= 5.1.x, MariaDB): master.info counts that first line
(lines 2..N are positional), relay-log.info does not (lines 2..N+1 are). The
servers rewrite these files in place **without truncating**, so bytes after the last line
they count (and, for MariaDB master.info, after ``END_MARKER``) are stale leftovers of a
longer earlier write: parse by the count, keep every field, drop the leftovers on rewrite.

=================  =========================================================================
master.info        1 count, 2 master_log_file, 3 master_log_pos, 4 host, 5 user, 6 password,
                   7 port, 8 connect_retry, then ssl and the rest — kept as they are.
                   MariaDB appends ``key=value`` lines (using_gtid, do_domain_ids, ...) and
                   ``END_MARKER``.
relay-log.info     1 count, 2 relay_log_file, 3 relay_log_pos, 4 master_log_file,
                   5 master_log_pos, 6 sql_delay (and MySQL: workers, id, channel).
=================  =========================================================================

Very old files have no count line (the first line is a file name); they are read as four
positional lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import FormatError


@dataclass(frozen=True)
class InfoFile:
    path: str
    lines: tuple[str, ...]          # the positional lines, count line included when present
    extra: tuple[str, ...] = ()     # MariaDB key=value lines after the positional ones
    end_marker: bool = False
    has_count: bool = True
    stale_bytes: int = 0            # leftovers after what the count covers

    def field(self, n: int) -> str | None:
        """1-based line number as the table above counts (1 is the count line)."""
        i = n - 1 if self.has_count else n - 2
        return self.lines[i] if 0 <= i < len(self.lines) else None

    def int_field(self, n: int) -> int | None:
        """A position line as a number; None when absent or not a number."""
        v = self.field(n)
        return int(v) if v and v.strip().isdigit() else None

    def with_field(self, n: int, value: str) -> "InfoFile":
        i = n - 1 if self.has_count else n - 2
        lines = list(self.lines)
        lines[i] = value
        return replace(self, lines=tuple(lines))

    def render(self) -> bytes:
        out = list(self.lines) + list(self.extra) + (["END_MARKER"] if self.end_marker else [])
        return ("\n".join(out) + "\n").encode("utf-8")

    @property
    def keys(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in self.extra if "=" in line)


def read_info(path: str | Path, *, kind: str) -> InfoFile:
    """Parse ``master.info`` (kind "master") or ``relay-log.info`` (kind "relay")."""
    return parse_info(Path(path).read_bytes(), kind=kind, path=str(path))


def parse_info(raw: bytes, *, kind: str, path: str | None = None) -> InfoFile:
    """Parse the bytes of ``master.info`` or ``relay-log.info`` (see ``read_info``)."""
    text = raw.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if not lines or not lines[0]:
        raise FormatError("empty info file", file=str(path), offset=0)
    if lines[0].strip().isdigit():
        # master.info counts its own first line; relay-log.info does not (MySQL and MariaDB)
        count = int(lines[0]) + (1 if kind == "relay" else 0)
        if count < 3 or count > len(lines):
            raise FormatError(f"line count {lines[0]} does not fit the {len(lines)} lines present",
                              file=str(path), offset=0)
        positional = lines[:count]
        rest = lines[count:]
        has_count = True
    else:  # pre-count format: relay_log_file, relay_log_pos, master_log_file, master_log_pos
        n = 2 if kind == "master" else 4
        positional, rest, has_count = lines[:n], lines[n:], False
    extra: list[str] = []
    end_marker = False
    if kind == "master":
        for line in rest:
            if line == "END_MARKER":
                end_marker = True
                break
            if "=" not in line:
                break
            extra.append(line)
        if not end_marker:
            extra = []
    used = len("\n".join(positional + extra + (["END_MARKER"] if end_marker else []))) + 1
    return InfoFile(str(path), tuple(positional), tuple(extra), end_marker, has_count,
                    max(0, len(raw) - used))


@dataclass(frozen=True)
class MasterInfo:
    info: InfoFile

    @property
    def file(self) -> str | None:
        return self.info.field(2)

    @property
    def position(self) -> int | None:
        return self.info.int_field(3)

    @property
    def using_gtid(self) -> int:
        """MariaDB: 0 no, 1 current_pos, 2 slave_pos."""
        return int(self.info.keys.get("using_gtid", "0") or 0)

    def moved_to(self, file: str, position: int) -> "MasterInfo":
        return MasterInfo(self.info.with_field(2, file).with_field(3, str(position)))


@dataclass(frozen=True)
class RelayLogInfo:
    info: InfoFile

    @property
    def relay_file(self) -> str | None:
        v = self.info.field(2)
        return Path(v).name if v else None

    @property
    def relay_pos(self) -> int | None:
        return self.info.int_field(3)

    @property
    def master_file(self) -> str | None:
        return self.info.field(4)

    @property
    def master_pos(self) -> int | None:
        return self.info.int_field(5)

    def moved_to(self, relay_file_line: str, relay_pos: int, master_file: str, master_pos: int) -> "RelayLogInfo":
        i = self.info.with_field(2, relay_file_line).with_field(3, str(relay_pos))
        return RelayLogInfo(i.with_field(4, master_file).with_field(5, str(master_pos)))

"""Where a backup stands in the binlogs: the coordinates a backup tool leaves behind. Pure parsing.

Accepted (the first that matches):

* mariabackup's ``xtrabackup_binlog_info`` / ``mariadb_backup_binlog_info`` and Percona
  XtraBackup's ``xtrabackup_binlog_info``: one line ``FILE<TAB>POSITION[<TAB>GTIDS]``
  (MySQL's GTID set may continue on the next lines, comma-separated);
* the head of a logical dump made with ``mariadb-dump --master-data[=2] [--gtid]`` or
  ``mysqldump --source-data``: ``CHANGE MASTER TO MASTER_LOG_FILE='F', MASTER_LOG_POS=N``
  (``SOURCE_LOG_FILE`` / ``SOURCE_LOG_POS``) and ``SET GLOBAL gtid_slave_pos='...'`` /
  ``SET @@GLOBAL.GTID_PURGED='...'`` (MySQL 8.0+: ``GTID_PURGED=/*!80000 '+'*/ '...'``),
  commented out or not.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from collections.abc import Iterable

from ..errors import BinlogError

# a dump's CHANGE MASTER line sits in its first lines; never read a whole dump
HEAD_BYTES = 1 << 20

_CHANGE_FILE = re.compile(r"(?:MASTER|SOURCE)_LOG_FILE\s*=\s*'([^']+)'", re.I)
_CHANGE_POS = re.compile(r"(?:MASTER|SOURCE)_LOG_POS\s*=\s*(\d+)", re.I)
_GTID_SLAVE = re.compile(r"gtid_slave_pos\s*=\s*'([^']*)'", re.I)
# MySQL 8.0+'s mysqldump writes SET @@GLOBAL.GTID_PURGED=/*!80000 '+'*/ 'uuid:1-610';
_GTID_PURGED = re.compile(r"GTID_PURGED\s*=\s*(?:/\*!\d*\s*'\+'\s*\*/\s*)?'\+?([^']*)'", re.I)


class BackupInfoError(BinlogError):
    """A backup-info file that names no binlog coordinates."""


@dataclass(frozen=True)
class BackupPoint:
    file: str              # binlog name (no folder)
    position: int
    gtids: str | None      # MariaDB GTID position / MySQL GTID set at that point, when given
    origin: str            # which kind of file said so

    def to_json(self) -> dict:
        return {"file": self.file, "position": self.position, "gtids": self.gtids, "origin": self.origin}


def parse_backup_info(text: str, *, name: str = "backup info") -> BackupPoint:
    """The binlog coordinates in a backup-info text (see the module docstring)."""
    f, p = _CHANGE_FILE.search(text), _CHANGE_POS.search(text)
    if f and p:
        g = _GTID_SLAVE.search(text) or _GTID_PURGED.search(text)
        gt = "".join(g.group(1).split()) if g else None  # a long MySQL set continues on the next lines
        return BackupPoint(os.path.basename(f.group(1)), int(p.group(1)), gt or None, "dump")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines:
        parts = lines[0].split("\t") if "\t" in lines[0] else lines[0].split()
        if len(parts) >= 2 and parts[1].strip().isdigit():
            gt = "\t".join(parts[2:]).strip()
            # a long MySQL set continues on the following lines
            more = [ln.strip() for ln in lines[1:]]
            gt = "".join([gt, *more]).replace(" ", "") if gt else None
            return BackupPoint(os.path.basename(parts[0].strip()), int(parts[1]), gt or None, "binlog_info")
    raise BackupInfoError(f"{name}: no binlog coordinates found (expected xtrabackup_binlog_info's "
                          "'FILE<TAB>POSITION<TAB>GTID' or a dump's CHANGE MASTER TO MASTER_LOG_FILE=..., "
                          "MASTER_LOG_POS=...)", file=name)


def read_backup_info(path: str | os.PathLike) -> BackupPoint:
    """The coordinates in the first ``HEAD_BYTES`` of ``path`` (a dump may be huge), and the
    GTID position from its ``gtid_slave_pos`` line wherever it is (``late_gtid``)."""
    from ..reading.files import open_regular

    name = os.fspath(path)
    with open_regular(path) as fh:  # a FIFO or a device: NotRegularFileError, never a wait
        raw = fh.read(HEAD_BYTES)
        head = raw.decode("utf-8", "replace")
        point = parse_backup_info(head, name=name)
        if point.gtids is None and len(raw) == HEAD_BYTES:  # more than the head: look on
            fh.seek(0)
            point = late_gtid(point, head, (ln.decode("utf-8", "replace") for ln in fh), name)
    return point


GTID_LINES = ("-- SET GLOBAL gtid_slave_pos", "SET GLOBAL gtid_slave_pos")


def late_gtid(point: BackupPoint, head: str, lines: Iterable[str], name: str) -> BackupPoint:
    """``mariadb-dump --single-transaction --master-data --gtid`` prints its ``gtid_slave_pos``
    line at the end of the dump, past the head: the first such line of ``lines`` (the file from
    its start, read line by line, nothing parsed), else ``point`` as it is."""
    for line in lines:
        if line.startswith(GTID_LINES):
            return parse_backup_info(head + "\n" + line, name=name)
    return point

"""Start from a snapshot: the transactions a backup already holds (its GTID position), and
the initial load of a snapshot into the mirror tables: a Parquet snapshot folder, or a SQL
dump (``dump``: ``mariadb-dump`` / ``mysqldump``, ``.sql[.gz|.xz]``, at its own coordinates).

A Parquet snapshot is a folder with one file per table, ``DB.T.parquet`` (or ``DB/T.parquet``),
columns named as the table's: each becomes the first commit of the mirror ``DB.T``, carrying the
backup's coordinates. Only tables without a commit yet are loaded (a rerun loads nothing).
"""

from __future__ import annotations

import os
import re

from .props import PREFIX

_MARIADB = re.compile(r"^\d+-\d+-\d+(\s*,\s*\d+-\d+-\d+)*$")


def covered_by(position: str):
    """A predicate: is this GTID inside the backup's GTID position? MariaDB: a position
    (``gtid_binlog_pos``, ``D-S-N,...``) holds every ``D-*-M`` with M <= N; MySQL: the
    ``gtid_executed`` set as it is."""
    text = position.strip()
    if _MARIADB.match(text):
        top: dict[int, int] = {}
        for part in text.split(","):
            d, _s, n = part.strip().split("-")
            top[int(d)] = max(top.get(int(d), 0), int(n))

        def covered(gtid: str) -> bool:
            d, _s, n = gtid.split("-")
            return int(n) <= top.get(int(d), -1)
        return covered
    from ...api import gtid_matcher

    return gtid_matcher(text)


def before_rotation(found, snapshot: str, at: tuple[str | None, int], gtids: str) -> dict | None:
    """A MariaDB dump whose point is the start of a file (``at``: its file and position) may lack
    the previous file's last group commit while its GTID position holds it (a snapshot taken
    right after a rotation: see docs/pitr.md). Applying that group again is harmless to a mirror
    (by key, with the row images the binlog holds: the same rows whether or not the dump had
    them), skipping it is not: the GTID position without that group (``from_gtid``), the group
    (``gtids``) and where it begins (``file``, ``offset``); None when the point is not there."""
    from ...pitr.walk import rotation_group
    from .dump import is_dump

    if at[0] is None or not _MARIADB.match(gtids.strip()) or not is_dump(snapshot):
        return None
    prev, group = rotation_group(found, at[0], at[1])
    if not group:
        return None
    from ...gtid import GtidPos, MariadbGtid

    pos = GtidPos.parse(gtids)
    for _off, text in group:   # each domain's position set back to before the group's first GTID of it
        g = MariadbGtid.parse(text)
        cur = pos.get(g.domain_id)
        if cur is not None and cur.seq_no >= g.seq_no:
            pos = pos.advance(MariadbGtid(cur.domain_id, cur.server_id, g.seq_no - 1))
    return {"from_gtid": str(pos), "gtids": [g for _o, g in group], "file": os.path.basename(prev),
            "offset": group[0][0]}


def backup_info(path: str) -> tuple[str, int, str]:
    """(file, position, GTID position) of a ``xtrabackup_binlog_info`` / ``mariadb_backup_binlog_info``
    file (``FILE<TAB>POSITION<TAB>GTID``)."""
    from ...errors import UsageError

    with open(path, encoding="utf-8") as fh:
        parts = fh.read().split()
    if len(parts) < 2 or not parts[1].isdigit():
        raise UsageError(f"--backup-info {path}: expected FILE POSITION [GTID]")
    return parts[0], int(parts[1]), " ".join(parts[2:])


def snapshot_tables(folder: str) -> list[tuple[str, str, str]]:
    """(db, table, path) of the Parquet files of a snapshot folder."""
    out = []
    for root, _dirs, files in os.walk(folder):
        for f in sorted(files):
            if not f.endswith(".parquet"):
                continue
            rel = os.path.relpath(os.path.join(root, f), folder)[: -len(".parquet")]
            db, _, table = rel.replace(os.sep, ".").partition(".")
            if table:
                out.append((db, table, os.path.join(root, f)))
    return sorted(out)


def wanted(tables: tuple[str, ...]):
    """``keep(db, table)`` of the ``--database`` / ``--table`` patterns (``Filters.tables``:
    "db.table" shell wildcards; none: every table)."""
    import fnmatch

    def keep(db: str, table: str) -> bool:
        return not tables or any(fnmatch.fnmatchcase(f"{db}.{table}", p) for p in tables)
    return keep


def load_snapshot(sink, folder: str, gtid: str, *, mirror: bool, file: str = "", position: int = 0,
                  tables: tuple[str, ...] = ()) -> int:
    """The snapshot's tables as the first commit of their mirrors; the number loaded. A SQL
    dump file takes its coordinates from its own head where ``gtid`` / ``file`` are not given.
    ``tables``: the export's table patterns (``Filters.tables``): only those tables are loaded."""
    import pyarrow.parquet as pq

    from .dump import dump_point, is_dump, load_dump
    from .types import to_lake

    if is_dump(folder):
        if not mirror:
            return 0
        point = dump_point(folder)
        props = {PREFIX + "gtid": gtid or point.gtids or "", PREFIX + "file": file or point.file,
                 PREFIX + "position": str(position or point.position), PREFIX + "commit_time": "",
                 PREFIX + "transactions": "0", PREFIX + "snapshot": folder}
        return len(load_dump(sink, folder, props, keep=wanted(tables))["tables"])
    n = 0
    keep = wanted(tables)
    for db, table, path in snapshot_tables(folder):
        if not mirror or not keep(db, table) or sink.recorded(db, table) is not None:
            continue
        props = {PREFIX + "gtid": gtid, PREFIX + "file": file or "snapshot", PREFIX + "position": str(position),
                 PREFIX + "commit_time": "", PREFIX + "transactions": "0", PREFIX + "snapshot": path}
        sink.append(db, table, to_lake(pq.read_table(path)), props)
        n += 1
    return n

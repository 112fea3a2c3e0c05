"""Query event status variables: (code, value) pairs, decoded for display.

Codes 0-20 are MySQL's (``statement_events.h`` enum_status_vars); MariaDB adds 128-131
(``sql/log_event.h``). The raw bytes stay in the event (build is byte-exact); this is a view.
Decoding stops at the first code it does not know (the length of an unknown variable cannot
be known) and reports the rest as ``undecoded``.
"""

from __future__ import annotations


def _fixed(n: int):
    return lambda b, p: (int.from_bytes(b[p:p + n], "little"), p + n)


def _lenstr(b: bytes, p: int):
    n = b[p]
    return b[p + 1:p + 1 + n].decode("utf-8", "replace"), p + 1 + n


def _catalog(b: bytes, p: int):  # 5.0.0-5.0.3: length, string, NUL
    n = b[p]
    return b[p + 1:p + 1 + n].decode("utf-8", "replace"), p + 2 + n


def _pairs(*widths):
    def read(b, p):
        vals = []
        for w in widths:
            vals.append(int.from_bytes(b[p:p + w], "little"))
            p += w
        return vals, p
    return read


def _invoker(b, p):
    user, p = _lenstr(b, p)
    host, p = _lenstr(b, p)
    return {"user": user, "host": host}, p


def _updated_dbs(b, p):
    n = b[p]
    p += 1
    if n == 254:  # OVER_MAX_DBS_IN_EVENT_MTS
        return [], p
    names = []
    for _ in range(n):
        end = b.index(b"\x00", p)
        names.append(b[p:end].decode("utf-8", "replace"))
        p = end + 1
    return names, p


def _gtid_flags3(b, p):
    """MariaDB Q_GTID_FLAGS3: the GTID's flags_extra, then the START ALTER's seq_no (8 bytes)
    when the Query is a two-phase ALTER's COMMIT / ROLLBACK (FL_COMMIT_ALTER_E1 4,
    FL_ROLLBACK_ALTER_E1 8), as Query_log_event reads it; the value is the flags."""
    flags = b[p]
    if flags & (4 | 8):
        if p + 9 > len(b):
            raise IndexError("Q_GTID_FLAGS3 sa_seq_no")
        return flags, p + 9
    return flags, p + 1


def _collations(b, p):  # MariaDB 11.x Q_CHARACTER_SET_COLLATIONS: count, then count x (2+2)
    n = b[p]
    p += 1
    pairs = [[int.from_bytes(b[p + 4 * i:p + 4 * i + 2], "little"),
              int.from_bytes(b[p + 4 * i + 2:p + 4 * i + 4], "little")] for i in range(n)]
    return pairs, p + 4 * n


COMMON = {
    0: ("flags2", _fixed(4)), 1: ("sql_mode", _fixed(8)), 2: ("catalog", _catalog),
    3: ("auto_increment", _pairs(2, 2)), 4: ("charset", _pairs(2, 2, 2)), 5: ("time_zone", _lenstr),
    6: ("catalog_nz", _lenstr), 7: ("lc_time_names", _fixed(2)), 8: ("charset_database", _fixed(2)),
    9: ("table_map_for_update", _fixed(8)), 10: ("master_data_written", _fixed(4)),
    11: ("invoker", _invoker), 12: ("updated_db_names", _updated_dbs), 13: ("microseconds", _fixed(3)),
}
MYSQL = {
    14: ("commit_ts", _fixed(8)), 15: ("commit_ts2", _fixed(8)),
    16: ("explicit_defaults_for_timestamp", _fixed(1)), 17: ("ddl_logged_with_xid", _fixed(8)),
    18: ("default_collation_for_utf8mb4", _fixed(2)), 19: ("sql_require_primary_key", _fixed(1)),
    20: ("default_table_encryption", _fixed(1)),
}
MARIADB = {
    128: ("hrnow", _fixed(3)), 129: ("xid", _fixed(8)), 130: ("gtid_flags3", _gtid_flags3),
    131: ("character_set_collations", _collations),
}


def decode(raw: bytes, mariadb: bool) -> dict:
    table = {**COMMON, **(MARIADB if mariadb else MYSQL)}
    out: dict = {}
    p = 0
    try:
        while p < len(raw):
            code = raw[p]
            if code not in table:
                out["undecoded"] = raw[p:].hex()
                break
            name, read = table[code]
            out[name], p = read(raw, p + 1)
        if p > len(raw):
            out["truncated"] = True
    except (IndexError, ValueError):
        out["undecoded"] = raw[p:].hex()
    return out

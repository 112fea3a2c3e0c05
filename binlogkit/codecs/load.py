"""The LOAD DATA events of old servers (MySQL 3.23 - 4.1, still readable by 5.x): Load (6),
Create_file (8), Append_block (9), Exec_load (10), Delete_file (11), New_load (12).

A ``LOAD DATA INFILE`` was logged as the statement's pieces plus the file's bytes: Create_file
carries the statement and the first block of the file, Append_block the next blocks,
Exec_load says "run it now", Delete_file "drop the temporary file". Load / New_load are the
older one-event form (the file read by the replica itself). MySQL 5.0.3+ writes
Begin_load_query / Execute_load_query instead (``statement``).
Source: MySQL 5.1 ``sql/log_event.{h,cc}`` (Load_log_event, sql_ex_info, Create_file_log_event).

Load post-header (18 bytes; ``LOAD_HEADER_LEN``)::

    0   4   thread_id
    4   4   exec_time
    8   4   skip_lines          IGNORE n LINES
    12  1   len_table
    13  1   len_db
    14  4   num_fields

Create_file adds ``file_id`` (4) to it (post-header 22). Then the body::

    --  *   sql_ex              Load (6): 5 one-byte strings (field_term, enclosed, line_term,
                                line_start, escaped), opt_flags, empty_flags;
                                New_load / Create_file: the 5 strings each as (1-byte length,
                                bytes), then opt_flags
    --  n   field_lens          num_fields bytes: the length of each column name
    --  *   fields              num_fields names, each NUL-terminated
    --  *   table               len_table bytes + NUL
    --  *   db                  len_db bytes + NUL
    --  *   fname               Load / New_load: the file name, to the end of the body;
                                Create_file: NUL-terminated, then
    --  *   block               the file's first bytes (Create_file only)

Append_block (post-header 4): file_id, then the block. Exec_load / Delete_file: file_id alone.

opt_flags: 1 DUMPFILE, 2 OPT_ENCLOSED, 4 REPLACE, 8 IGNORE. empty_flags (old sql_ex): 1
FIELD_TERM, 2 ENCLOSED, 4 LINE_TERM, 8 LINE_START, 16 ESCAPED are empty (the byte is unused).
"""

from __future__ import annotations

from construct import (Array, Bytes, Const, GreedyBytes, If, Int8ul, Int32ul, NullTerminated, Prefixed,
                       Struct, Terminated, this)

OPT_ENCLOSED, REPLACE, IGNORE = 2, 4, 8
SQL_EX_STRINGS = ("field_term", "enclosed", "line_term", "line_start", "escaped")

SqlExOld = Struct(*[name / Bytes(1) for name in SQL_EX_STRINGS], "opt_flags" / Int8ul, "empty_flags" / Int8ul)
SqlExNew = Struct(*[name / Prefixed(Int8ul, GreedyBytes) for name in SQL_EX_STRINGS], "opt_flags" / Int8ul)


def _load_body(sql_ex, *, create_file: bool) -> Struct:
    """The Load layout: ``sql_ex`` old or new, the file name to the end (Load, New_load) or
    NUL-terminated and followed by the first block (Create_file)."""
    return Struct(
        "thread_id" / Int32ul,
        "exec_time" / Int32ul,
        "skip_lines" / Int32ul,
        "len_table" / Int8ul,
        "len_db" / Int8ul,
        "num_fields" / Int32ul,
        "file_id" / If(lambda ctx: create_file, Int32ul),
        "post_header_extra" / Bytes(lambda ctx: max(0, (ctx._params.post_header_len or 0)
                                                    - (22 if create_file else 18))),
        "sql_ex" / sql_ex,
        "field_lens" / Bytes(this.num_fields),
        "fields" / Array(this.num_fields, NullTerminated(GreedyBytes)),
        "table" / Bytes(this.len_table),
        Const(b"\x00"),
        "db" / Bytes(this.len_db),
        Const(b"\x00"),
        "fname" / (NullTerminated(GreedyBytes) if create_file else GreedyBytes),
        "block" / If(lambda ctx: create_file, GreedyBytes),
    )


LoadBody = _load_body(SqlExOld, create_file=False)         # 6
NewLoadBody = _load_body(SqlExNew, create_file=False)      # 12
CreateFileBody = _load_body(SqlExNew, create_file=True)    # 8

AppendBlockBody = Struct("file_id" / Int32ul, "block" / GreedyBytes)  # 9 (and 17's layout)
ExecLoadBody = Struct("file_id" / Int32ul, Terminated)               # 10
DeleteFileBody = Struct("file_id" / Int32ul, Terminated)             # 11


def _quoted(b: bytes) -> str:
    """A terminator as mysqlbinlog prints it (``pretty_print_str``)."""
    out = []
    for c in b:
        ch = {10: "\\n", 13: "\\r", 92: "\\\\", 8: "\\b", 9: "\\t", 39: "\\'", 0: "\\0"}.get(c)
        out.append(ch if ch is not None else chr(c))
    return "'" + "".join(out) + "'"


def load_statement(p, type_code: int) -> str:
    """The LOAD DATA statement an event stands for, as mysqlbinlog prints it (without the
    delimiter). Empty strings of the old sql_ex are printed as ''."""
    ex = p.sql_ex
    empty = getattr(ex, "empty_flags", None) or 0

    def part(i: int, name: str) -> bytes:
        return b"" if empty & (1 << i) else bytes(ex[name])

    text = lambda b: bytes(b).decode("utf-8", "replace")  # noqa: E731
    s = f"LOAD DATA INFILE '{text(p.fname)}' "
    if ex.opt_flags & REPLACE:
        s += "REPLACE "
    elif ex.opt_flags & IGNORE:
        s += "IGNORE "
    s += f"INTO TABLE `{text(p.table)}`"
    s += f" FIELDS TERMINATED BY {_quoted(part(0, 'field_term'))}"
    if ex.opt_flags & OPT_ENCLOSED:
        s += " OPTIONALLY "
    s += f" ENCLOSED BY {_quoted(part(1, 'enclosed'))}"
    s += f" ESCAPED BY {_quoted(part(4, 'escaped'))}"
    s += f" LINES TERMINATED BY {_quoted(part(2, 'line_term'))}"
    s += f" STARTING BY {_quoted(part(3, 'line_start'))}"
    if p.skip_lines:
        s += f" IGNORE {p.skip_lines} LINES"
    if p.num_fields:
        s += " (" + ",".join(f"`{text(f)}`" for f in p.fields) + ")"
    return s

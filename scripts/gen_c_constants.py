"""Write binlogkit/_constants.h, the C accelerators' copy of binlogkit/constants.py.

    make c-constants                       # or: python scripts/gen_c_constants.py [--check]

The C files (_fastdecode.c, _pullscan.c, _rowtext.c) name event types, header flags and column
types by the upstream names this header gives them (``XID_EVENT``, ``LOG_EVENT_ARTIFICIAL_F``,
``MYSQL_TYPE_BLOB``) instead of literal numbers; constants.py stays the one table.
tests/test_c_constants.py fails when the header is not what this script writes. ``--check``
exits 1 (writing nothing) when it is stale.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "binlogkit" / "_constants.h"


def _enum(title: str, members: list[tuple[str, int]], hexa: bool = False) -> list[str]:
    lines = [f"/* {title} */", "enum {"]
    lines += [f"    {name} = {value:#06x}," if hexa else f"    {name} = {value}," for name, value in members]
    return lines + ["};", ""]


def render() -> str:
    """The header's text, from the tables of binlogkit.constants as they are now."""
    sys.path.insert(0, str(ROOT))
    from binlogkit import constants as c

    def named(table: type[enum.Enum], fmt: str) -> list[tuple[str, int]]:
        return [(fmt.format(m.name), int(m.value)) for m in table]  # type: ignore[arg-type]

    lines = ["/* binlogkit/_constants.h: GENERATED from binlogkit/constants.py by scripts/gen_c_constants.py",
             " * (make c-constants). Do not edit: tests/test_c_constants.py fails when this file is stale. */",
             "#ifndef BINLOGKIT_CONSTANTS_H", "#define BINLOGKIT_CONSTANTS_H", "",
             f"#define LEN_MAGIC {c.LEN_MAGIC}",
             f"#define LEN_COMMON_HEADER {c.LEN_COMMON_HEADER}",
             f"#define LEN_CHECKSUM {c.LEN_CHECKSUM}", ""]
    lines += _enum("event type codes (constants.EventType; MySQL binlog_event.h, MariaDB log_event.h)",
                   named(c.EventType, "{}"))
    lines += _enum("common-header flags (constants.EventFlag), upstream's LOG_EVENT_<name>_F",
                   named(c.EventFlag, "LOG_EVENT_{}_F"), hexa=True)
    lines += _enum("column type codes (constants.ColumnType; MySQL field_types.h)",
                   named(c.ColumnType, "MYSQL_TYPE_{}"))
    lines += ["#endif", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in args:
        if not HEADER.exists() or HEADER.read_text() != text:
            print(f"{HEADER.relative_to(ROOT)} is stale: run make c-constants", file=sys.stderr)
            return 1
        return 0
    if not HEADER.exists() or HEADER.read_text() != text:
        HEADER.write_text(text)
        print(f"wrote {HEADER.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

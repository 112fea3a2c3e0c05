"""The C accelerators take their type codes from binlogkit/_constants.h, which
scripts/gen_c_constants.py writes from binlogkit/constants.py (``make c-constants``): the header
must be what the script writes now, and the C files compare event codes by name, not by number."""

from __future__ import annotations

import re
from pathlib import Path

from fixtures.scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
C_FILES = ("_fastdecode.c", "_pullscan.c", "_rowtext.c", "_rowimage.h")


def _generator():
    return load_script("gen_c_constants")


def test_header_is_not_stale():
    gen = _generator()
    assert (ROOT / "binlogkit" / "_constants.h").read_text() == gen.render(), \
        "binlogkit/_constants.h is stale: run make c-constants (and rebuild the C accelerators)"


def test_header_names_every_code():
    from binlogkit.constants import ColumnType, EventFlag, EventType

    text = (ROOT / "binlogkit" / "_constants.h").read_text()
    named = [(t.name, t.value) for t in EventType] + [(f"MYSQL_TYPE_{t.name}", t.value) for t in ColumnType]
    for name, value in named:
        assert re.search(rf"^    {name} = {value},$", text, re.M), name
    for flag in EventFlag:
        assert f"LOG_EVENT_{flag.name}_F = {flag.value:#06x}," in text


def test_c_files_include_it_and_compare_codes_by_name():
    for name in C_FILES:
        src = (ROOT / "binlogkit" / name).read_text()
        assert '#include "_constants.h"' in src, name
        # a type code compared as a number (code == 19, case 162:) or a type enum of the file's own
        assert not re.findall(r"\bcode\s*[=!<>]=?\s*\d+|\bcase\s+\d+\s*:", src), name
        assert "T_DECIMAL" not in src and "T_BLOB" not in src, name

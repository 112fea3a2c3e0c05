"""Source names as lakehouse names: one rule for every format, pure.

A database or table name comes from the archive (a Table_map, a DDL statement) and so is data,
not trusted: MySQL allows any character but U+0000 in a quoted identifier, and a damaged or
hostile file can say anything. As a Delta table's folder or an Iceberg identifier part, ``/`` and
``..`` would leave the warehouse, ``.`` would nest an Iceberg namespace, control characters are
refused by delta-rs (``make fuzz``, target export-lake). So a name is stored the way MySQL
stores table names as file names (``tablename_to_filename``): ASCII letters, digits, ``_`` and
``$`` as they are, any other character ``@`` and its code point in four hex digits (``@@`` and
six past U+FFFF). Ordinary names are unchanged; ``source`` reads a stored name back.
"""

from __future__ import annotations

import re

CHANGES = "__changes"     # a change table's name: the source table's and this
_KEEP = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_CODE = re.compile(r"@@([0-9a-f]{6})|@([0-9a-f]{4})")


def stored(name: str) -> str:
    """``name`` as one storage path segment / catalog identifier part (never empty)."""
    if name and all(c in _KEEP for c in name):
        return name
    out = "".join(c if c in _KEEP else (f"@{ord(c):04x}" if ord(c) <= 0xFFFF else f"@@{ord(c):06x}") for c in name)
    return out or "@"


def source(name: str) -> str:
    """The source name a ``stored`` one stands for."""
    if name == "@":
        return ""
    return _CODE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), name)


__all__ = ["CHANGES", "source", "stored"]

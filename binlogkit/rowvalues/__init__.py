"""Row images to column values (lazy: only when asked, never on the scan paths).

``tables``: table maps (types, metadata, optional metadata, hints); ``values``: one value by
its type; ``images``: rows events to rows, and to ``decode -v`` lines; ``jsonform``: rows as
JSON-safe values. Everything public is importable from here.
"""

from .images import C_ROWTEXT, RawRows, decode_rows, verbose_lines, verbose_text
from .jsonform import CODECS, column_text, json_value, rows_json
from .tables import *  # noqa: F401,F403  (type codes and event-type sets)
from .tables import HINTS, Column, Table, parse_hints, parse_optional_metadata, table_from_map
from .values import Geometry, UnknownColumnType, Value, hinted

__all__ = ["RawRows", "decode_rows", "verbose_lines", "verbose_text", "CODECS", "column_text", "json_value",
           "rows_json", "HINTS", "Column", "Table", "parse_hints", "parse_optional_metadata", "table_from_map",
           "Geometry", "UnknownColumnType", "Value", "hinted", "C_ROWTEXT", "_rowtext"]

_rowtext = C_ROWTEXT   # the older name of the C accelerator (tests/test_rowtext.py reads it)

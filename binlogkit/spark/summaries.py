"""The ``summaries`` table: one row per file, audit's per-file summary (``summary``: all of it as
JSON)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from .files import FileTask

from .common import Query


# --- summaries ------------------------------------------------------------------------------------

def _summaries(q: Query, task: FileTask, inp) -> Iterator[tuple]:
    from ..audit.summary import file_summary

    s = file_summary(inp)
    j = lambda v: None if v is None else json.dumps(v, default=str)  # noqa: E731
    yield (s["file"], s["directory"], s["base"], s["number"], s["size"], s["relay"], s["server_version"],
           s["flavor"], s["events"], s["end_offset"], s["first_timestamp"], s["last_timestamp"], s["transactions"],
           len(s["bad_checksums"]), list(s["server_ids"]), j(s["previous_gtids"]), j(s["gtid_list"]),
           j(s["problem"]), json.dumps(s, default=str))


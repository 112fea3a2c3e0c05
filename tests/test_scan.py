"""The fast scan path agrees with the reader on every fixture and corpus file."""

from __future__ import annotations

import pytest

from binlogkit import open_binlog
from binlogkit.errors import BinlogError
from binlogkit.scan import scan

from test_codecs import corpus_files, fixture_files


@pytest.mark.parametrize("path", corpus_files() + fixture_files(), ids=lambda p: p.name)
def test_scan_agrees_with_reader(path):
    events, err = [], None
    try:
        events.extend(open_binlog(str(path)))
    except BinlogError as exc:
        err = exc
    res = scan(path, count_types=True)
    assert res.events == len(events)
    assert res.end_offset == (events[-1].end_offset if events else 4)
    assert res.checksummed == sum(1 for e in events if e.checksum_ok is not None)
    if err is None:
        assert res.ok, res.problem
    else:
        assert type(res.problem) is type(err) and res.problem.offset == err.offset
    counts = {}
    for e in events:
        counts[e.type_code] = counts.get(e.type_code, 0) + 1
    assert res.type_counts == counts

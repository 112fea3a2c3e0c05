"""The fast scan path agrees with the reader on every fixture and corpus file."""

from __future__ import annotations

import pytest

from binlogkit import open_binlog
from binlogkit.errors import BinlogError
from binlogkit.reading.scan import scan

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


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from binlogkit.reading import framing as framing_mod  # noqa: E402
from fixtures import store  # noqa: E402


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_scan_window_agrees_under_damage(tmp_path, monkeypatch, data):
    """A tiny window forces every slide and growth path; cut and damaged copies of a real relay
    log still give the reader's verdict."""
    monkeypatch.setattr(framing_mod, "WINDOW", data.draw(st.sampled_from([19, 64, 300, 4096])))
    src = (store.materialize("crash-partial-gtid") / "relay" / "relay-bin.000004").read_bytes()
    raw = bytearray(src[:data.draw(st.integers(4, len(src)))])
    for _ in range(data.draw(st.integers(0, 3))):
        if len(raw) > 4:
            raw[data.draw(st.integers(4, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    f = tmp_path / "x.bin"
    f.write_bytes(bytes(raw))
    events, err = [], None
    try:
        events.extend(open_binlog(str(f)))
    except BinlogError as exc:
        err = exc
    res = scan(f)
    assert res.events == len(events)
    assert (type(res.problem), getattr(res.problem, "offset", None)) == (type(err), getattr(err, "offset", None))

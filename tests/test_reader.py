"""The streaming reader against real files: the corpus catalog, and broken copies of them."""

from __future__ import annotations

import io
import zlib
from collections import Counter
from pathlib import Path

import crcmod.predefined
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from binlogkit import iter_raw_events, open_binlog
from binlogkit.errors import (BadMagicError, BinlogError, ChecksumError, TruncatedEventError,
                              UnsupportedFormatError, KeyRequiredError)
from binlogkit.reading.reader import event_crc

from conftest import catalog_rows

ROWS = [r for r in catalog_rows() if r["fmt"] in ("v4", "v3") and r["counts"]]


def _walk(path: Path, verify=True):
    """Events up to the first error, and that error (or None)."""
    events, err = [], None
    try:
        for ev in open_binlog(str(path), verify=verify):
            events.append(ev)
    except BinlogError as exc:
        err = exc
    return events, err


@pytest.mark.parametrize("row", ROWS, ids=[r["path"] for r in ROWS])
def test_event_counts_match_catalog(corpus, row):
    """Every v3/v4 corpus file: per-type event counts equal the catalog's independent walk."""
    events, err = _walk(corpus / row["path"])
    counts = Counter(e.type_code for e in events)
    want = dict(row["counts"])
    if row["partial"] is not None:  # the last event runs past EOF: we must stop on it, typed
        assert isinstance(err, TruncatedEventError), err
        want[row["partial"]] -= 1
        want = {k: v for k, v in want.items() if v}
        assert err.offset == events[-1].end_offset
    elif "rest encrypted" in " ".join(f"{k}" for k in [row["notes"]]) or 164 in want:
        assert isinstance(err, KeyRequiredError)  # read without its key (tests/test_encryption.py reads it)
        want.pop(None, None)
    elif "truncated tail" in row["notes"]:
        assert isinstance(err, TruncatedEventError)
    else:
        assert err is None, err
    assert dict(counts) == want


@pytest.mark.parametrize("row", [r for r in ROWS if "bad 0" in r["checksum"]], ids=lambda r: r["path"])
def test_checksums_verified_where_catalog_checked_them(corpus, row):
    """Files whose CRCs the catalog verified: we verify the same number, all good — including
    FDEs that still carry LOG_EVENT_BINLOG_IN_USE_F (MySQL clears it before computing)."""
    events, _ = _walk(corpus / row["path"])
    checked = [e for e in events if e.checksum_ok is not None]
    assert checked and all(e.checksum_ok for e in checked)
    n = int(row["checksum"].split("events CRC-checked ")[1].split(",")[0])
    assert len([e for e in checked if e.type_code != 15]) == n  # the catalog counts FDEs apart


def test_crc_is_crcmod_crc32(corpus):
    """zlib.crc32 (hot path) and crcmod's CRC-32 (independent reference) agree on real events."""
    ref = crcmod.predefined.mkCrcFun("crc-32")
    path = corpus / "mysql/mysql-test/std_data/binlog_transaction_with_GTID.000001"
    for ev in open_binlog(str(path)):
        if ev.checksum_ok is not None and not ev.flags & 1:
            assert ref(ev.data[:-4]) == zlib.crc32(ev.data[:-4]) == event_crc(ev.data)


def _first_crc_file(corpus) -> Path:
    return corpus / "mysql/mysql-test/std_data/binlog_transaction_with_GTID.000001"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_flipped_byte_is_caught_with_its_offset(corpus, data):
    """Flip one byte anywhere after the magic of a CRC32 file: the reader raises a typed error
    naming the event that holds the byte (or an earlier one, if a size field was hit).

    Excluded: the FDE's server_version bytes. Whether an FDE carries a checksum is decided by
    that version alone (as the servers do), so a damaged version can turn checksums off for the
    whole file; no reader can tell it from a genuinely older writer."""
    raw = bytearray(_first_crc_file(corpus).read_bytes())
    version_bytes = range(4 + 19 + 2, 4 + 19 + 52)
    pos = data.draw(st.integers(min_value=4, max_value=len(raw) - 1).filter(lambda p: p not in version_bytes))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    if pos == 4 + 17:  # FDE flags: LOG_EVENT_BINLOG_IN_USE_F is outside the CRC by design
        flip &= ~1
        assume(flip)
    raw[pos] ^= flip
    good = list(iter_raw_events(io.BytesIO(bytes(_first_crc_file(corpus).read_bytes())), name="orig"))
    holder = next(e for e in good if e.offset <= pos < e.end_offset)
    with pytest.raises(BinlogError) as info:
        list(iter_raw_events(io.BytesIO(bytes(raw)), name="flipped"))
    assert info.value.file == "flipped"
    assert info.value.offset is not None and info.value.offset <= holder.offset


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_truncation_anywhere_is_a_torn_event_at_the_right_offset(corpus, data):
    """Cut a real file at any length: every whole event before the cut is returned, then
    TruncatedEventError at the start of the first incomplete event — or nothing if the cut
    falls on a boundary. Never another exception, never a hang."""
    raw = _first_crc_file(corpus).read_bytes()
    good = list(iter_raw_events(io.BytesIO(raw)))
    cut = data.draw(st.integers(min_value=4, max_value=len(raw)))
    got = []
    try:
        for ev in iter_raw_events(io.BytesIO(raw[:cut]), name="cut"):
            got.append(ev.offset)
        assert cut in {e.end_offset for e in good} | {4}
    except TruncatedEventError as exc:
        assert exc.offset == max([4] + [e.end_offset for e in good if e.end_offset <= cut])
    assert got == [e.offset for e in good if e.end_offset <= cut]


def test_bad_magic_and_encrypted_are_typed(tmp_path, corpus):
    p = tmp_path / "not-a-binlog"
    p.write_bytes(b"hello world")
    with pytest.raises(BadMagicError) as info:
        list(open_binlog(str(p)))
    assert info.value.offset == 0 and str(p) in str(info.value)
    with pytest.raises(KeyRequiredError) as info:  # without its keyring (test_encryption reads it with)
        list(open_binlog(str(corpus / "mysql/mysql-test/std_data/rpl_nogtid_encryption_master-bin.000002")))
    assert info.value.offset == 0 and "MySQLReplicationKey_" in str(info.value)


def test_checksum_error_carries_context(corpus):
    raw = bytearray(_first_crc_file(corpus).read_bytes())
    good = list(iter_raw_events(io.BytesIO(bytes(raw))))
    victim = good[3]
    raw[victim.end_offset - 1] ^= 0xFF  # break the stored CRC of event 3 only
    with pytest.raises(ChecksumError) as info:
        list(iter_raw_events(io.BytesIO(bytes(raw)), name="x.bin"))
    err = info.value
    assert (err.file, err.offset, err.event_type) == ("x.bin", victim.offset, victim.type_name)
    # lenient: the same stream is readable with verify=False, and the bad event is flagged
    flags = [e.checksum_ok for e in iter_raw_events(io.BytesIO(bytes(raw)), verify=False)]
    assert flags.count(False) == 1 and flags[3] is False

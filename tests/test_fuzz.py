"""The fuzz campaign's findings as regression tests (each input built with the codecs' build
side, small), and a short bounded campaign over every target (``make fuzz`` runs long ones;
docs/fuzz.md records them)."""

from __future__ import annotations

import io
import time
import tracemalloc
from pathlib import Path

import pytest
from construct import Container, ListContainer

from binlogkit import iter_raw_events
from binlogkit.api import Problem, decode_files, gtid_summary
from binlogkit.audit import file_summary
from binlogkit.codecs.common import pack_int
from binlogkit.codecs.payload import TransactionPayloadBody
from binlogkit.constants import EventType as T
from binlogkit.errors import BinlogError, FormatError
from binlogkit.reading.events import build_event, decode
from binlogkit.reading.reader import event_crc
from binlogkit.render import render_text
from binlogkit.rowvalues import table_from_map
from binlogkit.reading.scan import scan
from binlogkit.transactions import Grouper
from fixtures import store
from fuzz.runner import campaign
from fuzz.targets import TARGETS, run_cli


def _fde_event() -> bytes:
    p = store.materialize("crash-torn-gtid") / "relay" / "relay-bin.000004"
    return next(iter(iter_raw_events(open(p, "rb")))).data


def _file(tmp_path: Path, *events: tuple[int, bytes], name: str = "log-bin.000001", server_id: int = 1) -> Path:
    """A binlog: the fixture's Format_description (CRC32 on), then the events, built by the codecs."""
    out = bytearray(b"\xfebin" + _fde_event())
    for code, body in events:
        out += build_event(type_code=code, body=body, timestamp=1700000000, server_id=server_id,
                           log_pos=len(out) + 19 + len(body) + 4, flags=0, checksum=True)
    path = tmp_path / name
    path.write_bytes(bytes(out))
    return path


def _problems(path: Path, **kw) -> list[BinlogError]:
    return [x.error for x in decode_files([path], payloads=True, **kw) if isinstance(x, Problem)]


def _payload(compression_type: int, uncompressed_size: int | None, payload: bytes) -> bytes:
    fields = [(1, pack_int(len(payload))), (2, pack_int(compression_type))]
    if uncompressed_size is not None:
        fields.append((3, pack_int(uncompressed_size)))
    tlv = [Container(type=t, length=len(v), value=v) for t, v in fields] + [Container(type=0, length=None, value=None)]
    return TransactionPayloadBody.build(Container(fields=ListContainer(tlv), payload=payload))


def _inner_xid() -> bytes:
    return build_event(type_code=T.XID_EVENT, body=(5).to_bytes(8, "little"), timestamp=1, server_id=1,
                       log_pos=0, flags=0, checksum=False)


# --- the classes the issue lists ------------------------------------------------------------

def test_query_shorter_than_its_post_header_audit_and_decode(tmp_path):
    """1: the fast Query parser raised struct.error in the audit's per-file pass."""
    path = _file(tmp_path, (T.QUERY_EVENT, b"\x01\x00\x00"))
    m = file_summary(path)  # never raises for damaged input
    assert m["events"] == 2
    (err,) = _problems(path)
    assert err.event_type == "QUERY_EVENT" and err.offset > 4
    assert run_cli(["audit", "--jobs", "1", str(tmp_path)]) in (0, 1)


@pytest.mark.parametrize("ctype,size,payload,message", [
    (7, 10, b"x" * 10, "unknown compression type 7"),          # 2: ValueError escaped
    (0, 5, None, "uncompressed_size says 5"),                  # 3: ZstdError escaped (size field wrong)
    (0, 40, b"\x28\xb5\x2f\xfd garbage", "damaged ZSTD"),      # damaged zstd frame
    (0, None, None, "without an uncompressed_size"),
])
def test_transaction_payload_damage_is_typed(tmp_path, ctype, size, payload, message):
    import zstandard

    if payload is None:
        payload = zstandard.ZstdCompressor().compress(_inner_xid())
    path = _file(tmp_path, (T.TRANSACTION_PAYLOAD_EVENT, _payload(ctype, size, payload)))
    (err,) = _problems(path)
    assert isinstance(err, FormatError) and message in str(err)
    assert err.event_type == "TRANSACTION_PAYLOAD_EVENT" and err.offset is not None
    assert run_cli(["decode", "--base64-output=decode-rows", str(path)]) == 1


def test_zstd_payload_never_inflates_past_its_declared_size(tmp_path):
    """A small payload whose zstd data expands to 64 MB but declares 100 bytes: typed error,
    and no 64 MB allocation (the decompressor stops at the declared size + 1)."""
    import zstandard

    bomb = zstandard.ZstdCompressor().compress(bytes(64 << 20))
    path = _file(tmp_path, (T.TRANSACTION_PAYLOAD_EVENT, _payload(0, 100, bomb)))
    tracemalloc.start()
    (err,) = _problems(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "ZSTD gives more" in str(err) and peak < 16 << 20


def test_rows_query_and_long_xa_render(tmp_path):
    """4: render parsed display fields back with fromhex (Rows_query text; an XID past 64 bytes
    was summarised as '<N bytes>' first)."""
    gtrid, bqual = b"g" * 100, b"b" * 20
    xa = (b"\x00" + (1).to_bytes(4, "little", signed=True) + len(gtrid).to_bytes(4, "little")
          + len(bqual).to_bytes(4, "little") + gtrid + bqual)
    path = _file(tmp_path, (T.ROWS_QUERY_LOG_EVENT, b"\x0bhello\nworld"), (T.XA_PREPARE_LOG_EVENT, xa))
    evs = [e for e in decode_files([path]) if not isinstance(e, Problem)]
    text = "".join(render_text(e) for e in evs)
    assert "# hello\n# world\n" in text
    assert f"XA PREPARE X'{gtrid.hex()}',X'{bqual.hex()}',1\n" in text


def test_gtid_list_count_beyond_its_body_is_typed_and_quick(tmp_path):
    """5: a Gtid_list claiming 2^28-1 entries made gtids / transactions / audit loop for minutes."""
    body = (0x0FFFFFFF).to_bytes(4, "little") + bytes(32)
    path = _file(tmp_path, (T.GTID_LIST_EVENT, body))
    t0 = time.monotonic()
    s = gtid_summary([path])
    m = file_summary(path)
    assert time.monotonic() - t0 < 2
    assert s["problem"]["kind"] == "BodyLengthError" and s["problem"]["offset"] > 4
    assert m["problem"]["kind"] == "BodyLengthError"


def test_event_size_claiming_a_gibibyte_takes_no_gibibyte(tmp_path):
    """6: a 172-byte file whose event claims 1 GiB: verify and the audit pass buffered 1 GB."""
    data = b"\xfebin" + _fde_event()
    head = bytes(data[4:4 + 9]) + (1 << 30).to_bytes(4, "little") + bytes(6)
    path = tmp_path / "log-bin.000001"
    path.write_bytes(data + head[:4] + bytes([T.QUERY_EVENT]) + head[5:] + b"x" * 40)
    tracemalloc.start()
    res = scan(path)
    m = file_summary(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert type(res.problem).__name__ == "TruncatedEventError" and m["problem"]["kind"] == "TruncatedEventError"
    assert peak < 16 << 20  # the 4 MiB window, not the claimed size


# --- classes the campaign found --------------------------------------------------------------

def test_damaged_format_description_error_carries_its_offset(tmp_path):
    """recover compared a None offset (TypeError): the walk's Format_description error had none."""
    fde = bytearray(_fde_event())
    fde[-5] = 7  # checksum algorithm 7: no such thing (the CRC made right again)
    fde[-4:] = event_crc(bytes(fde)).to_bytes(4, "little")
    path = tmp_path / "relay-bin.000001"
    path.write_bytes(b"\xfebin" + bytes(fde))
    g = Grouper()
    with pytest.raises(BinlogError) as err:
        list(g.feed_file(str(path), open(path, "rb")))
    assert err.value.offset == 4 and "checksum algorithm" in str(err.value)


def test_optional_metadata_with_a_null_length_loses_only_the_metadata(tmp_path):
    """decode -v: a NULL (251) packed length in a Table_map's optional metadata was a TypeError."""
    body = ((42).to_bytes(6, "little") + b"\x01\x00" + b"\x02db\x00" + b"\x01t\x00" + b"\x01" + b"\x03"
            + b"\x00" + b"\x00" + b"\x04\xfb")
    path = _file(tmp_path, (T.TABLE_MAP_EVENT, body))
    raw = list(iter_raw_events(open(path, "rb")))[1]
    table = table_from_map(decode(raw).parsed)
    assert table.name == "t" and len(table.columns) == 1
    assert run_cli(["decode", "--base64-output=decode-rows", "-v", str(path)]) == 0


def test_mysql_gtid_number_out_of_range_is_typed(tmp_path):
    """audit's merge raised GtidError: the walk made 'uuid:2^63+5', which no GTID parser takes."""
    body = b"\x01" + bytes(range(16)) + ((1 << 63) + 5).to_bytes(8, "little") + b"\x02" + bytes(16)
    path = _file(tmp_path, (T.GTID_LOG_EVENT, body))
    m = file_summary(path)
    assert m["problem"]["kind"] == "FormatError" and m["problem"]["offset"] > 4
    assert gtid_summary([path])["problem"]["kind"] == "FormatError"
    assert run_cli(["audit", "--jobs", "1", str(tmp_path)]) in (0, 1)


def test_short_campaign_over_every_target_finds_nothing(tmp_path):
    """CI's bounded campaign: a few seconds per target, every target fed, no finding."""
    res = campaign(list(TARGETS), 2.0 * len(TARGETS), out=tmp_path, seed=17, slice_s=2.0, minimise_budget=40)
    assert all(s["inputs"] > 0 for s in res["targets"].values()), res["targets"]
    assert res["findings"] == [], res["findings"]


@pytest.mark.parametrize("where, line, text", [
    ("relay-log.info", 2, "\x1e553"),             # the campaign's input: a control byte before the position
    ("relay-log.info", 2, "\u00b2"),              # str.isdigit() takes a superscript two, int() does not
    ("relay-log.info", 0, "\x1e5"),               # the line count
    ("master.info", 2, "\uff15\uff15\uff13"),     # fullwidth digits
    ("master.info", "using_gtid=", "using_gtid=two"),
])
def test_info_file_numbers_are_ascii_digits(tmp_path, where, line, text):
    """recover: a relay-log.info position '\\x1e5458' passed ``strip().isdigit()`` and ``int()``
    raised ValueError (make fuzz, the long run, about 270 000 inputs in). Such a line is not a
    number: the plan goes on without it, or the file is reported damaged; never a traceback."""
    from fuzz.targets import recover_templates

    t = next(t for t in recover_templates() if t["name"] == "crash-torn-position")
    d = tmp_path / "relay"
    d.mkdir()
    for name, content in t["files"].items():
        if name == where:
            lines = content.decode().split("\n")
            i = line if isinstance(line, int) else next(k for k, x in enumerate(lines) if x.startswith(line))
            lines[i] = text
            content = "\n".join(lines).encode()
        (d / name).write_bytes(content)
    assert run_cli(["recover", str(d), "--json"]) in (0, 1, 2)
    assert run_cli(["recover", str(d)]) in (0, 1, 2)


REGRESSIONS = Path(__file__).parent / "data" / "fuzz-regressions"


@pytest.mark.parametrize("name", sorted(p.name for p in REGRESSIONS.glob("*-crash-*.bin")))
def test_inputs_the_campaign_found_after_the_merges_replay_clean(name, tmp_path):
    """Found by `make fuzz` after the audit summaries and the C decode loop landed: damaged
    tagged GTIDs raised ValueError in the audit's summary pass; a damaged MySQL GTID body with
    last_committed but no sequence_number raised KeyError in decode's text; incident on a file
    holding only the magic raised StopIteration; a damaged Gtid_tagged raised ValueError in the
    Spark source's events table (read_gtid now types it for every caller); a START ALTER seq_no
    past 2**63 overflowed the transactions table's int64 alter_id (now decimal(20, 0)); a damaged
    DECIMAL image of more digits than its column (or a Table_map's DECIMAL(p > 65)) reached pyarrow
    untyped; a damaged ALTER raised sqlglot's TokenError in the lake mirror; serve's client
    parsers raised ValueError for a 4,400-digit number in a query and in @slave_connect_state
    (int()'s digit limit). Each input, as the
    campaign saved it (its target is the file name's first word), now ends typed or clean."""
    from fuzz.runner import run_one

    target = name.split("-crash-")[0]
    found = run_one(target, (REGRESSIONS / name).read_bytes(), tmp_path)
    assert found is None, f"{found.kind}: {found.signature}\n{found.trace}"


def test_pull_short_format_description_is_typed(tmp_path):
    """The pull target's first find: a Format_description too short for its post-header table
    (an IndexError in the receiver) is a typed PullError; and a hostile Rotate name in a
    fuzzed stream never makes a file outside the folder (the target checks it)."""
    import random
    import struct

    from binlogkit.reading.events import build_event
    from binlogkit.pull.protocol import PullError, packet
    from binlogkit.pull.receiver import Receiver
    from binlogkit.pull.store import Store
    from fuzz.targets import _StreamConn

    rot = build_event(type_code=4, body=struct.pack("<Q", 4) + b"log-bin.000001", timestamp=0, server_id=1,
                      log_pos=0, flags=0x20, checksum=True)
    fde = build_event(type_code=15, body=struct.pack("<H", 4) + b"10.11.6-MariaDB".ljust(50, b"\0") + b"\0" * 5,
                      timestamp=0, server_id=1, log_pos=4 + 19 + 57 + 4, flags=0, checksum=True)
    d = tmp_path / "d"
    store = Store(d)
    conn = _StreamConn(packet(b"\x00" + rot, 1) + packet(b"\x00" + fde, 2), random.Random(1), False)
    rx = Receiver(store, conn, stop=lambda: conn.at >= len(conn.data))  # type: ignore[arg-type]
    try:
        with pytest.raises(PullError, match="too short for its table"):
            rx.run()
    finally:
        store.close()

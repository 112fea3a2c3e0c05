"""The Construct declaration of the common header and its struct twin agree; FDE round trip."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from binlogkit import open_binlog
from binlogkit.codecs.format_description import FormatDescriptionBody
from binlogkit.codecs.header import HEADER_FIELDS, HEADER_STRUCT, LEN_HEADER, CommonHeader
from binlogkit.constants import EventType
from fixtures import store

headers = st.fixed_dictionaries({
    "timestamp": st.integers(0, 2**32 - 1), "type_code": st.integers(0, 255),
    "server_id": st.integers(0, 2**32 - 1), "event_size": st.integers(0, 2**32 - 1),
    "log_pos": st.integers(0, 2**32 - 1), "flags": st.integers(0, 2**16 - 1)})


@given(headers)
def test_construct_and_struct_agree(h):
    raw = CommonHeader.build(h)
    assert len(raw) == LEN_HEADER == CommonHeader.sizeof()
    assert HEADER_STRUCT.unpack(raw) == tuple(h[f] for f in HEADER_FIELDS)
    assert HEADER_STRUCT.pack(*(h[f] for f in HEADER_FIELDS)) == raw
    parsed = CommonHeader.parse(raw)
    assert {f: parsed[f] for f in HEADER_FIELDS} == h


def test_fde_parse_build_round_trip_on_real_files(corpus):
    """Every FDE of the lab fixtures and the corpus: parse then build gives the same bytes."""
    paths = list((store.materialize("crash-torn-position") / "relay").glob("relay-bin.0*"))
    paths += [p for p in corpus.rglob("*") if p.is_file() and "expected" not in p.parts]
    seen = 0
    for path in paths:
        try:
            for ev in open_binlog(str(path), verify=False):
                if ev.type_code == EventType.FORMAT_DESCRIPTION_EVENT:
                    body = ev.body
                    parsed = FormatDescriptionBody.parse(body, len_body=len(body))
                    assert FormatDescriptionBody.build(parsed, len_body=len(body)) == body
                    seen += 1
        except Exception as exc:  # damaged corpus files end early; FDEs before that count
            if not hasattr(exc, "offset"):
                raise
    assert seen > 50

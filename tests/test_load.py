"""The LOAD DATA events of old servers (codecs/load.py): the 4.1 corpus file decodes fully and
renders as mariadb-binlog renders it; built Load / New_load / Create_file events round-trip;
a damaged one is a typed error, found without reading past its window."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys

import pytest
from construct import Container, ListContainer

from binlogkit import BinlogError, iter_raw_events
from binlogkit.codecs import control, load
from binlogkit.constants import EventType as T
from binlogkit.errors import BodyLengthError
from binlogkit.reading.events import build_event, decode, rebuild
from binlogkit.render import render_text

OLD_41 = "mysql/mysql-test/suite/binlog/std_data/binlog_old_version_4_1.000001"


def _v3_stream(*events: tuple[int, bytes]) -> bytes:
    """A binlog v3 file: Start_v3 of a 4.1 server, then the given (type, body) events, with
    log_pos the event's start as v3 writers stored it."""
    start = control.StartV3Body.build(Container(binlog_version=3, server_version=b"4.1.24-log".ljust(50, b"\0"),
                                                create_timestamp=0, rest=b""))
    out = bytearray(b"\xfebin")
    for code, body in ((T.START_EVENT_V3, start), *events):
        out += build_event(type_code=code, body=body, timestamp=1201690912, server_id=1, log_pos=len(out),
                           flags=0, checksum=False)
    return bytes(out)


def _body(codec, phl: int, **fields) -> bytes:
    return codec.build(Container(fields), len_body=0, type_code=0, post_header_len=phl)


def _load_fields(sql_ex, *, file_id=None, block=None, fname=b"/tmp/data.txt", fields=(b"a", b"bb")):
    return dict(thread_id=7, exec_time=0, skip_lines=1, len_table=2, len_db=4, num_fields=len(fields),
                file_id=file_id, post_header_extra=b"", sql_ex=sql_ex,
                field_lens=bytes(len(f) for f in fields), fields=ListContainer(fields), table=b"t3", db=b"test",
                fname=fname, block=block)


def test_corpus_41_file_decodes_fully_and_renders_like_mariadb_binlog(corpus):
    path = corpus / OLD_41
    raws = list(iter_raw_events(open(path, "rb"), name=str(path)))
    assert [r.type_code for r in raws][-3:] == [T.CREATE_FILE_EVENT, T.APPEND_BLOCK_EVENT, T.EXEC_LOAD_EVENT]
    assert len(raws) == 12
    evs = [decode(r) for r in raws]
    assert all(rebuild(e) == e.raw.data for e in evs)
    cf, ab, el = evs[-3:]
    assert cf.fields["file_id"] == ab.fields["file_id"] == el.fields["file_id"] == 2
    assert cf.fields["block_len"] + ab.fields["block_len"] == 131072 + 17664
    assert cf.fields["fname"] == "big_file.dat" and cf.fields["fields"] == ["a"]
    text = "".join(render_text(e, utc=True) for e in evs[-3:]).splitlines()
    expected = [  # mariadb-binlog 10.11's lines for these three events (the oracle test below runs it)
        "# at 580",
        "#080130 11:01:52 server id 1  end_log_pos 131726 \tQuery\tthread_id=1\texec_time=0",
        "# LOAD DATA INFILE 'big_file.dat' INTO TABLE `t3` FIELDS TERMINATED BY '\\t' ENCLOSED BY '' "
        "ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' STARTING BY '' (`a`)/*!*/;",
        "# file_id: 2  block_len: 131072",
        "# at 131726",
        "#080130 11:01:52 server id 1  end_log_pos 149413 ",
        "#Append_block: file_id: 2  block_len: 17664",
        "# at 149413",
        "#080130 11:01:52 server id 1  end_log_pos 149436 ",
        "#Exec_load: file_id=2",
    ]
    assert text == expected


@pytest.mark.skipif(not shutil.which("mariadb-binlog"), reason="mariadb-binlog not installed")
def test_41_rendering_matches_the_oracle(corpus):
    """Every line binlogkit prints for the LOAD DATA events is one mariadb-binlog prints
    (it adds, at Exec_load, the statement again as LOAD DATA LOCAL of the temporary file it
    wrote: binlogkit writes no files)."""
    path = corpus / OLD_41
    oracle = subprocess.run(["mariadb-binlog", str(path)], capture_output=True, text=True, check=True,
                            env={"TZ": "UTC"}).stdout.splitlines()
    ours = subprocess.run([sys.executable, "-m", "binlogkit.cli", "decode", "--base64-output=decode-rows", str(path)],
                          capture_output=True, text=True).stdout.splitlines()
    at = ours.index("# at 580")
    for line in ours[at:]:
        assert line in oracle, line


@pytest.mark.parametrize("code,codec,phl,sql_ex", [
    (T.LOAD_EVENT, load.LoadBody, 18,
     dict(field_term=b",", enclosed=b'"', line_term=b"\n", line_start=b"x", escaped=b"\\", opt_flags=4 | 2,
          empty_flags=8)),
    (T.NEW_LOAD_EVENT, load.NewLoadBody, 18,
     dict(field_term=b",,", enclosed=b"", line_term=b"\r\n", line_start=b"", escaped=b"\\", opt_flags=8)),
])
def test_built_load_events_round_trip_and_render(code, codec, phl, sql_ex):
    body = _body(codec, phl, **_load_fields(Container(sql_ex)))
    raw = list(iter_raw_events(io.BytesIO(_v3_stream((code, body)))))[1]
    ev = decode(raw)
    assert rebuild(ev) == raw.data
    assert ev.fields["fname"] == "/tmp/data.txt" and ev.fields["fields"] == ["a", "bb"]
    lines = render_text(ev, utc=True).splitlines()
    assert lines[2] == "use `test`/*!*/;"
    if code == T.LOAD_EVENT:  # REPLACE and OPTIONALLY ENCLOSED; STARTING BY marked empty
        assert lines[3] == ("LOAD DATA INFILE '/tmp/data.txt' REPLACE INTO TABLE `t3` FIELDS TERMINATED BY ',' "
                            "OPTIONALLY  ENCLOSED BY '\"' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' "
                            "STARTING BY '' IGNORE 1 LINES (`a`,`bb`)/*!*/;")
    else:
        assert lines[3] == ("LOAD DATA INFILE '/tmp/data.txt' IGNORE INTO TABLE `t3` FIELDS TERMINATED BY ',,' "
                            "ENCLOSED BY '' ESCAPED BY '\\\\' LINES TERMINATED BY '\\r\\n' STARTING BY '' "
                            "IGNORE 1 LINES (`a`,`bb`)/*!*/;")


def _create_file(**over) -> bytes:
    sql_ex = Container(field_term=b"\t", enclosed=b"", line_term=b"\n", line_start=b"", escaped=b"\\", opt_flags=0)
    fields = _load_fields(sql_ex, file_id=9, block=b"1\n2\n", fname=b"f.dat")
    fields.update(over)
    return _body(load.CreateFileBody, 22, **fields)


def test_built_create_file_append_exec_delete_round_trip():
    stream = _v3_stream((T.CREATE_FILE_EVENT, _create_file()),
                        (T.APPEND_BLOCK_EVENT, (9).to_bytes(4, "little") + b"3\n"),
                        (T.EXEC_LOAD_EVENT, (9).to_bytes(4, "little")),
                        (T.DELETE_FILE_EVENT, (9).to_bytes(4, "little")))
    evs = [decode(r) for r in iter_raw_events(io.BytesIO(stream))][1:]
    assert [rebuild(e) == e.raw.data for e in evs] == [True] * 4
    assert evs[0].fields["block_len"] == 4 and evs[1].fields["block_len"] == 2
    assert render_text(evs[3]).splitlines()[-1] == "#Delete_file: file_id=9"


@pytest.mark.parametrize("name,damage", [
    ("num_fields", lambda b: b[:14] + (0xFFFFFFFF).to_bytes(4, "little") + b[18:]),  # a count far past the body
    ("len_db", lambda b: b[:13] + bytes([200]) + b[14:]),                            # db runs past its NUL
    ("fname", lambda b: b[:b.index(b"f.dat")] + b"no-nul"),                          # name not NUL-terminated
])
def test_damaged_create_file_is_a_typed_error(name, damage):
    """Built right by the codec, then one field broken: the typed error names the event."""
    body = damage(_create_file())
    raw = list(iter_raw_events(io.BytesIO(_v3_stream((T.CREATE_FILE_EVENT, body)))))[1]
    with pytest.raises(BodyLengthError) as err:
        decode(raw)
    assert err.value.offset == raw.offset and err.value.event_type == "CREATE_FILE_EVENT"


def test_exec_load_with_bytes_over_is_typed():
    raw = list(iter_raw_events(io.BytesIO(_v3_stream((T.EXEC_LOAD_EVENT, b"\x01\x00\x00\x00\xff")))))[1]
    with pytest.raises(BinlogError):
        decode(raw)

"""The one source of events (``binlogkit.reading.source``) and the names module: the frames of
an input agree with the reader's events (boundaries, bytes, checksum verdicts, the Format in
force), bare tuples agree with records, and the name rules are the ones every command uses."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from binlogkit.errors import BadMagicError
from binlogkit.reading import names
from binlogkit.reading.framing import Frame
from binlogkit.reading.reader import iter_raw_events, read_events
from binlogkit.reading.source import CONTAINERS, Input, as_input, frames_of_stream, inputs
from fixtures import store


def _some_binlogs(n: int = 6) -> list[Path]:
    out: list[Path] = []
    for name in store.set_names():
        d = store.materialize(name)
        out += sorted(p for p in d.rglob("*") if p.is_file() and names.is_log_name(p.name))
        if len(out) >= n:
            break
    return out[:n]


def test_frames_agree_with_the_reader():
    for path in _some_binlogs():
        raws = list(read_events(Input(path)))
        frames = list(Input(path).frames(want=None))
        assert [(f.offset, f.type_code, f.event_size, f.data, f.checksum_ok, f.format) for f in frames] == \
            [(r.offset, r.type_code, r.event_size, r.data, r.checksum_ok, r.format) for r in raws], path
        bare = list(Input(path).frames(want=None, records=False))
        assert [tuple(f) for f in frames] == bare
        assert all(isinstance(f, Frame) for f in frames)


def test_data_only_for_wanted_types_and_every_fde():
    path = _some_binlogs(1)[0]
    for f in Input(path).frames(want={16}):
        assert (f.data is not None) == (f.type_code in (15, 16))


def test_compressed_inputs_read_the_same(tmp_path):
    path = _some_binlogs(1)[0]
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert Input(gz).compression == "gzip" and Input(path).compression is None
    assert list(Input(gz).frames(want=None)) == list(Input(path).frames(want=None))


def test_stream_and_input_agree_and_errors_name_the_input(tmp_path):
    path = _some_binlogs(1)[0]
    assert list(frames_of_stream(io.BytesIO(path.read_bytes()))) == list(Input(path).frames())
    bad = tmp_path / "x.000001"
    bad.write_bytes(b"nope" + bytes(40))
    with pytest.raises(BadMagicError) as e:
        list(Input(bad).frames())
    assert e.value.file == str(bad)
    with pytest.raises(BadMagicError):
        list(iter_raw_events(io.BytesIO(b"")))


def test_inputs_expand_and_keep_options(tmp_path):
    a, b = tmp_path / "bin.000001", tmp_path / "bin.000002"
    a.write_bytes(b"")
    b.write_bytes(b"")
    (tmp_path / "bin.index").write_text("./bin.000001\n./bin.000002\n")
    got = inputs([tmp_path], verify=False)
    assert [i.name for i in got] == [str(a), str(b)] and not any(i.verify for i in got)
    one = Input(a)
    assert as_input(one) is one and inputs([one]) == [one]


def test_one_table_of_containers():
    assert set(CONTAINERS) == {b"\xfdbin"}  # a MySQL binlog_encryption file; a new container is one entry


def test_names():
    assert names.is_log_name("mysql-bin.000001") and names.is_log_name("relay-bin.000123.xz")
    assert names.is_log_name("s3://bucket/prefix/mariadb-bin.000002.gz")
    assert not names.is_log_name("mysql-bin.index") and not names.is_log_name("mariadb-bin.000001.idx")
    assert names.strip_compressed("a.000001.bz2") == "a.000001"
    assert [names.compression_of(f"a.000001{s}") for s in names.COMPRESSED_SUFFIXES] == ["xz", "gzip", "bzip2", "lzma"]
    assert names.twin("a.000001", {"a.000001.xz"}.__contains__) == "a.000001.xz"
    assert names.index_lines("./a.000001\n\n ./a.000002 \n") == ["./a.000001", "./a.000002"]


def test_an_input_for_a_worker_carries_the_key_spec_never_key_bytes(tmp_path):
    """Worker processes and Spark tasks get ``Input.for_worker()``: the keys' KeySpec (paths),
    loaded there; the pickled value holds no key bytes. Keys made in code have no spec: None."""
    import pickle

    from binlogkit.crypto.keys import Keys, KeySpec, load_keys

    key = bytes(range(32))
    kf = tmp_path / "keys.txt"
    kf.write_text("1;" + key.hex() + "\n")
    kf.chmod(0o600)
    keys = load_keys(str(kf))
    assert keys is not None and keys.spec is not None
    sent = Input(tmp_path / "mariadb-bin.000001", keys).for_worker()
    assert isinstance(sent.keys, KeySpec) and sent.name == str(tmp_path / "mariadb-bin.000001")
    blob = pickle.dumps(sent)
    assert key not in blob and key.hex().encode() not in blob
    assert pickle.loads(blob).loaded_keys().mariadb_key(1, 1) == key
    assert Input("x.000001", Keys(mariadb={1: key})).for_worker().keys is None
    assert Input("x.000001").for_worker() == Input("x.000001")


def test_audit_options_take_the_key_spec_from_the_inputs(tmp_path):
    """``audit --engine spark``: the options the job gets hold the inputs' names and their keys'
    ``KeySpec`` (paths), never key bytes; inputs without keys give no spec."""
    import pickle

    from binlogkit.spark.jobs.audit import AuditOptions
    from binlogkit.crypto.keys import KeySpec, load_keys

    key = bytes(range(32, 64))
    kf = tmp_path / "keys.txt"
    kf.write_text("1;" + key.hex() + "\n")
    kf.chmod(0o600)
    keys = load_keys(str(kf))
    opts = AuditOptions.of([Input(tmp_path / "a", keys), Input(tmp_path / "b", keys)], live=True)
    assert opts.paths == (str(tmp_path / "a"), str(tmp_path / "b")) and opts.live
    assert isinstance(opts.spec, KeySpec) and opts.spec.key_file == str(kf)
    blob = pickle.dumps(opts) + repr(opts).encode()
    assert key not in blob and key.hex().encode() not in blob
    assert AuditOptions.of([Input("x.000001")]).spec is None
    assert AuditOptions.of([Input("x.000001")], max_findings=None, max_series=0) == AuditOptions(
        ("x.000001",), max_findings=1000, max_series=0)  # None: the job's default; 0: all


def test_alongside_reads_a_path_with_the_inputs_keys():
    from binlogkit.crypto.keys import Keys

    keys = Keys(mariadb={1: bytes(16)})
    src = Input("relay", keys, verify=False)
    beside = src.alongside("replica-bin.index")
    assert beside == Input("replica-bin.index", keys) and beside.keys is keys and beside.verify
    own = Input("other", None)
    assert src.alongside(own) is own

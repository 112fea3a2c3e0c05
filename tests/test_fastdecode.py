"""The C decode / verify loop (``binlogkit._fastdecode`` driven by ``binlogkit.reading.fastdecode``)
prints exactly what the Python path prints.

Every fixture and corpus file goes through `decode`, `decode --json`, `decode -v`,
`decode -v --json`, `--no-verify` and `--lenient` twice -- with the accelerator and with it
switched off -- and stdout, stderr and the exit code must be equal; `verify` must give the same
verdict as ``scan.scan``. Damaged copies (bytes flipped, cut, grown; hypothesis) must agree too,
and a test counts that the C loop really printed events (a fast path that always stepped aside
would pass the equality tests and be useless).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlogkit.reading import fastdecode
from binlogkit.cli import main
from binlogkit.reading.scan import scan

from c_builds import require_built
from test_codecs import fixture_files

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MODES = [[], ["--json"], ["-v"], ["-v", "--json"], ["--no-verify"], ["--lenient", "-v"]]


@pytest.fixture(scope="module")
def accel():
    return require_built(fastdecode._fastdecode, "binlogkit._fastdecode", "the Python path")


def _files() -> list[Path]:
    """Every fixture and corpus log, each content once (the crash sets share their primaries)."""
    out = [p for p in fixture_files() if "mariadb-bin" in p.name or "relay" in p.name]
    if CORPUS.is_dir():
        out += sorted(p for p in CORPUS.rglob("*") if p.is_file() and "expected" not in p.parts
                      and (p.suffix[1:].isdigit() or p.suffix in (".binlog", ".bin")))
    seen, unique = set(), []
    for p in out:
        key = hashlib.sha1(p.read_bytes()).digest()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _run(args: list[str], fast: bool, monkeypatch) -> tuple[bytes, str, int]:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(fastdecode, "_fastdecode", None)
        r = CliRunner().invoke(main, args)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.stdout_bytes, r.stderr, r.exit_code


def _same(args: list[str], monkeypatch) -> bytes:
    fast = _run(args, True, monkeypatch)
    slow = _run(args, False, monkeypatch)
    assert fast[2] == slow[2], f"exit codes differ for {args}"
    assert fast[1] == slow[1], f"stderr differs for {args}"
    if fast[0] != slow[0]:
        a, b = fast[0].splitlines(), slow[0].splitlines()
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        pytest.fail(f"{args}: line {i} differs:\n fast: {a[i:i + 1]}\n slow: {b[i:i + 1]}")
    return fast[0]


def test_every_file_prints_the_same(accel, monkeypatch):
    files = _files()
    assert files
    for path in files:  # every event in text, JSON and -v; the other modes on the varied files
        varied = "row-types" in str(path) or "compressed" in str(path) or CORPUS in path.parents
        for mode in MODES if varied and path.stat().st_size < 2 << 20 else MODES[:3]:
            _same(["decode", "--base64-output=decode-rows", *mode, str(path)], monkeypatch)


def test_several_files_at_once_keep_table_maps(accel, monkeypatch):
    """Tables carry over from one file to the next, as in the Python path."""
    files = [str(p) for p in fixture_files() if "row-types" in str(p) and "mariadb-bin" in p.name]
    assert files
    _same(["decode", "--base64-output=decode-rows", "-v", *files], monkeypatch)


def test_verify_gives_the_scan_verdict(accel):
    for path in _files():
        got, want = fastdecode.verify_fast(path), scan(path)
        assert (got.events, got.checksummed, got.end_offset, got.size) == \
            (want.events, want.checksummed, want.end_offset, want.size), path
        assert str(got.problem) == str(want.problem), path


def test_the_c_loop_prints_the_hot_events(accel):
    """On a real row-based file most events come out of C (bytes), not as Python Events."""
    path = next(p for p in fixture_files() if "replication-gtid" in str(p) and "primary" in str(p))
    for as_json in (False, True):
        for rows in (False, "text"):
            if rows and as_json:
                continue
            items = list(fastdecode.decode_fast([path], rows=rows, as_json=as_json))
            rendered = sum(1 for i in items if type(i) is bytes)
            python = sum(1 for i in items if type(i) is not bytes)
            text = b"".join(i for i in items if type(i) is bytes)
            assert rendered and text.count(b"# at " if not as_json else b'{"file": ') > 10 * python


def _seed() -> bytes:
    path = next(p for p in fixture_files() if "row-types" in str(p) and p.name.endswith(".000003"))
    return path.read_bytes()


SEED = _seed()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_files_print_the_same(accel, monkeypatch, tmp_path_factory, data):
    buf = bytearray(SEED)
    for _ in range(data.draw(st.integers(1, 3))):
        how = data.draw(st.sampled_from(["flip", "cut", "grow", "zero"]))
        if how in ("flip", "zero") and len(buf) <= 4:
            how = "grow"  # cut down to the magic: only growing is left to do
        if how == "flip":
            i = data.draw(st.integers(4, len(buf) - 1))
            buf[i] = data.draw(st.integers(0, 255))
        elif how == "cut":
            del buf[data.draw(st.integers(4, len(buf))):]
        elif how == "grow":
            i = data.draw(st.integers(4, len(buf)))
            buf[i:i] = data.draw(st.binary(max_size=64))
        else:
            i = data.draw(st.integers(4, len(buf) - 1))
            buf[i:i + 4] = b"\x00\x00\x00\x00"
    path = tmp_path_factory.mktemp("damaged") / "mariadb-bin.000001"
    path.write_bytes(bytes(buf))
    for mode in ([], ["--json"], ["-v"], ["--no-verify", "--lenient"], ["--no-verify", "--json"]):
        _same(["decode", "--base64-output=decode-rows", *mode, str(path)], monkeypatch)
    got, want = fastdecode.verify_fast(path), scan(path)
    assert (got.events, got.end_offset, str(got.problem)) == (want.events, want.end_offset, str(want.problem))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=600), at=st.sampled_from([4, 1000]), opts=st.integers(0, 511))
def test_walk_on_any_bytes_never_crashes(accel, blob, at, opts):
    """Whatever the window holds and whatever the options, walk() frames or steps aside."""
    cfg = bytes([1] * 256) + bytes([8] * 256)
    names = tuple(b'"type": "X", "type_code": 1, "name": "X"' for _ in range(256))
    buf = bytearray(blob)
    status, rel, _, pos, text, info, events, _ = accel.walk(buf, 0, len(buf), at, opts, fastdecode.CRC32, cfg,
                                                            names, b'{"file": "f", "offset": ')
    assert 0 <= rel <= len(buf) and status in range(6) and pos == at + rel


def test_json_escapes_as_json_dumps_does(accel, monkeypatch, tmp_path):
    """DEL (0x7f) and control bytes in a query: json.dumps (ensure_ascii) escapes them, so does C."""
    from binlogkit import open_binlog
    from binlogkit.reading.events import build_event

    out = bytearray(SEED[:4])
    changed = 0
    for raw in open_binlog(str(next(p for p in fixture_files() if "row-types" in str(p)
                                    and p.name.endswith(".000003")))):
        data = raw.data
        if raw.type_code == 160 and b" " in raw.body:
            body = raw.body.replace(b" ", b"\x7f", 1).replace(b" ", b"\x01", 1).replace(b" ", b'"', 1)
            data = build_event(type_code=160, body=body, timestamp=raw.timestamp, server_id=raw.server_id,
                               log_pos=raw.log_pos, flags=raw.flags, checksum=raw.len_checksum > 0)
            changed += 1
        out += data
    assert changed
    path = tmp_path / "mariadb-bin.000001"
    path.write_bytes(bytes(out))
    printed = _same(["decode", "--base64-output=decode-rows", "--json", str(path)], monkeypatch)
    assert b"\\u007f" in printed and b"\\u0001" in printed

"""Replayable `decode` (the default, ``--base64-output=auto``) through the C loop prints exactly
what ``decoding.replay`` prints on its own.

Every fixture and corpus file goes through `decode` (and `--no-verify`) twice -- with the C
loop and with it switched off -- and stdout, stderr and the exit code must be equal; damaged
copies (hypothesis) too; and a test counts that the C loop really printed the rows events (a
fast path that always stepped aside would pass the equality tests and be useless).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binlogkit.decoding.replay import Replay, ReplayOptions
from binlogkit.reading import fastdecode

from c_builds import require_built
from test_codecs import fixture_files
from test_fastdecode import SEED, _same

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


@pytest.fixture(scope="module")
def accel():
    return require_built(fastdecode._fastdecode, "binlogkit._fastdecode", "the Python path")


@pytest.fixture(autouse=True)
def utc():
    """The C loop prints UTC: the replayable output is in local time, so make local time UTC
    (and put the zone back afterwards)."""
    import os
    import time

    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def _files() -> list[Path]:
    """Every fixture (MariaDB 10.11 and 11.8, MySQL 9.7) and corpus log, each content once."""
    from fixtures import store
    from test_replay import _logs, _materialized

    out = list(fixture_files())
    for server in ("mariadb-11.8", "mysql-9.7"):
        out += [p for name in store.set_names(server) if name != "keyring-encrypted"
                for p in _logs(_materialized(server, name))]
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


def test_every_file_replays_the_same(accel, monkeypatch):
    files = _files()
    assert any("mysql" in str(p) for p in files) and any("mariadb" in str(p) for p in files)
    for path in files:
        _same(["decode", str(path)], monkeypatch)
        if "row-types" in str(path) or "compressed" in str(path):
            _same(["decode", "--no-verify", str(path)], monkeypatch)


def test_several_files_at_once(accel, monkeypatch):
    files = [str(p) for p in fixture_files() if "row-types" in str(p) and "mariadb-bin" in p.name]
    assert files
    _same(["decode", *files], monkeypatch)


def _fed_types(path, **opts) -> tuple[str, list[int]]:
    """The replayable text through the C loop, and the type codes of the events fed to Replay."""
    rp = Replay(ReplayOptions(**opts))
    fed = []
    real = rp.feed

    def feed(ev):
        fed.append(ev.raw.type_code)
        return real(ev)
    rp.feed = feed  # type: ignore[method-assign]
    text = "".join(t.decode() if isinstance(t, bytes) else t for t in fastdecode.replay_fast(rp, [path]))
    return text, fed


@pytest.mark.parametrize("utc", [True, False])
def test_the_c_loop_prints_the_transactions(accel, utc):
    """On a real row-based MariaDB file every GTID, Annotate_rows, Table_map, rows event and Xid
    comes out of C: none of them is fed to Replay (a fast path that always stepped aside would
    pass the equality tests and be useless), and the text is still the reference's."""
    from binlogkit import open_binlog
    from binlogkit.decoding import replay_text

    path = next(p for p in fixture_files() if "replication-gtid" in str(p) and "primary" in str(p)
                and p.name == "mariadb-bin.000002")
    hot = {16, 19, 160, 162} | set(fastdecode.ROWS_CODES)
    in_file = [raw.type_code for raw in open_binlog(str(path))]
    assert sum(t in fastdecode.ROWS_CODES for t in in_file) >= 10 and in_file.count(162) >= 5
    text, fed = _fed_types(path, utc=utc)
    assert not hot & set(fed), sorted(set(fed))
    ref = Replay(ReplayOptions(utc=utc))
    assert text == "".join(replay_text(ref, [path]))


def test_the_c_loop_prints_mysql_transactions(accel):
    """A MySQL 9.7 file: Xid and the rows events of the tables it models in C, and the BEGIN
    Queries whose context is unchanged (the first ones and those after a change go to Replay);
    its GTIDs and Rows_query events are Replay's."""
    from binlogkit import open_binlog
    from binlogkit.decoding import replay_text

    path = next(p for p in _files() if str(p).endswith("mysql-9.7/replication-gtid/primary/binlog.000001"))
    in_file = [raw.type_code for raw in open_binlog(str(path))]
    text, fed = _fed_types(path, utc=True)
    assert in_file.count(16) >= 100 and fed.count(16) == 0
    assert fed.count(2) * 4 < in_file.count(2) and fed.count(19) * 4 < in_file.count(19)
    assert text == "".join(replay_text(Replay(ReplayOptions(utc=True)), [path]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_files_replay_the_same(accel, monkeypatch, tmp_path_factory, data):
    buf = bytearray(SEED)
    for _ in range(data.draw(st.integers(1, 3))):
        how = data.draw(st.sampled_from(["flip", "cut", "grow", "zero"]))
        if how in ("flip", "zero") and len(buf) <= 4:
            how = "grow"
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
    for mode in ([], ["--no-verify"]):
        _same(["decode", *mode, str(path)], monkeypatch)


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_local_time_replays_the_same(accel, monkeypatch, zone):
    """Local time (the default): the C loop's stamps (localtime_r) are time.localtime's, in a
    zone with daylight saving time and one with a half-hour offset; --utc too."""
    import os
    import time

    files = [p for p in _files() if "row-types" in str(p) or str(p).endswith("replication-gtid/primary/mariadb-bin.000002")
             or ("mysql-9.7/replication-gtid/primary" in str(p)) or "mariadb-11.8/replication-gtid/primary" in str(p)]
    assert any("mysql-9.7" in str(p) for p in files) and any("mariadb-11.8" in str(p) for p in files)
    os.environ["TZ"] = zone
    time.tzset()  # the reference's stamps are cached per zone: no stale local time after this
    try:  # the utc fixture puts the zone back
        for path in files:
            _same(["decode", str(path)], monkeypatch)
        _same(["decode", "--utc", str(files[0])], monkeypatch)
    finally:
        os.environ["TZ"] = "UTC"
        time.tzset()


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=700), simd=st.booleans())
def test_base64_is_the_tools(accel, data, simd):
    """The C loop's base64 (SSSE3 lines where the CPU has them, else two characters per table
    read) is replay.b64's: 76-character lines, the last one padded."""
    from binlogkit.decoding.replay import b64

    mod = accel
    assert mod.b64(data, simd) == b64(data).encode()
    big = data * 40  # many whole lines
    assert mod.b64(big, simd) == b64(big).encode()


def test_status_variable_codes_are_the_codecs():
    """The C loop's Query status variable codes (Q_NAME[_CODE]) are codecs/status_vars.py's."""
    import re

    from binlogkit.codecs.status_vars import COMMON, MARIADB, MYSQL

    src = (Path(__file__).resolve().parents[1] / "binlogkit" / "_fastdecode.c").read_text()
    codes = {name: int(v) for name, v in re.findall(r"\bQ_([A-Z0-9_]+?)(?:_CODE)? = (\d+)", src)}
    assert len(codes) >= 14
    for flavor_table in (MYSQL, MARIADB):
        table = {**COMMON, **flavor_table}
        for name, code in codes.items():
            if code in table:
                assert table[code][0] == name.lower(), (name, code)
    assert all(code in COMMON or code in MYSQL or code in MARIADB for code in codes.values())

"""Replayable `decode` (the default, ``--base64-output=auto``) through the C loop prints exactly
what ``decoding.replay`` prints on its own.

Every fixture and corpus file goes through `decode` (and `--no-verify`) twice -- with the C
loop and with it switched off -- and stdout, stderr and the exit code must be equal; damaged
copies (hypothesis) too; and a test counts that the C loop really printed the rows events (a
fast path that always stepped aside would pass the equality tests and be useless).
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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


# --- -v / -vv: the `###` rows printed in the C loop (the shared _rowimage.h) ----------------------
def _reference(path, **opts) -> bytes:
    from binlogkit.decoding import replay_text

    return "".join(replay_text(Replay(ReplayOptions(**opts)), [path])).encode("utf-8", "surrogateescape")


def _fast(path, **opts) -> bytes:
    return b"".join(t if isinstance(t, bytes) else t.encode("utf-8", "surrogateescape")
                    for t in fastdecode.replay_fast(Replay(ReplayOptions(**opts)), [path]))


def _same_bytes(a: bytes, b: bytes, what) -> None:
    if a != b:
        x, y = a.split(b"\n"), b.split(b"\n")
        i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
        pytest.fail(f"{what}: line {i} differs:\n fast: {x[i:i + 1]}\n slow: {y[i:i + 1]}")


def _verbose_files() -> list[Path]:
    """``make test``'s share of the -v proof: every corpus file, and of each fixture folder (a set's
    server role: every fixture set of every server) its largest file under 1 MB, else its
    smallest; ``BINLOGKIT_PROOF=all`` (``make verbose-proof``): every file."""
    import os
    from collections import defaultdict

    files = _files()
    if os.environ.get("BINLOGKIT_PROOF") == "all":
        return files
    folders: dict[Path, list[Path]] = defaultdict(list)
    out = []
    for p in files:
        (out.append(p) if CORPUS in p.parents else folders[p.parent].append(p))
    for group in folders.values():
        small = [p for p in group if p.stat().st_size < 1 << 20]
        out.append(max(small, key=lambda p: p.stat().st_size) if small else min(group, key=lambda p: p.stat().st_size))
    return out


@contextmanager
def _in_zone(zone: str) -> Iterator[tuple[list[Path], bool]]:
    """(the files to hold equal, every file) with TZ set to ``zone``: in UTC ``_verbose_files``,
    in another zone the row-types sets and the replication primaries, every file with
    ``BINLOGKIT_PROOF=all``; TZ put back to UTC after."""
    import os
    import time

    full = os.environ.get("BINLOGKIT_PROOF") == "all"
    files = _verbose_files()
    if zone != "UTC" and not full:
        files = [p for p in files if "row-types" in str(p) or "replication-gtid/primary" in str(p)]
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield files, full
    finally:
        os.environ["TZ"] = "UTC"
        time.tzset()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_verbose_replays_the_same(accel, zone):
    """-v and -vv: the C loop's text is the reference's, byte for byte (row values keep their
    bytes). In UTC -v on a file of every fixture folder and every corpus file (``_verbose_files``),
    -vv on MySQL's (it differs from -v only in Rows_query, an event the Python path prints) and
    the row-types sets; in local time -- a zone with daylight saving time, one with a half-hour
    offset -- on the row-types sets and the replication primaries (``BINLOGKIT_PROOF=all``: every
    file, -v and -vv, in every zone)."""
    with _in_zone(zone) as (files, full):
        for path in files:
            vv = full or (zone == "UTC" and ("mysql" in str(path) or "row-types" in str(path)))
            for v in (1, 2) if vv else (1,):
                _same_bytes(_fast(path, verbose=v), _reference(path, verbose=v), (path, v, zone))


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_json_verbose_prints_the_same(accel, monkeypatch, zone):
    """decode --json -v (rows written in the C loop by the tables' plans, ``_fastdecode.c``
    json_rows) through the command with the C loop and without: stdout, stderr and exit code
    equal. In UTC on a file of every fixture folder and every corpus file (``_verbose_files``),
    in the other zones (JSON holds no local time: the C loop serves any zone) on the row-types
    sets and the replication primaries; ``BINLOGKIT_PROOF=all``: every file in every zone, with
    --no-verify --lenient too."""
    with _in_zone(zone) as (files, full):
        for path in files:
            _same(["decode", "--json", "-v", str(path)], monkeypatch)
            if full:
                _same(["decode", "--json", "-v", "--no-verify", "--lenient", str(path)], monkeypatch)


def test_verbose_command_replays_the_same(accel, monkeypatch):
    """decode -v / -vv through the command, in local time (New York): stdout, stderr, exit code."""
    import os
    import time

    files = [p for p in _verbose_files() if "row-types" in str(p) or "replication-gtid/primary" in str(p)]
    assert any("mysql-9.7" in str(p) for p in files) and any("mariadb-11.8" in str(p) for p in files)
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:  # the utc fixture puts the zone back
        for path in files:
            _same(["decode", "-v", str(path)], monkeypatch)
        _same(["decode", "-vv", str(files[0])], monkeypatch)
    finally:
        os.environ["TZ"] = "UTC"
        time.tzset()


@pytest.mark.parametrize("v", [1, 2])
def test_the_c_loop_prints_the_verbose_rows(accel, v):
    """With -v / -vv the rows events of a row-based MariaDB file (and its Table_maps, GTIDs and
    Xids) still come out of C -- their `###` rows too -- and the text is the reference's."""
    path = next(p for p in fixture_files() if "replication-gtid" in str(p) and "primary" in str(p)
                and p.name == "mariadb-bin.000002")
    hot = {16, 19, 160, 162} | set(fastdecode.ROWS_CODES)
    text, fed = _fed_types(path, utc=True, verbose=v)
    assert not hot & set(fed), sorted(set(fed))
    assert text.count("### INSERT INTO ") >= 10
    assert (text.count(" meta=0 nullable=") >= 10) == (v == 2)  # -vv: the tool's type comment per value
    assert text.encode() == _reference(path, utc=True, verbose=v)


def test_verbose_rows_written_from_where_they_are_held(accel, monkeypatch, tmp_path):
    """decode -v to a descriptor (a file, a pipe): a statement over ``direct_min`` bytes goes
    there from the C loop's buffers, not copied into its text; here every statement does."""
    from binlogkit.decoding import replay_chunks
    from binlogkit.decoding.render import write_replay

    monkeypatch.setattr(fastdecode, "DIRECT_MIN", 0)
    files = [p for p in _files() if "row-types" in str(p) or str(p).endswith("replication-gtid/primary/binlog.000001")]
    for path in files:
        out = tmp_path / "out.sql"
        with open(out, "w", encoding="utf-8", errors="surrogateescape") as fh:
            write_replay(replay_chunks(Replay(ReplayOptions(utc=True, verbose=1)), [path]), fh)
        _same_bytes(out.read_bytes(), _reference(path, utc=True, verbose=1), path)


def _rows_spans(path) -> list[tuple[int, int, int]]:
    """(event start, images start, images end) of each v1/v2 rows event of a file with CRC32s:
    from after its table id and flags to its checksum."""
    from binlogkit import open_binlog

    return [(raw.offset, raw.offset + 19 + 8, raw.offset + raw.event_size - 4) for raw in open_binlog(str(path))
            if raw.type_code in fastdecode.ROWS_CODES]


ROWS_SEED = next(p for p in fixture_files() if "row-types" in str(p) and p.name == "mariadb-bin.000001")
ROWS_SPANS = _rows_spans(ROWS_SEED)


def damaged_rows_copy(data, tmp_path_factory) -> Path:
    """A copy of the row-types seed with 1-6 bytes of its row images changed (hypothesis ``data``)
    and each touched event's CRC32 made to match again, so the C loop takes them."""
    import zlib

    buf = bytearray(ROWS_SEED.read_bytes())
    touched = set()
    for _ in range(data.draw(st.integers(1, 6))):
        ev, start, end = data.draw(st.sampled_from(ROWS_SPANS))
        i = data.draw(st.integers(start, end - 1))
        buf[i] = data.draw(st.integers(0, 255))
        touched.add((ev, end))
    for ev, end in touched:
        buf[end:end + 4] = zlib.crc32(bytes(buf[ev:end])).to_bytes(4, "little")
    path = tmp_path_factory.mktemp("rows") / "mariadb-bin.000001"
    path.write_bytes(bytes(buf))
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_verbose_on_damaged_row_images_replays_the_same(accel, tmp_path_factory, data):
    """Row images with bytes flipped and their CRC32 made good again (so the C loop takes them):
    whatever C prints, steps aside from (the Python path printing the event) or the Python
    decoder refuses (a ROLLBACK and the reason), the output is the reference's."""
    path = damaged_rows_copy(data, tmp_path_factory)
    for v in (1, 2):
        _same_bytes(_fast(path, utc=True, verbose=v), _reference(path, utc=True, verbose=v), v)

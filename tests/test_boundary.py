"""``binlogkit.boundary`` (the one copy of the transaction-boundary rules) against the C loop
that applies them without a Python call (``_pullscan.c``), and against ``transactions.Grouper``:

* real binlogs (fixtures/ and the shared corpus, by path; skipped when absent), their events as
  a dump stream: wherever the C loop takes a run of events, its state bits and its count of
  transactions ended are those of ``boundary.step`` over the same events;
* hypothesis-built event sequences (the codecs' build side: Query, GTIDs of both flavors, Xid,
  XA_prepare, payload, rows, preludes, events outside transactions), from any start state;
* the terminators ``step`` gives are the ones ``Grouper`` puts on its transactions.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from binlogkit import boundary as B
from binlogkit.codecs.format_description import fde_is_checksum_aware
from binlogkit.codecs.gtid import MariadbGtidBody, MysqlGtidBody
from binlogkit.codecs.statement import QueryBody, XidBody
from binlogkit.constants import EventType as T
from binlogkit.reading.crc import CRC32
from binlogkit.reading.events import build_event
from binlogkit.reading.files import expand_paths, open_input
from binlogkit.pull import receiver as receiver_mod
from binlogkit.pull.protocol import packet
from binlogkit.transactions import Grouper
from c_builds import c_loop

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
# scripts/asan-pullscan.sh: the same tests on a sanitized build
C_LOOP = c_loop(receiver_mod._pullscan, "PULLSCAN_SO", "binlogkit._pullscan")
needs_c = pytest.mark.skipif(C_LOOP is None, reason="binlogkit._pullscan not built (no C compiler)")

FIXTURE_DIRS = [ROOT / "fixtures" / "mariadb-10.11", ROOT / "fixtures" / "mariadb-11.8", ROOT / "fixtures" / "mysql-9.7"]


def _events(data: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 4
    while at + 19 <= len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little")
        if size < 19 or at + size > len(data):
            break
        out.append((at, data[at:at + size]))
        at += size
    return out


def _python(state: int, evs: list[bytes], crc: int, phl: int) -> tuple[int, int]:
    ended = 0
    for ev in evs:
        state, d = B.step(state, ev[4], ev[19:len(ev) - crc], phl)
        ended += B.ends(d)
    return state, ended


def _differ(events: list[tuple[int, bytes]], *, crc_on: bool, phl: int, state: int = 0) -> int:
    """Feed ``events`` (offset, bytes) as one dump stream to the C loop; where it stops, the
    Python step takes one event and the C loop goes on after it. Returns the events the C loop
    took (all of them compared with ``boundary.step``)."""
    assert C_LOOP is not None
    crc = 4 if crc_on else 0
    starts, buf = [], bytearray()
    for k, (_at, ev) in enumerate(events):
        starts.append(len(buf))
        buf += packet(b"\x00" + ev, (k + 1) & 0xFF)
    starts.append(len(buf))
    i, taken = 0, 0
    while i < len(events):
        pos, _seq, _at, size, n, ended, _ts, cstate = C_LOOP.run(buf, starts[i], len(buf), (i + 1) & 0xFF, False,
                                                                  crc_on, events[i][0], state, phl, CRC32)
        data = bytes(buf[starts[i]:starts[i] + size])   # the events taken, moved over their packet headers
        run = [ev for _a, ev in events[i:i + n]]
        pstate, pended = _python(state, run, crc, phl)
        assert (cstate, ended) == (pstate, pended), (i, n, state)
        assert data == b"".join(run) and pos == starts[i + n]
        taken += n
        i += n
        state = pstate
        if i < len(events):   # the Python path's event
            state, _d = B.step(state, events[i][1][4], events[i][1][19:len(events[i][1]) - crc], phl)
            i += 1
    return taken


def _files() -> list[Path]:
    out: list[Path] = []
    for d in FIXTURE_DIRS + [CORPUS]:
        if d.is_dir():
            out += [p for p in sorted(d.rglob("*")) if p.is_file() and ".index" not in p.name
                    and p.suffix not in (".json", ".md", ".idx", ".txt", ".test", ".result", ".inc", ".cnf")]
    return out


def _read(p: Path) -> bytes | None:
    try:
        with open_input(p) as fh:
            data = fh.read(64 << 20)
    except Exception:   # not a binlog we can open here (key files, damaged archives...)
        return None
    return data if data[:4] == b"\xfebin" else None


@needs_c
def test_c_loop_equals_the_step_on_real_binlogs():
    files = _files()
    if not files:
        pytest.skip("no fixture binlogs nor shared corpus here")
    checked = taken = 0
    for p in files:
        data = _read(p)
        if data is None:
            continue
        events = _events(data)
        if not events or events[0][1][4] != T.FORMAT_DESCRIPTION_EVENT:
            continue
        fde = events[0][1]
        crc_on = fde_is_checksum_aware(fde) and fde[-5] == 1
        phl = fde[19 + 2 + 50 + 4 + 1 + T.QUERY_EVENT - 1] if len(fde) > 19 + 2 + 50 + 4 + 1 + 4 else 13
        taken += _differ(events[1:], crc_on=crc_on, phl=phl)
        checked += 1
    if not checked:
        pytest.skip("no plain binlog among the fixtures")
    assert taken > 1000, (checked, taken)   # the C loop did take most events


# -- hypothesis: event sequences built with the codecs' build side ------------------------------

def _query(text: bytes, db: bytes = b"db") -> tuple[int, bytes]:
    return T.QUERY_EVENT, QueryBody.build(dict(thread_id=1, exec_time=0, len_db=len(db), error_code=0,
                                               len_status_vars=0, load=None, post_header_extra=b"",
                                               status_vars=b"", db=db, query=text),
                                          post_header_len=13, type_code=2)


def _maria_gtid(seq: int, flags2: int) -> tuple[int, bytes]:
    return T.GTID_EVENT, MariadbGtidBody.build(dict(seq_no=seq, domain_id=0, flags2=flags2, commit_id=7 if flags2 & 2 else None,
                                                    xid=None, extra=b"\x00"))


def _mysql_gtid(gno: int, short: bool) -> tuple[int, bytes]:
    body = MysqlGtidBody.build(dict(flags=1, sid=bytes(range(16)), gno=gno, tail=b"\x02" + bytes(16)))
    return T.GTID_LOG_EVENT, body[:20] if short else body


QUERIES = [b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA START 'x'", b"XA END 'x'", b"XA COMMIT 'x'", b"XA ROLLBACK 'x'",
           b"SAVEPOINT a", b"ROLLBACK TO a", b"INSERT INTO t VALUES (1)", b"CREATE TABLE t (a int)", b"begin",
           b"COMMIT ", b""]
EVENT = st.one_of(
    st.sampled_from(QUERIES).map(_query),
    st.tuples(st.integers(1, 1 << 40), st.sampled_from([0, 1, 2, 8, 9])).map(lambda a: _maria_gtid(*a)),
    st.tuples(st.integers(1, 1 << 40), st.booleans()).map(lambda a: _mysql_gtid(*a)),
    st.just((T.ANONYMOUS_GTID_LOG_EVENT, MysqlGtidBody.build(dict(flags=1, sid=bytes(16), gno=0, tail=b"")))),
    st.integers(0, 1 << 32).map(lambda x: (T.XID_EVENT, XidBody.build(dict(xid=x)))),
    st.just((T.XA_PREPARE_LOG_EVENT, b"\x01" + bytes(4) + bytes(4) + bytes(4))),
    st.just((T.TRANSACTION_PAYLOAD_EVENT, b"\x02\x01\x00\x00")),
    st.sampled_from([T.TABLE_MAP_EVENT, T.WRITE_ROWS_EVENT, T.UPDATE_ROWS_EVENT, T.DELETE_ROWS_EVENT, T.INTVAR_EVENT,
                     T.USER_VAR_EVENT, T.RAND_EVENT, T.ANNOTATE_ROWS_EVENT, T.GTID_LIST_EVENT, T.STOP_EVENT,
                     T.INCIDENT_EVENT, T.BINLOG_CHECKPOINT_EVENT]).map(lambda c: (c, bytes(12))),
)


def _built(seq: list[tuple[int, bytes]], crc_on: bool) -> list[tuple[int, bytes]]:
    out, at = [], 4
    for code, body in seq:
        size = 19 + len(body) + (4 if crc_on else 0)
        out.append((at, build_event(type_code=code, body=body, timestamp=1, server_id=1, log_pos=at + size, flags=0,
                                    checksum=crc_on)))
        at += size
    return out


@needs_c
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EVENT, max_size=40), st.booleans(), st.sampled_from([0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14]))
def test_c_loop_equals_the_step_on_built_sequences(seq, crc_on, state):
    _differ(_built(seq, crc_on), crc_on=crc_on, phl=13, state=state)




def _binlog(seq: list[tuple[int, bytes]]) -> bytes:
    """A binlog of ``seq`` after a real Format_description (the fixture's), without checksums
    switched off: the fixture's FDE says CRC32, so every event carries one."""
    src = next((p for p in sorted((ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary").glob("*.0*"))),
               None)
    if src is None:
        pytest.skip("fixtures absent")
    data = _read(src)
    assert data is not None
    fde = _events(data)[0][1]
    out = bytearray(b"\xfebin" + fde)
    for _at, ev in _built(seq, True):
        b = bytearray(ev)
        struct.pack_into("<I", b, 13, (len(out) + len(b)) & 0xFFFFFFFF)
        struct.pack_into("<I", b, len(b) - 4, zlib.crc32(b[:-4]))
        out += b
    return bytes(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EVENT, max_size=30))
def test_grouper_terminators_are_the_steps(seq):
    """Every transaction Grouper closes complete ends with the decision ``step`` gave for its
    last event; the ones closed incomplete were cut by a GTID event or the end."""
    data = _binlog(seq)
    g = Grouper()
    got = [(t.terminator, t.complete) for t in g.feed_file("x.000001", io.BytesIO(data), verify=True)]
    got += [(t.terminator, t.complete) for t in g.finish()]
    state, want, open_ = 0, [], False
    for code, body in seq:
        if code in B.OUTSIDE:
            continue
        state, d = B.step(state, code, body, 13)
        if d is B.GTID:
            if open_:
                want.append((None, False))
            open_ = True
        elif B.ends(d):
            want.append((d, True))
            open_ = False
        else:
            open_ = True
    if open_:
        want.append((None, False))
    assert got == want


# -- audit's per-file pass: the C loop (_pullscan.summary) against the Python walk ---------------

def _summaries(path) -> tuple[dict, dict]:
    from binlogkit.audit import summary as S

    c = S._pullscan
    try:
        S._pullscan = C_LOOP   # the sanitized build under scripts/asan-pullscan.sh
        fast = S.file_summary(path)
        S._pullscan = None
        slow = S.file_summary(path)
    finally:
        S._pullscan = c
    return fast, slow


def _assert_damaged_summaries_equal(factory, data: bytes, name: str, damage: int, flip: int, cut: int) -> None:
    """The C and the Python summaries of ``data`` as the file ``name`` are equal; in files of
    over 300 bytes, ``damage`` 1 changes the byte 200 + ``flip`` (modulo what is there), 2 cuts
    the last ``cut`` + 1 bytes."""
    data = bytearray(data)
    if damage == 1 and len(data) > 300:
        data[200 + flip % (len(data) - 200)] ^= 0x5A
    elif damage == 2 and len(data) > 300:
        del data[len(data) - 1 - cut:]
    p = factory.mktemp("s") / name
    p.write_bytes(bytes(data))
    fast, slow = _summaries(p)
    assert fast == slow


@pytest.mark.skipif(C_LOOP is None or not hasattr(C_LOOP, "summary"), reason="binlogkit._pullscan not built")
def test_audit_summary_with_c_equals_python_on_real_binlogs():
    files = _files()
    if not files:
        pytest.skip("no fixture binlogs nor shared corpus here")
    for p in files:
        fast, slow = _summaries(p)
        assert fast == slow, p


@pytest.mark.skipif(C_LOOP is None or not hasattr(C_LOOP, "summary"), reason="binlogkit._pullscan not built")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(EVENT, st.integers(1, 6).map(lambda k: ("run", k))), max_size=40),
       st.integers(0, 3), st.integers(0, 60))
def test_audit_summary_with_c_equals_python_on_built_sequences(tmp_path_factory, seq, damage, where):
    """Runs of in-order MariaDB transactions (what the C loop takes) mixed with anything else;
    sometimes a byte changed (a bad CRC, a break, an unknown type) or the file cut short."""
    events: list[tuple[int, bytes]] = []
    n = 100
    for item in seq:
        if item[0] == "run":
            for _ in range(item[1]):
                n += 1
                events += [_maria_gtid(n, 0), (T.TABLE_MAP_EVENT, bytes(12)), (T.WRITE_ROWS_EVENT, bytes(12)),
                           (T.XID_EVENT, XidBody.build(dict(xid=n)))]
        else:
            events.append(item)
    _assert_damaged_summaries_equal(tmp_path_factory, _binlog(events), "mariadb-bin.000001", damage, where * 3,
                                    where % 40)


@pytest.mark.skipif(C_LOOP is None or not hasattr(C_LOOP, "summary"), reason="binlogkit._pullscan not built")
def test_audit_summary_with_c_equals_python_across_windows(tmp_path):
    """Events larger than the fast walk's window, and thousands of transactions across windows."""
    events: list[tuple[int, bytes]] = []
    for n in range(101, 3101):
        events += [_maria_gtid(n, 0), (T.TABLE_MAP_EVENT, bytes(12)),
                   (T.WRITE_ROWS_EVENT, bytes(5 << 20 if n in (1100, 2100) else 300)),
                   (T.XID_EVENT, XidBody.build(dict(xid=n)))]
    p = tmp_path / "mariadb-bin.000001"
    p.write_bytes(_binlog(events))
    fast, slow = _summaries(p)
    assert fast == slow and fast["complete"] == {"0-1": [[101, 3100]]}


@pytest.mark.skipif(C_LOOP is None or not hasattr(C_LOOP, "summary"), reason="binlogkit._pullscan not built")
@pytest.mark.parametrize("start", [(1 << 63) - 5, (1 << 64) - 5])
def test_audit_summary_with_c_equals_python_past_signed_64_bits(tmp_path, start):
    """MariaDB seq_no is unsigned 64-bit; the C loop's run ends are signed: in-order runs that
    cross 2^63 - 1, and end at 2^64 - 1, are taken by Python there (the fuzzer's first find was an
    OverflowError here), with the same summary."""
    events: list[tuple[int, bytes]] = []
    for n in range(start, start + 5):
        events += [_maria_gtid(n, 0), (T.TABLE_MAP_EVENT, bytes(12)), (T.WRITE_ROWS_EVENT, bytes(40)),
                   (T.XID_EVENT, XidBody.build(dict(xid=n & 0xFFFFFFFF)))]
    p = tmp_path / "mariadb-bin.000001"
    p.write_bytes(_binlog(events))
    fast, slow = _summaries(p)
    assert fast == slow and fast["problem"] is None
    assert fast["complete"] == {"0-1": [[start, start + 4]]}


MYSQL_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


@pytest.mark.skipif(C_LOOP is None or not hasattr(C_LOOP, "summary"), reason="binlogkit._pullscan not built")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.integers(1, 8).map(lambda k: ("run", k)), st.integers(1, 5).map(lambda k: ("jump", k)),
                          st.sampled_from(["ddl", "statement", "open", "tagged", "other-uuid", "rotate"])), max_size=25),
       st.integers(0, 3), st.integers(0, 500))
def test_audit_summary_with_c_equals_python_on_built_mysql(tmp_path_factory, seq, damage, where):
    """MySQL binlogs (``fixtures.built_mysql``: the codecs' build side): in-order runs of
    row-format transactions (what the C loop takes) mixed with numbers that jump, DDL,
    statement-format transactions, an unfinished one, tagged GTIDs, another uuid; sometimes a
    byte changed or the file cut short."""
    from fixtures.built_mysql import BinlogBuilder

    b = BinlogBuilder()
    b.previous_gtids("")
    n = 0

    def rows(gtid: str) -> None:
        b.gtid_event(gtid)
        b.query("BEGIN")
        b.add(T.TABLE_MAP_EVENT, bytes(30))
        b.add(T.WRITE_ROWS_EVENT, bytes(40))
        b.add(T.XID_EVENT, (1000 + b.seq).to_bytes(8, "little"))

    for item in seq:
        if isinstance(item, tuple):
            n += item[1] if item[0] == "jump" else 0
            for _ in range(item[1] if item[0] == "run" else 1):
                n += 1
                rows(f"{MYSQL_UUID}:{n}")
        elif item == "ddl":
            n += 1
            b.gtid_event(f"{MYSQL_UUID}:{n}")
            b.query("CREATE TABLE t (a int)", db="test")
        elif item == "statement":
            n += 1
            b.transaction(f"{MYSQL_UUID}:{n}")
        elif item == "open":
            n += 1
            b.transaction(f"{MYSQL_UUID}:{n}", complete=False)
        elif item == "tagged":
            rows(f"{MYSQL_UUID}:blue:{n + 1}")
        elif item == "other-uuid":
            rows(f"aaaaaaaa-71ca-11e1-9e33-c80aa9429562:{n + 1}")
        else:
            b.rotate("mysql-bin.000002")
    _assert_damaged_summaries_equal(tmp_path_factory, b.data, "mysql-bin.000001", damage, where, where % 60)


def test_the_statement_cut_equals_the_fast_query_reader():
    """``boundary._statement`` (read without Construct, for pull's start-up) cuts every Query body
    of the fixtures and the corpus as ``codecs.fast.query`` does, and refuses what it refuses;
    also on bodies cut short and with a wrong post-header length."""
    from binlogkit.codecs.fast import Irregular, query

    seen = 0
    for p in _files():
        data = _read(p)
        if data is None:
            continue
        for _at, ev in _events(data):
            if ev[4] not in (T.QUERY_EVENT, T.QUERY_COMPRESSED_EVENT):
                continue
            body = ev[19:-4]
            for b, phl in ((body, 13), (body[:len(body) // 2], 13), (body[:12], 13), (body, 11)):
                try:
                    want = bytes(query(b, T.QUERY_EVENT, phl).query)
                except Irregular:
                    want = None
                assert B._statement(b, phl) == want, (p.name, b[:40])
            seen += 1
    assert seen > 100

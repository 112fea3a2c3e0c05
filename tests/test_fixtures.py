"""The committed lab fixtures: intact, and read by binlogkit exactly as the servers described
them (SHOW BINLOG EVENTS, mariadb-binlog, file sizes) in their manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from binlogkit import open_binlog
from binlogkit.constants import EventType
from binlogkit.errors import BinlogError, TruncatedEventError
from fixtures import store
from ring_sets import KINDS

SETS = store.set_names()
CRASH = [s for s in SETS if s.startswith("crash-")]
REPL = [s for s in SETS if s.startswith("replication-")]


def walk(path: Path):
    events, err = [], None
    try:
        events.extend(open_binlog(str(path)))
    except BinlogError as exc:
        err = exc
    return events, err


def test_every_set_is_there():
    assert {"replication-gtid", "replication-position-semisync", "ring-duplicates-off",
            "ring-duplicates-on", "crash-torn-position", "crash-torn-gtid", "crash-rotation-position",
            "crash-rotation-gtid", "crash-partial-position", "crash-partial-gtid"} <= set(SETS)
    for name in SETS:
        assert (store.SETS_DIR / name / "README.md").exists(), f"{name} has no README"


@pytest.mark.parametrize("name", SETS)
def test_materialize_checks_hashes(name):
    d = store.materialize(name)
    assert any(d.rglob("*.index"))


def test_materialize_rejects_a_damaged_file(tmp_path, monkeypatch):
    name = "crash-torn-position"
    src = store.SETS_DIR / name
    fake = tmp_path / "sets"
    import shutil
    shutil.copytree(src, fake / name)
    victim = fake / name / "relay" / "relay-bin.index"
    data = bytearray(victim.read_bytes())
    data[3] ^= 1
    victim.write_bytes(bytes(data))
    monkeypatch.setattr(store, "SETS_DIR", fake)
    with pytest.raises(ValueError, match="sha256"):
        store.materialize(name, tmp_path / "out")


@pytest.mark.parametrize("server,set_name", [(srv, n) for srv in store.SERVERS if srv != store.DEFAULT_SERVER
                                             for n in store.set_names(srv)])
def test_materialize_today_servers_sets(server, set_name, tmp_path):
    """Every set of MySQL 9.7 / MariaDB 11.8 materialises, its manifest's digests checked."""
    d = store.materialize(set_name, tmp_path, server=server)
    assert (d / ".stamp").exists() and any(p.is_file() and p.name != ".stamp" for p in d.rglob("*"))


def test_materialize_rejects_a_damaged_file_named_by_path(tmp_path, monkeypatch):
    """The ``"sha256": {path: digest}`` manifest form (MySQL 9.7 sets) is checked by path."""
    name, server = "incident", "mysql-9.7"
    import shutil
    fake = tmp_path / "fixtures"
    shutil.copytree(store.ROOT / "fixtures" / server / name, fake / server / name)
    victim = fake / server / name / "stopped-primary" / "primary-bin.000003"
    assert "stopped-primary/primary-bin.000003" in store.manifest(name, server)["sha256"]
    data = bytearray(victim.read_bytes())
    data[100] ^= 1
    victim.write_bytes(bytes(data))
    monkeypatch.setattr(store, "ROOT", tmp_path)
    with pytest.raises(ValueError, match="primary-bin.000003 does not match"):
        store.materialize(name, tmp_path / "out", server=server)


@pytest.mark.parametrize("name", REPL)
def test_primary_binlogs_match_show_binlog_events(name):
    """Every transaction the primary reported starts with a MariaDB GTID event at that offset
    and ends exactly at its end position; in a binlog, log_pos is each event's own end."""
    m = store.manifest(name)
    d = store.materialize(name) / "primary"
    by_file: dict[str, list[dict]] = {}
    for t in m["primary"]["transactions"]:
        by_file.setdefault(t["file"], []).append(t)
    assert sum(len(v) for v in by_file.values()) > 3000
    stored = {f["name"]: f for f in m["primary"]["files"]}
    for f in m["primary"]["binlog_files"]:
        events, err = walk(d / f["name"])
        assert err is None
        # SHOW BINARY LOGS ran before shutdown; the stored file also has the Stop event
        assert events[-1].end_offset == stored[f["name"]]["size"] >= f["size"]
        starts = {e.offset: e for e in events}
        ends = {e.end_offset for e in events}
        for e in events:
            if not e.flags & 0x20 and e.type_code != EventType.FORMAT_DESCRIPTION_EVENT:
                assert e.log_pos == e.end_offset
        for t in by_file.get(f["name"], []):
            assert starts[t["start"]].type_code == EventType.GTID_EVENT
            assert t["end"] in ends


@pytest.mark.parametrize("name", CRASH)
def test_crash_relay_logs_read_as_mariadb_binlog_reads_them(name):
    """Per relay file: the same number of whole events as mariadb-binlog, a torn event exactly
    where it failed, and a dangling final Rotate where the manifest says."""
    m = store.manifest(name)
    truth = m["truth"]
    d = store.materialize(name) / "relay"
    for f in truth["files"]:
        events, err = walk(d / f["name"])
        assert len(events) == f["events"], f["name"]
        if f["torn_at"] is not None:
            assert isinstance(err, TruncatedEventError) and err.offset == f["torn_at"]
        else:
            assert err is None
    last = truth["last_complete_event"]
    events, _ = walk(d / last["relay_file"])
    ends = [e.end_offset for e in events]
    assert last["end_offset"] in ends
    if truth["dangling_rotate"]:
        events, _ = walk(d / truth["dangling_rotate"]["file"])
        assert events[-1].type_code == EventType.ROTATE_EVENT
        assert events[-1].offset == truth["dangling_rotate"]["offset"]
        assert not (d / truth["dangling_rotate"]["names"]).exists()


@pytest.mark.parametrize("name", CRASH)
def test_crash_manifests_record_mariadb_restarts(name):
    m = store.manifest(name)
    runs = {r["relay_log_recovery"]: r for r in m["mariadb_restart"]}
    assert set(runs) == {0, 1}
    for r in runs.values():
        assert r["outcome"] in ("caught_up", "stopped", "timeout")
    # relay_log_recovery=1 discards the relay logs and re-fetches: it must always converge
    assert runs[1]["outcome"] == "caught_up" and runs[1]["data_matches_primary"]
    if m["crash_point"] == "torn" and m["mode"] == "position":
        assert runs[0]["outcome"] == "stopped" and runs[0]["last_sql_errno"] == 1594


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["ring-duplicates-off", "ring-duplicates-on"])
def test_ring_duplicates(ring_set, name, kind):
    m, d = ring_set(name, kind)
    dupes = m["C_binlog_duplicate_gtids"]
    if m["gtid_ignore_duplicates"]:
        assert dupes == []
    else:
        assert dupes, "gtid_ignore_duplicates=OFF should have binlogged some GTID twice"
    # our reader finds the same MariaDB GTID events in C's binlogs as SHOW BINLOG EVENTS did
    count = 0
    for p in sorted((d / "C" / "binlog").glob("mariadb-bin.0*")):
        count += sum(1 for e in open_binlog(str(p)) if e.type_code == EventType.GTID_EVENT)
    assert count == m["C_binlog_gtids_total"]

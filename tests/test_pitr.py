"""binlogkit pitr on the lab's real archives (no server needed): plans checked against the
servers' own ground truth (manifest.json), and copies with faults placed on and off the way."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

import binlogkit.pitr.plan as plan_mod
from binlogkit import open_binlog
from binlogkit.cli import main
from binlogkit.pitr import From, Until, parse_backup_info, plan_pitr
from binlogkit.pitr.backup import BackupInfoError
from fixtures import store

TRX = store.manifest("replication-gtid")["primary"]["transactions"]


def primary() -> Path:
    return store.materialize("replication-gtid") / "primary"


def copy(tmp_path) -> Path:
    d = tmp_path / "primary"
    shutil.copytree(primary(), d)
    return d


def cli(*args) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["pitr", "--json", *map(str, args)])
    return res.exit_code, json.loads(res.output) if res.exit_code in (0, 1) else res.output


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.integers(0, len(TRX) - 2), span=st.integers(1, len(TRX)))
def test_gtid_to_gtid_is_exactly_the_transactions_between(a, span):
    b = min(a + span, len(TRX) - 1)
    doc = plan_pitr([primary()], From(gtids=TRX[a]["gtid"], origin="gtid"), Until(gtids=TRX[b]["gtid"]), jobs=1)
    assert doc["reachable"] and doc["problems"] == []
    first, last = TRX[a + 1], TRX[b]
    start_file = Path(doc["start"]["file"]).name
    # the start: the next transaction's first event (or the top of the next file, when a file ends there)
    assert (start_file, doc["start"]["position"]) in {(first["file"], first["start"]), (first["file"], 4)}
    assert (Path(doc["stop"]["file"]).name, doc["stop"]["position"]) == (last["file"], last["end"])
    assert doc["transactions"] == b - a
    names = [Path(f).name for f in doc["files"]]
    assert names[0] == first["file"] and names[-1] == last["file"] and len(names) == len(set(names))


def test_position_start_gives_the_gtid_state_there_and_the_command_reads_as_planned(tmp_path):
    k = 700
    t = TRX[k]
    code, doc = cli(primary(), "--from-file", t["file"], "--from-position", t["end"],
                    "--until-position", f"{TRX[900]['file']}:{TRX[900]['start']}")
    assert code == 0 and doc["start"]["gtids"] == t["gtid"] and doc["transactions"] == 900 - k - 1
    # issue 31: the plan replays with binlogkit; the server's tool line stays in tool_command
    assert doc["command"] == doc["binlogkit_command"]
    assert doc["command"].startswith(f"binlogkit decode --start-position={t['end']} --stop-position={TRX[900]['start']} ")
    assert doc["tool_command"].startswith(f"mariadb-binlog --start-position={t['end']} --stop-position={TRX[900]['start']} ")
    for line in (doc["command"], doc["tool_command"]):
        assert line.endswith(" | mariadb") and "--host" not in line
        assert line.split(" | ")[0].split()[-len(doc["files"]):] == doc["files"]
    code, tool = cli(primary(), "--from-file", t["file"], "--from-position", t["end"],
                     "--until-position", f"{TRX[900]['file']}:{TRX[900]['start']}", "--replay-with", "tool")
    assert code == 0 and tool["command"] == doc["tool_command"]


def test_until_position_inside_a_transaction_stops_before_it():
    t = next(x for x in TRX[1000:] if x["events"] >= 4)
    inner = [e.offset for e in open_binlog(str(primary() / t["file"])) if t["start"] < e.offset < t["end"]]
    doc = plan_pitr([primary()], From(gtids=TRX[900]["gtid"], origin="gtid"),
                    Until(file=t["file"], position=inner[1]), jobs=1)
    assert doc["reachable"] and doc["stop"]["position"] == t["start"]
    assert doc["stop"]["before"]["gtid"] == t["gtid"] and doc["stop"]["before"]["offset"] == t["start"]
    # a position where no event starts is refused
    code, bad = cli(primary(), "--from-gtid", TRX[900]["gtid"], "--until-position", f"{t['file']}:{inner[1] + 1}")
    assert code == 1 and bad["problems"][0]["kind"] == "bad_position"


def test_backup_info_forms():
    x = parse_backup_info("mariadb-bin.000003\t1234\t0-1-42\n")
    assert (x.file, x.position, x.gtids, x.origin) == ("mariadb-bin.000003", 1234, "0-1-42", "binlog_info")
    y = parse_backup_info("binlog.000007\t155\t3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,\n"
                          "4e11fa47-71ca-11e1-9e33-c80aa9429562:1-9\n")
    assert y.gtids == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-9"
    assert parse_backup_info("/var/lib/mysql/mariadb-bin.000002 42").file == "mariadb-bin.000002"
    head = ("-- MariaDB dump 10.19\n--\n-- Preferably use GTID to start replication from GTID position:\n\n"
            "-- CHANGE MASTER TO MASTER_USE_GTID=slave_pos;\n-- SET GLOBAL gtid_slave_pos='0-1-17';\n--\n"
            "-- Alternately, following is the position of the binary logging from SHOW MASTER STATUS at point of backup.\n"
            "-- CHANGE MASTER TO MASTER_LOG_FILE='mariadb-bin.000001', MASTER_LOG_POS=4711;\n")
    z = parse_backup_info(head)
    assert (z.file, z.position, z.gtids, z.origin) == ("mariadb-bin.000001", 4711, "0-1-17", "dump")
    # the head of a dump by MySQL 9.7.4's mysqldump --single-transaction --source-data=2 (GTID_MODE=ON):
    # its GTID_PURGED carries a versioned comment before the set (the set was lost before)
    head = ("-- MySQL dump 10.13  Distrib 9.7.4, for Linux (x86_64)\n--\n"
            "-- GTID state at the beginning of the backup \n--\n\n"
            "SET @@GLOBAL.GTID_PURGED=/*!80000 '+'*/ 'e1bb6e52-e8f9-11f1-ad49-02fc00000001:1-610,\n"
            "f1bb6e52-e8f9-11f1-ad49-02fc00000001:1-3';\n\n--\n-- Position to start replication or point-in-time "
            "recovery from\n--\n\n-- CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='binlog.000003', "
            "SOURCE_LOG_POS=59142;\n")
    m = parse_backup_info(head)
    assert (m.file, m.position, m.origin) == ("binlog.000003", 59142, "dump")
    assert m.gtids == "e1bb6e52-e8f9-11f1-ad49-02fc00000001:1-610,f1bb6e52-e8f9-11f1-ad49-02fc00000001:1-3"
    with pytest.raises(BackupInfoError):
        parse_backup_info("CREATE TABLE t (id INT);\n")


def test_a_big_dumps_late_gtid_line_is_read(tmp_path):
    """mariadb-dump --single-transaction --master-data=2 --gtid writes CHANGE MASTER near the top
    and its gtid_slave_pos line after the data: past the 1 MB head of a big dump, still found."""
    from binlogkit.pitr.backup import HEAD_BYTES, read_backup_info

    dump = tmp_path / "big.sql"
    row = "INSERT INTO `t` VALUES " + ",".join(f"({i},'{'x' * 40}')" for i in range(2000)) + ";\n"
    with open(dump, "w") as fh:
        fh.write("-- MariaDB dump 10.19\n-- CHANGE MASTER TO MASTER_LOG_FILE='mariadb-bin.000004', "
                 "MASTER_LOG_POS=98765;\n")
        while fh.tell() < 3 * HEAD_BYTES:
            fh.write(row)
        fh.write("\n-- Preferably use GTID to start replication from GTID position:\n\n"
                 "-- SET GLOBAL gtid_slave_pos='0-1-4242';\n")
    p = read_backup_info(dump)
    assert (p.file, p.position, p.gtids, p.origin) == ("mariadb-bin.000004", 98765, "0-1-4242", "dump")
    small = tmp_path / "small.sql"  # a dump without the GTID line: the coordinates alone
    small.write_text("-- CHANGE MASTER TO MASTER_LOG_FILE='mariadb-bin.000004', MASTER_LOG_POS=98765;\n" + row)
    assert read_backup_info(small).gtids is None


def test_backup_info_that_disagrees_with_the_binlog_is_refused(tmp_path):
    t = TRX[300]
    ok = tmp_path / "xtrabackup_binlog_info"
    ok.write_text(f"{t['file']}\t{t['end']}\t{t['gtid']}\n")
    code, doc = cli(primary(), "--backup-info", ok, "--until-gtid", TRX[400]["gtid"])
    assert code == 0 and doc["transactions"] == 100 and doc["start"]["backup"]["gtids"] == t["gtid"]
    bad = tmp_path / "mariadb_backup_binlog_info"
    bad.write_text(f"{t['file']}\t{t['end']}\t0-1-{int(t['gtid'].split('-')[2]) + 5}\n")
    code, doc = cli(primary(), "--backup-info", bad, "--until-gtid", TRX[400]["gtid"])
    assert code == 1 and [p["kind"] for p in doc["problems"]] == ["backup_mismatch"]


def test_a_missing_middle_file_is_named_and_the_lost_gtids_counted(tmp_path):
    d = copy(tmp_path)
    (d / "mariadb-bin.000005").unlink()
    lost = [t["gtid"] for t in TRX if t["file"] == "mariadb-bin.000005"]
    code, doc = cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[-10]["gtid"])
    assert code == 1 and not doc["reachable"]
    by = {p["kind"]: p for p in doc["problems"]}
    assert "mariadb-bin.000005 missing" in by["missing_file"]["place"]
    assert f"seq_no {lost[0].split('-')[2]}..{lost[-1].split('-')[2]} missing" in by["gtid_gap"]["detail"]
    # a plan that does not cross the hole is reachable
    assert cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[100]["gtid"])[0] == 0


def test_an_archive_that_begins_after_the_backup(tmp_path):
    d = copy(tmp_path)
    for n in (1, 2, 3):
        (d / f"mariadb-bin.{n:06d}").unlink()
    first = next(t for t in TRX if t["file"] == "mariadb-bin.000004")
    code, doc = cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[-1]["gtid"])
    assert code == 1 and doc["problems"][0]["kind"] == "gtid_gap" and "begins after the backup" in doc["problems"][0]["detail"]
    # from the position the archive does hold, to after its end: not reachable either, and said
    code, doc = cli(d, "--from-file", "mariadb-bin.000002", "--from-position", 4, "--until-gtid", first["gtid"])
    assert code == 1 and doc["problems"][0]["kind"] == "missing_file" and "begins after it" in doc["problems"][0]["detail"]
    code, doc = cli(d, "--from-gtid", TRX[-2]["gtid"], "--until-datetime", "2099-01-01")
    assert code == 1 and doc["problems"][0]["kind"] == "target_beyond_archive"


def test_damage_on_the_way_refuses_damage_elsewhere_does_not(tmp_path):
    d = copy(tmp_path)
    victim = d / "mariadb-bin.000008"
    events = list(open_binlog(str(victim)))
    e = events[len(events) // 2]
    raw = bytearray(victim.read_bytes())
    raw[e.offset + 21] ^= 0xFF
    victim.write_bytes(bytes(raw))
    on = cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[-10]["gtid"])
    assert on[0] == 1 and {(p["kind"], Path(p["file"]).name, p["offset"]) for p in on[1]["problems"]} == {
        ("checksum_mismatch", "mariadb-bin.000008", e.offset)}
    before = [t for t in TRX if t["file"] == "mariadb-bin.000008" and t["end"] <= e.offset][-1]
    assert cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", before["gtid"])[0] == 0
    after = next(t for t in TRX if t["file"] == "mariadb-bin.000009")
    code, doc = cli(d, "--from-gtid", after["gtid"], "--until-gtid", TRX[-1]["gtid"])
    assert code == 0 and doc["problems"] == []


def test_faults_generator_incident_duplicate_and_partial_on_the_way(tmp_path):
    from fixtures.faults import generate

    m = generate(tmp_path / "arch", files=8, trx_per_file=60, seed=11,
                 faults=("cut_transaction", "duplicate_gtid", "incident"))
    code, doc = cli(tmp_path / "arch", "--from-file", "mariadb-bin.000001", "--from-position", 4,
                    "--until-position", "mariadb-bin.000008:4")
    assert code == 1
    got = {(p["kind"], Path(p["file"]).name, p["offset"]) for p in doc["problems"]}
    want = {(e["kind"], e["file"], e["offset"]) for e in m["expected"]}
    assert want <= got, (want, got)


def test_only_the_files_between_start_and_stop_are_summarised(tmp_path, monkeypatch):
    seen = []
    real = plan_mod.file_summary

    def counting(path, *a, **kw):
        seen.append(Path(path).name)
        return real(path, *a, **kw)

    monkeypatch.setattr(plan_mod, "file_summary", counting)
    a = next(t for t in TRX if t["file"] == "mariadb-bin.000006")
    b = next(t for t in TRX if t["file"] == "mariadb-bin.000008")
    doc = plan_pitr([primary()], From(gtids=a["gtid"], origin="gtid"), Until(gtids=b["gtid"]), jobs=1)
    assert doc["reachable"] and sorted(set(seen)) == ["mariadb-bin.000006", "mariadb-bin.000007", "mariadb-bin.000008"]


def test_usage_errors_exit_2(tmp_path):
    r = CliRunner()
    p = str(primary())
    assert r.invoke(main, ["pitr", p, "--until-gtid", "0-1-5"]).exit_code == 2
    assert r.invoke(main, ["pitr", p, "--from-gtid", "0-1-5"]).exit_code == 2
    assert r.invoke(main, ["pitr", p, "--from-file", "mariadb-bin.000001", "--until-gtid", "0-1-9"]).exit_code == 2
    assert r.invoke(main, ["pitr", p, "--from-gtid", "zz", "--until-gtid", "0-1-9"]).exit_code == 2
    res = r.invoke(main, ["pitr", str(store.materialize("ring-duplicates-off")), "--from-gtid", "0-1-5",
                          "--until-gtid", "0-1-9"])
    assert res.exit_code == 2 and "several binlog series" in res.output
    res = r.invoke(main, ["pitr", p, "--from-gtid", "0-1-500", "--until-datetime", "2000-01-01"])
    assert res.exit_code == 2 and "before the backup point" in res.output


U = "896e7882-18fe-11ef-ab88-22222d34d411"


def mysql_archive(d: Path, skip: set[int] = frozenset()) -> dict[int, tuple[str, int, int]]:
    """Three MySQL 8.4-shaped binlogs (fixtures.built_mysql) of 10 transactions each, uuid:1-30
    less ``skip``; returns gno -> (file, start, end)."""
    from fixtures.built_mysql import BinlogBuilder
    from binlogkit.gtid import MysqlGtidSet

    d.mkdir()
    where = {}
    gno = 0
    for n in (1, 2, 3):
        b = BinlogBuilder(timestamp=1_732_000_000 + 100 * n)
        b.previous_gtids(MysqlGtidSet.parse(f"{U}:1-{gno}") if gno else MysqlGtidSet())
        for _ in range(10):
            gno += 1
            if gno in skip:
                continue
            at = b.transaction(f"{U}:{gno}")
            where[gno] = (f"binlog.{n:06d}", at, len(b.data))
        b.rotate(f"binlog.{n + 1:06d}")
        b.write(d / f"binlog.{n:06d}")
    return where


def test_mysql_sets_positions_and_the_mysql_tools(tmp_path):
    where = mysql_archive(tmp_path / "a")
    doc = plan_pitr([tmp_path / "a"], From(gtids=f"{U}:1-5", origin="gtid"), Until(gtids=f"{U}:1-25"), jobs=1)
    assert doc["flavor"] == "mysql" and doc["reachable"] and doc["problems"] == []
    assert (Path(doc["start"]["file"]).name, doc["start"]["position"]) == where[6][:2]
    assert (Path(doc["stop"]["file"]).name, doc["stop"]["position"]) == (where[25][0], where[25][2])
    assert doc["transactions"] == 20 and doc["command"].startswith("binlogkit decode --start-position=")
    assert doc["tool_command"].startswith("mysqlbinlog --start-position=")
    assert doc["command"].endswith(" | mysql") and doc["tool_command"].endswith(" | mysql")
    # a backup holding 7 already (a set, not a prefix): the replay would apply it twice
    doc = plan_pitr([tmp_path / "a"], From(gtids=f"{U}:1-5:7", origin="gtid"), Until(gtids=f"{U}:1-25"), jobs=1)
    assert not doc["reachable"] and [(p["kind"], p["gtids"]) for p in doc["problems"]] == [
        ("duplicate_gtid", [f"{U}:7"])]


def test_mysql_hole_on_the_way(tmp_path):
    mysql_archive(tmp_path / "a", skip={15, 16})
    doc = plan_pitr([tmp_path / "a"], From(gtids=f"{U}:1-5", origin="gtid"), Until(gtids=f"{U}:1-25"), jobs=1)
    assert not doc["reachable"]
    assert any(p["kind"] == "gtid_gap" and f"{U}:15-16" in p["detail"] for p in doc["problems"]), doc["problems"]
    # before the hole: reachable
    assert plan_pitr([tmp_path / "a"], From(gtids=f"{U}:1-5", origin="gtid"), Until(gtids=f"{U}:1-12"),
                     jobs=1)["reachable"]


def test_files_that_are_not_binlogs_and_targets_behind_the_backup(tmp_path):
    d = copy(tmp_path)
    (d / "mariadb-bin.000007").write_bytes(b"\xfebin" + bytes(range(256)) * 8)  # magic, then garbage
    code, doc = cli(d, "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[-10]["gtid"])
    assert code == 1 and any(p["kind"] == "unreadable" and Path(p["file"]).name == "mariadb-bin.000007"
                             for p in doc["problems"])
    (d / "mariadb-bin.000002").write_bytes(b"not a binlog at all")
    code, doc = cli(d, "--from-file", "mariadb-bin.000002", "--from-position", 4, "--until-gtid", TRX[200]["gtid"])
    assert code == 1 and doc["problems"][0]["kind"] == "bad_position"
    res = CliRunner().invoke(main, ["pitr", str(primary()), "--from-gtid", "0-1-3000", "--until-gtid", "0-1-10"])
    assert res.exit_code == 2 and "before the backup point" in res.output
    code, doc = cli(primary(), "--from-gtid", "0-1-3000", "--until-gtid", "0-1-3000")
    assert code == 0 and doc["transactions"] == 0 and any("nothing to replay" in n for n in doc["notes"])


def test_pitr_never_opens_for_writing(tmp_path, monkeypatch):
    """pitr is read-only: every open call (builtins, lzma, os.open) is checked, compressed files too."""
    import builtins
    import lzma
    import os as os_mod

    d = copy(tmp_path)
    import subprocess

    subprocess.run(["xz", "-0", str(d / "mariadb-bin.000004")], check=True)
    modes, flags = [], []
    real_open, real_lzma, real_os_open = builtins.open, lzma.open, os_mod.open
    monkeypatch.setattr(builtins, "open", lambda f, mode="r", *a, **k: (modes.append(mode), real_open(f, mode, *a, **k))[1])
    monkeypatch.setattr(lzma, "open", lambda f, mode="rb", *a, **k: (modes.append(mode), real_lzma(f, mode, *a, **k))[1])
    monkeypatch.setattr(os_mod, "open", lambda p, fl, *a, **k: (flags.append(fl), real_os_open(p, fl, *a, **k))[1])
    before = {f.name: (f.stat().st_mtime_ns, f.stat().st_size) for f in d.iterdir()}
    code, doc = cli(d, "--from-gtid", TRX[100]["gtid"], "--until-datetime", "2026-11-21 05:59:04", "--jobs", 1)
    assert code == 0 and any(f.endswith(".xz") for f in doc["files"]) and doc["tool_command"].startswith("{ ")
    assert doc["command"].startswith("binlogkit decode ") and "xz -dc" not in doc["command"]  # reads .xz itself
    assert modes and all(set(m) <= {"r", "b", "t"} for m in modes), modes
    assert all(fl & (os_mod.O_WRONLY | os_mod.O_RDWR | os_mod.O_CREAT | os_mod.O_TRUNC) == 0 for fl in flags)
    assert {f.name: (f.stat().st_mtime_ns, f.stat().st_size) for f in d.iterdir()} == before


def test_an_encrypted_archive_replays_with_binlogkit_and_its_key_options_only(tmp_path):
    """Issue 31: the plan's command carries the key options (paths, never key bytes) and is
    binlogkit's; the server's tool cannot read the files offline, so there is no tool line and
    --replay-with tool is a usage error naming why."""
    from fixtures.lab.encrypted import keys_args, set_dir

    d = tmp_path / "binlogs"
    shutil.copytree(set_dir("mariadb-aes-ctr-filekey") / "primary", d)
    keys = keys_args("mariadb-aes-ctr-filekey")
    for k in (1, 3):  # mode 600 copies: a key file others may read draws a warning on stderr
        shutil.copy(keys[k], tmp_path / Path(keys[k]).name)
        keys[k] = str(tmp_path / Path(keys[k]).name)
        os.chmod(keys[k], 0o600)
    code, doc = cli(d, "--from-gtid", "0-1-200", "--until-gtid", "0-1-330", *keys)
    assert code == 0 and doc["reachable"] and doc["tool_command"] is None
    words = doc["command"].split(" | ")[0].split()
    assert words[:2] == ["binlogkit", "decode"] and doc["command"].endswith(" | mariadb")
    assert f"--key-file={keys[1]}" in words and f"--key-file-secret-file={keys[3]}" in words
    secret = Path(keys[3]).read_text().strip()
    assert secret not in doc["command"] and not any(len(w) >= 32 and set(w) <= set("0123456789abcdef") for w in words)
    res = CliRunner().invoke(main, ["pitr", "--replay-with", "tool", str(d), "--from-gtid", "0-1-200",
                                    "--until-gtid", "0-1-330", *keys])
    assert res.exit_code == 2 and "server's binlog tool reads neither" in res.output


def test_the_command_runs_from_any_folder_with_the_binlogkit_that_planned_it(tmp_path):
    """Run as a venv's ``bin/binlogkit`` that is not on PATH, from the archive's parent folder
    with a relative path: the command starts with that script's absolute path and names the
    files by absolute paths, so it runs as printed from another folder; with the script's
    folder on PATH it starts with plain ``binlogkit``."""
    import shlex
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    script = bindir / "binlogkit"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom binlogkit.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    work = tmp_path / "work"
    shutil.copytree(primary(), work / "archive")
    path = ":".join(p for p in os.environ["PATH"].split(":") if not (Path(p) / "binlogkit").exists())
    env = dict(os.environ, PYTHONPATH=str(root), PATH=path, TZ="UTC")
    args = [str(script), "pitr", "--json", "archive", "--from-gtid", TRX[10]["gtid"], "--until-gtid", TRX[30]["gtid"]]
    res = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    words = shlex.split(doc["command"].split(" | ")[0])
    assert words[:2] == [str(script), "decode"]
    files = [w for w in words if not w.startswith("-")][2:]
    assert files and all(Path(f).is_absolute() and Path(f).is_file() for f in files)
    assert all(Path(f).is_absolute() for f in shlex.split(doc["tool_command"].split(" | ")[0])[-len(files):])
    line = doc["command"].rsplit(" | ", 1)[0]
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd="/", env=env, capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count(b"gtid_seq_no=") == 20
    res = subprocess.run(args, cwd=work, env=dict(env, PATH=f"{bindir}:{path}"), capture_output=True, text=True)
    assert res.returncode == 0 and json.loads(res.stdout)["command"].startswith("binlogkit decode --start-position=")


def test_program_names_the_binlogkit_running(tmp_path, monkeypatch):
    """`python -m binlogkit` without a binlogkit of the same interpreter on PATH: the interpreter
    and -m; called in-process by another program: plain binlogkit."""
    import sys

    from binlogkit.cli.pitr import program

    monkeypatch.setenv("PATH", str(tmp_path))
    main_py = str(Path(__file__).resolve().parents[1] / "binlogkit" / "__main__.py")
    assert program(main_py) == f"{sys.executable} -m binlogkit"
    assert program("/usr/lib/python3/dist-packages/pytest.py") == "binlogkit"


def test_a_dump_at_the_start_of_a_file_names_the_group_a_rotation_can_hide(tmp_path):
    """MariaDB gives a snapshot taken right after a rotation the new file's start as its binlog
    position before the previous file's last group commit is visible to it (10.11 and 11.8:
    such a dump lacks that transaction's rows while its coordinates say it holds them). A dump
    whose point is a file's start is planned, with a warning naming that group and the start
    that replays it; the same point from mariabackup (whose coordinates are taken with commits
    blocked) or a dump's point inside a file has no warning."""
    k = next(n for n in range(1, len(TRX)) if TRX[n]["file"] != TRX[n - 1]["file"])
    first, prev = TRX[k], TRX[k - 1]
    until = TRX[k + 5]["gtid"]
    dump = tmp_path / "backup.sql"
    dump.write_text(f"-- MariaDB dump 10.19\n-- CHANGE MASTER TO MASTER_LOG_FILE='{first['file']}', "
                    f"MASTER_LOG_POS={first['start']};\nCREATE TABLE t (id INT);\n"
                    f"-- SET GLOBAL gtid_slave_pos='{prev['gtid']}';\n")
    code, doc = cli(primary(), "--backup-info", dump, "--until-gtid", until)
    assert code == 0 and doc["reachable"] and doc["transactions"] == 6, doc
    [w] = doc["problems"]
    assert (w["kind"], w["severity"], Path(w["file"]).name) == ("backup_at_rotation", "warning", prev["file"])
    assert w["gtids"][-1] == prev["gtid"] and w["offset"] <= prev["start"]
    assert f"--from-file {prev['file']} --from-position {w['offset']}" in w["detail"]
    # the start it names replays the group too
    code, alt = cli(primary(), "--from-file", prev["file"], "--from-position", w["offset"], "--until-gtid", until)
    assert code == 0 and alt["transactions"] == 6 + len(w["gtids"]) and alt["problems"] == []
    # the text form says it too
    res = CliRunner().invoke(main, ["pitr", str(primary()), "--backup-info", str(dump), "--until-gtid", until])
    assert res.exit_code == 0 and "backup_at_rotation" in res.output and prev["gtid"] in res.output
    # mariabackup's coordinates at the same point, and a dump's point inside a file: no warning
    info = tmp_path / "mariadb_backup_binlog_info"
    info.write_text(f"{first['file']}\t{first['start']}\t{prev['gtid']}\n")
    code, doc = cli(primary(), "--backup-info", info, "--until-gtid", until)
    assert code == 0 and doc["problems"] == []
    inside = tmp_path / "inside.sql"
    inside.write_text(f"-- CHANGE MASTER TO MASTER_LOG_FILE='{first['file']}', MASTER_LOG_POS={first['end']};\n"
                      f"-- SET GLOBAL gtid_slave_pos='{first['gtid']}';\n")
    code, doc = cli(primary(), "--backup-info", inside, "--until-gtid", until)
    assert code == 0 and doc["problems"] == [] and doc["transactions"] == 5


@pytest.mark.parametrize("cut, gtid", [(29137, "0-1-262"), (29287, "0-1-263")])
def test_the_group_a_rotation_can_hide_may_be_an_xa_transactions_part(tmp_path, cut, gtid):
    """A file whose last transaction is an XA PREPARE or an XA COMMIT (their GTID events carry
    the XA flags and the xid): that transaction is the file's last group, named like any other
    (MariaDB 11.8's replication-gtid primary, whose second file holds both, cut right after
    each; before, the XA GTID was passed over and the group came back empty: no warning)."""
    from binlogkit.pitr.walk import last_group, transactions
    from binlogkit.reading.source import as_input

    src = store.materialize("replication-gtid", server="mariadb-11.8") / "primary" / "mariadb-bin.000002"
    part = tmp_path / "mariadb-bin.000002"
    part.write_bytes(src.read_bytes()[:cut])
    last = list(transactions(as_input(part)))[-1]
    assert last.end_offset == cut and last.terminator in ("XA_PREPARE", "XA_COMMIT")
    assert last_group(as_input(part)) == [(last.start_offset, gtid)]

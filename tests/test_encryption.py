"""Encrypted binlogs and relay logs (issue 20), read offline with the key.

The fixtures in fixtures/encrypted were written by real MariaDB 10.11 servers with
encrypt_binlog=ON and file_key_management (AES_CBC with a plain key file; AES_CTR with an
openssl-enc encrypted key file); their oracle is what the server itself printed for them
(mariadb-binlog --read-from-remote-server: the server decrypts) and SHOW RELAYLOG EVENTS; their
plain twin is the same workload on a server without encryption. MySQL binlog_encryption is
checked on the corpus file a MySQL 8.0.14 server wrote (with its keyring) and by round trip.
"""

from __future__ import annotations

import json
import lzma
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from binlogkit import open_binlog
from binlogkit.api import decode_files, gtid_summary, transactions
from binlogkit.cli import main
from binlogkit.crypto import load_keys
from binlogkit.crypto import mysql as my
from binlogkit.crypto.keys import decrypt_key_file, parse_key_file
from binlogkit.errors import (BinlogError, ChecksumError, DecryptionError, FormatError, KeyFileError,
                              KeyRequiredError, TruncatedEventError)
from binlogkit.reading.events import decode
from binlogkit.render import header_line
from binlogkit.reading.scan import scan
from binlogkit.reading.source import Input
from fixtures.lab.encrypted import SECRET, SETS_DIR, keys_args
from fixtures.lab.oracle import parse_mariadb_binlog

from test_differential import KIND, SAME_TEXT

SETS = ["mariadb-aes-cbc", "mariadb-aes-ctr-filekey"]
CIPHER = {"mariadb-aes-cbc": "AES_CBC", "mariadb-aes-ctr-filekey": "AES_CTR"}


def _manifest(name: str) -> dict:
    return json.loads((SETS_DIR / name / "manifest.json").read_text())


def _keys(name: str):
    m = _manifest(name)
    k = SETS_DIR / name / "keys"
    return load_keys(str(k / m["key_file"]), secret_file=str(k / m["secret_file"]) if m["secret_file"] else None)


def _logs(name: str, side: str) -> list[Path]:
    return sorted(p for p in (SETS_DIR / name / side).iterdir() if re.search(r"\.\d{6}(\.xz)?$", p.name))


def _binlogs():
    return [(n, p) for n in SETS for side in ("primary", "replica-binlog") for p in _logs(n, side)]


def _relays():
    return [(n, p) for n in SETS for p in _logs(n, "replica-relay")]


def _without_stop(ours: list, want: list) -> list:
    """The oracle was read from the running server: the last binlog's Stop event (written at
    shutdown, after) is not in it."""
    if len(ours) == len(want) + 1 and (getattr(ours[-1], "name", None) == "Stop" or ours[-1] == "Stop"):
        return ours[:-1]
    return ours


def _ids(item):
    return f"{item[0]}/{item[1].parent.name}/{item[1].name}"


def _run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


@pytest.fixture(autouse=True)
def _key_files_private():
    """Git does not keep modes: the committed key files are made 0600, as a server's are."""
    for n in SETS:
        for f in (SETS_DIR / n / "keys").iterdir():
            os.chmod(f, 0o600)


# --- 1. decode equals what the server decrypts ---------------------------------------------------

@pytest.mark.parametrize("item", _binlogs(), ids=_ids)
def test_decode_equals_the_server_decrypting_it(item, monkeypatch):
    """Event for event what mariadb-binlog --read-from-remote-server printed (the server read the
    encrypted file with its key): offsets, end_log_pos, server ids, kinds, GTIDs, header text."""
    name, path = item
    monkeypatch.setenv("TZ", "UTC")
    oracle = SETS_DIR / name / "oracle" / path.parent.name
    want = parse_mariadb_binlog(lzma.open(oracle / f"{path.name}.txt.xz", "rt", errors="replace").read())
    ours = _without_stop([decode(raw) for raw in open_binlog(Input(str(path), _keys(name)))], want)
    assert [e.raw.offset for e in ours] == [w.offset for w in want]
    assert [e.raw.log_pos for e in ours] == [w.end_log_pos for w in want]
    assert [e.raw.server_id for e in ours] == [w.server_id for w in want]
    for ev, w in zip(ours, want):
        if ev.name == "Start_encryption":  # the server shows it as an ignorable event
            assert w.kind == "Ignorable"
            continue
        assert KIND.get(ev.name, ev.name) == w.kind, (ev.raw.offset, ev.name, w.info)
        if ev.name == "GTID":
            assert w.info.split()[1] == ev.fields["gtid"]
        if ev.name in SAME_TEXT:
            assert header_line(ev, utc=True).split("\t", 1)[1] == w.info, (ev.raw.offset, ev.name)


@pytest.mark.parametrize("item", _binlogs(), ids=_ids)
def test_decode_v_and_json_equal_the_server(item):
    """`decode -v` row lines byte for byte as the server's `mariadb-binlog -v`, and `decode --json`
    has the same events."""
    name, path = item
    oracle = SETS_DIR / name / "oracle" / path.parent.name
    theirs = lzma.open(oracle / f"{path.name}.v.txt.xz", "rb").read()
    got = _run("decode", "--base64-output=decode-rows", "-v", *keys_args(name), path)
    assert got.exit_code == 0, got.output
    rows = [line for line in got.stdout_bytes.split(b"\n") if line.startswith(b"###")]
    assert rows == [line for line in theirs.split(b"\n") if line.startswith(b"###")]
    assert (b"### INSERT" in theirs) == bool(rows)
    js = _run("decode", "--base64-output=decode-rows", "--json", *keys_args(name), path)
    docs = [json.loads(line) for line in js.stdout.splitlines()]
    want = parse_mariadb_binlog(lzma.open(oracle / f"{path.name}.txt.xz", "rt", errors="replace").read())
    if len(docs) == len(want) + 1 and docs[-1]["type"] in ("Stop", "STOP_EVENT"):
        docs = docs[:-1]
    assert [d["offset"] for d in docs] == [w.offset for w in want]


@pytest.mark.parametrize("item", _relays(), ids=_ids)
def test_relay_logs_equal_show_relaylog_events(item):
    name, path = item
    want = json.loads((SETS_DIR / name / "oracle" / "replica-relay" / f"{path.name}.relay.json").read_text())
    ours = _without_stop([decode(raw) for raw in open_binlog(Input(str(path), _keys(name)))], want)
    assert [(e.raw.offset, e.raw.log_pos, e.raw.server_id) for e in ours] == \
        [(w["offset"], w["end_log_pos"], w["server_id"]) for w in want]
    names = {"GTID": "Gtid"}
    assert [names.get(e.name, e.name) for e in ours] == [w["kind"] for w in want]


# --- 2. verify, damage, wrong key, no key ---------------------------------------------------------

@pytest.mark.parametrize("name", SETS)
def test_verify_passes_every_file_and_names_the_cipher(name):
    res = _run("verify", "--json", *keys_args(name), *(SETS_DIR / name / s for s in ("primary", "replica-binlog",
                                                                                    "replica-relay")))
    assert res.exit_code == 0, res.output
    docs = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(docs) == len(_logs(name, "primary")) + len(_logs(name, "replica-binlog")) + len(_logs(name, "replica-relay"))
    assert {d["encryption"] for d in docs} == {f"MariaDB {CIPHER[name]}, key id 1 version 1"}
    assert all(d["checksummed"] == d["events"] for d in docs)


def _events(path: Path, keys) -> list[tuple[int, int]]:
    return [(r.offset, r.end_offset) for r in open_binlog(Input(str(path), keys))]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_flipped_byte_is_found_at_its_event(tmp_path, data):
    """Every byte of an encrypted file is covered: a flip anywhere gives a typed error with its
    offset (at or before the flipped byte once past the clear head); inside an encrypted event (outside its clear event_len) it is a
    checksum mismatch at that event — or, in the file's first encrypted event, which proves the
    key, "wrong key, or damaged event"."""
    name = data.draw(st.sampled_from(SETS))
    src = data.draw(st.sampled_from([p for p in _logs(name, "replica-relay") if p.stat().st_size < 30000]))
    keys = _keys(name)
    events = _events(src, keys)
    raw = bytearray(src.read_bytes())
    at = data.draw(st.integers(4, len(raw) - 1))
    raw[at] ^= data.draw(st.integers(1, 255))
    victim = tmp_path / src.name
    victim.write_bytes(bytes(raw))
    res = scan(Input(victim, keys))
    fdes = [(r.offset, r.end_offset) for r in open_binlog(Input(str(src), keys)) if r.type_code == 15]
    if res.ok and any(s <= at < e for s, e in fdes):
        # a Format_description whose server version the damage makes older than checksums turns
        # CRC32 off from there on, as the servers decide by version (docs/encryption.md): the one
        # damage that can read clean; with AES-CBC a flipped byte garbles its 16-byte block
        return
    assert not res.ok and isinstance(res.problem, BinlogError)
    assert res.problem.offset is not None and str(victim) == res.problem.file
    start, end = next((s, e) for s, e in events if s <= at < e)
    first_encrypted = events[2][0]
    if start >= first_encrypted:  # (a damaged FDE server version can hide its own CRC: found later)
        assert res.problem.offset <= at
    if start >= first_encrypted and not start + 9 <= at < start + 13:
        want = DecryptionError if start == first_encrypted else ChecksumError
        assert type(res.problem) is want and res.problem.offset == start, res.problem


@pytest.mark.parametrize("name", SETS)
def test_flipped_byte_verify_says_checksum_mismatch_at_that_offset(tmp_path, name):
    src = _logs(name, "primary")[0]
    ev = _events(src, _keys(name))[40]
    raw = bytearray(src.read_bytes())
    raw[ev[0] + 20] ^= 0x01
    (tmp_path / src.name).write_bytes(bytes(raw))
    res = _run("verify", *keys_args(name), tmp_path / src.name)
    assert res.exit_code == 1
    assert f"offset {ev[0]}: CRC32 mismatch" in res.stdout and "after decryption" in res.stdout


def test_wrong_key_is_the_clear_error_and_no_garbage():
    path = _logs("mariadb-aes-ctr-filekey", "primary")[0]
    res = _run("decode", "--base64-output=decode-rows", *keys_args("mariadb-aes-cbc"), path)
    assert res.exit_code == 1
    assert "wrong key, or damaged event" in res.stderr and f"{path}, offset 296" in res.stderr
    assert res.stdout.count("# at ") == 2  # the FDE and Start_encryption, in clear; nothing after
    res = _run("verify", *keys_args("mariadb-aes-cbc"), path)
    assert res.exit_code == 1 and "offset 296: wrong key, or damaged event" in res.stdout


@pytest.mark.parametrize("command", ["decode", "verify", "gtids", "transactions", "compare", "audit"])
def test_no_key_is_one_line_naming_key_and_option(command):
    d = SETS_DIR / "mariadb-aes-cbc"
    args = [d / "primary", d / "replica-relay"] if command == "compare" else [d / "primary"]
    res = _run(command, *args, env={"BINLOGKIT_KEY_FILE": "", "BINLOGKIT_KEY_FILE_SECRET": ""})
    if command == "audit":  # an audit reports findings instead: each file, an error
        assert res.exit_code == 1
        assert res.stdout.count("error    encrypted") == len(_logs("mariadb-aes-cbc", "primary"))
        return
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "needs key id 1 version 1" in lines[0] and "--key-file" in lines[0] and "offset 256" in lines[0]


def test_key_file_from_the_environment_and_secret_handling(tmp_path):
    name = "mariadb-aes-ctr-filekey"
    kdir = SETS_DIR / name / "keys"
    path = _logs(name, "primary")[-1]
    env = {"BINLOGKIT_KEY_FILE": str(kdir / "keys.enc"), "BINLOGKIT_KEY_FILE_SECRET": SECRET}
    assert _run("verify", path, env=env).exit_code == 0
    res = _run("verify", path, env={**env, "BINLOGKIT_KEY_FILE_SECRET": "not-it"})
    assert res.exit_code == 2 and "wrong secret" in res.stderr
    res = _run("verify", path, env={**env, "BINLOGKIT_KEY_FILE_SECRET": ""})
    assert res.exit_code == 2 and "--key-file-secret-file" in res.stderr
    # the secret is never an option value: only a file or the environment
    assert "--key-file-secret " not in _run("decode", "--base64-output=decode-rows", "--help").stdout
    loose = tmp_path / "keys.txt"
    shutil.copy(SETS_DIR / "mariadb-aes-cbc" / "keys" / "keys.txt", loose)
    os.chmod(loose, 0o644)
    res = _run("verify", "--key-file", loose, _logs("mariadb-aes-cbc", "primary")[0])
    assert res.exit_code == 0 and "readable by other users" in res.stderr
    # the secret of an encrypted key file is warned about the same way (issue 28); a tight one is not
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    shutil.copy(kdir / "keys.enc", tmp_path / "keys.enc")
    os.chmod(tmp_path / "keys.enc", 0o600)
    for mode, warned in ((0o600, False), (0o644, True)):
        os.chmod(secret, mode)
        res = _run("verify", "--key-file", tmp_path / "keys.enc", "--key-file-secret-file", secret, path)
        assert res.exit_code == 0, res.stderr
        assert (f"{secret} is readable by other users" in res.stderr) is warned, (oct(mode), res.stderr)
        assert SECRET not in res.stderr


def test_key_material_never_shown():
    name = "mariadb-aes-cbc"
    keys = _keys(name)
    text = (SETS_DIR / name / "keys" / "keys.txt").read_text()
    hexkeys = re.findall(r";([0-9a-f]{32,64})", text)
    path = _logs("mariadb-aes-ctr-filekey", "primary")[0]
    outputs = [repr(keys), str(keys), repr(keys.spec),
               _run("decode", "--base64-output=decode-rows", "--json", *keys_args(name), path).output,
               _run("verify", "--json", *keys_args(name), path).output,
               _run("audit", "--json", *keys_args(name), path).output]
    for bad in (b"1;00zz\n", b"1;" + hexkeys[0].encode() + b"ff\n"):  # an error on a line with a key
        with pytest.raises(KeyFileError) as info:
            parse_key_file(bad, name="k")
        outputs.append(str(info.value))
    for out in outputs:
        for k in hexkeys:
            assert k not in out.lower()


def test_key_file_parsing_follows_the_plugin():
    """The plugin's own test key file (mysql-test std_data/keys.txt) read as the plugin reads it:
    text after the hex digits ignored, 128/192/256-bit keys, comments anywhere."""
    text = (b"#\n# comment\n1;770A8A65DA156D24EE2A093277530142\n2;4D92199549E0F2EF009B4160F3582E5528A11A45017F3EF8\n"
            b"   # another\n33;B374A26A71490437AA024E4FADD5B497FDFF1A8EA6FF12F6FB65AF2720B59CCF\n"
            b"4;18420B5CBA31CCDFFE9716E91EB61374D05914F3ADE23E03 --> ignored\n\n"
            b"6;B5EA210C8C09EF20DB95EC584714A89F # and yet another\n")
    keys = parse_key_file(text)
    assert sorted(keys) == [1, 2, 4, 6, 33] and len(keys[2]) == 24 and len(keys[33]) == 32 and len(keys[6]) == 16
    for bad, why in ((b"2;00112233445566778899aabbccddeeff\n", "key id 1 is missing"),
                     (b"1;0011\n", "invalid key"), (b"x;00112233445566778899aabbccddeeff\n", "syntax error"),
                     (b"0;00112233445566778899aabbccddeeff\n", "invalid key id"),
                     (b"1;" + b"ab" * 33 + b"\n", "invalid key")):
        with pytest.raises(KeyFileError, match=why):
            parse_key_file(bad)


def test_encrypted_key_file_is_what_openssl_enc_writes():
    kdir = SETS_DIR / "mariadb-aes-ctr-filekey" / "keys"
    plain = decrypt_key_file((kdir / "keys.enc").read_bytes(), SECRET.encode())
    assert plain.startswith(b"# file_key_management keys") and 1 in parse_key_file(plain)
    with pytest.raises(KeyFileError, match="wrong secret"):
        decrypt_key_file((kdir / "keys.enc").read_bytes(), b"nope")


def test_cipher_option_overrides_and_is_checked():
    path = _logs("mariadb-aes-cbc", "primary")[0]
    k = keys_args("mariadb-aes-cbc")
    assert _run("verify", *k, "--cipher", "AES_CBC", path).exit_code == 0
    res = _run("verify", *k, "--cipher", "AES_CTR", path)
    assert res.exit_code == 1 and "wrong key, or damaged event" in res.stdout


# --- 4. gtids and transactions: as for the same workload unencrypted -----------------------------

@pytest.mark.parametrize("name", SETS)
def test_transactions_and_gtids_equal_the_plain_twin(name):
    keys = _keys(name)
    enc = list(transactions([Input(SETS_DIR / name / "primary", keys)]))
    twin = list(transactions(_logs(name, "plain-twin")))
    assert len(enc) == len(twin) > 300
    assert [(t.gtid, t.events, t.bytes, t.complete, t.terminator) for t in enc] == \
        [(t.gtid, t.events, t.bytes, t.complete, t.terminator) for t in twin]
    truth = _manifest(name)["primary_transactions"]  # from the server's SHOW BINLOG EVENTS
    assert [(t.gtid, t.start_offset, t.events) for t in enc if t.gtid] == \
        [(t["gtid"], t["start"], t["events"]) for t in truth]
    a = gtid_summary([Input(SETS_DIR / name / "primary", keys)])
    b = gtid_summary(_logs(name, "plain-twin"))
    assert a["mariadb"] == b["mariadb"] and a["mariadb"]["position"] == _manifest(name)["primary_gtid_binlog_pos"]
    assert a["transactions"] == b["transactions"] and not a["incomplete"]
    relay = list(transactions([Input(SETS_DIR / name / "replica-relay", keys)]))
    assert [t.gtid for t in relay if t.gtid and t.complete] == [t.gtid for t in twin if t.gtid]


# --- 4. audit: exactly the injected faults, both engines ----------------------------------------

def _faulty_archive(tmp_path: Path, name: str) -> tuple[Path, int]:
    arch = tmp_path / "archive"
    shutil.copytree(SETS_DIR / name / "primary", arch / "primary")
    shutil.copytree(SETS_DIR / name / "replica-relay", arch / "replica-relay")
    (arch / "primary" / "mariadb-bin.000002").unlink()  # a missing file
    victim = arch / "replica-relay" / "relay-bin.000002"
    ev = _events(victim, _keys(name))[300]
    raw = bytearray(victim.read_bytes())
    raw[ev[0] + 30] ^= 0x40  # a damaged encrypted event
    victim.write_bytes(bytes(raw))
    return arch, ev[0]


def _error_findings(result: dict) -> set:
    return {(f["kind"], Path(f["file"]).name if f["file"] else None, f["offset"]) for f in result["findings"]
            if f["severity"] == "error"}


@pytest.mark.parametrize("name", SETS)
def test_audit_finds_exactly_the_injected_faults(tmp_path, name):
    from binlogkit.audit import run_local

    arch, off = _faulty_archive(tmp_path, name)
    r = run_local([Input(arch, _keys(name))], jobs=2)
    errs = _error_findings(r)
    assert ("checksum_mismatch", "relay-bin.000002", off) in errs
    assert {k for k, _f, _o in errs} == {"checksum_mismatch", "missing_file", "gtid_gap", "rotate_mismatch"}
    assert not [f for f in r["findings"] if f["severity"] == "warning"]
    # without the key nothing passes: every file is an error, and the clear part is still checked
    r = run_local([arch], jobs=2)
    kinds = {k for k, _f, _o in _error_findings(r)}
    assert kinds == {"encrypted", "missing_file"}
    assert sum(f["kind"] == "encrypted" for f in r["findings"]) == 2 + len(_logs(name, "replica-relay"))


def test_audit_spark_reads_the_keys_on_the_executors(tmp_path, capsys):
    pytest.importorskip("pyspark")
    from binlogkit.audit import run_local
    from binlogkit.spark.jobs import audit as job

    name = "mariadb-aes-ctr-filekey"
    arch, _off = _faulty_archive(tmp_path, name)
    local = run_local([Input(arch, _keys(name))], jobs=2)
    spark = job.session("local[2]")
    try:
        m = _manifest(name)
        kdir = SETS_DIR / name / "keys"
        rc = job.main(spark, [str(arch), "--json", "--key-file", str(kdir / m["key_file"]),
                              "--key-file-secret-file", str(kdir / m["secret_file"])])
        conf = dict(spark.sparkContext.getConf().getAll())
    finally:
        spark.stop()
    printed = json.loads(capsys.readouterr().out)
    key = lambda f: (f["kind"], f["severity"], f["file"], f["offset"])  # noqa: E731
    assert rc == 1 and sorted(map(key, printed["findings"])) == sorted(map(key, local["findings"]))
    assert SECRET not in json.dumps(conf)


# --- recover and incident keep the files encrypted ------------------------------------------------

@pytest.mark.parametrize("name", SETS)
def test_recover_cuts_encrypted_relay_logs_at_event_boundaries(tmp_path, name):
    d = tmp_path / "relay"
    shutil.copytree(SETS_DIR / name / "replica-relay", d)
    (d / "mariadb-bin.index").unlink(missing_ok=True)
    torn = d / "relay-bin.000006"  # inside the 512 KiB transaction
    before = torn.read_bytes()
    os.truncate(torn, 100000)
    k = keys_args(name)
    res = _run("recover", d)  # no key: nothing is cut
    assert res.exit_code == 2 and "refusing to plan a cut" in res.stderr
    assert os.path.getsize(torn) == 100000
    res = _run("recover", "--apply", "--backup-dir", tmp_path / "backup", *k, d)
    assert res.exit_code == 0, res.output
    for p in sorted(d.glob("relay-bin.0*")):
        r = scan(Input(p, _keys(name)))
        assert r.ok and r.encryption, (p, r.problem)
        assert p.read_bytes()[:296] == (SETS_DIR / name / "replica-relay" / p.name).read_bytes()[:296]
    kept = sorted(p.name for p in d.glob("relay-bin.0*"))
    assert "relay-bin.000006" not in kept and before  # the partial transaction is cut as a whole
    again = json.loads(_run("recover", "--json", *k, d).stdout)  # nothing left to cut
    assert again["truncate"] == [] and again["remove"] == [] and again["problem"] is None


@pytest.mark.parametrize("name", SETS)
def test_incident_appends_encrypted_events(tmp_path, name):
    from binlogkit.reading.events import build_event

    d = tmp_path / "binlogs"
    shutil.copytree(SETS_DIR / name / "primary", d)
    last = _logs(name, "primary")[-1].name
    before = (d / last).read_bytes()
    res = _run("incident", d, env={"BINLOGKIT_KEY_FILE": ""})
    assert res.exit_code == 2 and "needs key id 1" in res.stderr and (d / last).read_bytes() == before
    res = _run("incident", "--message", "gap", *keys_args(name), d)
    assert res.exit_code == 0, res.output
    after = (d / last).read_bytes()
    assert after[:len(before)] == before
    keys = _keys(name)
    evs = list(open_binlog(Input(str(d / last), keys)))
    inc, rot = [decode(r) for r in evs[-2:]]
    assert inc.name == "Incident" and rot.name == "Rotate" and rot.fields["new_log_ident"].endswith(".000004")
    assert scan(Input(d / last, keys)).ok
    plain = build_event(type_code=26, body=evs[-2].body, timestamp=evs[-2].timestamp, server_id=evs[-2].server_id,
                        log_pos=evs[-2].log_pos, flags=evs[-2].flags, checksum=True)
    assert after[len(before):len(before) + len(plain)] != plain  # written encrypted
    assert _run("incident", "--message", "gap", *keys_args(name), d).exit_code == 0  # idempotent
    assert (d / last).read_bytes() == after


# --- MySQL binlog_encryption -------------------------------------------------------------------

STD = "mysql/mysql-test/std_data"


def test_mysql_encrypted_binlog_written_by_mysql_8_0_14(corpus, tmp_path):
    """The file a MySQL 8.0.14 server wrote with binlog_encryption=ON, read with its keyring
    (keyring_file layout); the same keys as component_keyring_file JSON read it the same."""
    path = corpus / STD / "rpl_nogtid_encryption_master-bin.000002"
    ring = tmp_path / "keyring"
    shutil.copy(corpus / STD / "rpl_nogtid_encryption_keyring_master", ring)
    os.chmod(ring, 0o600)
    keys = load_keys(keyring_file=str(ring))
    events, err = [], None
    try:
        for raw in open_binlog(Input(str(path), keys)):
            events.append(raw)
    except BinlogError as exc:
        err = exc
    # the catalog: in-use flag set, cut off in the middle of a Query 'DROP TABLE t1'
    assert isinstance(err, TruncatedEventError) and err.offset == events[-1].end_offset
    assert events[0].offset == 4 and decode(events[0]).fields["server_version"].startswith("8.0.14")
    assert all(a.end_offset == b.offset for a, b in zip(events, events[1:]))
    assert all(r.log_pos == r.end_offset for r in events[1:])  # positions count from after the header
    assert err.offset + 512 < path.stat().st_size + 1
    as_json = tmp_path / "component_keyring_file"
    as_json.write_bytes(my.build_keyring_json(dict(keys.mysql)))
    os.chmod(as_json, 0o600)
    a = _run("decode", "--base64-output=decode-rows", "--no-verify", "--keyring-file", ring, path)
    b = _run("decode", "--base64-output=decode-rows", "--no-verify", "--keyring-file", as_json, path)
    assert a.stdout == b.stdout and "CREATE TABLE t1" in a.stdout and a.exit_code == 1
    res = _run("decode", "--base64-output=decode-rows", path)
    assert res.exit_code == 2 and "MySQLReplicationKey_" in res.stderr and "--keyring-file" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def _mysql_plain(corpus) -> Path:
    for p in sorted((corpus / "mysql").rglob("*.0000*")):
        if p.stat().st_size > 2000 and p.read_bytes()[:4] == b"\xfebin" and scan(p).ok:
            return p
    pytest.skip("no plain MySQL binlog in the corpus")


def test_mysql_round_trip_and_wrong_keyring(corpus, tmp_path):
    plain = _mysql_plain(corpus)
    kid = "MySQLReplicationKey_00000000-0000-0000-0000-000000000001_1"
    master = bytes(range(32))
    enc = tmp_path / plain.name
    enc.write_bytes(my.encrypt_file(plain.read_bytes(), kid, master))
    for layout, build in (("legacy", my.build_keyring_legacy), ("json", my.build_keyring_json)):
        ring = tmp_path / f"ring-{layout}"
        ring.write_bytes(build({kid: master, "other": bytes(32)}))
        os.chmod(ring, 0o600)
        a = _run("decode", "--base64-output=decode-rows", "--json", "--keyring-file", ring, enc)
        b = _run("decode", "--base64-output=decode-rows", "--json", plain)
        assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout.replace(str(plain), str(enc))
        assert _run("verify", "--keyring-file", ring, enc).exit_code == 0
    wrong = tmp_path / "wrong"
    wrong.write_bytes(my.build_keyring_json({kid: bytes(31) + b"\1"}))
    os.chmod(wrong, 0o600)
    res = _run("verify", "--keyring-file", wrong, enc)
    assert res.exit_code == 1 and "wrong key, or damaged header" in res.stdout


@settings(max_examples=200, deadline=None)
@given(at=st.integers(0, 600), xor=st.integers(1, 255))
def test_mysql_damaged_header_or_stream_is_typed(at, xor):
    """A MySQL encrypted file with one byte changed: it reads exactly as before (a byte of the
    header's padding) or stops with a typed error — never a traceback, never other events."""
    kid = "MySQLReplicationKey_x_1"
    master = bytes(range(32))
    body = lzma.open(_logs("mariadb-aes-cbc", "plain-twin")[-1]).read()
    from binlogkit.crypto.keys import Keys

    keys = Keys(mysql={kid: master}, source="test")
    enc = bytearray(my.encrypt_file(body, kid, master, password=bytes(range(32)), iv=bytes(16)))
    good = [(r.offset, r.type_code, r.body) for r in _mem(bytes(enc), keys)]
    enc[at] ^= xor
    try:
        got = [(r.offset, r.type_code, r.body) for r in _mem(bytes(enc), keys)]
    except BinlogError as exc:
        # (a damaged magic can read as the plain binlog magic, fe 62 69 6e: then the header is
        # read as events, and the first one is not a Format_description, at offset 4)
        assert exc.offset is not None and (at < 4 or exc.offset <= max(0, at - 512))
        return
    header_used = 5 + 2 + len(kid) + 1 + 32 + 1 + 16  # fields before the end marker
    if 512 + 4 + 19 + 2 <= at < 512 + 4 + 19 + 52:
        # (AES-CTR: the plaintext byte flips in place) the first Format_description's server
        # version: a version read as older than checksums (10.11 -> 00.11) turns CRC32 off for
        # that event, so the damage reads without an error (a reader limit, not encryption's;
        # docs/encryption.md); still no untyped failure, and the events are framed the same
        assert [(o, t) for o, t, _ in got] == [(o, t) for o, t, _ in good]
        return
    assert at > header_used and got == good


def _mem(data: bytes, keys):
    import io

    from binlogkit.reading.reader import iter_raw_events

    return list(iter_raw_events(io.BytesIO(data), name="mem", keys=keys))


# --- the build side ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", SETS)
def test_encrypting_the_decrypted_events_gives_the_servers_bytes(name):
    """Our encryption is the server's: every event of a real encrypted file, decrypted and
    encrypted again at its offset with the file's nonce, is the same bytes as on disk."""
    from binlogkit.crypto.keys import Cipher
    from binlogkit.crypto.mariadb import cipher_for

    keys = _keys(name)
    for path in _logs(name, "primary") + _logs(name, "replica-relay")[:3]:
        disk = path.read_bytes()
        raws = list(open_binlog(Input(str(path), keys)))
        start = raws[1]
        assert start.type_code == 164
        ec = cipher_for(start.body, keys, offset=start.offset)
        ec.cipher, ec.checked = Cipher(CIPHER[name]), True
        for raw in raws[2:]:
            assert ec.encrypt(raw.data, raw.offset) == disk[raw.offset:raw.end_offset], (path, raw.offset)


@pytest.mark.parametrize("cipher", ["AES_CBC", "AES_CTR"])
def test_encrypt_binlog_round_trip(tmp_path, cipher):
    from binlogkit.crypto.keys import Cipher, Keys
    from fixtures.crypto_build import encrypt_binlog

    src = _logs("mariadb-aes-cbc", "plain-twin")[1]
    dst = tmp_path / "mariadb-bin.000002"
    with lzma.open(src) as fh, open(dst, "wb") as out:
        encrypt_binlog(fh, out, bytes(range(16)), Cipher(cipher), nonce=os.urandom(12))
    keys = Keys(mariadb={1: bytes(range(16))}, source="t")
    res = scan(Input(dst, keys))
    assert res.ok and res.encryption == f"MariaDB {cipher}, key id 1 version 1"
    assert [(t.gtid, t.events, t.bytes) for t in transactions([Input(dst, keys)])] == \
        [(t.gtid, t.events, t.bytes) for t in transactions([src])]
    with pytest.raises(KeyRequiredError):
        list(open_binlog(str(dst)))


def test_fuzz_campaign_bounded():
    """A few seconds of scripts/fuzz_encryption.py (make fuzz-encryption runs 5 minutes)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    res = subprocess.run([sys.executable, str(root / "scripts" / "fuzz_encryption.py"), "--seconds", "8", "--seed", "7"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "all typed or clean" in res.stdout


# --- flashback reads encrypted inputs with the key -----------------------------------------------

def _encrypted_copy(src_dir: Path, dst_dir: Path, key: bytes, cipher: str) -> list[Path]:
    """Each binlog of ``src_dir`` encrypted as a server with encrypt_binlog=ON writes it."""
    from fixtures.crypto_build import encrypt_binlog
    from binlogkit.crypto.keys import Cipher

    dst_dir.mkdir()
    out = []
    for src in sorted(p for p in src_dir.iterdir() if re.search(r"\.\d{6}$", p.name)):
        dst = dst_dir / src.name
        with open(src, "rb") as fh, open(dst, "wb") as w:
            encrypt_binlog(fh, w, key, Cipher(cipher), nonce=os.urandom(12))
        out.append(dst)
    return out


@pytest.mark.parametrize("cipher", ["AES_CBC", "AES_CTR"])
def test_flashback_of_an_encrypted_copy_is_byte_identical(tmp_path, cipher):
    """The undo (binlog and SQL) of the encrypted copies equals the undo of the plain files byte
    for byte: statements named and left out, the later-changes check, every file read back to
    front through its events' own IVs; without the key, one line and exit 2."""
    from binlogkit.api import gtid_matcher
    from binlogkit.crypto.keys import Keys
    from binlogkit.flashback import flashback
    from fixtures import store

    plain_dir = store.materialize("row-types-full-metadata") / "primary"
    plain = sorted(p for p in plain_dir.iterdir() if re.search(r"\.\d{6}$", p.name))
    key = os.urandom(32)
    enc = _encrypted_copy(plain_dir, tmp_path / "enc", key, cipher)
    with pytest.raises(KeyRequiredError):  # really encrypted: the reader needs the key
        list(open_binlog(str(enc[0])))
    keys = Keys(mariadb={1: key}, source="test")
    for sql in (False, True):
        a, b = tmp_path / f"plain-{sql}.out", tmp_path / f"enc-{sql}.out"
        ra = flashback(plain, a, gtids=gtid_matcher("0-1-8..42"), skip_statements=True, sql=sql)
        rb = flashback([Input(p, keys) for p in enc], b, gtids=gtid_matcher("0-1-8..42"), skip_statements=True, sql=sql)
        assert a.read_bytes() == b.read_bytes() and ra.undone == 30
        strip = lambda r: {k: v for k, v in r.to_json().items() if k not in ("output", "skipped", "later")}
        assert strip(ra) == strip(rb)
        assert [s["statement"] for s in ra.skipped] == [s["statement"] for s in rb.skipped] and len(ra.skipped) == 5
        assert ra.later is not None and rb.later is not None and ra.later["total"] == rb.later["total"]
    # the CLI: the key options, the same bytes; no key: one line, exit 2, nothing written
    kf = tmp_path / "keys.txt"
    kf.write_text(f"1;{key.hex()}\n")
    os.chmod(kf, 0o600)
    out = tmp_path / "cli.out"
    res = _run("flashback", "--key-file", kf, "--cipher", cipher, *enc, "-o", out, "--include-gtids", "0-1-8..42",
               "--skip-statements")
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == (tmp_path / "plain-False.out").read_bytes()
    none = tmp_path / "none.out"
    res = _run("flashback", *enc, "-o", none, "--include-gtids", "0-1-8..42",
               env={"BINLOGKIT_KEY_FILE": "", "BINLOGKIT_KEY_FILE_SECRET": ""})
    assert res.exit_code == 2 and not none.exists()
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs key id 1 version 1" in lines[0] and "--key-file" in lines[0], lines
    assert str(enc[0]) in lines[0] and key.hex() not in res.output
    wrong = tmp_path / "wrong.txt"
    wrong.write_text(f"1;{bytes(32).hex()}\n")
    os.chmod(wrong, 0o600)
    res = _run("flashback", "--key-file", wrong, *enc, "-o", none, "--include-gtids", "0-1-8..42")
    assert res.exit_code == 1 and "wrong key, or damaged event" in res.stderr and not none.exists()


def test_flashback_of_a_mysql_encrypted_copy_is_byte_identical(corpus, tmp_path):
    """MySQL binlog_encryption: the undo reads the AES-CTR stream at any offset (seek)."""
    from binlogkit.flashback import flashback

    src = corpus / "mysql" / "mysql-test" / "std_data" / "replicated-bin.000001"
    if not src.exists():
        pytest.skip(f"{src} absent")
    kid = "MySQLReplicationKey_00000000-0000-0000-0000-000000000001_1"
    master = os.urandom(32)
    enc = tmp_path / src.name
    enc.write_bytes(my.encrypt_file(src.read_bytes(), kid, master))
    ring = tmp_path / "ring"
    ring.write_bytes(my.build_keyring_json({kid: master}))
    os.chmod(ring, 0o600)
    a, b = tmp_path / "plain.out", tmp_path / "enc.out"
    ra = flashback([src], a, skip_statements=True)
    res = _run("flashback", "--keyring-file", ring, enc, "-o", b, "--skip-statements")
    assert res.exit_code == 0, res.output
    assert ra.undone == 4 and a.read_bytes() == b.read_bytes()
    res = _run("flashback", enc, "-o", tmp_path / "none.out", "--skip-statements")
    assert res.exit_code == 2 and "--keyring-file" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_pitr_plans_an_encrypted_archive_as_its_plain_copy(tmp_path):
    """pitr with --key-file on an encrypted copy of the lab archive (16 binlogs): the plan of
    the plain archive, every position after the Start_encryption moved by its size; the files in
    between summarised by worker processes that load the key file themselves. No key: exit 2."""
    from fixtures import store

    plain_dir = store.materialize("replication-gtid") / "primary"
    trx = store.manifest("replication-gtid")["primary"]["transactions"]
    key = os.urandom(32)
    enc = _encrypted_copy(plain_dir, tmp_path / "enc", key, "AES_CTR")
    shift = {p.name: p.stat().st_size - (plain_dir / p.name).stat().st_size for p in enc}
    assert set(shift.values()) == {40}  # Start_encryption: header, 17-byte body, CRC32
    kf = tmp_path / "keys.txt"
    kf.write_text(f"1;{key.hex()}\n")
    os.chmod(kf, 0o600)
    args = ["pitr", "--json", "--from-gtid", trx[700]["gtid"], "--until-gtid", trx[2000]["gtid"], "--jobs", "2"]
    a = _run(*args, plain_dir)
    b = _run(*args, "--key-file", kf, tmp_path / "enc")
    assert a.exit_code == b.exit_code == 0, b.output
    pa, pb = json.loads(a.stdout), json.loads(b.stdout)
    assert pb["reachable"] and pb["problems"] == [] == pa["problems"]
    assert pb["transactions"] == pa["transactions"] == 1300 and len(pb["files"]) == len(pa["files"]) > 2
    assert [Path(f).name for f in pb["files"]] == [Path(f).name for f in pa["files"]]
    for end in ("start", "stop"):
        name, pos = Path(pa[end]["file"]).name, pa[end]["position"]
        assert Path(pb[end]["file"]).name == name
        assert pb[end]["position"] == (pos + shift[name] if pos > 4 else pos)
    assert pb["start"]["gtids"] == pa["start"]["gtids"] and pb["stop"]["target"] == pa["stop"]["target"]
    res = _run(*args, tmp_path / "enc", env={"BINLOGKIT_KEY_FILE": "", "BINLOGKIT_KEY_FILE_SECRET": ""})
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs key id 1 version 1" in lines[0] and "--key-file" in lines[0], lines

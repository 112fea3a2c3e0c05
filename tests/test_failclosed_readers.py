"""Readers fail closed (issue 28, points 5-7), through the CLI on real files.

* damaged archives built from the committed fixtures (decompressed, compressed again with
  lzma / gzip / bz2, then cut or flipped): a ``CompressionError`` naming file and decompressed
  offset in every command, exit 1, the other files still read and reported; never a traceback,
  never click's bare ``Aborted!``;
* FIFOs, devices and links to them: refused up front, one line, exit 2, no hang (FIFO runs are
  subprocesses with a timeout); ``decode -`` reads standard input, other commands refuse ``-``;
* indexes: a file an ``.index`` lists that the archive lacks is a missing_file error of the
  audit (plain and encrypted archives, both engines); an index written on another host is read
  beside itself by every command, said once.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from binlogkit import open_binlog
from binlogkit.cli import main
from binlogkit.errors import BinlogError, CompressionError, NotRegularFileError
from binlogkit.reading.files import open_input, read_index

ROOT = Path(__file__).resolve().parent.parent
PRIMARY = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"
ENCRYPTED = ROOT / "fixtures" / "encrypted" / "mariadb-aes-cbc"
BINLOGKIT = [str(Path(sys.executable).parent / "binlogkit")]
COMPRESS = {"xz": lzma.compress, "gz": gzip.compress, "bz2": bz2.compress}
NAME = "mariadb-bin"


def _plain(n: int) -> bytes:
    """The decompressed bytes of the fixture's file number ``n``."""
    p = PRIMARY / f"{NAME}.{n:06d}"
    return p.read_bytes() if p.exists() else lzma.decompress((PRIMARY / f"{NAME}.{n:06d}.xz").read_bytes())


def _cut(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]


def _flip(data: bytes) -> bytes:
    b = bytearray(data)
    b[len(b) // 2] ^= 0x55
    return bytes(b)


def _archive(tmp: Path, codec: str = "xz", damage=_cut, index: bool = True, count: int = 4) -> Path:
    """Files 1..count of the fixture, compressed with ``codec``; number 2 damaged with ``damage``."""
    d = tmp / "arch"
    d.mkdir()
    for n in range(1, count + 1):
        body = COMPRESS[codec](_plain(n))
        (d / f"{NAME}.{n:06d}.{codec}").write_bytes(damage(body) if n == 2 else body)
    if index:
        (d / f"{NAME}.index").write_text("".join(f"./{NAME}.{n:06d}\n" for n in range(1, count + 1)))
    return d


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _stderr(r) -> str:
    return r.stderr if hasattr(r, "stderr") else r.output


# --- 5. compressed archives --------------------------------------------------------------------

@pytest.mark.parametrize("codec", ["xz", "gz", "bz2"])
@pytest.mark.parametrize("damage", [_cut, _flip], ids=["cut", "flip"])
def test_damaged_archive_is_a_typed_error_and_the_other_files_are_read(tmp_path, codec, damage):
    d = _archive(tmp_path, codec, damage)
    bad = f"{NAME}.000002.{codec}"
    r = _run("verify", str(d))
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == ["OK", "BAD", "OK", "OK"]  # the files after it are checked
    assert bad in lines[1]
    r = _run("decode", "--base64-output=decode-rows", str(d))
    assert r.exit_code == 1
    assert "Traceback" not in r.output and "Aborted!" not in r.output
    assert f"{bad}" in _stderr(r) and "binlogkit: error:" in _stderr(r)
    assert f"{NAME}.000004.{codec}" in r.stdout or "# at" in r.stdout.split(bad)[-1]  # decoded on after it
    if damage is _cut:  # the stream's own verdict (a flip may first break an event's CRC32)
        assert f"the {'bzip2' if codec == 'bz2' else 'gzip' if codec == 'gz' else 'xz'} archive is cut short" in _stderr(r)
        assert "decompressed bytes" in _stderr(r)


def test_cut_archive_names_file_event_and_decompressed_offset(tmp_path):
    d = _archive(tmp_path, "gz", _cut)
    r = _run("decode", "--base64-output=decode-rows", str(d / f"{NAME}.000002.gz"))
    assert r.exit_code == 1
    err = _stderr(r).strip().splitlines()[-1]
    # file, offset of the event being read, its type, what happened, how far the stream went
    assert err.startswith(f"binlogkit: error: {d / (NAME + '.000002.gz')}, offset ")
    assert ", event " in err and "the gzip archive is cut short" in err
    decompressed = int(err.rsplit("after ", 1)[1].split()[0])
    offset = int(err.split(", offset ", 1)[1].split(",")[0])
    assert offset <= decompressed < len(_plain(2))
    # everything before that event was printed
    last = [ln for ln in r.stdout.splitlines() if ln.startswith("# at ")][-1]
    assert int(last.split()[-1]) < offset


def test_bad_gzip_crc_is_named(tmp_path):
    d = tmp_path / "g"
    d.mkdir()
    body = bytearray(gzip.compress(_plain(1)))
    body[-8:-4] = bytes(b ^ 0xFF for b in body[-8:-4])  # the trailer's CRC32 of the data
    (d / f"{NAME}.000001.gz").write_bytes(bytes(body))
    r = _run("verify", str(d / f"{NAME}.000001.gz"))
    assert r.exit_code == 1
    assert "corrupt gzip data (BadGzipFile: CRC check failed" in r.stdout


@pytest.mark.parametrize("command", ["gtids", "transactions", "audit", "pitr", "compare", "flashback", "export"])
def test_every_command_reports_a_corrupt_xz_and_exits_1(tmp_path, command):
    d = _archive(tmp_path, "xz", _flip)
    args = {"gtids": ["gtids", str(d)], "transactions": ["transactions", str(d)],
            "audit": ["audit", "--jobs", "1", str(d)],
            "pitr": ["pitr", str(d), "--from-gtid", "0-1-1", "--until-gtid", "0-1-800"],
            "compare": ["compare", str(d), str(d)],
            "flashback": ["flashback", str(d), "--include-gtids", "0-1-700", "--output", str(tmp_path / "fb.sql")],
            "export": ["export", str(d), "--output", str(tmp_path / "out")]}[command]
    if command == "export":
        pytest.importorskip("pyarrow")
    r = _run(*args)
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and "Aborted!" not in r.output
    assert f"{NAME}.000002.xz" in r.output
    if command in ("gtids", "transactions", "audit", "compare"):
        assert "0-1-8" in r.output or "000004" in r.output  # the files after the damage were read
    if command == "transactions":
        assert f"{NAME}.000004.xz" in r.stdout


def test_audit_spark_reports_a_cut_archive_like_the_local_engine(tmp_path, capsys):
    pytest.importorskip("pyspark")
    from binlogkit.audit import run_local
    from binlogkit.spark.jobs import audit as job

    d = _archive(tmp_path, "bz2", _cut)
    local = run_local([str(d)], jobs=1)
    spark = job.session("local[1]")
    try:
        rc = job.main(spark, [str(d), "--json"])
    finally:
        spark.stop()
    out = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert out["counts"] == local["counts"]
    kinds = {(f["kind"], os.path.basename(f["file"] or "")) for f in out["findings"]}
    assert ("unreadable", f"{NAME}.000002.bz2") in kinds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(codec=st.sampled_from(["xz", "gz", "bz2"]), at=st.floats(0.0, 1.0), flip=st.integers(0, 255),
       cut=st.booleans())
def test_any_cut_or_flip_is_a_binlog_error_or_the_same_bytes(tmp_path, codec, at, flip, cut):
    """Whatever byte is cut or flipped, reading gives the original events or a BinlogError."""
    plain = _plain(3)
    body = bytearray(COMPRESS[codec](plain))
    i = min(len(body) - 1, int(at * len(body)))
    if cut:
        body = body[:i]
    else:
        body[i] ^= flip or 1
    p = tmp_path / f"h.{os.getpid()}.{codec}"
    p.write_bytes(bytes(body))
    try:
        n = sum(1 for _ in open_binlog(str(p)))
    except BinlogError:
        return
    with open_input(p) as fh:  # no error: the stream gave back every byte there was
        assert fh.read() == plain
    assert n > 0


# --- 6. FIFOs, devices, sockets, standard input ----------------------------------------------

def _cli(*args: str, stdin: bytes | None = None, timeout: float = 60):
    return subprocess.run(BINLOGKIT + list(args), input=stdin, capture_output=True, timeout=timeout,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / f"{NAME}.000001"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize("command", ["decode", "verify", "gtids", "transactions", "audit", "compare", "flashback",
                                     "export", "pitr"])
def test_a_fifo_is_refused_up_front_without_hanging(fifo, tmp_path, command):
    extra = {"compare": [str(fifo)], "flashback": ["--include-gtids", "0-1-1", "--output", str(tmp_path / "x.sql")],
             "export": ["--output", str(tmp_path / "out")],
             "pitr": ["--from-gtid", "0-1-1", "--until-gtid", "0-1-2"]}.get(command, [])
    r = _cli(command, str(fifo), *extra, timeout=60)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert err.strip().splitlines() == [f"binlogkit: error: {fifo}: is a FIFO (named pipe), not a regular file: "
                                        "refused (binlogkit reads only regular files; '-' is standard input where "
                                        "a command streams it)"]


@pytest.mark.parametrize("command", ["audit", "verify", "decode"])
def test_a_link_to_dev_null_is_refused(tmp_path, command):
    link = tmp_path / f"{NAME}.000001"
    link.symlink_to("/dev/null")
    r = _run(command, str(link))
    assert r.exit_code == 2
    assert f"{link}: is a character device (a link to /dev/null), not a regular file" in _stderr(r)
    assert "0 files" not in r.output


def test_a_fifo_in_a_folder_or_an_index_is_refused_not_skipped(tmp_path):
    d = tmp_path / "arch"
    d.mkdir()
    shutil.copy(PRIMARY / f"{NAME}.000001.xz", d)
    os.mkfifo(d / f"{NAME}.000002")
    r = _cli("audit", str(d))  # no index: the folder's log-named entries
    assert r.returncode == 2 and b"is a FIFO" in r.stderr and str(d / f"{NAME}.000002").encode() in r.stderr
    (d / f"{NAME}.index").write_text(f"./{NAME}.000001\n./{NAME}.000002\n")
    for command in ("verify", "audit", "gtids"):
        r = _cli(command, str(d / f"{NAME}.index"))
        assert r.returncode == 2 and b"is a FIFO" in r.stderr, (command, r.stderr)


def test_a_socket_is_refused(tmp_path):
    import socket

    p = tmp_path / f"{NAME}.000001"
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(p))
        r = _run("verify", str(p))
    finally:
        s.close()
    assert r.exit_code == 2 and "is a socket, not a regular file" in _stderr(r)


def test_the_opener_checks_the_descriptor_too(fifo):
    with pytest.raises(NotRegularFileError, match="FIFO"):
        open_input(fifo)  # returns at once: opened O_NONBLOCK, refused on fstat


def test_decode_reads_standard_input():
    data = _plain(1)
    from_file = _cli("decode", "--base64-output=decode-rows", str(PRIMARY / f"{NAME}.000001.xz"))
    from_stdin = _cli("decode", "--base64-output=decode-rows", "-", stdin=data)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout and from_stdin.stdout.count(b"# at ") > 100
    torn = _cli("decode", "--base64-output=decode-rows", "-", stdin=data[:-7])
    assert torn.returncode == 1 and b"binlogkit: error: -, offset" in torn.stderr


@pytest.mark.parametrize("command", ["verify", "gtids", "audit"])
def test_commands_that_reopen_files_refuse_standard_input_in_one_line(command):
    r = _run(command, "-")
    assert r.exit_code == 2
    assert _stderr(r).strip().splitlines() == [
        f"binlogkit: error: {command} cannot read standard input ('-'): it needs files it can reopen; "
        "give a path (decode reads '-')"]


# --- 7. indexes --------------------------------------------------------------------------------

def _audit_json(*args: str):
    r = _run("audit", "--json", "--jobs", "1", *args)
    return r, json.loads(r.stdout)


def test_audit_a_file_the_index_lists_but_the_archive_lacks_is_an_error(tmp_path):
    d = tmp_path / "arch"
    d.mkdir()
    for n in (1, 2, 3):
        shutil.copy(PRIMARY / f"{NAME}.{n:06d}.xz", d)
    (d / f"{NAME}.index").write_text("".join(f"./{NAME}.{n:06d}\n" for n in (1, 2, 3, 4, 5)))
    r, doc = _audit_json(str(d))
    assert r.exit_code == 1
    missing = [f for f in doc["findings"] if f["kind"] == "missing_file"]
    assert [f["severity"] for f in missing] == ["error", "error"]
    # .000004: the target of the last Rotate (a warning before), .000005: listed only
    assert any("rotates to mariadb-bin.000004" in f["detail"] and "mariadb-bin.index lists it" in f["detail"]
               for f in missing)
    assert any(f"{d / NAME}.000005 is listed by {d / NAME}.index" in f["detail"] for f in missing)
    # without the index's word the same archive is clean but for a warning (the server may not have rotated yet)
    (d / f"{NAME}.index").unlink()
    r, doc = _audit_json(str(d))
    assert r.exit_code == 0 and [f["severity"] for f in doc["findings"] if f["kind"] == "missing_file"] == ["warning"]


def test_audit_missing_file_on_an_encrypted_archive(tmp_path):
    d = tmp_path / "enc"
    shutil.copytree(ENCRYPTED / "primary", d)
    (d / f"{NAME}.000003").unlink()
    keys = str(ENCRYPTED / "keys" / "keys.txt")
    for args in ([], ["--key-file", keys]):
        r, doc = _audit_json(*args, str(d))
        assert r.exit_code == 1
        missing = [f for f in doc["findings"] if f["kind"] == "missing_file"]
        assert missing and all(f["severity"] == "error" for f in missing)


def test_audit_spark_gives_the_same_missing_file_errors(tmp_path, capsys):
    pytest.importorskip("pyspark")
    from binlogkit.audit import run_local
    from binlogkit.spark.jobs import audit as job

    d = tmp_path / "arch" / "sub"
    d.mkdir(parents=True)
    shutil.copy(PRIMARY / f"{NAME}.000001.xz", d)
    (d / f"{NAME}.index").write_text(f"./{NAME}.000001\n./{NAME}.000002\n./{NAME}.000003\n")
    other = tmp_path / "arch" / "gone"  # a directory of which every listed file is lost
    other.mkdir()
    (other / "relay.index").write_text("./relay.000007\n")
    local = run_local([str(tmp_path / "arch")], jobs=1)
    spark = job.session("local[1]")
    try:
        rc = job.main(spark, [str(tmp_path / "arch"), "--json"])
    finally:
        spark.stop()
    out = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert out["counts"] == local["counts"] and out["counts"]["error"] == 3
    assert sorted(f["detail"] for f in out["findings"]) == sorted(f["detail"] for f in local["findings"])


def _foreign_index(tmp_path: Path, count: int = 3) -> Path:
    d = tmp_path / "copy"
    d.mkdir()
    for n in range(1, count + 1):
        shutil.copy(PRIMARY / f"{NAME}.{n:06d}.xz", d)
    (d / f"{NAME}.index").write_text("".join(f"/var/lib/mysql/{NAME}.{n:06d}\n" for n in range(1, count + 1)))
    return d


def test_read_index_resolves_another_hosts_paths_beside_it(tmp_path):
    d = _foreign_index(tmp_path)
    listing = read_index(d / f"{NAME}.index")
    assert listing.elsewhere
    assert listing.files == [d / f"{NAME}.{n:06d}.xz" for n in (1, 2, 3)]
    (d / "local.index").write_text(f"{d / NAME}.000001.xz\n")  # absolute and here: itself, no note
    assert not read_index(d / "local.index").elsewhere


@pytest.mark.parametrize("command", [["gtids"], ["transactions"], ["decode", "--base64-output=decode-rows"], ["verify"], ["audit"],
                                     ["compare", "{index}"],
                                     ["pitr", "--from-gtid", "0-1-1", "--until-gtid", "0-1-500"]])
def test_an_index_from_another_host_is_read_beside_itself_in_every_command(tmp_path, command):
    d = _foreign_index(tmp_path)
    index = str(d / f"{NAME}.index")
    args = [command[0], index] + [a.replace("{index}", index) for a in command[1:]]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    notes = [ln for ln in _stderr(r).splitlines() if ln.startswith("binlogkit: note:")]
    assert notes == [f"binlogkit: note: {index} lists files in another folder (/var/lib/mysql/{NAME}.000001...); "
                     "they are read by name beside it, in its own folder (nothing outside it is opened)"]
    assert "does not exist" not in "\n".join(ln for ln in _stderr(r).splitlines() if "note:" not in ln)



def test_a_damaged_compressed_object_is_damage_not_a_store_error(s3_server, tmp_path):
    """On S3 too: a cut .gz object is a CompressionError naming the URL (exit 1), the objects
    after it are read; a store failure would be exit 2."""
    from binlogkit.reading import storage

    s3_server.make_bucket("damaged")
    d = _archive(tmp_path, "gz", _cut, index=False, count=3)
    fs, _ = storage.filesystem("s3://damaged/x")
    for f in sorted(d.iterdir()):
        fs.put_file(str(f), f"damaged/arch/{f.name}")
    storage.forget()
    url = "s3://damaged/arch/"
    r = _run("verify", url)
    assert r.exit_code == 1, r.output
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == ["OK", "BAD", "OK"]
    assert "the gzip archive is cut short" in r.stdout and f"{NAME}.000002.gz" in r.stdout
    r = _run("decode", "--base64-output=decode-rows", f"{url}{NAME}.000002.gz")
    assert r.exit_code == 1
    assert f"binlogkit: error: s3://damaged/arch/{NAME}.000002.gz, offset " in _stderr(r)


def test_audit_under_a_prefix_a_file_the_index_lists_but_the_store_lacks_is_an_error(s3_server, tmp_path):
    from binlogkit.reading import storage

    s3_server.make_bucket("lost")
    fs, _ = storage.filesystem("s3://lost/x")
    for n in (1, 2):
        fs.put_file(str(PRIMARY / f"{NAME}.{n:06d}.xz"), f"lost/db1/{NAME}.{n:06d}.xz")
    index = tmp_path / f"{NAME}.index"
    index.write_text("".join(f"./{NAME}.{n:06d}\n" for n in (1, 2, 3, 4)))
    fs.put_file(str(index), f"lost/db1/{NAME}.index")
    storage.forget()
    r, doc = _audit_json("s3://lost/db1/")
    assert r.exit_code == 1
    missing = sorted((f["severity"], f["detail"]) for f in doc["findings"] if f["kind"] == "missing_file")
    assert [m[0] for m in missing] == ["error", "error"]
    assert any("rotates to mariadb-bin.000003" in d and "lists it" in d for _s, d in missing)
    assert any(f"s3://lost/db1/{NAME}.000004 is listed by s3://lost/db1/{NAME}.index" in d for _s, d in missing)

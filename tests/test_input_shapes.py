"""One input, many shapes: every command agrees on which transactions it holds.

A folder of binlogs reaches users in shapes the lab does not write: a copy whose ``.index``
names the live server's files by absolute path (``log-bin=/abs/path/primary-bin``), the same
files without an index, one of them compressed or encrypted, the files named in another order
or one of them twice. ``gtids``, ``transactions``, ``audit``, ``export``, ``pitr`` and
``flashback`` must each see exactly the transactions of the files given — the copy's, never
the live server's — in binlog order, each file once (reading.files.expand_paths, the one rule).

The shapes are built from the committed fixtures (MariaDB 10.11 and 11.8, MySQL 9.7); one test
runs a lab MariaDB with an absolute ``log-bin`` so its index is the server's own.
"""

from __future__ import annotations

import json
import lzma
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.reading.names import index_lines, is_log_name, strip_compressed

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SERIES = ["mariadb-10.11/row-types-full-metadata/primary", "mariadb-11.8/replication-gtid/primary", "mysql-9.7/replication-gtid/primary"]

# --- nothing under a forbidden folder is opened (in this process: audit and pitr run with --jobs 1) ---
FORBIDDEN: list[str] = []
OPENED: list[str] = []


def _watch(event: str, args: tuple) -> None:
    if event == "open" and FORBIDDEN and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if any(path.startswith(f) for f in FORBIDDEN):
            OPENED.append(path)


sys.addaudithook(_watch)


@pytest.fixture
def forbid():
    """``forbid(folder)``: any open of a path under it fails the test."""
    def add(folder: Path) -> None:
        FORBIDDEN.append(str(folder) + os.sep)
    yield add
    opened = list(OPENED)
    FORBIDDEN.clear()
    OPENED.clear()
    assert not opened, f"opened outside the folder given: {opened[:3]}"


def run(*args) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout, (r.stderr if hasattr(r, "stderr") else "")


def logs(folder: Path) -> list[Path]:
    return sorted((p for p in folder.iterdir() if is_log_name(p.name)), key=lambda p: p.name)


# --- what each command says the input holds ----------------------------------------------------

def seen_by_transactions(args, keys) -> list[str]:
    rc, out, err = run("transactions", "--json", *keys, *args)
    assert rc == 0, err
    return [t["gtid"] for t in map(json.loads, out.splitlines()) if t["complete"]]


def seen_by_gtids(args, keys) -> tuple[int, str]:
    rc, out, err = run("gtids", "--json", *keys, *args)
    assert rc == 0, err
    doc = json.loads(out)
    return doc["transactions"], (doc["mariadb"]["position"] if doc.get("mariadb") else doc["mysql"]["contained"])


def seen_by_audit(args, keys) -> int:
    rc, out, err = run("audit", "--json", "--jobs", "1", *keys, *args)
    assert rc == 0, out + err
    doc = json.loads(out)
    assert doc["counts"]["error"] == 0, doc["findings"][:3]
    return sum(c["count"] for s in doc["summary"].values() for c in s["coverage"].values())


def seen_by_export(args, keys, out_dir: Path) -> tuple[int, int]:
    rc, out, err = run("export", "--json", "-o", out_dir, *keys, *args)
    assert rc == 0, err
    doc = json.loads(out)
    return doc["transactions"], doc["rows"]


def seen_by_pitr(args, keys, first: str, state: str) -> int:
    rc, out, err = run("pitr", "--json", "--jobs", "1", *keys, "--from-file", first, "--from-position", "4",
                       "--until-gtid", state, *args)
    assert rc == 0, out + err
    doc = json.loads(out)
    assert doc["reachable"], doc
    return doc["transactions"]


def seen_by_flashback(args, keys, out: Path, gtid: str) -> dict:
    rc, text, err = run("flashback", "--json", "--no-check-later", "--include-gtids", gtid, "-o", out, *keys, *args)
    assert rc == 0, err
    doc = json.loads(text)
    return {k: doc[k] for k in ("transactions", "undone", "rows", "first_gtid", "last_gtid")}


def undoable(args, keys, work: Path) -> str:
    """The last transaction of the input that flashback can undo (row changes, FULL images)."""
    rc, out, err = run("transactions", "--json", *keys, *args)
    for t in reversed([json.loads(line) for line in out.splitlines()]):
        if t["complete"] and t["terminator"] == "XID" and t["gtid"]:
            rc, _text, _err = run("flashback", "--no-check-later", "--include-gtids", _as_set(t["gtid"]),
                                  "-o", work / "probe.bin", "--force", *keys, *args)
            if rc == 0:
                return _as_set(t["gtid"])
    raise AssertionError("no transaction flashback can undo")


def _as_set(gtid: str) -> str:
    """A GTID as --include-gtids takes it (MySQL uuid:N, MariaDB D-S-N)."""
    return gtid


def everything(args, keys, work: Path, tag: str, gtid: str) -> dict:
    trx = seen_by_transactions(args, keys)
    count, state = seen_by_gtids(args, keys)
    first = strip_compressed(min(Path(str(a)).name for a in _files_of(args)))
    return {"transactions": trx, "gtids": (count, state), "audit": seen_by_audit(args, keys),
            "export": seen_by_export(args, keys, work / f"export-{tag}"),
            "pitr": seen_by_pitr(args, keys, first, state),
            "flashback": seen_by_flashback(args, keys, work / f"undo-{tag}.bin", gtid)}


def _files_of(args) -> list[Path]:
    out = []
    for a in map(Path, map(str, args)):
        if a.is_dir():
            out += logs(a)
        elif a.suffix == ".index":
            out += [a.parent / Path(line).name for line in index_lines(a.read_text())]
        else:
            out.append(a)
    return out


# --- the shapes -----------------------------------------------------------------------------------

def entry_name(line: str) -> str:
    return line.rstrip("/").rsplit("/", 1)[-1]


def _plain(path: Path) -> bytes:
    return lzma.decompress(path.read_bytes()) if path.suffix == ".xz" else path.read_bytes()


def copy_with_absolute_index(src: Path, tmp: Path) -> tuple[Path, Path]:
    """``tmp/copy``: the files of ``src``, its index naming ``tmp/orig/NAME`` by absolute path;
    ``tmp/orig`` (the "live" folder) holds files of those names with other transactions (each
    the first file's, plain: the later transactions are not there, the first ones are there
    again) and one more file."""
    copy, orig = tmp / "copy", tmp / "orig"
    shutil.copytree(src, copy)
    orig.mkdir()
    files = logs(src)
    names = [strip_compressed(f.name) for f in files]
    for name in names:
        (orig / name).write_bytes(_plain(files[0]))
    base, number = names[-1].rsplit(".", 1)
    (orig / f"{base}.{int(number) + 1:06d}").write_bytes(_plain(files[0]))
    for index in copy.glob("*.index"):
        index.write_text("".join(f"{orig / entry_name(line)}\n" for line in index_lines(index.read_text())))
    return copy, orig


def encrypt_one(folder: Path, flavor: str, tmp: Path) -> list[str]:
    """The last (plain) binlog of ``folder`` encrypted in place, as the server would have; the
    key options that read it."""
    last = logs(folder)[-1]
    assert last.suffix != ".xz"
    if flavor == "mariadb":
        from binlogkit.crypto.keys import Cipher
        from fixtures.crypto_build import encrypt_binlog

        key = bytes(range(32))
        enc = tmp / "enc.tmp"
        with open(last, "rb") as fh, open(enc, "wb") as w:
            encrypt_binlog(fh, w, key, Cipher("AES_CBC"), nonce=bytes(12))
        enc.replace(last)
        keyfile = tmp / "keys.txt"
        keyfile.write_text(f"1;{key.hex()}\n")
        keyfile.chmod(0o600)
        return ["--key-file", str(keyfile)]
    from binlogkit.crypto import mysql as my

    kid = "MySQLReplicationKey_00000000-0000-0000-0000-000000000001_1"
    master = bytes(range(32))
    last.write_bytes(my.encrypt_file(last.read_bytes(), kid, master))
    ring = tmp / "keyring"
    ring.write_bytes(my.build_keyring_json({kid: master}))
    ring.chmod(0o600)
    return ["--keyring-file", str(ring)]


def shapes(src: Path, flavor: str, tmp: Path):
    """(name, arguments, key options, folder that must never be opened or None)."""
    files = logs(src)
    index = next(src.glob("*.index"))
    copy, orig = copy_with_absolute_index(src, tmp / "abs")
    yield "absolute index, folder", [copy], [], orig
    yield "absolute index, the index", [next(copy.glob("*.index"))], [], orig
    bare = tmp / "bare"
    shutil.copytree(src, bare, ignore=shutil.ignore_patterns("*.index"))
    yield "no index", [bare], [], None
    packed = tmp / "packed"
    shutil.copytree(src, packed)
    last = logs(packed)[-1]
    last.with_name(last.name + ".xz").write_bytes(lzma.compress(last.read_bytes()))
    last.unlink()
    yield "one compressed", [packed], [], None
    sealed = tmp / "sealed"
    shutil.copytree(src, sealed)
    yield "one encrypted", [sealed], encrypt_one(sealed, flavor, tmp), None
    yield "files in reverse order", list(reversed(files)), [], None
    yield "a file twice", [index, files[0], src / "." / files[0].name, files[-1]], [], None


@pytest.mark.parametrize("series", SERIES)
def test_every_command_sees_the_same_transactions_in_every_shape(series, tmp_path, forbid):
    src = FIXTURES / series
    flavor = "mysql" if series.startswith("mysql") else "mariadb"
    gtid = undoable([src], [], tmp_path)
    truth = everything([src], [], tmp_path, "truth", gtid)
    assert truth["transactions"] and truth["gtids"][0] == len(truth["transactions"]) == truth["audit"]
    assert truth["pitr"] == len(truth["transactions"])
    for name, args, keys, never in shapes(src, flavor, tmp_path):
        if never is not None:
            forbid(never)
        seen = everything(args, keys, tmp_path, name.replace(" ", "-").replace(",", ""), gtid)
        assert seen == truth, name


def test_the_live_folder_differs_so_the_copy_test_means_something(tmp_path):
    """The 'live' folder the copy's index names really holds other transactions: read as itself
    it gives another answer (so a command that followed the index there would fail above)."""
    src = FIXTURES / SERIES[0]
    copy, orig = copy_with_absolute_index(src, tmp_path)
    assert seen_by_transactions([copy], []) == seen_by_transactions([src], [])
    assert seen_by_transactions([orig], []) != seen_by_transactions([src], [])


# --- every committed series folder: the cheap commands, the shapes that need no key ------------

def series_folders() -> list[str]:
    out = []
    for version in ("mariadb-10.11", "mariadb-11.8", "mysql-9.7"):
        for index in sorted((FIXTURES / version).rglob("*.index")):
            folder = index.parent
            if logs(folder) and not list(folder.glob("*.idx.*")):
                out.append(str(folder.relative_to(FIXTURES)))
    return sorted(set(out))


def said(args, keys=()) -> tuple:
    """What gtids, transactions and audit say of ``args``, exit codes included (a crash
    fixture's torn tail is said the same way in every shape)."""
    rc1, out, _ = run("transactions", "--json", *keys, *args)
    trx = [(t["gtid"], strip_compressed(Path(t["start_file"]).name), t["start_offset"], t["complete"])
           for t in map(json.loads, out.splitlines())]
    rc2, out, _ = run("gtids", "--json", *keys, *args)
    doc = json.loads(out)
    state = doc.get("mariadb", {}).get("position") if doc.get("mariadb") else (doc.get("mysql") or {}).get("contained")
    rc3, out, _ = run("audit", "--json", "--jobs", "1", *keys, *args)
    audit = json.loads(out)
    cover = sorted((k.rsplit("/", 1)[-1], s["gtids_covered"], s["files"]) for k, s in audit["summary"].items())
    kinds = sorted((f["kind"], f["severity"]) for f in audit["findings"])
    return rc1, trx, rc2, doc["transactions"], state, rc3, cover, kinds


@pytest.mark.parametrize("series", series_folders())
def test_every_series_folder_reads_the_same_in_every_shape(series, tmp_path, forbid):
    src = FIXTURES / series
    ring = src.parent / "keyring"
    keys = ["--keyring-file", str(ring)] if ring.is_file() else []
    truth = said([src], keys)
    assert truth[1], "no transaction read"
    copy, orig = copy_with_absolute_index(src, tmp_path / "abs")
    forbid(orig)
    bare = tmp_path / "bare"
    shutil.copytree(src, bare, ignore=shutil.ignore_patterns("*.index"))
    files = logs(src)
    for name, args in (("absolute index", [copy]), ("no index", [bare]), ("reverse order", list(reversed(files))),
                       ("a file twice", [src, files[-1], files[0]])):
        assert said(args, keys) == truth, name


# --- a real server's own absolute index ---------------------------------------------------------

@pytest.mark.server
def test_a_copy_of_a_server_started_with_an_absolute_log_bin_is_read_as_the_copy(tmp_path, forbid):
    """MariaDB started with ``log-bin=/abs/path/primary-bin`` writes absolute paths into its
    index. The folder copied at some GTID while the server goes on: every command asked about
    the copy (the folder, or its index) answers for the copy, and opens nothing of the live
    folder; the live folder itself holds more."""
    from fixtures.lab import Lab

    live = tmp_path / "live"
    live.mkdir()
    with Lab(tmp_path / "lab") as lab:
        if lab.kind.run_user and os.geteuid() == 0:
            shutil.chown(live, lab.kind.run_user, lab.kind.run_user)
        p = lab.server("primary", 1, log_bin=str(live / "primary-bin")).start()
        p.execute("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)",
                  "INSERT INTO shop.t VALUES (1, 10)", "FLUSH BINARY LOGS",
                  "INSERT INTO shop.t VALUES (2, 20)", "UPDATE shop.t SET v = 11 WHERE id = 1")
        at_copy = p.var("gtid_binlog_pos")
        copy = tmp_path / "copy"
        shutil.copytree(live, copy)
        p.execute("DELETE FROM shop.t WHERE id = 2", "INSERT INTO shop.t VALUES (3, 30)", "FLUSH BINARY LOGS",
                  "INSERT INTO shop.t VALUES (4, 40)")
        later = p.var("gtid_binlog_pos")
    listed = index_lines((copy / "primary-bin.index").read_text())
    assert listed and all(line.startswith(str(live) + "/") for line in listed), listed  # the server's own form
    assert seen_by_gtids([live], [])[1] == later != at_copy
    n = int(at_copy.rsplit("-", 1)[1])
    gone = f"0-1-{n + 1}"   # the DELETE: committed after the copy, in the live files only
    forbid(live)
    for args in ([copy], [copy / "primary-bin.index"]):
        assert seen_by_gtids(args, []) == (n, at_copy)
        assert seen_by_transactions(args, []) == [f"0-1-{i}" for i in range(1, n + 1)]
        assert seen_by_audit(args, []) == n
        assert seen_by_export(args, [], tmp_path / "export") == (n, 3)   # 3 row changes (the DDL: none)
        assert seen_by_pitr(args, [], "primary-bin.000001", at_copy) == n
        rc, out, _err = run("pitr", "--json", "--jobs", "1", "--from-file", "primary-bin.000001", "--from-position", "4",
                            "--until-gtid", later, *args)
        assert not json.loads(out)["reachable"]
        rc, _out, err = run("flashback", "--include-gtids", gone, "-o", tmp_path / "undo.bin", *args)
        assert rc == 2 and "nothing to undo" in err and not (tmp_path / "undo.bin").exists()
        rc, _out, err = run("gtids", *args)
        assert rc == 0 and f"{copy / 'primary-bin.index'} lists files in another folder" in err


# --- the order given and files named twice never change a mirror ---------------------------------

def _mirror_tables(out: Path, tables: list[str]) -> dict:
    from binlogkit.export.lake.mirror import open_sink

    sink = open_sink("delta", str(out))
    got = {}
    for name in tables:
        db, table = name.split(".", 1)
        data = sink.read(db, table)
        got[name] = None if data is None else sorted(repr(sorted(r.items())) for r in data.to_pylist())
    return got


def _mirror(tmp: Path, tag: str, *args) -> tuple[int, dict | None, str, Path]:
    out = tmp / f"lake-{tag}"
    rc, text, err = run("export", "--format", "delta", "--mirror", "--json", "-o", out, *args)
    return rc, (json.loads(text) if rc in (0, 1) and text.strip() else None), err, out


@pytest.mark.parametrize("series", ["mariadb-10.11/row-types-full-metadata/primary", "mysql-9.7/replication-gtid/primary"])
def test_a_mirror_is_the_same_whatever_the_order_given_and_a_file_named_twice(series, tmp_path):
    pytest.importorskip("deltalake")
    src = FIXTURES / series
    files = logs(src)
    rc, doc, err, ref = _mirror(tmp_path, "ref", src)
    assert rc == 0 and doc is not None, err
    tables = doc["tables"]
    want = _mirror_tables(ref, tables)
    assert tables and doc["skipped_rows"] == 0
    for tag, args in (("reversed", list(reversed(files))), ("twice", [files[1], *files, files[0], src])):
        rc, doc, err, out = _mirror(tmp_path, tag, *args)
        assert rc == 0 and doc is not None, err
        assert doc["skipped_rows"] == 0   # an empty warehouse: nothing "already in the tables (an earlier run)"
        assert doc["tables"] == tables and _mirror_tables(out, tables) == want, tag


def _two_series(tmp: Path) -> Path:
    """A folder holding a primary's binlogs (primary-bin.*) and a replica's (replica-bin.*) with
    the same transactions, as a datadir or a careless copy does."""
    src = FIXTURES / "mariadb-10.11" / "row-types-full-metadata" / "primary"
    both = tmp / "both"
    both.mkdir()
    for f in logs(src):
        n = strip_compressed(f.name).rsplit(".", 1)[1]
        suffix = ".xz" if f.suffix == ".xz" else ""
        shutil.copy(f, both / f"primary-bin.{n}{suffix}")
        shutil.copy(f, both / f"replica-bin.{n}{suffix}")
    (both / "primary-bin.index").write_text("".join(f"./primary-bin.{f.name.split('.')[1]}\n" for f in logs(src)))
    return both


def test_a_mirror_of_several_series_is_refused_unless_one_is_chosen(tmp_path):
    pytest.importorskip("deltalake")
    both = _two_series(tmp_path)
    rc, _text, err, out = _mirror(tmp_path, "both", both)
    assert rc == 2 and "several binlog series" in err and "primary-bin (3 files)" in err and "replica-bin (3 files)" in err
    assert "--series" in err and not out.exists()
    rc, doc, err, out = _mirror(tmp_path, "primary", both, "--series", "primary-bin")
    assert rc == 0 and doc is not None, err
    rc, _d, _e, ref = _mirror(tmp_path, "ref", FIXTURES / "mariadb-10.11" / "row-types-full-metadata" / "primary")
    assert _mirror_tables(out, doc["tables"]) == _mirror_tables(ref, doc["tables"])
    rc, _text, err, _out = _mirror(tmp_path, "none", both, "--series", "mariadb-bin")
    assert rc == 2 and "--series mariadb-bin: no file mariadb-bin.NNNNNN" in err and "primary-bin (3 files)" in err
    # one series from two folders (two copies, or two servers' series of one name): which to apply is not known
    other = tmp_path / "other"
    shutil.copytree(both, other)
    rc, _text, err, _out = _mirror(tmp_path, "two-folders", both, other, "--series", "primary-bin")
    assert rc == 2 and "primary-bin.000001 is given from several folders" in err
    # the change tables alone take every series (each change names its file)
    rc, _text, err = run("export", "-o", tmp_path / "parquet", both)
    assert rc == 0, err


# --- the rule itself, entry by entry -----------------------------------------------------------

def test_index_entries_are_the_files_of_their_names_in_the_index_folder(tmp_path):
    """Relative, absolute (naming an existing file in another folder), compressed twin and
    missing entries; an explicit file elsewhere is itself; order and duplicates do not matter."""
    from binlogkit.reading.files import expand_paths, read_index

    here, there = tmp_path / "copy", tmp_path / "live"
    here.mkdir()
    there.mkdir()
    for n in (1, 2, 3, 4):
        (there / f"b.{n:06d}").write_bytes(b"live")
    (here / "b.000001").write_bytes(b"copy")
    (here / "b.000002.xz").write_bytes(b"copy")
    (here / "b.000005").write_bytes(b"copy, not listed")
    (here / "b.index").write_text(f"./b.000001\n{there}/b.000002\n{there}/b.000003\n")
    listing = read_index(here / "b.index")
    assert listing.files == [here / "b.000001", here / "b.000002.xz", here / "b.000003"]   # .000003: missing
    assert listing.elsewhere and str(there) in listing.note() and "nothing outside it is opened" in listing.note()
    notes: list[str] = []
    assert expand_paths([here], notes=notes) == [here / "b.000001", here / "b.000002.xz", here / "b.000003",
                                                 here / "b.000005"]
    assert len(notes) == 2 and "does not list (b.000005...): read too" in notes[1]
    assert expand_paths([here / "b.index"]) == listing.files                            # the index given: its folder
    assert expand_paths([there / "b.000004", here / "b.index"])[-1] == there / "b.000004"   # named: itself
    assert expand_paths([here / "b.000002.xz", here / "b.000001", here / "b.000001", here / "." / "b.000001",
                         here]) == expand_paths([here])                                  # order, twice: one answer
    (here / "b.000001.xz").write_bytes(b"twin")
    assert expand_paths([here])[0] == here / "b.000001"                                  # a plain file and its twin: once


def test_an_object_store_prefix_is_read_as_the_copy_too(s3_server, tmp_path):
    """The same rule under an S3 prefix (storage.expand): the copied folder's objects, its
    index's absolute entries by name under the prefix, in binlog order."""
    from binlogkit.reading import storage

    src = FIXTURES / SERIES[0]
    copy, _orig = copy_with_absolute_index(src, tmp_path)
    s3_server.make_bucket("shapes")
    fs, _ = storage.filesystem("s3://shapes/x")
    for f in copy.iterdir():
        fs.put_file(str(f), f"shapes/copy/{f.name}")
    storage.forget()
    truth = seen_by_transactions([src], [])
    assert seen_by_transactions(["s3://shapes/copy/"], []) == truth
    assert seen_by_transactions(["s3://shapes/copy/mariadb-bin.index"], []) == truth
    assert seen_by_transactions([f"s3://shapes/copy/{f.name}" for f in reversed(logs(copy))], []) == truth

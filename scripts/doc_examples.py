"""Docs examples that cannot drift: run the commands shown in docs/*.md and compare (or rewrite).

A fenced block right after a line ``<!-- example: SETUP -->`` is an example: each line starting
with ``$ `` is a shell command, the lines after it (up to the next ``$ `` or the fence) its
output. The commands run with bash in a fresh folder prepared by SETUP (see ``SETUPS``), with
``binlogkit`` being this checkout's (``python -m binlogkit.cli``); stdout and stderr are shown
as a terminal would show them, then normalised (backup folder names carry a time and a random
part). ``--check`` (the test) exits 1 on any difference and prints it; ``--write`` rewrites the
blocks.

    python scripts/doc_examples.py --check        # what tests/test_docs.py runs
    python scripts/doc_examples.py --write        # after a change of output: refresh the docs
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures import store  # noqa: E402

MARK = re.compile(r"^<!-- example: (\S+) -->\s*$")
NORMALISE = [(re.compile(r"binlogkit-(recover|incident|flashback)-\d{8}T\d{6}Z-[0-9a-f]{6}"), r"binlogkit-\1-<time>-<random>"),
             (re.compile(r"(exported .* to \S+) in \d+\.\d s"), r"\1 in <seconds> s")]


def _relay(name: str):
    def setup(cwd: Path) -> None:
        shutil.copytree(store.materialize(name) / "relay", cwd / "data")
    return setup


def _binlogs(cwd: Path) -> None:
    d = cwd / "mysql"
    d.mkdir()
    src = store.materialize("replication-gtid") / "primary"
    for name in ("mariadb-bin.000015", "mariadb-bin.000016"):
        shutil.copy(src / name, d / name)
    (d / "mariadb-bin.index").write_text("./mariadb-bin.000015\n./mariadb-bin.000016\n")


def _archive(cwd: Path) -> None:
    """The replication-gtid primary's 16 binlogs (3 014 transactions), as an archive."""
    shutil.copytree(store.materialize("replication-gtid") / "primary", cwd / "archive")


def _primary(name: str):
    def setup(cwd: Path) -> None:
        shutil.copytree(store.materialize(name) / "primary", cwd / "binlogs")
    return setup


def _encrypted(cwd: Path) -> None:
    """A MariaDB AES_CBC set: the primary's encrypted binlogs and its key file (0600)."""
    src = ROOT / "fixtures" / "encrypted" / "mariadb-aes-cbc"
    shutil.copytree(src / "primary", cwd / "binlogs")
    shutil.copytree(src / "keys", cwd / "keys")
    for f in (cwd / "keys").iterdir():
        os.chmod(f, 0o600)


def _s3(cwd: Path):
    """A SeaweedFS S3 server (fixtures/lab/s3.py) with an empty bucket ``backups``, the
    replication-gtid archive on disk beside it, and the AWS variables pointing at the server in
    the block's environment: the commands shown need no endpoint or credentials of their own."""
    from fixtures.lab.s3 import SeaweedS3

    _archive(cwd)
    server = SeaweedS3(Path(tempfile.mkdtemp(prefix="binlogkit-doc-s3-"))).start()
    server.make_bucket("backups")
    return server


def _s3_uploaded(cwd: Path):
    """As ``s3``, with the archive already uploaded to s3://backups/db1/ (the first s3 example
    shows how)."""
    server = _s3(cwd)
    try:
        import botocore.session

        c = botocore.session.get_session().create_client("s3", **server.client_args())
        for f in sorted((cwd / "archive").iterdir()):
            c.put_object(Bucket="backups", Key=f"db1/{f.name}", Body=f.read_bytes())
    except BaseException:
        server.stop()
        raise
    return server


def _archive_schema(cwd: Path) -> None:
    """The archive and its tables' CREATE TABLE statements (the lab workload's schema)."""
    from fixtures.lab.workload import SCHEMA

    _archive(cwd)
    (cwd / "schema.sql").write_text(SCHEMA.lstrip())


def _damaged(cwd: Path) -> None:
    """``archive/``: binlogs 1-3 of replication-gtid gzipped, number 2 cut to two thirds; and
    ``pipe.000001``, a FIFO (docs/decode.md, "Inputs fail closed")."""
    import gzip

    d = cwd / "archive"
    d.mkdir()
    src = store.materialize("replication-gtid") / "primary"
    for n in (1, 2, 3):
        body = gzip.compress((src / f"mariadb-bin.{n:06d}").read_bytes(), mtime=0)
        (d / f"mariadb-bin.{n:06d}.gz").write_bytes(body[: len(body) * 2 // 3] if n == 2 else body)
    os.mkfifo(cwd / "pipe.000001")


def _mysql97_stopped(cwd: Path) -> None:
    """The last binlog of a stopped MySQL 9.7 primary (GTID mode) and its index."""
    shutil.copytree(ROOT / "fixtures" / "mysql-9.7" / "incident" / "stopped-primary", cwd / "mysql")


def _mysql97_relay(name: str):
    def setup(cwd: Path) -> None:
        shutil.copytree(ROOT / "fixtures" / "mysql-9.7" / name / "relay", cwd / "data")
    return setup


def _mysql97_keyring(cwd: Path) -> None:
    """binlog_encryption=ON binlogs of a MySQL 9.7 server and its component_keyring_file keyring."""
    src = ROOT / "fixtures" / "mysql-9.7" / "keyring-encrypted"
    shutil.copytree(src / "binlogs", cwd / "binlogs")
    shutil.copy(src / "keyring", cwd / "keyring")
    os.chmod(cwd / "keyring", 0o600)


def _checkout(cwd: Path) -> None:
    """``fixtures/``: the committed fixture sets, as a checkout has them (read-only: the examples
    copy what they change)."""
    (cwd / "fixtures").symlink_to(ROOT / "fixtures")


SETUPS = {
    "checkout": _checkout,
    "damaged-archive": _damaged,
    "s3": _s3,
    "s3-uploaded": _s3_uploaded,
    "archive": _archive,
    "archive-schema": _archive_schema,
    "row-types-full-metadata": _primary("row-types-full-metadata"),
    "encrypted-mariadb": _encrypted,
    "crash-rotation-small-position": _relay("crash-rotation-small-position"),
    "crash-partial-gtid": _relay("crash-partial-gtid"),
    "stopped-primary": _binlogs,
    "mysql-9.7-stopped-primary": _mysql97_stopped,
    "mysql-9.7-crash-partial-gtid": _mysql97_relay("crash-partial-gtid"),
    "mysql-9.7-keyring": _mysql97_keyring,
}


def run_block(setup: str, commands: list[str]) -> list[str]:
    bindir = Path(tempfile.mkdtemp(prefix="binlogkit-doc-bin-"))
    try:
        shim = bindir / "binlogkit"
        # a console script as pip writes one (pitr's command names `binlogkit` when it is this one)
        shim.write_text(f"#!{sys.executable}\nimport sys\nfrom binlogkit.cli import main\nsys.exit(main())\n")
        shim.chmod(0o755)
        (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this checkout's Python
        (bindir / "python").chmod(0o755)
        # `duckdb -c SQL` as the DuckDB CLI takes it, by the duckdb module of this Python (UTC)
        duck = bindir / "duckdb"
        duck.write_text(f"#!{sys.executable}\nimport sys\nimport duckdb\n"
                        "duckdb.sql(\"SET TimeZone = 'UTC'\")\nduckdb.sql(sys.argv[2]).show(max_width=100)\n")
        duck.chmod(0o755)
        with tempfile.TemporaryDirectory(prefix="binlogkit-doc-") as tmp, contextlib.ExitStack() as stack:
            cwd = Path(tmp)
            server = SETUPS[setup](cwd)  # a setup may start a server: it gives the block's env, stops after
            env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}", PYTHONPATH=str(ROOT),
                       COLUMNS="100")
            if server is not None:
                stack.callback(shutil.rmtree, server.base, ignore_errors=True)
                stack.callback(server.stop)
                env.update(server.env())
            out: list[str] = []
            for cmd in commands:
                res = subprocess.run(["bash", "-c", cmd + " 2>&1"], cwd=cwd, env=env, capture_output=True,
                                     text=True, timeout=120)
                text = res.stdout.replace(f"{os.path.realpath(cwd)}/", "").replace(f"{cwd}/", "")
                for pat, rep in NORMALISE:
                    text = pat.sub(rep, text)
                out.append(f"$ {cmd}")
                out += text.rstrip("\n").split("\n") if text.strip() else []
            return out
    finally:
        shutil.rmtree(bindir, ignore_errors=True)


def process(path: Path, write: bool) -> list[str]:
    lines = path.read_text().split("\n")
    diffs: list[str] = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        if start >= len(lines) or not lines[start].startswith("```"):
            diffs.append(f"{path}:{i + 1}: an example mark must stand right before a fenced block")
            i += 1
            continue
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        body = lines[start + 1:end]
        commands = [l[2:] for l in body if l.startswith("$ ")]
        got = run_block(m.group(1), commands)
        if got != body:
            diffs += [f"{path}:{start + 2}: example differs from what the commands print now:"]
            diffs += list(difflib.unified_diff(body, got, "docs", "now", lineterm="", n=1))
            lines[start + 1:end] = got
            end = start + 1 + len(got)
        i = end + 1
    if write and diffs:
        path.write_text("\n".join(lines))
    return diffs


def doc_files() -> list[Path]:
    """Every page of the docs (docs/ and its folders) and the README."""
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    files = args.files or doc_files()
    diffs = []
    for f in files:
        diffs += process(f, args.write)
    for d in diffs:
        print(d)
    if args.write:
        print(f"{len([d for d in diffs if d.endswith('now:')])} example(s) rewritten")
        return 0
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

"""Replay equality on real servers (issue 31), bounded for CI: ``fixtures/lab/replay_campaign.py``
with a small workload (every column type, DDL, statement/mixed/row formats with user variables,
RAND() and auto-increment, a multi-statement transaction, XA, compressed transactions, tagged
GTIDs or a second domain, a 1 MB transaction) on one encrypted source per kind, dumped at a known
position; one target per kind, restored from the dump before each replay.

* every replayer's output piped into the kind's client gives the source's ``CHECKSUM TABLE`` and
  ``COUNT(*)`` of every table and its GTID state (MySQL ``gtid_executed``; MariaDB
  ``gtid_binlog_pos`` and ``gtid_current_pos``): the server's own tool on the plain copies the
  server decrypts (``--read-from-remote-server --raw``), ``binlogkit decode`` on those, on the
  encrypted files (key options) and on ``.xz`` copies of them in a SeaweedFS bucket (``s3://``);
* binlogkit's replay gives the server the tool's replay gives (same state);
* binlogkit writes nothing to its TMPDIR, and no file outside the servers' own folders holds the
  workload's sentinel text after a binlogkit replay (no decrypted or decompressed copy);
* ``binlogkit pitr --backup-info DUMP --until-gtid STATE`` on the encrypted bucket prints a
  ``binlogkit decode … | client`` line that, run as printed by bash, gives the same server;
* the dump alone does not (the comparison can fail).

A replay that fails only because of a bug in ``decode``'s replayable output is a strict xfail
naming the bug (``KNOWN``): it fails the day the bug is fixed, and the mark goes.
``make replay-proof`` runs the bigger campaign.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from fixtures.lab import Lab
from fixtures.lab import replay_campaign as rc

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("mariadb-10.11", "mysql-9.7", "mariadb-11.8")
REPLAYERS = ("tool-plain", "binlogkit-plain", "binlogkit-encrypted", "binlogkit-s3-xz")

KNOWN = rc.KNOWN  # bugs found by this campaign and not fixed yet (the reader's: binlogkit/reading/)


@pytest.fixture(scope="module", params=[pytest.param(k, marks=pytest.mark.kind(k), id=k) for k in KINDS])
def campaign(request, s3_server):
    if not rc.binlogkit_replayable():
        pytest.fail("decode has no --base64-output: this checkout's decode is not replayable")
    with Lab(kind=request.param) as lab:
        src = rc.build_source(lab, small=60, big_mb=1.0)
        assert len(src.names) >= 2  # the replay crosses a Rotate
        rc.upload(s3_server, src, "archive", lab.kind.name)
        target = lab.server("target", 1, **rc.FLAVORS[lab.kind.flavor].server_options).start()
        yield {"lab": lab, "src": src, "target": target, "states": {}}


def _xfail_known(request, kind: str, what: str) -> None:
    reason = KNOWN.get((kind, what))
    if reason:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))


def test_the_dump_alone_is_not_the_source(campaign):
    rc.restore(campaign["target"], campaign["src"])
    assert rc.diff(campaign["src"].truth, rc.state(campaign["target"]))


def test_the_plaintext_check_finds_a_plain_copy_and_only_that(campaign):
    """What the no-copy check looks for is in every plain copy, in no encrypted or .xz file."""
    src, needle = campaign["src"], rc.SENTINEL.encode()
    assert len(rc.plaintext_copies([src.archives["plain"]], 0, needle)) >= 1
    assert rc.plaintext_copies([src.archives["encrypted"], src.archives["xz"]], 0, needle) == []


@pytest.mark.parametrize("replayer", REPLAYERS)
def test_replay_gives_the_source(campaign, replayer, request):
    lab, src, target = campaign["lab"], campaign["src"], campaign["target"]
    _xfail_known(request, lab.kind.name, replayer)
    r = rc.REPLAYERS[replayer]
    where = f"s3://archive/{lab.kind.name}/xz" if r.archive == "s3xz" else str(src.archives[r.archive])
    res = rc.replay(target, src, r, where, env=dict(os.environ), watch=[lab.work, Path(tempfile.gettempdir())])
    assert res["producer_exit"] == 0, res["producer_stderr"]
    assert res["client_exit"] == 0, res["client_stderr"]
    assert res["diff"] == []
    assert res["tmp_files"] == [] and res["plaintext_on_disk"] == []
    got = rc.state(target)
    campaign["states"][replayer] = got
    if r.binlogkit and "tool-plain" in campaign["states"]:
        assert got == campaign["states"]["tool-plain"]  # the server's tool's replay gives the same server


def _client_bin(tmp: Path, target) -> dict:
    """A PATH whose ``mariadb`` / ``mysql`` is the kind's client on ``target`` (a chroot's runs
    there) and whose ``binlogkit`` is this checkout's: the printed command runs as printed."""
    bindir = tmp / "bin"
    bindir.mkdir()
    client = " ".join(map(shlex.quote, rc.client_argv(target)))
    for name in ("mariadb", "mysql"):
        (bindir / name).write_text(f"#!/bin/sh\nexec {client} \"$@\"\n")
        (bindir / name).chmod(0o755)
    (bindir / "binlogkit").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m binlogkit.cli \"$@\"\n")
    (bindir / "binlogkit").chmod(0o755)
    return dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT), TZ="UTC")


def test_pitr_plan_replays_the_encrypted_bucket(campaign, tmp_path, request):
    """pitr's own command, from the encrypted files' .xz copies in the bucket, run as printed."""
    import subprocess

    lab, src, target = campaign["lab"], campaign["src"], campaign["target"]
    _xfail_known(request, lab.kind.name, "pitr")
    dump = tmp_path / "dump.sql"
    dump.write_bytes(src.dump)
    want = src.truth["gtids"][rc.FLAVORS[lab.kind.flavor].gtid_vars[0]]
    res = CliRunner().invoke(main, ["pitr", "--json", "--backup-info", str(dump), "--until-gtid", want,
                                    *src.key_args, f"s3://archive/{lab.kind.name}/xz/"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.output)
    assert plan["reachable"] and plan["problems"] == [] and plan["tool_command"] is None
    assert plan["command"].startswith("binlogkit decode --key") and "s3://" in plan["command"]
    rc.restore(target, src)
    env = _client_bin(tmp_path, target)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(["bash", "-o", "pipefail", "-c", plan["command"]], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert rc.diff(src.truth, rc.state(target)) == []
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.kind(k), id=k)
                                  for k in ("mariadb-10.11", "mariadb-11.8")])
@pytest.mark.parametrize("replayer", ["tool", "binlogkit"])
def test_two_phase_alter_whose_start_seq_no_ends_in_byte_4(kind, replayer):
    """Found by the campaign (its ROLLBACK ALTER fell on seq_no 260 = 0x104 with a larger
    workload): START ALTER at seq_no 260, COMMIT ALTER and ROLLBACK ALTER naming it. The
    8-byte sa_seq_no after Q_GTID_FLAGS3 was not skipped, so its low byte 4 read as
    Q_CHARSET_CODE (`character_set_client=big5`, ERROR 1273 on replay)."""
    with Lab(kind=kind) as lab:
        p = lab.server("source", 1).start()
        p.execute("CREATE DATABASE lab", "CREATE TABLE lab.alt (id INT PRIMARY KEY, a INT) ENGINE=InnoDB",
                  "INSERT INTO lab.alt VALUES (1, 1), (2, 1)")
        rc._run(p, ("SET SESSION binlog_alter_two_phase=ON", "SET SESSION gtid_seq_no=260",
                    "ALTER TABLE lab.alt ADD COLUMN b VARCHAR(10) DEFAULT 'b'",
                    "SET SESSION gtid_seq_no=516", "ALTER TABLE lab.alt ADD UNIQUE KEY ua (a)"), tolerate=(1062,))
        p.execute("INSERT INTO lab.alt (id, a) VALUES (3, 3)", "FLUSH BINARY LOGS")
        names = [r["Log_name"] for r in p.query("SHOW BINARY LOGS")][:-1]
        archive = lab.work / "archive"
        archive.mkdir()
        for n in names:
            shutil.copy(p.datadir / n, archive / n)
        t = lab.server("target", 1).start()
        k = lab.kind
        producer = ([*rc.BINLOGKIT, "decode", *(str(archive / n) for n in names)] if replayer == "binlogkit" else
                    k.argv(k.binary(k.binlog_tool), *(k.inner(archive / n) for n in names)))
        res = rc.pipe(producer, rc.client_argv(t), env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert res["producer_exit"] == 0, res["producer_stderr"]
        assert res["client_exit"] == 0, res["client_stderr"]
        assert t.query("SHOW CREATE TABLE lab.alt") == p.query("SHOW CREATE TABLE lab.alt")
        assert t.var("gtid_binlog_pos") == p.var("gtid_binlog_pos")

"""The CLI's shared options (binlogkit/cli/options.py): one name per concept on every command,
old spellings kept as aliases; one table from error class to exit code (cli/exits.py); the
Spark jobs' argv parsed into the options objects the CLI builds."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.cli.exits import EXIT_DAMAGED, EXIT_PARTIAL, EXIT_USAGE, exit_code, message
from binlogkit.errors import (ChecksumError, KeyRequiredError, PartialWrite, TruncatedEventError, UsageError,
                              WriteRefused)
from fixtures import store

READERS = ["decode", "verify", "gtids", "transactions", "audit", "pitr", "flashback", "export"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("command", READERS)
def test_every_reading_command_names_its_inputs_the_same(command):
    assert f"Usage: main {command} [OPTIONS] INPUTS..." in run(command, "--help").output


@pytest.mark.parametrize("command,options", [
    ("decode", ["--include-gtids", "--exclude-gtids", "--start-position", "--stop-position", "--start-datetime",
                "--stop-datetime", "--json"]),
    ("transactions", ["--include-gtids, --gtids", "--exclude-gtids", "--json"]),
    ("flashback", ["-o, --output", "--include-gtids", "--database", "--table", "--start-position",
                   "--start-datetime"]),
    ("export", ["-o, --output", "--include-gtids", "--database", "--table, --tables", "--start-datetime"]),
    ("audit", ["-o, --output", "--json", "--jobs"]),
    ("pull", ["-o, --output, --dir"]),
    ("recover", ["--former-primary, --binlog"]),
])
def test_shared_options_and_their_aliases(command, options):
    out = run(command, "--help").output
    for o in options:
        assert o in out, (command, o)


def test_transactions_gtid_filters():
    src = store.materialize("replication-gtid") / "primary"
    gtids = lambda *a: [json.loads(line)["gtid"] for line in run("transactions", "--json", *a, src).output.splitlines()]
    assert gtids("--gtids", "0-1-10..12") == gtids("--include-gtids", "0-1-10..12") == ["0-1-10", "0-1-11", "0-1-12"]
    assert gtids("--include-gtids", "0-1-10..12", "--exclude-gtids", "0-1-11") == ["0-1-10", "0-1-12"]
    every = gtids()
    assert gtids("--exclude-gtids", "0-1-10..12") == [g for g in every if g not in ("0-1-10", "0-1-11", "0-1-12")]


def test_export_table_and_database_filters(tmp_path):
    pytest.importorskip("pyarrow")
    src = store.materialize("row-types-full-metadata") / "primary"
    old = json.loads(run("export", src, "--output", tmp_path / "a", "--tables", "types.int*", "--json").output)
    new = json.loads(run("export", src, "-o", tmp_path / "b", "--table", "types.int*", "--json").output)
    assert list(old["tables"]) == list(new["tables"]) == ["types.ints"]
    db = json.loads(run("export", src, "-o", tmp_path / "c", "--database", "types", "--json").output)
    assert db["tables"] and all(t.startswith("types.") for t in db["tables"])
    none = json.loads(run("export", src, "-o", tmp_path / "d", "--database", "nosuchdb", "--json").output)
    assert none["tables"] == {}


def test_audit_short_output_option(tmp_path):
    src = store.materialize("replication-gtid") / "primary"
    res = run("audit", src, "-o", tmp_path / "out")
    assert res.exit_code == 0 and (tmp_path / "out" / "findings.json").exists()
    assert (tmp_path / "out" / "summary.json").exists()


def test_one_table_from_error_class_to_exit_code():
    assert exit_code(TruncatedEventError("torn")) == exit_code(ChecksumError("crc")) == EXIT_DAMAGED
    assert exit_code(ChecksumError("crc"), damaged=EXIT_USAGE) == EXIT_USAGE  # a command may call damage usage
    assert exit_code(KeyRequiredError("no key")) == exit_code(UsageError("no log")) == EXIT_USAGE
    assert exit_code(PartialWrite("half")) == EXIT_PARTIAL
    assert exit_code(WriteRefused("busy")) == EXIT_USAGE and message(WriteRefused("busy")) == "refused: busy"
    from binlogkit.flashback.plan import FlashbackRefused

    assert message(FlashbackRefused("no")) == "refused: no"


def test_audit_job_parses_argv_into_the_options_the_cli_builds():
    from binlogkit.spark.jobs.audit import AuditOptions, parse

    assert parse(["a", "b", "-o", "out", "--may-be-active", "--max-findings", "5", "--json"]) == AuditOptions(
        ("a", "b"), output="out", as_json=True, live=True, max_findings=5)


def test_export_job_parses_argv_into_typed_options(tmp_path):
    from binlogkit.spark.jobs.export import ExportOptions, parse

    opts = parse(["arc", "-o", "out", "--tables", "a.b,c.*", "--table", "d.e", "--database", "f",
                  "--start-datetime", "2024-01-01 00:00:00"])
    assert opts == ExportOptions(("arc",), "out", ("a.b", "c.*", "d.e", "f.*"), "2024-01-01T00:00:00+00:00")
    with pytest.raises(ValueError, match="not both"):
        parse(["arc", "-o", "out", "--include-gtids", "0-1-1", "--stop-datetime", "2024-01-01"])


def test_transactions_time_filters():
    src = store.materialize("replication-gtid") / "primary"
    rows = lambda *a: [json.loads(line) for line in run("transactions", "--json", *a, src).output.splitlines()]
    every = rows()
    stamps = sorted({t["first_timestamp"] for t in every})
    assert len(stamps) > 1
    from datetime import datetime, timezone

    mid = datetime.fromtimestamp(stamps[len(stamps) // 2], timezone.utc).isoformat()
    later, earlier = rows("--start-datetime", mid), rows("--stop-datetime", mid)
    assert later and earlier and len(later) + len(earlier) == len(every)
    assert all(t["first_timestamp"] >= stamps[len(stamps) // 2] for t in later)
    assert all(t["first_timestamp"] < stamps[len(stamps) // 2] for t in earlier)


def test_export_exclude_gtids(tmp_path):
    pytest.importorskip("pyarrow")
    src = store.materialize("row-types-full-metadata") / "primary"
    every = json.loads(run("export", src, "-o", tmp_path / "a", "--json").output)
    one = json.loads(run("export", src, "-o", tmp_path / "b", "--include-gtids", "0-1-8", "--json").output)
    rest = json.loads(run("export", src, "-o", tmp_path / "c", "--exclude-gtids", "0-1-8", "--json").output)
    assert one["transactions"] == 1 and rest["transactions"] == every["transactions"] - 1
    assert rest["filtered_out"] == every["filtered_out"] + 1


def test_key_options_hand_the_command_inputs_with_their_keys(tmp_path):
    """The named path arguments reach the command as ``Input`` values read with the loaded keys
    (a tuple argument as a tuple, an option not given as None); the command gets no ``keys``."""
    import click

    from binlogkit.cli.options import key_options
    from binlogkit.reading.source import Input

    got = {}

    @click.command()
    @click.argument("inputs", nargs=-1)
    @click.option("--beside")
    @click.option("--other")
    @key_options("inputs", "beside", "other")
    def cmd(**kw):
        got.update(kw)

    key = bytes(range(16))
    kf = tmp_path / "keys.txt"
    kf.write_text("1;" + key.hex() + "\n")
    kf.chmod(0o600)
    res = CliRunner().invoke(cmd, ["a.000001", "b.000001", "--beside", "dir", "--key-file", str(kf)])
    assert res.exit_code == 0, res.output
    assert set(got) == {"inputs", "beside", "other"} and got["other"] is None
    assert [i.name for i in got["inputs"]] == ["a.000001", "b.000001"] and got["beside"].name == "dir"
    assert all(isinstance(i, Input) and i.loaded_keys().mariadb_key(1, 1) == key
               for i in [*got["inputs"], got["beside"]])
    got.clear()
    assert CliRunner().invoke(cmd, ["a.000001"], env={"BINLOGKIT_KEY_FILE": ""}).exit_code == 0
    assert got["inputs"] == (Input("a.000001"),)

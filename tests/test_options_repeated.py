"""An option given more than once (cli/options.py, ``Command``): collected where several make
sense, refused otherwise (exit 2, one line naming it) — never the last value kept and the others
dropped, as click alone does (``flashback --table shop.t --table shop.v`` undid shop.v only).

The walk reads the click declarations of every command of the group, so an option added later
is covered as it is declared: each option that takes one value is given twice with two different
values click takes, a flag with its negation, a flag twice; each collected option must have a
behaviour test here (``COLLECTED``) that shows every value taking effect, on real fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from binlogkit.cli import main
from binlogkit.cli.options import COLLECTED as SAYS_COLLECTED, Command, Repeated
from fixtures import store

ROOT = Path(__file__).resolve().parent.parent

# every collected option (command, parameter) -> the test below that shows each value taking effect
COLLECTED = {
    ("decode", "include_gtids"): "test_decode_gtid_filters_given_twice",
    ("decode", "exclude_gtids"): "test_decode_gtid_filters_given_twice",
    ("decode", "database"): "test_decode_database_given_twice",
    ("decode", "types"): "test_decode_type_given_twice",
    ("decode", "rewrite_db"): "test_decode_rewrite_db_given_twice",
    ("decode", "column_types"): "test_rowvalues.py::test_geometry_json_uuid_inet6_binary_and_wide_rows_equal_select (two --column-type)",
    ("transactions", "include_gtids"): "test_transactions_gtid_filters_given_twice",
    ("transactions", "exclude_gtids"): "test_transactions_gtid_filters_given_twice",
    ("flashback", "include_gtids"): "test_flashback_include_gtids_given_twice",
    ("flashback", "database"): "test_flashback_database_given_twice",
    ("flashback", "table"): "test_flashback_undoes_every_table_given",
    ("flashback", "generated"): "test_flashback_replay.py::test_sql_with_generated_columns_on_mysql_stops_before_any_change_then_restores",
    ("export", "include_gtids"): "test_export_gtid_filters_given_twice",
    ("export", "exclude_gtids"): "test_export_gtid_filters_given_twice",
    ("export", "database"): "test_export_database_given_twice",
    ("export", "tables"): "test_export_table_given_twice",
    ("export", "schema_file"): "test_export_schema_given_twice",
}


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    """(words, command) of every command and subcommand of ``group``."""
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


COMMANDS = list(_commands(main))
OPTIONS = [(words, cmd, p) for words, cmd in COMMANDS for p in cmd.params if isinstance(p, click.Option)]


def _path(t: click.Path, tmp: Path, tag: str) -> str:
    """A path ``t`` takes: an existing file or folder when it must exist, else a new one."""
    if t.exists:
        if not t.file_okay:
            (tmp / f"{tag}-dir").mkdir(exist_ok=True)
            return str(tmp / f"{tag}-dir")
        (tmp / f"{tag}.file").write_bytes(b"x")
        return str(tmp / f"{tag}.file")
    return str(tmp / (f"{tag}-newdir" if not t.file_okay else f"{tag}.new"))


def _two(p: click.Parameter, tmp: Path) -> tuple[str, str]:
    """Two different values click takes for ``p``."""
    t = p.type
    if isinstance(t, click.Choice):
        choices = [str(c) for c in t.choices]
        return choices[0], choices[1 % len(choices)]
    if isinstance(t, click.types.IntParamType):
        return "8", "120"
    if isinstance(t, click.types.FloatParamType):
        return "1.5", "2.5"
    if isinstance(t, click.Path):
        return _path(t, tmp, "one"), _path(t, tmp, "two")
    return "first-value", "second-value"


def _line(cmd: click.Command, tmp: Path, but: click.Parameter | None = None) -> list[str]:
    """The arguments and required options of ``cmd`` (except ``but``), with values click takes."""
    args: list[str] = []
    for p in cmd.params:
        if p is but:
            continue
        if isinstance(p, click.Argument):
            args.append(_two(p, tmp)[0])
        elif isinstance(p, click.Option) and p.required:
            args += [p.opts[0], _two(p, tmp)[0]]
    return args


def _parse(cmd: click.Command, name: str, args: list[str]) -> click.Context:
    """click's parse of the line, the command not run."""
    return cmd.make_context(name, list(args))


def _invoke(words, args) -> tuple[int, str]:
    r = CliRunner().invoke(main, [*words, *args], env={"BINLOGKIT_KEY_FILE": None, "BINLOGKIT_KEY_FILE_SECRET": None})
    return r.exit_code, r.output


def _id(item) -> str:
    words, _cmd, p = item
    return f"{' '.join(words)} {p.opts[0]}"


def test_every_command_has_the_rule():
    assert COMMANDS and all(isinstance(cmd, Command) for _w, cmd in COMMANDS), \
        [w for w, cmd in COMMANDS if not isinstance(cmd, Command)]


@pytest.mark.parametrize("item", [o for o in OPTIONS if not o[2].is_flag and not o[2].multiple and not o[2].count],
                         ids=_id)
def test_an_option_of_one_value_given_twice_is_refused(item, tmp_path):
    words, cmd, p = item
    one, two = _two(p, tmp_path)
    args = [*_line(cmd, tmp_path, but=p), p.opts[0], one, p.opts[-1], two]   # both spellings, when it has two
    with pytest.raises(Repeated):     # refused at the parse: the command never runs
        _parse(cmd, words[-1], args)
    code, out = _invoke(words, args)
    assert code == 2, out
    line = out.strip()
    assert "\n" not in line and line.startswith("binlogkit: error: "), out
    assert p.opts[0] in line and "given twice" in line and one in line and two in line, line
    # given once, the same line is not refused (a value click checks further may still be refused
    # for what it is: not this rule's business)
    try:
        _parse(cmd, words[-1], [*_line(cmd, tmp_path, but=p), p.opts[0], one])
    except Repeated:
        raise
    except click.ClickException:
        pass


@pytest.mark.parametrize("item", [o for o in OPTIONS if o[2].is_flag and o[2].secondary_opts], ids=_id)
def test_a_flag_and_its_negation_both_given_are_refused(item, tmp_path):
    words, cmd, p = item
    args = [*_line(cmd, tmp_path), p.opts[0], p.secondary_opts[0]]
    with pytest.raises(Repeated):
        _parse(cmd, words[-1], args)
    code, out = _invoke(words, args)
    assert code == 2 and "\n" not in out.strip(), out
    assert p.opts[0] in out and p.secondary_opts[0] in out and "both given" in out, out
    assert _parse(cmd, words[-1], [*_line(cmd, tmp_path), p.opts[0], p.opts[0]]).params[p.name] is True


@pytest.mark.parametrize("item", [o for o in OPTIONS if o[2].is_flag and not o[2].secondary_opts], ids=_id)
def test_a_flag_given_twice_is_the_same_flag(item, tmp_path):
    words, cmd, p = item
    ctx = _parse(cmd, words[-1], [*_line(cmd, tmp_path), p.opts[0], p.opts[-1]])
    assert ctx.params[p.name] == _parse(cmd, words[-1], [*_line(cmd, tmp_path), p.opts[0]]).params[p.name]


@pytest.mark.parametrize("item", [o for o in OPTIONS if o[2].multiple], ids=_id)
def test_a_collected_option_takes_every_value_and_says_so(item, tmp_path):
    words, cmd, p = item
    assert (" ".join(words), p.name) in COLLECTED, \
        f"{' '.join(words)} {p.opts[0]} is collected: add a test that every value takes effect, and list it"
    assert SAYS_COLLECTED in (p.help or ""), p.help
    one, two = _two(p, tmp_path)
    if p.name in ("include_gtids", "exclude_gtids"):
        one, two = "0-1-5", "0-1-7..9"
    got = _parse(cmd, words[-1], [*_line(cmd, tmp_path, but=p), p.opts[0], one, p.opts[-1], two]).params[p.name]
    assert one in got and two in got, got


def test_the_refusal_comes_before_the_values_are_checked_and_after_help(tmp_path):
    decode = main.commands["decode"]
    code, out = _invoke(["decode"], [*_line(decode, tmp_path), "--start-position", "x", "--start-position", "5"])
    assert code == 2 and out == "binlogkit: error: --start-position given twice (x, 5): give it once\n", out
    code, out = _invoke(["decode"], [*_line(decode, tmp_path), "--start-position", "1", "--start-position", "5",
                                     "--help"])
    assert code == 0 and out.startswith("Usage: "), out
    code, out = _invoke(["decode"], [*_line(decode, tmp_path), "--start-position"])   # click's own errors stay
    assert code == 2 and "requires an argument" in out, out


def test_the_count_option_counts(tmp_path):
    decode = main.commands["decode"]
    assert _parse(decode, "decode", [*_line(decode, tmp_path), "-v", "-v"]).params["verbose"] == 2


def test_pulls_lean_start_refuses_as_click(tmp_path):
    """A plain ``binlogkit pull`` is parsed without click (cli/entry.py); an option given twice
    goes to click, which refuses it before connecting."""
    r = subprocess.run([sys.executable, "-m", "binlogkit.cli", "pull", "--server-id", "1", "--dir", str(tmp_path / "d"),
                        "--port", "1", "--port", "2", "--until-end"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and r.stderr == "binlogkit: error: --port given twice (1, 2): give it once\n", r.stderr
    assert not (tmp_path / "d").exists()


# -- each collected option: every value takes effect ---------------------------------------------

def run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r


@pytest.fixture(scope="module")
def fm() -> Path:
    """row-types-full-metadata (MariaDB 10.11): 0-1-8..13 inserts, 0-1-19..42 FULL updates and
    deletes of the tables of ``types``; DDL in 0-1-1..7 and 0-1-14..18."""
    return store.materialize("row-types-full-metadata") / "primary"


@pytest.fixture(scope="module")
def rg() -> Path:
    return store.materialize("replication-gtid") / "primary"


def _undo_tables(path: Path) -> dict[str, int]:
    """Rows per table of the undo binlog at ``path``."""
    from binlogkit.api import decode_files
    from binlogkit.flashback.invert import ROWS_TYPES

    out: dict[str, int] = {}
    for ev in decode_files([path], rows=True):
        if ev.raw.type_code in ROWS_TYPES:
            name = f"{ev.table.db}.{ev.table.name}"
            out[name] = out.get(name, 0) + len(ev.rows)
    return out


def _flashback(fm: Path, out: Path, *args):
    return run("flashback", fm, "-o", out, "--include-gtids", "0-1-8..42", "--skip-statements", "--json", *args)


def test_flashback_undoes_every_table_given(fm, tmp_path):
    one = {t: _flashback(fm, tmp_path / f"{t}.bin", "--table", f"types.{t}") for t in ("ints", "nums")}
    assert all(r.exit_code == 0 for r in one.values()), [r.output for r in one.values()]
    both = _flashback(fm, tmp_path / "both.bin", "--table", "types.ints", "--table", "types.nums")
    assert both.exit_code == 0, both.output
    rows = {**_undo_tables(tmp_path / "ints.bin"), **_undo_tables(tmp_path / "nums.bin")}
    assert set(rows) == {"types.ints", "types.nums"}
    assert _undo_tables(tmp_path / "both.bin") == rows     # both tables undone, every row of each
    summary = json.loads(both.output.splitlines()[0])
    assert summary["undone"] == json.loads(one["ints"].output.splitlines()[0])["undone"] + \
        json.loads(one["nums"].output.splitlines()[0])["undone"]
    listed = _flashback(fm, tmp_path / "listed.bin", "--tables", "types.ints,types.nums")
    assert listed.exit_code == 0 and _undo_tables(tmp_path / "listed.bin") == rows
    wild = _flashback(fm, tmp_path / "wild.bin", "--table", "types.int*", "--table", "types.num?")
    assert wild.exit_code == 0 and _undo_tables(tmp_path / "wild.bin") == rows
    bad = _flashback(fm, tmp_path / "bad.bin", "--table", "types.ints", "--table", "nums")
    assert bad.exit_code == 2 and "'nums'" in bad.output and not (tmp_path / "bad.bin").exists()


def test_flashback_database_given_twice(fm, tmp_path):
    alone = _flashback(fm, tmp_path / "a.bin", "--database", "types")
    assert alone.exit_code == 0, alone.output
    for order in (("types", "nosuch"), ("nosuch", "types")):
        r = _flashback(fm, tmp_path / f"{order[0]}.bin", "--database", order[0], "--database", order[1])
        assert r.exit_code == 0, r.output
        assert (tmp_path / f"{order[0]}.bin").read_bytes() == (tmp_path / "a.bin").read_bytes()
    # with --table: a table of one of the databases, and one of the tables
    r = _flashback(fm, tmp_path / "t.bin", "--database", "nosuch", "--database", "types", "--table", "types.ints")
    assert r.exit_code == 0 and set(_undo_tables(tmp_path / "t.bin")) == {"types.ints"}


def test_flashback_include_gtids_given_twice(fm, tmp_path):
    def undo(*gtids):
        out = tmp_path / f"{len(list(tmp_path.iterdir()))}.bin"
        r = run("flashback", fm, "-o", out, "--skip-statements", "--json",
                *[w for g in gtids for w in ("--include-gtids", g)])
        assert r.exit_code == 0, r.output
        return json.loads(r.output.splitlines()[0])
    a, b = undo("0-1-8..9"), undo("0-1-40..42")
    both = undo("0-1-8..9", "0-1-40..42")
    assert both["undone"] == a["undone"] + b["undone"] and both["undone"] < undo("0-1-8..42")["undone"]
    assert (both["first_gtid"], both["last_gtid"]) == (a["first_gtid"], b["last_gtid"])


def _listed_gtids(*args) -> list[str]:
    r = run("decode", "--json", *args)
    assert r.exit_code == 0, r.output
    return [e["fields"]["gtid"] for e in map(json.loads, r.output.splitlines())
            if e["type"] in ("GTID_EVENT", "GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT") and "gtid" in e.get("fields", {})]


def test_decode_gtid_filters_given_twice(rg):
    every = _listed_gtids(rg)
    assert len(every) > 20
    a, b = every[3], every[10]
    assert _listed_gtids(rg, "--include-gtids", a, "--include-gtids", b) == [a, b]
    assert _listed_gtids(rg, "--exclude-gtids", a, "--exclude-gtids", b) == [g for g in every if g not in (a, b)]
    # the replayable output too: both GTIDs' transactions
    r = run("decode", "--include-gtids", a, "--include-gtids", b, rg)
    assert r.exit_code == 0 and f"GTID {a}" in r.output and f"GTID {b}" in r.output, r.output[-2000:]


def test_transactions_gtid_filters_given_twice(rg):
    def gtids(*a):
        r = run("transactions", "--json", *a, rg)
        assert r.exit_code == 0, r.output
        return [json.loads(line)["gtid"] for line in r.output.splitlines()]
    every = gtids()
    assert gtids("--include-gtids", "0-1-10", "--gtids", "0-1-12..13") == ["0-1-10", "0-1-12", "0-1-13"]
    assert gtids("--exclude-gtids", "0-1-10", "--exclude-gtids", "0-1-12") == \
        [g for g in every if g not in ("0-1-10", "0-1-12")]


def test_decode_database_given_twice(fm):
    """Replayable output: statements and row events of any of the databases."""
    def replay(*a):
        r = run("decode", *a, fm)
        assert r.exit_code in (0, 1), r.output
        return r.output
    alone, none = replay("-d", "types"), replay("-d", "nosuch")
    assert alone != none and "types" in alone
    assert replay("-d", "types", "-d", "nosuch") == replay("--database", "nosuch", "-d", "types") == alone


def test_decode_type_given_twice(fm):
    def types(*a):
        r = run("decode", "--json", *a, fm)
        assert r.exit_code == 0, r.output
        return [json.loads(line)["type"] for line in r.output.splitlines()]
    both = types("--type", "Gtid", "--type", "Xid")
    assert set(both) == {"GTID_EVENT", "XID_EVENT"} and both == types("--type", "Gtid,Xid")


def test_decode_rewrite_db_given_twice(fm, rg):
    r = run("decode", "--rewrite-db", "types->t2", "--rewrite-db", "lab->l2", fm, rg)
    assert r.exit_code in (0, 1), r.output
    assert "Table_map: `t2`.`ints`" in r.output and "Table_map: `l2`.`small`" in r.output
    assert "Table_map: `types`." not in r.output and "Table_map: `lab`." not in r.output


def _export(*args):
    r = run("export", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_export_database_given_twice(fm, tmp_path):
    pytest.importorskip("pyarrow")
    alone = _export(fm, "-o", tmp_path / "a", "--database", "types")
    assert alone["tables"]
    for i, order in enumerate((("types", "nosuch"), ("nosuch", "types"))):
        got = _export(fm, "-o", tmp_path / f"b{i}", "--database", order[0], "--database", order[1])
        assert got["tables"] == alone["tables"]


def test_export_table_given_twice(fm, tmp_path):
    pytest.importorskip("pyarrow")
    got = _export(fm, "-o", tmp_path / "a", "--table", "types.ints", "--table", "types.nums")
    assert sorted(got["tables"]) == ["types.ints", "types.nums"]


def test_export_gtid_filters_given_twice(rg, tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.dataset as ds

    def exported(out, *a):
        _export(rg, "-o", out, *a)
        return sorted({r["gtid"] for r in ds.dataset(str(out / "db=lab"), format="parquet",
                                                    partitioning="hive").to_table(columns=["gtid"]).to_pylist()})
    every = exported(tmp_path / "all")
    a, b = every[2], every[7]
    assert exported(tmp_path / "inc", "--include-gtids", a, "--include-gtids", b) == [a, b]
    assert exported(tmp_path / "exc", "--exclude-gtids", a, "--exclude-gtids", b) == \
        [g for g in every if g not in (a, b)]


def test_export_schema_given_twice(tmp_path):
    """Two --schema files (say one dump per table): the names and types of both are used; one
    table defined differently in two files is refused."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("sqlglot")
    import pyarrow.dataset as ds
    from fixtures.lab.build import TYPES_SCHEMA

    src = store.materialize("row-types") / "primary"        # binlog_row_metadata=MINIMAL: no names
    ints, strs = (next(s for s in TYPES_SCHEMA if s.startswith(f"CREATE TABLE types.{t} ")) for t in ("ints", "strs"))
    (tmp_path / "ints.sql").write_text(ints + ";\n")
    (tmp_path / "strs.sql").write_text(strs + ";\n")
    _export(src, "-o", tmp_path / "out", "--schema", tmp_path / "ints.sql", "--schema", tmp_path / "strs.sql")

    def schema(table):
        return ds.dataset(str(tmp_path / "out" / "db=types" / f"table={table}"), format="parquet",
                          partitioning="hive").schema
    assert str(schema("ints").field("after_tu").type) == "uint8"      # from the first file
    assert str(schema("strs").field("after_e").type) == "string"      # from the second
    (tmp_path / "other.sql").write_text("CREATE TABLE types.ints (id INT PRIMARY KEY, x INT);\n")
    r = run("export", src, "-o", tmp_path / "bad", "--schema", tmp_path / "ints.sql", "--schema", tmp_path / "other.sql")
    assert r.exit_code == 2 and "types.ints is defined differently" in r.output, r.output


def test_the_spark_jobs_argv_has_the_same_rule(tmp_path, capsys):
    """``spark-submit binlogkit/spark/jobs/export.py`` / ``audit.py`` take the commands' options:
    argparse alone kept the last value too."""
    from binlogkit.spark.jobs.audit import parse as audit_argv
    from binlogkit.spark.jobs.export import parse as export_argv

    for parse, line in ((export_argv, ["arc", "-o", "a", "-o", "b"]),
                        (export_argv, ["arc", "-o", "o", "--row-group-rows", "5", "--row-group-rows", "6"]),
                        (audit_argv, ["arc", "--max-findings", "5", "--max-findings", "6"]),
                        (audit_argv, ["arc", "--key-file", "k1", "--key-file", "k2"])):
        with pytest.raises(SystemExit) as e:
            parse(line)
        assert e.value.code == 2
        said = capsys.readouterr().err
        assert "given twice" in said and f"{line[-4]}" in said and line[-3] in said and line[-1] in said, said
    opts = export_argv(["arc", "-o", "o", "--database", "a", "--database", "b", "--include-gtids", "0-1-1",
                        "--include-gtids", "0-1-5..7", "--exclude-gtids", "0-1-2", "--exclude-gtids", "0-1-6"])
    assert opts.tables == ("a.*", "b.*") and opts.gtids == "0-1-1,0-1-5..7" and opts.exclude_gtids == "0-1-2,0-1-6"
    assert audit_argv(["arc", "--json", "--json"]).as_json is True


@pytest.fixture(scope="module")
def mysql97() -> Path:
    """The lab's MySQL 9.7 primary (fixtures/mysql-9.7/replication-gtid): binlog.000001 holds the
    DDL (GTIDs 1-12) and row changes of lab.* and types.* with FULL images."""
    return store.materialize("replication-gtid", server="mysql-9.7") / "primary"


def test_mysql_flashback_undoes_every_table_given(mysql97, tmp_path):
    f1 = mysql97 / "binlog.000001"

    def undo(name, *tables):
        r = run("flashback", f1, "-o", tmp_path / name, "--skip-statements", "--json",
                *[w for t in tables for w in ("--table", t)])
        assert r.exit_code == 0, r.output
        return _undo_tables(tmp_path / name)
    nums, strs = undo("n.bin", "types.nums"), undo("s.bin", "types.strs")
    assert set(nums) == {"types.nums"} and set(strs) == {"types.strs"}
    assert undo("both.bin", "types.nums", "types.strs") == {**nums, **strs}
    assert undo("rev.bin", "types.strs", "types.nums") == {**nums, **strs}


def test_mysql_gtid_sets_given_twice(mysql97):
    """MySQL GTID sets (uuid:a-b): two --include-gtids / --exclude-gtids, the union."""
    every = _listed_gtids(mysql97)
    uuid = every[0].split(":")[0]
    a, b = f"{uuid}:13-14", f"{uuid}:40"
    assert _listed_gtids(mysql97, "--include-gtids", a, "--include-gtids", b) == \
        [f"{uuid}:13", f"{uuid}:14", f"{uuid}:40"]
    assert _listed_gtids(mysql97, "--exclude-gtids", a, "--exclude-gtids", b) == \
        [g for g in every if g not in (f"{uuid}:13", f"{uuid}:14", f"{uuid}:40")]

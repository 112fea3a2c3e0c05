"""``binlogkit pull`` starts without click (``cli/entry.py``, issue 34): its table of options is
the one generated from the click declaration, and on every command line it takes, its answer is
click's (the keyword arguments of the command); every other line goes to click."""

from __future__ import annotations

import contextlib
import io
import os
import random
import subprocess
import sys
from pathlib import Path

import click
import pytest

from binlogkit.cli import entry, pull_options
from binlogkit.cli.pull import pull

ROOT = Path(__file__).resolve().parent.parent


def test_the_table_is_generated_from_the_click_command():
    """Stale when an option of cli/pull.py changed: ``make lean-cli`` writes it again."""
    assert (ROOT / "binlogkit" / "cli" / "pull_options.py").read_text() == entry.table_source(pull)
    assert list(pull_options.OPTIONS) == entry.table_of(pull)


def test_the_table_refuses_what_the_parser_cannot_say():
    @click.command()
    @click.option("--many", multiple=True)
    def cmd(many):
        pass

    with pytest.raises(ValueError, match="many"):
        entry.table_of(cmd)


def _click(args: list[str]):
    """The keyword arguments click calls ``pull`` with, or None (help, an error)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return pull.make_context("pull", list(args)).params
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        return None


def _lines(tmp_path: Path, n: int) -> list[list[str]]:
    """Command lines made of pull's options (each spelling), good and bad values, unknown tokens."""
    readable = tmp_path / "pw"
    readable.write_text("x\n")
    locked = tmp_path / "locked"
    locked.write_text("x\n")
    locked.chmod(0)
    folder = tmp_path / "out"
    folder.mkdir()
    values = {
        "str": ["repl", "127.0.0.1", "trx", "off", "none", "5", "1G", "", "-x", "a=b", "mariadb-bin.000001"],
        "int": ["0", "1", "4242", "007", "-1", "+3", "1_000", "1.5", "x", " 7", "٣"],
        "float": ["1", "0.5", "0.4", "10.0", "1.", ".5", "-1", "nan", "inf", "1e3", "x"],
        "choice": ["VERIFY_CA", "verify_ca", "Preferred", "DISABLED", "maybe", ""],
        "path": [str(readable), str(locked), str(folder), str(tmp_path / "missing"), str(folder / "new"), "-"],
    }
    spellings = [(opt, row) for row in pull_options.OPTIONS for opt in row[1]]
    rng = random.Random(34)
    lines = []
    for _ in range(n):
        args: list[str] = []
        if rng.random() < 0.9:
            args += ["--server-id", rng.choice(["1", "99", "x"]), rng.choice(["-o", "--output", "--dir"]),
                     str(folder if rng.random() < 0.5 else folder / "new")]
        for _ in range(rng.randrange(0, 6)):
            opt, row = rng.choice(spellings)
            kind = row[2]
            if rng.random() < 0.04:
                args.append(rng.choice(["--help", "-h", "--", "extra", "--no-such", "-o=x", "--host"]))
            elif kind == "flag":
                args.append(opt + ("=1" if rng.random() < 0.05 else ""))
            else:
                value = rng.choice(values[kind] + values["str"][:2])
                args += [f"{opt}={value}"] if opt.startswith("--") and rng.random() < 0.3 else [opt, value]
        lines.append(args)
    return lines


def test_the_lean_parser_answers_as_click(tmp_path):
    taken = 0
    for args in _lines(tmp_path, 3000):
        lean = entry.parse(pull_options.OPTIONS, args)
        if lean is None:
            continue
        taken += 1
        assert lean == _click(args), args
    assert taken > 400   # it does take command lines (else this test proves nothing)


def test_a_plain_pull_line_is_taken(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text("x\n")
    args = ["--host", "127.0.0.1", "--port", "3306", "--user", "repl", "--password-file", str(pw), "--server-id",
            "4242", "--dir", str(tmp_path / "copy"), "--until-end", "--sync", "none", "--ssl-mode=disabled",
            "--json", "--read-timeout", "2.5", "--max-reconnects", "3"]
    got = entry.parse(pull_options.OPTIONS, args)
    assert got is not None and got == _click(args)
    assert got["ssl_mode"] == "DISABLED" and got["read_timeout"] == 2.5 and got["heartbeat"] == 1.0


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlogkit.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env={**os.environ, "MYSQL_PWD": "x", **(env or {})})


def test_help_and_errors_are_clicks(tmp_path):
    """What the lean parser leaves to click is said by click, as before (exit 2 and its usage line)."""
    help_text = _cli("pull", "--help")
    assert help_text.returncode == 0 and help_text.stdout.startswith("Usage: ") and "--max-reconnects" in help_text.stdout
    assert _cli("pull", "-h").stdout == help_text.stdout
    bad = _cli("pull", "--server-id", "x", "--dir", str(tmp_path / "d"))
    assert bad.returncode == 2 and "Invalid value for '--server-id'" in bad.stderr
    missing = _cli("pull", "--dir", str(tmp_path / "d"))
    assert missing.returncode == 2 and "Missing option '--server-id'" in missing.stderr
    twice = _cli("pull", "--user", "u", "--server-id", "1", "--dir", str(tmp_path / "d"), "--port", "1", "--port", "2",
                 "--max-reconnects", "0", "--until-end")
    # click's answer (cli/options.Command): an option given twice is refused, before connecting
    assert twice.returncode == 2 and twice.stderr == "binlogkit: error: --port given twice (1, 2): give it once\n"


def test_a_lean_pull_fails_as_the_click_command(tmp_path):
    """The same line through the lean path and through click: the same message and exit code."""
    args = ["pull", "--port", "1", "--user", "u", "--server-id", "5", "--dir", str(tmp_path / "d"), "--until-end",
            "--max-reconnects", "0"]
    lean = _cli(*args)
    code = "import sys; sys.argv[0] = 'binlogkit'; from binlogkit.cli import main; main()"
    clicked = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                             timeout=60, env={**os.environ, "MYSQL_PWD": "x"})
    assert lean.returncode == clicked.returncode == 2
    assert lean.stderr == clicked.stderr and "cannot connect" in lean.stderr
    refused = _cli("pull", "--server-id", "5", "--dir", str(tmp_path / "d"), "--sync", "none", "--semisync",
                   "--user", "u")
    assert refused.returncode == 2 and refused.stderr.startswith("binlogkit: error: --sync none")

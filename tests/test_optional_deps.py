"""Optional dependencies missing (issue 17): one line naming what to install, exit 2, never a
traceback. Each case runs the real command in a fresh interpreter where the module cannot be
imported (``sys.modules[name] = None`` makes every import of it fail, as on a machine without it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from construct import Container, ListContainer

from binlogkit.codecs.common import pack_int
from binlogkit.codecs.payload import TransactionPayloadBody
from binlogkit.constants import EventType as T
from binlogkit.reading.events import build_event

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "mariadb-10.11" / "replication-gtid" / "primary"


def _without(module: str, *args: str) -> subprocess.CompletedProcess:
    code = (f"import sys; sys.modules[{module!r}] = None; sys.argv[0] = 'binlogkit'; "
            "from binlogkit.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def _one_line(res: subprocess.CompletedProcess, *needles: str) -> None:
    assert "Traceback" not in res.stderr, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_audit_engine_spark_without_pyspark(tmp_path):
    res = _without("pyspark", "audit", "--engine", "spark", str(FIXTURE))
    assert res.returncode == 2
    _one_line(res, "pyspark is not installed", "audit --engine spark", "pip install 'binlogkit[spark]'")


def test_compressed_mysql_transaction_without_zstandard(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    from fixtures.built_mysql import BinlogBuilder  # a MySQL 8.4 Format_description: it knows type 40

    inner = build_event(type_code=T.XID_EVENT, body=(7).to_bytes(8, "little"), timestamp=1, server_id=1,
                        log_pos=0, flags=0, checksum=False)
    payload = zstandard.ZstdCompressor().compress(inner)
    fields = [(1, pack_int(len(payload))), (2, pack_int(0)), (3, pack_int(len(inner)))]  # size, ZSTD, inflated
    tlv = [Container(type=t, length=len(v), value=v) for t, v in fields] + [Container(type=0, length=None, value=None)]
    b = BinlogBuilder()
    b.add(T.TRANSACTION_PAYLOAD_EVENT, TransactionPayloadBody.build(Container(fields=ListContainer(tlv), payload=payload)))
    path = tmp_path / "binlog.000001"
    path.write_bytes(bytes(b.data))
    res = _without("zstandard", "decode", "--base64-output=decode-rows", str(path))
    assert res.returncode == 2
    _one_line(res, "zstandard is not installed", "MySQL compressed transactions", "pip install zstandard")
    # with zstandard the same file decodes: it is the module that was missing, not the file that is bad
    ok = subprocess.run([sys.executable, "-m", "binlogkit.cli", "decode", "--base64-output=decode-rows", str(path)], capture_output=True,
                        text=True, cwd=ROOT, timeout=120)
    assert ok.returncode == 0 and "Xid = 7" in ok.stdout, ok.stderr + ok.stdout


def test_urls_without_fsspec():
    code = ("import sys; sys.modules['fsspec'] = None\n"
            "from binlogkit.reading.files import open_input\n"
            "from binlogkit._optional import MissingDependency\n"
            "try:\n    open_input('s3a://bucket/binlog.000001')\n"
            "except MissingDependency as exc:\n    print(exc)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.stdout.strip() == "fsspec is not installed (needed for object storage URLs): pip install 'binlogkit[s3]'"


def test_audit_output_without_pyarrow_writes_json_and_says_why_no_parquet(tmp_path):
    out = tmp_path / "out"
    res = _without("pyarrow", "audit", "--jobs", "1", "--output", str(out), str(FIXTURE))
    assert res.returncode in (0, 1), res.stderr
    _one_line(res, "findings.parquet not written", "pyarrow is not installed", "binlogkit[spark]")
    assert (out / "findings.json").exists() and (out / "summary.json").exists()
    assert not (out / "findings.parquet").exists()


def test_export_without_pyarrow(tmp_path):
    res = _without("pyarrow", "export", str(FIXTURE), "--output", str(tmp_path / "out"))
    assert res.returncode == 2
    _one_line(res, "pyarrow is not installed", "binlogkit export", "pip install 'binlogkit[")
    assert not (tmp_path / "out").exists()


def test_export_without_pyarrow_names_the_export_extra(tmp_path):
    res = _without("pyarrow", "export", str(FIXTURE), "--output", str(tmp_path / "out"))
    assert res.returncode == 2
    _one_line(res, "pyarrow is not installed", "binlogkit export", "pip install 'binlogkit[export]'")
    assert not (tmp_path / "out").exists()


def test_every_extra_a_message_names_installs_that_module():
    """Each `pip install 'binlogkit[X]'` in the code, and each extra `need` names, is an extra
    of pyproject.toml that lists the module it is named for."""
    import re
    import tomllib

    from binlogkit._optional import EXTRAS

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]

    def lists(extra: str, module: str) -> bool:
        names = {re.split(r"[<>=\[; ]", r, maxsplit=1)[0].lower() for r in extras[extra]}
        return {"pymysql": "pymysql", "cryptography": "cryptography"}.get(module, module) in names

    for module, extra in EXTRAS.items():
        assert extra is None or lists(extra, module), (module, extra)
    seen = 0
    for f in sorted((ROOT / "binlogkit").rglob("*.py")):
        text = f.read_text()
        for m in re.finditer(r"need\(\"([\w.]+)\"[^)\n]*extra=\"(\w+)\"", text):
            assert lists(m.group(2), m.group(1).split(".")[0]), (f.name, m.group(0))
            seen += 1
        for m in re.finditer(r"(\w+) [^\n]*pip install 'binlogkit\[(\w+)\]'", text):
            assert m.group(2) in extras, (f.name, m.group(0))
            seen += 1
    assert seen >= 4
    # the messages that name a module: that module is in the extra
    assert lists("pull", "pymysql") and lists("encryption", "cryptography")

"""Object storage (issue 21): every archive command on archives uploaded to a real S3 server
(SeaweedFS on loopback, ``fixtures/lab/s3.py``) prints exactly what it prints for the same files
on local disk; audit outputs written to S3 equal the local ones and appear whole or not at all;
a missing s3fs and the store's own errors are one line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from binlogkit.reading import storage
from binlogkit.cli import main
from binlogkit.errors import StorageError
from fixtures import store

ROOT = Path(__file__).resolve().parent.parent
BUCKET = "archive"
SETS = ["row-types", "crash-rotation-gtid", "compressed-events", "row-types-full-metadata"]


def _fs():
    return storage.filesystem(f"s3://{BUCKET}/")[0]


def _upload(local: Path, prefix: str) -> str:
    """``local`` (a folder, recursively) as objects under ``s3://archive/PREFIX/``."""
    fs = _fs()
    for f in sorted(local.rglob("*")):
        if f.is_file() and not f.name.startswith("."):
            fs.put_file(str(f), f"{BUCKET}/{prefix}/{f.relative_to(local).as_posix()}")
    storage.forget()
    return f"s3://{BUCKET}/{prefix}"


@pytest.fixture(scope="module")
def s3(s3_server, tmp_path_factory):
    """The fixture sets and a generated faulty archive, each on disk and in the bucket:
    {name: (local folder, URL)}."""
    s3_server.make_bucket(BUCKET)
    out = {}
    for name in SETS:
        local = store.materialize(name)
        out[name] = (local, _upload(local, name))
    from fixtures.faults import generate

    faulty = tmp_path_factory.mktemp("faulty") / "arch"
    generate(faulty, files=8, trx_per_file=60, seed=11)
    (faulty / "faults.json").unlink()
    out["faulty"] = (faulty, _upload(faulty, "faulty"))
    # the same archive stored compressed, as archives often are
    xz = tmp_path_factory.mktemp("faulty-xz") / "arch"
    shutil.copytree(faulty, xz)
    for f in sorted(xz.iterdir()):
        if f.name.startswith("mariadb-bin.0"):
            subprocess.run(["xz", "-0", str(f)], check=True)
    out["faulty-xz"] = (xz, _upload(xz, "faulty-xz"))
    return out


def _sub(rows: list, url: str, local) -> list:
    """``rows`` with the URL prefix put back to the local folder (every string, nested too)."""
    return json.loads(json.dumps(rows).replace(url, str(local)))


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def _same(local_args, url_args, local: str, url: str, *, exit_codes=None):
    a, b = run(*local_args), run(*url_args)
    assert b.exception is None or isinstance(b.exception, SystemExit), b.output
    assert a.exit_code == b.exit_code, (a.output[-2000:], b.output[-2000:])
    if exit_codes is not None:
        assert a.exit_code in exit_codes
    assert b.output.replace(url, local) == a.output
    assert len(a.output) > 100  # the comparison compared something
    return a


# -- read commands: the same output as on the local copy ------------------------------------------

@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("command", [["decode", "--base64-output=decode-rows"], ["decode", "--base64-output=decode-rows", "--json"], ["decode", "--base64-output=decode-rows", "-v"], ["verify"],
                                     ["verify", "--json"], ["gtids"], ["gtids", "--json"], ["transactions"],
                                     ["transactions", "--json"]])
def test_read_commands_on_a_prefix_equal_local(s3, name, command):
    local, url = s3[name]
    primary = local / "primary"
    if name == "compressed-events":
        primary = next(p for p in local.iterdir() if p.is_dir())
    sub = primary.relative_to(local).as_posix()
    _same([*command, str(primary)], [*command, f"{url}/{sub}/"], str(primary), f"{url}/{sub}", exit_codes=(0, 1))


@pytest.mark.parametrize("command", [["decode", "--base64-output=decode-rows", "-v"], ["decode", "--base64-output=decode-rows", "--json", "-v"], ["verify"], ["transactions"]])
def test_single_objects_plain_and_compressed_equal_local(s3, command):
    local, url = s3["faulty-xz"]
    for f in sorted(local.iterdir())[:3]:
        _same([*command, str(f)], [*command, f"{url}/{f.name}"], str(local), url, exit_codes=(0, 1))
    local, url = s3["row-types"]
    f = local / "primary" / "mariadb-bin.000001"
    _same([*command, str(f)], [*command, f"{url}/primary/{f.name}"], str(local), url, exit_codes=(0,))


def test_an_index_object_stands_for_its_logs(s3):
    local, url = s3["crash-rotation-gtid"]
    _same(["verify", str(local / "relay" / "relay-bin.index")], ["verify", f"{url}/relay/relay-bin.index"],
          str(local), url, exit_codes=(0, 1))
    from binlogkit.reading.files import expand_paths

    want = [p.name for p in expand_paths([local / "relay"])]
    assert len(want) >= 2
    assert [u.name for u in expand_paths([f"{url}/relay/"])] == want
    assert [u.name for u in expand_paths([f"{url}/relay"])] == want  # with or without the slash


def test_corpus_files_verify_and_decode_equal_local(s3, corpus, tmp_path):
    files = sorted(f for f in (corpus / "mariadb" / "mysql-test").rglob("*")
                   if f.is_file() and f.stat().st_size < 2 << 20 and f.suffix not in (".txt", ".info", ".md"))[:25]
    copy = tmp_path / "corpus"
    copy.mkdir()
    for i, f in enumerate(files):
        shutil.copy(f, copy / f"{i:03d}-{f.name}")
    url = _upload(copy, "corpus")
    for f in sorted(copy.iterdir()):
        for command in (["verify", "--json"], ["decode", "--base64-output=decode-rows", "--json", "--lenient"]):
            a, b = run(*command, str(f)), run(*command, f"{url}/{f.name}")
            assert (a.exit_code, b.output.replace(url, str(copy))) == (b.exit_code, a.output), f


# -- audit: both engines ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["faulty", "faulty-xz", "crash-rotation-gtid"])
def test_audit_findings_on_s3_equal_local(s3, name):
    local, url = s3[name]
    a = _same(["audit", "--json", "--jobs", "2", str(local)], ["audit", "--json", "--jobs", "2", url + "/"],
              str(local), url)
    doc = json.loads(a.output)
    if name.startswith("faulty"):  # the faults are there to be found: the comparison covers them
        assert {f["kind"] for f in doc["findings"]} >= {"missing_file", "gtid_gap"} and a.exit_code == 1


def test_audit_spark_engine_on_s3_equals_local(s3, tmp_path, capsys):
    pytest.importorskip("pyspark")
    from binlogkit.spark.jobs import audit as job

    local, url = s3["faulty"]
    spark = job.session("local[2]")
    try:
        rc_local = job.main(spark, [str(local), "--json", "--output", str(tmp_path / "out")])
        out_local = capsys.readouterr().out
        rc_s3 = job.main(spark, [url + "/", "--json", "--output", f"s3://{BUCKET}/spark-out/run1"])
        out_s3 = capsys.readouterr().out
    finally:
        spark.stop()
    assert rc_local == rc_s3 == 1
    assert out_s3.replace(url, str(local)) == out_local
    # the executors wrote the findings dataset to S3: the same rows as Spark's own local writer
    import pyarrow.parquet as pq

    fs = _fs()
    storage.forget()
    base = f"{BUCKET}/spark-out/run1"
    assert fs.exists(f"{base}/findings.parquet/_SUCCESS") and fs.exists(f"{base}/summary.json")
    remote = pq.read_table(f"{base}/findings.parquet", filesystem=fs).to_pylist()
    mine = pq.read_table(tmp_path / "out" / "findings.parquet").to_pylist()
    assert _sub(remote, url, local) == mine and mine
    local_doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    remote_doc = json.loads(fs.cat_file(f"{base}/summary.json").decode().replace(url, str(local)))
    assert remote_doc == local_doc


def test_executors_adopt_the_drivers_store_settings():
    """What a job's driver hands its tasks: the AWS settings it has; an executor (here a fresh
    interpreter, as a Python worker is) adds those its own environment lacks, keeps its own,
    and drops filesystems made before."""
    code = """
import os, sys
from binlogkit.reading import storage
os.environ.update(AWS_ENDPOINT_URL="http://127.0.0.1:1", AWS_ACCESS_KEY_ID="driver")
os.environ.pop("AWS_SESSION_TOKEN", None)
shipped = storage.environment()
assert shipped["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1" and "AWS_SESSION_TOKEN" not in shipped, shipped
os.environ["AWS_ACCESS_KEY_ID"] = "executor"
del os.environ["AWS_ENDPOINT_URL"]
storage._FS[("s3", os.getpid())] = object()
path = os.environ["PATH"]
storage.adopt({**shipped, "PATH": "/nowhere", "AWS_SESSION_TOKEN": "t"})
assert os.environ["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1"
assert os.environ["AWS_ACCESS_KEY_ID"] == "executor"
assert os.environ["AWS_SESSION_TOKEN"] == "t" and os.environ["PATH"] == path
assert ("s3", os.getpid()) not in storage._FS
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# -- flashback and pitr read S3 too --------------------------------------------------------------------

def test_flashback_reads_its_inputs_from_s3(s3, tmp_path):
    local, url = s3["row-types-full-metadata"]
    args = ["--include-gtids", "0-1-19..42", "--json"]
    a = run("flashback", str(local / "primary" / "mariadb-bin.index"), "-o", str(tmp_path / "a.bin"), *args)
    b = run("flashback", f"{url}/primary/mariadb-bin.index", "-o", str(tmp_path / "b.bin"), *args)
    assert a.exit_code == b.exit_code == 0, (a.output, b.output)
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    ja, jb = json.loads(a.output), json.loads(b.output.replace(url, str(local)))
    assert ja["later"]["conflicts"]  # the later-changes pass read the objects after the range too
    assert {k: v for k, v in ja.items() if k != "output"} == {k: v for k, v in jb.items() if k != "output"}


def test_pitr_plans_from_an_archive_on_s3(s3):
    """The same plan; the server tool's line (tool_command) only for the local files (issue 31:
    mariadb-binlog cannot read s3://), the command (binlogkit's) for both."""
    local, url = s3["row-types"]
    a = run("pitr", str(local / "primary"), "--from-gtid", "0-1-3", "--until-gtid", "0-1-20", "--json")
    b = run("pitr", url + "/primary/", "--from-gtid", "0-1-3", "--until-gtid", "0-1-20", "--json")
    assert a.exit_code == b.exit_code == 0, (a.output[-2000:], b.output[-2000:])
    ja, jb = json.loads(a.output), json.loads(b.output.replace(url, str(local)))
    assert ja.pop("tool_command").startswith("mariadb-binlog ") and jb.pop("tool_command") is None
    assert ja == jb and ja["command"].startswith("binlogkit decode ") and ja["transactions"] > 0


# -- outputs ----------------------------------------------------------------------------------------

def test_audit_output_and_report_to_s3_equal_local(s3, tmp_path):
    local, url = s3["faulty"]
    out_url, page_url = f"s3://{BUCKET}/audits/run1", f"s3://{BUCKET}/audits/run1-page.html"
    a = run("audit", "--jobs", "2", "--output", str(tmp_path / "out"), "--report", str(tmp_path / "page.html"),
            str(local))
    b = run("audit", "--jobs", "2", "--output", out_url, "--report", page_url, url + "/")
    assert a.exit_code == b.exit_code == 1, b.output
    fs = _fs()
    storage.forget()
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["findings.json", "findings.parquet", "report.html", "summary.json"]
    assert sorted(p.rsplit("/", 1)[1] for p in fs.ls(f"{BUCKET}/audits/run1")) == names
    for name in ("findings.json", "summary.json", "report.html"):
        got = fs.cat_file(f"{BUCKET}/audits/run1/{name}").decode().replace(url, str(local))
        assert got == (tmp_path / "out" / name).read_text(), name
    import pyarrow.parquet as pq

    rows = pq.read_table(f"{BUCKET}/audits/run1/findings.parquet", filesystem=fs).to_pylist()
    assert _sub(rows, url, local) == pq.read_table(tmp_path / "out" / "findings.parquet").to_pylist()
    assert fs.cat_file(f"{BUCKET}/audits/run1-page.html").decode().replace(url, str(local)) == \
        (tmp_path / "page.html").read_text()


def test_write_atomic_failing_writer_leaves_no_object(s3):
    """An exception in the writer aborts the upload: small (one PUT) and large (multipart)."""
    fs = _fs()
    for size in (1 << 20, 24 << 20):
        url = f"s3://{BUCKET}/atomic/failed-{size}"

        def writer(fh, size=size):
            chunk = os.urandom(1 << 20)
            for _ in range(size >> 20):
                fh.write(chunk)
            raise RuntimeError("disk on fire")
        with pytest.raises(RuntimeError):
            storage.write_atomic(url, writer)
        storage.forget()
        assert not fs.exists(url), size
    storage.write_atomic(f"s3://{BUCKET}/atomic/ok", b"whole")
    assert fs.cat_file(f"{BUCKET}/atomic/ok") == b"whole"


def test_write_killed_mid_upload_leaves_no_object(s3, s3_server, tmp_path):
    """kill -9 while a multipart upload is under way: the object never appears (and an existing
    one is not replaced by a part of the new one)."""
    url = f"s3://{BUCKET}/atomic/killed"
    storage.write_atomic(url, b"the previous version")
    code = ("import os, sys, time\n"
            "from binlogkit.reading import storage\n"
            "def writer(fh):\n"
            "    chunk = os.urandom(1 << 20)\n"
            "    for i in range(400):\n"
            "        fh.write(chunk)\n"
            "        if i == 20:\n"
            "            print('parts sent', flush=True)\n"
            "        time.sleep(0.01)\n"
            f"storage.write_atomic({url!r}, writer)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "parts sent"
        client = s3_server._client()
        deadline = time.monotonic() + 30
        while not [u for u in client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
                   if u["Key"] == "atomic/killed"]:  # the upload is under way, parts sent
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    storage.forget()
    assert _fs().cat_file(f"{BUCKET}/atomic/killed") == b"the previous version"


# -- failures: one line, exit 2 ---------------------------------------------------------------------

def _cli(*args: str, env: dict | None = None, block: str | None = None) -> subprocess.CompletedProcess:
    pre = f"import sys; sys.modules[{block!r}] = None; " if block else "import sys; "
    code = pre + "sys.argv[0] = 'binlogkit'; from binlogkit.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          env=env or dict(os.environ), timeout=180)


def _one_line(res: subprocess.CompletedProcess, *needles: str) -> str:
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", [["decode", "--base64-output=decode-rows"], ["verify"], ["audit"], ["gtids"]])
def test_missing_s3fs_is_one_line_naming_the_extra(command):
    res = _cli(*command, f"s3://{BUCKET}/x/mariadb-bin.000001", block="s3fs")
    _one_line(res, "s3fs is not installed", "pip install 'binlogkit[s3]'")


def test_store_errors_are_typed_one_line_exit_2(s3):
    local, url = s3["row-types"]
    obj = f"{url}/primary/mariadb-bin.000003"
    _one_line(_cli("decode", "--base64-output=decode-rows", f"s3://no-such-bucket-here/{'mariadb-bin.000001'}"), "s3://no-such-bucket-here/",
              "no such")
    _one_line(_cli("verify", f"{url}/primary/mariadb-bin.000099"), "mariadb-bin.000099", "no such")
    _one_line(_cli("audit", f"s3://{BUCKET}/nothing-here/"), f"s3://{BUCKET}/nothing-here/")
    _one_line(_cli("decode", "--base64-output=decode-rows", obj, env=dict(os.environ, AWS_SECRET_ACCESS_KEY="wrong")), obj, "access denied")
    _one_line(_cli("transactions", obj, env=dict(os.environ, AWS_ENDPOINT_URL="http://127.0.0.1:9")), obj)
    _one_line(_cli("audit", "--output", f"s3://{BUCKET}/denied", str(local / "primary"),
                   env=dict(os.environ, AWS_SECRET_ACCESS_KEY="wrong")), f"s3://{BUCKET}/denied", "access denied")
    _one_line(_cli("audit", "--report", f"s3://{BUCKET}/denied.html", str(local / "primary"),
                   env=dict(os.environ, AWS_ENDPOINT_URL="http://127.0.0.1:9")), f"s3://{BUCKET}/denied.html")
    with pytest.raises(StorageError) as info:
        storage.size(f"{url}/primary/absent.000001")
    assert info.value.file == f"{url}/primary/absent.000001"


def test_read_only_commands_never_open_for_writing(s3, monkeypatch):
    """Every file the storage layer opens on a read command is opened 'rb'."""
    local, url = s3["row-types"]
    fs = _fs()
    modes = []
    real = type(fs).open

    def spy(self, path, mode="rb", **kw):
        modes.append(mode)
        return real(self, path, mode, **kw)
    monkeypatch.setattr(type(fs), "open", spy)
    for command in (["decode", "--base64-output=decode-rows", "-v"], ["verify"], ["gtids"], ["transactions"], ["audit", "--jobs", "1"]):
        assert run(*command, url + "/primary/").exit_code == 0
    assert modes and set(modes) == {"rb"}


def test_endpoint_from_the_aws_environment_only(s3_server):
    """s3fs / botocore as installed honour AWS_ENDPOINT_URL; binlogkit passes it too (one place)."""
    from binlogkit.reading.storage import _options

    assert _options("s3")["client_kwargs"] == {"endpoint_url": s3_server.endpoint}
    code = ("import s3fs; fs = s3fs.S3FileSystem(); "
            f"print(sorted(b.rstrip('/') for b in fs.ls('')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         timeout=60)
    assert BUCKET in res.stdout, res.stderr

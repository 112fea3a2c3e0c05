"""The spark-submit audit job: the per-file pass on executors, the merge on the driver.

Run it on this machine (Spark local mode, the default master)::

    spark-submit --master 'local[*]' binlogkit/audit/job.py /archive/binlogs --output /tmp/audit

On a cluster, ship the package and its dependencies with the job, e.g. a packed virtualenv
(``venv-pack`` / ``conda-pack``) holding binlogkit, construct, click, zstandard and fsspec::

    spark-submit --master yarn --archives binlogkit-env.tar.gz#env \\
        --conf spark.pyspark.python=./env/bin/python \\
        binlogkit/audit/job.py hdfs:///archive/binlogs s3a://bucket/relay --output hdfs:///audit/run1

The driver lists the files (local paths, or any fsspec URL: ``hdfs://``, ``s3a://`` ...) and
hands out **paths** with their sizes, largest first, one partition per file; each executor
opens and streams its files itself. Files never travel through Spark as binary records
(``binaryFile`` cannot hand a >= 1 GiB file to Python and refuses files over 2 GiB). The
manifests come back as a DataFrame of JSON strings, the merge runs on the driver, and the
findings are written as Parquet (``DIR/findings.parquet``) with ``DIR/summary.json``. Exit code
as ``binlogkit audit``: 0 clean, 1 findings of severity error, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def list_inputs(paths: list[str]) -> list[tuple[str, int]]:
    """(path, size) of every binlog-looking file under ``paths``, largest first."""
    from binlogkit.audit.engine import audit_paths
    from binlogkit.files import input_size, is_url

    local = [p for p in paths if not is_url(p)]
    out = [(p, input_size(p)) for p in audit_paths(local)]
    for url in (p for p in paths if is_url(p)):
        import fsspec

        fs, root = fsspec.core.url_to_fs(url)
        protocol = url.split("://", 1)[0]
        for f in (fs.find(root) if fs.isdir(root) else [root]):
            name = f.rsplit("/", 1)[-1]
            for suffix in (".xz", ".gz", ".bz2", ".lzma"):
                name = name.removesuffix(suffix)
            if name.rsplit(".", 1)[-1].isdigit():
                out.append((f"{protocol}://{f}" if "://" not in f else f, int(fs.size(f))))
    return sorted(out, key=lambda t: -t[1])


def _manifest_json(item: tuple[str, int], spec=None) -> str:
    from binlogkit.audit.manifest import file_manifest

    keys = spec.load(resolve=_shipped) if spec is not None else None
    return json.dumps(file_manifest(item[0], keys))


def _shipped(path: str) -> str:
    """A key file that is not at its path on this executor: the copy ``--files`` (or the
    driver's ``addFile``) shipped."""
    from pyspark import SparkFiles

    return SparkFiles.get(os.path.basename(path))


def main(spark, argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="binlogkit-audit-job", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--output", help="folder for findings.parquet and summary.json")
    ap.add_argument("--json", action="store_true", help="print findings and summary as JSON")
    ap.add_argument("--key-file", default=os.environ.get("BINLOGKIT_KEY_FILE"),
                    help="MariaDB file_key_management key file (a path on the workers, or shipped with --files)")
    ap.add_argument("--key-file-secret-file", help="the secret of an encrypted key file (or BINLOGKIT_KEY_FILE_SECRET "
                    "in the executors' environment; never in Spark configuration)")
    ap.add_argument("--cipher", choices=["AES_CBC", "AES_CTR"])
    ap.add_argument("--keyring-file", help="MySQL keyring (component_keyring_file JSON or keyring_file)")
    args = ap.parse_args(argv)
    from binlogkit.audit.merge import merge

    inputs = list_inputs(args.paths)
    if not inputs:
        print("binlogkit-audit-job: no binlog or relay-log files under the given paths", file=sys.stderr)
        return 2
    sc = spark.sparkContext
    spec = None
    if args.key_file or args.keyring_file:
        from binlogkit.crypto.keys import KeySpec, load_keys
        from binlogkit.errors import BinlogError

        try:  # fail fast on the driver when the keys are here (they need not be: --files)
            if all(os.path.exists(p) for p in (args.key_file, args.keyring_file) if p):
                load_keys(args.key_file, secret_file=args.key_file_secret_file, cipher=args.cipher,
                          keyring_file=args.keyring_file)
        except BinlogError as exc:
            print(f"binlogkit-audit-job: {exc}", file=sys.stderr)
            return 2
        spec = KeySpec(args.key_file, args.key_file_secret_file, args.cipher, args.keyring_file)
    rdd = sc.parallelize(inputs, numSlices=len(inputs))
    # an explicit schema: inferring one would run the first files twice; only the KeySpec
    # (paths) travels in the closure, executors read the key files themselves
    manifests_df = spark.createDataFrame(rdd.map(lambda it: (it[0], _manifest_json(it, spec))),
                                         "file string, manifest string")
    manifests = [json.loads(r["manifest"]) for r in manifests_df.collect()]
    result = merge(manifests)
    if args.output:
        _write(spark, result, args.output)
    if args.json:
        print(json.dumps(result, indent=1, default=str))
    else:
        c = result["counts"]
        print(f"{result['files']} files, {result['bytes']:,} bytes: {c['error']} errors, {c['warning']} warnings")
        for f in result["findings"][:50]:
            print(f"{f['severity']:<8} {f['kind']:<20} {f['file']}@{f['offset']}  {f['detail'][:100]}")
    return 1 if result["counts"]["error"] else 0


FINDING_COLUMNS = ["kind", "severity", "file", "offset", "detail", "gtids", "series"]


def _write(spark, result: dict, output: str) -> None:
    from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

    schema = StructType([StructField("kind", StringType()), StructField("severity", StringType()),
                         StructField("file", StringType()), StructField("offset", LongType()),
                         StructField("detail", StringType()), StructField("gtids", ArrayType(StringType())),
                         StructField("series", StringType())])
    rows = [tuple(f[c] for c in FINDING_COLUMNS) for f in result["findings"]]
    spark.createDataFrame(rows, schema).coalesce(1).write.mode("overwrite").parquet(f"{output.rstrip('/')}/findings.parquet")
    summary = json.dumps({k: v for k, v in result.items() if k != "findings"}, indent=1, default=str)
    if "://" in output:
        import fsspec

        with fsspec.open(f"{output.rstrip('/')}/summary.json", "w") as fh:
            fh.write(summary)
    else:
        os.makedirs(output, exist_ok=True)
        with open(os.path.join(output, "summary.json"), "w") as fh:
            fh.write(summary)


def session(master: str | None = None):
    """A SparkSession: ``master`` or whatever spark-submit configured (local[*] by default)."""
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName("binlogkit-audit")
    if master:
        b = b.master(master)
    elif not os.environ.get("SPARK_MASTER") and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        b = b.master("local[*]")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return b.config("spark.ui.enabled", "false").getOrCreate()


if __name__ == "__main__":
    _spark = session()
    try:
        _rc = main(_spark, sys.argv[1:])
    finally:
        _spark.stop()
    sys.exit(_rc)

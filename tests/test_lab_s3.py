"""The lab's S3 server (SeaweedFS, ``fixtures/lab/s3.py``) takes objects in every bucket the
tests make, however little free space the disk has: SeaweedFS gave each bucket a collection of
7 volumes, and its volume count, sized from the free space (free / 256 MB), ran out after a few
buckets on a fuller disk ("We encountered an internal error": no free volumes left)."""

from __future__ import annotations


def test_twelve_more_buckets_each_take_an_object(s3_server):
    c = s3_server._client()
    for i in range(12):
        name = f"lab-bucket-{i:02d}"
        s3_server.make_bucket(name)
        c.put_object(Bucket=name, Key="k", Body=b"x" * 1000)
        assert c.get_object(Bucket=name, Key="k")["Body"].read() == b"x" * 1000

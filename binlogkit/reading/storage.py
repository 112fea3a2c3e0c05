"""Object storage (``s3://bucket/prefix``, any fsspec URL): the one place binlogkit reads and
writes it.

Every archive command reaches URLs through ``binlogkit.reading.files`` (``open_input``, ``input_size``,
``expand_paths``), which hands them to the functions below; a command needs no plumbing of its own.

The API (small and stable; new commands such as ``export`` call only these)::

    is_url(path) -> bool                      "scheme://..." (local paths are never URLs)
    filesystem(url) -> (fs, path)             the fsspec filesystem (one per protocol and process)
    open_read(url) -> BinaryIO                read-only, large ranged reads with read-ahead;
                                              .xz/.gz/.bz2 objects are decompressed as streams
    size(url) -> int                          bytes as stored (cached with the listing)
    expand(url) -> list[str]                  a prefix as a local folder: the logs its .index files
                                              list (by name, under it) and its other objects named
                                              like NAME.000123 (compressed twins too); an object
                                              stands for itself
    find_logs(url) -> list[tuple[str, int]]   every log-named object under a prefix, with sizes
                                              (the audit: recursive, like a folder tree)
    find_indexes(url) / index_entries(url)    the .index objects under a prefix / what one lists
    output_fs(url) -> (fs, path)              where an output URL goes (parents need no creating)
    write_atomic(url, data_or_writer)         bytes, or a function writing to a binary file;
                                              all of it becomes visible at once or nothing does
    join(url, name) -> str                    ``url/name`` without doubled slashes
    exists(url) / isdir(url) -> bool          an object or prefix is there / is a prefix
    forget()                                  drop cached sizes and listings (after writing)
    Url                                       the str subclass expand_paths gives for URLs
    StorageError                              (errors.py) what every store failure becomes

``binlogkit.writing.objects.write_atomic`` is what writers call: a local path goes through
``binlogkit.writing.safeio`` (folder lock, exclusive temporary file, fsync, rename; never through a
link), a URL to ``write_atomic`` here. On S3 an object appears only when its upload completes:
a single PUT for a small body, a multipart upload completed at the end for a large one; an
exception in the writer aborts the upload (``discard``), and a process killed mid-write never
completes it — no partial object is ever visible (a stray multipart upload is left for the
bucket's lifecycle rule to clear). Other fsspec stores get a temporary name and a move.

Credentials and endpoint come only from the standard AWS environment: ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` (and the config / credentials
files), ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` for an S3-compatible server, and
``AWS_DEFAULT_REGION``. binlogkit has no flags of its own for them.

A missing ``fsspec`` or ``s3fs`` is a ``MissingDependency`` naming ``pip install 'binlogkit[s3]'``
(the CLI prints that one line, exit 2). Errors from the store (no such bucket or key, access
denied, endpoint down) are ``StorageError`` naming the URL, never a botocore traceback.
"""

from __future__ import annotations

import os
import posixpath
import secrets
from typing import Any, BinaryIO, Callable, Union, cast

from ..errors import StorageError
from .names import compressed_suffix, entry_name, index_lines, is_log_name, strip_compressed, twin

Writer = Callable[[BinaryIO], None]

# Read-ahead: measured with `make bench-s3` (SeaweedFS on loopback): blocks of 8 MiB fetched by a
# background thread while the previous block is parsed keep an audit near the local-disk rate.
READ_BLOCK = int(os.environ.get("BINLOGKIT_S3_BLOCK", 8 << 20))
READ_CACHE = os.environ.get("BINLOGKIT_S3_CACHE", "background")
_SIZES: dict[str, int] = {}
_FS: dict[tuple[str, int], Any] = {}  # per protocol and process (a forked worker makes its own)


class Url(str):
    """An object-storage URL among the paths ``files.expand_paths`` returns: a ``str`` (never a
    ``pathlib.Path``, which would fold ``s3://`` into ``s3:/``) with the ``name`` and ``suffix``
    that callers read from paths."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        return posixpath.splitext(self.name)[1]


def is_url(path: str | os.PathLike) -> bool:
    text = os.fspath(path)
    return isinstance(text, str) and "://" in text


def protocol(url: str) -> str:
    return url.split("://", 1)[0].lower()


def _fsspec():
    from .._optional import need

    return need("fsspec", "object storage URLs")


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem for ``url`` (one per protocol, kept for the process) and the path
    within it. ``s3://`` needs s3fs; its endpoint and credentials come from the AWS environment."""
    proto = protocol(url)
    fsspec = _fsspec()
    if proto in ("s3", "s3a"):
        from .._optional import need

        need("s3fs", f"{proto}:// URLs")
    fs = _FS.get((proto, os.getpid()))
    if fs is None:
        try:
            fs = fsspec.filesystem(proto, **_options(proto))
        except (ImportError, ValueError) as exc:  # a protocol whose package is not installed
            from .._optional import MissingDependency

            raise MissingDependency(f"no filesystem for {proto}:// URLs ({exc})") from exc
        _FS[(proto, os.getpid())] = fs
    return fs, fs._strip_protocol(url)


def _options(proto: str) -> dict:
    if proto not in ("s3", "s3a"):
        return {}
    # botocore reads AWS_ENDPOINT_URL itself since late 2023 (1.43 does: test_storage); read here too so older ones and
    # the service-specific variable behave the same (one place).
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    opts: dict[str, Any] = {"default_block_size": READ_BLOCK}
    if endpoint:
        opts["client_kwargs"] = {"endpoint_url": endpoint}
    return opts


def _url(fs: Any, path: str, like: str) -> str:
    proto = protocol(like)
    return path if "://" in path else f"{proto}://{path}"


# what a Spark job's driver hands its executors (their own environment may lack it: a cluster's
# workers, or a JVM started before the variables were set)
ENVIRONMENT = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
               "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE")


def environment() -> dict[str, str]:
    """The object-storage settings of this process's environment (``ENVIRONMENT`` that are set),
    for a job's driver to pass to its executors with their tasks."""
    return {k: os.environ[k] for k in ENVIRONMENT if k in os.environ}


def adopt(env: dict[str, str] | None) -> None:
    """On an executor: the driver's settings for those its own environment lacks (its own
    win); filesystems made before are dropped when anything was added."""
    added = False
    for k, v in (env or {}).items():
        if k in ENVIRONMENT and k not in os.environ:
            os.environ[k] = v
            added = True
    if added:
        _FS.clear()
        _SIZES.clear()


def forget() -> None:
    """Drop cached sizes and listings (after writing, or between runs in one process)."""
    _SIZES.clear()
    for fs in _FS.values():
        try:
            fs.invalidate_cache()
        except Exception:  # noqa: BLE001 - a filesystem without a cache
            pass


def _store_error(url: str, exc: BaseException) -> StorageError:
    """A typed error naming the URL for anything the store or its client raised."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, FileNotFoundError):
        what = "no such object, prefix or bucket"
    elif isinstance(exc, PermissionError):
        what = "access denied"
    else:
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        what = what.splitlines()[0][:300]
    detail = str(exc).splitlines()[0][:200] if isinstance(exc, (FileNotFoundError, PermissionError)) and str(exc) else ""
    return StorageError(f"{what}" + (f" ({detail})" if detail and detail not in url else ""), file=url)


def _from_store(exc: BaseException) -> bool:
    """Raised by the store or its client (botocore, aiohttp, s3fs), not by a caller's code."""
    mod = type(exc).__module__.split(".")[0]
    return mod in ("botocore", "aiobotocore", "aiohttp", "s3fs", "fsspec", "urllib3") or isinstance(exc, OSError)


def _guard(url: str, fn: Callable[[], Any]) -> Any:
    from .._optional import MissingDependency

    try:
        return fn()
    except (MissingDependency, StorageError):
        raise
    except Exception as exc:  # botocore / aiohttp / s3fs errors of every kind
        raise _store_error(url, exc) from exc


def _info(url: str) -> dict:
    fs, path = filesystem(url)
    return _guard(url, lambda: fs.info(path))


def size(url: str) -> int:
    """Size in bytes of an object as stored; cached (listings fill the cache too)."""
    if url not in _SIZES:
        info = _info(url)
        if info.get("type") == "directory":
            raise StorageError("is a prefix, not an object", file=url)
        _SIZES[url] = int(info["size"])
    return _SIZES[url]


def version(url: str) -> str | None:
    """What identifies this object's content (its ETag, with its size), or None when the store
    names none: a cache of what an object holds is valid only while this is unchanged."""
    info = _info(url)
    tag = info.get("ETag") or info.get("etag") or info.get("md5")
    return None if not tag else f"{tag}:{info.get('size')}"


def exists(url: str) -> bool:
    """Whether an object or a non-empty prefix is there (store errors other than 'not found'
    are raised as ``StorageError``)."""
    fs, path = filesystem(url)
    return bool(_guard(url, lambda: fs.exists(path)))


def isdir(url: str) -> bool:
    fs, path = filesystem(url)
    return bool(_guard(url, lambda: fs.isdir(path)))


def open_read(url: str) -> BinaryIO:
    """A read-only stream of an object: ranged GETs of ``READ_BLOCK`` bytes with read-ahead
    (``READ_CACHE``); compressed objects (by name) are decompressed as streams."""
    fs, path = filesystem(url)
    suffix = compressed_suffix(posixpath.basename(path))

    def opened() -> Any:
        from fsspec.caching import caches

        kw: dict[str, Any] = {"block_size": READ_BLOCK,
                              "cache_type": READ_CACHE if READ_CACHE in caches else "readahead"}
        if url in _SIZES:
            kw["size"] = _SIZES[url]  # no HEAD: the listing told it
        try:
            raw = fs.open(path, "rb", **kw)
        except TypeError:  # a filesystem whose open takes fewer options
            kw.pop("size", None)
            try:
                raw = fs.open(path, "rb", **kw)
            except TypeError:
                raw = fs.open(path, "rb")
        return raw
    raw = _Guarded(_guard(url, opened), url)
    if suffix is None:
        return cast(BinaryIO, raw)
    # decompressed as local archives are (compression.Decompressed): a damaged object is damage
    # (CompressionError, exit 1) naming the URL and the offset reached, not a store error
    from .compression import CODEC_NAMES, OPENERS, Decompressed

    try:
        return cast(BinaryIO, Decompressed(OPENERS[suffix](raw, "rb"), raw, url, CODEC_NAMES[suffix]))
    except BaseException:
        raw.close()
        raise


class _Guarded:
    """A read-only file whose store errors (mid-read) become ``StorageError`` naming the URL."""

    def __init__(self, fh: Any, url: str, under: Any = None) -> None:
        self._fh, self.url, self.name = fh, url, url
        self._under = under  # the object under a decompressing stream: closed with it

    def read(self, n: int = -1) -> bytes:
        return _guard(self.url, lambda: self._fh.read(n))

    def readinto(self, b) -> int:
        return int(_guard(self.url, lambda: self._fh.readinto(b)))

    def seek(self, pos: int, whence: int = 0) -> int:
        return _guard(self.url, lambda: self._fh.seek(pos, whence))

    def tell(self) -> int:
        return self._fh.tell()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(self._fh.seekable())

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self._fh.close()
        if self._under is not None:
            self._under.close()

    @property
    def closed(self) -> bool:
        return bool(self._fh.closed)

    def fileno(self) -> int:
        raise OSError(f"{self.url} is an object, not a local file")

    def __enter__(self) -> "_Guarded":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _listing(url: str) -> list[tuple[str, int, str]]:
    """(url, size, type) of the entries directly under a prefix; sizes go into the cache."""
    fs, path = filesystem(url)
    entries = _guard(url, lambda: fs.ls(path.rstrip("/"), detail=True))
    out = []
    for e in entries:
        u = _url(fs, e["name"], url)
        if e.get("type") != "directory":
            _SIZES[u] = int(e.get("size") or 0)
        out.append((u, int(e.get("size") or 0), e.get("type", "file")))
    return out


def join(url: str, name: str) -> str:
    return f"{url.rstrip('/')}/{name.lstrip('/')}"


def _read_index(url: str) -> list[str]:
    """What an ``.index`` object lists, by base name beside it (``names.index_lines``), each the
    compressed twin when only that is stored (``names.twin``)."""
    with open_read(url) as fh:
        text = fh.read().decode("utf-8", "replace")
    parent = url.rsplit("/", 1)[0]
    have: set[str] | None = None

    def stored(name: str) -> bool:
        nonlocal have
        if name in _SIZES:
            return True
        if have is None:
            have = {u for u, _s, t in _listing(parent) if t != "directory"}
        return name in have

    return [twin(join(parent, entry_name(line)), stored) for line in index_lines(text)]


def expand(url: str) -> list[str]:
    """Objects, as ``files.expand_paths`` does for local paths (which puts them in binlog
    order): a prefix stands for its objects, those its ``.index`` objects list (by name, under
    the prefix) and its other objects named like ``NAME.000123``; an ``.index`` object for the
    logs it lists; any other object for itself."""
    if url.endswith("/") or isdir(url):
        entries = [(u, t) for u, _s, t in _listing(url)]
        indexes = sorted(u for u, t in entries if t != "directory" and u.endswith(".index"))
        listed = [f for i in indexes for f in _read_index(i)]
        names = {strip_compressed(f) for f in listed}
        rest = sorted((u for u, t in entries if t != "directory" and is_log_name(u)),
                      key=lambda u: (strip_compressed(u), u))
        return listed + [u for u in rest if strip_compressed(u) not in names]
    if url.endswith(".index"):
        return _read_index(url)
    size(url)  # an object that is not there: StorageError naming it (the size is kept for reading)
    return [url]


def find_logs(url: str) -> list[tuple[str, int]]:
    """Every object named like a log under ``url`` (all the way down), with its size; or the
    object itself."""
    fs, path = filesystem(url)
    if not isdir(url):
        return [(url, size(url))]
    found = _guard(url, lambda: fs.find(path.rstrip("/"), detail=True))
    out = []
    for name, e in sorted(found.items()):
        if e.get("type") == "directory" or not is_log_name(name):
            continue
        u = _url(fs, name, url)
        _SIZES[u] = int(e.get("size") or 0)
        out.append((u, _SIZES[u]))
    return out


def find_indexes(url: str) -> list[str]:
    """Every ``.index`` object under ``url`` (all the way down), or the object itself when it is
    one: what the audit reads to know which files an archive should have."""
    if url.endswith(".index") and not isdir(url):
        return [url]
    fs, path = filesystem(url)
    if not isdir(url):
        return []
    found = _guard(url, lambda: fs.find(path.rstrip("/"), detail=True))
    return [_url(fs, name, url) for name, e in sorted(found.items())
            if e.get("type") != "directory" and name.endswith(".index")]


def index_entries(url: str) -> list[str]:
    """The objects an ``.index`` object lists, by base name beside it (compressed twins too)."""
    return _read_index(url)


def output_fs(url: str) -> tuple[Any, str]:
    """The filesystem and path an output URL names (for writers that need more than one object,
    such as a dataset: write each object with ``write_atomic`` and its marker last)."""
    return filesystem(url)


def write_atomic(url: str | os.PathLike, data: Union[bytes, bytearray, memoryview, Writer]) -> None:
    """Write ``data`` (bytes, or a function that writes to the binary file it is given) to the
    object ``url`` so that readers see the whole of it or nothing: see the module docstring. A
    local path (or ``file://``) is ``binlogkit.writing.objects.write_atomic``'s, which the
    writers call for both (the reading layer does not import the writing one)."""
    if not is_url(url) or protocol(os.fspath(url)) == "file":
        raise ValueError(f"{os.fspath(url)}: a local path: binlogkit.writing.objects.write_atomic writes it")
    url = os.fspath(url)
    fs, path = filesystem(url)
    direct = protocol(url) in ("s3", "s3a", "gs", "gcs", "abfs", "az")  # objects appear on completion
    target = path if direct else f"{path}.tmp-{secrets.token_hex(6)}"

    failed: list[BaseException] = []  # the writer's own exception: raised as it is, not as a store error

    def run() -> None:
        f = fs.open(target, "wb")
        try:
            if callable(data):
                data(f)
            else:
                f.write(data)
        except BaseException as exc:
            if not isinstance(exc, Exception) or not _from_store(exc):
                failed.append(exc)
            discard = getattr(f, "discard", None)
            if discard is not None:
                discard()  # aborts the multipart upload; nothing is committed
            f.closed = True  # never closed (a close would commit what was buffered)
            if not direct:
                try:
                    fs.rm(target)
                except Exception:  # noqa: BLE001 - the original error matters more
                    pass
            raise
        f.close()  # the object appears here, whole
        if not direct:
            fs.mv(target, path)
    try:
        _guard(url, run)
    except StorageError:
        if failed:
            raise failed[0] from None
        raise
    _SIZES.pop(url, None)
    try:
        fs.invalidate_cache(path)
    except Exception:  # noqa: BLE001
        pass


__all__ = ["READ_BLOCK", "StorageError", "Url", "exists", "expand", "filesystem", "find_indexes", "find_logs", "forget",
           "index_entries", "is_url",
           "isdir", "join", "open_read", "output_fs", "size", "write_atomic"]

"""Where an export writes: the one module that turns ``--output`` into a filesystem (fsspec:
a local folder or any object store URL), and the protocol that keeps a killed run from looking
complete.

Object stores have no rename, so the protocol does not need one:

1. ``_SUCCESS`` of an earlier run is deleted first, then everything an earlier run wrote
   (``db=*/``, ``_schemas/``, ``_statements/``): from here on, nothing looks complete;
2. parts are written under the dataset (each part a single object: written whole or absent);
3. ``_schemas`` and ``_statements``;
4. ``_SUCCESS`` last, holding the summary (JSON): a reader that sees it sees a whole dataset.

A run killed anywhere leaves no ``_SUCCESS``; the next run starts with step 1. On a local disk
``_SUCCESS`` is written under a temporary name and renamed (atomic); on an object store it is one
PUT (atomic by the store). Names an export owns are only those above: other files in the folder
are left alone.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from typing import Any, Iterator

SUCCESS = "_SUCCESS"
OWNED_PREFIXES = ("db=", "_schemas", "_statements", SUCCESS, f".{SUCCESS}.binlogkit-")


def output_fs(url: str) -> tuple[Any, str]:
    """(fsspec filesystem, root path inside it) for a local folder or a URL: URLs through
    ``binlogkit.reading.storage`` (the AWS environment's endpoint and credentials, store errors typed)."""
    from ..reading import storage

    if storage.is_url(url) and not url.startswith("file://"):
        fs, root = storage.output_fs(url)
    elif not url.startswith("file://"):  # a local folder: no fsspec to import (0.13 s of CPU)
        return LocalFS(), os.path.abspath(url).rstrip("/") or "/"
    else:
        from .._optional import need

        fsspec = need("fsspec", "binlogkit export", extra="export")
        fs, root = fsspec.core.url_to_fs(url)
    return fs, root.rstrip("/") or "/"


class LocalFS:
    """The few fsspec filesystem calls export makes, on the local disk (what
    ``fsspec.implementations.local.LocalFileSystem`` does for them)."""

    protocol = "file"

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def ls(self, path: str, detail: bool = False) -> list[str]:
        assert not detail, "LocalFS.ls lists names only"
        return [join(path, name) for name in sorted(os.listdir(path))]

    def rm(self, path: str, recursive: bool = False) -> None:
        if os.path.isdir(path) and not os.path.islink(path):
            if not recursive:
                raise IsADirectoryError(path)
            import shutil

            shutil.rmtree(path)
        else:
            os.remove(path)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        os.makedirs(path, exist_ok=exist_ok)

    def invalidate_cache(self, path: str | None = None) -> None:
        pass

    def cat_file(self, path: str) -> bytes:  # an output's _SUCCESS, not an input
        from pathlib import Path

        return Path(path).read_bytes()


def join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *parts])


def begin(fs, root: str) -> None:
    """Step 1: no ``_SUCCESS``, then none of an earlier run's content."""
    marker = join(root, SUCCESS)
    if fs.exists(marker):
        fs.rm(marker)
    if fs.exists(root):
        if not fs.isdir(root):
            raise NotADirectoryError(f"{root}: exists and is not a folder")
        for entry in fs.ls(root, detail=False):
            name = entry.rstrip("/").rsplit("/", 1)[-1]
            if name.startswith(OWNED_PREFIXES):
                fs.rm(entry, recursive=True)
    else:
        fs.makedirs(root, exist_ok=True)
    try:
        fs.invalidate_cache(root)
    except (AttributeError, NotImplementedError):
        pass


@contextmanager
def locked(fs, root: str) -> Iterator[None]:
    """The run's hold on a local output folder (created if missing); nothing on object stores."""
    if not _local(fs):
        yield
        return
    from ..writing.safeio import SafeDir

    if os.path.lexists(root) and not os.path.isdir(root):
        raise NotADirectoryError(f"{root}: exists and is not a folder")
    os.makedirs(root, exist_ok=True)
    with SafeDir(root) as d, d.locked():
        yield


def finish(fs, root: str, summary: dict) -> None:
    """Step 4: ``_SUCCESS`` with the summary, written whole."""
    data = json.dumps(summary, indent=1, default=str).encode() + b"\n"
    if _local(fs):
        from ..writing.safeio import SafeDir

        with SafeDir(root) as d:
            d.replace(SUCCESS, data, new_mode=0o644)
    else:
        from ..reading import storage
        from ..writing import objects

        proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        objects.write_atomic(f"{proto}://{join(root, SUCCESS)}", data)
        storage.forget()


def _local(fs) -> bool:
    proto = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return proto in ("file", "local")


def read_success(url: str) -> dict | None:
    """The summary of a finished export at ``url``, None when there is no ``_SUCCESS``."""
    fs, root = output_fs(url)
    marker = join(root, SUCCESS)
    if not fs.exists(marker):
        return None
    return json.loads(fs.cat_file(marker))

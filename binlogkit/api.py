"""The calls the commands wrap, with the same parameter names: ``decode_files`` and
``verify_files``. Files are opened here (read-only) and nowhere else in the library."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable, Iterator

from .errors import BinlogError
from .events import Event, decode
from .scan import ScanResult, scan


COMPRESSED_SUFFIXES = (".xz", ".gz", ".bz2", ".lzma")


def _resolve(path: Path) -> Path:
    """``path``, or its compressed twin (``path.xz`` ...) when only that exists (archives)."""
    if path.exists():
        return path
    for suffix in COMPRESSED_SUFFIXES:
        twin = path.with_name(path.name + suffix)
        if twin.exists():
            return twin
    return path


def _is_log_name(p: Path) -> bool:
    name = p.name
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return Path(name).suffix[1:].isdigit()


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Files in order: an ``.index`` file stands for the logs it lists (relative to itself); a
    directory for its index files' logs, or else for its files named like ``NAME.000123``."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            indexes = sorted(p.glob("*.index"))
            if indexes:
                out += expand_paths(indexes)
            else:
                out += sorted(f for f in p.iterdir() if f.is_file() and _is_log_name(f))
            continue
        if p.suffix == ".index" and p.is_file():
            for line in p.read_text().splitlines():
                line = line.strip()
                if line:
                    name = Path(line)
                    out.append(_resolve(name if name.is_absolute() else p.parent / name.name))
        else:
            out.append(p)
    return out


@dataclass(frozen=True)
class Problem:
    """A damaged or unreadable input, met while decoding: everything before it was yielded."""

    path: str
    error: BinlogError


def decode_files(paths: Iterable[str | os.PathLike], *, start_position: int | None = None,
                 stop_position: int | None = None, start_datetime: datetime | None = None,
                 stop_datetime: datetime | None = None, types: set[int] | None = None,
                 verify: bool = True, strict: bool = True) -> Iterator[Event | Problem]:
    """Decoded events of every file, filtered; a ``Problem`` where a file is damaged (then the
    next file). Positions are file offsets of the event start (per file, like mysqlbinlog)."""
    from . import open_binlog

    t0 = start_datetime.timestamp() if start_datetime else None
    t1 = stop_datetime.timestamp() if stop_datetime else None
    for path in expand_paths(paths):
        try:
            for raw in open_binlog(str(path), verify=verify):
                if stop_position is not None and raw.offset >= stop_position:
                    break
                if start_position is not None and raw.offset < start_position:
                    continue
                if t1 is not None and raw.timestamp >= t1 and raw.type_code != 15:
                    break
                if t0 is not None and raw.timestamp < t0:
                    continue
                if types and raw.type_code not in types:
                    continue
                try:
                    ev = decode(raw, strict=strict)
                except BinlogError as exc:
                    yield Problem(str(path), exc.with_context(file=str(path), offset=raw.offset,
                                                              event_type=raw.type_name))
                    if strict:
                        break
                    continue
                yield ev
        except BinlogError as exc:
            yield Problem(str(path), exc.with_context(file=str(path)))


def verify_files(paths: Iterable[str | os.PathLike], *, progress=None) -> list[ScanResult]:
    """Framing and CRC32 of every file at full speed (the fast scan path)."""
    return [scan(p, progress=progress) for p in expand_paths(paths)]

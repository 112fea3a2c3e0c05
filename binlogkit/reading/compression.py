"""Compressed archives (``.xz``/``.lzma``, ``.gz``, ``.bz2``) read as streams, failing closed.

``Decompressed`` wraps a decompressing file object (local file or object-storage stream alike)
so that whatever its codec raises on damage — ``LZMAError``, ``zlib.error``, gzip's
``BadGzipFile`` (a bad CRC or length), bz2's ``OSError``, or ``EOFError`` for an archive cut
before its end marker (which click would print as a bare ``Aborted!``) — becomes a
``CompressionError`` naming the file and the decompressed offset reached. It reads one
decompressor step at a time (``read1``), so every whole event before the damage is still
delivered. Used by ``files.open_input`` and ``storage.open_read``; imports neither.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import Any, Callable

from ..errors import CompressionError
from .names import CODEC_NAMES  # noqa: F401  (re-exported)

OPENERS: dict[str, Callable[..., Any]] = {".xz": lzma.open, ".lzma": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}


class Decompressed(io.RawIOBase):
    """A decompressing stream whose failures are ``CompressionError`` naming the file and the
    decompressed offset reached (``pos``)."""

    def __init__(self, fh: Any, under: Any, name: str, codec: str) -> None:
        self._fh, self._under, self.name, self.codec = fh, under, name, codec
        self.pos = 0

    def _failed(self, exc: BaseException) -> CompressionError:
        if isinstance(exc, EOFError):
            what = f"the {self.codec} archive is cut short (it ends before its end-of-stream marker)"
        else:
            what = f"corrupt {self.codec} data ({type(exc).__name__}: {exc})" if str(exc) else \
                f"corrupt {self.codec} data ({type(exc).__name__})"
        return CompressionError(f"{what}, after {self.pos} decompressed bytes", decompressed=self.pos,
                                file=self.name)

    def readinto(self, b: Any) -> int:
        try:  # one step of the decompressor at a time: what came out before a failure is kept
            data = self._fh.read1(len(b))
        except OSError as exc:
            if exc.errno is not None:  # a real I/O error of the file under the stream
                raise
            raise self._failed(exc) from None
        except (EOFError, lzma.LZMAError, zlib.error) as exc:
            raise self._failed(exc) from None
        n = len(data)
        b[:n] = data
        self.pos += n
        return n

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        if not self.closed:
            try:
                self._fh.close()
            finally:
                self._under.close()
        super().close()

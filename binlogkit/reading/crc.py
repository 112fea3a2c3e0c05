"""The CRC32 function of the hot loops: ISA-L's when ``isal`` is installed (the ``fast`` extra;
the same polynomial and results as zlib's, several times faster), else zlib's."""

from __future__ import annotations

import zlib
from typing import Callable

CRC32: Callable[..., int]
try:
    from isal.isal_zlib import crc32 as CRC32
except ImportError:
    CRC32 = zlib.crc32

__all__ = ["CRC32"]

"""Optional dependencies, imported where they are needed and named when they are missing.

``need("pyspark", "spark")`` returns the module, or raises ``MissingDependency`` whose text is
the one line a user needs: what is missing, for what, and the pip line that installs it. The
CLI prints that line and exits 2 (usage), never a traceback.

The extra named is the one of pyproject.toml that installs the module *for that purpose*: a
module in several extras (pyarrow: ``export`` and ``spark``; fsspec: ``export``, ``s3`` and
``spark``) is named by the caller (``extra=``), else by ``EXTRAS``. A test checks every name
against pyproject.toml.

``load_c("_pullscan", "BINLOGKIT_NO_PULLSCAN", needs="summary")`` is the one loader of the C
accelerators (``binlogkit/_*.c``, built by setup.py when a compiler is there): the module, or None
when ``BINLOGKIT_PURE_PYTHON`` or the loop's own switch is set (benchmarks compare before / after),
when it was not built, or when it lacks ``needs`` (an older build); the caller's Python path then
does everything.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

EXTRAS = {"pyspark": "spark", "pyarrow": "spark", "fsspec": "s3", "s3fs": "s3", "zstandard": None}


class MissingDependency(ImportError):
    """An optional module is not installed; ``str()`` says which extra installs it."""


def need(module: str, purpose: str | None = None, *, extra: str | None = None) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = extra or EXTRAS.get(top)
        how = f"pip install 'binlogkit[{extra}]'" if extra else f"pip install {top}"
        why = f" (needed for {purpose})" if purpose else ""
        raise MissingDependency(f"{top} is not installed{why}: {how}", name=top) from exc


def load_c(module: str, switch: str | None = None, *, needs: str | None = None) -> Any:
    """The module (typed by the caller: its Protocol or ``_*.pyi``), or None."""
    if os.environ.get("BINLOGKIT_PURE_PYTHON") or (switch and os.environ.get(switch)):
        return None
    try:
        c_loop = importlib.import_module(f"binlogkit.{module}")
    except ImportError:  # built without a C compiler
        return None
    return c_loop if needs is None or hasattr(c_loop, needs) else None

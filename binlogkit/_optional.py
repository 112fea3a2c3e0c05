"""Optional dependencies, imported where they are needed and named when they are missing.

``need("pyspark", "spark")`` returns the module, or raises ``MissingDependency`` whose text is
the one line a user needs: what is missing, for what, and the pip line that installs it. The
CLI prints that line and exits 2 (usage), never a traceback.

The extra named is the one of pyproject.toml that installs the module *for that purpose*: a
module in several extras (pyarrow: ``export`` and ``spark``; fsspec: ``export``, ``s3`` and
``spark``) is named by the caller (``extra=``), else by ``EXTRAS``. A test checks every name
against pyproject.toml.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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

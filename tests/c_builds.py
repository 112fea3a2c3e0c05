"""The C loop a differential test runs: the one the library loaded, or the sanitized build that
``scripts/asan-*.sh`` made (its path in an environment variable, e.g. ``PULLSCAN_SO``)."""

from __future__ import annotations

import importlib.util
import os
from typing import Any


def c_loop(loaded: Any, env: str, module: str) -> Any:
    """``loaded`` (the library's module, or None when not built), unless ``$env`` names a build
    of ``module`` to load instead."""
    path = os.environ.get(env)
    if not path:
        return loaded
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec is not None and spec.loader is not None
    built = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(built)
    return built

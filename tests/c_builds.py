"""The C accelerators as the tests take them: the one the library loaded, or the sanitized build
that ``scripts/asan-*.sh`` made (its path in an environment variable, e.g. ``PULLSCAN_SO``); a
missing build fails where it could have been built and is skipped where it could not."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest


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


def require_built(loaded: Any, module: str, fallback: str) -> Any:
    """``loaded`` (the library's C module); when it is None, the test fails where a C compiler and
    Python's headers are present (a broken install: the accelerator should have been built), else
    it is skipped (``fallback``: what does the work without it)."""
    if loaded is not None:
        return loaded
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"], "Python.h").exists()
    if shutil.which(cc) and headers and not os.environ.get("BINLOGKIT_PURE_PYTHON"):
        pytest.fail(f"a C compiler and Python's headers are present but {module} is not built: "
                    "reinstall (pip install -e .) and read the build output")
    pytest.skip(f"no C compiler or no Python headers: the accelerator is not built ({fallback} does the work)")

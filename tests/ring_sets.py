"""The multi-source ring (A -> B, A -> C, B -> C; ``fixtures/lab/build.py`` build_ring) on every
MariaDB kind the lab has, for the ring tests to take as a parameter (style rule 14: one proof,
every kind with the feature; ``gtid_ignore_duplicates`` is MariaDB's).

``mariadb-10.11``: the committed sets ``ring-duplicates-off`` / ``-on`` (200 transactions).
``mariadb-11.8``: the same ring built live from the lab's chroot once per session (60
transactions: a few seconds per set), its files stored uncompressed under a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import store

KINDS = ["mariadb-10.11",
         pytest.param("mariadb-11.8", marks=[pytest.mark.server, pytest.mark.kind("mariadb-11.8")], id="mariadb-11.8")]
LIVE_COUNT = 60


@pytest.fixture(scope="session")
def ring_set(tmp_path_factory):
    """``ring_set(name, kind)`` -> (manifest, folder) of ring set ``name`` on ``kind``."""
    built: dict[tuple[str, str], tuple[dict, Path]] = {}

    def get(name: str, kind: str) -> tuple[dict, Path]:
        if kind == "mariadb-10.11":
            return store.manifest(name), store.materialize(name)
        if (name, kind) not in built:
            from fixtures.lab import build

            out = tmp_path_factory.mktemp(kind) / name
            old, build.XZ_OVER = build.XZ_OVER, 1 << 40  # the files as the server wrote them
            try:
                m = build.build_ring(out, ignore_duplicates=name.endswith("-on"), count=LIVE_COUNT, kind=kind)
            finally:
                build.XZ_OVER = old
            built[(name, kind)] = (m, out)
        return built[(name, kind)]

    return get

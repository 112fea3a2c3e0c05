"""Audit binlog / relay-log archives for gaps: a pure per-file pass and a merge.

``file_manifest(path)`` streams one file on the fast scan path (no row bodies) into a small
JSON-able manifest; ``merge(manifests)`` orders files into series and derives the findings with
GTID algebra. Both are plain Python; ``run_local`` fans the per-file pass out over a process
pool (the embedded default). See docs/audit.md.
"""

from .engine import audit_paths, run_local
from .manifest import file_manifest
from .merge import Finding, merge

__all__ = ["Finding", "audit_paths", "file_manifest", "merge", "run_local"]

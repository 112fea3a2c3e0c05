"""Audit binlog / relay-log archives for gaps: a pure per-file pass and a pure merge.

``file_summary(path)`` streams one file on the fast scan path (no row bodies) into a compact
summary whose size does not depend on the transaction count; ``merge(summaries)`` orders files
into series and derives the findings with interval-set algebra (``plan_directory`` /
``merge_directory`` per directory, the unit both engines parallelise). ``run_local`` fans the
per-file pass out over a process pool (the embedded default); the Spark job is ``spark/jobs/audit.py``.
See docs/audit.md.
"""

from .engine import audit_paths, run_local
from .merge import Finding, merge, merge_directory, plan_directory
from .summary import file_summary

__all__ = ["Finding", "audit_paths", "file_summary", "merge", "merge_directory", "plan_directory", "run_local"]

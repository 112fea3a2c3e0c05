"""Repair a crashed replica's relay directory: ``plan_recovery`` (pure) and ``apply_plan``;
a crashed former primary's binlog folder: ``primary.plan_binlog_recovery``; ``plan`` picks one."""

from __future__ import annotations

import os

from .apply import RecoveryRefused, apply_plan
from .plan import Plan, plan_recovery
from ..reading.source import Input

__all__ = ["Plan", "RecoveryRefused", "apply_plan", "plan", "plan_recovery"]


def plan(folder: Input | str | os.PathLike, *, former_primary: bool = False, keep_through: str | None = None,
         replica: Input | str | os.PathLike | None = None, connection: str | None = None, mode: str | None = None,
         relay_base: str | None = None, applied_gtids: str | None = None,
         replica_binlog: Input | str | os.PathLike | None = None) -> Plan:
    """The plan ``binlogkit recover`` shows: for a crashed former primary's binlog folder
    (``former_primary``: cut what no replica received; ``keep_through`` / ``replica`` say what
    was), else for a replica's relay directory (``relay_base`` may name its ``.index``)."""
    if former_primary:
        from .primary import plan_binlog_recovery

        return plan_binlog_recovery(folder, keep_through=keep_through, replica=replica)
    return plan_recovery(folder, connection=connection, mode=mode,
                         relay_base=relay_base.removesuffix(".index") if relay_base else None,
                         applied_gtids=applied_gtids, replica_binlog=replica_binlog)

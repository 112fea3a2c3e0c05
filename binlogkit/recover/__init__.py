"""Repair a crashed replica's relay directory: ``plan_recovery`` (pure) and ``apply_plan``."""

from .apply import RecoveryRefused, apply_plan
from .plan import Plan, plan_recovery

__all__ = ["Plan", "RecoveryRefused", "apply_plan", "plan_recovery"]

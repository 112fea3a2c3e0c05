"""Point-in-time recovery from a binlog archive: a pure-reading plan (``plan.py``) over file heads,
the audit's compact summaries and one streaming pass over the first and last files; the replay
command for the server's own tools (``flavors.py``); backup coordinates (``backup.py``).
See docs/pitr.md.
"""

from .backup import BackupPoint, parse_backup_info, read_backup_info
from .plan import From, PitrUsage, Until, command, plan_pitr

__all__ = ["BackupPoint", "From", "PitrUsage", "Until", "command", "parse_backup_info", "plan_pitr",
           "read_backup_info"]

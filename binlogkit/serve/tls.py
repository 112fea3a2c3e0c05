"""TLS for ``serve``: the server context of ``--ssl-cert`` / ``--ssl-key`` (TLS 1.2 at least), and
the rule that a listener beyond loopback needs it (``--allow-cleartext`` says otherwise)."""

from __future__ import annotations

import ipaddress
from typing import Any

from ..errors import UsageError


class ServeUsageError(UsageError):
    """``serve`` was asked for what it refuses: a cleartext listener beyond loopback, TLS files
    that do not load, an archive with no binlog."""


def server_context(cert: str, key: str | None) -> Any:
    import ssl

    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise ServeUsageError(f"cannot use the TLS files given (--ssl-cert/--ssl-key): {exc}") from None
    return ctx


def loopback(bind: str) -> bool:
    if bind in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(bind).is_loopback
    except ValueError:
        return False


def check_listener(bind: str, tls: bool, allow_cleartext: bool) -> None:
    if not loopback(bind) and not tls and not allow_cleartext:
        raise ServeUsageError(f"--bind {bind} listens beyond loopback: replication passwords and binlogs would cross "
                              "the network in clear; give --ssl-cert and --ssl-key (or --allow-cleartext)")

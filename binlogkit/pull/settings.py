"""pull's settings from its options and a mysql option file, as the mysql clients read them:
``config`` builds the ``PullConfig``; what cannot be used is a ``UsageError`` (exit 2)."""

from __future__ import annotations

import os
import re

from ..errors import UsageError


def client_defaults(path: str | None) -> dict:
    """The [client] section of a mysql option file (user, password, host, port), then [binlogkit]."""
    if not path:
        return {}
    import configparser

    cp = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False)
    try:
        with open(path, encoding="utf-8") as fh:
            cp.read_file(fh)
    except (OSError, configparser.Error) as exc:
        raise UsageError(f"cannot read --defaults-file {path}: {exc}") from None
    out: dict = {}
    for group in ("client", "binlogkit"):   # as the mysql clients: [client], then the tool's own group
        if cp.has_section(group):
            out.update({k.replace("-", "_"): (v or "").strip().strip("'\"") for k, v in cp.items(group)})
    return out


def tls_options(d: dict, ssl_mode, ssl_ca, ssl_cert, ssl_key, server_public_key, get_server_public_key):
    """The TLS settings: the options, else ``ssl-*`` of the option file; a CA given without a
    mode means VERIFY_CA (a CA given is a CA used), else PREFERRED as the mysql clients."""
    from . import SslMode, TlsOptions

    ca = ssl_ca or d.get("ssl_ca") or None
    implied = "DISABLED" if "skip_ssl" in d else "VERIFY_CA" if ca else "PREFERRED"
    mode_text = (ssl_mode or d.get("ssl_mode") or implied).upper()
    try:
        mode = SslMode(mode_text)
    except ValueError:
        raise UsageError(f"ssl-mode must be one of {', '.join(m.value for m in SslMode)}, not {mode_text!r}") from None
    for path in (ca, ssl_cert or d.get("ssl_cert"), ssl_key or d.get("ssl_key"),
                 server_public_key or d.get("server_public_key_path")):
        if path and not os.path.isfile(path):
            raise UsageError(f"no such file: {path}")
    get_key = get_server_public_key or d.get("get_server_public_key", "0") in ("", "1", "ON", "on", "true", "TRUE")
    return TlsOptions(mode=mode, ca=ca, cert=ssl_cert or d.get("ssl_cert") or None,
                      key=ssl_key or d.get("ssl_key") or None,
                      server_public_key=server_public_key or d.get("server_public_key_path") or None,
                      get_server_public_key=get_key)


def config(*, host, port, user, password_file, defaults_file, ssl_mode, ssl_ca, ssl_cert, ssl_key,
           server_public_key, get_server_public_key, server_id, directory, start_file, start_position, gtid,
           semisync, sync_mode, until_end, heartbeat, read_timeout, max_event_size, max_reconnects):
    """The ``PullConfig`` of ``binlogkit pull``'s options (the password from --password-file,
    the option file or MYSQL_PWD; never from the command line)."""
    from . import PullConfig

    d = client_defaults(defaults_file)
    if password_file:
        with open(password_file, encoding="utf-8") as fh:
            password = fh.readline().rstrip("\r\n")
    else:
        password = d.get("password") or os.environ.get("MYSQL_PWD", "")
    user = user or d.get("user")
    if not user:
        raise UsageError("--user is required (or user= in the [client] section of --defaults-file)")
    if sync_mode not in ("trx", "off", "none") and not (sync_mode.isdigit() and int(sync_mode) > 0):
        raise UsageError(f"--sync must be trx, off, none or a number of events, not {sync_mode!r}")
    if sync_mode == "none" and semisync:
        raise UsageError("--sync none promises nothing after a crash of the machine; a semisync member's "
                         "acknowledgement promises its transaction is on disk: use trx, N or off with --semisync")
    m = re.fullmatch(r"(\d+)([KMG]?)B?", max_event_size.strip().upper())
    max_event = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)] if m else 0
    if max_event < 1 << 24:
        raise UsageError(f"--max-event-size must be a size of at least 16M (an event under 16 MiB comes in one "
                         f"packet), not {max_event_size!r}")
    cfg = PullConfig(host=host or d.get("host") or "127.0.0.1", port=int(port or d.get("port") or 3306), user=user,
                     password=password, server_id=server_id, dir=directory, start_file=start_file,
                     start_position=start_position, gtid=gtid, semisync=semisync, sync=sync_mode,
                     until_end=until_end, heartbeat_s=heartbeat,
                     tls=tls_options(d, ssl_mode, ssl_ca, ssl_cert, ssl_key, server_public_key, get_server_public_key))
    cfg.read_timeout, cfg.max_event_size, cfg.max_reconnects = read_timeout, max_event, max_reconnects
    return cfg

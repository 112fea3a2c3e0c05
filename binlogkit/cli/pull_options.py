"""Generated from the click declaration of ``binlogkit pull`` (``cli/pull.py``) by ``python -m
binlogkit.cli.entry --write`` (``make lean-cli``): do not edit. ``entry.parse`` reads it."""

OPTIONS = (
    ('host', ('--host',), 'str', None, False, None),
    ('port', ('--port',), 'int', None, False, None),
    ('user', ('--user',), 'str', None, False, None),
    ('password_file', ('--password-file',), 'path', None, False, (True, True, False, True, False, False)),
    ('defaults_file', ('--defaults-file',), 'path', None, False, (True, True, False, True, False, False)),
    ('ssl_mode', ('--ssl-mode',), 'choice', None, False, (('DISABLED', 'PREFERRED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'), False)),
    ('ssl_ca', ('--ssl-ca',), 'path', None, False, (True, True, False, True, False, False)),
    ('ssl_cert', ('--ssl-cert',), 'path', None, False, (True, True, False, True, False, False)),
    ('ssl_key', ('--ssl-key',), 'path', None, False, (True, True, False, True, False, False)),
    ('server_public_key', ('--server-public-key',), 'path', None, False, (True, True, False, True, False, False)),
    ('get_server_public_key', ('--get-server-public-key',), 'flag', False, False, None),
    ('server_id', ('--server-id',), 'int', None, True, None),
    ('directory', ('-o', '--output', '--dir'), 'path', None, True, (False, False, True, True, False, False)),
    ('start_file', ('--start-file',), 'str', None, False, None),
    ('start_position', ('--start-position',), 'int', None, False, None),
    ('gtid', ('--gtid',), 'str', None, False, None),
    ('semisync', ('--semisync',), 'flag', False, False, None),
    ('sync_mode', ('--sync',), 'str', 'trx', False, None),
    ('until_end', ('--until-end',), 'flag', False, False, None),
    ('heartbeat', ('--heartbeat',), 'float', 1.0, False, None),
    ('read_timeout', ('--read-timeout',), 'float', 10.0, False, (0.5, None)),
    ('max_event_size', ('--max-event-size',), 'str', '1G', False, None),
    ('max_reconnects', ('--max-reconnects',), 'int', None, False, (0, None)),
    ('as_json', ('--json',), 'flag', False, False, None),
)

"""Encrypted binlogs and relay logs: keys in, plaintext events out, below every command.

* ``keys``     — the key value every reader and writer takes (``Keys``): MariaDB
  ``file_key_management`` key files (plain or OpenSSL "Salted__" encrypted), MySQL keyrings.
* ``mariadb``  — ``encrypt_binlog=ON``: a clear Start_encryption event, then every event
  encrypted on its own with AES-CBC or AES-CTR, IV = nonce || event offset.
* ``mysql``    — ``binlog_encryption=ON``: the 512-byte file header and AES-CTR over the rest.

The reader (``framing.walk_events``) calls in here; nothing here opens a binlog, prints or keeps
state between files. Key bytes live only in ``Keys`` (whose ``repr`` hides them) and in the
cipher contexts of the ``cryptography`` package.
"""

from .keys import Cipher, Keys, KeySpec, load_keys

__all__ = ["Cipher", "KeySpec", "Keys", "load_keys"]

"""The AES primitives of ``cryptography`` (OpenSSL), loaded on first use: both flavors' ciphers
(``crypto.mariadb``, ``crypto.mysql``) take them from here."""

from __future__ import annotations

from ..errors import KeyFileError


def aes():
    """The ``cryptography`` primitives (Cipher, algorithms, modes), or a KeyFileError saying
    how to install them."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:  # pragma: no cover - the extra is in every install target
        raise KeyFileError("encrypted files need the 'cryptography' package: pip install 'binlogkit[encryption]'") \
            from None
    return Cipher, algorithms, modes

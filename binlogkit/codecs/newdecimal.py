"""MySQL's binary DECIMAL (NEWDECIMAL) format, read by row images and by binary JSON alike.

``precision`` digits of which ``scale`` after the point; each side stored as groups of 9
digits in 4 big-endian bytes, a shorter leading (integer part) or trailing (fraction) group in
1-4 bytes; the sign in the first byte's top bit (set for positive), negative values stored
with every bit inverted. Source: MySQL ``strings/decimal.cc`` (decimal2bin / bin2decimal).

Lives here, below both ``codecs.mysql_json`` and ``rowvalues.values``, so that neither
imports the other for it.
"""

from __future__ import annotations

import decimal


def dec_size(digits: int) -> int:
    return digits // 9 * 4 + (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[digits % 9]


def read_decimal(b: bytes, p: int, precision: int, scale: int) -> tuple[decimal.Decimal, int]:
    intg = precision - scale
    size = dec_size(intg) + dec_size(scale)
    raw = bytearray(b[p:p + size])
    if len(raw) < size:
        raise IndexError
    negative = not raw[0] & 0x80
    raw[0] ^= 0x80
    if negative:
        raw = bytearray(x ^ 0xFF for x in raw)
    digits, q = [], 0
    lead = intg % 9
    sizes = ([(0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[lead]] if lead else []) + [4] * (intg // 9)
    for s in sizes:
        digits.append(str(int.from_bytes(raw[q:q + s], "big")).zfill(9 if s == 4 and not (q == 0 and lead) else lead))
        q += s
    ip = "".join(digits).lstrip("0") or "0"
    frac = []
    for i in range(scale // 9):
        frac.append(str(int.from_bytes(raw[q:q + 4], "big")).zfill(9))
        q += 4
    rest = scale % 9
    if rest:
        s = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)[rest]
        frac.append(str(int.from_bytes(raw[q:q + s], "big")).zfill(rest))
        q += s
    text = ("-" if negative else "") + ip + ("." + "".join(frac) if scale else "")
    return decimal.Decimal(text), p + size

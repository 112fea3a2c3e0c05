"""Structure-aware mutations of binlog files: events are cut out, changed, and put back with
``event_size``, ``log_pos`` and the CRC32 made right again, so that a mutation reaches the body
parsers instead of stopping at the framing check. Some mutations deliberately leave the size or
the checksum wrong (and some work on raw bytes), so the framing code is fuzzed too.

Independent of binlogkit's framing code on purpose: the walk here is a plain loop over the
19-byte header, and the checksum is zlib's CRC32 with the Format_description rule (the
in-use flag cleared) written out again.
"""

from __future__ import annotations

import random
import struct
import zlib

MAGIC = b"\xfebin"
HEADER = struct.Struct("<IBIIIH")
FDE = 15
# every type code some server writes, and a few nobody does
TYPE_CODES = list(range(0, 43)) + list(range(160, 172)) + [43, 99, 159, 172, 255]
INTERESTING = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF,
               0x80000000, 0xFFFFFFFF, 0x0FFFFFFF, 1 << 30, (1 << 63) - 1, (1 << 64) - 1, 251, 252, 253, 254]


class Event:
    __slots__ = ("ts", "code", "sid", "log_pos", "flags", "body", "crc")

    def __init__(self, ts, code, sid, log_pos, flags, body, crc):
        self.ts, self.code, self.sid, self.log_pos, self.flags, self.body, self.crc = (
            ts, code, sid, log_pos, flags, body, crc)

    def copy(self) -> "Event":
        return Event(self.ts, self.code, self.sid, self.log_pos, self.flags, self.body, self.crc)


def _fde_crc(data: bytes) -> bool:
    """Whether a Format_description carries a checksum (5.6.1+ / 5.3+ layouts) and what follows."""
    if len(data) < 19 + 57 + 5:
        return False, False
    version = data[21:71].split(b"\x00", 1)[0].decode("ascii", "replace")
    nums = []
    for part in version.split("-", 1)[0].split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit())
        nums.append(int(digits or 0))
    nums += [0] * (3 - len(nums))
    aware = tuple(nums) >= ((5, 3, 0) if "mariadb" in version.lower() else (5, 6, 1))
    return aware, aware and data[-5] == 1


def split(data: bytes) -> tuple[list[Event], bytes]:
    """Events of a binlog (as far as they frame) and the bytes after the last whole one."""
    events: list[Event] = []
    pos = 4
    crc_on = False
    while pos + 19 <= len(data):
        ts, code, sid, size, log_pos, flags = HEADER.unpack_from(data, pos)
        if size < 19 or pos + size > len(data):
            break
        ev = data[pos:pos + size]
        has = crc_on
        if code == FDE:
            has, crc_on = _fde_crc(ev)
        if has and size < 23:
            break
        events.append(Event(ts, code, sid, log_pos, flags, ev[19:size - 4 if has else size], has))
        pos += size
    return events, data[pos:]


def crc_of(ev: bytes) -> int:
    if ev[4] == FDE and ev[17] & 1:
        ev = ev[:17] + bytes([ev[17] & 0xFE]) + ev[18:]
    return zlib.crc32(ev)


def join(events: list[Event], tail: bytes = b"", *, fix_log_pos: bool = True) -> bytes:
    out = [MAGIC]
    pos = 4
    for e in events:
        size = 19 + len(e.body) + (4 if e.crc else 0)
        log_pos = (pos + size) & 0xFFFFFFFF if fix_log_pos and e.log_pos else e.log_pos
        ev = HEADER.pack(e.ts & 0xFFFFFFFF, e.code & 0xFF, e.sid & 0xFFFFFFFF, size & 0xFFFFFFFF,
                         log_pos & 0xFFFFFFFF, e.flags & 0xFFFF) + e.body
        if e.crc:
            ev += crc_of(ev).to_bytes(4, "little")
        out.append(ev)
        pos += size
    out.append(tail)
    return b"".join(out)


# --- body mutations -------------------------------------------------------------------------

def _int_at(body: bytes, rnd: random.Random) -> bytes:
    if not body:
        return body
    width = rnd.choice((1, 1, 2, 4, 4, 8))
    p = rnd.randrange(len(body))
    choice = rnd.random()
    if choice < 0.5:
        v = rnd.choice(INTERESTING)
    elif choice < 0.8:  # a length near the body's own
        v = max(0, len(body) - p + rnd.randint(-4, 4))
    else:
        old = int.from_bytes(body[p:p + width], "little")
        v = old + rnd.choice((-1, 1, -2, 2, 16, -16))
    v &= (1 << (8 * width)) - 1
    return body[:p] + v.to_bytes(width, "little")[:len(body) - p] + body[p + width:]


def _flip(body: bytes, rnd: random.Random) -> bytes:
    if not body:
        return bytes([rnd.randrange(256)])
    b = bytearray(body)
    for _ in range(rnd.choice((1, 1, 2, 4))):
        p = rnd.randrange(len(b))
        b[p] = b[p] ^ (1 << rnd.randrange(8)) if rnd.random() < 0.5 else rnd.randrange(256)
    return bytes(b)


def _insert(body: bytes, rnd: random.Random) -> bytes:
    p = rnd.randint(0, len(body))
    n = rnd.choice((1, 2, 4, 8, 16, 100))
    return body[:p] + bytes(rnd.randrange(256) for _ in range(n)) + body[p:]


def _delete(body: bytes, rnd: random.Random) -> bytes:
    if not body:
        return body
    p = rnd.randrange(len(body))
    n = rnd.choice((1, 2, 4, 8, 32, len(body)))
    return body[:p] + body[p + n:]


def _truncate(body: bytes, rnd: random.Random) -> bytes:
    return body[:rnd.randint(0, len(body))]


def _dup_range(body: bytes, rnd: random.Random) -> bytes:
    if len(body) < 2:
        return body + body
    a = rnd.randrange(len(body))
    b = rnd.randint(a, min(len(body), a + 64))
    p = rnd.randint(0, len(body))
    return body[:p] + body[a:b] + body[p:]


BODY_MUTATIONS = (_int_at, _int_at, _int_at, _flip, _flip, _insert, _delete, _truncate, _dup_range)


def mutate(data: bytes, rnd: random.Random, *, others: list[bytes] | None = None, body_mutator=None) -> bytes:
    """One mutant of the binlog ``data``. ``others``: more seeds to splice events from;
    ``body_mutator(body) -> body``: an extra byte mutator (libFuzzer's, under atheris)."""
    events, tail = split(data)
    if not events:  # not a binlog any more: raw byte mutations only
        return _raw(data or MAGIC, rnd)
    roll = rnd.random()
    if roll < 0.08:
        return _raw(data, rnd)
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        kind = rnd.random()
        i = rnd.randrange(len(events))
        e = events[i] = events[i].copy()
        if kind < 0.62:
            if body_mutator is not None and rnd.random() < 0.5:
                e.body = body_mutator(e.body)
            else:
                e.body = rnd.choice(BODY_MUTATIONS)(e.body, rnd)
        elif kind < 0.70:
            e.code = rnd.choice(TYPE_CODES)
        elif kind < 0.75:
            e.flags = rnd.choice((0, 1, 0x20, 0x40, 0x80, 0x8000, e.flags ^ (1 << rnd.randrange(16))))
        elif kind < 0.78:
            e.sid = rnd.choice(INTERESTING) & 0xFFFFFFFF
        elif kind < 0.80:
            e.ts = rnd.choice(INTERESTING) & 0xFFFFFFFF
        elif kind < 0.84:
            e.log_pos = rnd.choice(INTERESTING) & 0xFFFFFFFF
        elif kind < 0.89:
            del events[i]
            if not events:
                return MAGIC
        elif kind < 0.93:
            events.insert(rnd.randrange(len(events) + 1), e.copy())
        elif kind < 0.96:
            j = rnd.randrange(len(events))
            events[i], events[j] = events[j], events[i]
        else:
            src = rnd.choice(others) if others else data
            theirs, _ = split(src)
            if theirs:
                x = rnd.choice(theirs).copy()
                x.crc = e.crc
                events.insert(rnd.randrange(len(events) + 1), x)
    out = join(events, tail if rnd.random() < 0.8 else tail[:rnd.randint(0, len(tail))],
               fix_log_pos=rnd.random() < 0.8)
    if rnd.random() < 0.1:  # a size field or checksum left wrong on purpose
        out = _break_frame(out, rnd)
    return out


def _break_frame(data: bytes, rnd: random.Random) -> bytes:
    events_at = []
    pos = 4
    while pos + 19 <= len(data):
        events_at.append(pos)
        size = int.from_bytes(data[pos + 9:pos + 13], "little")
        if size < 19:
            break
        pos += size
    if not events_at:
        return data
    at = rnd.choice(events_at)
    b = bytearray(data)
    r = rnd.random()
    if r < 0.4:
        size = rnd.choice((0, 1, 18, 19, 22, 23, 1 << 30, (1 << 30) + 1, 0xFFFFFFFF, len(data) - at + 1,
                           len(data) - at - 1))
        b[at + 9:at + 13] = (size & 0xFFFFFFFF).to_bytes(4, "little")
    elif r < 0.7:  # checksum wrong
        b[-1 if rnd.random() < 0.5 else at + 20 if at + 20 < len(b) else -1] ^= 0x55
    else:  # torn: cut inside an event
        b = b[:rnd.randint(at, len(b))]
    return bytes(b)


def _raw(data: bytes, rnd: random.Random) -> bytes:
    b = bytearray(data)
    r = rnd.random()
    if r < 0.3 and b:
        del b[rnd.randint(0, len(b)):]
    elif r < 0.6:
        for _ in range(rnd.randint(1, 8)):
            if b:
                b[rnd.randrange(len(b))] = rnd.randrange(256)
    elif r < 0.8:
        p = rnd.randint(0, len(b))
        b[p:p] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 32)))
    else:
        b = bytearray(_break_frame(bytes(b), rnd))
    return bytes(b)


def mutate_text(text: bytes, rnd: random.Random) -> bytes:
    """Line-level mutations of index and info files (master.info, relay-log.info, *.index)."""
    lines = text.split(b"\n")
    r = rnd.random()
    i = rnd.randrange(len(lines))
    if r < 0.25:
        lines[i] = rnd.choice((b"", b"0", b"-1", b"18446744073709551616", b"999999999999", b"x" * 300,
                               b"../../etc/passwd", b"relay-bin.000004", b"relay-bin.999999", b"\xff\xfe",
                               b"0-1-99999999999999999999", b"3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5"))
    elif r < 0.45:
        del lines[i]
    elif r < 0.6:
        lines.insert(i, lines[rnd.randrange(len(lines))])
    elif r < 0.8 and lines[i]:
        b = bytearray(lines[i])
        b[rnd.randrange(len(b))] = rnd.randrange(256)
        lines[i] = bytes(b)
    else:
        return text[:rnd.randint(0, len(text))]
    return b"\n".join(lines)

"""Framing: the one loop that cuts events out of a binlog byte stream, and the CRC32 rule.

``walk_events`` walks the 19-byte headers over a sliding window (no bytes object per event
unless asked for) and checks every event's CRC32; it yields one ``Frame`` per event (a named
tuple: offset, header fields, bytes when wanted, checksum verdict and the ``Format`` in force).
Nothing calls it directly but ``source`` (the one opener: ``Input.frames``), on which ``scan``
(verdicts), ``reader`` (RawEvent values) and every command are built.

Checksum rule: CRC32 (zlib's, the same polynomial as ``crcmod.predefined 'crc-32'``) over the
whole event minus its last 4 bytes. MySQL computes the FDE's CRC with LOG_EVENT_BINLOG_IN_USE_F
cleared, so the flag a crashed or open binlog still carries must be cleared before checking.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, Iterator, NamedTuple

from ..codecs.format_description import fde_is_checksum_aware
from ..codecs.header import HEADER_STRUCT, LEN_HEADER, OFS_FLAGS
from ..constants import LEN_CHECKSUM, ChecksumAlg, EventFlag, EventType, event_type_name
from .crc import CRC32
from .crc import event_crc as event_crc  # (there: pull reads it without Construct)
from ..errors import (BinlogError, ChecksumError, CompressionError, EventSizeError,
                     NoFormatDescriptionError, TruncatedEventError)
from .format import Format, format_of_event

_FDE = EventType.FORMAT_DESCRIPTION_EVENT
_START_ENCRYPTION = EventType.START_ENCRYPTION_EVENT
_START_V3 = EventType.START_EVENT_V3
WINDOW = 4 << 20  # bytes read at a time: memory stays flat whatever the file size
HEAD_READ = 64 << 10  # with ``start``: bytes read for the file's head, before the jump
# windows of walks that ended, for the next walk: a fresh 4 MB bytearray is zeroed (and its pages
# faulted in) whatever the walk reads -- a follower's look reads a few kB of a growing file
_SPARE: list[bytearray] = []

MYSQL_ENCRYPTED_MAGIC = b"\xfdbin"
# Servers cap an event at max_allowed_packet (at most 1 GiB); a bigger event_size is damage,
# and must not make the reader try to buffer gigabytes.
MAX_EVENT_SIZE = (1 << 30) + (1 << 16)

# taker(buf, rel, filled, at, crc_on) -> (rel, at): a C loop handed the window between two frames
Taker = Callable[[bytearray, int, int, int, bool], tuple[int, int]]


class Frame(NamedTuple):
    """One event as the framing loop cuts it: where it is, its header, its bytes (``data``: the
    whole event, for Format_descriptions and the types asked for, else None), its checksum
    verdict (None: no checksum) and the ``Format`` in force (for a Format_description: its own;
    None before the first). A tuple: as cheap to make as the loop's bare tuple was."""

    offset: int
    type_code: int
    timestamp: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int
    data: Any  # bytes, or None (a type not in ``want``)
    checksum_ok: bool | None
    format: Format | None

    @property
    def end_offset(self) -> int:
        return self.offset + self.event_size




def checksum_on(fde: bytes) -> bool:
    """Whether events after this FDE end with a CRC32 (alg byte sits before the FDE's own CRC)."""
    return fde_is_checksum_aware(fde) and fde[-5] == ChecksumAlg.CRC32


def skip_to(fh: Any, here: int, start: int) -> None:
    """Move ``fh``, whose next unread byte is at stream offset ``here``, to offset ``start``:
    ``seek`` when it can, else its bytes are read and dropped (a decompressing stream)."""
    if getattr(fh, "seekable", lambda: False)():
        fh.seek(start)
        return
    left = start - here
    if left < 0:
        raise ValueError(f"start {start}: the stream is already past it (at {here})")
    chunk = bytearray(min(left, WINDOW) or 1)
    mv = memoryview(chunk)
    while left > 0:
        got = fh.readinto(mv[:min(left, len(chunk))])
        if not got:
            raise TruncatedEventError(f"start {start} is past the end of the stream", offset=start)
        left -= got


def walk_events(fh: Any, *, verify: bool = True, want: frozenset[int] | set[int] | None = frozenset(),
                keys=None, notes: dict | None = None, records: bool = True,
                taker: Taker | None = None, start: int | None = None, stop: int | None = None) -> Iterator[Frame]:
    """Yield a ``Frame`` for every event of a binlog byte stream positioned right after its
    4-byte magic (``source`` reads the magic and unwraps the containers: call it through
    ``source.Input.frames`` / ``source.frames_of_stream``). ``data`` is the whole event's bytes
    for Format_descriptions and for types in ``want`` (every event when ``want`` is None), else
    None. ``checksum_ok`` is None when the event carries no checksum; a mismatch raises
    ``ChecksumError`` when ``verify``, else it is reported as False. ``format`` is the format in
    force (``format.format_of_event``: the one FDE -> Format step; a Format_description that
    does not parse raises its ``FormatError`` at its offset). Raises a ``BinlogError`` (no file
    name: callers add it) at the first problem. This is the one framing loop of binlogkit.

    Header walk over a sliding window: ``buf[rel:filled]`` holds the stream from ``at`` on.

    Encrypted events (``crypto``): after a MariaDB Start_encryption every event is decrypted in
    the window before anything looks at it, with ``keys`` (a ``crypto.Keys``); without a key
    for it, ``KeyRequiredError``. ``notes["cipher"]`` (when a dict is given) receives the
    ``crypto.mariadb.EventCipher`` in use, whose ``cipher`` says what the events proved.

    ``records=False``: bare tuples of the same fields in the same order (``Frame._fields``),
    for the hot loops that unpack them (audit's per-file pass, the transaction walk, ``verify``'s
    Python walk): making a ``Frame`` costs about 0.2 us an event, a sixth of this loop's time.

    ``taker``: after each frame the consumer has taken (in the clear: never once a
    Start_encryption was read), ``taker(buf, rel, filled, at, crc_on)`` is handed the window,
    ``buf[rel:filled]`` holding the stream from offset ``at``; it consumes the whole events it
    settles itself (a C loop: audit's ``_pullscan.summary``), stopping before any other, and
    returns ``(rel, at)`` after them. Those events yield no frame: the taker accounts for them.
    It is handed the window again when an event it stopped at was not whole in it: once the window
    is refilled (a file's reads fill it past that event), before that event is framed here.

    ``start``: begin at that offset, an event boundary (a transaction's first event, found by an
    earlier header walk), after the file's head: the Format_description (and a MariaDB
    Start_encryption right after it) is read and yielded as ever, then the stream jumps to
    ``start`` (``seek`` when the stream can, else its bytes are read and dropped: archives) and
    framing goes on from there; what lies between is neither framed nor yielded. The format,
    the checksum setting and the cipher in force are the head's (a file has one FDE; a relay
    log's later ones are not seen: give no ``start`` inside a relay log's second server's part).

    ``stop``: end before the event at that offset (an event boundary a taker does not cross: a
    transaction's first event, as ``start``): the frames of ``[start, stop)``, as if the
    stream ended there (nothing after it is framed or checked).
    """
    new = tuple.__new__
    fmt: Format | None = None
    unpack = HEADER_STRUCT.unpack_from
    crc32 = CRC32  # ISA-L's when installed (binlogkit/reading/crc.py): the same values as zlib's
    try:
        buf = _SPARE.pop()
    except IndexError:
        buf = bytearray(WINDOW)
    if len(buf) != WINDOW:     # WINDOW changed since (tests)
        buf = bytearray(WINDOW)
    mv = memoryview(buf)
    filled, rel = 0, 0
    at = 4
    crc_on = False
    eof = False
    decrypt = None  # crypto.mariadb.EventCipher once a Start_encryption was read
    start_enc = None  # (body, offset) of a Start_encryption whose key is not looked up yet
    clear_until = 0  # file offset up to which the window holds decrypted events
    prev = -1  # the last event's type code (``start``: the jump comes right after the head)
    try:   # a file (not a pipe or a socket): its reads return what is asked, never wait for a writer
        whole = bool(fh.seekable())
    except (AttributeError, OSError, ValueError):
        whole = False
    try:
        while True:
            if filled - rel < LEN_HEADER and not eof:  # slide the window, read behind what is left
                keep = filled - rel
                mv[:keep] = mv[rel:filled]
                rel, filled = 0, keep
                while filled < LEN_HEADER:
                    # the head only, when a jump follows it (not a window of what the jump skips)
                    got = fh.readinto(mv[filled:HEAD_READ] if start is not None else mv[filled:])
                    if not got:
                        eof = True
                        break
                    filled += got
            avail = filled - rel
            if avail == 0:
                return
            if avail < LEN_HEADER:
                raise TruncatedEventError(f"torn event header: {avail} bytes where 19 are needed", offset=at)
            if stop is not None and at >= stop and start is None:
                return
            ts, code, sid, ev_size, log_pos, flags = unpack(buf, rel)
            if start is not None and (prev == _START_ENCRYPTION or (prev in (_FDE, _START_V3) and code != _START_ENCRYPTION)):
                if start > at:  # the head is read (the header at ``at`` may be encrypted: not looked at)
                    if start <= at + filled - rel:   # in the window already
                        rel += start - at
                    else:
                        skip_to(fh, at + filled - rel, start)
                        rel, filled, eof = 0, 0, False
                    at, clear_until = start, 0
                start = None
                continue
            if at == 4 and code not in (_FDE, 1):  # 1: START_EVENT_V3 of binlog v3
                raise NoFormatDescriptionError(
                    f"the first event is {event_type_name(code)}, not a Format_description: the layout "
                    "of everything after it (checksums included) is unknown", offset=at,
                    event_type=event_type_name(code))
            if ev_size < LEN_HEADER:
                raise EventSizeError(f"event_size {ev_size} is smaller than the 19-byte header",
                                     offset=at, event_type=event_type_name(code))
            if ev_size > MAX_EVENT_SIZE:
                raise EventSizeError(f"event_size {ev_size} is larger than any server writes (1 GiB)",
                                     offset=at, event_type=event_type_name(code))
            if avail < ev_size:
                mv[:avail] = mv[rel:filled]
                rel, filled = 0, avail
                while filled < ev_size and not eof:
                    if filled == len(buf):  # grown only as bytes arrive: a lying event_size
                        mv.release()        # costs at most twice what the file holds
                        buf.extend(bytes(min(ev_size, 2 * len(buf)) - len(buf)))
                        mv = memoryview(buf)
                    # a file: the window filled past the event (what follows it is framed from
                    # the window, the taker's too); a stream: up to the event's end (not waiting
                    # for bytes not sent yet)
                    got = fh.readinto(mv[filled:] if whole else mv[filled:min(len(buf), ev_size)])
                    if not got:
                        eof = True
                        break
                    filled += got
                if filled < ev_size:
                    raise TruncatedEventError(
                        f"torn event: event_size {ev_size} but only {filled} bytes left in the file",
                        offset=at, event_type=event_type_name(code))
                if taker is not None and decrypt is None and start is None and start_enc is None and prev >= 0:
                    new_rel, at = taker(buf, rel, filled, at, crc_on)  # the window between two frames again
                    if new_rel != rel:
                        rel = new_rel
                        continue
            if start_enc is not None:  # the first event after a Start_encryption
                from ..crypto.mariadb import cipher_for, decrypted_copy

                if decrypted_copy(mv[rel:rel + ev_size], crc_on):  # the server decrypted it already
                    start_enc = None
                else:
                    decrypt, start_enc = cipher_for(start_enc[0], keys, offset=start_enc[1]), None
                    if notes is not None:
                        notes["cipher"] = decrypt
            if decrypt is not None and at >= clear_until:  # event_len is in clear; the rest is not
                clear_until = at + decrypt.decrypt_run(mv, rel, filled, at, crc_on)  # this event and the
                ts, code, sid, ev_size, log_pos, flags = unpack(buf, rel)            # whole ones after it
            e = rel + ev_size
            end = at + ev_size
            ok = None
            data = None
            if code == _FDE:
                data = bytes(mv[rel:e])
                crc_on = checksum_on(data)
                if fde_is_checksum_aware(data):  # its CRC is valid even when the alg is OFF
                    stored, actual = int.from_bytes(data[-4:], "little"), event_crc(data)
                    ok = stored == actual
                if not (ok is False and verify):
                    try:
                        fmt = format_of_event(data)
                    except BinlogError as exc:
                        raise exc.with_context(offset=at)
            else:
                if crc_on:
                    if ev_size < LEN_HEADER + LEN_CHECKSUM:
                        raise EventSizeError(f"event_size {ev_size} leaves no room for the checksum",
                                             offset=at, event_type=event_type_name(code))
                    stored, actual = int.from_bytes(mv[e - 4:e], "little"), crc32(mv[rel:e - 4])
                    ok = stored == actual
                if want is None or code in want:
                    data = bytes(mv[rel:e])
                if fmt is None and code == _START_V3:  # binlog v3: Start_v3 fixes the layout
                    fmt = format_of_event(bytes(mv[rel:e]))
            if ok is False and verify:
                raise ChecksumError(f"CRC32 mismatch: stored {stored:#010x}, computed {actual:#010x}"
                                    + (" (after decryption: the encrypted event is damaged)" if decrypt else ""),
                                    expected=stored, actual=actual, offset=at, event_type=event_type_name(code))
            if records:
                yield new(Frame, (at, code, ts, sid, ev_size, log_pos, flags, data, ok, fmt))
            else:
                yield at, code, ts, sid, ev_size, log_pos, flags, data, ok, fmt  # type: ignore[misc]
            at, rel, prev = end, e, code
            if code == _START_ENCRYPTION and decrypt is None:  # the key is needed from the next event on
                start_enc = (bytes(mv[e - ev_size + LEN_HEADER:e - (LEN_CHECKSUM if crc_on else 0)]), at - ev_size)
            elif taker is not None and decrypt is None and start is None:
                rel, at = taker(buf, rel, filled, at, crc_on)
    except CompressionError as exc:  # an archive that stopped decompressing: name the event being read
        head = filled - rel >= LEN_HEADER  # its header is in the window: the body was being read
        raise exc.with_context(offset=at, event_type=event_type_name(buf[rel + 4]) if head else None)
    finally:
        mv.release()
        if len(buf) == WINDOW and len(_SPARE) < 2:   # not one grown for a big event
            _SPARE.append(buf)

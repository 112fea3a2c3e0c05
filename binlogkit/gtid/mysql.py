"""MySQL GTID sets: ``uuid:1-5:7,uuid2:1-100``, tagged GTIDs of 8.3+ (``uuid:tag:1-5``).

Text grammar (what SHOW REPLICA STATUS and @@gtid_executed print, whitespace and newlines
allowed around ``,`` and ``:``)::

    set      := ""  |  group ("," group)*
    group    := uuid (":" (tag | interval))*        a tag applies to the intervals after it
    interval := n | n "-" m                          closed, 1 <= n <= m <= 2**63 - 2
    tag      := [A-Za-z_][A-Za-z0-9_]{0,31}          case-insensitive, kept lowercase

A set may hold untagged and tagged intervals of the same uuid; they are never merged. The
canonical text sorts uuids, puts the untagged intervals first and then tags in order:
``uuid:1-3:alpha:1-5:7`` (``Gtid_set::to_string``'s order).

Binary form (``encode`` / ``decode``): the Previous_gtids body, untagged or tagged layout, as
``codecs/gtid.py`` declares it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

from ..errors import GtidError

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_TAG = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")
MAX_GNO = (1 << 63) - 2  # GNO_END - 1: the server's GNO_END (INT64_MAX) is one past the last

Key = tuple[str, str]  # (uuid, tag); tag "" for untagged
Intervals = tuple[tuple[int, int], ...]


def _norm_uuid(text: str) -> str:
    t = text.strip()
    if not _UUID.match(t):
        raise GtidError("not a uuid", part=text)
    h = t.replace("-", "").lower()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _merge(ivs: Iterable[tuple[int, int]]) -> Intervals:
    out: list[list[int]] = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


@dataclass(frozen=True, order=True)
class MysqlGtid:
    uuid: str
    gno: int
    tag: str = ""

    def __str__(self) -> str:
        return f"{self.uuid}:{self.tag + ':' if self.tag else ''}{self.gno}"

    @classmethod
    def parse(cls, text: str) -> "MysqlGtid":
        parts = [p.strip() for p in text.strip().split(":")]
        if len(parts) not in (2, 3):
            raise GtidError("a GTID is uuid:[tag:]number", part=text)
        tag = ""
        if len(parts) == 3:
            if not _TAG.match(parts[1]):
                raise GtidError("bad tag", part=parts[1])
            tag = parts[1].lower()
        if not parts[-1].isdigit() or len(parts[-1]) > 20 or not 1 <= int(parts[-1]) <= MAX_GNO:
            raise GtidError("bad transaction number", part=parts[-1][:80])
        return cls(_norm_uuid(parts[0]), int(parts[-1]), tag)


class MysqlGtidSet:
    """An immutable set of MySQL GTIDs: {(uuid, tag): merged closed intervals}."""

    __slots__ = ("_m", "_hash")

    def __init__(self, mapping: Mapping[Key, Iterable[tuple[int, int]]] | None = None) -> None:
        m = {}
        for key, ivs in (mapping or {}).items():
            merged = _merge(ivs)
            for a, b in merged:
                if not 1 <= a <= b <= MAX_GNO:
                    raise GtidError("interval out of range", part=f"{a}-{b}")
            if merged:
                m[key] = merged
        self._m: dict[Key, Intervals] = dict(sorted(m.items()))
        self._hash: int | None = None

    # --- text -------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "MysqlGtidSet":
        m: dict[Key, list[tuple[int, int]]] = {}
        text = text.strip()
        if not text:
            return cls()
        for group in text.split(","):
            group = group.strip()
            if not group:
                raise GtidError("empty group", part=text)
            parts = [p.strip() for p in group.split(":")]
            uuid = _norm_uuid(parts[0])
            tag = ""
            if len(parts) == 1:
                raise GtidError("uuid without intervals", part=group)
            for p in parts[1:]:
                mi = _INTERVAL.match(p)
                if mi and any(len(g) > 20 for g in mi.groups() if g):   # past MAX_GNO (int() refuses 4,300 digits)
                    raise GtidError("bad interval", part=p[:80])
                if mi:
                    a = int(mi.group(1))
                    b = int(mi.group(2)) if mi.group(2) else a
                    if not 1 <= a <= b <= MAX_GNO:
                        raise GtidError("bad interval", part=p)
                    m.setdefault((uuid, tag), []).append((a, b))
                elif _TAG.match(p):
                    tag = p.lower()
                else:
                    raise GtidError("neither an interval nor a tag", part=p)
        return cls(m)

    def __str__(self) -> str:
        groups: dict[str, list[str]] = {}
        for (uuid, tag), ivs in self._m.items():
            parts = groups.setdefault(uuid, [])
            if tag:
                parts.append(tag)
            parts.extend(f"{a}-{b}" if b > a else f"{a}" for a, b in ivs)
        return ",".join(f"{u}:{':'.join(p)}" for u, p in groups.items())

    def __repr__(self) -> str:
        return f"MysqlGtidSet({str(self)!r})"

    @classmethod
    def from_previous_gtids(cls, sids: list[dict]) -> "MysqlGtidSet":
        """From ``codecs.gtid.decode_previous_gtids`` output (binary intervals end exclusive)."""
        m: dict[Key, list[tuple[int, int]]] = {}
        for s in sids:
            m.setdefault((s["sid"], s.get("tag", "")), []).extend((a, b - 1) for a, b in s["intervals"] if b > a)
        return cls(m)

    @classmethod
    def decode(cls, data: bytes) -> "MysqlGtidSet":
        """From the binary form (a Previous_gtids body, either layout; ``Gtid_set::encode``)."""
        from ..codecs.gtid import decode_previous_gtids

        try:
            return cls.from_previous_gtids(decode_previous_gtids(bytes(data)))
        except ValueError as exc:
            raise GtidError(str(exc), part=bytes(data[:64]).hex()) from None

    def encode(self, *, tagged: bool | None = None) -> bytes:
        """The binary form as the server writes it: sorted by uuid then tag, the tagged layout
        when the set holds a tagged GTID (or ``tagged`` asks for it). ``decode`` reads it back."""
        from ..codecs.gtid import encode_previous_gtids

        return encode_previous_gtids([(u, t, [(a, b + 1) for a, b in ivs]) for (u, t), ivs in self._m.items()],
                                     tagged=tagged)

    @classmethod
    def of(cls, gtids: Iterable[MysqlGtid]) -> "MysqlGtidSet":
        m: dict[Key, list[tuple[int, int]]] = {}
        for g in gtids:
            m.setdefault((g.uuid, g.tag), []).append((g.gno, g.gno))
        return cls(m)

    # --- algebra ------------------------------------------------------------------------------
    def _combine(self, other: "MysqlGtidSet", op) -> "MysqlGtidSet":
        keys = set(self._m) | set(other._m)
        return MysqlGtidSet({k: op(self._m.get(k, ()), other._m.get(k, ())) for k in keys})

    def __or__(self, other: "MysqlGtidSet") -> "MysqlGtidSet":
        return self._combine(other, lambda a, b: a + b)

    def __and__(self, other: "MysqlGtidSet") -> "MysqlGtidSet":
        def inter(a, b):
            out, i, j = [], 0, 0
            while i < len(a) and j < len(b):
                lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
                if lo <= hi:
                    out.append((lo, hi))
                if a[i][1] < b[j][1]:
                    i += 1
                else:
                    j += 1
            return out
        return self._combine(other, inter)

    def __sub__(self, other: "MysqlGtidSet") -> "MysqlGtidSet":
        def diff(a, b):
            out = []
            for lo, hi in a:
                cur = lo
                for blo, bhi in b:
                    if bhi < cur or blo > hi:
                        continue
                    if blo > cur:
                        out.append((cur, blo - 1))
                    cur = max(cur, bhi + 1)
                    if cur > hi:
                        break
                if cur <= hi:
                    out.append((cur, hi))
            return out
        return self._combine(other, diff)

    def __contains__(self, gtid: MysqlGtid | str) -> bool:
        g = MysqlGtid.parse(gtid) if isinstance(gtid, str) else gtid
        return any(a <= g.gno <= b for a, b in self._m.get((g.uuid, g.tag), ()))

    def __le__(self, other: "MysqlGtidSet") -> bool:
        return not (self - other)

    def issubset(self, other: "MysqlGtidSet") -> bool:
        return self <= other

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MysqlGtidSet) and self._m == other._m

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._m.items()))
        return self._hash

    def __bool__(self) -> bool:
        return bool(self._m)

    def __len__(self) -> int:
        return sum(b - a + 1 for ivs in self._m.values() for a, b in ivs)

    def count(self) -> int:
        return len(self)

    def __iter__(self) -> Iterator[MysqlGtid]:
        for (uuid, tag), ivs in self._m.items():
            for a, b in ivs:
                for n in range(a, b + 1):
                    yield MysqlGtid(uuid, n, tag)

    def intervals(self) -> dict[Key, Intervals]:
        return dict(self._m)

    def add(self, gtid: MysqlGtid) -> "MysqlGtidSet":
        return self | MysqlGtidSet.of([gtid])

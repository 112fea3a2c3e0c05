"""Fuzz the decryption path (issue 20): damaged encrypted files must give a typed BinlogError
naming file and offset, or read cleanly — never another exception, never a hang.

Inputs: the real servers' encrypted fixtures (fixtures/encrypted, MariaDB AES_CBC and AES_CTR)
and MySQL binlog_encryption files built from them (crypto.mysql.encrypt_file). Damage: byte
flips anywhere, flips in the Start_encryption body (scheme, key version, nonce), event_len
changes, truncation, and the MySQL header's fields. Each input is read by both the fast scan
path and the reader, under a per-input time limit (SIGALRM).

    python scripts/fuzz_encryption.py [--seconds 60] [--seed N]      (make fuzz-encryption)
"""

from __future__ import annotations

import argparse
import io
import json
import lzma
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from binlogkit.crypto import load_keys  # noqa: E402
from binlogkit.crypto import mysql as my  # noqa: E402
from binlogkit.crypto.keys import Keys  # noqa: E402
from binlogkit.errors import BinlogError  # noqa: E402
from binlogkit.reading.reader import iter_raw_events  # noqa: E402
from binlogkit.reading.scan import scan  # noqa: E402
from binlogkit.reading.source import Input  # noqa: E402


class Hang(Exception):
    pass


def _alarm(*_):
    raise Hang()


def inputs():
    sets = ROOT / "fixtures" / "encrypted"
    out = []
    for d in sorted(sets.iterdir()):
        m = json.loads((d / "manifest.json").read_text())
        k = d / "keys"
        keys = load_keys(str(k / m["key_file"]), secret_file=str(k / m["secret_file"]) if m["secret_file"] else None)
        for f in sorted((d / "replica-relay").glob("relay-bin.0*")) + sorted((d / "primary").glob("mariadb-bin.0*")):
            if f.stat().st_size < 100_000:
                out.append(("mariadb", f.name, f.read_bytes(), keys))
        twin = sorted((d / "plain-twin").glob("*.xz"))[-1]
        kid = "MySQLReplicationKey_fuzz_1"
        master = bytes(range(32))
        data = my.encrypt_file(lzma.open(twin).read(), kid, master)
        out.append(("mysql", twin.stem, data, Keys(mysql={kid: master}, source="fuzz")))
    return out


def damage(rng: random.Random, flavor: str, data: bytes) -> bytes:
    b = bytearray(data)
    kind = rng.choice(["flip", "flips", "start", "len", "truncate", "header"])
    if kind == "flip":
        b[rng.randrange(4, len(b))] ^= rng.randrange(1, 256)
    elif kind == "flips":
        for _ in range(rng.randrange(2, 20)):
            b[rng.randrange(4, len(b))] ^= rng.randrange(1, 256)
    elif kind == "start" and flavor == "mariadb":  # Start_encryption at 256: header 19, body 17
        b[256 + 19 + rng.randrange(17)] ^= rng.randrange(1, 256)
    elif kind == "len":
        at = rng.randrange(4, len(b) - 4)
        b[at:at + 4] = rng.randrange(1 << 32).to_bytes(4, "little")
    elif kind == "truncate":
        del b[rng.randrange(4, len(b)):]
    else:
        b[rng.randrange(0, 80 if flavor == "mysql" else 300)] ^= rng.randrange(1, 256)
    return bytes(b)


def check(name: str, data: bytes, keys, tmp: Path) -> str:
    p = tmp / name
    p.write_bytes(data)
    signal.alarm(10)
    try:
        res = scan(Input(p, keys))
        if res.problem is not None:
            assert res.problem.offset is not None and res.problem.file, res.problem
        try:
            for _ in iter_raw_events(io.BytesIO(data), name=name, keys=keys):
                pass
            outcome = "clean"
        except BinlogError as exc:
            assert exc.offset is not None, exc
            outcome = type(exc).__name__
    finally:
        signal.alarm(0)
    return outcome


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    items = inputs()
    counts: dict[str, int] = {}
    n = 0
    end = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            flavor, name, data, keys = rng.choice(items)
            bad = damage(rng, flavor, data)
            try:
                outcome = check(name, bad, keys, Path(tmp))
            except Exception as exc:  # anything but a typed error is a finding
                path = Path(tmp).parent / f"fuzz-encryption-{seed}-{n}.bin"
                path.write_bytes(bad)
                print(f"FAIL seed {seed} case {n} ({flavor} {name}): {type(exc).__name__}: {exc}; input kept in {path}")
                return 1
            counts[outcome] = counts.get(outcome, 0) + 1
            n += 1
    print(f"seed {seed}: {n} damaged inputs in {args.seconds:.0f} s, all typed or clean: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

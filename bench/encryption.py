"""Encrypted logs against plain ones, same run (issue 20: within 1.5x).

    make bench-encryption      # or part of `make bench`
    python bench/encryption.py [FILE] [--repeat N]

Makes encrypted copies of the benchmark binlog next to it (``fixtures/crypto_build.py``,
the build side; the real servers' encrypted files are byte-identical to what it writes, see
tests/test_encryption.py), once per cipher, with a test key file; then runs ``binlogkit verify``
and ``binlogkit decode`` on the plain file and on each copy as subprocesses writing to
/dev/null, best of ``--repeat``, and prints the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from run import best, plain_read  # noqa: E402

KEY = bytes.fromhex("5f3c9a2e1d7b4c6a8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f")  # a test key


def encrypted_copy(path: Path, cipher: str) -> tuple[Path, Path]:
    from binlogkit.crypto.keys import Cipher
    from fixtures.crypto_build import encrypt_binlog

    d = path.parent / f"encrypted-{cipher.lower()}"
    d.mkdir(exist_ok=True)
    keys = d / "keys.txt"
    keys.write_text(f"1;{KEY.hex()}\n")
    os.chmod(keys, 0o600)
    out = d / path.name
    done = d / ".done"
    if not (done.exists() and done.read_text() == f"{path.stat().st_size} {path.stat().st_mtime_ns}"):
        t = time.perf_counter()
        with open(path, "rb") as src, open(out, "wb") as dst:
            encrypt_binlog(src, dst, KEY, Cipher(cipher), nonce=os.urandom(12))
        done.write_text(f"{path.stat().st_size} {path.stat().st_mtime_ns}")
        print(f"made {out} ({cipher}) in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return out, keys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "bench" / "data" / "mariadb-bin.000001")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    if not args.file.exists():
        print("no benchmark data: run `make bench-data` first (a ~1 GB binlog from a real server)", file=sys.stderr)
        return 2
    bk = str(Path(sys.executable).parent / "binlogkit")
    copies = {c: encrypted_copy(args.file, c) for c in ("AES_CBC", "AES_CTR")}
    mb = args.file.stat().st_size / 1e6
    print(f"file: {args.file} ({mb:,.0f} MB), encrypted copies with AES_CBC and AES_CTR")
    print(f"{'command':<26} {'plain s':>8} {'CBC s':>8} {'CTR s':>8} {'CBC/plain':>10} {'CTR/plain':>10}")
    for name, extra in (("verify", []), ("decode", ["--base64-output=decode-rows"]), ("decode --json", ["--json"])):
        cmd = name.split()[0]
        plain_read(args.file)
        t_plain, _ = best([bk, cmd, *extra, str(args.file)], args.repeat)
        times = {}
        for c, (path, keys) in copies.items():
            plain_read(path)
            times[c], _ = best([bk, cmd, *extra, "--key-file", str(keys), str(path)], args.repeat)
        print(f"{'binlogkit ' + name:<26} {t_plain:>8.2f} {times['AES_CBC']:>8.2f} {times['AES_CTR']:>8.2f} "
              f"{times['AES_CBC'] / t_plain:>10.2f} {times['AES_CTR'] / t_plain:>10.2f}")
    print("goal: encrypted within 1.5x of plain")
    return 0


if __name__ == "__main__":
    sys.exit(main())

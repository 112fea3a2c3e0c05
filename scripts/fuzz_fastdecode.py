"""Fuzz the C decode / verify loop built with AddressSanitizer and UBSan (scripts/asan-fastdecode.sh).

Every fixture and corpus file through decode (text, JSON, -v, and the replayable default with
and without -v / -vv, also written to a descriptor from the loop's held buffers) and verify with the sanitized
module in place of binlogkit._fastdecode, each compared with the Python path; then damaged copies
of a row-types fixture (bytes flipped, cut, grown); then walk() on random windows with random
options, and the replay loop's Replayer.walk() likewise (its CRC32 made to match, so that it
prints the GTID / Annotate_rows / Table_map / rows / Xid / Query bodies it is given, held across calls;
rows with -v by random tables' plans, over random images). Any out-of-bounds read or undefined behaviour aborts with a sanitizer report; a
difference from the Python path is an assertion error.
Usage: python scripts/fuzz_fastdecode.py MODULE.so [SEED] [DAMAGED_COPIES]
"""
import importlib.util
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ["TZ"] = "America/New_York"  # replayable output is in local time (localtime_r in the C loop)
time.tzset()

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
spec = importlib.util.spec_from_file_location("_fastdecode", sys.argv[1])
asan_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(asan_mod)

from binlogkit.reading import fastdecode  # noqa: E402
from binlogkit.reading.scan import scan  # noqa: E402

fastdecode._fastdecode = asan_mod
from test_fastdecode import SEED, _files  # noqa: E402


def run(args, fast):
    from click.testing import CliRunner

    from binlogkit.cli import main
    fastdecode._fastdecode = asan_mod if fast else None
    try:
        r = CliRunner().invoke(main, args)
    finally:
        fastdecode._fastdecode = asan_mod
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.stdout_bytes, r.stderr, r.exit_code


def check(path: Path) -> None:
    for mode in ([], ["--json"], ["-v"], ["--no-verify", "--json"], ["--json", "-v"]):
        args = ["decode", "--base64-output=decode-rows", *mode, str(path)]  # the listing: the C loop's mode
        assert run(args, True) == run(args, False), args
    for mode in ([], ["--no-verify"], ["-v"], ["-vv"]):  # replayable (the default): rows events from the C loop
        args = ["decode", *mode, str(path)]
        assert run(args, True) == run(args, False), args
    assert direct(path) == run(["decode", "-v", str(path)], False)[0], path
    got, want = fastdecode.verify_fast(path), scan(path)
    assert (got.events, got.end_offset, str(got.problem)) == (want.events, want.end_offset, str(want.problem)), path


def direct(path: Path) -> bytes:
    """decode -v written to a descriptor by the C loop itself, every statement from the buffers it
    is held in (direct_min 0), as the command writes to a file or a pipe."""
    from binlogkit.decoding import replay_chunks
    from binlogkit.decoding.render import write_replay
    from binlogkit.decoding.replay import Replay, ReplayOptions

    old = fastdecode.DIRECT_MIN
    fastdecode.DIRECT_MIN = 0
    try:
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogateescape") as fh:
            write_replay(replay_chunks(Replay(ReplayOptions(verbose=1)), [str(path)]), fh)
            fh.seek(0)
            return fh.buffer.read()
    finally:
        fastdecode.DIRECT_MIN = old


n = 0
for path in _files():
    check(path)
    n += 1
print("files", n)
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "mariadb-bin.000001"
    for it in range(int(sys.argv[3]) if len(sys.argv) > 3 else 300):
        buf = bytearray(SEED)
        for _ in range(rnd.randint(1, 4)):
            how = rnd.choice(["flip", "flip", "cut", "grow"])
            if how == "flip":
                buf[rnd.randrange(4, len(buf))] = rnd.randrange(256)
            elif how == "cut":
                del buf[rnd.randint(4, len(buf)):]
            else:
                i = rnd.randint(4, len(buf))
                buf[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))
        path.write_bytes(bytes(buf))
        check(path)
print("damaged copies done")
cfg = bytes([1] * 256) + bytes(rnd.randrange(256) for _ in range(256))
names = tuple(b'"type": "X"' for _ in range(256))
for it in range(30000):
    blob = bytearray(rnd.randrange(256) for _ in range(rnd.randint(0, 300)))
    if blob and rnd.random() < 0.7 and len(blob) >= 19:  # a plausible header: size within the window
        blob[9:13] = rnd.randint(19, len(blob)).to_bytes(4, "little")
        blob[4] = rnd.choice([16, 19, 23, 24, 25, 30, 31, 32, 160, 162, rnd.randrange(256)])
    asan_mod.walk(blob, 0, len(blob), rnd.choice([4, 100]), rnd.randrange(512), fastdecode.CRC32, cfg, names,
                  b'{"file": "f", "offset": ')
print("fuzz done")

# the replay loop: events whose CRC32 "matches" (the callable returns the stored value), any
# options (O_VERBOSE among them: rows printed by random tables' plans), the state held from call to call
TYPES = [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 246, 247, 248, 249, 250, 251, 252, 253, 254,
         255, 245, 0]


def plan(ncols):
    """A random table plan as reading.fastdecode._verbose_plan makes them (or a broken one)."""
    if rnd.random() < 0.05:
        return rnd.choice([None, (), (b"",), "x"])
    types = bytes(rnd.choice(TYPES) for _ in range(ncols))
    metas = bytes(rnd.randrange(256) for _ in range(2 * ncols + (rnd.random() < 0.05)))
    r = rnd.random()  # no notes, one per column (names), or two (-vv: a value's, a NULL's type comment)
    notes = None if r < 0.4 else tuple(b" /* c */" for _ in range((1 if r < 0.7 else 2) * ncols
                                                                  + (rnd.random() < 0.05)))
    return types, metas, b"`d`.`t`", notes, rnd.random() < 0.5


rc = asan_mod.Replayer()
sink = os.open(os.devnull, os.O_WRONLY)
for it in range(30000):
    blob = bytearray(rnd.randrange(256) for _ in range(rnd.randint(0, 300)))
    if len(blob) >= 23 and rnd.random() < 0.8:
        size = rnd.randint(23, len(blob))
        blob[9:13] = size.to_bytes(4, "little")
        blob[4] = rnd.choice([2, 16, 19, 23, 24, 25, 30, 31, 32, 160, 162, rnd.randrange(256)])
        if blob[4] == 2 and rnd.random() < 0.5:  # a BEGIN / COMMIT Query: short status variables, no db
            q = rnd.choice([b"BEGIN", b"COMMIT"])
            nsv = rnd.randint(0, max(0, size - 19 - 13 - 1 - len(q) - 4))
            if 19 + 13 + nsv + 1 + len(q) + 4 == size:
                blob[19 + 8] = 0
                blob[19 + 11:19 + 13] = nsv.to_bytes(2, "little")
                blob[19 + 13 + nsv] = 0
                blob[19 + 14 + nsv:size - 4] = q
        stored = int.from_bytes(blob[size - 4:size], "little")
        crc = (lambda v: lambda data: v)(stored)
    else:
        crc = fastdecode.CRC32
    if rnd.random() < 0.3:
        rc.tables[int.from_bytes(blob[19:23], "little") if len(blob) >= 23 else 0] = bytes(
            rnd.randrange(256) for _ in range(3 * rnd.randint(0, 8)))
    opts = rnd.randrange(1 << 17)
    if len(blob) >= 40 and blob[4] in (23, 24, 25, 30, 31, 32) and rnd.random() < 0.6:
        # -v: a rows event whose width its table's plan has (a v2 event: no extra data), its images
        # random, mostly ending its statement; the options that print it (verbose, tables, CRC32 on)
        opts = (opts | 8 | 32 | 1 << 14) & ~16
        blob[25] |= rnd.random() < 0.7
        at = 27 if blob[4] < 30 else 29
        if at == 29:
            blob[27:29] = b"\x02\x00"
        blob[at] = rnd.randint(0, 12)
        rc.vtables[int.from_bytes(blob[19:25], "little")] = plan(blob[at])
        rc.vtables[int.from_bytes(blob[19:23], "little")] = plan(blob[at])
    if rnd.random() < 0.1 and len(blob) >= 23:
        rc.plans[bytes(blob[19:len(blob) - 4])] = plan(rnd.randint(0, 12))
    rc.direct_min = rnd.choice([0, 64, 1 << 18])
    rc.out_fd = sink if rnd.random() < 0.5 else -1  # the text written to a descriptor (decode's stdout) or returned
    text = rc.walk(blob, 0, len(blob), rnd.choice([4, 100]), opts, crc, cfg)[3]
    assert rc.out_fd < 0 or text == b""
    if rnd.random() < 0.1:
        rc.take()
        rc.tables.clear()
        rc.maps.clear()
        rc.vtables.clear()
        rc.plans.clear()
print("replay fuzz done")


# decode --json -v: walk() with O_JSON | O_JROWS, rows events by random plans (rowvalues.jsonform.
# c_json_plan's shape: types, metas, pads, J_* kinds, keys, extras, head; or broken ones), Table_maps
# looked up in random plans, over random images
def json_plan(ncols):
    if rnd.random() < 0.05:
        return rnd.choice([None, (), (b"",) * 7, "x", (b"", b"", b"", b"", (), (), b"")])
    types = bytes(rnd.choice(TYPES) for _ in range(ncols))
    metas = bytes(rnd.randrange(256) for _ in range(2 * ncols + (rnd.random() < 0.05)))
    pads = bytes(rnd.randrange(4) for _ in range(2 * ncols))
    kinds = bytes(rnd.randrange(17) for _ in range(ncols))
    keys = tuple(b'"k": ' for _ in range(ncols + (rnd.random() < 0.05)))

    def extra():
        r = rnd.random()
        if r < 0.3:
            return None
        if r < 0.6:
            return tuple(rnd.choice([b'"a"', b"b", b"", 1]) for _ in range(rnd.randint(0, 70)))
        return bytes(rnd.randrange(256) for _ in range(rnd.choice([1024, 1024, 7])))
    return types, metas, pads, kinds, keys, tuple(extra() for _ in range(ncols)), b', "rows": ['


jnames = tuple(b'"type": "X"' for _ in range(256))
plans, jtables, maps = {}, {}, {}
for it in range(30000):
    blob = bytearray(rnd.randrange(256) for _ in range(rnd.randint(0, 300)))
    if len(blob) >= 40 and rnd.random() < 0.9:
        size = rnd.randint(40, len(blob))
        blob[9:13] = size.to_bytes(4, "little")
        blob[4] = rnd.choice([19, 23, 24, 25, 30, 31, 32])
        if blob[4] != 19:
            at = 27 if blob[4] < 30 else 29
            if at == 29:
                blob[27:29] = b"\x02\x00"
            blob[at] = rnd.randint(0, 12)
            jtables[int.from_bytes(blob[19:25], "little")] = json_plan(blob[at])
        elif rnd.random() < 0.7:
            plans[bytes(blob[19:size])] = json_plan(rnd.randint(0, 12))
    opts = fastdecode.O_JSON | fastdecode.O_JROWS | (rnd.randrange(128) & ~2)
    asan_mod.walk(blob, 0, len(blob), rnd.choice([4, 100]), opts, fastdecode.CRC32, cfg, jnames,
                  b'{"file": "f", "offset": ', plans, jtables, maps)
    if rnd.random() < 0.05:
        plans.clear(), jtables.clear(), maps.clear()
print("json rows fuzz done")

"""Fuzz the C row-text accelerator built with AddressSanitizer and UBSan (scripts/asan-rowtext.sh).

Every rows event of the fixtures and the corpus, then damaged images of the row-types fixtures,
then random column types, metadata, bitmaps and images: any out-of-bounds read or undefined
behaviour aborts with a sanitizer report. Usage: python scripts/fuzz_rowtext.py MODULE.so
"""
import importlib.util
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
spec = importlib.util.spec_from_file_location("_rowtext", sys.argv[1])
asan_mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(asan_mod)
import decimal  # noqa: E402

from binlogkit.rowvalues.values import Geometry, Value, timestamp_value  # noqa: E402

asan_mod.configure(Value, decimal.Decimal, Geometry, timestamp_value)
from test_rowtext import SEEDS, _c_rows, _c_text, _files, _rows_events  # noqa: E402
from binlogkit.rowvalues import COMPRESSED_ROWS  # noqa: E402
# every real event
n = 0
for path in _files():
    for table, fields, code in _rows_events(path):
        _c_text(asan_mod, table, fields, code)
        _c_rows(asan_mod, table, fields, code)
        n += 1
print("real events", n)
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
for it in range(30000):
    table, fields, code = rnd.choice(SEEDS)
    rows = bytearray(bytes(fields.rows))
    if code in COMPRESSED_ROWS:
        from binlogkit.codecs.compression import uncompress
        rows = bytearray(uncompress(bytes(rows)))
    for _ in range(rnd.randint(1, 6)):
        how = rnd.choice(["flip", "flip", "cut", "grow"])
        if how == "flip" and rows: rows[rnd.randrange(len(rows))] = rnd.randrange(256)
        elif how == "cut": del rows[rnd.randint(0, len(rows)):]
        else: rows += bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))
    bm = bytes(fields.columns_before_image)
    if rnd.random() < 0.1:
        bm = bytes(rnd.randrange(256) for _ in range(len(bm)))
    args = (bytes(rows), rnd.randrange(3), bytes(c.type for c in table.columns),
            b"".join(c.meta.to_bytes(2, "little") for c in table.columns), bm, bytes(fields.columns_after_image or bm))
    esc = rnd.random() < 0.5  # both quotings (flavor.tool_escapes_strings)
    asan_mod.verbose(*args, b"`x`.`y`", None, esc)
    asan_mod.rows(*args, bytes(2 * len(table.columns)), esc)
# random types/metas too
for it in range(30000):
    ncols = rnd.randint(0, 12)
    types = bytes(rnd.choice([1,2,3,4,5,7,8,9,10,11,12,13,14,15,16,17,18,19,245,246,247,248,249,250,251,252,253,254,255, rnd.randrange(256)]) for _ in range(ncols))
    metas = bytes(rnd.randrange(256) for _ in range(2 * ncols))
    data = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 64)))
    bits = bytes(rnd.randrange(256) for _ in range((ncols + 7) // 8))
    esc = rnd.random() < 0.5
    asan_mod.verbose(data, rnd.randrange(4), types, metas, bits, bits, b"n", tuple(b"x" for _ in range(ncols)) if rnd.random() < .5 else None, esc)
    asan_mod.rows(data, rnd.randrange(4), types, metas, bits, bits, bytes(rnd.randrange(256) for _ in range(2 * ncols)), esc)
print("fuzz done")

"""Fuzz the C Arrow accelerator built with AddressSanitizer and UBSan (scripts/asan-rowarrow.sh).

Every rows event of the fixtures and the corpus through the sanitized build, compared with the
Python path (the tables equal, or C steps aside); whole exports of every fixture archive (the
one-pass walk, the writer's builder taking images uncounted) against the Python path's; the C
walk (take_plain, replay_run) over damaged table maps and rows events with good CRC32s against
the Rows path's datasets; then damaged images of the row-types fixtures
and random plans (any kind, any parameters the Plan accepts), bitmaps and images, with the
buffers handed out now and then: any out-of-bounds access or undefined behaviour aborts with a
sanitizer report, and every handed-out buffer must make a valid Arrow array. Also flashback's
image cutting (``bounds``) against the compiled Python, and built JSON documents damaged at random.
Usage: python scripts/fuzz_rowarrow.py MODULE.so [SEED] [ITERATIONS]
"""
import importlib.util
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
spec = importlib.util.spec_from_file_location("binlogkit._rowarrow", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)

import pyarrow as pa  # noqa: E402

from binlogkit.export import changes, dataset  # noqa: E402
from binlogkit.rowvalues import COMPRESSED_ROWS, arrowcols  # noqa: E402

from binlogkit.flashback import invert  # noqa: E402

for m, n in [(arrowcols, "_C"), (arrowcols, "C_ROWARROW"), (changes, "C_ROWARROW"), (dataset, "C_ROWARROW"),
             (invert, "C_ROWARROW")]:
    setattr(m, n, mod)
invert._C_PLANS.clear()
from test_rowarrow import _agree  # noqa: E402
from test_rowtext import SEEDS, _files, _rows_events  # noqa: E402

n = taken = 0
for path in _files():
    for table, fields, code in _rows_events(path):
        n += 1
        taken += bool(_agree(mod, table, fields, code))
print("real events", n, "taken by C and equal", taken)

# whole exports of every fixture archive (every server, relay logs, damaged and cut files, encrypted
# ones with their keys) through the sanitized build: the one-pass walk and the writer's builder
# taking the images straight (``take``), against the Python path
import tempfile  # noqa: E402

from binlogkit.export import export  # noqa: E402
from test_rowarrow import _export_files, _fixture_archives, same  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    archives = _fixture_archives()
    for k, (label, inputs) in enumerate(archives):
        export(inputs, f"{tmp}/c{k}")
        changes.C_ROWARROW = None
        try:
            export(inputs, f"{tmp}/py{k}")
        finally:
            changes.C_ROWARROW = mod
        c, py = _export_files(Path(tmp) / f"c{k}"), _export_files(Path(tmp) / f"py{k}")
        assert c.keys() == py.keys(), label
        for f in c:
            assert c[f].schema.equals(py[f].schema, check_metadata=True) and same(c[f], py[f]), (label, f)
print("whole exports of fixture archives", len(archives), "equal")

# the C walk (take_plain, replay_run) over table maps and rows events damaged where it parses them,
# their CRC32s made right: no sanitizer report, and the same dataset as through Rows values
import binlogkit.export as exp  # noqa: E402
from fixtures import store  # noqa: E402
from test_rowarrow import damaged_plain_events, export_outcome  # noqa: E402

walk_rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
walk_files = sorted(p for name in ("row-types-full-metadata", "row-types") for p in store.materialize(name).rglob("*")
                    if p.is_file() and "bin.0" in p.name)
real_changes = changes.committed_changes
walked = 0
with tempfile.TemporaryDirectory() as tmp:
    for k in range(max(20, int(sys.argv[3]) // 300 if len(sys.argv) > 3 else 100)):
        path = walk_rnd.choice(walk_files)
        f = Path(tmp) / f"in{k}" / path.name
        f.parent.mkdir()
        f.write_bytes(damaged_plain_events(path.read_bytes(), walk_rnd))
        rgr = walk_rnd.choice([3, 7, 50_000])
        got = export_outcome([str(f)], Path(tmp) / f"c{k}", row_group_rows=rgr)
        exp.committed_changes = lambda *a, sink=None, **kw: real_changes(*a, **kw)
        try:
            assert got == export_outcome([str(f)], Path(tmp) / f"rows{k}", row_group_rows=rgr), (path, k)
        finally:
            exp.committed_changes = real_changes
        walked += 1
print("damaged plain events through the C walk", walked, "equal")

rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 3)
iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 30000
seeds = [s for s in SEEDS if s[2] not in COMPRESSED_ROWS]
damaged = 0
for it in range(iterations // 2):
    table, fields, code = rnd.choice(seeds)
    rows = bytearray(bytes(fields.rows))
    for _ in range(rnd.randint(1, 6)):
        how = rnd.choice(["flip", "flip", "cut", "grow"])
        if how == "flip" and rows:
            rows[rnd.randrange(len(rows))] = rnd.randrange(256)
        elif how == "cut":
            del rows[rnd.randint(0, len(rows)):]
        else:
            rows += bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 40)))
    from construct import Container
    bad = Container(rows=bytes(rows), columns_before_image=fields.columns_before_image,
                    columns_after_image=fields.columns_after_image, width=fields.width)
    if it % 10 == 0:  # the full comparison now and then (pyarrow is the slow part)
        _agree(mod, table, bad, code)
    else:
        lay = dataset.layout(table)
        ap = arrowcols.plan(table, [c.arrow for c in lay.columns])
        if ap is not None:
            args = arrowcols.arrow_inputs(table, bad, code, ap)
            if args is not None:
                b = mod.Builder(ap.widths)
                b.add(*args)
                b.finish()
    damaged += 1
print("damaged images", damaged)

# flashback's cut (``bounds``, SKIP plans) on the damaged seeds against the compiled Python, and
# random SKIP plans over random bytes
from test_rowarrow import _cut_both  # noqa: E402

cut = 0
for it in range(iterations // 4):
    table, fields, code = rnd.choice(seeds)
    rows = bytearray(bytes(fields.rows))
    for _ in range(rnd.randint(0, 4)):
        if rows and rnd.random() < 0.7:
            rows[rnd.randrange(len(rows))] = rnd.randrange(256)
        else:
            del rows[rnd.randint(0, len(rows)):]
    _cut_both(table, bytes(rows), rnd.random() < 0.5)
    width = rnd.randint(0, 12)
    try:
        plan = mod.Plan([(mod.SKIP, rnd.choice([0, 1, 3, 8, 40]), 0, 0) if rnd.random() < 0.5 else
                         (mod.SKIP, 0, rnd.randint(0, 5), 0) for _ in range(width)])
    except ValueError:
        continue
    out = mod.bounds(plan, bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 80))), rnd.random() < 0.5)
    assert out is None or all(isinstance(a, bytes) for pair in out for a in pair if a is not None)
    cut += 1
print("flashback cuts", cut, "clean")

PARAMS = {mod.INT: lambda: (rnd.choice([1, 2, 3, 4, 8]), 8, rnd.randint(0, 1)), mod.F32: lambda: (0, 0, 0),
          mod.F64: lambda: (0, 0, 0), mod.DEC: lambda: (lambda p: (p, rnd.randint(0, min(p, 30)), 0))(rnd.randint(1, 65)),
          mod.YEAR: lambda: (0, 0, 0), mod.DATE: lambda: (0, 0, 0),
          mod.DT2: lambda: (rnd.randint(0, 6), rnd.randint(0, 1), 0),
          mod.TS2: lambda: (rnd.randint(0, 6), rnd.randint(0, 1), 0), mod.TIME2: lambda: (rnd.randint(0, 6), 0, 0),
          mod.DT: lambda: (0, 0, 0), mod.TS: lambda: (0, 0, 0), mod.TIME: lambda: (0, 0, 0),
          mod.UTF8: lambda: (rnd.randint(1, 4), 0, 0), mod.ASCII: lambda: (rnd.randint(1, 4), 0, 0),
          mod.BIN: lambda: (rnd.randint(1, 4), rnd.choice([0, 0, 16, 255]), 0),
          mod.ENUM: lambda: (rnd.randint(1, 2), rnd.choice([0xFFFF, 3, 300]), 0),
          mod.SET: lambda: (rnd.randint(1, 8), 0, 0), mod.BIT: lambda: (rnd.randint(0, 0x0807), 0, 0),
          mod.GEOM: lambda: (rnd.randint(1, 4), 0, 0), mod.LATIN1: lambda: (rnd.randint(1, 4), 0, 0),
          mod.SETL: lambda: (rnd.randint(1, 8), 0, 0, tuple(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 5)))
                                                           for _ in range(rnd.randint(0, 64)))),
          mod.JSON: lambda: (rnd.randint(1, 4), 0, 0), mod.VEC: lambda: (rnd.randint(1, 4), 0, 0),
          mod.ENUML: lambda: (rnd.randint(1, 2), 0, 0, tuple(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 5)))
                                                            for _ in range(rnd.randint(0, 300))))}
planned = 0
for it in range(iterations // 2):
    width = rnd.randint(1, 12)
    entries = []
    for _ in range(width):
        kind = rnd.choice(list(PARAMS))
        entries.append((kind, *PARAMS[kind]()))
    try:
        plan = mod.Plan(entries)
    except ValueError:
        continue
    b = mod.Builder(plan.widths)
    nb = (width + 7) // 8
    for _ in range(rnd.randint(1, 4)):
        image = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 120)))
        bm = bytes(rnd.randrange(256) for _ in range(rnd.choice([nb, nb, 0, nb + 1])))
        bma = bytes(rnd.randrange(256) for _ in range(rnd.choice([nb, nb, 0])))
        b.add(plan, image, rnd.randrange(3), bm, bma, rnd.random() < 0.8)
    rows, bufs = b.finish()
    for w, (valid, nulls, offsets, data) in zip(plan.widths * 2, bufs):
        typ = {0: pa.binary(), 1: pa.uint8(), 2: pa.uint16(), 4: pa.uint32(), 8: pa.uint64(),
               16: pa.decimal128(38, 0), 32: pa.decimal256(76, 0)}[w]
        bufs_ = [None if valid is None else pa.py_buffer(valid)]
        if offsets is not None:
            bufs_.append(pa.py_buffer(offsets))
        bufs_.append(pa.py_buffer(data or b""))
        pa.Array.from_buffers(typ, rows, bufs_, null_count=nulls).validate(full=w in (0,))
    planned += 1
print("random plans", planned, "clean")

# JSON documents as MySQL stores them (tests/mysql_json_build.py), damaged at random, in random
# images beside other columns: C prints Python's text or steps aside, never reads out of bounds
import mysql_json_build as jb  # noqa: E402
from test_rowarrow import _json_table  # noqa: E402


def _json_value(depth=0):
    r = rnd.random()
    if depth < 4 and r < 0.25:
        return [_json_value(depth + 1) for _ in range(rnd.randint(0, 4))]
    if depth < 4 and r < 0.5:
        return {"".join(rnd.choice("ab\"\\é😀") for _ in range(rnd.randint(0, 3))): _json_value(depth + 1)
                for _ in range(rnd.randint(0, 4))}
    return rnd.choice([None, True, False, rnd.randint(-2**63, 2**64 - 1), rnd.randint(-300, 300), rnd.random() * 1e300,
                       "x\n\t\"", jb.Opaque(rnd.choice([7, 10, 11, 12, 246, 253, 0]),
                                             bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 12))))])


docs = 0
for it in range(iterations // 4):
    doc = bytearray(jb.document(_json_value(), lambda v: rnd.random() < 0.3))
    for _ in range(rnd.randint(0, 4)):
        how = rnd.choice(["flip", "flip", "cut", "grow"])
        if how == "flip" and doc:
            doc[rnd.randrange(len(doc))] = rnd.randrange(256)
        elif how == "cut":
            del doc[rnd.randint(0, len(doc)):]
        else:
            doc += bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 8)))
    if it % 10 == 0:
        _agree(mod, *_json_table(bytes(doc)))
    else:
        plan = mod.Plan([(mod.INT, 4, 8, 1), (mod.JSON, 4, 0, 0)])
        b = mod.Builder(plan.widths)
        b.add(plan, b"\0" + bytes(4) + len(doc).to_bytes(4, "little") + bytes(doc), 0, b"\x03", b"")
        rows, bufs = b.finish()
        valid, nulls, offsets, data = bufs[3]
        pa.Array.from_buffers(pa.string(), rows, [None if valid is None else pa.py_buffer(valid),
                                                 pa.py_buffer(offsets), pa.py_buffer(data or b"")],
                              null_count=nulls).validate(full=True)
    docs += 1
print("JSON documents", docs, "clean")

# repeat: the per-event columns of a chunk, random runs of every kind (nulls, empty runs, text)
from array import array  # noqa: E402

TYPES = {"I": pa.uint32(), "q": pa.int64(), "r": pa.int64(), "s": pa.binary()}
repeated = 0
for it in range(iterations // 10):
    kind = rnd.choice("IqrsX")
    k = rnd.randint(0, 9)
    counts = [rnd.choice([0, 1, 2, 7, rnd.randint(0, 300)]) for _ in range(k)]
    if rnd.random() < 0.05:
        counts.append(rnd.choice([-1, 2**31, 2**62]))
    raw = array("q", counts).tobytes()
    if rnd.random() < 0.05:
        raw = raw[:-1]
    vals = [None if rnd.random() < 0.2 else
            (bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 20))) if kind == "s" else
             rnd.randint(0, 2**32 - 1) if rnd.random() < 0.98 else rnd.randint(-2**64, 2**64)) for _ in counts]
    try:
        valid, nulls, offsets, data = mod.repeat(raw, vals, kind if kind != "X" else "Z")
    except (ValueError, OverflowError, TypeError):
        continue
    bufs_ = [None if valid is None else pa.py_buffer(valid)] + ([] if offsets is None else [pa.py_buffer(offsets)])
    pa.Array.from_buffers(TYPES[kind], sum(counts), bufs_ + [pa.py_buffer(data)], null_count=nulls).validate(full=True)
    repeated += 1
print("repeat runs", repeated, "clean")


# json_objects: the long form's images (spark.tables.long_batch) of random batches of every column
# type, whole and sliced, against the Arrow compute path; then damaged column specs (short
# buffers, bad offsets, UTF-8 that does not decode, unknown kinds): a ValueError, never a crash
import datetime as _dt  # noqa: E402
import decimal as _dec  # noqa: E402

from binlogkit.spark import tables as spark_tables  # noqa: E402


def _rand_col(typ, n):
    def one():
        if rnd.random() < 0.25:
            return None
        if pa.types.is_integer(typ):
            lo, hi = (-(1 << (typ.bit_width - 1)), (1 << (typ.bit_width - 1)) - 1) if pa.types.is_signed_integer(typ) \
                else (0, (1 << typ.bit_width) - 1)
            return rnd.choice([lo, hi, 0, rnd.randint(lo, hi)])
        if pa.types.is_boolean(typ):
            return rnd.random() < 0.5
        if pa.types.is_floating(typ):
            return rnd.choice([0.1, -0.0, float("inf"), float("nan"), rnd.uniform(-1e30, 1e30), 1e16, 5e-324])
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            return "".join(rnd.choice(["a", '"', "\\", "\n", "\x01", "\x7f", "\u00e9", "\u2028", "\U0001F600", " "])
                           for _ in range(rnd.randint(0, 12)))
        if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
            return bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 10)))
        if pa.types.is_date32(typ):
            return _dt.date(1, 1, 1) + _dt.timedelta(days=rnd.randint(0, 3652058))
        if pa.types.is_timestamp(typ):
            v = _dt.datetime(1, 1, 1) + _dt.timedelta(microseconds=rnd.randint(0, 315537897599999999))
            if typ.unit == "s":
                v = v.replace(microsecond=0)
            elif typ.unit == "ms":
                v = v.replace(microsecond=v.microsecond // 1000 * 1000)
            return v.replace(tzinfo=_dt.timezone.utc) if typ.tz else v
        if pa.types.is_duration(typ):
            return _dt.timedelta(microseconds=rnd.randint(-10**14, 10**14))
        if pa.types.is_decimal(typ):
            digits = rnd.randint(1, typ.precision)
            return _dec.Decimal(rnd.randint(-(10**digits - 1), 10**digits - 1)).scaleb(-typ.scale)
        return None
    return pa.array([one() for _ in range(n)], typ)


LONG_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
              pa.bool_(), pa.float32(), pa.float64(), pa.string(), pa.large_string(), pa.binary(), pa.large_binary(),
              pa.date32(), pa.timestamp("s", tz="UTC"), pa.timestamp("ms"), pa.timestamp("us", tz="UTC"),
              pa.duration("us"), pa.decimal128(10, 2), pa.decimal128(38, 7), pa.decimal128(5, 0)]
images = 0
for it in range(iterations // 100):
    n = rnd.randint(1, 40)
    cols = {"op": pa.array(["update"] * n), "gtid": pa.array(["0-1-1"] * n), "server_id": pa.array([1] * n, pa.uint32()),
            "commit_time": pa.array([0] * n, pa.timestamp("s", tz="UTC")), "file": pa.array(["f"] * n),
            "offset": pa.array(range(n), pa.int64()), "row_index": pa.array([0] * n, pa.int64()),
            "schema_version": pa.array(["v"] * n)}
    for k in range(rnd.randint(0, 6)):
        side = rnd.choice(["before", "after"])
        cols[f"{side}_c{k}"] = _rand_col(rnd.choice(LONG_TYPES), n)
    rb = pa.RecordBatch.from_pydict(cols)
    if n > 2 and rnd.random() < 0.5:
        rb = rb.slice(1, n - 2)
    got = spark_tables.long_batch(rb, "db", "t", c_mod=mod)
    got.validate(full=True)
    assert got.to_pylist() == spark_tables.long_batch(rb, "db", "t", c_mod=None).to_pylist(), it
    images += rb.num_rows
print("long-form images", images, "equal to the Arrow compute path")

damaged = 0
for it in range(iterations // 10):
    n = rnd.randint(0, 20)
    spec = []
    for _ in range(rnd.randint(1, 3)):
        kind = rnd.choice("bhiqBHIQ?fdsSyYtDTMuNZ")
        vals = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 200)))
        offs = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 200))) if rnd.random() < 0.8 else None
        valid = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 5))) if rnd.random() < 0.5 else None
        spec.append((b'"k": ', kind, rnd.choice([0, 1, 3, 100]), valid, vals, offs, rnd.choice([0, 1, 1000, 7, 40])))
    try:
        valid, nulls, offsets, data = mod.json_objects(n, spec)
    except (ValueError, OverflowError):
        continue
    pa.Array.from_buffers(pa.string(), n, [None if valid is None else pa.py_buffer(valid), pa.py_buffer(offsets),
                                           pa.py_buffer(data)], null_count=nulls).validate(full=True)
    damaged += 1
print("damaged image specs", damaged, "clean")

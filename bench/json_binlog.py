"""A JSON-heavy MySQL binlog for the export benchmark of JSON columns (issue 34): the MySQL 9.7
fixture's ``types.docs`` table (id INT, j JSON, note VARCHAR(80)) written again and again, each
transaction one Write_rows event of ``--per-event`` rows whose documents are built as MySQL
stores them (``tests/mysql_json_build.py``): objects of strings, integers, doubles, nested
arrays and objects, a DATETIME and a DECIMAL. The file starts with the fixture's
Format_description and Previous_gtids; GTIDs count up.

    python bench/json_binlog.py OUT_FILE [--rows 100000] [--per-event 20]
    BINLOGKIT_NO_ROWARROW=1 binlogkit export OUT_DIR_OF_FILE ...   # the Python path, for the ratio
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import mysql_json_build as jb  # noqa: E402

from binlogkit import open_binlog  # noqa: E402
from binlogkit.reading.events import build_event, decode  # noqa: E402
from binlogkit.rowvalues import table_from_map  # noqa: E402
from fixtures import store  # noqa: E402


def _doc(rnd: random.Random, i: int):
    when = ((2024 * 13 + rnd.randint(1, 12)) << 5 | rnd.randint(1, 28)) << 17 | rnd.randint(0, 23) << 12
    return {
        "id": i, "name": f"customer {i}", "active": rnd.random() < 0.5, "score": rnd.random() * 100,
        "tags": [rnd.choice(["red", "green", "blue", "vip", "new"]) for _ in range(rnd.randint(0, 5))],
        "address": {"city": rnd.choice(["Berlin", "Zürich", "Lyon", "Porto"]), "zip": f"{rnd.randint(1000, 99999)}",
                    "geo": [rnd.uniform(-90, 90), rnd.uniform(-180, 180)]},
        "orders": [{"sku": f"SKU-{rnd.randint(1, 9999):04d}", "qty": rnd.randint(1, 9), "price": rnd.randint(1, 10**6),
                    "note": None} for _ in range(rnd.randint(0, 3))],
        "seen": jb.Opaque(12, (when << 24).to_bytes(8, "little")),
        "balance": jb.Opaque(246, bytes([12, 2]) + jb.decimal_bytes(rnd.randint(-10**11, 10**11), 12, 2)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--per-event", type=int, default=20)
    ap.add_argument("--seed", type=int, default=34)
    a = ap.parse_args()
    src = store.materialize("replication-gtid", server="mysql-9.7")
    path = sorted(p for p in src.rglob("binlog.0*") if p.is_file())[0]
    evs = list(open_binlog(str(path), verify=False))
    tm = next(i for i, r in enumerate(evs) if r.type_code == 19 and table_from_map(decode(r).parsed, r.format.flavor).name == "docs")
    gtid, begin, table_map, rows_ev, xid = (evs[tm - 3], evs[tm - 2], evs[tm], evs[tm + 1], evs[tm + 2])
    assert (gtid.type_code, begin.type_code, rows_ev.type_code, xid.type_code) == (33, 2, 30, 16)
    images = decode(rows_ev).parsed.rows
    prefix = rows_ev.body[:len(rows_ev.body) - len(images)]
    out = bytearray(b"\xfebin" + b"".join(e.data for e in evs[:2]))  # magic, Format_description, Previous_gtids
    server, ts = gtid.server_id, gtid.timestamp
    rnd = random.Random(a.seed)

    def add(type_code: int, body: bytes) -> None:
        end = len(out) + 19 + len(body) + 4
        out.extend(build_event(type_code=type_code, body=body, timestamp=ts, server_id=server, log_pos=end, flags=0,
                               checksum=True))
    done, gno = 0, 1000
    while done < a.rows:
        n = min(a.per_event, a.rows - done)
        rows = b""
        for k in range(n):
            doc = jb.document(_doc(rnd, done + k))
            note = f"row {done + k}".encode()
            rows += b"\0" + (done + k).to_bytes(4, "little") + len(doc).to_bytes(4, "little") + doc + \
                bytes([len(note)]) + note
        gno += 1
        add(33, gtid.body[:17] + gno.to_bytes(8, "little") + gtid.body[25:])
        add(2, begin.body)
        add(19, table_map.body)
        add(30, prefix + rows)
        add(16, gno.to_bytes(8, "little"))
        done += n
    Path(a.out).write_bytes(bytes(out))
    print(f"{a.out}: {len(out) / 1e6:.1f} MB, {a.rows} rows in {(a.rows + a.per_event - 1) // a.per_event} events")


if __name__ == "__main__":
    main()

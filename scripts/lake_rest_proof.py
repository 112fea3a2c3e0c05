"""The REST catalog option (`--catalog http://...`) against a real Iceberg REST catalog server.

A MariaDB 10.11 lab server's archive (database ``bronze``: lakana only takes tables under
bronze/silver/gold) -> ``binlogkit export --format iceberg --mirror --catalog URI --database bronze``
-> the mirror read back through the same REST catalog equals the server's table value by value;
exit 0 when it does. Not part of the suite: it needs the server, which needs PostgreSQL. The
setup used on 2026-11-27 (docs/lakehouse.md has the transcript)::

    python3 -m venv /tmp/rest/venv && /tmp/rest/venv/bin/pip install lakana-server==0.20.0
    su postgres -c "initdb -D /tmp/rest/pg -A trust" ; pg_ctl ... -o '-p 55433' start
    psql ... -c "CREATE USER lakana PASSWORD 'lk'" ; psql ... -c "CREATE DATABASE lakana OWNER lakana"
    export LAKANA_DATABASE__URL=postgresql+pg8000://lakana:lk@127.0.0.1:55433/lakana
    /tmp/rest/venv/bin/lakana-server migrate
    LAKANA_BOOTSTRAP_PAT_KEY_ID=bk0key LAKANA_BOOTSTRAP_PAT_SECRET=... LAKANA_PORT=58181 lakana-server &
    curl -X POST -H "Authorization: Bearer lakana_pat_bk0key_..." .../api/v1/environments \
         -d '{"name":"lake","storage":{"scheme":"file","root":"file:///tmp/rest/wh"}}'
    PYICEBERG_CATALOG__BINLOGKIT__TOKEN=lakana_pat_bk0key_... PYICEBERG_CATALOG__BINLOGKIT__PREFIX=lake \
    REST_URI=http://127.0.0.1:58181 python scripts/lake_rest_proof.py /tmp/rest/proof

pyiceberg reads the catalog's token and prefix from ``PYICEBERG_CATALOG__BINLOGKIT__*`` (the
catalog binlogkit opens is named ``binlogkit``).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
os.environ["TZ"] = "UTC"
time.tzset()
from fixtures.lab import Lab  # noqa: E402
import export_fold as fold  # noqa: E402

base = Path(sys.argv[1])
shutil.rmtree(base, ignore_errors=True)
base.mkdir(parents=True)
with Lab(base / "lab") as lab:
    srv = lab.server("primary", 1, binlog_row_metadata="FULL", max_binlog_size=1 << 20).start()
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE bronze")
        cur.execute("CREATE DATABASE seq")
        cur.execute("CREATE TABLE bronze.orders (id INT PRIMARY KEY, customer VARCHAR(20), amount DECIMAL(10,2), "
                    "placed DATETIME(6), note TEXT)")
        cur.execute("INSERT INTO bronze.orders SELECT seq, CONCAT('c', seq % 7), seq * 1.25, "
                    "'2026-11-27 10:00:00' + INTERVAL seq SECOND, REPEAT('n', seq % 5) FROM seq.seq_1_to_300")
        cur.execute("UPDATE bronze.orders SET amount = amount + 1 WHERE id % 3 = 0")
        cur.execute("UPDATE bronze.orders SET id = id + 1000 WHERE id < 20")
        cur.execute("DELETE FROM bronze.orders WHERE id % 10 = 5")
        cur.execute("ALTER TABLE bronze.orders ADD COLUMN status VARCHAR(8) DEFAULT 'new'")
        cur.execute("UPDATE bronze.orders SET status = 'paid' WHERE id % 4 = 0")
        cur.execute("FLUSH BINARY LOGS")
    cols = fold.server_columns(srv, "bronze", "orders")
    want = fold.server_rows(srv, "bronze", "orders", cols)
    archive = base / "archive"
    archive.mkdir()
    for r in srv.query("SHOW BINARY LOGS"):
        shutil.copy(srv.datadir / r["Log_name"], archive / r["Log_name"])
cmd = [str(ROOT / ".venv" / "bin" / "binlogkit"), "export", str(archive), "-o", str(base / "wh"), "--format", "iceberg",
       "--mirror", "--catalog", os.environ["REST_URI"], "--database", "bronze", "--batch-transactions", "2"]
res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
print("$", " ".join(cmd[1:]))
print(res.stdout + res.stderr + f"[exit {res.returncode}]")
from binlogkit.export.lake.mirror import open_sink  # noqa: E402
sink = open_sink("iceberg", str(base / "wh"), os.environ["REST_URI"])
rows = sink.read("bronze", "orders").to_pylist()
got = {}
for r in rows:
    vals = tuple(fold.exported_text(r.get(n), r.get(f"{n}__text"), d, c, "us") for n, d, c in cols)
    got[vals[0]] = vals
hist = sink.history("bronze", "orders")
print("snapshots through the REST catalog:", len(hist),
      "last:", json.dumps({k: v for k, v in hist[-1][1].items() if k.startswith("binlogkit.")}))
print("server rows:", len(want), "mirror rows:", len(got), "equal value by value:", got == want)
bad = [(k, got.get(k), row) for k, row in want.items() if got.get(k) != row]
print("first difference:", bad[0] if bad else None)
sys.exit(0 if got == want and res.returncode == 0 else 1)

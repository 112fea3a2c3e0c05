#!/bin/bash
# Build binlogkit/_eventcols.c (the Spark source's C columns and the transaction walk's C run) with
# AddressSanitizer + UBSan and run, on that build, its differential tests against the Python path
# (header columns, decoded columns, transactions: intact, damaged, relay, ranges, small batches)
# and the spark-tables fuzz target. Not part of `make test`: it needs gcc's libasan. Every Python
# process started (pytest, the fuzz runner's) loads the sanitized module in place of the built one
# (a sitecustomize.py on PYTHONPATH). Usage: scripts/asan-eventcols.sh [FUZZ_SECONDS] (make asan-eventcols FUZZ_SECONDS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
so=$(PY=$PY bash scripts/asan-build.sh _eventcols "$out")
mkdir -p "$out/site"
cat > "$out/site/sitecustomize.py" <<PYEOF
import importlib.util, sys
spec = importlib.util.spec_from_file_location("binlogkit._eventcols", "$so")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.modules["binlogkit._eventcols"] = mod
PYEOF
export PYTHONPATH="$out/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0
$PY -c "import binlogkit._eventcols as m, sys; assert m.__file__ == '$so', m.__file__"
$PY -m pytest -q -p no:cacheprovider tests/test_spark_source.py -o "addopts=" \
    -k "filled_in_c or c_decoders_json or taken_in_c or without_bodies or batches_of_at_most"
$PY -m fuzz run --seconds "${1:-120}" --targets spark-tables --out "$out/fuzz"

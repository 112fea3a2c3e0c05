#!/bin/bash
# Build binlogkit/_rowarrow.c with AddressSanitizer + UBSan and fuzz it (not part of `make test`:
# it needs gcc's libasan). Usage: scripts/asan-rowarrow.sh [SEED] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
so=$(PY=$PY bash scripts/asan-build.sh _rowarrow "$out")
LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
    $PY scripts/fuzz_rowarrow.py "$so" "${1:-3}" "${2:-30000}"

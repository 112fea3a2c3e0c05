#!/bin/bash
# Build binlogkit/_pullscan.c with AddressSanitizer + UBSan and run its differential tests on that
# build (intact and damaged dump streams, hypothesis): not part of `make test`, it needs gcc's
# libasan. Usage: scripts/asan-pullscan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
so=$(PY=$PY bash scripts/asan-build.sh _pullscan "$out")
PULLSCAN_SO="$so" LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
    $PY -m pytest -q -p no:cacheprovider tests/test_pullscan.py tests/test_boundary.py -o "addopts="

#!/bin/bash
# Build binlogkit/_pullscan.c with AddressSanitizer + UBSan and run its differential tests on that
# build (intact and damaged dump streams, hypothesis): not part of `make test`, it needs gcc's
# libasan. Usage: scripts/asan-pullscan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
inc=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ext=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -shared -fPIC -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
    -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -I"$inc" binlogkit/_pullscan.c -o "$out/_pullscan$ext"
PULLSCAN_SO="$out/_pullscan$ext" LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
    $PY -m pytest -q -p no:cacheprovider tests/test_pullscan.py --hypothesis-seed=0 \
    -o "addopts="

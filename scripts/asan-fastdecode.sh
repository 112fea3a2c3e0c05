#!/bin/bash
# Build binlogkit/_fastdecode.c with AddressSanitizer + UBSan and fuzz it (not part of `make test`:
# it needs gcc's libasan). Usage: scripts/asan-fastdecode.sh [SEED] [DAMAGED_COPIES]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
inc=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ext=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -shared -fPIC -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
    -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -I"$inc" binlogkit/_fastdecode.c -o "$out/_fastdecode$ext"
LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
    $PY scripts/fuzz_fastdecode.py "$out/_fastdecode$ext" "${1:-3}" "${2:-300}"

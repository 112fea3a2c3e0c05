#!/bin/bash
# Build one C accelerator (binlogkit/NAME.c) with AddressSanitizer + UBSan into DIR and print the
# path of the extension module made, for the asan-* scripts. Usage: scripts/asan-build.sh NAME DIR
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
inc=$($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])")
ext=$($PY -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
gcc -shared -fPIC -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
    -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -I"$inc" "binlogkit/$1.c" -o "$2/$1$ext"
echo "$2/$1$ext"

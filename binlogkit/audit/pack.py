"""A zip for ``spark-submit --py-files``: binlogkit and construct, pure Python, nothing else.

    python -m binlogkit.audit.pack /tmp/binlogkit-audit.zip

Executors (and the driver) then import both from the zip: no pip install on the cluster.
The audit's path needs only these two (zstandard, click and the C row-text accelerator are
not imported by it); local paths need nothing more, ``hdfs://`` / ``s3a://`` inputs need
fsspec and its filesystem package on the executors (pack a virtualenv for those).
"""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path


def pack(out: str | os.PathLike[str]) -> Path:
    import construct

    import binlogkit

    dest = Path(out)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for pkg in (binlogkit, construct):
            # both are regular packages imported from files: __file__ is None only for
            # namespace packages
            if pkg.__file__ is None:
                raise RuntimeError(f"{pkg.__name__} has no __file__: cannot pack a namespace package")
            root = Path(pkg.__file__).resolve().parent
            for f in sorted(root.rglob("*.py")):
                if "__pycache__" not in f.parts:
                    z.write(f, Path(root.name) / f.relative_to(root))
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m binlogkit.audit.pack OUT.zip")
    print(pack(sys.argv[1]))

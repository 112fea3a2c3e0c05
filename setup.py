"""Only for the optional C accelerator; everything else is declared in pyproject.toml.

``binlogkit._rowtext`` prints `decode -v` row images in C; ``binlogkit._fastdecode`` frames,
checks and prints the hot events of `decode` / `decode --json` / `verify` in C; ``binlogkit._pullscan``
takes the common events of `pull`'s dump stream in C; ``binlogkit._rowarrow`` fills `export`'s Arrow
columns straight from row images; ``binlogkit._eventcols`` fills the Spark source's ``events``
header columns in batches. It is optional: without a C
compiler the install goes on and binlogkit uses its pure-Python decoder (same output, slower).
"""

from setuptools import Extension, setup

# _constants.h: the type codes, generated from binlogkit/constants.py (make c-constants)
DEPENDS = ["binlogkit/_out.h", "binlogkit/_rowimage.h", "binlogkit/_constants.h"]

setup(ext_modules=[Extension("binlogkit._rowtext", ["binlogkit/_rowtext.c"], depends=DEPENDS, optional=True,
                             extra_compile_args=["-O2"]),
                   Extension("binlogkit._fastdecode", ["binlogkit/_fastdecode.c"], depends=DEPENDS,
                             optional=True,
                             extra_compile_args=["-O2"]),
                   Extension("binlogkit._pullscan", ["binlogkit/_pullscan.c"], depends=DEPENDS,
                             libraries=["dl"],   # dlopen/dlsym: ISA-L's CRC32 (bind_crc); in libc since glibc 2.34
                             optional=True, extra_compile_args=["-O2"]),
                   Extension("binlogkit._rowarrow", ["binlogkit/_rowarrow.c"], depends=["binlogkit/_constants.h"],
                             optional=True,
                             extra_compile_args=["-O2"]),
                   Extension("binlogkit._eventcols", ["binlogkit/_eventcols.c"], depends=["binlogkit/_constants.h"],
                             optional=True, extra_compile_args=["-O2"])])

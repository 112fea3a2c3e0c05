"""Only for the optional C accelerator; everything else is declared in pyproject.toml.

``binlogkit._rowtext`` prints `decode -v` row images in C. It is optional: without a C
compiler the install goes on and binlogkit uses its pure-Python decoder (same output, slower).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("binlogkit._rowtext", ["binlogkit/_rowtext.c"], optional=True,
                             extra_compile_args=["-O2"])])

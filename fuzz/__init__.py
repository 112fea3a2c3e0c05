"""binlogkit's fuzz campaign (``make fuzz``): mutated binlogs and relay directories through
every file-facing command. See docs/fuzz.md.

``python -m fuzz run`` — the plain mutation engine (structure-aware: events re-framed, sizes
and CRC32 recomputed), ``python -m fuzz atheris TARGET`` — coverage-guided (atheris/libFuzzer)
with the same mutator, ``python -m fuzz replay TARGET FILE`` — one input, its outcome.
"""

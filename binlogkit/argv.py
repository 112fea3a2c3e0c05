"""The Spark jobs' command lines (``spark-submit binlogkit/spark/jobs/audit.py``, ``spark/jobs/export.py``,
which take ``binlogkit audit`` / ``export``'s options) with the CLI's rule for an option given
more than once (``cli/options.py``): argparse alone keeps the last value of an option given twice
and drops the others silently. Here an option that takes one value given twice is refused
(exit 2, naming it and both values); ``action="append"`` options are collected; a flag twice is
the flag."""

from __future__ import annotations

import argparse

_GIVEN = "_binlogkit_given"  # on the namespace while it is parsed: dest -> the value given


class _Once(argparse.Action):
    """``store``, refusing a second value."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if self.dest in given:
            parser.error(f"{'/'.join(self.option_strings)} given twice ({given[self.dest]}, {values}): give it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose options that take one value are ``_Once``."""

    def add_argument(self, *args, **kw):
        if args and str(args[0]).startswith("-") and kw.get("action") in (None, "store"):
            kw["action"] = _Once
        return super().add_argument(*args, **kw)

    def parse_known_args(self, args=None, namespace=None):
        ns, rest = super().parse_known_args(args, namespace)
        if hasattr(ns, _GIVEN):
            delattr(ns, _GIVEN)
        return ns, rest

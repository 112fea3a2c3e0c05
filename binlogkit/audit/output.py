"""What an audit writes, in one place for both engines: into ``--output`` (a folder or an
object-storage URL) findings.json, findings.parquet (with pyarrow) and summary.json — the Spark
job's executors write findings.parquet and series.parquet themselves, the driver summary.json
(``write_summary``) — and report.html / ``--report`` (``write_report``)."""

from __future__ import annotations

import functools
import json
from typing import Callable

from .._optional import MissingDependency, need


def summary_json(result: dict) -> bytes:
    return json.dumps({k: v for k, v in result.items() if k != "findings"}, indent=1, default=str).encode()


def files(result: dict, note: Callable[[str], None] = lambda text: None) -> list[tuple[str, bytes]]:
    """findings.json, findings.parquet (when pyarrow is there: else ``note`` says so) and
    summary.json, as bytes."""
    out = [("findings.json", json.dumps(result["findings"], indent=1).encode())]
    try:  # Parquet as well when pyarrow is there (the 'spark' extra installs it)
        pa = need("pyarrow", "findings.parquet")
        pq = need("pyarrow.parquet", "findings.parquet")
    except MissingDependency as exc:  # the JSON files are written all the same: say so, go on
        note(f"findings.parquet not written: {exc}")
    else:
        from .merge import FINDING_COLUMNS

        buf = pa.BufferOutputStream()
        pq.write_table(pa.table({c: [f[c] for f in result["findings"]] for c in FINDING_COLUMNS}), buf)
        out.append(("findings.parquet", buf.getvalue().to_pybytes()))
    return out + [("summary.json", summary_json(result))]


def write(output: str, named: list[tuple[str, bytes]]) -> None:
    """Each file under ``output``: objects under a URL, each whole or not at all; in a folder,
    each replaced atomically through safeio (the folder locked, no writing through links)."""
    from ..reading import storage
    from ..writing import objects

    if storage.is_url(output):
        for name, data in named:
            objects.write_atomic(storage.join(output, name), data)
        return
    import os

    from ..writing.safeio import SafeDir

    os.makedirs(output, exist_ok=True)
    with SafeDir(output) as d, d.locked():
        for name, data in named:
            d.replace(name, data, new_mode=0o644)


def write_findings(result: dict, output: str, note: Callable[[str], None] = lambda text: None) -> None:
    """The local engine's result under ``output``."""
    write(output, files(result, note))


def write_summary(result: dict, output: str) -> None:
    """The Spark job's summary.json, beside the Parquet datasets its executors wrote."""
    write(output, [("summary.json", summary_json(result))])


def write_report(result: dict, where: str) -> None:
    """The HTML report (binlogkit/report) of ``result`` at a path or a URL."""
    from ..reading import storage
    from ..writing import objects
    from ..report import render, write as write_page

    if storage.is_url(where):
        objects.write_atomic(where, render(result).encode("utf-8"))
    else:
        write_page(result, where)


def pages(output: str | None, report: str | None) -> list[str]:
    """Where the report goes: OUTPUT/report.html and ``--report``."""
    from ..reading import storage

    return ([storage.join(output, "report.html")] if output else []) + ([report] if report else [])


def write_all(result: dict, output: str | None, report: str | None,
              note: Callable[[str], None] = lambda text: None) -> None:
    """The local engine's files: under ``output`` (``write_findings``), then the report pages
    (``pages``), all from the whole result. A failure is a ``UsageError`` naming the option."""
    from ..errors import BinlogError, UsageError

    steps: list[tuple[str, Callable[[], None]]] = []
    if output:
        steps.append((f"--output {output}", lambda: write_findings(result, output, note)))
    for page in pages(output, report):
        steps.append((f"report {page}", functools.partial(write_report, result, page)))
    for what, step in steps:
        try:
            step()
        except (OSError, BinlogError) as exc:
            raise UsageError(f"{what}: {exc}") from None


def deliver(result: dict, output: str | None, report: str | None, *, max_findings: int | None = None,
            max_series: int | None = None, note: Callable[[str], None] = lambda text: None) -> dict:
    """The local engine's result delivered: every file written from the whole result
    (``write_all``), then the result to show, with only the first ``max_findings`` findings /
    ``max_series`` series' records (0 or None: all; ``merge.limit``)."""
    from .merge import limit

    write_all(result, output, report, note)
    if max_findings or max_series:
        result = limit(result, max_findings=max_findings or None, max_series=max_series or None)
    return result

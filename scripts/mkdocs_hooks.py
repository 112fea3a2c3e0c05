"""The site's build hooks (mkdocs.yml ``hooks:``): the reference pages made from the code
(``scripts/doc_reference.py``) are added as the site is built, and the navigation leaves out a
page that is not in this tree (a page another branch adds appears once it is there)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))   # this tree's binlogkit, not another one installed in the venv


from fixtures.scripts import load_script  # noqa: E402 (after the path above)

REF = load_script("doc_reference")
GENERATED = REF.pages()


def _exists(docs_dir: Path, page: str) -> bool:
    return "://" in page or page in GENERATED or (docs_dir / page).is_file()


def _prune(items, docs_dir: Path):
    out = []
    for item in items:
        if isinstance(item, str):
            if _exists(docs_dir, item):
                out.append(item)
            continue
        (title, value), = item.items()
        if value == "COMMANDS":   # the generated command pages, in their order
            out.append({title: [f"{REF.COMMANDS_DIR}/index.md"] +
                        [{f"binlogkit {n}": f"{REF.COMMANDS_DIR}/{n}.md"} for n in REF.command_names()]})
        elif isinstance(value, list):
            kept = _prune(value, docs_dir)
            if kept:
                out.append({title: kept})
        elif _exists(docs_dir, value):
            out.append(item)
    return out


def on_config(config, **kwargs):
    config["nav"] = _prune(config["nav"], Path(config["docs_dir"]))
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    for rel, text in GENERATED.items():
        files.append(File.generated(config, rel, content=text))
    return files

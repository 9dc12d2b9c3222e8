"""The pages of `_toc.yml` in reading order: one walker for the tests and the benchmarks."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGE_SUFFIXES = (".md", ".ipynb")


def pages(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page (root, parts, chapters, sections), without a .md/.ipynb suffix: book/intro."""
    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key, []) or []:
                    walk(child)

    walk(toc)
    return [str(Path(f).with_suffix("")) if f.endswith(PAGE_SUFFIXES) else f for f in files]


def notebooks(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The pages that are notebooks (book/x for book/x.ipynb), in reading order."""
    root = Path(toc_path).parent
    return [p for p in pages(toc_path) if (root / f"{p}.ipynb").is_file()]

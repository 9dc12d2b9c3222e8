"""The pages of `_toc.yml` in reading order, and their sources: one walker and one reader for the
tests, the site tooling and the benchmarks.

Chapters are MyST Markdown notebooks (jupytext's `myst` format: `{code-cell}` blocks, the
kernelspec in the front matter), so that a change to a chapter is a readable diff. Everything
that needs a chapter as a notebook reads it through `read()` here, which also accepts a plain
.ipynb; `write()` keeps the file's own format.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGE_SUFFIXES = (".md", ".ipynb")
MYST_FORMAT = "md:myst"


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


def source(page: str, root: Path = ROOT) -> Path:
    """The one source file of a page (book/x -> book/x.md or book/x.ipynb)."""
    found = [root / f"{page}{suffix}" for suffix in PAGE_SUFFIXES if (root / f"{page}{suffix}")
             .is_file()]
    if len(found) != 1:
        kind = "no source" if not found else "two sources"
        raise FileNotFoundError(f"page {page!r} has {kind} in {root} (looked for .md and .ipynb)")
    return found[0]


def front_matter(text: str) -> dict:
    """The YAML front matter of a Markdown page ({} when it has none)."""
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError("the front matter opened by the first line '---' is never closed")
    data = yaml.safe_load(text[4:end]) or {}
    if not isinstance(data, dict):
        raise ValueError("the front matter is not a YAML mapping")
    return data


def is_notebook(path: Path) -> bool:
    """True for an .ipynb, and for a Markdown page that is a MyST notebook (jupytext `myst`
    front matter, as myst-nb also decides), so it is executed: intro.md is a plain page."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return True
    if path.suffix != ".md":
        return False
    meta = front_matter(path.read_text(encoding="utf-8"))
    representation = (meta.get("jupytext") or {}).get("text_representation") or {}
    return representation.get("format_name") == "myst" or meta.get("file_format") == "mystnb"


def notebooks(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """The pages that are notebooks (book/x for book/x.md or .ipynb), in reading order."""
    root = Path(toc_path).parent
    return [p for p in pages(toc_path) if is_notebook(source(p, root))]


def read(path: Path):
    """A chapter source as an nbformat v4 notebook (MyST Markdown through jupytext, or .ipynb)."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return nbformat.read(path, as_version=4)
    if not is_notebook(path):
        raise ValueError(f"{path} is not a MyST Markdown notebook (no jupytext front matter)")
    return jupytext.read(path, fmt=MYST_FORMAT)


def write(nb, path: Path) -> None:
    """Write `nb` back in the format of `path` (the inverse of `read`)."""
    path = Path(path)
    if path.suffix == ".ipynb":
        nbformat.write(nb, path)
    else:
        jupytext.write(nb, path, fmt=MYST_FORMAT)


def lint(paths: list[Path] | None = None, root: Path = ROOT) -> tuple[int, str]:
    """ruff on the chapters' code cells: ruff reads .ipynb but not MyST Markdown, so each
    chapter goes to it as the notebook it is, on stdin, under its own path (so the project's
    settings and first-party imports apply). Returns (exit status, report)."""
    paths = paths if paths is not None else [source(p, root) for p in notebooks(root / "_toc.yml")]
    status, report = 0, []
    for path in paths:
        nb = read(path)
        path = Path(path).resolve()
        inside = path.is_relative_to(root.resolve())
        name = (path.relative_to(root.resolve()) if inside else Path(path.name)).with_suffix(
            ".ipynb")
        result = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--stdin-filename", str(name), "-"],
            input=nbformat.writes(nb), capture_output=True, text=True, cwd=root,
        )
        status = max(status, result.returncode)
        if result.returncode:
            report.append(f"{path} (cells numbered as in the notebook):\n{result.stdout}"
                          f"{result.stderr}")
    return status, "\n".join(report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The pages of _toc.yml and their sources.")
    parser.add_argument("--lint", action="store_true", help="ruff on every chapter's code cells")
    args = parser.parse_args(argv)
    if args.lint:
        status, report = lint()
        print(report or f"{len(notebooks())} chapters: ruff found nothing.")
        return status
    print("\n".join(pages()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

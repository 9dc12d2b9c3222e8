"""Keep the Colab setup cell of every chapter notebook in sync with `_config.yml`.

Every chapter notebook in book/ (MyST Markdown through jupytext, or .ipynb; read and written by
scripts/toc.py) starts (first code cell) with the same setup cell. In Google Colab it
installs the course's `lib` package from the repository named in `_config.yml`
(`repository.url` and `repository.branch`: the one place the URL is written); anywhere else it
does nothing. It keeps Colab's own torch, numpy and ipywidgets: the package is installed with
`--no-deps`, then only the dependencies that are not installed at all are added.

It also keeps the two constants of `lib/course/links.py` (REPOSITORY, BRANCH) equal to
`_config.yml`: an installed `lib` has no `_config.yml`, and `lib/course/links.py` derives every
address of the course from them (the website, the reader notebooks' Colab links, the release
assets). `website_url` and `colab_url` below hand `_config.yml`'s repository to those same
functions, so that derivation is written once, in `lib/course/links.py`.

Usage (from the repository root):

    python -m scripts.colab_setup --check   # exit 1 and list notebooks (and lib/course/links.py)
                                            # that are stale
    python -m scripts.colab_setup --write   # insert or update the cell in every notebook, and
                                            # the constants of lib/course/links.py
    python -m scripts.colab_setup --print   # show the cell

`--check` runs in tests/test_hygiene.py. Notebooks can also be given explicitly as arguments
(then lib/course/links.py is left alone).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
import yaml

from lib.course import links
from scripts import toc

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"
PYPROJECT = ROOT / "pyproject.toml"
BOOK = ROOT / "book"
LINKS = ROOT / "lib" / "course" / "links.py"
LINKS_BLOCK = re.compile(
    r"(?P<head># --- generated from _config.yml by scripts/colab_setup.py --write; do not edit "
    r"by hand ---\n)(?P<body>.*?)(?P<tail># --- end of generated part ---)", re.S)

CELL_ID = "colab-setup"
TAG = "colab-setup"
# `remove-cell`: the website does not show the cell (it does nothing there); it is still run.
TAGS = [TAG, "remove-cell"]

TEMPLATE = '''\
# Colab setup: generated from _config.yml by scripts/colab_setup.py; do not edit by hand.
# In Google Colab, install the course's `lib` package from GitHub, keeping Colab's own torch,
# numpy and ipywidgets. Anywhere else, do nothing.
COURSE_PACKAGE = "{pip_url}"

try:
    import google.colab  # noqa: F401

    IN_COLAB = True
except ImportError:
    IN_COLAB = False

if IN_COLAB:
    import re
    import subprocess
    import sys
    from importlib import metadata

    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    subprocess.run(pip + ["--no-deps", "--force-reinstall", COURSE_PACKAGE], check=True)
    # Add only the dependencies that are missing; never upgrade what Colab already has.
    missing = []
    for requirement in metadata.requires("{dist_name}") or []:
        if "extra ==" in requirement:
            continue
        name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(requirement)
    if missing:
        subprocess.run(pip + missing, check=True)'''


def load_repository(config_path: Path = CONFIG) -> tuple[str, str]:
    """The repository URL (without a trailing slash or `.git`) and branch from `_config.yml`."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    repo = config["repository"]
    url = str(repo["url"]).rstrip("/")
    url = url[: -len(".git")] if url.endswith(".git") else url
    return url, str(repo.get("branch") or "main")


def distribution_name(pyproject: Path = PYPROJECT) -> str:
    """The pip name of the course package, from pyproject.toml."""
    text = pyproject.read_text(encoding="utf-8")
    project = text.split("[project]", 1)[1]
    return re.search(r'^name\s*=\s*"([^"]+)"', project, re.MULTILINE).group(1)


def render_cell(config_path: Path = CONFIG, pyproject: Path = PYPROJECT) -> str:
    """The source of the setup cell for this repository."""
    url, branch = load_repository(config_path)
    pip_url = f"git+{url}.git@{branch}"
    return TEMPLATE.format(pip_url=pip_url, dist_name=distribution_name(pyproject))


def website_url(config_path: Path = CONFIG) -> str:
    """The course website's address (GitHub Pages of the repository), ending with "/"."""
    return links.website(load_repository(config_path)[0])


def colab_url(chapter: str | Path, config_path: Path = CONFIG) -> str:
    """The Colab link of a chapter's reader notebook, published flat on the notebooks branch:
    "book/encoder", "book/encoder.md" and "encoder.ipynb" all give .../blob/notebooks/encoder
    .ipynb."""
    return links.colab(f"{Path(chapter).stem}.ipynb", load_repository(config_path)[0])


def render_links(config_path: Path = CONFIG) -> str:
    """The generated part of lib/course/links.py for this repository."""
    url, branch = load_repository(config_path)
    return f'REPOSITORY = "{url}"\nBRANCH = "{branch}"\n'



def sync_links(path: Path = LINKS, config_path: Path = CONFIG, write: bool = False) -> bool:
    """True when lib/course/links.py's constants equal _config.yml's (after writing them, if
    asked)."""
    text = path.read_text(encoding="utf-8")
    match = LINKS_BLOCK.search(text)
    if match is None:
        raise ValueError(f"{path} has no block generated by scripts/colab_setup.py")
    body = render_links(config_path)
    if match["body"] == body:
        return True
    if write:
        path.write_text(text[:match.start("body")] + body + text[match.end("body"):],
                        encoding="utf-8")
        print(f"updated {path}")
    return False


def find_notebooks(book: Path = BOOK) -> list[Path]:
    """The chapter notebooks under book/ (MyST Markdown notebooks and any .ipynb), outside
    checkpoints and builds; plain Markdown pages such as intro.md are not notebooks."""
    skip = {".ipynb_checkpoints", "_build", "jupyter_execute"}
    return sorted(
        p for p in book.rglob("*")
        if p.suffix in toc.PAGE_SUFFIXES and p.is_file()
        and not skip.intersection(p.relative_to(book).parts) and toc.is_notebook(p)
    )


def _first_code_index(nb) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            return i
    return None


def is_in_sync(nb, source: str) -> bool:
    """True if the notebook's first code cell is exactly the setup cell, and it is the only one."""
    i = _first_code_index(nb)
    if i is None:
        return False
    cell = nb.cells[i]
    tagged = [c for c in nb.cells if TAG in c.get("metadata", {}).get("tags", [])]
    return (
        cell.source == source
        and all(t in cell.metadata.get("tags", []) for t in TAGS)
        and tagged == [cell]
    )


def sync(nb, source: str) -> bool:
    """Make the first code cell of `nb` the setup cell. Returns True if `nb` changed."""
    if is_in_sync(nb, source):
        return False
    # Drop stale copies anywhere in the notebook, then put the cell before the first code cell.
    nb.cells = [c for c in nb.cells if TAG not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_code_cell(source=source, metadata={"tags": list(TAGS)})
    if nb.get("nbformat", 4) == 4 and nb.get("nbformat_minor", 0) >= 5:
        cell["id"] = CELL_ID
    else:
        cell.pop("id", None)
    i = _first_code_index(nb)
    nb.cells.insert(len(nb.cells) if i is None else i, cell)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="report stale notebooks, exit 1")
    mode.add_argument("--write", action="store_true", help="update the notebooks in place")
    mode.add_argument("--print", action="store_true", help="print the setup cell")
    parser.add_argument("--config", type=Path, default=CONFIG, help="path to _config.yml")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="default: every chapter notebook in book/")
    args = parser.parse_args(argv)

    source = render_cell(args.config)
    if args.print:
        print(source)
        return 0
    notebooks = args.notebooks or find_notebooks()
    stale = []
    if not args.notebooks and LINKS.is_file():
        if not sync_links(LINKS, args.config, write=args.write) and args.check:
            stale.append(LINKS)
    for path in notebooks:
        nb = toc.read(path)
        if args.check:
            if not is_in_sync(nb, source):
                stale.append(path)
        elif sync(nb, source):
            toc.write(nb, path)
            print(f"updated {path}")
    if stale:
        print("The Colab setup cell (or lib/course/links.py's constants) is missing or stale in:",
              file=sys.stderr)
        for path in stale:
            print(f"  {path}", file=sys.stderr)
        print("Run `python -m scripts.colab_setup --write` to fix them.", file=sys.stderr)
        return 1
    if args.check:
        print(f"{len(notebooks)} notebook(s) checked: the Colab setup cell is in sync.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

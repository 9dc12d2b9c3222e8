"""Every chapter of `_toc.yml` -> its reader notebook file, from the strict build."""

from __future__ import annotations

from pathlib import Path

import nbformat

from scripts import colab_setup, toc
from scripts.reader.errors import ReaderNotebookError
from scripts.reader.notebook import reader_notebook
from scripts.reader.site import BUILD, ROOT, Site, load_site


def executed_chapter(site: Site, page: str):
    """The chapter as the build executed it (myst-nb's copy in jupyter_execute/, outputs
    aside): its text and its glued values always belong together, even when the source was
    edited during or after the build."""
    path = (site.build or BUILD) / "jupyter_execute" / f"{page}.ipynb"
    if page not in site.docs or not path.is_file():
        raise ReaderNotebookError(f"{page}: not in the built website ({path} is missing); "
                                  "build it first (`make book`)")
    return nbformat.read(path, as_version=4)


def render_all(site: Site, toc_path: Path = ROOT / "_toc.yml") -> dict[str, str]:
    """{page: the reader notebook's file text} for every chapter of `toc_path`, in its order."""
    setup_source = colab_setup.render_cell()
    texts = {}
    for page in toc.notebooks(toc_path):
        nb = executed_chapter(site, page)
        reader = reader_notebook(nb, site, page, setup_source)
        texts[page] = nbformat.writes(reader) + "\n"
    return texts


def write_notebooks(out: Path, build: Path = BUILD, toc_path: Path = ROOT / "_toc.yml",
                    site: Site | None = None) -> list[Path]:
    """Write <out>/<chapter>.ipynb for every chapter (the .ipynb already there are removed, so
    `out` holds exactly the current chapters)."""
    texts = render_all(site or load_site(build), toc_path)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ipynb"):
        old.unlink()
    written = []
    for page, text in texts.items():
        path = out / f"{Path(page).name}.ipynb"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written

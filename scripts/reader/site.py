"""What the website knows: glued values, titles, labels, numbers, figures, citations.

The conversion reads all of it from the strict build (`_build/`), so a reader notebook shows
the values, numbers and addresses the website shows.
"""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path

from myst_nb.ext.glue.crossref import read_glue_cache
from pybtex.database import parse_file
from pybtex.richtext import Text
from sphinx.util.inventory import InventoryFile

from scripts import colab_setup
from scripts.reader.errors import ReaderNotebookError

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build"


class Site:
    """Everything the conversion reads from the build, keyed by page (e.g. "book/decoder")."""

    def __init__(self, website: str, glue=None, docs=None, labels=None, numbers=None,
                 equations=None, citations=None, references_page: str = "book/references",
                 build: Path | None = None):
        self.website = website  # ends with "/"
        self.build = build  # the build directory (jupyter_execute/ holds the executed chapters)
        # page -> {name: {"data": mime bundle, "metadata": {...}}}, as myst-nb stored it
        self.glue: dict[str, dict[str, dict]] = glue or {}
        self.docs: dict[str, str] = docs or {}  # page -> title
        # label -> (uri, title), e.g. ("book/decoder.html#section", "The decoder")
        self.labels: dict[str, tuple[str, str]] = labels or {}
        # exercise label -> (uri, "Exercise 2"); equation label -> (uri, "3")
        self.numbers: dict[str, tuple[str, str]] = numbers or {}
        self.equations: dict[str, tuple[str, str]] = equations or {}
        # bibliography key -> ("Cho et al.", "2014")
        self.citations: dict[str, tuple[str, str]] = citations or {}
        # bibliography key -> the id of its entry on the references page ("id4")
        self.citation_anchors: dict[str, str] = {}
        # page -> its figures as built: [{"id": "fig-x", "src": "_images/x.svg",
        # "number": "Fig. 2"}] (src relative to the website's root)
        self.figures: dict[str, list[dict[str, str]]] = {}
        self.references_page = references_page

    def url(self, uri: str) -> str:
        """The website's address of `uri` (a page "book/x" or a built path "book/x.html#a")."""
        path, _, anchor = uri.partition("#")
        if not path.endswith(".html"):
            path += ".html"
        return self.website + path + (f"#{anchor}" if anchor else "")


def load_glue(build: Path, page: str) -> dict[str, dict]:
    """The values a page glued during the build, as myst-nb stored them in its .glue.json:
    {name: {"data": mime bundle, "metadata": ...}}."""
    return read_glue_cache(str(build / "jupyter_execute"), page)


def load_inventory(html_dir: Path) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Page titles and labels (uri, title) from the website's objects.inv, as Sphinx wrote it."""
    path = html_dir / "objects.inv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the website first (`make book`)")
    with path.open("rb") as stream:
        inventory = InventoryFile.load(stream, "", posixpath.join)
    docs = {name: entry[3] for name, entry in inventory.get("std:doc", {}).items()}
    labels = {name: (entry[2], name if entry[3] == "-" else entry[3])
              for name, entry in inventory.get("std:label", {}).items()}
    return docs, labels


_NUMBERED = re.compile(
    r'id="(?P<id>[^"]+)"[^>]*>\s*<p class="admonition-title">\s*'
    r'<span class="caption-number">(?P<num>[^<]+?)\s*</span>')
_EQNO = re.compile(
    r'id="equation-(?P<id>[^"]+)"[^>]*>\s*<span class="eqno">\((?P<num>[^)]+)\)')


def load_numbers(html_dir: Path, page: str):
    """The numbers the website gives a page's exercises and labelled equations, from its HTML:
    ({label: (uri, "Exercise 2")}, {label: (uri, "3")})."""
    path = html_dir / f"{page}.html"
    if not path.is_file():
        return {}, {}
    text = path.read_text(encoding="utf-8")
    numbers = {m["id"]: (f"{page}.html#{m['id']}", html.unescape(m["num"]).strip())
               for m in _NUMBERED.finditer(text)}
    equations = {m["id"]: (f"{page}.html#equation-{m['id']}", m["num"])
                 for m in _EQNO.finditer(text)}
    return numbers, equations


_FIGURE = re.compile(r'<figure\b[^>]*?\bid="(?P<id>[^"]+)"[^>]*>(?P<body>.*?)</figure>', re.S)


def load_figures(html_dir: Path, page: str) -> list[dict[str, str]]:
    """A page's figures as the website shows them: their ids, where Sphinx copied each image
    (relative to the website's root) and the numbers it gave them."""
    path = html_dir / f"{page}.html"
    if not path.is_file():
        return []
    figures = []
    for m in _FIGURE.finditer(path.read_text(encoding="utf-8")):
        src = re.search(r'<img\b[^>]*?\bsrc="(?P<src>[^"]+)"', m["body"])
        if not src:
            continue
        number = re.search(r'<span class="caption-number">(?P<num>[^<]+?)\s*</span>', m["body"])
        figures.append({
            "id": m["id"],
            "src": posixpath.normpath(posixpath.join(posixpath.dirname(page),
                                                     html.unescape(src["src"]))),
            "number": html.unescape(number["num"]).strip() if number else "",
        })
    return figures


def load_citations(bib: Path) -> dict[str, tuple[str, str]]:
    """{key: ("Cho et al.", "2014")} from the bibliography, as the website's author-year style
    shortens names (one or two surnames, or the first and "et al.")."""

    def surname(person) -> str:
        parts = person.prelast_names + person.last_names
        return str(Text.from_latex(" ".join(parts)).render_as("text"))

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [surname(p) for p in people]
        if not names:
            raise ReaderNotebookError(f"{bib}: entry {key!r} has no author or editor")
        if len(names) == 1:
            short = names[0]
        elif len(names) == 2:
            short = f"{names[0]} and {names[1]}"
        else:
            short = f"{names[0]} et al."
        out[key] = (short, entry.fields.get("year", "n.d."))
    return out


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def load_citation_anchors(html_dir: Path, bib: Path, page: str = "book/references"
                          ) -> dict[str, str]:
    """{key: the id of its entry on the references page}: sphinxcontrib-bibtex numbers the
    entries (id4, id13, ...), so each is found by its title, which only one entry holds."""
    path = html_dir / f"{page}.html"
    if not path.is_file():
        return {}
    entries = {m["id"]: _squash(html.unescape(re.sub(r"<[^>]+>", "", m["body"])))
               for m in re.finditer(r'<div class="citation" id="(?P<id>[^"]+)"[^>]*>'
                                    r"(?P<body>.*?)</div>", path.read_text("utf-8"), re.S)}
    anchors = {}
    for key, entry in parse_file(str(bib)).entries.items():
        title = _squash(str(Text.from_latex(entry.fields.get("title", "")).render_as("text")))
        found = [anchor for anchor, text in entries.items() if title and title in text]
        if len(found) > 1:  # a short title ("Deep Learning") inside another entry's text
            authors = entry.persons.get("author", [])
            last = _squash(" ".join(authors[0].last_names)) if authors else ""
            found = [anchor for anchor in found if last and last in entries[anchor]]
        if len(found) == 1:
            anchors[key] = found[0]
    return anchors


def load_site(build: Path = BUILD, config: Path = ROOT / "_config.yml",
              bib: Path = ROOT / "book" / "references.bib") -> Site:
    """Read what the strict build left in `build` (the website, its executed notebooks)."""
    html_dir = build / "html"
    site = Site(website=colab_setup.website_url(config), build=build)
    site.docs, site.labels = load_inventory(html_dir)
    for page in site.docs:
        site.glue[page] = load_glue(build, page)
        numbers, equations = load_numbers(html_dir, page)
        site.figures[page] = load_figures(html_dir, page)
        site.numbers.update(numbers)
        site.equations.update(equations)
    site.citations = load_citations(bib)
    site.citation_anchors = load_citation_anchors(html_dir, bib, site.references_page)
    return site

"""Reader notebooks: each chapter as Google Colab and JupyterLab show it.

The chapters are MyST Markdown notebooks that only Jupyter Book renders: glue roles stand where
the numbers go, citations and cross-references are roles, exercises and admonitions are
directives, solutions are code cells between `solution-start` and `solution-end`. This script
turns each chapter of `_toc.yml` into a plain notebook (`<out>/<chapter>.ipynb`, flat, one per
chapter) from the executed build (myst-nb's copy of each chapter, so that the text and the
glued values belong together) and the website:

- glue roles become the values the build computed (`_build/jupyter_execute/book/<chapter>
  .glue.json`, where myst-nb stores every glued value), formatted as the role says;
- citations become "Cho et al. (2014)" / "(Cho et al. 2014)" linked to the website's
  references page; {doc}, {ref}, {numref} and {eq} become links to the website's pages, with
  the titles and numbers the website shows (its objects.inv and HTML);
- admonitions become quoted blocks with a bold title, exercises numbered headings
  ("Exercise 3: ..."), `{math}` and labelled `$$` blocks plain `$$` math with the website's
  number as `\\tag`, and a `\\tag` inside `aligned`/`split` (a MathJax error) moves outside it;
- a `{figure}` becomes an `<img>` of the website's copy of the image (the built page says
  where Sphinx put it, e.g. `_images/encoder_grid.svg`), with the figure's alt text, and its
  caption with the website's number below. A link, not an embedded copy: Colab shows no SVG
  given as a data: URI and no cell attachment (googlecolab/colabtools#2092, #3836), and the
  notebook is opened there without the files beside it; JupyterLab and the classic Notebook
  show the same link;
- each solution (code and text) becomes one Markdown cell holding a `<details>` block: it is
  collapsed in Colab, JupyterLab and the classic Notebook, and no front end runs Markdown, so
  Run All never runs a solution. (A Colab form cell, `cellView: form`, only hides code: Colab
  still runs it with Run All, and JupyterLab ignores that metadata and shows it.)
- code cells keep their code and lose their outputs; `glue(...)` statements, which only feed
  the website's text, are removed (the `glue` import, and the computations that only fed them,
  with them); cells tagged `remove-cell` are website machinery and are left out (an error if a
  later cell needs what one defines), except the Colab setup cell, which comes first, and cells
  also tagged `reader-only` (live views, whose controls need a kernel), which stay; a
  `remove-input`/`hide-input` cell keeps its code, collapsed.

The website's address is `lib/course/links.py`'s `website()` of the repository URL in `_config.yml`
(through `scripts/colab_setup.py` `website_url`): that derivation is written once, there. The
same input gives the same bytes. Usage (after the strict build, `make notebooks`):

    python scripts/reader_notebooks.py --out _build/notebooks [--build _build]
"""

from __future__ import annotations

import argparse
import ast
import base64
import html
import importlib.util
import json
import posixpath
import re
import sys
from ast import literal_eval
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"

# The tags that only steer the website; a reader notebook drops them.
BOOK_TAGS = {"remove-cell", "remove-input", "remove-output", "hide-input", "hide-output",
             "hide-cell", "colab-setup", "reader-only", "skip-execution"}
SETUP_TAG = "colab-setup"
# With remove-cell (and skip-execution, so the build neither runs nor saves it): a cell the
# website leaves out but the reader notebook keeps (a live view, whose controls would be dead on
# a static page).
READER_ONLY = "reader-only"
ADMONITIONS = {
    "note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important",
    "warning": "Warning", "caution": "Caution", "attention": "Attention", "danger": "Danger",
    "error": "Error", "seealso": "See also", "admonition": None, "margin": None,
    "sidebar": None, "topic": None,
}
# myst-nb's order of preference (html builder) when {glue} shows "the best" form of a value.
MIME_ORDER = ("text/html", "image/svg+xml", "image/png", "image/gif", "image/jpeg",
              "text/markdown", "text/latex", "text/plain")
CITE_ROLES = {"cite", "cite:p", "cite:t", "cite:ps", "cite:ts", "cite:author", "cite:year"}


class ReaderNotebookError(ValueError):
    """A chapter uses something the reader notebook cannot show faithfully."""


# ---------------------------------------------------------------------------------------------
# What the website knows: glued values, titles, labels, numbers, citations
# ---------------------------------------------------------------------------------------------


class Site:
    """Everything the conversion reads from the build, keyed by page (e.g. "book/decoder").

    (A plain class, not a dataclass: the tests load this script by path, outside sys.modules,
    where dataclasses cannot resolve the postponed annotations.)
    """

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


def _toc():
    spec = importlib.util.spec_from_file_location("scripts_toc", Path(__file__).with_name("toc.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _colab_setup():
    path = Path(__file__).with_name("colab_setup.py")
    spec = importlib.util.spec_from_file_location("scripts_colab_setup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_glue(build: Path, page: str) -> dict[str, dict]:
    """The values a page glued during the build, as myst-nb stored them in its .glue.json:
    {name: {"data": mime bundle, "metadata": ...}}."""
    path = build / "jupyter_execute" / f"{page}.glue.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text("utf-8"))


def load_inventory(html_dir: Path) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Page titles and labels (uri, title) from the website's objects.inv, as Sphinx wrote it."""
    from sphinx.util.inventory import InventoryFile

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
    from pybtex.database import parse_file
    from pybtex.richtext import Text

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
    from pybtex.database import parse_file
    from pybtex.richtext import Text

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
        if len(found) == 1:
            anchors[key] = found[0]
    return anchors


def load_site(build: Path = BUILD, config: Path = ROOT / "_config.yml",
              bib: Path = ROOT / "book" / "references.bib") -> Site:
    """Read what the strict build left in `build` (the website, its executed notebooks)."""
    html_dir = build / "html"
    site = Site(website=_colab_setup().website_url(config), build=build)
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


# ---------------------------------------------------------------------------------------------
# Markdown: MyST blocks and roles -> CommonMark that Colab and JupyterLab render
# ---------------------------------------------------------------------------------------------

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<rest>.*)$")
_DIRECTIVE = re.compile(r"^\s*\{(?P<name>[a-zA-Z][\w:.-]*)\}\s*(?P<arg>.*?)\s*$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
_ROLE_OR_CODE = re.compile(
    r"(?P<role>\{(?P<name>[a-zA-Z][\w:.-]*)\}`(?P<content>[^`]*)`)"
    r"|(?P<code>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<link>\]\((?P<target>[^()\s]+)\))", re.S)
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+\S")
_MATH_LABEL = re.compile(r"\$\$\s*\((?P<label>[^()\s]+)\)\s*$")


class Block:
    """One block of a Markdown text: "text", "code" (a fence), "math" ($$) or "directive"."""

    def __init__(self, kind: str, lines: list[str], name: str = "", arg: str = "",
                 options: dict[str, str] | None = None, label: str = ""):
        self.kind = kind
        self.lines = lines  # text/code/math: the raw lines; directive: its content
        self.name = name  # directive name
        self.arg = arg  # directive argument (its title)
        self.options = options or {}
        self.label = label  # math: the label of a labelled `$$` block


def _closing(lines: list[str], start: int, char: str, width: int) -> int:
    closer = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{width},}}\s*$")
    for j in range(start, len(lines)):
        if closer.match(lines[j]):
            return j
    return -1


def _directive_body(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """Split a directive's options (`:key: value` lines or a `---` YAML block) from its content."""
    options: dict[str, str] = {}
    i = 0
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), -1)
        if end < 0:
            raise ReaderNotebookError("a directive's YAML options (---) are never closed")
        import yaml

        options = {str(k): str(v) for k, v in (yaml.safe_load("\n".join(body[1:end])) or {})
                   .items()}
        i = end + 1
    else:
        while i < len(body) and _OPTION.match(body[i]):
            m = _OPTION.match(body[i])
            options[m["key"]] = m["value"]
            i += 1
    while i < len(body) and not body[i].strip():
        i += 1
    return options, body[i:]


def parse_blocks(text: str) -> list[Block]:
    """Split Markdown into text, fenced code, `$$` math and MyST directive blocks."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0

    def add_text(line):
        if blocks and blocks[-1].kind == "text":
            blocks[-1].lines.append(line)
        else:
            blocks.append(Block("text", [line]))

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            char, width = fence["fence"][0], len(fence["fence"])
            end = _closing(lines, i + 1, char, width)
            directive = _DIRECTIVE.match(fence["rest"])
            if directive:
                if end < 0:
                    raise ReaderNotebookError(
                        f"the directive {{{directive['name']}}} opened by {line.strip()!r} is "
                        "never closed")
                options, body = _directive_body(lines[i + 1:end])
                blocks.append(Block("directive", body, directive["name"], directive["arg"],
                                    options))
                i = end + 1
                continue
            if char != ":":  # a plain code fence; to the end of the cell if never closed
                stop = len(lines) - 1 if end < 0 else end
                blocks.append(Block("code", lines[i:stop + 1]))
                i = stop + 1
                continue
        stripped = line.strip()
        if stripped.startswith("$$"):
            rest = stripped[2:]
            if "$$" in rest:  # one line: $$ x $$ (label)
                end = i
            else:
                end = next((j for j in range(i + 1, len(lines)) if "$$" in lines[j]), -1)
                if end < 0:
                    raise ReaderNotebookError(f"display math opened by {line.strip()!r} is "
                                              "never closed with $$")
            math_lines = lines[i:end + 1]
            label = ""
            m = _MATH_LABEL.search(math_lines[-1])
            if m and math_lines[-1].rstrip().endswith(")"):
                label = m["label"]
                math_lines[-1] = math_lines[-1][:m.start()] + "$$"
            blocks.append(Block("math", math_lines, label=label))
            i = end + 1
            continue
        add_text(line)
        i += 1
    return blocks


def escape_markdown(text: str) -> str:
    """Text that Markdown shows as written (a glued string can hold `<eos>` or `*`)."""
    text = html.escape(text, quote=False)
    return re.sub(r"([\\`*_\[\]$|])", r"\\\1", text)


def format_glue_text(plain: str, spec: str) -> str:
    """myst-nb's {glue:text}`name:spec`: the text/plain value, formatted (its format_plain_text)."""
    try:
        value = literal_eval(plain)
    except (SyntaxError, ValueError):
        value = plain
    if spec == "":
        return str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, spec)


class Converter:
    """Turns the Markdown of one chapter into CommonMark, with the website's values and links."""

    def __init__(self, site: Site, page: str):
        self.site = site
        self.page = page
        self.heading_level = 1
        self.exercises: dict[str, str] = {}  # label -> title (Markdown)

    # --- errors and lookups ------------------------------------------------------------------

    def fail(self, message: str):
        raise ReaderNotebookError(f"{self.page}: {message}")

    def glued(self, key: str) -> dict:
        """The stored output of glue(key) ({"data": ..., "metadata": ...}); `doc::key` reads
        another page's."""
        page = self.page
        if "::" in key:
            doc, key = key.split("::", 1)
            page = self.doc_path(doc)
        entry = self.site.glue.get(page, {}).get(key)
        if entry is None:
            self.fail(f"no glued value {key!r} in the build of {page} (glue it in a code cell, "
                      "and build the website before `make notebooks`)")
        return entry

    def glue_bundle(self, key: str) -> dict:
        return self.glued(key)["data"]

    def doc_path(self, target: str) -> str:
        target = target.strip()
        base = posixpath.dirname(self.page)
        path = target[1:] if target.startswith("/") else posixpath.join(base, target)
        path = posixpath.normpath(path)
        for suffix in (".md", ".ipynb"):
            path = path.removesuffix(suffix)
        if path not in self.site.docs:
            self.fail(f"{target!r} is not a page of the website (a {{doc}} or a link)")
        return path

    # --- inline --------------------------------------------------------------------------------

    @staticmethod
    def _title_and_target(content: str) -> tuple[str | None, str]:
        m = re.fullmatch(r"(?s)(?P<title>.*?)\s*<(?P<target>[^<>]+)>", content)
        if m and m["title"]:
            return m["title"], m["target"]
        return None, content

    def role(self, name: str, content: str) -> str:
        if name in ("glue", "glue:", "glue:any"):
            entry = self.glued(content)
            return self.glue_any(entry["data"], inline=True, metadata=entry.get("metadata"))
        if name == "glue:text":
            key, spec = content, "s"
            head, colon, tail = content.rpartition(":")
            if colon and not head.endswith(":"):  # key:spec, not the "::" of doc::key
                key, spec = head, tail
            bundle = self.glue_bundle(key)
            if "text/plain" not in bundle:
                self.fail(f"glued value {key!r} has no text/plain form")
            try:
                return escape_markdown(format_glue_text(bundle["text/plain"], spec))
            except (TypeError, ValueError) as error:
                self.fail(f"{{glue:text}}`{content}`: cannot format the value: {error}")
        if name == "glue:md":
            head, colon, _ = content.rpartition(":")
            key = head if colon and not head.endswith(":") else content
            bundle = self.glue_bundle(key)
            if "text/markdown" not in bundle:
                self.fail(f"glued value {key!r} has no text/markdown form")
            return self.inline(bundle["text/markdown"].strip())
        if name in CITE_ROLES:
            return self.cite(name, content)
        if name == "doc":
            title, target = self._title_and_target(content)
            path = self.doc_path(target)
            title = title or self.site.docs[path]
            return f"[{self.inline(title)}]({self.site.url(path)})"
        if name == "ref":
            title, label = self._title_and_target(content)
            if label not in self.site.labels:
                self.fail(f"{{ref}} names {label!r}, which is no label of the website")
            uri, default = self.site.labels[label]
            return f"[{self.inline(title or default)}]({self.site.url(uri)})"
        if name == "numref":
            title, label = self._title_and_target(content)
            if label not in self.site.numbers:
                self.fail(f"{{numref}} names {label!r}, which the website does not number")
            uri, number = self.site.numbers[label]
            text = number if title is None else title.replace("%s", number.split()[-1]).replace(
                "{number}", number.split()[-1])
            return f"[{self.inline(text)}]({self.site.url(uri)})"
        if name == "eq":
            if content not in self.site.equations:
                self.fail(f"{{eq}} names {content!r}, which is no numbered equation of the "
                          "website")
            uri, number = self.site.equations[content]
            return f"[({number})]({self.site.url(uri)})"
        if name == "math":
            return f"${content}$"
        if name in ("sub", "sup", "kbd", "abbr"):
            tag = {"abbr": "abbr"}.get(name, name)
            return f"<{tag}>{html.escape(content, quote=False)}</{tag}>"
        self.fail(f"the role {{{name}}} has no reader-notebook form (in {{{name}}}`{content}`)")

    def link(self, target: str) -> str:
        """A Markdown link's target: addresses stay; a page of the book ("encoder.md#x") or an
        anchor ("#label") becomes the website's address."""
        if re.match(r"^[a-zA-Z][\w+.-]*:", target):
            return target
        path, _, anchor = target.partition("#")
        if not path:
            if anchor in self.site.labels:
                return self.site.url(self.site.labels[anchor][0])
            return self.site.url(self.page) + f"#{anchor}"
        return self.site.url(self.doc_path(path)) + (f"#{anchor}" if anchor else "")

    def cite(self, name: str, content: str) -> str:
        keys = [k.strip() for k in content.split(",") if k.strip()]
        items = []
        for key in keys:
            if key not in self.site.citations:
                self.fail(f"{{{name}}} cites {key!r}, which is not in the bibliography")
            names, year = self.site.citations[key]
            anchor = self.site.citation_anchors.get(key)
            link = self.site.url(self.site.references_page + (f"#{anchor}" if anchor else ""))
            items.append((names, year, link))
        if name in ("cite:t", "cite:ts"):
            return ", ".join(f"[{n} ({y})]({link})" for n, y, link in items)
        if name == "cite:author":
            return ", ".join(f"[{n}]({link})" for n, _, link in items)
        if name == "cite:year":
            return ", ".join(f"[{y}]({link})" for _, y, link in items)
        return "(" + "; ".join(f"[{n} {y}]({link})" for n, y, link in items) + ")"

    def glue_any(self, bundle: dict, inline: bool, metadata: dict | None = None) -> str:
        """A glued value in its best form, as myst-nb picks it for the website."""
        for mime in MIME_ORDER:
            if mime not in bundle:
                continue
            value = bundle[mime]
            if mime == "text/markdown":
                return self.inline(value.strip()) if inline else self.convert(value)
            if mime == "text/html":
                return value.strip()
            if mime.startswith("image/"):
                data = value if mime != "image/svg+xml" else base64.b64encode(
                    value.encode()).decode()
                return f'<img src="data:{mime};base64,{data.strip()}" alt="" />'
            if mime == "text/latex":
                tex = value.strip().strip("$")
                return f"${tex}$" if inline else f"$$\n{tex}\n$$"
            # text/plain: the website shows it as written (a string keeps its quotes, unless
            # the output asked for them to go), inline as text, as a block in a code block
            if not inline:
                return f"```text\n{value.rstrip()}\n```"
            if (metadata or {}).get("strip_text_quotes") and re.fullmatch(r"(['\"]).*\1", value,
                                                                          re.S):
                value = value[1:-1]
            return escape_markdown(value)
        self.fail(f"a glued value has no form a notebook can show ({sorted(bundle)})")

    def inline(self, text: str) -> str:
        """Roles replaced in running text; code spans kept as written."""

        def replace(match):
            if match["code"]:
                return match["code"]
            if match["link"]:
                return f"]({self.link(match['target'])})"
            return self.role(match["name"], match["content"])

        return _ROLE_OR_CODE.sub(replace, text)

    # --- blocks --------------------------------------------------------------------------------

    def text(self, lines: list[str]) -> str:
        out = []
        for line in lines:
            if _TARGET.match(line):
                continue  # a (label)= target: the links point to the website
            if line.startswith("%"):
                continue  # a MyST comment
            heading = _HEADING.match(line)
            if heading:
                self.heading_level = len(heading["hashes"])
            out.append(line)
        return self.inline("\n".join(out))

    def math(self, lines: list[str], label: str = "") -> str:
        body = "\n".join(lines)
        first, last = body.find("$$"), body.rfind("$$")
        inner = body[first + 2:last]
        return "$$" + self.fix_tex(inner, label) + "$$"

    def fix_tex(self, tex: str, label: str = "") -> str:
        """TeX that MathJax renders in Colab and JupyterLab: no \\label, the website's number as
        \\tag, and a \\tag never inside an environment (MathJax: "\\tag not allowed in ...")."""
        tex = re.sub(r"\\label\{[^{}]*\}", "", tex)
        tags = list(re.finditer(r"\\tag\*?\{[^{}]*\}", tex))
        if label:
            if label not in self.site.equations:
                self.fail(f"equation {label!r} has no number on the website")
            if tags:
                self.fail(f"equation {label!r} has both a label and a \\tag")
            return tex.rstrip() + f" \\tag{{{self.site.equations[label][1]}}}" + (
                "\n" if tex.endswith("\n") else "")
        if len(tags) > 1:
            self.fail(f"one display equation has {len(tags)} \\tag commands: {tex.strip()[:80]}")
        if tags:
            tag = tags[0]
            depth = len(re.findall(r"\\begin\{", tex[:tag.start()])) - len(
                re.findall(r"\\end\{", tex[:tag.start()]))
            if depth > 0:  # inside aligned/split/...: move it to the end of the display
                tex = tex[:tag.start()] + tex[tag.end():]
                tex = re.sub(r"[ \t]+\n", "\n", tex).rstrip() + f"\n{tag.group(0)}\n"
        return tex

    def directive(self, block: Block) -> str:
        name, arg = block.name, block.arg
        content = "\n".join(block.lines)
        if name in ADMONITIONS:
            title = ADMONITIONS[name] or arg or name.capitalize()
            if ADMONITIONS[name] is not None and arg:
                content = arg + "\n" + content  # {note} First line as argument
            return quote(f"**{self.inline(title)}**\n\n" + self.convert(content))
        if name == "exercise":
            label = block.options.get("label", "")
            return self.exercise_heading(label, arg) + "\n\n" + self.convert(content)
        if name == "math":
            label = block.options.get("label", "")
            return "$$\n" + self.fix_tex(content + "\n", label) + "$$"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{arg}\n{content}\n```"
        if name in ("glue", "glue:", "glue:any", "glue:figure", "glue:math", "glue:md"):
            entry = self.glued(arg)
            bundle = entry["data"]
            if name == "glue:math":
                return "$$\n" + self.fix_tex(bundle.get("text/latex", "").strip().strip("$"))\
                    + "\n$$"
            shown = self.glue_any(bundle, inline=False, metadata=entry.get("metadata"))
            caption = self.convert(content).strip()
            return shown + (f"\n\n*{caption}*" if caption else "")
        if name == "figure":
            return self.figure(block)
        if name == "solution":
            return details(self.solution_summary(arg), self.convert(content))
        if name == "dropdown":
            return details(html.escape(arg or "Details", quote=False), self.convert(content))
        self.fail(f"the directive {{{name}}} has no reader-notebook form")

    def figure(self, block: Block) -> str:
        """The website's copy of the image (an <img> with the figure's alt text), then the
        caption with the website's figure number."""
        name, alt = block.options.get("name", ""), block.options.get("alt", "").strip()
        if not alt:
            self.fail(f"the figure {block.arg!r} has no :alt: text")
        if not name:
            self.fail(f"the figure {block.arg!r} has no :name: (the reader notebook finds the "
                      "website's copy of its image by it)")
        built = next((f for f in self.site.figures.get(self.page, []) if f["id"] == name), None)
        if built is None:
            self.fail(f"the figure {name!r} is not on the built page (build the website before "
                      "`make notebooks`)")
        image = (f'<img src="{html.escape(self.site.website + built["src"])}" '
                 f'alt="{html.escape(alt)}" />')
        caption = self.convert("\n".join(block.lines)).strip()
        if built["number"]:
            caption = f"**{built['number']}** {caption}".strip()
        return image + (f"\n\n{caption}" if caption else "")

    def exercise_heading(self, label: str, title: str) -> str:
        self.exercises[label] = title
        number = self.site.numbers.get(label, (None, "Exercise"))[1] if label else "Exercise"
        level = min(self.heading_level + 1, 6)
        return "#" * level + " " + number + (f": {self.inline(title)}" if title else "")

    def solution_summary(self, label: str) -> str:
        """The <summary> of a solution: "Solution to Exercise 2 (its title) (click to show)", as
        HTML. The words say that it opens: the classic Notebook styles <summary> as a block,
        which hides the disclosure triangle."""
        if label not in self.site.numbers and label not in self.exercises:
            self.fail(f"a solution names the exercise {label!r}, which this page does not have")
        number = self.site.numbers.get(label, (None, "the exercise"))[1]
        title = self.exercises.get(label, "")
        text = f"<b>Solution to {html.escape(number, quote=False)}</b>"
        if title:
            plain = html.escape(self.inline(title), quote=False)
            plain = re.sub(r"`([^`]+)`", r"<code>\1</code>", plain)
            text += f" ({plain})"
        return text + " <i>(click to show)</i>"

    def convert(self, markdown: str) -> str:
        """One Markdown text (a cell, or a directive's content) in reader form."""
        parts = []
        for block in parse_blocks(markdown):
            if block.kind == "text":
                parts.append(self.text(block.lines))
            elif block.kind == "code":
                parts.append("\n".join(block.lines))
            elif block.kind == "math":
                parts.append(self.math(block.lines, block.label))
            else:
                parts.append(self.directive(block))
        return tidy("\n".join(parts))


def tidy(text: str) -> str:
    """At most one blank line in a row outside fenced code (code keeps its own), none at the
    ends."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            if re.match(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
                fence = ""
        elif opening and opening["fence"][0] != ":":
            fence = opening["fence"]
        elif not line.strip() and out and not out[-1].strip():
            continue
        out.append(line if line.strip() or fence else "")
    return "\n".join(out).strip("\n")


def quote(markdown: str) -> str:
    """A Markdown block quote; each `$$` display is put on one line, because JupyterLab reads the
    math before the Markdown and would otherwise see the `> ` marks inside the TeX."""
    def one_line(match):
        return "$$" + " ".join(part.strip() for part in match.group(1).split("\n")) + "$$"

    markdown = re.sub(r"\$\$(.+?)\$\$", one_line, markdown, flags=re.S)
    return "\n".join(f"> {line}" if line.strip() else ">" for line in markdown.split("\n"))


def details(summary_html: str, markdown: str) -> str:
    """A collapsed block. The blank line after </summary> makes Colab and JupyterLab read the
    inside as Markdown (code, maths), not as raw HTML."""
    return f"<details>\n<summary>{summary_html}</summary>\n\n{markdown.strip()}\n\n</details>"


# ---------------------------------------------------------------------------------------------
# Code: the website's glue() calls out
# ---------------------------------------------------------------------------------------------

GLUE_MODULES = {"lib.course.notebook", "myst_nb"}


def _is_glue_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "glue")


def _pure_glue(node: ast.stmt) -> bool:
    """A statement that only glues: a glue() call, or a loop/if/with of nothing but those."""
    if _is_glue_call(node):
        return True
    if isinstance(node, (ast.For, ast.If, ast.With)):
        bodies = node.body + list(getattr(node, "orelse", []))
        return bool(bodies) and all(_pure_glue(child) for child in bodies)
    return False


def strip_glue(source: str, where: str = "a code cell") -> str:
    """The code without its glue() statements and without the import of glue."""
    if "glue" not in source:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ReaderNotebookError(f"{where} does not parse, so its glue() calls cannot be "
                                  f"removed: {error}") from error
    lines = source.split("\n")
    drop: set[int] = set()  # 0-based line numbers

    def visit(body: list[ast.stmt]):
        keep = [s for s in body if not _pure_glue(s)]
        if not keep:
            return False  # the caller removes the whole compound statement
        for stmt in body:
            if _pure_glue(stmt):
                drop.update(range(stmt.lineno - 1, stmt.end_lineno))
            else:
                for field in ("body", "orelse", "finalbody"):
                    child = getattr(stmt, field, None)
                    if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                        visit(child)
                for handler in getattr(stmt, "handlers", []):
                    visit(handler.body)
        return True

    if not visit(tree.body):
        return ""
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module in GLUE_MODULES:
            names = [a for a in stmt.names if a.name != "glue"]
            if len(names) == len(stmt.names):
                continue
            first = stmt.lineno - 1
            drop.update(range(first + 1, stmt.end_lineno))
            if names:
                listed = ", ".join(a.name + (f" as {a.asname}" if a.asname else "")
                                   for a in names)
                indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
                lines[first] = f"{indent}from {stmt.module} import {listed}"
            else:
                drop.add(first)
    kept = [line for i, line in enumerate(lines) if i not in drop]
    result = tidy_code("\n".join(kept))
    if re.search(r"\bglue\b", result):
        raise ReaderNotebookError(f"{where} still uses glue after its glue() statements were "
                                  "removed (glue inside an expression?):\n" + result)
    return result


def glue_inputs(source: str) -> set[str]:
    """The names the glue() calls of `source` read: what may have been computed only for them."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {name for node in ast.walk(tree) if _is_glue_call(node)
            for name in _loaded_names(node)} - {"glue"}


# Calls that compute without side effects: a statement that calls nothing else may go.
PURE_CALLS = {"abs", "all", "any", "bool", "dict", "enumerate", "float", "format", "int",
              "isinstance", "len", "list", "max", "min", "range", "reversed", "round", "set",
              "sorted", "str", "sum", "tuple", "zip"}


_OWN_SCOPE = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
              ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scoped_walk(node: ast.AST):
    """ast.walk without entering the nodes that have a scope of their own (comprehensions,
    lambdas, functions, classes): what a statement does to the notebook's own names."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in ast.iter_child_nodes(current)
                     if not isinstance(child, _OWN_SCOPE))


def _binds(node: ast.AST) -> set[str]:
    """The notebook-level names a statement binds."""
    names = set()
    for n in _scoped_walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
    return names


def _reads(node: ast.AST) -> set[str]:
    """The notebook-level names a statement reads (a function's parameters and locals are its
    own; what its body reads from outside counts)."""
    reads = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, _OWN_SCOPE):
            reads |= _free_reads(current)
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            reads.add(current.id)
        stack.extend(ast.iter_child_nodes(current))
    return reads


def _free_reads(scope: ast.AST) -> set[str]:
    """What a function, lambda, class or comprehension reads from the scope around it."""
    local = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        local |= {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        local |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    inner = set()
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, ast.arguments):
            continue
        local |= _binds(child)
        inner |= _reads(child)
    return inner - local


def _deferred_reads(node: ast.AST) -> set[str]:
    """Names read inside the functions and lambdas of a statement: read when they are called,
    which may be after any later statement."""
    return set().union(*(_free_reads(d) for d in ast.walk(node)
                         if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))))


def _only_binds(stmt: ast.stmt) -> bool:
    """A statement that only binds names from side-effect-free expressions: no output, no
    attribute or item assignment, no call but PURE_CALLS."""
    if isinstance(stmt, (ast.For, ast.If)):
        if not all(_only_binds(child) for child in stmt.body + stmt.orelse):
            return False
    elif not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name)
                                            and n.func.id in PURE_CALLS):
            return False
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return False
    return True


def prune_glue_leftovers(sources: list[str], candidates: set[str]) -> list[str]:
    """The cells' code (in notebook order) without the computations that only fed glue(): a
    top-level statement that only binds names, one of them read by a removed glue() call,
    none read by a later statement or by any function. Repeated, since removing one can free
    another (the sentence a chapter glued, then the comparisons it was built from)."""
    sources = list(sources)
    candidates = set(candidates)
    while True:
        statements = []
        for i, source in enumerate(sources):
            try:
                statements.extend((i, stmt) for stmt in ast.parse(source).body)
            except SyntaxError:
                continue
        deferred = set().union(*(_deferred_reads(stmt) for _, stmt in statements))
        removed = None
        for k, (i, stmt) in enumerate(statements):
            bound = _binds(stmt)
            if not bound & candidates or not _only_binds(stmt):
                continue
            after = [other for _, other in statements[k + 1:]]
            later = set().union(*(_reads(other) for other in after))
            if isinstance(stmt, ast.For):
                # A loop variable that a later statement binds again is read from there on.
                rebound = set().union(*(_binds(other) for other in after))
                bound -= _binds(stmt.target) & rebound
            if not bound & (later | deferred):
                removed = (i, stmt)
                break
        if removed is None:
            return [tidy_code(s) for s in sources]
        i, stmt = removed
        lines = sources[i].split("\n")
        first = stmt.lineno - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1  # the comment that introduces the statement goes with it
        del lines[first:stmt.end_lineno]
        sources[i] = "\n".join(lines)
        candidates |= _reads(stmt)


def tidy_code(code: str) -> str:
    code = re.sub(r"\n{4,}", "\n\n\n", code)
    return code.strip("\n")


def _bound_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _loaded_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx,
                                                                                   ast.Load)}


# ---------------------------------------------------------------------------------------------
# A chapter -> its reader notebook
# ---------------------------------------------------------------------------------------------

_GATE = re.compile(r"^(?P<kind>solution|exercise)-(?P<edge>start|end)$")


def _split_gates(nb) -> list[tuple]:
    """The chapter as a flat list: ("md", text), ("code", cell), ("start"/"end", kind, arg, opts).
    Gated directives (solution-start ... solution-end) span cells, so they are cut out of the
    Markdown cells they sit in."""
    items: list[tuple] = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            items.append(("code", cell))
            continue
        if cell.cell_type != "markdown":
            continue
        pending: list[str] = []
        lines = cell.source.split("\n")
        i = 0
        while i < len(lines):
            fence = _FENCE.match(lines[i])
            directive = _DIRECTIVE.match(fence["rest"]) if fence else None
            gate = _GATE.match(directive["name"]) if directive else None
            if not fence or not directive:
                pending.append(lines[i])
                i += 1
                continue
            end = _closing(lines, i + 1, fence["fence"][0], len(fence["fence"]))
            if end < 0:
                raise ReaderNotebookError(f"the directive {{{directive['name']}}} opened by "
                                          f"{lines[i].strip()!r} is never closed")
            if not gate:
                pending.extend(lines[i:end + 1])
            else:
                if pending:
                    items.append(("md", "\n".join(pending)))
                    pending = []
                options, body = _directive_body(lines[i + 1:end])
                items.append((gate["edge"], gate["kind"], directive["arg"], options, body))
            i = end + 1
        if pending:
            items.append(("md", "\n".join(pending)))
    return items


def _new_code(source: str, metadata: dict) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source=source, metadata=metadata)


def reader_notebook(nb, site: Site, page: str, setup_source: str | None = None):
    """The reader notebook of chapter `page` (e.g. "book/decoder") from its source notebook."""
    try:
        return _reader_notebook(nb, site, page, setup_source)
    except ReaderNotebookError as error:
        if str(error).startswith(f"{page}: "):
            raise
        raise ReaderNotebookError(f"{page}: {error}") from error


def _reader_notebook(nb, site: Site, page: str, setup_source: str | None):
    conv = Converter(site, page)
    items = _split_gates(nb)
    cells: list = []
    setup = None
    dropped: list[tuple[int, set[str]]] = []  # remove-cell cells: (position, names they bind)
    solution: list[str] | None = None
    solution_label = ""
    glue_fed: set[str] = set()  # names that removed glue() calls read

    def add_markdown(text: str):
        text = tidy(text)
        if text:
            cells.append(nbformat.v4.new_markdown_cell(text))

    for item in items:
        kind = item[0]
        if kind == "md":
            text = conv.convert(item[1])
            if solution is not None:
                solution.append(text)
            else:
                add_markdown(text)
        elif kind == "start":
            _, gate, arg, _options, body = item
            if gate == "exercise":
                heading = conv.exercise_heading(_options.get("label", ""), arg)
                add_markdown(heading + "\n\n" + conv.convert("\n".join(body)))
            else:
                if solution is not None:
                    conv.fail(f"solution {arg!r} starts inside solution {solution_label!r}")
                conv.solution_summary(arg)  # fails early on an unknown exercise
                solution, solution_label = [], arg
        elif kind == "end":
            gate = item[1]
            if gate == "solution":
                if solution is None:
                    conv.fail("a solution-end without its solution-start")
                add_markdown(details(conv.solution_summary(solution_label),
                                     "\n\n".join(s for s in solution if s.strip())))
                solution = None
        else:
            cell = item[1]
            tags = list(cell.metadata.get("tags", []))
            where = f"{page}, code cell {len(cells)}"
            if SETUP_TAG in tags:
                if setup is not None or any(c.cell_type == "code" for c in cells):
                    conv.fail("the Colab setup cell must be the first code cell, and only one")
                setup = _setup_cell(setup_source if setup_source is not None else cell.source)
                cells.append(setup)
                continue
            if "remove-cell" in tags and READER_ONLY not in tags:
                try:
                    dropped.append((len(cells), _bound_names(ast.parse(cell.source))))
                except SyntaxError:
                    dropped.append((len(cells), set()))
                continue
            glue_fed |= glue_inputs(cell.source)
            source = strip_glue(cell.source, where)
            if solution is not None:
                if source.strip():
                    solution.append(f"```python\n{source}\n```")
                continue
            if not source.strip():
                continue
            metadata = {}
            reader_tags = [t for t in tags if t not in BOOK_TAGS]
            if reader_tags:
                metadata["tags"] = reader_tags
            if {"remove-input", "hide-input", "hide-cell"} & set(tags):
                # The website shows only what it draws: collapse the code (JupyterLab, Colab).
                metadata["jupyter"] = {"source_hidden": True}
                metadata["cellView"] = "form"
            cells.append(_new_code(source, metadata))
    if solution is not None:
        conv.fail(f"solution {solution_label!r} is never ended (solution-end)")
    if setup is None:
        conv.fail("no Colab setup cell (a code cell tagged colab-setup)")
    code = [c for c in cells if c.cell_type == "code" and c is not setup]
    for cell, source in zip(code, prune_glue_leftovers([c.source for c in code], glue_fed)):
        cell.source = source
    cells = [c for c in cells if c.cell_type != "code" or c.source.strip()]
    _check_dropped(cells, dropped, page)
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "toc_visible": True},
    }
    for i, cell in enumerate(out.cells):
        cell["id"] = "colab-setup" if cell is setup else f"cell-{i:03d}"
    nbformat.validate(out)
    return out


def _setup_cell(source: str) -> nbformat.NotebookNode:
    """The setup cell as readers see it: its "generated from _config.yml" line is for the
    course's maintainers, not for readers."""
    lines = [line for line in source.split("\n") if not line.startswith("# Colab setup:")]
    return _new_code("\n".join(lines).strip("\n"), {"tags": [SETUP_TAG]})


def _check_dropped(cells, dropped, page):
    """A remove-cell cell is left out, so nothing after it may need a name only it defines."""
    for position, names in dropped:
        defined_elsewhere = set()
        for cell in cells:
            if cell.cell_type == "code":
                try:
                    defined_elsewhere |= _bound_names(ast.parse(cell.source))
                except SyntaxError:
                    pass
        for cell in cells[position:]:
            if cell.cell_type != "code":
                continue
            try:
                needed = _loaded_names(ast.parse(cell.source)) & names - defined_elsewhere
            except SyntaxError:
                continue
            if needed:
                raise ReaderNotebookError(
                    f"{page}: a cell tagged remove-cell defines {sorted(needed)}, which a later "
                    "cell uses; the reader notebook leaves remove-cell cells out (website "
                    "machinery), so move that code to a visible cell or tag it remove-input")


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
    toc = _toc()
    setup_source = _colab_setup().render_cell()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUILD / "notebooks",
                        help="where to write <chapter>.ipynb (default: _build/notebooks)")
    parser.add_argument("--build", type=Path, default=BUILD,
                        help="the strict build's directory (default: _build)")
    args = parser.parse_args(argv)
    try:
        written = write_notebooks(args.out, args.build)
    except (ReaderNotebookError, FileNotFoundError) as error:
        print(f"reader notebooks: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Reader notebooks (scripts/reader/, run as scripts.reader_notebooks): what a reader sees in
Colab and JupyterLab.

Unit tests convert small hand-written chapters and compare with the exact Markdown expected.
The tests on the built website (skipped under a bare pytest without `_build/html`, failing
under `make test`) convert every chapter and check it against what the build computed: every
glued value is there as the website shows it, no MyST syntax is left, solutions are collapsed
and never run, no outputs, the setup cell first; and the website's Colab buttons and downloads
give these notebooks.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT

from scripts import colab_setup, reader_notebooks, toc
from scripts import reader as rn
from scripts.reader.notebook import READER_ONLY

WEB = "https://owner.github.io/repo/"
REFS = WEB + "book/references.html"


def _g(plain: str, **more) -> dict:
    return {"data": {"text/plain": plain, **more}, "metadata": {}}


@pytest.fixture
def site():
    return rn.Site(
        website=WEB,
        glue={
            "book/ch": {
                "n": _g("1234"), "bleu": _g("36.4612"), "share": _g("0.0521"),
                "word": _g("'<eos> *x*'"),
                "note": _g("<IPython.core.display.Markdown object>",
                           **{"text/markdown": "**bold** ({cite:t}`cho2014`)"}),
            },
            "book/other": {"k": _g("5")},
        },
        docs={"book/ch": "The chapter", "book/other": "Other page",
              "book/references": "References"},
        labels={"sec-x": ("book/other.html#sec-x", "A section")},
        numbers={"ch-ex-1": ("book/ch.html#ch-ex-1", "Exercise 3"),
                 "ch-ex-2": ("book/ch.html#ch-ex-2", "Exercise 4")},
        equations={"eq-loss": ("book/ch.html#equation-eq-loss", "7")},
        citations={"cho2014": ("Cho et al.", "2014"), "fa2017": ("Freitag and Al-Onaizan", "2017")},
    )


@pytest.fixture
def conv(site):
    return rn.Converter(site, "book/ch")


# --- inline roles -----------------------------------------------------------------------------


def test_glue_roles_become_the_built_values(conv):
    text = ("BLEU {glue:text}`bleu:.2f` on {glue:text}`n:,d` sentences "
            "({glue:text}`share:.1%`); {glue}`n` and {glue:}`n`; from another page "
            "{glue:text}`other::k:d`; the word {glue:text}`word`; {glue:md}`note`.")
    assert conv.convert(text) == (
        "BLEU 36.46 on 1,234 sentences (5.2%); 1234 and 1234; from another page 5; the word "
        f"&lt;eos&gt; \\*x\\*; **bold** ([Cho et al. (2014)]({REFS})).")


def test_glue_any_shows_a_string_as_the_website_does(conv):
    """{glue} shows text/plain as written, so a glued string keeps its quotes, as on the site."""
    assert conv.convert("{glue}`word`") == "'&lt;eos&gt; \\*x\\*'"


def test_citations_are_author_year_links_to_the_references_page(site, conv):
    site.citation_anchors = {"cho2014": "id2"}  # its entry on the page; fa2017's is unknown
    text = "{cite:t}`cho2014` and {cite:p}`cho2014,fa2017`; {cite}`fa2017`."
    assert conv.convert(text) == (
        f"[Cho et al. (2014)]({REFS}#id2) and ([Cho et al. 2014]({REFS}#id2); "
        f"[Freitag and Al-Onaizan 2017]({REFS})); ([Freitag and Al-Onaizan 2017]({REFS})).")


def test_cross_references_are_links_to_the_website(conv):
    text = ("{doc}`other`, {doc}`the other page <other>`, {doc}`/book/ch`, {ref}`sec-x`, "
            "{ref}`here <sec-x>`, {numref}`ch-ex-1`, {numref}`Ex. %s <ch-ex-2>`, {eq}`eq-loss`.")
    assert conv.convert(text) == (
        f"[Other page]({WEB}book/other.html), [the other page]({WEB}book/other.html), "
        f"[The chapter]({WEB}book/ch.html), [A section]({WEB}book/other.html#sec-x), "
        f"[here]({WEB}book/other.html#sec-x), [Exercise 3]({WEB}book/ch.html#ch-ex-1), "
        f"[Ex. 4]({WEB}book/ch.html#ch-ex-2), [(7)]({WEB}book/ch.html#equation-eq-loss).")


def test_links_to_the_book_go_to_the_website(conv):
    text = ("[next](other.md), [there](other.md#part), [up](#sec-x), [here](#top), "
            "[web](https://tatoeba.org/) and `[code](other.md)`")
    assert conv.convert(text) == (
        f"[next]({WEB}book/other.html), [there]({WEB}book/other.html#part), "
        f"[up]({WEB}book/other.html#sec-x), [here]({WEB}book/ch.html#top), "
        "[web](https://tatoeba.org/) and `[code](other.md)`")


def test_code_spans_targets_and_comments(conv):
    text = ("(sec-x)=\n## A section\n% a note for the authors\n"
            "Write `{glue}` calls like ``glue(`x`)`` and keep `a*b`.")
    assert conv.convert(text) == (
        "## A section\nWrite `{glue}` calls like ``glue(`x`)`` and keep `a*b`.")


# --- blocks -----------------------------------------------------------------------------------


def test_admonitions_are_quoted_blocks_with_a_bold_title(conv):
    text = ("```{note}\nPadding is **masked**: see {doc}`other`.\n```\n\n"
            "```{admonition} Learning objectives\n:class: tip\n- one\n- two $x$\n\n"
            "$$\na = b\n\\tag{1}\n$$\n```\n\n"
            ":::{warning}\nCareful.\n:::")
    assert conv.convert(text) == (
        "> **Note**\n>\n"
        f"> Padding is **masked**: see [Other page]({WEB}book/other.html).\n\n"
        "> **Learning objectives**\n>\n> - one\n> - two $x$\n>\n> $$ a = b \\tag{1} $$\n\n"
        "> **Warning**\n>\n> Careful.")


def test_a_tag_inside_aligned_moves_out(conv):
    text = "$$\n\\begin{aligned}\na &= b \\tag{4}\\\\\nc &= d\n\\end{aligned}\n$$"
    assert conv.convert(text) == (
        "$$\n\\begin{aligned}\na &= b \\\\\nc &= d\n\\end{aligned}\n\\tag{4}\n$$")


def test_a_tag_outside_environments_stays(conv):
    text = ("$$\n\\begin{aligned}\na &= b\n\\end{aligned}\n\\tag{4}\n$$\n\n"
            "$$\ns_0 = h \\label{eq:s0}\n\\tag{3}\n$$")
    assert conv.convert(text) == (
        "$$\n\\begin{aligned}\na &= b\n\\end{aligned}\n\\tag{4}\n$$\n\n"
        "$$\ns_0 = h \n\\tag{3}\n$$")


def test_labelled_equations_get_the_websites_number(conv):
    text = ("```{math}\n:label: eq-loss\nL = -\\sum_t \\log p_t\n```\n\n"
            "$$ L = 0 $$ (eq-loss)")
    assert conv.convert(text) == (
        "$$\nL = -\\sum_t \\log p_t \\tag{7}\n$$\n\n$$ L = 0 \\tag{7}$$")


def test_code_fences_are_kept_verbatim(conv):
    text = "```python\nx = {glue}  # `{cite:t}`not a role`\n\n\n\ny = 1\n```"
    assert conv.convert(text) == text


# --- glue() calls out of the code -------------------------------------------------------------


def test_strip_glue_statements_and_import():
    source = ('from lib.course.notebook import glue\nfrom lib import data\n\nx = 1\n'
              'glue("x", x, display=False)\nfor n in range(4):\n    glue(f"p{n}", n, '
              'display=False)\nfor k in (1, 2):\n    y = k * 2\n    glue(f"y{k}", y,\n'
              '         display=False)\nprint(x)')
    assert rn.strip_glue(source) == (
        "from lib import data\n\nx = 1\nfor k in (1, 2):\n    y = k * 2\nprint(x)")
    assert rn.strip_glue("from lib.course.notebook import glue, other\nother()") == (
        "from lib.course.notebook import other\nother()")
    assert rn.strip_glue('glue("a", 1, display=False)\nglue("b", 2, display=False)') == ""
    assert rn.strip_glue("def f():\n    return 1") == "def f():\n    return 1"


def test_what_only_fed_glue_goes_with_it():
    """A chain computed only for glue() goes; what the reader's code reads, or what has an
    effect (output, a call, an assignment into an object), stays."""
    cells = [
        'runs = {0: 1.0, 1: 2.0}\nbest = max(runs.values())\nglue("best", best, display=False)\n'
        'wins = [runs[0] < runs[1]]\n# the sentence for the text\n'
        'verdict = "ahead" if all(wins) else "behind"\nglue("verdict", verdict, display=False)',
        'for k, v in runs.items():\n    top = v\n    glue(f"r{k}", top, display=False)\n'
        'shown = len(runs)\nglue("shown", shown, display=False)\nprint(shown)',
        'def report():\n    return best\n\n\nfor k in range(3):\n    pass',
        'mean = sum(runs.values()) / len(runs)\nglue("mean", mean, display=False)\n'
        'saved = open_log()\nglue("saved", saved, display=False)\n'
        'config = {}\nconfig["x"] = mean\nglue("x", config, display=False)',
    ]
    names = set().union(*(rn.glue_inputs(c) for c in cells))
    assert names == {"best", "verdict", "k", "top", "shown", "mean", "saved", "config"}
    pruned = rn.prune_glue_leftovers([rn.strip_glue(c) for c in cells], names)
    assert pruned == [
        "runs = {0: 1.0, 1: 2.0}\nbest = max(runs.values())",  # report() reads best
        "for k, v in runs.items():\n    top = v\nshown = len(runs)\nprint(shown)",
        "def report():\n    return best\n\n\nfor k in range(3):\n    pass",
        'mean = sum(runs.values()) / len(runs)\nsaved = open_log()\n'
        'config = {}\nconfig["x"] = mean',
    ]


def test_strip_glue_refuses_glue_it_cannot_remove():
    with pytest.raises(rn.ReaderNotebookError, match="still uses glue"):
        rn.strip_glue('x = [glue("a", 1)]', "book/ch, code cell 3")
    with pytest.raises(rn.ReaderNotebookError, match="does not parse"):
        rn.strip_glue("glue(\n", "book/ch, code cell 4")


# --- figures ----------------------------------------------------------------------------------

# A figure whose pixels are known without any renderer: 30 x 20 CSS pixels, the left third red,
# the rest blue.
TWO_COLOURS = ('<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20">'
               '<rect width="30" height="20" fill="#0000ff"/><rect width="10" height="20" '
               'fill="#ff0000"/></svg>')
FIGURE = (":::{figure} figures/two.svg\n:name: fig-two\n:alt: A red third, then blue\n\n"
          "Two colours, see {numref}`ch-ex-1`.\n:::")


def _png_of(markdown: str):
    """The images a Markdown text embeds, decoded: [(mime, PIL image, <img> attributes)]."""
    import base64
    import io

    from PIL import Image

    found = []
    for m in re.finditer(r'<img src="data:(?P<mime>[\w/+]+);base64,(?P<data>[^"]+)"'
                         r'(?P<attrs>[^>]*)>', markdown):
        image = Image.open(io.BytesIO(base64.b64decode(m["data"], validate=True)))
        found.append((m["mime"], image.convert("RGB"), m["attrs"]))
    return found


@pytest.fixture
def figure_site(site, tmp_path):
    (tmp_path / "html" / "_images").mkdir(parents=True)
    (tmp_path / "html" / "_images" / "two.svg").write_text(TWO_COLOURS, encoding="utf-8")
    site.build = tmp_path
    site.figures = {"book/ch": [{"id": "fig-two", "src": "_images/two.svg", "number": "Fig. 2"}]}
    return site


def test_a_figure_is_embedded_not_linked(figure_site):
    """Offline, or before the website is deployed, a link to the website's copy showed a broken
    image: the notebook carries the figure itself, as a PNG every front end shows (Colab shows
    no SVG data: URI and no attachment), drawn at twice its size and shown at its own."""
    out = rn.Converter(figure_site, "book/ch").convert(FIGURE)
    assert "http" not in out.split("\n\n")[0] and WEB not in out.split("\n\n")[0]
    (mime, image, attrs), = _png_of(out)
    assert mime == "image/png" and image.size == (60, 40)
    assert 'alt="A red third, then blue"' in attrs and 'width="30"' in attrs
    assert image.getpixel((5, 20)) == (255, 0, 0) and image.getpixel((40, 20)) == (0, 0, 255)
    assert out.split("\n\n")[1] == (f"**Fig. 2** Two colours, see [Exercise 3]"
                                      f"({WEB}book/ch.html#ch-ex-1).")


def test_a_figure_without_its_image_in_the_build_is_a_clear_error(figure_site):
    (figure_site.build / "html" / "_images" / "two.svg").unlink()
    with pytest.raises(rn.ReaderNotebookError,
                       match=r"^book/ch: the figure's image .*two\.svg is missing"):
        rn.Converter(figure_site, "book/ch").convert(FIGURE)
    (figure_site.build / "html" / "_images" / "two.svg").write_text("<svg", encoding="utf-8")
    with pytest.raises(rn.ReaderNotebookError, match=r"^book/ch: cannot draw the figure"):
        rn.Converter(figure_site, "book/ch").convert(FIGURE)


# --- whole notebooks ----------------------------------------------------------------------------


def _chapter(*cells):
    nb = nbformat.v4.new_notebook()
    for kind, source, *tags in cells:
        maker = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        cell = maker(source)
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    return nb


SETUP = ("# Colab setup: generated from _config.yml by scripts/colab_setup.py; do not edit.\n"
         "COURSE_PACKAGE = 'x'")


def _small_chapter():
    return _chapter(
        ("md", "# The chapter\n\n(sec-ex)=\n## Exercises\n\n```{exercise} Pad a batch\n"
               ":label: ch-ex-1\n\nWrite `pad(xs)`; the loss is {eq}`eq-loss`.\n```"),
        ("code", SETUP, "colab-setup", "remove-cell"),
        ("code", "def pad(xs):\n    raise NotImplementedError"),
        ("code", 'n = 3\nglue("n", n, display=False)\nprint(n)', "hide-output"),
        ("code", 'glue("hidden", 1, display=False)', "remove-cell"),
        ("code", "table = [[1, 2]]\ntable", "remove-input"),
        ("md", "## Solutions\n\n```{solution-start} ch-ex-1\n:class: dropdown\n```"),
        ("code", "def pad(xs):\n    return xs\n\n\ncheck(pad)\nglue('x', 1, display=False)"),
        ("md", "It pads {glue:text}`n:d` items.\n\n```{solution-end}\n```"),
    )


def test_a_chapter_becomes_its_reader_notebook(site):
    nb = rn.reader_notebook(_small_chapter(), site, "book/ch")
    cells = [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]
    assert cells == [
        ("markdown", "# The chapter\n\n## Exercises\n\n### Exercise 3: Pad a batch\n\n"
                     f"Write `pad(xs)`; the loss is [(7)]({WEB}book/ch.html#equation-eq-loss).",
         {}),
        ("code", "COURSE_PACKAGE = 'x'", {"tags": ["colab-setup"]}),
        ("code", "def pad(xs):\n    raise NotImplementedError", {}),
        ("code", "n = 3\nprint(n)", {}),
        ("code", "table = [[1, 2]]\ntable",
         {"jupyter": {"source_hidden": True}, "cellView": "form"}),
        ("markdown", "## Solutions", {}),
        ("markdown", "<details>\n<summary><span class=\"ui-icon ui-icon-triangle-1-e\"></span>"
                     "<b>Solution to Exercise 3</b> (Pad a batch) "
                     "<i>(click to show)</i></summary>"
                     "\n\n```python\ndef pad(xs):\n    return xs\n\n\ncheck(pad)\n```\n\n"
                     "It pads 1234 items.\n\n</details>", {}),
    ]
    codes = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in codes)
    assert [c.id for c in nb.cells] == ["cell-000", "colab-setup"] + [
        f"cell-{i:03d}" for i in range(2, 7)]
    assert nb.metadata["kernelspec"]["name"] == "python3"
    nbformat.validate(nb)


CLASSIC_MARKER = '<span class="ui-icon ui-icon-triangle-1-e"></span>'


def test_every_summary_carries_the_classic_notebooks_triangle(site, conv):
    """The classic Notebook shows <summary> as a block, without its disclosure triangle, and
    strips style; the jQuery UI icon it ships draws one (tests/test_frontends.py checks that
    each front end then shows exactly one marker). Solutions and dropdowns alike."""
    nb = rn.reader_notebook(_small_chapter(), site, "book/ch")
    summaries = re.findall(r"<summary>(.*?)</summary>", "\n".join(
        c.source for c in nb.cells if c.cell_type == "markdown"))
    dropdown = re.findall(r"<summary>(.*?)</summary>",
                          conv.convert("```{dropdown} More\nText.\n```"))
    assert len(summaries) == 1 and len(dropdown) == 1
    assert all(s.startswith(CLASSIC_MARKER) for s in summaries + dropdown), summaries + dropdown


def test_a_reader_only_cell_is_kept_although_the_website_removes_it(site):
    """A live view is left off the website (its controls would be dead without a kernel) and
    kept in the reader notebook, where it runs; plain remove-cell cells still go."""
    nb = rn.reader_notebook(_chapter(
        ("md", "# Live"),
        ("code", SETUP, "colab-setup", "remove-cell"),
        ("code", "view = 1", "remove-cell"),
        ("code", "live_view(model)", "remove-cell", "reader-only", "skip-execution"),
    ), site, "book/ch")
    codes = [(c.source, dict(c.metadata)) for c in nb.cells if c.cell_type == "code"]
    assert codes == [("COURSE_PACKAGE = 'x'", {"tags": ["colab-setup"]}),
                     ("live_view(model)", {})]


def test_the_same_chapter_gives_the_same_bytes(site):
    first = nbformat.writes(rn.reader_notebook(_small_chapter(), site, "book/ch"))
    second = nbformat.writes(rn.reader_notebook(_small_chapter(), site, "book/ch"))
    assert first == second


@pytest.mark.parametrize("cells, message", [
    ([("md", "See {term}`beam`.")], r"the role \{term\} has no reader-notebook form"),
    ([("md", "{glue:text}`missing:.2f`")], "no glued value 'missing' in the build of book/ch"),
    ([("md", "{glue:text}`word:d`")], "cannot format the value"),
    ([("md", "{cite:t}`nobody2020`")], "'nobody2020', which is not in the bibliography"),
    ([("md", "{doc}`nowhere`")], "'nowhere' is not a page of the website"),
    ([("md", "[data](data/table.csv)")], "'data/table.csv' is not a page of the website"),
    ([("md", "{ref}`nolabel`")], "'nolabel', which is no label of the website"),
    ([("md", "```{list-table}\n* - a\n```")], r"the directive \{list-table\} has no"),
    ([("md", "```{note}\nnever closed")], r"the directive \{note\} opened by .* is never closed"),
    ([("md", "$$\nx = 1")], "display math opened by '\\$\\$' is never closed"),
    ([("md", "$$\na \\tag{1} \\tag{2}\n$$")], "has 2 \\\\tag commands"),
    ([("code", "x = 1")], "no Colab setup cell"),
    ([("code", "x = 1"), ("code", SETUP, "colab-setup")], "must be the first code cell"),
    ([("code", SETUP, "colab-setup"), ("code", "def helper():\n    pass", "remove-cell"),
      ("code", "helper()")], r"remove-cell defines \['helper'\], which a later cell uses"),
    ([("code", SETUP, "colab-setup"), ("md", "```{solution-start} ch-ex-9\n```")],
     "names the exercise 'ch-ex-9', which this page does not have"),
    ([("code", SETUP, "colab-setup"), ("md", "```{solution-start} ch-ex-1\n```")],
     "solution 'ch-ex-1' is never ended"),
])
def test_what_cannot_be_shown_is_a_clear_error(site, cells, message):
    with pytest.raises(rn.ReaderNotebookError, match=message) as error:
        rn.reader_notebook(_chapter(*cells), site, "book/ch")
    assert str(error.value).startswith("book/ch: ")


# --- the oracle of "no MyST left", tested on what it must catch --------------------------------

MYST = [
    (re.compile(r"\{[\w:.-]+\}`"), "a role"),
    (re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{", re.M), "a directive fence"),
    (re.compile(r"^\s*:[\w-]+:(\s|$)", re.M), "a directive option line"),
    (re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M), "a (label)= target"),
    (re.compile(r"\{glue"), "a glue reference"),
    (re.compile(r"\{\{.*?\}\}"), "a substitution"),
    (re.compile(r"^\+\+\+", re.M), "a jupytext cell break"),
]


def myst_leftovers(markdown: str) -> list[str]:
    """The MyST constructs in `markdown` outside fenced code blocks and code spans (a role's
    own backticks, right after its `{name}`, are not a code span)."""
    prose = re.sub(r"(?ms)^(`{3,}|~{3,})[^`{\n]*\n.*?^\1\s*$", "", markdown)
    prose = re.sub(r"(?<![}`])(`+)(?!`).+?(?<!`)\1(?!`)", "", prose)
    return [f"{name}: {m.group(0)!r}" for pattern, name in MYST for m in pattern.finditer(prose)]


@pytest.mark.parametrize("markdown", [
    "x {glue:text}`a:.2f` y", "{cite:p}`x`", "`code` then {doc}`page`", "```{note}\nhi\n```",
    ":::{tip}\nhi\n:::", ":label: ex-1", ":class: dropdown", "(sec-x)=",
    "{{ colab_link_pattern }}", "+++",
])
def test_the_myst_oracle_catches(markdown):
    assert myst_leftovers(markdown), markdown


def test_the_myst_oracle_ignores_code():
    assert myst_leftovers("```python\nd = {x}`y`\n:label: z\n```\n`{a}` and $f(x)$") == []


# ---------------------------------------------------------------------------------------------
# The real chapters, converted from the built website
# ---------------------------------------------------------------------------------------------

_GLUE_TEXT = re.compile(r"\{glue:text\}`(?P<content>[^`]+)`")
_SOLUTION = re.compile(r"^```+\{solution-start\}\s*(\S+)", re.M)
_EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise(?:-start)?\}", re.M)


@pytest.fixture(scope="session")
def built(reader_texts):
    """{page: (the chapter as built, its reader notebook)} for every chapter of the website."""
    site, texts = reader_texts
    return site, {page: (rn.executed_chapter(site, page), nbformat.reads(text, as_version=4))
                  for page, text in texts.items()}


def _markdown(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def test_every_chapter_has_one(built):
    _, notebooks = built
    assert list(notebooks) == toc.notebooks() and len(notebooks) >= 8


def test_no_myst_syntax_is_left(built):
    _, notebooks = built
    problems = [f"{page}, Markdown cell {i}: {left}"
                for page, (_, nb) in notebooks.items()
                for i, md in enumerate(_markdown(nb)) for left in myst_leftovers(md)]
    assert not problems, "\n".join(problems)


def _plain(text: str) -> str:
    """Undo Sphinx's smart quotes, dashes and ellipses (the website's typography only)."""
    for fancy, plain in (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'),
                         ("\u2014", "---"), ("\u2013", "--"), ("\u2026", "...")):
        text = text.replace(fancy, plain)
    return text


def test_every_glued_value_is_filled_as_the_website_shows_it(built, site_dir):
    """Each {glue:text} of a chapter, in order: the build's value formatted by myst-nb's own
    code, the text the website's page shows at that place, and the reader notebook's text."""
    from myst_nb.core.variables import format_plain_text

    site, notebooks = built
    for page, (source, nb) in notebooks.items():
        glued = json.loads((site_dir.parent / "jupyter_execute" / f"{page}.glue.json")
                           .read_text(encoding="utf-8"))
        expected = []
        for md in _markdown(source):
            for m in _GLUE_TEXT.finditer(md):
                head, colon, tail = m["content"].rpartition(":")
                key, spec = (head, tail) if colon and not head.endswith(":") else (
                    m["content"], "s")
                expected.append(format_plain_text(glued[key]["data"]["text/plain"], spec))
        assert expected, f"{page} glues no text"
        page_html = (site_dir / f"{page}.html").read_text(encoding="utf-8")
        shown = [html.unescape(s) for s in re.findall(
            r'<span class="pasted-text">(.*?)</span>', page_html, re.S)]
        assert [_plain(s) for s in shown] == [_plain(s) for s in expected], (
            f"{page}: the website shows other values than the build's")
        reader = "\n".join(_markdown(nb))
        at = 0
        for value in expected:
            found = reader.find(rn.escape_markdown(value), at)
            assert found >= 0, f"{page}: {value!r} is missing after position {at}"
            at = found + 1


def test_citations_link_the_entries_the_website_links(built, site_dir):
    """The reader notebook's citations point at the same entries of the references page as the
    website's own citation links (sphinxcontrib-bibtex's numbered ids)."""
    _, notebooks = built
    for page, (_, nb) in notebooks.items():
        page_html = (site_dir / f"{page}.html").read_text(encoding="utf-8")
        website = set(re.findall(r'href="references\.html#(id\d+)"', page_html))
        reader = set(re.findall(r"book/references\.html#(id\d+)\)", "\n".join(_markdown(nb))))
        assert reader == website and website, (page, reader ^ website)


def test_exercises_are_numbered_as_on_the_website(built, site_dir):
    _, notebooks = built
    for page, (source, nb) in notebooks.items():
        page_html = (site_dir / f"{page}.html").read_text(encoding="utf-8")
        website = re.findall(r'<span class="caption-number">(Exercise [\d.]+) </span>',
                             page_html)
        headings = re.findall(r"^#{2,6} (Exercise [\d.]+)(?::|$)", "\n".join(_markdown(nb)),
                              re.M)
        n_source = sum(len(_EXERCISE.findall(md)) for md in _markdown(source))
        assert headings == website and len(headings) == n_source >= 2, (page, headings, website)


def test_solutions_are_collapsed_and_never_run(built):
    _, notebooks = built
    for page, (source, nb) in notebooks.items():
        labels = [label for md in _markdown(source) for label in _SOLUTION.findall(md)]
        blocks = [md for md in _markdown(nb) if md.startswith("<details>")]
        assert len(blocks) == len(labels) >= 2, (page, len(blocks), labels)
        for block in blocks:
            assert block.endswith("</details>") and (
                f"<summary>{CLASSIC_MARKER}<b>Solution to Exercise" in block)
            assert "</summary>\n\n" in block, "Markdown inside <details> needs the blank line"
        # Every code cell of a solution is inside a <details> block, and in no code cell.
        inside, code_cells = False, {c.source for c in nb.cells if c.cell_type == "code"}
        for cell in source.cells:
            if cell.cell_type == "markdown":
                if "{solution-start}" in cell.source:
                    inside = True
                if "{solution-end}" in cell.source:
                    inside = False
            elif inside:
                tags = set(cell.metadata.get("tags", []))
                if "remove-cell" in tags and READER_ONLY not in tags:
                    continue  # website machinery (an assert): in no notebook
                code = rn.strip_glue(cell.source)
                if not code.strip():
                    continue  # a cell that only glues has nothing to show
                assert code not in code_cells, f"{page}: a solution is a code cell"
                assert any(f"```python\n{code}\n```" in b for b in blocks), (page, code[:80])


def test_code_cells_are_clean_and_the_setup_cell_comes_first(built):
    package_line = next(line for line in colab_setup.render_cell().splitlines()
                        if line.startswith("COURSE_PACKAGE"))
    _, notebooks = built
    for page, (_, nb) in notebooks.items():
        nbformat.validate(nb)
        codes = [c for c in nb.cells if c.cell_type == "code"]
        assert codes[0].metadata["tags"] == ["colab-setup"], page
        assert package_line in codes[0].source.splitlines(), page
        assert "_config.yml" not in codes[0].source, "maintainers' note left for readers"
        for cell in codes:
            assert cell.outputs == [] and cell.execution_count is None, page
            assert not re.search(r"\bglue\b", cell.source), (page, cell.source[:200])
            assert "remove-cell" not in cell.metadata.get("tags", []), page
        assert "widgets" not in nb.metadata


def test_figures_are_in_the_notebook_not_on_the_website(built, site_dir):
    """No reader notebook shows an image from the web (the website's or any other); each
    figure of the page is there as a PNG of the website's SVG, twice its width and height."""
    site, notebooks = built
    assert sum(len(figures) for figures in site.figures.values()) >= 8
    for page, (_, nb) in notebooks.items():
        text = "\n".join(_markdown(nb))
        remote = re.findall(r'<img\b[^>]*\bsrc="(?!data:)[^"]*"|!\[[^\]]*\]\((?!data:)[^)]*\)',
                            text)
        assert not remote, f"{page}: images not embedded: {[r[:120] for r in remote]}"
        embedded = _png_of(text)
        assert len(embedded) == len(site.figures.get(page, [])), page
        for figure, (mime, image, _) in zip(site.figures.get(page, []), embedded):
            svg = (site_dir / figure["src"]).read_text(encoding="utf-8")
            width, height = (float(re.search(rf'<svg\b[^>]*\b{a}="([\d.]+)"', svg)[1])
                             for a in ("width", "height"))
            assert mime == "image/png" and image.size == (2 * width, 2 * height), (page, figure)
            assert len(set(image.resize((64, 32)).getdata())) > 8, f"{page}: a blank figure"


def test_cli_writes_one_flat_notebook_per_chapter(reader_texts, site_dir, tmp_path):
    (tmp_path / "stale.ipynb").write_text("{}")
    assert reader_notebooks.main(["--out", str(tmp_path), "--build", str(site_dir.parent)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"{page.split('/')[-1]}.ipynb" for page in toc.notebooks())
    _, texts = reader_texts  # render_all of the same build, in this process
    for page, text in texts.items():
        assert (tmp_path / f"{page.split('/')[-1]}.ipynb").read_text(encoding="utf-8") == text


def test_cli_without_a_build_says_so(tmp_path):
    """`python -m scripts.reader_notebooks`, as `make notebooks` runs it."""
    result = subprocess.run([sys.executable, "-m", "scripts.reader_notebooks", "--out",
                             str(tmp_path / "out"), "--build", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "objects.inv is missing: build the website first" in result.stderr


def test_website_buttons_open_and_download_the_reader_notebook(reader_texts, site_dir):
    """The Colab entry of every chapter page opens its reader notebook on the notebooks branch,
    and the page's .ipynb download is that same notebook."""
    _, texts = reader_texts
    for page, text in texts.items():
        page_html = (site_dir / f"{page}.html").read_text(encoding="utf-8")
        colab = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', page_html)
        assert colab == [colab_setup.colab_url(page)], (page, colab)
        assert colab[0].endswith(f"/blob/notebooks/{page.split('/')[-1]}.ipynb")
        download = f"_sources/{page}.ipynb"
        assert f'href="../{download}"' in page_html, f"{page}: no .ipynb download link"
        assert (site_dir / download).read_text(encoding="utf-8") == text, page


def test_a_short_title_inside_another_entry_finds_its_own_entry(tmp_path):
    """"Deep Learning" is a book's whole title and part of a workshop's name in another entry:
    the anchor is the entry that also names the book's first author."""
    from scripts.reader.site import load_citation_anchors

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "references.html").write_text(
        '<div class="citation" id="id3"><p>Junyoung Chung and Yoshua Bengio. Empirical '
        'evaluation of gated recurrent networks. NIPS 2014 Workshop on Deep Learning.</p></div>'
        '<div class="citation" id="id7"><p>Ian Goodfellow, Yoshua Bengio, and Aaron Courville. '
        'Deep Learning. MIT Press, 2016.</p></div>', encoding="utf-8")
    bib = tmp_path / "refs.bib"
    bib.write_text("@book{goodfellow2016deep, author = {Goodfellow, Ian and Bengio, Yoshua}, "
                   "title = {Deep Learning}, year = {2016}}\n"
                   "@misc{chung2014empirical, author = {Chung, Junyoung and Bengio, Yoshua}, "
                   "title = {Empirical Evaluation of Gated Recurrent Networks}, year = {2014}}\n",
                   encoding="utf-8")
    assert load_citation_anchors(tmp_path, bib) == {"goodfellow2016deep": "id7",
                                                    "chung2014empirical": "id3"}

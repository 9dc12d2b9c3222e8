"""The course's figures: book/figures/*.svg, drawn by scripts/figures.py.

Unit tests: every SVG is well-formed, self-contained and accessible (<title>, <desc>), equals
what its source draws today (a stale figure fails), and is placed in a chapter with alt text;
its labels use the names of the chapters and of `lib`; the reader notebooks turn a figure into
the website's copy of the image with its alt text and number. Tests on the built website
(skipped under a bare pytest without `_build/html`): each figure is on its page, and each
reader notebook links the website's copy, which is the committed file. The browser check is in
tests/test_figures_browser.py.
"""

from __future__ import annotations

import html
import inspect
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT

from scripts import figures
from scripts import reader as rn

SVG_NS = "{http://www.w3.org/2000/svg}"
FIGURE_DIR = ROOT / "book" / "figures"
WEB = "https://owner.github.io/repo/"
# :::{figure} figures/<name>.svg, then its options (:alt:, :name:), up to the first blank line
_FIGURE_BLOCK = re.compile(
    r"^(?P<fence>:{3,})\{figure\}\s*(?P<src>\S+)\s*\n(?P<options>(?::[\w-]+:.*\n)*)", re.M)


def chapter_figures() -> dict[str, list[dict[str, str]]]:
    """{chapter file name: [{"src", "alt", "name"}]} for every {figure} of book/*.md."""
    found = {}
    for path in sorted((ROOT / "book").glob("*.md")):
        for m in _FIGURE_BLOCK.finditer(path.read_text("utf-8")):
            options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", m["options"], re.M))
            found.setdefault(path.name, []).append(
                {"src": m["src"], "alt": options.get("alt", ""), "name": options.get("name", "")})
    return found


# --- the SVG files ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def drawn() -> dict[str, str]:
    return figures.render_all()


def test_the_committed_figures_are_what_the_source_draws(drawn):
    committed = {p.name for p in FIGURE_DIR.glob("*.svg")}
    assert committed == set(drawn), (
        f"book/figures/ and scripts/figures.py disagree: only committed {committed - set(drawn)}, "
        f"only drawn {set(drawn) - committed}")
    stale = [name for name, text in drawn.items()
             if (FIGURE_DIR / name).read_text("utf-8") != text]
    assert not stale, f"stale figures {stale}: run `python -m scripts.figures` and commit them"


def test_the_drawing_is_deterministic(drawn):
    assert figures.render_all() == drawn


def test_check_mode_finds_a_stale_figure(tmp_path, capsys):
    assert figures.main(["--out", str(tmp_path)]) == 0
    assert figures.main(["--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "beam_walk.svg").write_text("<svg/>", encoding="utf-8")
    assert figures.main(["--check", "--out", str(tmp_path)]) == 1
    assert "beam_walk.svg" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(figures.FIGURES))
def test_each_figure_is_well_formed_and_accessible(drawn, name):
    text = drawn[f"{name}.svg"]
    root = ET.fromstring(text)  # well-formed XML, or ParseError
    assert root.tag == f"{SVG_NS}svg" and root.get("role") == "img"
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert 400 <= width <= 1200 and 200 <= height <= 800
    title, desc = root.find(f"{SVG_NS}title"), root.find(f"{SVG_NS}desc")
    assert title is not None and len(title.text.strip()) > 20
    assert desc is not None and len(desc.text.split()) >= 40, "the <desc> says what it shows"
    # self-contained and inert: an <img> never loads a script or another file
    for element in root.iter():
        assert element.tag.removeprefix(SVG_NS) not in {"script", "image", "foreignObject",
                                                         "use", "a", "style"}, element.tag
        assert not any(k.endswith("href") or k.startswith("on") for k in element.attrib)
    # every shape lies inside the drawing
    for x in re.findall(r'\bx="(-?[\d.]+)"', text):
        assert -1 <= float(x) <= width + 1


def _svg_text(svg: str) -> str:
    """The words a figure shows (tspans joined, no-break spaces as spaces)."""
    root = ET.fromstring(svg)
    parts = ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]
    return "\n".join(parts).replace("\u00a0", " ")


def test_labels_use_the_names_of_lib_and_the_chapters(drawn):
    from lib.decoder import Decoder
    from lib.experiments.toy import walkthrough_table

    decoder = _svg_text(drawn["decoder_unrolled.svg"])
    assert "feed_context" in inspect.signature(Decoder).parameters
    assert "ModelConfig(feed_context=True)" in decoder
    assert "ModelConfig(feed_context=False)" in decoder
    assert "(eq. 3)" in decoder and "(eq. 4)" in decoder
    head = _svg_text(drawn["prediction_head.svg"])
    for label in ("eq. 6", "eq. 7", "eq. 8", "softmax", "argmax"):
        assert label in head, label
    encoder = _svg_text(drawn["encoder_grid.svg"])
    encoder_md = (ROOT / "book" / "encoder.md").read_text("utf-8")
    for shape in ("(B, S, H)", "(L, B, H)"):
        assert shape in encoder and shape in encoder_md, shape
    assert "output states" in encoder and "hidden states" in encoder
    # the beam figure shows the walk-through's tokens and the first step's probabilities
    beam = _svg_text(drawn["beam_walk.svg"])
    first = walkthrough_table()[()]
    for word in ("A", "C"):
        assert f"P = {first[word]:.3f}" in beam
    assert "dropped" in beam and "finished" in beam and "kept" in beam


def test_the_bleu_figure_matches_sacrebleu_counts(drawn):
    """The clipped counts and BP drawn are sacrebleu's (an independent implementation)."""
    import math

    import sacrebleu

    stats = sacrebleu.sentence_bleu(figures.BLEU_HYP, list(figures.BLEU_REFS),
                                    smooth_method="none")
    text = _svg_text(drawn["bleu_example.svg"])
    for n in (1, 2):
        m, t = stats.counts[n - 1], stats.totals[n - 1]
        assert f"p_{n} = {m} / {t} = {m / t:.2f}".replace("p_", "p") in text.replace("p_", "p")
    assert f"BP = {stats.bp:.3f}" in text
    assert stats.bp == pytest.approx(math.exp(1 - stats.ref_len / stats.sys_len))


# --- placement in the chapters ---------------------------------------------------------------


def test_every_figure_is_in_a_chapter_with_alt_text_and_a_name():
    placed = chapter_figures()
    used = {}
    for chapter, entries in placed.items():
        for fig in entries:
            src = ROOT / "book" / fig["src"]
            assert src.is_file(), f"{chapter}: {fig['src']} does not exist"
            assert len(fig["alt"].split()) >= 25, f"{chapter}: {fig['src']} needs real alt text"
            assert fig["name"].startswith("fig-"), f"{chapter}: {fig['src']} has no :name: fig-..."
            used.setdefault(src.name, []).append(chapter)
    assert set(used) == {f"{name}.svg" for name in figures.FIGURES}, (
        f"figures not placed in any chapter: {set(figures.FIGURES) - {Path(u).stem for u in used}}")
    expected = {"intro.md": "intro_model.svg", "encoder.md": "encoder_grid.svg",
                "decoder.md": "decoder_unrolled.svg", "prediction_head.md": "prediction_head.svg",
                "teacher_forcing.md": "teacher_forcing.svg", "beam_search.md": "beam_walk.svg",
                "bleu.md": "bleu_example.svg"}
    for chapter, svg in expected.items():
        assert chapter in used.get(svg, []), f"{svg} belongs in {chapter}"


# --- reader notebooks ------------------------------------------------------------------------


@pytest.fixture
def site():
    return rn.Site(website=WEB, docs={"book/ch": "The chapter"},
                   glue={"book/ch": {}})


FIGURE_MD = """Before.

:::{figure} figures/grid.svg
:alt: A grid of states h_t^i; the <sos> token & "quotes"
:name: fig-grid

The grid (eq. 1) with `lib` names and $h_t^i$.
:::

After."""


def test_a_figure_becomes_an_embedded_image_with_alt_text_and_number(site, tmp_path):
    """The figure is the build's image drawn into the notebook (tests/test_reader_notebooks.py
    checks its pixels), with the alt text escaped and the caption numbered as on the site."""
    (tmp_path / "html" / "_images").mkdir(parents=True)
    (tmp_path / "html" / "_images" / "grid.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">'
        '<rect width="20" height="10" fill="#00f"/></svg>', encoding="utf-8")
    site.build = tmp_path
    site.figures = {"book/ch": [{"id": "fig-grid", "src": "_images/grid.svg",
                                 "number": "Fig. 2"}]}
    before, img, caption, after = rn.Converter(site, "book/ch").convert(FIGURE_MD).split("\n\n")
    assert (before, after) == ("Before.", "After.")
    assert img.startswith('<img src="data:image/png;base64,') and WEB not in img
    assert ('alt="A grid of states h_t^i; the &lt;sos&gt; token &amp; &quot;quotes&quot;"'
            in img)
    assert caption == "**Fig. 2** The grid (eq. 1) with `lib` names and $h_t^i$."


@pytest.mark.parametrize("options, built, message", [
    (":name: fig-grid\n", True, "has no :alt: text"),
    (":alt: A grid.\n", True, "has no :name:"),
    (":alt: A grid.\n:name: fig-grid\n", False, "not on the built page"),
])
def test_a_figure_it_cannot_place_is_a_clear_error(site, options, built, message):
    if built:
        site.figures = {"book/ch": [{"id": "fig-grid", "src": "_images/grid.svg", "number": ""}]}
    with pytest.raises(rn.ReaderNotebookError, match=message):
        rn.Converter(site, "book/ch").convert(
            f":::{{figure}} figures/grid.svg\n{options}\nCap.\n:::")


def test_load_figures_reads_where_sphinx_put_each_image(tmp_path):
    page = tmp_path / "book" / "ch.html"
    page.parent.mkdir()
    page.write_text(
        '<figure class="align-default" id="fig-grid">\n<img alt="A grid" '
        'src="../_images/grid.svg" />\n<figcaption>\n<p><span class="caption-number">Fig. 2 '
        '</span><span class="caption-text">The grid</span></p>\n</figcaption>\n</figure>\n'
        '<figure class="align-default" id="fig-other"><img alt="x" src="../_images/o1.svg" />'
        "</figure>", encoding="utf-8")
    assert rn.load_figures(tmp_path, "book/ch") == [
        {"id": "fig-grid", "src": "_images/grid.svg", "number": "Fig. 2"},
        {"id": "fig-other", "src": "_images/o1.svg", "number": ""}]
    assert rn.load_figures(tmp_path, "book/missing") == []


# --- the built website and its reader notebooks ----------------------------------------------


@pytest.fixture(scope="module")
def built_site(reader_texts):
    return reader_texts[0]


def test_each_figure_is_on_its_page_as_committed(built_site, site_dir):
    for chapter, entries in chapter_figures().items():
        page = f"book/{Path(chapter).stem}"
        on_page = {f["id"]: f for f in built_site.figures.get(page, [])}
        for fig in entries:
            assert fig["name"] in on_page, f"{page}: figure {fig['name']} is not on the page"
            copy = site_dir / on_page[fig["name"]]["src"]
            assert copy.read_bytes() == (ROOT / "book" / fig["src"]).read_bytes(), copy


def test_reader_notebooks_embed_each_figure_with_alt_text(built_site, reader_texts, site_dir):
    texts = reader_texts[1]
    for chapter, entries in chapter_figures().items():
        page = f"book/{Path(chapter).stem}"
        if page not in texts:
            continue  # a plain page (the introduction) has no reader notebook
        markdown = "\n".join(c.source for c in nbformat.reads(texts[page], as_version=4).cells
                             if c.cell_type == "markdown")
        images = {}  # alt text -> src of every <img> in the notebook's text
        for tag in re.findall(r"<img\b[^>]*>", markdown):
            attrs = dict(re.findall(r'(\w+)="([^"]*)"', tag))
            images[html.unescape(attrs.get("alt", ""))] = attrs.get("src", "")
        for fig in entries:
            built = next(f for f in built_site.figures[page] if f["id"] == fig["name"])
            assert (site_dir / built["src"]).is_file()
            url = built_site.website + built["src"]
            assert url not in markdown, f"{page}: a link to {url}, not the image"
            assert images.get(fig["alt"], "").startswith("data:image/png;base64,"), (
                f"{page}: no embedded image with the alt text of {fig['name']}")

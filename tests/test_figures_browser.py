"""The course's figures in the built website, in headless Chromium.

On every page that places a figure (a `{figure}` in its source), in the light and in the dark
theme (pydata-sphinx-theme's html[data-theme]), every figure's image has loaded (no broken
image: naturalWidth > 0), is the page's copy of book/figures/, carries the alt text the
chapter gives it, and is screenshotted to _build/screenshots/figures/<page>-<figure>-<mode>.png
for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, open_page
from test_figures import chapter_figures

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = ROOT / "_build" / "screenshots" / "figures"
PAGES = sorted(f"book/{Path(chapter).stem}" for chapter in chapter_figures())

FIGURES_JS = """() => Promise.all([...document.querySelectorAll('figure img')].map(img =>
    (img.complete ? Promise.resolve() : new Promise(done => {
        img.addEventListener('load', done); img.addEventListener('error', done);
    })).then(() => ({
        figure: img.closest('figure').id, src: img.getAttribute('src'), alt: img.alt,
        naturalWidth: img.naturalWidth, width: img.getBoundingClientRect().width,
    }))))"""


def set_theme(page, mode: str) -> None:
    """Switch the page to the light or dark theme as its theme switcher does."""
    page.evaluate("""mode => {
        document.documentElement.dataset.theme = mode;
        document.documentElement.dataset.mode = mode;
    }""", mode)
    assert page.evaluate("() => document.documentElement.dataset.theme") == mode


def test_every_page_with_a_figure_is_checked():
    assert len(PAGES) >= 7, PAGES


@pytest.mark.parametrize("page_file", PAGES)
def test_figures_load_in_light_and_dark_mode(browser, site_dir, site_url, page_file):
    expected = {f["name"]: f for f in chapter_figures()[f"{Path(page_file).name}.md"]}
    page, context, problems = open_page(browser, site_url + f"{page_file}.html")
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        for mode in ("light", "dark"):
            set_theme(page, mode)
            images = page.evaluate(FIGURES_JS)
            shown = {img["figure"]: img for img in images}
            assert set(expected) <= set(shown), (
                f"{page_file} ({mode}): figures {set(expected) - set(shown)} are missing")
            for name, fig in expected.items():
                img = shown[name]
                where = f"{page_file} ({mode}), figure {name}"
                assert img["naturalWidth"] > 0, f"{where}: broken image {img['src']}"
                assert img["width"] > 300, f"{where}: drawn only {img['width']} px wide"
                assert img["alt"] == fig["alt"], f"{where}: alt text differs from the chapter's"
                copy = (site_dir / page_file).parent / img["src"]
                assert copy.resolve().read_bytes() == (ROOT / "book" / fig["src"]).read_bytes()
                element = page.locator(f"figure#{name}")
                element.scroll_into_view_if_needed()
                element.screenshot(path=str(SHOTS / f"{Path(page_file).name}-{name}-{mode}.png"))
        assert not problems["failed"], f"failed requests on {page_file}: {problems['failed']}"
    finally:
        context.close()

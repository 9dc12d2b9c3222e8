"""The built website in a real browser: headless Debian Chromium driven by Playwright.

Every page of `_toc.yml` is opened from a server on 127.0.0.1 with every other address blocked,
as a reader without internet would see it. For each page: no console errors, no request leaves
127.0.0.1, no local request fails, math is typeset by the site's own MathJax, every link into
the site resolves (and its #anchor exists), and a chapter notebook carries its Colab link.
Screenshots go to `_build/screenshots/`.

Needs the built site (`make test` builds it first) and Chromium (`make test` installs Debian's
package when it is missing). Never `playwright install`: it downloads a browser.
"""

from __future__ import annotations

import html.parser
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml
from conftest import LOCAL_HOSTS, ROOT, load_script, open_page, serve_directory  # noqa: F401

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "_build" / "screenshots"
COLAB_PATTERN = re.compile(
    r"^https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/book/.+\.ipynb$"
)


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of the table of contents (paths without suffix, e.g. `book/intro`), in order."""
    return load_script("toc").pages(toc_path)


PAGES = toc_files()


class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id" or (tag == "a" and key == "name"):
                self.ids.add(value or "")


_fetched: dict[str, tuple[int, set[str] | None]] = {}


def fetch(url: str) -> tuple[int, set[str] | None]:
    """(HTTP status, ids in the page if it is HTML) of a same-site URL, cached."""
    if url not in _fetched:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                status = response.status
                body = response.read()
                is_html = "html" in response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            status, body, is_html = error.code, b"", False
        ids = None
        if is_html:
            parser = _Ids()
            parser.feed(body.decode("utf-8", errors="replace"))
            ids = parser.ids
        _fetched[url] = (status, ids)
    return _fetched[url]


# Text of the page body without code, scripts and typeset math: raw TeX delimiters must not remain.
VISIBLE_PROSE_JS = """() => {
    const body = document.querySelector('main') || document.body;
    const copy = body.cloneNode(true);
    copy.querySelectorAll('pre, code, script, style, mjx-container, .MathJax')
        .forEach(e => e.remove());
    return copy.innerText;
}"""


@pytest.mark.parametrize("page_file", PAGES)
def test_page(browser, site_dir, site_url, page_file, colab_setup):
    html_path = site_dir / f"{page_file}.html"
    assert html_path.is_file(), f"{page_file} is in _toc.yml but was not built"
    page, context, problems = open_page(browser, site_url + f"{page_file}.html")
    try:
        # Math: every math node typeset by MathJax once its startup promise resolves.
        n_math = page.locator(".math").count()
        if n_math:
            page.wait_for_function(
                "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30000
            )
            page.evaluate("() => MathJax.startup.promise.then(() => true)")
            untypeset = page.evaluate(
                "() => [...document.querySelectorAll('.math')]"
                ".filter(e => !e.querySelector('mjx-container')).map(e => e.textContent)"
            )
            assert not untypeset, f"math left as raw TeX on {page_file}: {untypeset[:5]}"
            assert page.locator("mjx-container").count() >= n_math
        prose = page.evaluate(VISIBLE_PROSE_JS)
        for delimiter in ("\\(", "\\)", "\\[", "\\]", "$$"):
            assert delimiter not in prose, f"raw {delimiter!r} in the text of {page_file}"

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        screenshot = SCREENSHOTS / f"{page_file.replace('/', '__')}.png"
        page.screenshot(path=str(screenshot), full_page=True)

        hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
        assert not problems["external"], f"{page_file} tried to reach: {problems['external']}"
        assert not problems["console"], f"console errors on {page_file}: {problems['console']}"
        assert not problems["failed"], f"failed requests on {page_file}: {problems['failed']}"
    finally:
        context.close()

    # Every same-site link resolves, and so does its #anchor.
    broken = []
    for href in sorted(set(hrefs)):
        if not href.startswith(site_url):
            continue
        target, _, fragment = href.partition("#")
        status, ids = fetch(target)
        if status != 200:
            broken.append(f"{href}: HTTP {status}")
        elif fragment and ids is not None and urllib.parse.unquote(fragment) not in ids:
            broken.append(f"{href}: no element with id {fragment!r}")
    assert not broken, f"broken links on {page_file}: {broken}"

    # A chapter notebook page links to the same notebook in Colab.
    notebook = ROOT / f"{page_file}.ipynb"
    if notebook.is_file():
        expected = colab_setup.colab_url(f"{page_file}.ipynb")
        assert COLAB_PATTERN.match(expected), expected
        colab_links = [h for h in hrefs if h.startswith("https://colab.research.google.com/")]
        assert expected in colab_links, f"{page_file}: no Colab link {expected} in {colab_links}"


def test_intro_has_math(site_dir):
    """The introduction carries real equations, so the math checks above check something."""
    text = (site_dir / "book" / "intro.html").read_text(encoding="utf-8")
    assert text.count('class="math') >= 2


def _configured_scripts() -> list[str]:
    """The script paths that _config.yml makes pages load from the site (relative to _static/)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    return [config["mathjax_path"], *config["nb_ipywidgets_js"]]


def test_vendored_scripts_are_served_locally(site_url):
    scripts = _configured_scripts()
    assert any("html-manager" in s for s in scripts) and any("require" in s for s in scripts)
    assert any("widgets-setup" in s for s in scripts)
    for script in scripts:
        assert "://" not in script and not script.startswith("//"), f"{script} is not local"
        status, _ = fetch(site_url + "_static/" + script)
        assert status == 200, f"_static/{script}: HTTP {status}"


def test_vendored_widget_manager_renders_a_widget(browser, site_dir, tmp_path):
    """The site's own scripts render a saved ipywidgets 8 slider, math label included, offline.

    A page like a chapter's (one folder deep, the scripts of _config.yml in the same order)
    next to a link to the built site's _static/.
    """
    import ipywidgets
    from ipywidgets.embed import embed_data

    (tmp_path / "_static").symlink_to(site_dir / "_static", target_is_directory=True)
    (tmp_path / "book").mkdir()
    mathjax, *widget_scripts = _configured_scripts()
    slider = ipywidgets.IntSlider(value=7, min=1, max=10, description=r"beam size \(k\)")
    data = embed_data(views=[slider])
    state, view = json.dumps(data["manager_state"]), json.dumps(data["view_specs"][0])
    tags = "\n".join(f'<script src="../_static/{s}"></script>' for s in widget_scripts)
    (tmp_path / "book" / "widget.html").write_text(
        f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<script>window.MathJax = {{"options": {{"processHtmlClass": "math"}}}}</script>
<script defer src="../_static/{mathjax}"></script>
<script type="application/vnd.jupyter.widget-state+json">{state}</script>
{tags}
</head><body>
<script type="application/vnd.jupyter.widget-view+json">{view}</script>
</body></html>""",
        encoding="utf-8",
    )
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = open_page(browser, url + "book/widget.html")
        try:
            page.wait_for_selector(".widget-slider", timeout=30000)
            page.wait_for_selector(".widget-slider mjx-container", timeout=30000)
            assert "beam size" in page.inner_text("body")
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "widget-manager-check.png"))
            assert not problems["external"], problems["external"]
            assert not problems["console"], problems["console"]
            assert not problems["failed"], problems["failed"]
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()

"""The built website in a real browser: headless Chromium driven by Playwright.

Every page of `_toc.yml` is opened from a server on 127.0.0.1 with every other address blocked,
as a reader without internet would see it. For each page: no console errors, no request leaves
127.0.0.1, no local request fails, math is typeset by the site's own MathJax without a single
MathJax error and with no display equation wider than the text column, every link into the site
resolves (and its #anchor exists), and a chapter notebook carries its Colab link and ends with a
link to discuss it. Screenshots go to `_build/screenshots/`.

Needs the built site (`make test` builds it first) and a Chromium-family browser: $CHROMIUM,
else Google Chrome, else Debian's chromium (`make test` installs it when none is there). Never
`playwright install`: it downloads a browser. The browser sees only the fonts conftest.py pins,
so the widths measured here are the same on every machine.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import conftest
import pytest
import yaml
from conftest import LOCAL_HOSTS, ROOT, open_page, serve_directory  # noqa: F401

from scripts import colab_setup, toc

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "_build" / "screenshots"
# A chapter's Colab link opens its reader notebook, published flat on the notebooks branch.
COLAB_PATTERN = re.compile(
    r"^https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/notebooks/[^/]+\.ipynb$"
)


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of the table of contents (paths without suffix, e.g. `book/intro`), in order."""
    return toc.pages(toc_path)


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


# MathJax errors and display equations too wide for the text column, as readable sentences.
#
# An error: MathJax renders TeX it cannot typeset as an <mjx-merror> element (CHTML output; SVG
# output marks it data-mml-node="merror"), a yellow box in the page, while the page itself loads
# without a console error: "\tag not allowed in split environment" is one, which Sphinx causes
# by wrapping every display containing \\ in \begin{split}.
#
# Too wide: the content of a display equation (the extent of its glyphs, and the container's
# scrollWidth) is compared with the width it is given: its container's, and the text column's
# (the <article>'s content box). The theme (pydata-sphinx-theme) gives `div.math mjx-container`
# `overflow: auto`, so a too-wide equation does not spill over the sidebar: it gets a scrollbar
# and its right part is hidden. We fail that too, on purpose: at the desktop width the test
# uses (1280 px, a text column of 688 px) a reader expects to see a whole equation, a
# screenshot or printout shows only the visible part, and the hidden part is the one that
# matters (the second regime of teacher forcing's two-regime equation). The scrollbar stays the
# theme's fallback for phones, which this test does not cover. Closed <details> are opened
# first, so that equations in collapsed solutions are measured too.
MATH_PROBLEMS_JS = r"""() => {
    const heading = (el) => {
        for (let s = el.closest('section'); s; s = s.parentElement.closest('section')) {
            const h = s.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
            if (h) return h.textContent.replace(/[#\u00b6]\s*$/, '').trim();
        }
        return '(no heading)';
    };
    const source = (container) => {
        try {
            const items = MathJax.startup.document.getMathItemsWithin(container);
            return items.length ? items[0].math.replace(/\s+/g, ' ').trim().slice(0, 90) : '';
        } catch (e) {
            return '';
        }
    };
    document.querySelectorAll('details').forEach((d) => { d.open = true; });
    const problems = [];
    for (const e of document.querySelectorAll('mjx-merror, [data-mml-node="merror"]')) {
        const message = e.getAttribute('data-mjx-error') || e.textContent.trim();
        const c = e.closest('mjx-container');
        problems.push(`MathJax error in "${heading(e)}": ${message} [${c ? source(c) : ''}]`);
    }
    for (const c of document.querySelectorAll('mjx-container[display="true"]')) {
        if (!c.getClientRects().length) continue;  // not laid out (display: none)
        const column = c.closest('article, [role="main"], main') || document.body;
        const style = getComputedStyle(column);
        const col = column.getBoundingClientRect();
        const colLeft = col.left + parseFloat(style.paddingLeft);
        const colRight = col.right - parseFloat(style.paddingRight);
        let lo = Infinity, hi = -Infinity;
        for (const g of c.querySelectorAll('mjx-c, mjx-utext, text, use')) {
            const r = g.getBoundingClientRect();
            if (r.width > 0) { lo = Math.min(lo, r.left); hi = Math.max(hi, r.right); }
        }
        const content = Math.max(c.scrollWidth, hi > lo ? hi - lo : 0);
        const given = Math.min(c.clientWidth, colRight - colLeft);
        const box = c.getBoundingClientRect();
        const spills = hi > Math.min(colRight, box.right) + 1 ||
            lo < Math.max(colLeft, box.left) - 1;
        if (content > given + 1 || spills) {
            problems.push(`display equation wider than the text column in "${heading(c)}": ` +
                `${Math.round(content)} px of math in ${Math.round(given)} px ` +
                `(${getComputedStyle(c).overflowX === 'visible' ? 'it spills out' :
                    'the reader must scroll to see the rest'}) [${source(c)}]`);
        }
    }
    return problems;
}"""


def wait_for_math(page, timeout: float = 30000) -> None:
    """Wait until the page's MathJax has typeset everything it found at startup."""
    page.wait_for_function(
        "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=timeout
    )
    page.evaluate("() => MathJax.startup.promise.then(() => true)")


def math_problems(page) -> list[str]:
    """Every MathJax error and every too-wide display equation on a typeset page, in words."""
    return page.evaluate(MATH_PROBLEMS_JS)


DISCUSS = "Open an issue about this page on GitHub"


def discussion_link(page) -> tuple[int, bool, str | None, str]:
    """(how many links named DISCUSS the article has, whether the first is visible, its href,
    the page's heading without its permalink)."""
    link = page.locator("article.bd-article").get_by_role("link", name=DISCUSS, exact=True)
    count = link.count()
    heading = page.locator("article.bd-article h1").first.evaluate(
        "h => [...h.childNodes].filter(n => !(n.classList && n.classList.contains("
        "'headerlink'))).map(n => n.textContent).join('').trim()")
    if not count:
        return 0, False, None, heading
    return count, link.first.is_visible(), link.first.get_attribute("href"), heading


def check_discussion_link(page_file: str, found: tuple[int, bool, str | None, str]) -> None:
    """A chapter ends with a named link that opens a new issue of the repository of
    _config.yml, its title naming the chapter (scripts/course_site.py adds it)."""
    count, visible, href, heading = found
    assert count == 1, f"{page_file}: no link to discuss the page"
    assert visible, f"{page_file}: the discussion link is hidden"
    url, _ = colab_setup.load_repository()
    parts = urllib.parse.urlsplit(href)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{url}/issues/new", href
    title = urllib.parse.parse_qs(parts.query)["title"]
    assert title == [f"{page_file}: {heading}"], f"{page_file}: issue title {title}"


@pytest.mark.parametrize("page_file", PAGES)
def test_page(browser, site_dir, site_url, page_file):
    """Everything above on one load of the page; a chapter's discussion link too."""
    html_path = site_dir / f"{page_file}.html"
    assert html_path.is_file(), f"{page_file} is in _toc.yml but was not built"
    chapter = toc.is_notebook(toc.source(page_file))
    page, context, problems = open_page(browser, site_url + f"{page_file}.html")
    try:
        # before anything opens a closed <details>: the link as the page first shows it
        discussion = discussion_link(page) if chapter else None
        # Math: every math node typeset by MathJax once its startup promise resolves.
        n_math = page.locator(".math").count()
        if n_math:
            wait_for_math(page)
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
        if page.evaluate("() => !!(window.MathJax && MathJax.startup)"):
            wait_for_math(page)  # also math that only widgets or outputs carry
            bad_math = math_problems(page)  # after the screenshot: it opens closed <details>
            assert not bad_math, f"math on {page_file}:\n  " + "\n  ".join(bad_math)
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

    # A chapter (a MyST notebook) links to its reader notebook in Colab and ends with a link to
    # discuss it; intro.md, a plain page, needs neither.
    if chapter:
        expected = colab_setup.colab_url(page_file)
        assert COLAB_PATTERN.match(expected), expected
        colab_links = [h for h in hrefs if h.startswith("https://colab.research.google.com/")]
        assert expected in colab_links, f"{page_file}: no Colab link {expected} in {colab_links}"
        check_discussion_link(page_file, discussion)


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
            try:
                page.wait_for_selector(".widget-slider", timeout=30000)
                page.wait_for_selector(".widget-slider mjx-container", timeout=30000)
            except Exception as error:  # a rare failure in long runs: say what the page had
                state = page.evaluate("""() => ({ready: document.readyState,
                    require: typeof window.requirejs, mathjax: typeof (window.MathJax || {})
                    .typesetPromise, widgets: document.querySelectorAll('.jupyter-widgets')
                    .length, body: document.body.innerHTML.slice(0, 400)})""")
                raise AssertionError(f"no rendered slider: page {state}, requests "
                                     f"{server.requests}, problems {problems}") from error
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


# --- the math check itself, on a page of known problems (the real site is built later) ------

# Two display equations with the faults the math check exists to catch (a \tag inside `split`,
# and an equation wider than the column), and their fixed forms; Sphinx's HTML for them is built
# by `_sphinx_display`.
DECODER_EQ4_BROKEN = r"""
\begin{aligned}
s_t^1 &= \operatorname{GRU}\big([\,e(y_{t-1});\, c\,],\; s_{t-1}^1\big),\\
s_t^i &= \operatorname{GRU}\big(s_t^{i-1},\; s_{t-1}^i\big) \quad (i > 1).
\end{aligned}
\tag{4}
"""
DECODER_EQ4_FIXED = r"""
s_t^1 = \operatorname{GRU}\big([\,e(y_{t-1});\, c\,],\; s_{t-1}^1\big), \qquad
s_t^i = \operatorname{GRU}\big(s_t^{i-1},\; s_{t-1}^i\big) \quad (i > 1).
\tag{4}
"""
TWO_REGIMES_WIDE = r"""
\text{training (teacher forcing):}\quad s_t = f\!\left(s_{t-1},\, y^*_{t-1},\, c\right),
\qquad
\text{translation:}\quad s_t = f\!\left(s_{t-1},\, \hat y_{t-1},\, c\right).
"""
TWO_REGIMES_FIXED = r"""
\begin{aligned}
\text{training (teacher forcing):}\quad s_t &= f\!\left(s_{t-1},\, y^*_{t-1},\, c\right),\\
\text{translation:}\quad s_t &= f\!\left(s_{t-1},\, \hat y_{t-1},\, c\right).
\end{aligned}
"""
WIDE_NUMBERED = r"""
\mathcal{L} = -\sum_{t=1}^{n+1} \log P\!\left(y^*_t \mid y^*_{<t},\, c\right)
= -\sum_{t=1}^{n+1} \log \operatorname{softmax}\!\left(W_p\, s_t^L + b_p\right)_{y^*_t}
= -\sum_{t=1}^{n+1} \left(z_{t, y^*_t} - \log \sum_{v} e^{z_{t,v}}\right)
\tag{7}
"""
FINE_NUMBERED = r"s_t^L = f\big(x_1, \dots, x_S;\; y_0, y_1, \dots, y_{t-1}\big). \tag{5}"

# pydata-sphinx-theme 0.17's rules for math (the site's theme), and its text column at a
# 1280 px wide window: 688 px starting 288 px from the left (measured on a built page).
THEME_MATH_CSS = """
div.math, span.math { align-items: center; display: flex; max-width: 100%; overflow: hidden }
span.math { display: inline-flex; align-items: baseline }
div.math { flex-direction: row-reverse; gap: .5em }
div.math mjx-container { flex-grow: 1; overflow: auto; padding-bottom: .2rem }
div.math mjx-container mjx-assistive-mml { height: 0 }
article { box-sizing: content-box; width: 688px; margin-left: 288px; padding: 0 }
"""


def _sphinx_display(tex: str) -> str:
    """A display equation as sphinx.ext.mathjax (7.4) writes it: a block holding \\\\ is wrapped
    in \\begin{split} (which forbids \\tag), then in \\[ \\]."""
    body = f"\\begin{{split}}{tex}\\end{{split}}" if "\\\\" in tex else tex
    return f'<div class="math notranslate nohighlight">\n\\[{html.escape(body)}\\]</div>'


def _section(title: str, content: str) -> str:
    slug = re.sub(r"\W+", "-", title.lower())
    return f'<section id="{slug}"><h2>{html.escape(title)}</h2>\n{content}\n</section>'


def _math_page(tmp_path: Path, sections: list[tuple[str, str]]) -> str:
    """A page laid out like the site's, typeset by the MathJax the site vendors; returns its
    path under tmp_path, which also links node_modules/mathjax."""
    mathjax = ROOT / "node_modules" / "mathjax"
    if not (mathjax / "es5" / "tex-mml-chtml.js").is_file():
        pytest.fail(f"{mathjax} is missing: run `npm ci` (make setup does)")
    (tmp_path / "mathjax").symlink_to(mathjax, target_is_directory=True)
    body = "\n".join(_section(t, c) for t, c in sections)
    (tmp_path / "page.html").write_text(
        f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>{THEME_MATH_CSS}</style>
<script>window.MathJax = {{"options": {{"processHtmlClass": "math"}}}}</script>
<script defer src="mathjax/es5/tex-mml-chtml.js"></script>
</head><body><main><article>{body}</article></main></body></html>""",
        encoding="utf-8",
    )
    return "page.html"


def _problems_on(browser, tmp_path: Path, sections: list[tuple[str, str]]) -> list[str]:
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = open_page(browser, url + _math_page(tmp_path, sections))
        try:
            wait_for_math(page)
            assert not problems["console"] and not problems["failed"], problems
            return math_problems(page)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


def test_math_check_names_the_tag_error_and_the_overflowing_equations(browser, tmp_path):
    """The check catches what a reader sees: eq. 4's "\\tag not allowed in split
    environment" and the two-regime equation wider than the column, and more of their kind."""
    found = _problems_on(browser, tmp_path, [
        ("One step (eq. 4–5)", _sphinx_display(DECODER_EQ4_BROKEN)),
        ("Teacher forcing", _sphinx_display(TWO_REGIMES_WIDE)),
        ("A numbered equation", _sphinx_display(WIDE_NUMBERED)),
        ("Outside the theme",  # no div.math: nothing stops the equation spilling out
         f'<div class="other">\\[{html.escape(WIDE_NUMBERED)}\\]</div>'),
        ("Inline", r'<p>A broken fraction <span class="math">\(\frac{1}\)</span> in a line.</p>'),
        ("Fine", _sphinx_display(FINE_NUMBERED)),
    ])
    by_section = {re.search(r'in "([^"]+)"', p)[1]: p for p in found}
    assert sorted(by_section) == sorted(
        ["One step (eq. 4–5)", "Teacher forcing", "A numbered equation", "Outside the theme",
         "Inline"]), found
    assert len(found) == 5, found
    assert by_section["One step (eq. 4–5)"].startswith("MathJax error")
    assert "\\tag not allowed in split environment" in by_section["One step (eq. 4–5)"]
    assert "Missing argument for \\frac" in by_section["Inline"]
    for title in ("Teacher forcing", "A numbered equation"):
        message = by_section[title]
        assert message.startswith("display equation wider than the text column"), message
        assert "must scroll" in message, message
        assert int(re.search(r"(\d+) px of math", message)[1]) > 688, message
    assert "spills out" in by_section["Outside the theme"]
    assert "training (teacher forcing)" in by_section["Teacher forcing"]  # its TeX, to find it


def test_math_check_accepts_the_fixed_equations(browser, tmp_path):
    """The fixes proposed for the chapters render without an error and fit the column."""
    assert _problems_on(browser, tmp_path, [
        ("One step (eq. 4–5)", _sphinx_display(DECODER_EQ4_FIXED)),
        ("Teacher forcing", _sphinx_display(TWO_REGIMES_FIXED)),
        ("Fine", _sphinx_display(FINE_NUMBERED)),
        ("Inline", r'<p>A fraction <span class="math">\(\frac{1}{2}\)</span> in a line.</p>'),
    ]) == []


# --- the fonts the browser tests see ---------------------------------------------------------

FONT_PROBE = {  # a font-family each, as pages ask for them
    "default": "", "serif": "serif", "sans": "sans-serif", "mono": "monospace",
    "ui": "system-ui", "named": "'Times New Roman', Arial", "theme": (
        "-apple-system, BlinkMacSystemFont, 'Segoe UI', 'Helvetica Neue', Arial, sans-serif"),
}


def _fonts_used(page) -> dict[str, set[str]]:
    """The font families Chromium drew each FONT_PROBE paragraph with (DevTools' view)."""
    page.set_content("".join(f'<p id="{k}" style="font-family: {v}">Width, x-height · 中文</p>'
                             for k, v in FONT_PROBE.items()))
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    used = {}
    for key in FONT_PROBE:
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f"#{key}"})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        used[key] = {f["familyName"] for f in fonts}
    return used


def test_the_browser_sees_only_the_pinned_fonts(browser):
    """Whatever fonts the machine has, Latin text is drawn in matplotlib's DejaVu (conftest's
    `pinned_fonts`), so rendered widths do not depend on the installed fonts."""
    context = browser.new_context()
    try:
        used = _fonts_used(context.new_page())
    finally:
        context.close()
    cjk = set(conftest.CJK_FAMILIES)
    assert {k: u - cjk for k, u in used.items()} == {
        "default": {"DejaVu Sans"}, "serif": {"DejaVu Serif"}, "sans": {"DejaVu Sans"},
        "mono": {"DejaVu Sans Mono"}, "ui": {"DejaVu Sans"}, "named": {"DejaVu Sans"},
        "theme": {"DejaVu Sans"}}, used


def test_math_widths_do_not_depend_on_a_cjk_font(browser, tmp_path):
    """The math check measures the same widths with and without a CJK font installed."""
    sections = [("Teacher forcing", _sphinx_display(TWO_REGIMES_WIDE)),
                ("A numbered equation", _sphinx_display(WIDE_NUMBERED)),
                ("Fixed", _sphinx_display(DECODER_EQ4_FIXED))]
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    with_cjk = _problems_on(browser, tmp_path / "with", sections)
    fonts = conftest.pinned_fonts(tmp_path / "fonts", extra=[])
    bare = browser.browser_type.launch(
        executable_path=conftest.chromium_path(), headless=True, args=conftest.CHROMIUM_FLAGS,
        env={**os.environ, "FONTCONFIG_FILE": str(fonts)})
    try:
        without = _problems_on(bare, tmp_path / "without", sections)
    finally:
        bare.close()
    assert len(with_cjk) == 2 and with_cjk == without, (with_cjk, without)


# Where each host marks its theme: (element, attribute, dark value, light value).
THEME_MARKS = {
    "website": ("documentElement", "data-theme", "dark", "light"),  # pydata-sphinx-theme
    "JupyterLab": ("body", "data-jp-theme-light", "false", "true"),
    "Colab": ("documentElement", "theme", "dark", "light"),  # the <html> of an output's frame
}


@pytest.mark.parametrize("host", THEME_MARKS)
def test_a_view_follows_its_hosts_dark_theme(browser, widget_site, host):
    """A view (the decoder stepper) draws on its dark background exactly when the host's own
    mark says dark, and on white when it says light."""
    element, attribute, dark, light = THEME_MARKS[host]
    page, context, problems = open_page(browser, widget_site + "stepper.html")
    try:
        backgrounds = {}
        for scheme, value in (("dark", dark), ("light", light)):
            page.evaluate("([el, name, value]) => document[el].setAttribute(name, value)",
                          [element, attribute, value])
            backgrounds[scheme] = page.evaluate(
                "() => getComputedStyle(document.querySelector('.s2sw')).backgroundColor")
    finally:
        context.close()
    assert backgrounds == {"dark": "rgb(17, 24, 39)", "light": "rgb(255, 255, 255)"}, host
    assert not problems["console"], problems["console"]

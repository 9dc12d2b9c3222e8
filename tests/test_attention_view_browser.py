"""The attention explorer in headless Debian Chromium (Playwright), as a standalone page.

Checked on what the reader sees: every heatmap cell is painted with its weight's colour (the
Blues scale written again here) and says its weight; the step buttons and the arrow keys build
the heatmap up row by row; hovering or focusing a cell gives its weight; axe-core finds nothing
serious in either theme; nothing moves under prefers-reduced-motion; without JavaScript the
view says its result; inserted as inert markup (an ipywidgets HTML widget) it starts itself.
"""

from __future__ import annotations

import pytest
from conftest import ROOT, serve_directory
from test_accessibility import axe_problems, axe_source, set_scheme, tab_to  # noqa: F401
from test_attention_view import make_attention_model
from test_widgets_browser import check_clean, visit

from lib.widgets import attention_explorer

pytestmark = pytest.mark.browser

SHOTS = ROOT / "_build" / "screenshots" / "widgets"
SENTENCE = "She is reading a zorglub."
BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
         "#08519c", "#08306b"]  # ColorBrewer's Blues, as static/attention.js maps 0 .. 1


def blues(w: float) -> tuple[int, int, int]:
    x = min(max(w, 0.0), 1.0) * (len(BLUES) - 1)
    i = min(int(x), len(BLUES) - 2)
    f = x - i
    a, b = ([int(h[k:k + 2], 16) for k in (1, 3, 5)] for h in BLUES[i:i + 2])
    return tuple(round(u + (v - u) * f + 1e-9) for u, v in zip(a, b))


def contrast(a, b) -> float:
    def lum(c):
        c = [x / 255 for x in c]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted([lum(a), lum(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])


@pytest.fixture(scope="module")
def view():
    view = attention_explorer(make_attention_model(sharpen=100.0), SENTENCE)
    weights = [w for row in view.data["weights"] for w in row]
    assert max(weights) > 0.9 and min(weights) < 0.05, "the cells must span the colour scale"
    return view


@pytest.fixture(scope="module")
def site(view, tmp_path_factory):
    folder = tmp_path_factory.mktemp("attention-view")
    view.save_html(folder / "attention.html")
    (folder / "blank.html").write_text("<!DOCTYPE html><html lang=\"en\"><head><title>blank"
                                       "</title></head><body></body></html>", encoding="utf-8")
    server, url = serve_directory(folder)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser, site):  # noqa: F811 - `browser` is conftest's fixture
    page, context, problems = visit(browser, site + "attention.html")
    page.wait_for_selector(".s2sw[data-ready]")
    yield page
    context.close()
    check_clean(problems)


ROWS = "() => [...document.querySelectorAll('.s2s-attn tbody tr')].map(r => [r.className, " \
       "getComputedStyle(r).visibility])"


def current(page) -> int:
    """The step shown: the one row marked "now", and every row after it hidden."""
    rows = page.evaluate(ROWS)
    now = [i + 1 for i, (cls, _) in enumerate(rows) if "now" in cls.split()]
    assert len(now) == 1, rows
    shown = [vis == "visible" for _, vis in rows]
    assert shown == [i < now[0] for i in range(len(rows))], rows
    return now[0]


def readout(page) -> str:
    return page.inner_text(".s2s-attout")


def test_every_cell_shows_its_weight(page, view):
    data = view.data
    T, S = len(data["output"]), len(data["source"])
    cells = page.evaluate("""() => [...document.querySelectorAll('.s2s-attn tbody tr')].map(
        r => [...r.querySelectorAll('td')].map(c => [getComputedStyle(c).backgroundColor,
            getComputedStyle(c).color, c.textContent]))""")
    assert len(cells) == T and all(len(row) == S for row in cells)
    for t in range(T):
        for j in range(S):
            w = data["weights"][t][j]
            background, color, text = cells[t][j]
            assert max(abs(u - v) for u, v in zip(rgb(background), blues(w))) <= 1, (t, j, w)
            assert text == f"{w:.2f}"
            assert contrast(rgb(color), rgb(background)) >= 4.5
    heads = page.evaluate("() => [...document.querySelectorAll('.s2s-attn tbody th')]"
                          ".map(h => h.textContent)")
    assert heads == data["output"]
    cols = page.evaluate("() => [...document.querySelectorAll('.s2s-attn thead th.src')]"
                         ".map(h => [h.textContent, h.classList.contains('unk')])")
    assert cols == [[tok, unk] for tok, unk in zip(data["source"], data["unknown"])]
    assert f"«{data['translation']}»" in page.inner_text(".s2s-summary")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".s2sw").screenshot(path=str(SHOTS / "attention.png"))


def test_the_buttons_build_the_heatmap_up_step_by_step(page, view):
    data, T = view.data, len(view.data["output"])
    assert current(page) == T  # the whole heatmap first
    page.click("[data-go=first]")
    assert current(page) == 1
    assert page.get_attribute("[data-go=prev]", "aria-disabled") == "true"
    row = data["weights"][0]
    j = max(range(len(row)), key=row.__getitem__)
    assert readout(page).startswith(f"Step 1 of {T}: the decoder writes «{data['output'][0]}» "
                                    f"(P = {data['p'][0]:.2f}), drawing most on "
                                    f"«{data['source'][j]}» (weight {row[j]:.2f})")
    # the current row's weights are written in its cells and on the source tokens
    visible = page.evaluate("""() => [...document.querySelectorAll('.s2s-attn tr.now td .v')]
        .map(v => getComputedStyle(v).visibility)""")
    assert visible == ["visible"] * len(row)
    assert page.evaluate("() => [...document.querySelectorAll('.s2s-atok small')]"
                         ".map(s => s.textContent)") == [f"{w:.2f}" for w in row]
    page.click("[data-go=next]")
    page.click("[data-go=next]")
    assert current(page) == 3 and page.inner_text(".s2s-stepval") == f"step 3 / {T}"
    page.click("[data-go=prev]")
    assert current(page) == 2
    page.click("[data-go=last]")
    assert current(page) == T
    assert page.get_attribute("[data-go=next]", "aria-disabled") == "true"


def test_the_arrow_keys_step_and_read_the_cells(page, view):
    data, T, S = view.data, len(view.data["output"]), len(view.data["source"])
    tab_to(page, "[data-go=first]")
    page.keyboard.press("Enter")
    assert current(page) == 1
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert current(page) == 3
    page.keyboard.press("ArrowLeft")
    assert current(page) == 2
    page.keyboard.press("End")
    assert current(page) == T
    page.keyboard.press("Home")
    assert current(page) == 1
    # the heatmap is one Tab stop: the current row's strongest cell
    tab_to(page, ".s2s-attn td[tabindex='0']")
    assert page.locator(".s2s-attn td[tabindex='0']").count() == 1

    def focused() -> tuple[int, int]:
        return tuple(page.evaluate("""() => { const c = document.activeElement;
            return [+c.parentElement.dataset.step, +c.dataset.col]; }"""))

    def says(t: int, j: int) -> str:
        return (f"Step {t} writes «{data['output'][t - 1]}»: weight on «{data['source'][j]}» "
                f"= {data['weights'][t - 1][j]:.3f}.")

    t, j = focused()
    assert t == 1 and readout(page) == says(t, j)
    page.keyboard.press("ArrowDown")
    assert focused() == (2, j) and current(page) == 2 and readout(page) == says(2, j)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert focused() == (2, 1) and readout(page) == says(2, 1)
    assert page.evaluate("() => getComputedStyle(document.activeElement"
                         ".querySelector('.v')).visibility") == "visible"
    page.keyboard.press("End")
    assert focused() == (2, S - 1)
    page.keyboard.press("ArrowRight")  # the last column stays the last
    assert focused() == (2, S - 1)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # the first step stays the first
    assert focused() == (1, S - 1) and current(page) == 1
    # a row not yet decoded cannot be reached
    assert page.evaluate("() => getComputedStyle(document.querySelector("
                         "'.s2s-attn tr[data-step=\"2\"]')).visibility") == "hidden"


def test_hovering_a_cell_gives_its_weight(page, view):
    data = view.data
    page.hover(".s2s-attn tr[data-step='2'] td[data-col='3']")
    w = data["weights"][1][3]
    assert readout(page) == (f"Step 2 writes «{data['output'][1]}»: weight on "
                             f"«{data['source'][3]}» = {w:.3f}.")
    assert page.evaluate("() => getComputedStyle(document.querySelector("
                         "\".s2s-attn tr[data-step='2'] td[data-col='3'] .v\")).visibility"
                         ) == "visible"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious(page, axe_source, scheme):  # noqa: F811
    set_scheme(page, scheme)
    if scheme == "dark":
        page.evaluate("() => document.body.setAttribute('data-jp-theme-light', 'false')")
    for step in ("first", "last"):
        page.click(f"[data-go={step}]")
        found = axe_problems(page, axe_source)
        assert not found, "\n  ".join(found)


def test_nothing_moves_under_reduced_motion(page):
    longest = {}
    for motion in ("no-preference", "reduce"):
        page.emulate_media(reduced_motion=motion)
        longest[motion] = page.evaluate("""() => Math.max(...[...document.querySelectorAll(
            '.s2sw, .s2sw *')].map(e => parseFloat(getComputedStyle(e).transitionDuration)))""")
    assert longest["no-preference"] > 0, "nothing moves: this test checks nothing"
    assert longest["reduce"] == 0


def test_it_fits_a_phone(page):
    page.set_viewport_size({"width": 390, "height": 844})
    extra = page.evaluate("() => document.documentElement.scrollWidth"
                          " - document.documentElement.clientWidth")
    assert extra <= 0


def test_without_javascript_it_says_its_result(browser, site, view):  # noqa: F811
    page, context, _ = visit(browser, site + "attention.html", javascript=False)
    try:
        assert page.locator(".s2sw.js").count() == 0 and page.locator("table").count() == 0
        text = page.inner_text("body")
        assert f"«{view.trace.translation}»" in text and "JavaScript is off" in text
    finally:
        context.close()


def test_inserted_as_inert_markup_it_starts_once_and_saves_itself(browser, site, view):  # noqa: F811
    page, context, problems = visit(browser, site + "blank.html")
    try:
        state = page.evaluate("""async (html) => {
            const div = document.createElement('div');
            div.innerHTML = html;  // as an ipywidgets HTML widget: scripts inert
            document.body.appendChild(div);
            await new Promise(r => setTimeout(r, 300));
            return [div.querySelector('.s2sw').getAttribute('data-ready'),
                    div.querySelectorAll('.s2s-attn').length,
                    document.head.querySelectorAll('script').length]; }""", view.to_html())
        assert state == ["1", 1, 0]
        page.click("[data-go=first]")
        assert current(page) == 1
        with page.expect_download() as info:
            page.click('[data-save="html"]')
        saved = open(info.value.path(), encoding="utf-8").read()
        again = context.new_page()
        again.set_content(saved)
        cells = len(view.data["output"]) * len(view.data["source"])
        assert again.locator(".s2s-attn td").count() == cells
        again.close()
        check_clean(problems)
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_inside_a_page_of_the_website(browser, site_dir, view, axe_source, tmp_path,  # noqa: F811
                                      scheme):
    """In the built site's page (its theme's CSS and scripts), as the chapter shows it: it
    starts, keeps to the content column, steps, and axe-core finds nothing serious."""
    template = (site_dir / "book" / "intro.html").read_text(encoding="utf-8")
    for entry in site_dir.iterdir():  # the site's assets beside our own page
        if entry.name != "book":
            (tmp_path / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (tmp_path / "book").mkdir()
    marker = '<article class="bd-article"'
    start = template.index(marker)
    end = template.index(">", start) + 1
    (tmp_path / "book" / "attention-view.html").write_text(
        template[:end] + view.to_html() + template[end:], encoding="utf-8")
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = visit(browser, url + "book/attention-view.html")
        try:
            page.wait_for_selector(".s2sw-attention[data-ready]")
            set_scheme(page, scheme)
            width = page.evaluate("() => document.querySelector('.s2sw').offsetWidth")
            assert 400 <= width <= 720
            page.click("[data-go=first]")
            assert current(page) == 1
            # the view's own nodes only: the theme's are test_accessibility's, on the site
            # as it was built (a11y.js mends them)
            page.add_script_tag(content=axe_source)
            result = page.evaluate("() => axe.run('.s2sw-attention', "
                                   "{resultTypes: ['violations']})")
            found = [(v["id"], n["target"]) for v in result["violations"] for n in v["nodes"]
                     if n.get("impact") in ("serious", "critical")]
            assert not found, found
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.locator(".s2sw-attention").screenshot(
                path=str(SHOTS / f"site-attention-{scheme}.png"))
            check_clean(problems)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()

"""The static widget views in a real browser: headless Debian Chromium driven by Playwright.

Each view is written to an HTML file, served on 127.0.0.1 with every other address blocked, and
checked: it renders without console errors, reacts to input (step sliders, toggles, hover), saves
itself (HTML and PNG downloads), and still shows its drawing with JavaScript off. The same views
are then embedded in a page of the built website (its theme's CSS and scripts) to check that the
theme does not break them. Screenshots go to `_build/screenshots/widgets/`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from conftest import ROOT, open_page, serve_directory
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_widgets import SENTENCES, make_model

from lib.widgets import beam_explorer

pytestmark = pytest.mark.browser

SHOTS = ROOT / "_build" / "screenshots" / "widgets"
WIDTH = 760  # about a content column of the website plus its margins


def visit(browser, url: str, javascript: bool = True):  # noqa: F811 - `browser` is a fixture
    """Open a page like `test_browser.open_page` (network cut off beyond 127.0.0.1)."""
    if javascript:
        page, context, problems = open_page(browser, url)
        context.set_default_timeout(10_000)
        return page, context, problems
    context = browser.new_context(viewport={"width": WIDTH, "height": 900},
                                  java_script_enabled=False)
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    page.goto(url, wait_until="load")
    return page, context, {"external": [], "console": [], "failed": []}


def short(token: str, width: int = 14) -> str:
    """A token label as static/common.js's S2S.short cuts it (14 characters by default)."""
    return token if len(token) <= width else token[:width - 1] + "…"


def set_range(page, selector: str, value: int) -> None:
    page.locator(selector).evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value)


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".s2sw").first.screenshot(path=str(SHOTS / f"{name}.png"))


def shown(page, selector: str) -> int:
    """How many elements matching `selector` are displayed."""
    return page.evaluate(
        "s => [...document.querySelectorAll(s)].filter(e => e.getClientRects().length).length",
        selector)


def check_clean(problems: dict) -> None:
    assert not problems["external"], f"requests left 127.0.0.1: {problems['external']}"
    assert not problems["console"], f"console errors: {problems['console']}"
    assert not problems["failed"], f"failed requests: {problems['failed']}"


def fits(page) -> None:
    """Nothing but the beam tree's own scroller is wider than the view."""
    overflow = page.evaluate("""() => {
        const root = document.querySelector('.s2sw');
        return root.scrollWidth - root.clientWidth; }""")
    assert overflow <= 1, f"the view overflows its box by {overflow}px"


# The diverging scale of static/hidden.js (ColorBrewer RdBu), for states in (-1, 1).
RDBU = [(33, 102, 172), (103, 169, 207), (247, 247, 247), (239, 138, 98), (178, 24, 43)]


def diverging(v: float) -> tuple[int, ...]:
    pos = (max(-1.0, min(1.0, v)) + 1) / 2 * (len(RDBU) - 1)
    lo = min(int(pos), len(RDBU) - 2)
    f = pos - lo
    return tuple(round(a * (1 - f) + b * f) for a, b in zip(RDBU[lo], RDBU[lo + 1]))


def heat_pixels(page, selector: str) -> list[list[list[int]]]:
    """The RGB pixels (rows x columns) of a heatmap's image, as the browser decodes it."""
    return page.locator(selector).evaluate("""async (image) => {
        const img = new Image();
        img.src = image.getAttribute('href');
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width; c.height = img.height;
        const ctx = c.getContext('2d');
        ctx.drawImage(img, 0, 0);
        const d = ctx.getImageData(0, 0, c.width, c.height).data, rows = [];
        for (let y = 0; y < c.height; y++) {
            const row = [];
            for (let x = 0; x < c.width; x++) {
                const o = (y * c.width + x) * 4;
                row.push([d[o], d[o + 1], d[o + 2]]);
            }
            rows.push(row);
        }
        return rows; }""")


def _path(trace, node_id: int) -> list[int]:
    ids = []
    while node_id is not None:
        ids.append(node_id)
        node_id = trace.node(node_id).parent
    return ids[::-1]


# ---------------------------------------------------------------------------------------------


def test_hidden_state_explorer(browser, widget_site, widget_views):
    page, context, problems = visit(browser, widget_site + "hidden.html")
    try:
        page.set_viewport_size({"width": WIDTH, "height": 900})
        assert page.locator(".s2sw.js").count() == 1, "the view's script did not run"
        assert shown(page, ".s2s-heat") == 1 and shown(page, ".s2s-traj") == 1
        fits(page)
        shoot(page, "hidden")
        trace = widget_views["hidden"].trace
        S, T = len(trace.source), len(trace.output)
        # drawn by static/hidden.js from the data: a heatmap per layer and side, a trajectory
        # per layer with a point per step, the tokens under their columns
        enc, dec = trace.tensors()  # (L, S, H), (L, T, H)
        L = enc.size(0)
        # each token label: its text after its <title> tooltip
        drawn = page.evaluate("""() => [...document.querySelectorAll('.s2s-heat')].map(p => [
            p.dataset.key, [...p.querySelectorAll('.tok')].map(t => t.lastChild.textContent)])""")
        assert drawn == [[f"{m}{layer}", [short(t) for t in (trace.source if m == "enc" else
                                                            trace.output)]]
                         for layer in range(1, L + 1) for m in ("enc", "dec")]
        assert page.locator(".s2s-traj").count() == L
        assert page.locator(".s2s-traj .pt").count() == L * (S + T)
        assert page.locator(".s2s-heat .tok.unk").count() == 2 * sum(trace.unknown)  # 2 layers
        # the heatmap's pixels are the states' values on the diverging scale
        panel = widget_views["hidden"].data["panels"]["enc2"]
        pixels = heat_pixels(page, '.s2s-heat[data-key="enc2"] image')
        assert (len(pixels), len(pixels[0])) == (len(panel["units"]), S)  # units x time
        for row, unit in enumerate(panel["units"][:8]):
            for col in range(S):
                want = diverging(float(enc[1, col, unit]))
                assert all(abs(a - b) <= 3 for a, b in zip(pixels[row][col], want)), (row, col)
        # the time slider draws the trajectory up to step t and marks column t of the heatmap
        set_range(page, '[data-slider="t"]', 2)
        assert shown(page, ".s2s-traj:not([hidden]) .pt") == 2
        assert page.locator(".s2s-traj:not([hidden]) .pt.now").get_attribute("data-t") == "2"
        assert shown(page, ".s2s-heat:not([hidden]) .cur") == 1
        assert trace.source[1] in page.inner_text(".s2s-hidout")
        shoot(page, "hidden-step2")
        set_range(page, '[data-slider="t"]', S + 1)  # the first decoder step: decoder panel
        assert page.locator(".s2s-heat:not([hidden])").get_attribute("data-mode") == "dec"
        assert shown(page, ".s2s-traj:not([hidden]) .pt") == S + 1
        # hovering a token highlights its column and its point on the trajectory
        page.locator('.s2s-heat:not([hidden]) .tok[data-col="0"]').hover()
        assert shown(page, ".s2s-heat:not([hidden]) .hl") == 1
        assert page.locator(".s2s-heat:not([hidden]) .tok.on").count() == 1
        assert page.locator(".s2s-traj:not([hidden]) .pt.hov").count() == 1
        assert trace.output[0] in page.inner_text(".s2s-hidout")
        # buttons switch encoder/decoder and the layer
        page.click('[data-group="mode"] [data-value="enc"]')
        page.click('[data-group="layer"] [data-value="1"]')
        heat = page.locator(".s2s-heat:not([hidden])")
        assert (heat.get_attribute("data-mode"), heat.get_attribute("data-layer")) == ("enc", "1")
        assert page.locator(".s2s-traj:not([hidden])").get_attribute("data-layer") == "1"
        # hovering a cell reads out its unit and value
        box = heat.locator("image").bounding_box()
        page.mouse.move(box["x"] + 3, box["y"] + 3)
        assert re.search(r"unit \d+ = [+−]\d\.\d\d", page.inner_text(".s2s-hidout"))
        # the map rings a hovered sentence's nearest neighbours
        page.locator(".s2s-map .mp").first.hover()
        assert page.locator(".s2s-map .mp.nn").count() == 3
        assert SENTENCES[0] in page.inner_text(".s2s-mapout")
        assert T >= 1
        check_clean(problems)
    finally:
        context.close()


def test_beam_explorer(browser, widget_site, widget_views):
    page, context, problems = visit(browser, widget_site + "beam.html")
    cap = widget_views["beam"].trace
    nodes = cap.trace["nodes"]
    last = max(n["step"] for n in nodes)
    try:
        page.set_viewport_size({"width": WIDTH, "height": 900})
        assert page.locator(".s2sw.js").count() == 1
        fits(page)
        shoot(page, "beam")
        assert shown(page, ".s2s-tree .node") == len(nodes)
        # drawn by static/beam.js from the trace: a box per node in its step's column, with its
        # status; the winner's path; greedy's strip; the finished table
        boxes = page.evaluate("""() => [...document.querySelectorAll('.s2s-tree .node')].map(g =>
            [g.getAttribute('class'), +g.dataset.step, g.transform.baseVal[0].matrix.e,
             g.querySelector('text').textContent])""")
        trace = cap.beam_trace()
        path = _path(trace, trace.winner)
        for box, node in zip(boxes, nodes):
            status = "root" if node["parent"] is None else node["status"]
            assert box[0].split()[:2] == ["node", status] and box[1] == node["step"]
            assert box[2] == 8 + 86 * node["step"]  # beam.js's ML + step * DX
            assert box[3] == short(node["text"], 10)  # beam.js's BOX_CHARS
        win = [b for b in boxes if "win" in b[0].split()]
        assert [b[1] for b in win] == list(range(len(path)))  # <sos> to the winner's <eos>
        assert page.locator(".s2s-tree .gnode").count() == len(cap.greedy)
        finished = sum(n["status"] == "finished" for n in nodes)
        assert page.locator("tr[data-step]").count() == finished
        assert page.locator("tr.win td").first.inner_text() == " ".join(
            trace.node(i).text for i in path[1:])
        # the step slider shows the tree up to step t
        set_range(page, '[data-slider="step"]', 1)
        assert shown(page, ".s2s-tree .node") == 1 + sum(n["step"] == 1 for n in nodes)
        assert page.inner_text(".s2s-beamout").startswith("Step 1:")
        assert "final" not in page.get_attribute(".s2s-tree", "class")
        shoot(page, "beam-step1")
        set_range(page, '[data-slider="step"]', last)
        assert "final" in page.get_attribute(".s2s-tree", "class")
        # toggling pruned branches hides them
        pruned = sum(n["status"] == "pruned" for n in nodes)
        assert pruned and shown(page, ".s2s-tree .node.pruned") == pruned
        page.uncheck('[data-toggle="pruned"]')
        assert shown(page, ".s2s-tree .node.pruned") == 0
        assert shown(page, ".s2s-tree .node") == len(nodes) - pruned
        shoot(page, "beam-no-pruned")
        page.check('[data-toggle="pruned"]')
        # raw vs length-normalised scores
        winner = next(n for n in nodes if n["id"] == widget_views["beam"].trace.trace["winner"])
        page.click('[data-group="score"] [data-value="norm"]')
        texts = page.eval_on_selector_all(".s2s-tree .node .sc",
                                          "els => els.map(e => e.textContent)")
        assert f"{winner['score']:.2f}".replace("-", "−") in texts
        check_clean(problems)
    finally:
        context.close()


def test_stepper_and_bleu(browser, widget_site, widget_views):
    page, context, problems = visit(browser, widget_site + "stepper.html")
    try:
        page.set_viewport_size({"width": WIDTH, "height": 900})
        fits(page)
        shoot(page, "stepper")
        assert shown(page, ".s2s-step") == 1
        set_range(page, '[data-slider="step"]', 1)
        assert page.locator(".s2s-step:not([hidden])").get_attribute("data-step") == "1"
        assert "forced" in page.inner_text(".s2s-step:not([hidden])")
        page.click('.s2s-chip[data-step="3"]')
        assert page.locator(".s2s-step:not([hidden])").get_attribute("data-step") == "3"
        assert page.locator('.s2s-chip[aria-pressed="true"]').get_attribute("data-step") == "3"
        # drawn by static/stepper.js from the steps: a chip and a step of bars per token
        trace = widget_views["stepper"].trace
        chips = page.eval_on_selector_all(".s2s-chip[data-step]",
                                          "els => els.map(e => e.firstChild.textContent)")
        assert chips == [short(t) for t in trace.output]
        assert page.locator(".s2s-step").count() == len(trace.steps)
        summary = page.inner_text(".s2s-summary")
        assert "Forced prefix «Tu es»" in summary and f"«{trace.translation}»" in summary
        check_clean(problems)
    finally:
        context.close()

    page, context, problems = visit(browser, widget_site + "bleu.html")
    try:
        page.set_viewport_size({"width": WIDTH, "height": 900})
        fits(page)
        shoot(page, "bleu")
        green = "s => getComputedStyle(document.querySelector(s)).backgroundColor"
        assert page.evaluate(green, '.tk[data-n1="m"]') != "rgba(0, 0, 0, 0)"
        page.click('[data-group="order"] [data-value="2"]')
        assert page.get_attribute(".s2s-bleu", "data-order") == "2"
        assert page.evaluate(green, '.tk[data-n1="m"]:not([data-n2])') == "rgba(0, 0, 0, 0)"
        assert page.evaluate(green, '.tk[data-n2="m"]') != "rgba(0, 0, 0, 0)"
        assert shown(page, ".ngr") == 1
        trace = widget_views["bleu"].trace
        assert page.inner_text(".s2s-score b") == f"{trace.result['score']:.2f}"
        assert page.locator(".s2s-sent .tk").count() == len(trace.hyp_tokens[0]) + sum(
            len(r) for r in trace.ref_tokens[0])
        shoot(page, "bleu-bigrams")
        check_clean(problems)
    finally:
        context.close()


def test_a_long_beam_tree_uses_the_output_areas_width(browser, tmp_path):
    """An 8-step tree (780 SVG units) in a 1000 px output area is whole at first sight: the
    beam view is not held to the 720 px of the other views. Its scroller takes
    keyboard focus, for the trees wider still."""
    from lib.experiments import toy

    model = toy.tiny_model(0, eos_bias=-20.0)  # never ends: the search runs to the cap
    view = beam_explorer(model, "en1 en2 en3", beam_size=2, max_len=8)
    assert max(n["step"] for n in view.data["nodes"]) == 8
    view.save_html(tmp_path / "beam8.html")
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = visit(browser, url + "beam8.html")
        try:
            page.set_viewport_size({"width": 1032, "height": 900})  # a 1000 px output area
            page.evaluate("() => { document.body.style.width = '1000px'; }")
            cut = page.evaluate("""() => {
                const s = document.querySelector('.s2s-scroll');
                return s.scrollWidth - s.clientWidth; }""")
            assert cut <= 0, f"the tree is cut by {cut}px"
            assert page.locator(".s2s-scroll").get_attribute("tabindex") == "0"
            text = page.evaluate(
                "() => document.querySelector('.s2sw-beam .s2s-sub').getBoundingClientRect().width")
            assert text <= 700, "the view's text keeps a readable line length"
            check_clean(problems)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


def test_beam_summary_says_why_the_winner_differs_from_greedy(browser, tmp_path):
    """The verdict under the tree is true of each case: a more probable winner; a less probable
    one that scores higher once normalised (alpha > 0); greedy's path having left the beam
    (at alpha = 0, where a less probable winner never scores higher, and at alpha = 1)."""
    from lib.experiments.toy import TableModel, greedy_loses_table, walkthrough_table

    # greedy: A D <eos> (0.55 * 0.34); B G and B H (0.225 each) push A D out of a beam of two,
    # and their continuations all fall below A D <eos>
    left = {(): {"A": 0.55, "B": 0.45}, ("A",): {"D": 0.34, "E": 0.33, "F": 0.33},
            ("A", "D"): {"<eos>": 1.0}, ("B",): {"G": 0.5, "H": 0.5},
            ("B", "G"): {"<eos>": 0.4, "J": 0.3, "K": 0.3},
            ("B", "H"): {"<eos>": 0.4, "J": 0.3, "K": 0.3}}
    gone = "its path left the beam"
    cases = [(TableModel(greedy_loses_table()), 0.0, "found a more probable sentence"),
             (TableModel(walkthrough_table(), max_len=3), 1.0, "scores higher once normalised"),
             (TableModel(left), 0.0, gone), (TableModel(left), 1.0, gone)]
    for i, (toy, alpha, _) in enumerate(cases):
        view = beam_explorer(toy, beam_size=2, alpha=alpha)
        assert view.trace.translation != view.trace.greedy_translation
        view.save_html(tmp_path / f"beam{i}.html")
    server, url = serve_directory(tmp_path)
    try:
        for i, (_, _, expected) in enumerate(cases):
            page, context, problems = visit(browser, url + f"beam{i}.html")
            try:
                summary = page.inner_text(".s2s-summary")
                assert expected in summary, summary
                assert ("normalised" in summary) == (expected != gone and "normalised" in expected)
                check_clean(problems)
            finally:
                context.close()
    finally:
        server.shutdown()
        server.server_close()


def test_trajectory_labels_do_not_overlap(browser, tmp_path):
    """Points that land close together (here four states a hair apart) keep their labels
    apart: each label takes a free spot beside its point, or is shown only while its step is
    the current one."""
    from lib.widgets.hidden import HiddenView
    from lib.widgets.trace import HiddenTrace

    near = [[0.5, 0.1, -0.2, 0.0], [0.51, 0.1, -0.2, 0.0], [0.52, 0.11, -0.2, 0.0],
            [0.5, 0.12, -0.21, 0.0], [0.53, 0.1, -0.19, 0.01], [-0.6, 0.4, 0.3, -0.5]]
    trace = HiddenTrace("one two three four five six", ["one", "two", "three", "four", "five",
                                                      "six"], [False] * 6,
                        ["un", "deux", "<eos>"], [near],
                        [[[-0.5, 0.4, 0.3, -0.5], [-0.52, 0.41, 0.3, -0.5], [0.0, 0.9, 0.9, 0.9]]])
    HiddenView(trace, units=None).save_html(tmp_path / "crowded.html")
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = visit(browser, url + "crowded.html")
        try:
            boxes = page.evaluate("""() => [...document.querySelectorAll('.s2s-traj .pl')]
                .filter(e => getComputedStyle(e).visibility === 'visible')
                .map(e => { const b = e.getBBox(); return [b.x, b.y, b.x + b.width,
                                                           b.y + b.height]; })""")
            assert len(boxes) >= 4
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), \
                        f"labels overlap: {a} {b}"
            set_range(page, '[data-slider="t"]', 2)  # a crowded label shows at its own step
            now = page.locator('.s2s-traj .pl[data-t="2"]')
            assert now.evaluate("e => getComputedStyle(e).visibility") == "visible"
            check_clean(problems)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("name", ["hidden", "beam"])
def test_views_save_themselves(browser, widget_site, name):
    page, context, problems = visit(browser, widget_site + f"{name}.html")
    try:
        with page.expect_download() as info:
            page.click('[data-save="html"]')
        saved = open(info.value.path(), encoding="utf-8").read()
        assert saved.startswith("<!DOCTYPE html>") and 'class="s2sw' in saved
        assert "http://" not in saved and "https://" not in saved
        # the saved page carries the data and scripts: it draws the view again, on its own
        again = context.new_page()
        again.set_content(saved)
        drawn = ".s2s-heat image" if name == "hidden" else ".s2s-tree .node"
        assert again.locator(".s2sw.js").count() == 1
        assert again.locator(drawn).count() == page.locator(drawn).count() > 0
        again.close()
        with page.expect_download() as info:
            page.click('[data-save="png"]')
        png = open(info.value.path(), "rb").read()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
        check_clean(problems)
    finally:
        context.close()


@pytest.mark.parametrize("name", ["hidden", "map", "beam", "stepper", "bleu"])
def test_views_make_sense_without_javascript(browser, widget_site, widget_views, name):
    page, context, _ = visit(browser, widget_site + f"{name}.html", javascript=False)
    try:
        assert page.locator(".s2sw.js").count() == 0
        assert shown(page, ".s2s-js") == 0, "controls that need JavaScript are hidden"
        # every view is drawn by JavaScript: without it, its result in words
        assert shown(page, "svg, .s2s-step, .s2s-sent, .s2s-chip") == 0
        trace, text = widget_views[name].trace, page.inner_text("body")
        if name in ("beam", "hidden", "stepper"):
            assert f"«{trace.translation}»" in text
        if name == "map":
            assert f"{len(trace.sentences)} sentences" in text
        if name == "bleu":
            assert f"{trace.result['score']:.2f}" in text
        assert "JavaScript is off" in text
        shoot(page, f"{name}-nojs")
    finally:
        context.close()


def test_views_inside_a_page_of_the_website(browser, site_dir, widget_views, tmp_path):
    """Embedded in the built site's page (its theme's CSS and scripts), light and dark."""
    template = (site_dir / "book" / "intro.html").read_text(encoding="utf-8")
    for entry in site_dir.iterdir():  # the site's assets and index beside our own page
        if entry.name != "book":
            (tmp_path / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (tmp_path / "book").mkdir()
    fragments = "\n".join(view.to_html() for view in widget_views.values())
    page_html, n = re.subn(r'(<article class="bd-article"[^>]*>)',
                           lambda m: m.group(1) + fragments, template, count=1)
    assert n == 1, "the theme's article element was not found"
    (tmp_path / "book" / "widgets.html").write_text(page_html, encoding="utf-8")
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = visit(browser, url + "book/widgets.html")
        try:
            assert page.locator(".s2sw.js").count() == len(widget_views)
            set_range(page, '.s2sw-beam [data-slider="step"]', 1)
            assert "Step 1:" in page.inner_text(".s2sw-beam .s2s-beamout")
            width = page.evaluate("() => document.querySelector('.s2sw').offsetWidth")
            assert 500 <= width <= 720
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.locator(".s2sw-hidden").screenshot(path=str(SHOTS / "site-hidden.png"))
            page.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
            page.locator(".s2sw-beam").screenshot(path=str(SHOTS / "site-beam-dark.png"))
            check_clean(problems)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


def test_views_run_their_script_when_inserted_as_inert_markup(browser, widget_site,
                                                              widget_views):
    """Where a view arrives through innerHTML (an ipywidgets HTML widget, the classic Notebook's
    output area before the view is on the page), its <script> never runs; its <style onload>
    runs it once the view is in the document, exactly once, leaving the view as it was."""
    page, context, problems = visit(browser, widget_site + "bleu.html")  # any page of ours: a blank
    try:
        fragments = {name: widget_views[name].to_html() for name in ("beam", "hidden", "stepper")}
        state = page.evaluate("""async (fragments) => {
            const sleep = ms => new Promise(r => setTimeout(r, ms));
            window.runs = 0;
            const holders = Object.entries(fragments).map(([name, html]) => {
                const div = document.createElement('div');
                div.innerHTML = html;  // detached, scripts inert
                return div; });
            await sleep(200);
            const before = holders.map(d => d.querySelector('.s2sw').classList.contains('js'));
            holders.forEach(d => document.body.appendChild(d));
            await sleep(300);
            const after = holders.map(d => d.querySelector('.s2sw').getAttribute('data-ready'));
            const scripts = holders.map(d => d.querySelectorAll('script').length);
            return {before, after, scripts, head: document.head.querySelectorAll('script').length};
        }""", fragments)
        assert state["before"] == [False] * 3, "a view ran before it was on the page"
        assert state["after"] == ["1"] * 3, "a view inserted as markup did not start"
        assert state["scripts"] == [2] * 3 and state["head"] == 0, "activation left copies behind"
        # the activated views work: the beam's step slider, the stepper's chips
        set_range(page, '.s2sw-beam [data-slider="step"]', 1)
        assert page.inner_text(".s2sw-beam .s2s-beamout").startswith("Step 1:")
        page.click('.s2sw-stepper .s2s-chip[data-step="2"]')
        assert page.locator(".s2sw-stepper .s2s-step:not([hidden])").get_attribute(
            "data-step") == "2"
        with page.expect_download() as info:
            page.click('.s2sw-beam [data-save="html"]')
        saved = open(info.value.path(), encoding="utf-8").read()
        assert saved.count("<script>") == 1, "the saved page carries the script once"
        check_clean(problems)
    finally:
        context.close()


def test_live_view_on_the_websites_widget_manager(browser, site_dir, tmp_path):
    """A live widget as the website shows it: its saved state drawn by the site's own widget
    manager (@jupyter-widgets/html-manager, no kernel). The view in its HTML widget starts."""
    import yaml
    from ipywidgets.embed import embed_data, escape_script

    from lib.widgets import live_beam

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    scripts = config["nb_ipywidgets_js"]
    (tmp_path / "_static").symlink_to(site_dir / "_static", target_is_directory=True)
    (tmp_path / "book").mkdir()
    torch.manual_seed(0)
    box = live_beam(make_model(hidden=32, max_tgt_len=6).eval(), "I am cold.", beam_size=2)
    data = embed_data(views=[box])
    # As a page embeds widget state: a "</script>" inside a view's HTML must not end the tag.
    state = escape_script(json.dumps(data["manager_state"]))
    view = escape_script(json.dumps(data["view_specs"][0]))
    tags = "\n".join(f'<script src="../_static/{s}"></script>' for s in scripts)
    (tmp_path / "book" / "live.html").write_text(
        f"""<!DOCTYPE html><html><head><meta charset="utf-8">{tags}</head><body>
<script type="application/vnd.jupyter.widget-state+json">{state}</script>
<script type="application/vnd.jupyter.widget-view+json">{view}</script>
</body></html>""", encoding="utf-8")
    server, url = serve_directory(tmp_path)
    try:
        page, context, problems = visit(browser, url + "book/live.html")
        try:
            try:
                page.wait_for_selector(".widget-slider", timeout=30000)
                page.wait_for_selector(".s2sw-beam.js[data-ready]", timeout=30000)
            except PlaywrightTimeout:
                page.screenshot(path=str(SHOTS / "site-live-beam-failure.png"))
                pytest.fail(f"the live view did not render: {problems}")
            set_range(page, '.s2sw-beam [data-slider="step"]', 1)
            assert page.inner_text(".s2sw-beam .s2s-beamout").startswith("Step 1:")
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "site-live-beam.png"), full_page=True)
            check_clean(problems)
        finally:
            context.close()
    finally:
        server.shutdown()
        server.server_close()


def _pages_with_views(site: Path) -> list[str]:
    """The built chapter pages that show at least one (static) view."""
    return sorted(p.stem for p in (site / "book").glob("*.html")
                  if 'class="s2sw' in p.read_text(encoding="utf-8"))


def test_every_view_starts_on_the_websites_chapters(browser, site_dir, site_url):
    """On the built website, each chapter's views run their script, and no page shows a live
    view: its controls would be dead without a kernel (the chapters tag live cells
    remove-cell + reader-only + skip-execution, so only the reader notebooks carry them)."""
    pages = _pages_with_views(site_dir)
    assert len(pages) >= 6, f"views on only {pages}"
    for name in pages:
        html = (site_dir / "book" / f"{name}.html").read_text(encoding="utf-8")
        assert "widget-state+json" not in html and "widget-view+json" not in html, \
            f"{name}: the page carries a live view (ipywidgets state): dead controls there"
        page, context, problems = visit(browser, site_url + f"book/{name}.html")
        try:
            page.wait_for_function("""() => {
                const v = [...document.querySelectorAll('.s2sw')];
                return v.length && v.every(e => e.getAttribute('data-ready') === '1'); }""",
                                   timeout=30000)
            assert page.locator(".widget-vbox, .jupyter-widgets").count() == 0, name
            if name == "beam_search":
                SHOTS.mkdir(parents=True, exist_ok=True)
                view = page.locator(".s2sw").first
                view.scroll_into_view_if_needed()
                view.screenshot(path=str(SHOTS / "site-chapter-beam.png"))
            assert not problems["console"], f"{name}: console errors {problems['console']}"
        finally:
            context.close()

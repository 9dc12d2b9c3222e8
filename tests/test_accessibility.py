"""Accessibility of the built website and of the widgets, in headless Chromium.

axe-core (npm, `npm ci` installs it from package.json like the site's other packages) runs on
every page of `_toc.yml`, in the light and in the dark theme: no serious or critical violation
may remain. Every violating node is printed, so a failing run says what to fix. Beside axe:
no page scrolls sideways on a 390 px phone, and the course's own CSS honours
`prefers-reduced-motion`.

The widgets are checked with the keyboard alone on views built from a tiny model (like
tests/test_widgets_browser.py): the stepper's token chips and slider, the beam view's slider
and its scrollable tree, the hidden-state explorer's tokens; axe runs on each view too, in both
themes.

The theme (sphinx-book-theme) cannot be changed here; what axe finds in it is mended by
book/_static/a11y.css and a11y.js, which _config.yml adds to every page.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, open_page

from lib.checks.harness import VERDICT_CSS, CheckResult
from scripts import toc

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGES = toc.pages(ROOT / "_toc.yml")
BLOCKING = ("serious", "critical")
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is in package.json)")
    return AXE.read_text(encoding="utf-8")


def settle(page) -> None:
    """Wait until the page's MathJax has typeset and its widgets have started."""
    page.wait_for_load_state("load")
    if page.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.s2sw')].every(e => e.getAttribute('data-ready')"
        " || e.classList.contains('js'))", timeout=20_000)


def axe_problems(page, axe_source: str) -> list[str]:
    """Every serious or critical axe-core violation on the page, one line per node."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source)
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    lines = []
    for violation in result["violations"]:
        for node in violation["nodes"]:
            if node.get("impact") in BLOCKING:
                summary = " ".join((node.get("failureSummary") or "").split())
                lines.append(f"{violation['id']} ({node['impact']}) at "
                             f"{' > '.join(map(str, node['target']))}: {node['html'][:200]}"
                             f" -- {summary[:300]}")
    return lines


def set_scheme(page, scheme: str) -> None:
    """Light or dark: the reader's system preference, which the site follows (default_mode:
    auto), and the theme's own attribute set as its switch button would."""
    page.emulate_media(color_scheme=scheme)
    page.evaluate("""async (mode) => {
        document.documentElement.dataset.theme = mode;
        document.documentElement.dataset.mode = mode;
        // the theme's colour transitions start on the next frame: let them all end, so that
        // axe-core reads the scheme's colours, not a blend of the two
        await new Promise(requestAnimationFrame);
        await new Promise(requestAnimationFrame);
        const ending = document.getAnimations().filter(
            a => a.effect && a.effect.getComputedTiming().endTime !== Infinity);
        await Promise.race([Promise.all(ending.map(a => a.finished.catch(() => null))),
                            new Promise(done => setTimeout(done, 3000))]);
    }""", scheme)


SCHEMES = ("light", "dark")


# What makes a page wider than the viewport: the elements whose removal narrows the page, the
# innermost last (the last three are named in the message).
OVERFLOWING_JS = """() => {
    const root = document.documentElement, width = root.clientWidth, out = [];
    const extra = () => root.scrollWidth - root.clientWidth, before = extra();
    for (const el of document.querySelectorAll('body *')) {
        if (el.getBoundingClientRect().right < width - 20) continue;
        const display = el.style.display;
        el.style.display = 'none';
        const narrower = extra() < before;
        el.style.display = display;
        if (narrower) out.push(el.outerHTML.slice(0, 160));
    }
    return out.slice(-3);
}"""


def sideways_on_a_phone(page) -> tuple[int, list[str]]:
    """How many pixels the page scrolls sideways at a phone's width, and what makes it wider."""
    page.set_viewport_size(PHONE)
    settle(page)
    page.wait_for_timeout(200)
    extra = page.evaluate("() => document.documentElement.scrollWidth"
                          " - document.documentElement.clientWidth")
    return extra, page.evaluate(OVERFLOWING_JS) if extra > 0 else []


@pytest.mark.parametrize("page_file", PAGES)
def test_axe_finds_nothing_serious_and_no_page_scrolls_sideways_on_a_phone(
        browser, site_dir, site_url, axe_source, page_file):
    """In the light and in the dark theme, one after the other on one load of the page (the
    scheme is set after the page has settled either way; axe-core only reads the page); then,
    back in the light theme, the same page narrowed to a phone's width does not scroll
    sideways."""
    page, context, _ = open_page(browser, site_url + f"{page_file}.html")
    problems = {}
    try:
        settle(page)
        for scheme in SCHEMES:
            set_scheme(page, scheme)
            problems[scheme] = axe_problems(page, axe_source)
        set_scheme(page, "light")
        extra, culprits = sideways_on_a_phone(page)
    finally:
        context.close()
    for scheme, found in problems.items():
        print(f"axe-core, {page_file} ({scheme}): {len(found)} serious or critical")
        for line in found:
            print("  " + line)
    assert not any(problems.values()), "\n".join(
        f"{page_file} ({scheme}): {len(found)} serious or critical axe-core violations:\n  "
        + "\n  ".join(found) for scheme, found in problems.items() if found)
    assert extra <= 0, f"{page_file} scrolls {extra} px sideways at 390 px: {culprits}"


def test_the_course_css_honours_reduced_motion(browser, site_url, site_dir):
    """With `prefers-reduced-motion: reduce` nothing on a page slides or fades (the theme's
    sidebar and dropdowns do by default)."""
    page, context, _ = open_page(browser, site_url + "book/intro.html")
    try:
        settle(page)
        durations = {}
        for motion in ("no-preference", "reduce"):
            page.emulate_media(reduced_motion=motion)
            durations[motion] = page.evaluate("""() => {
                let longest = 0;
                for (const el of document.querySelectorAll('*')) {
                    const s = getComputedStyle(el);
                    for (const d of (s.transitionDuration + ',' + s.animationDuration).split(','))
                        longest = Math.max(longest, parseFloat(d) * (d.includes('ms') ? 1 : 1000));
                }
                return [longest, getComputedStyle(document.documentElement).scrollBehavior];
            }""")
    finally:
        context.close()
    assert durations["no-preference"][0] > 10, "nothing moves: this test checks nothing"
    longest, scroll = durations["reduce"]
    assert longest <= 10 and scroll == "auto", durations


# ---------------------------------------------------------------------------------------------
# The widgets, with the keyboard alone
# ---------------------------------------------------------------------------------------------


def open_view(browser, url: str):
    page, context, problems = open_page(browser, url)
    context.set_default_timeout(10_000)
    page.wait_for_selector(".s2sw[data-ready]")
    return page, context, problems


def tab_to(page, selector: str, limit: int = 60) -> None:
    """Press Tab until the focused element matches `selector` (keyboard only, no clicks)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => !!document.activeElement && document.activeElement.matches(s)",
                         selector):
            return
    raise AssertionError(f"Tab never reaches {selector}")


def focused(page) -> str:
    return page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)")


@pytest.mark.parametrize("name", ["stepper", "beam", "hidden"])
def test_axe_on_each_widget(browser, widget_site, axe_source, name):
    """Light, then dark, on one load of the view."""
    page, context, problems = open_view(browser, widget_site + f"{name}.html")
    found = {}
    try:
        for scheme in SCHEMES:
            set_scheme(page, scheme)
            if scheme == "dark":  # the views follow the site's and JupyterLab's dark themes
                page.evaluate("() => document.body.setAttribute('data-jp-theme-light', 'false')")
            found[scheme] = axe_problems(page, axe_source)
    finally:
        context.close()
    for scheme, lines in found.items():
        print(f"axe-core, {name} view ({scheme}): {len(lines)} serious or critical")
    assert not any(found.values()), "\n  ".join(
        f"({scheme}) {line}" for scheme, lines in found.items() for line in lines)
    assert not problems["console"], problems["console"]


def test_stepper_by_keyboard(browser, widget_site):
    page, context, _ = open_view(browser, widget_site + "stepper.html")
    try:
        shown = "() => document.querySelector('.s2s-step:not([hidden])').dataset.step"
        tab_to(page, "button.s2s-chip[data-step='1']")
        page.keyboard.press("Enter")
        assert page.evaluate(shown) == "1"
        # the next chip is a Tab (or an arrow key) away, and Space picks it
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.dataset.step") == "2", focused(page)
        page.keyboard.press(" ")
        assert page.evaluate(shown) == "2"
        assert page.get_attribute("button.s2s-chip[data-step='2']", "aria-pressed") == "true"
        # on a chip, the arrow keys step (the focus follows), Home and End go to the ends
        step = "() => document.activeElement.dataset.step"
        last = page.evaluate("() => String(document.querySelectorAll('.s2s-step').length)")
        for key, expect in (("ArrowRight", "3"), ("ArrowLeft", "2"), ("ArrowLeft", "1"),
                            ("ArrowLeft", "1"), ("End", last), ("ArrowRight", last),
                            ("Home", "1")):
            page.keyboard.press(key)
            assert page.evaluate(shown) == expect and page.evaluate(step) == expect, (
                key, page.evaluate(shown), focused(page))
            assert page.get_attribute(f"button.s2s-chip[data-step='{expect}']",
                                      "aria-pressed") == "true"
        # the slider: reached by Tab, moved by the arrow keys
        tab_to(page, "input[data-slider='step']")
        page.keyboard.press("ArrowRight")
        assert page.evaluate(shown) == "2"
        page.keyboard.press("Home")
        assert page.evaluate(shown) == "1"
        name = page.evaluate("() => document.activeElement.labels[0].textContent.trim()")
        assert name, "the slider has no label"
    finally:
        context.close()


def test_beam_by_keyboard(browser, widget_site):
    page, context, _ = open_view(browser, widget_site + "beam.html")
    try:
        scroll = page.locator(".s2s-scroll")
        assert scroll.get_attribute("tabindex") == "0"
        assert scroll.get_attribute("aria-label") or scroll.get_attribute("aria-labelledby")
        tab_to(page, "input[data-slider='step']")
        last = page.evaluate("() => +document.activeElement.max")
        page.keyboard.press("Home")
        assert page.text_content(".s2s-stepval").startswith("0 /")
        page.keyboard.press("ArrowRight")
        assert page.text_content(".s2s-stepval").startswith("1 /")
        assert "Step 1" in page.text_content(".s2s-beamout")
        page.keyboard.press("End")
        assert page.text_content(".s2s-stepval").startswith(f"{last} /")
        # the tree scrolls with the arrow keys once focused
        tab_to(page, ".s2s-scroll")
        before = scroll.evaluate("e => e.scrollLeft")
        page.keyboard.press("Home")
        if scroll.evaluate("e => e.scrollWidth > e.clientWidth"):
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            assert scroll.evaluate("e => e.scrollLeft") != before or before > 0
    finally:
        context.close()


def test_hidden_tokens_by_keyboard(browser, widget_site):
    page, context, _ = open_view(browser, widget_site + "hidden.html")
    try:
        readout = ".s2s-hidout"
        tab_to(page, ".s2s-heat:not([hidden]) .tok[data-col='1']")
        said = page.text_content(readout)
        token = page.evaluate("() => document.activeElement.lastChild.textContent")
        assert said.startswith("Step 2: the encoder reads") and token in said, (token, said)
        page.keyboard.press("Tab")  # the next token
        assert page.text_content(readout).startswith("Step 3: "), page.text_content(readout)
        # the time-step slider replays the trajectory
        tab_to(page, "input[data-slider='t']")
        page.keyboard.press("Home")
        assert page.text_content(readout).startswith("Step 1")
        page.keyboard.press("ArrowRight")
        assert page.text_content(readout).startswith("Step 2")
        # the layer buttons are buttons: Enter presses them
        tab_to(page, "[data-group='layer'] button[data-value='2']")
        page.keyboard.press("Enter")
        assert page.get_attribute("[data-group='layer'] button[data-value='2']",
                                  "aria-pressed") == "true"
    finally:
        context.close()


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours #rgb or #rrggbb."""
    def lum(h: str) -> float:
        h = "#" + "".join(x * 2 for x in h[1:]) if len(h) == 4 else h
        c = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted([lum(a), lum(b)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_matches_wcags_reference_values():
    assert round(contrast("#000", "#fff"), 1) == 21.0 and contrast("#777", "#777") == 1.0
    assert round(contrast("#767676", "#ffffff"), 2) == 4.54  # the lightest AA grey on white


def test_widget_colours_meet_wcag_aa():
    """The colours the audit flagged, as the views' CSS now sets them (#28 §2)."""
    css = (ROOT / "lib" / "widgets" / "static" / "common.css").read_text(encoding="utf-8")
    light = css.split("}", 1)[0]
    assert "--greedy: #ea580c" not in light and "--good: #16a34a" not in light

    def var(block: str, name: str) -> str:
        return block.split(f"--{name}:", 1)[1].split(";", 1)[0].strip()

    dark = css.split("html[data-theme=dark] .s2sw", 1)[1].split("}", 1)[0]
    for name in ("good", "keep", "win", "greedy", "accent"):  # white text on it
        assert contrast("#ffffff", var(light, name)) >= 4.5, name
    for name in ("win-fg", "greedy-fg", "fg", "muted"):  # text in it on the view
        assert contrast(var(light, name), var(light, "bg")) >= 4.5, name
        assert contrast(var(light, name), var(light, "panel")) >= 4.5, name
        assert contrast(var(dark, name), var(dark, "bg")) >= 4.5, f"{name} (dark)"


# ---------------------------------------------------------------------------------------------
# A checker's verdict: coloured by class, its own background, in every theme
# ---------------------------------------------------------------------------------------------

VERDICTS = {"ok": CheckResult("Pad", ok=True, messages=["ok: shapes"]),
            "todo": CheckResult("Pad", ok=False, done=False),
            "wrong": CheckResult("Pad", ok=False, messages=["pad(x) has shape (2,)"])}


def _verdict_colours(state: str, dark: bool) -> tuple[str, str]:
    """(text, background) that VERDICT_CSS gives a verdict, read from the CSS itself."""
    rules = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", VERDICT_CSS))
    selector = next(k for k in rules if (("data-theme=dark" in k) == dark)
                    and k.endswith(f".s2s-check-{state}"))
    found = dict(re.findall(r"--s2s-check-(fg|bg):(#[0-9a-f]{6})", rules[selector]))
    return found["fg"], found["bg"]


def test_checker_verdicts_are_coloured_by_class_with_aa_contrast():
    """No inline colour (a website could override it only with !important, and a notebook
    not at all): a class per verdict, and its colours reach 4.5:1 on their own background in
    the light and the dark theme, and on white (the classic Notebook's output background)."""
    for state, result in VERDICTS.items():
        markup = result._repr_html_()
        assert re.search(rf'<pre class="s2s-check s2s-check-{state}">', markup), markup
        assert "style=" not in markup and "#8a6d00" not in markup
        for dark in (False, True):
            fg, bg = _verdict_colours(state, dark)
            assert contrast(fg, bg) >= 4.5, (state, dark, fg, bg)
        assert contrast(_verdict_colours(state, False)[0], "#ffffff") >= 4.5, state
    assert "s2s-check" not in (ROOT / "book" / "_static" / "a11y.css").read_text("utf-8")
    assert "#8a6d00" not in (ROOT / "book" / "_static" / "a11y.css").read_text("utf-8")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_checker_verdicts_pass_axe_in_both_themes(browser, axe_source, scheme):
    """The three verdicts on the website's output background (grey, or the dark theme's), in
    each theme as the site and JupyterLab mark it: axe finds no contrast problem, and each is
    drawn in its own colours."""
    grey = {"light": "#f3f4f5", "dark": "#29313d"}[scheme]
    body = "".join(f'<div class="cell_output" style="background:{grey};padding:8px">'
                   f"{r._repr_html_()}</div>" for r in VERDICTS.values())
    context = browser.new_context()
    page = context.new_page()
    try:
        page.set_content(f'<!doctype html><html lang="en" data-theme="{scheme}"><head><title>'
                         f'Verdicts</title></head><body data-jp-theme-light='
                         f'"{str(scheme == "light").lower()}"><main>{body}</main></body></html>')
        found = axe_problems(page, axe_source)
        shown = page.evaluate("() => [...document.querySelectorAll('pre.s2s-check')].map(p => "
                              "[getComputedStyle(p).color, getComputedStyle(p).backgroundColor])")
    finally:
        context.close()
    assert not found, "\n  ".join(found)

    def rgb(h: str) -> str:
        return f"rgb({int(h[1:3], 16)}, {int(h[3:5], 16)}, {int(h[5:7], 16)})"
    assert shown == [[rgb(c) for c in _verdict_colours(state, scheme == "dark")]
                     for state in VERDICTS], shown


def test_axe_is_vendored_like_the_other_packages():
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert "axe-core" in package["devDependencies"]
    assert "node_modules/axe-core" in lock["packages"]

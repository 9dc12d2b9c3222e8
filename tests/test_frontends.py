"""Reader notebooks in real front ends, driven like a reader in headless Chromium.

JupyterLab 4 with ipywidgets 8 (the project's .venv) opens two reader notebooks, the classic
Notebook with ipywidgets 7.7.1 and Colab's widget packages (scripts.frontend_env) opens one.
Each is run with the front end's own "Run All", and the test reads the rendered page:

- no MyST syntax is left in the text (glue roles, directives, `:label:` lines...);
- the maths is typeset and MathJax reports no error;
- every solution is a collapsed <details> block whose summary shows one disclosure triangle
  (the classic Notebook's drawn by the notebook's own icon), and the first one opens on a click;
- every figure is embedded and drawn, with the network cut off (no website needed);
- every view ran its script, and every live view shows its ipywidgets controls and the view's
  own (step slider, toggles, Save buttons), from its first render;
- typing a new sentence and changing the beam size redraw the live view.

The reader notebooks are generated from the build (scripts/reader_notebooks.py) into
_build/frontends/notebooks/, so `make test` checks what `make notebooks` publishes. The chapters
load the cached reference model (`make reference`). Screenshots: _build/screenshots/frontends/;
the seconds of each Run All and redraw: _build/frontends/timings-<front end>.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import pytest
from conftest import ROOT, open_page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from scripts import frontend_env

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WORK = ROOT / "_build" / "frontends"
SHOTS = ROOT / "_build" / "screenshots" / "frontends"
LAB_CHAPTERS = ["encoder", "beam_search"]  # live_hidden (type a sentence), live_beam (k)
CLASSIC_CHAPTER = "beam_search"  # live_beam has both a sentence and the beam size
RUN_TIMEOUT = 420  # seconds for Run All of one chapter (each runs in well under a minute)
NEW_SENTENCE = "Tom is my friend."


def _require(message: str):
    if os.environ.get("COURSE_REQUIRE_SITE"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def reader_notebooks(reader_texts):
    """The reader notebooks of this build, as `make notebooks` writes them (conftest renders
    them once for every test that reads them)."""
    out = WORK / "notebooks"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for page, text in reader_texts[1].items():
        (out / f"{page.split('/')[-1]}.ipynb").write_text(text, encoding="utf-8")
    missing = [c for c in {*LAB_CHAPTERS, CLASSIC_CHAPTER} if not (out / f"{c}.ipynb").is_file()]
    assert not missing, f"no reader notebook for {missing} in {out}"
    return out


@pytest.fixture(scope="module")
def reference_model():
    """The chapters load the reference model; without a cached one they would train it."""
    import lib.course.reference

    if not lib.course.reference.cache_path().is_file():
        _require("the reference model is not cached; run `make reference` first")


# ---------------------------------------------------------------------------------------------
# What the page shows, read the same way in both front ends
# ---------------------------------------------------------------------------------------------

LAB_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in front
SELECTORS = {
    "lab": {"markdown": f"{LAB_PANEL} .jp-MarkdownCell .jp-RenderedMarkdown",
            "prompt": f"{LAB_PANEL} .jp-CodeCell .jp-InputArea-prompt",
            "error": f"{LAB_PANEL} .jp-OutputArea-output"
                     "[data-mime-type='application/vnd.jupyter.stderr']",
            "scroller": f"{LAB_PANEL} .jp-WindowedPanel-outer"},
    "classic": {"markdown": ".text_cell_render.rendered_html",
                "prompt": ".code_cell .input_prompt",
                "error": ".output_error",
                "scroller": "#site"},
}
# MathJax 3 (JupyterLab) and MathJax 2 (classic Notebook: HTML-CSS or CommonHTML output).
TYPESET = "mjx-container, .MathJax, .MathJax_Display, .MathJax_CHTML, .mjx-chtml"
MATH_ERRORS = "mjx-merror, .mjx-merror, .merror, .MathJax_Error, [data-mjx-error]"
# What only Jupyter Book understands: roles, directive fences, directive options.
MYST = re.compile(r"\{[a-z][a-z-]*(?::[a-z-]+)?\}`|`{3,}\{|:{3,}\{|\{glue|"
                  r"^\s*:(?:label|class|nonumber|name|enumerated|tags):", re.M)

PAGE_STATE = """(sel) => {
    const md = [...document.querySelectorAll(sel.markdown)];
    // checkVisibility: a closed <details> keeps its content laid out, but content-hidden
    const visible = e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0;
    const details = md.flatMap(m => [...m.querySelectorAll('details')]);
    return {
        markdown: md.map(m => m.innerText).join('\\n\\n'),
        markdownCells: md.length,
        prompts: [...document.querySelectorAll(sel.prompt)].map(p => p.textContent.trim()),
        errors: [...document.querySelectorAll(sel.error)].map(e => e.innerText)
                    .filter(t => t.includes('Traceback') || t.includes('Error')),
        typeset: md.reduce((n, m) => n + m.querySelectorAll('%s').length, 0),
        mathErrors: [...document.querySelectorAll('%s')].map(e => e.textContent),
        details: details.map(d => {
            const s = d.querySelector('summary'), css = s && getComputedStyle(s);
            // the disclosure triangle that says "click me": the summary's own list-item marker,
            // or the icon the reader notebook adds for the classic Notebook (drawn there only)
            const icon = s && s.querySelector('.ui-icon');
            const drawn = !!icon && icon.getBoundingClientRect().width > 0 &&
                getComputedStyle(icon).backgroundImage !== 'none';
            return {open: d.open, summary: s ? s.innerText : null,
                    native: !!css && css.display === 'list-item' && css.listStyleType !== 'none',
                    icon: drawn,
                    shown: [...d.children].filter(c => c.tagName !== 'SUMMARY').some(visible)};
        }),
        // every figure is embedded in the notebook and drawn (no file, no website needed)
        images: md.flatMap(m => [...m.querySelectorAll('img')]).map(i => ({
            src: i.getAttribute('src').slice(0, 40), drawn: i.complete && i.naturalWidth > 0})),
        views: [...document.querySelectorAll('.s2sw')].map(v => ({
            kind: v.className, ready: v.getAttribute('data-ready') === '1',
            live: !!v.closest('.widget-vbox')})),
    };
}""" % (TYPESET, MATH_ERRORS)

LIVE_VIEWS = """() => [...document.querySelectorAll('.widget-vbox')]
    .filter(box => box.querySelector('.s2sw') && !box.parentElement.closest('.widget-vbox'))
    .map((box, i) => {
        box.setAttribute('data-test-live', String(i));
        const v = box.querySelector('.s2sw'), visible = e => e && e.getClientRects().length > 0;
        const shown = s => [...v.querySelectorAll(s)].filter(visible).length;
        const pressed = v.querySelector('[data-group="layer"] button[aria-pressed="true"]');
        return {
            kind: v.className.replace(/.*s2sw-(\\w+).*/, '$1'),
            ready: v.getAttribute('data-ready') === '1',
            title: v.querySelector('h4') ? v.querySelector('h4').innerText : '',
            text: v.innerText,
            inputs: [...box.querySelectorAll('.widget-text input, .widget-textarea textarea')]
                        .filter(visible).length,
            sliders: [...box.querySelectorAll('.widget-slider')].filter(visible).length,
            pressedLayer: pressed ? +pressed.getAttribute('data-value') : null,
            save: shown('[data-save="html"]'),
            stepSlider: shown('[data-slider="step"], [data-slider="t"]'),
            pruned: shown('[data-toggle="pruned"]'),
            scoreToggle: shown('[data-group="score"] button'),
            heat: [...v.querySelectorAll('.s2s-heat')].filter(visible)
                        .map(h => [h.getAttribute('data-mode'), +h.getAttribute('data-layer')]),
            steps: shown('.s2s-step'),
        };
    })"""


class Notebook:
    """One reader notebook open in a front end: run it, read it, use its live views."""

    def __init__(self, kind: str, page, name: str):
        self.kind, self.page, self.name = kind, page, name
        self.sel = SELECTORS[kind]

    def wait_for_kernel(self) -> None:
        page = self.page
        if self.kind == "lab":
            page.wait_for_selector(self.sel["markdown"], timeout=60_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=90_000)
            time.sleep(1)
            if page.locator(".jp-Dialog").count():  # "Select Kernel", should it still ask
                page.locator(".jp-Dialog .jp-mod-accept").click()
        else:
            page.wait_for_function("() => window.Jupyter && Jupyter.notebook && "
                                   "Jupyter.notebook.kernel && Jupyter.notebook.kernel."
                                   "is_connected() && Jupyter.WidgetManager", timeout=90_000)

    def run_all(self) -> float:
        """The front end's own Run All (its menu, as a reader would); returns the seconds."""
        page, start = self.page, time.perf_counter()
        for attempt in range(4):  # a kernel still connecting drops the request: ask again
            if self.kind == "lab":
                page.get_by_role("menuitem", name="Run", exact=True).click()
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            else:
                page.click("#celllink")
                page.click("#run_all_cells")
            try:
                page.wait_for_function(
                    "(s) => [...document.querySelectorAll(s)].some(p => /[*\\d]/.test("
                    "p.textContent))", arg=self.sel["prompt"], timeout=10_000)
                break
            except PlaywrightTimeout:
                if attempt == 3:
                    raise
        # Done: nothing queued or running, and every cell ran or one failed (Run All stops).
        page.wait_for_function("""(sel) => {
            const p = [...document.querySelectorAll(sel.prompt)].map(e => e.textContent);
            return p.length && !p.some(t => t.includes('*')) &&
                (p.every(t => /\\d/.test(t)) || document.querySelector(sel.error)); }""",
                               arg=self.sel, timeout=RUN_TIMEOUT * 1000)
        self.wait_for_math()
        return time.perf_counter() - start

    def wait_for_math(self) -> None:
        if self.kind == "classic":
            self.page.evaluate("() => new Promise(done => MathJax.Hub.Queue(done))")
        else:  # MathJax 3 typesets each Markdown cell as it renders: wait until it settles
            last, stable = -1, 0
            for _ in range(60):
                n = self.page.locator(TYPESET).count()
                stable = stable + 1 if n == last else 0
                if stable >= 3:
                    break
                last = n
                time.sleep(0.5)

    def state(self) -> dict:
        return self.page.evaluate(PAGE_STATE, self.sel)

    def live_views(self) -> list[dict]:
        return self.page.evaluate(LIVE_VIEWS)

    def live(self, i: int):
        return self.page.locator(f'[data-test-live="{i}"]')

    def redraw(self, i: int, act, expect: str, timeout: float = 60) -> float:
        """Do `act()` on live view i, wait until its view shows `expect` and has started again;
        returns the seconds from the action to the started view."""
        box = self.live(i)
        start = time.perf_counter()
        act(box)
        self.page.wait_for_function(
            """([i, expect]) => {
                const v = document.querySelector(`[data-test-live="${i}"] .s2sw`);
                return v && v.getAttribute('data-ready') === '1' && v.innerText.includes(expect);
            }""", arg=[i, expect], timeout=timeout * 1000)
        return time.perf_counter() - start

    def type_sentence(self, i: int, sentence: str) -> float:
        def act(box):
            field = box.locator(".widget-text input").first
            field.fill(sentence)
            field.press("Enter")
        return self.redraw(i, act, f"«{sentence}»")

    def set_slider(self, i: int, label: str, value: int, expect: str) -> float:
        """Type `value` into the readout of the slider labelled `label` (ipywidgets 7 and 8
        both take Enter there), as a reader who wants an exact value does."""
        def act(box):
            slider = box.locator(".widget-slider", has=self.page.locator(
                ".widget-label", has_text=label)).first
            readout = slider.locator(".widget-readout")
            readout.click()
            self.page.keyboard.press("Control+A")
            self.page.keyboard.type(str(value))
            self.page.keyboard.press("Enter")
        return self.redraw(i, act, expect)

    def open_first_solution(self) -> None:
        """A reader clicks the first solution's summary: the solution shows, and hides again."""
        details = self.page.locator(f"{self.sel['markdown']} details").first
        cell = details.locator("xpath=ancestor::*[contains(@class, 'Cell') or "
                               "contains(@class, 'cell')][1]")
        self.shoot("solution", cell)
        details.locator("summary").click()
        assert details.evaluate("d => d.open && [...d.children].some(c => c.tagName !== "
                                "'SUMMARY' && c.checkVisibility())"), "a solution does not open"
        self.shoot("solution-open", cell)
        details.locator("summary").click()
        assert not details.evaluate("d => d.open")

    def shoot(self, name: str, locator=None) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{self.kind}-{self.name}-{name}.png"
        if locator is None:
            self.page.screenshot(path=str(path))
        else:  # the whole element: a taller window if it needs one, the element in its middle
            size = self.page.viewport_size
            height = locator.evaluate("e => e.getBoundingClientRect().height")
            if height + 300 > size["height"]:
                self.page.set_viewport_size({"width": size["width"], "height": int(height) + 400})
            locator.evaluate("e => e.scrollIntoView({block: 'center'})")
            locator.screenshot(path=str(path))
            self.page.set_viewport_size(size)

    def shoot_numbers(self) -> None:
        """The first paragraph whose text carries a measured number (a glued value)."""
        cells = self.page.locator(self.sel["markdown"], has_text=re.compile(
            r"\d\.\d+(?:e[−-]\d+|\s*%| s\b)|\d{2,}\.\d"))
        if cells.count():
            self.shoot("prose-numbers", cells.first)

    def scroll_to_top(self) -> None:
        self.page.evaluate("(s) => { const e = document.querySelector(s); "
                           "if (e) e.scrollTop = 0; }", self.sel["scroller"])


# ---------------------------------------------------------------------------------------------
# The checks, shared by both front ends
# ---------------------------------------------------------------------------------------------


def check_page(nb: Notebook) -> dict:
    """Everything a reader sees after Run All, before touching a control."""
    state = nb.state()
    where = f"{nb.kind}/{nb.name}"
    assert not state["errors"], f"{where}: a cell failed:\n{state['errors'][0][-3000:]}"
    assert state["prompts"] and all(re.search(r"\d", p) for p in state["prompts"]), (
        f"{where}: not every code cell ran: {state['prompts']}")
    assert state["markdownCells"], f"{where}: no Markdown cell rendered"
    raw = sorted({m.group(0) for m in MYST.finditer(state["markdown"])})
    assert not raw, f"{where}: MyST syntax left in the text: {raw}"
    for delimiter in ("$$", "\\(", "\\[", "\\begin{"):
        assert delimiter not in state["markdown"], f"{where}: untypeset maths ({delimiter})"
    assert state["typeset"] > 0, f"{where}: no maths typeset"
    assert not state["mathErrors"], f"{where}: MathJax errors: {state['mathErrors'][:5]}"
    assert state["details"], f"{where}: no collapsed solution (a <details> block)"
    for d in state["details"]:
        assert not d["open"] and not d["shown"], f"{where}: a solution is open: {d}"
        assert d["summary"], f"{where}: a <details> block without its summary line"
        assert d["native"] != d["icon"], (
            f"{where}: the summary {d['summary']!r} shows "
            f"{'two disclosure triangles' if d['native'] else 'no disclosure triangle'} "
            "(the classic Notebook styles <summary> display: block; the reader notebook's "
            "jQuery UI icon draws one there)")
    assert state["images"], f"{where}: no figure"
    for image in state["images"]:
        assert image["src"].startswith("data:image/") and image["drawn"], (
            f"{where}: a figure is not embedded and drawn: {image}")
    not_started = [v["kind"] for v in state["views"] if not v["ready"]]
    assert state["views"] and not not_started, f"{where}: views whose script did not run: " \
                                               f"{not_started}"
    views = nb.live_views()
    assert views, f"{where}: no live view"
    for i, v in enumerate(views):
        check_live(v, f"{where} live view {i} ({v['kind']})")
    return {"state": state, "views": views}


def check_live(v: dict, where: str) -> None:
    """A live view right after its first render: its controls and its view's own."""
    assert v["ready"], f"{where}: its script did not run on the first render"
    assert v["inputs"] >= 1, f"{where}: no sentence field"
    assert v["save"] == 1, f"{where}: no Save buttons"
    if v["kind"] == "beam":
        assert v["sliders"] >= 3 and v["stepSlider"] == 1, f"{where}: sliders missing: {v}"
        assert v["pruned"] == 1 and v["scoreToggle"] == 2, f"{where}: toggles missing: {v}"
    elif v["kind"] == "hidden":
        assert v["stepSlider"] == 1, f"{where}: no time-step slider"
        assert len(v["heat"]) == 1, f"{where}: {len(v['heat'])} heatmaps shown, not one"
        assert v["heat"][0][1] == v["pressedLayer"], (
            f"{where}: the heatmap shows layer {v['heat'][0][1]}, the pressed layer button "
            f"says {v['pressedLayer']}")
    elif v["kind"] == "stepper":
        assert v["stepSlider"] == 1 and v["steps"] == 1, f"{where}: steps stacked: {v}"


def first_live(nb: Notebook, kind: str) -> int:
    views = nb.live_views()
    found = [i for i, v in enumerate(views) if v["kind"] == kind]
    assert found, f"{nb.kind}/{nb.name}: no live {kind} view in {[v['kind'] for v in views]}"
    return found[0]


def exercise(nb: Notebook) -> dict[str, float]:
    """Type a sentence (and, in the beam chapter, change k); returns the redraw times."""
    times = {}
    if nb.name == "beam_search":
        i = first_live(nb, "beam")
        nb.shoot("live-beam", nb.live(i))
        times["beam size"] = nb.set_slider(i, "beam size", 5, "keeps the 5 best")
        times["sentence"] = nb.type_sentence(i, NEW_SENTENCE)
        after = nb.live_views()[i]
        assert "keeps the 5 best" in after["text"], "the new sentence lost the beam size"
        check_live(after, f"{nb.kind}/{nb.name} live beam after the changes")
        nb.shoot("live-beam-updated", nb.live(i))
    else:
        i = first_live(nb, "hidden")
        nb.shoot("live-hidden", nb.live(i))
        times["sentence"] = nb.type_sentence(i, NEW_SENTENCE)
        check_live(nb.live_views()[i], f"{nb.kind}/{nb.name} live hidden after typing")
        nb.shoot("live-hidden-updated", nb.live(i))
    return times


def open_notebook(browser, server, kind: str, name: str):
    # offline: the figures are in the notebook, so a request to the website is an error
    page, context, problems = open_page(browser, server.url(f"{name}.ipynb"))
    context.set_default_timeout(30_000)
    page.set_viewport_size({"width": 1280, "height": 1400})  # a live view fits in a shot
    nb = Notebook(kind, page, name)
    nb.wait_for_kernel()
    return nb, context, problems


def check_clean(problems: dict, where: str) -> None:
    assert not problems["external"], f"{where}: requests left 127.0.0.1: {problems['external']}"
    widget_errors = [m for m in problems["console"]
                     if re.search(r"widget|model|deserializ|s2s", m, re.I)]
    assert not widget_errors, f"{where}: widget errors in the console: {widget_errors}"


def run_in(browser, kind: str, env, chapters: list[str], reader_notebooks):
    folder = WORK / f"run-{kind}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in chapters:
        shutil.copy(reader_notebooks / f"{name}.ipynb", folder / f"{name}.ipynb")
    report = {}
    with frontend_env.serve(kind, env, folder, WORK / f"home-{kind}") as server:
        for name in chapters:
            nb, context, problems = open_notebook(browser, server, kind, name)
            try:
                seconds = nb.run_all()
                nb.scroll_to_top()
                nb.shoot("top")
                check_page(nb)
                nb.shoot_numbers()
                nb.open_first_solution()
                report[name] = {"run all": round(seconds, 1), **exercise(nb)}
                check_clean(problems, f"{kind}/{name}")
                (WORK / f"timings-{kind}.json").write_text(json.dumps(report, indent=1),
                                                           encoding="utf-8")
            except BaseException:
                nb.shoot("failure")  # what the page showed when the test gave up
                raise
            finally:
                context.close()
    return report


def test_jupyterlab_runs_reader_notebooks(browser, reader_notebooks,
                                          reference_model):
    """(c) JupyterLab 4 with ipywidgets 8: two reader notebooks, Run All, then the live views."""
    env = frontend_env.lab_env()
    report = run_in(browser, "lab", env, LAB_CHAPTERS, reader_notebooks)
    slow = {f"{c}/{k}": s for c, r in report.items() for k, s in r.items()
            if k != "run all" and s > 15}
    assert not slow, f"live views took over 15 s to redraw: {slow}"


def test_classic_notebook_with_colabs_widgets(browser, reader_notebooks,
                                              reference_model):
    """(d) The classic Notebook 6.5 with ipywidgets 7.7.1 and Colab's widgetsnbextension."""
    env = frontend_env.classic_env()
    versions = frontend_env.installed_versions(env)
    assert versions["ipywidgets"] == "7.7.1" and versions["notebook"].startswith("6.5")
    report = run_in(browser, "classic", env, [CLASSIC_CHAPTER], reader_notebooks)
    assert report[CLASSIC_CHAPTER]["beam size"] < 15

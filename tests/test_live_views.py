"""The chapters' live views: a reader types a sentence into a view on the website, and the
Playground's engine (web/playground/playground.js, the exported int8 model in ONNX Runtime Web)
recomputes the view's data in the browser for the view's own drawing (web/playground/live.js).

Oracles: lib's views of the same sentence with the page's int8 weights
(`lib.course.playground.page_model`): `capture_hidden` and HiddenView's data, `capture_steps`
and `stepper_data`, `capture_beam` and `beam_data`, `capture_attention` and `attention_data`;
`Seq2Seq.prepare`'s refusals. The browser tests run against the built site when its chapter
pages load the current live.js (`make test`), else against chapter pages assembled here from
views that Python renders (`playground_site.live_site`), so they run before the site is built.
"""

from __future__ import annotations

import base64
import os
import re

import numpy as np
import pytest
import test_playground
from conftest import ROOT, SITE, open_page, serve_directory

from lib.data import tokenize
from scripts import playground_site

SHOTS = ROOT / "_build" / "screenshots" / "live"
LIVE_JS = ROOT / "web" / "playground" / "live.js"
PARITY_SENTENCES = 200  # held-out sentences each view's browser data is compared on
LOGP_TOL = 1e-4  # log P in the browser against lib on the same int8 weights
WEIGHT_TOL = 2e-4  # attention weights, written to 4 significant digits by both
XY_TOL = 2e-3  # PCA coordinates, relative to the largest
TOP_K = 6  # the decoder chapter's stepper
BEAM = 3  # the beam search chapter's explorer
UNITS = 32  # the decoder chapter's hidden-state view
# A sentence a reader might type on each page (none of them a chapter's own).
TYPED = {"encoder": "Tom is reading a book in the garden.", "decoder": "Where is my umbrella?",
         "beam_search": "She wants to go to the park with her friends.",
         "attention": "We are tired. Tom is hungry."}
UNKNOWN = "The xyzzy is cold."
# The Playground's fixtures: its export, the page's int8 models, the held-out sentences.
export_dir = test_playground.export_dir
attention_dir = test_playground.attention_dir
attention_model = test_playground.attention_model
page_model = test_playground.page_model
held_out = test_playground.held_out


# ---------------------------------------------------------------------------------------------
# The pages (no browser)
# ---------------------------------------------------------------------------------------------


def test_live_script_goes_only_into_pages_with_live_views(tmp_path):
    """add_live_script: once, deferred, by a path relative to each page, and only where a view
    it makes live is (not the Playground, not a page whose only view is a map or BLEU)."""
    site = tmp_path / "site"
    pages = {"book/encoder.html": '<div class="s2sw s2sw-hidden" id="a">',
             "book/bleu.html": '<div class="s2sw s2sw-bleu" id="b">',
             "book/playground.html": '<div class="s2sw s2sw-beam" id="c">',
             "index.html": '<div class="s2sw s2sw-stepper" id="d">',
             "_static/x.html": '<div class="s2sw s2sw-beam" id="e">'}
    for rel, body in pages.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(f"<html><head><title>t</title></head><body>{body}</body></html>",
                                encoding="utf-8")
    got = playground_site.add_live_script(site)
    assert got == [site / "book/encoder.html", site / "index.html"]
    assert playground_site.add_live_script(site) == got  # a second run adds nothing
    tag = '<script defer="defer" src="../_static/playground/live.js"></script>\n</head>'
    text = (site / "book/encoder.html").read_text(encoding="utf-8")
    assert text.count("live.js") == 1 and tag in text
    assert '<script defer="defer" src="_static/playground/live.js">' in \
        (site / "index.html").read_text(encoding="utf-8")
    for rel in ("book/bleu.html", "book/playground.html", "_static/x.html"):
        assert "live.js" not in (site / rel).read_text(encoding="utf-8"), rel


def test_live_js_draws_each_view_with_its_own_scripts(tmp_path):
    """live.js loads files the site has (the widgets' scripts that scripts/playground_site.py
    copies, then playground.js), and draws each view with the drawings its Python View names."""
    import json

    from lib.widgets import AttentionView, BeamView, HiddenView, StepperView

    script = LIVE_JS.read_text(encoding="utf-8")
    files = re.findall(r'"([\w/]+\.js)"', script.split("var SCRIPTS = ", 1)[1].split(";", 1)[0])
    assert files[-1] == "playground.js" and files[0] == "widgets/common.js"
    shipped = {f"widgets/{name}" for name in playground_site.WIDGET_FILES} | \
        set(playground_site.PAGE_FILES)
    assert set(files) <= shipped, set(files) - shipped
    kinds = script.split("var KINDS = ", 1)[1].split("};", 1)[0]
    names = {kind: json.loads(drawn) for kind, drawn in
             re.findall(r'(\w+): \{model: "\w+", names: (\[[^\]]*\])', kinds)}
    views = {v.kind: v for v in (HiddenView, StepperView, BeamView, AttentionView)}
    assert names == {kind: list(view.scripts) for kind, view in views.items()}
    for kind in views:
        assert f"s2sw s2sw-{kind}" in playground_site.LIVE_VIEWS
        assert f"widgets/{kind}.js" in files


def test_the_hidden_views_map_carries_its_pca():
    """The map inside a hidden-state view carries its PCA, so the website places a typed
    sentence on it: projected with it, the view's own context lands on the view's mark."""
    from lib.experiments.toy import tiny_model
    from lib.widgets import capture_hidden, hidden_state_explorer

    model = tiny_model(seed=3)
    words = [w for w in model.src_vocab.itos if not w.startswith("<")]
    sentences = [" ".join(words[i:i + 3]) for i in range(len(words) - 2)]
    view = hidden_state_explorer(model, sentences[0], map_sentences=sentences)
    pca = view.data["map"]["pca"]
    enc, _ = capture_hidden(model, sentences[0]).tensors()  # (L, S, H)
    layer = view.data["map"]["layer"]
    xy = (enc[layer - 1, -1].double().numpy() - np.array(pca["mean"])) @ \
        np.array(pca["components"]).T
    np.testing.assert_allclose(xy, view.data["map"]["marks"][0]["xy"], rtol=1e-3, atol=1e-5)
    assert hidden_state_explorer(model, sentences[0]).data["map"] is None  # no map, no PCA


# ---------------------------------------------------------------------------------------------
# The pages in headless Chromium
# ---------------------------------------------------------------------------------------------


def _site_is_fresh() -> bool:
    """Whether the built site's chapter pages load the current live.js."""
    built = SITE / "_static" / "playground" / "live.js"
    encoder = SITE / "book" / "encoder.html"
    return built.is_file() and built.read_bytes() == LIVE_JS.read_bytes() and \
        encoder.is_file() and "playground/live.js" in encoder.read_text(encoding="utf-8")


def _rendered_pages(page_model, attention_model) -> dict[str, list[str]]:
    """The chapters' live views as the chapters call them, rendered by Python for the mini
    site (with the page's int8 models), and a toy table's beam, which gets no text box."""
    from lib.course.memo import load_corpus
    from lib.experiments.toy import TableModel, walkthrough_table
    from lib.widgets import (
        attention_explorer,
        beam_explorer,
        decoder_stepper,
        hidden_state_explorer,
    )

    test = load_corpus().split.test
    short = next(en for en, _ in test if len(tokenize(en)) == 8)
    return {
        "encoder": [hidden_state_explorer(page_model, "I'm very cold.",
                                          map_sentences=[en for en, _ in test[:300]]).to_html()],
        "decoder": [decoder_stepper(page_model, "I am cold.", top_k=TOP_K).to_html(),
                    hidden_state_explorer(page_model, "I am cold.", mode="dec",
                                          units=UNITS).to_html()],
        "beam_search": [beam_explorer(TableModel(walkthrough_table(), max_len=3), beam_size=2,
                                      alpha=1.0, max_len=3).to_html(),
                        beam_explorer(page_model, "Where is the station?",
                                      beam_size=BEAM).to_html()],
        "attention": [attention_explorer(attention_model, short).to_html()],
    }


@pytest.fixture(scope="module")
def live_url(request, export_dir, tmp_path_factory):
    """The site's base URL: the built site if its chapter pages are current, else chapter
    pages assembled here."""
    if _site_is_fresh():
        root = SITE
    elif os.environ.get("COURSE_REQUIRE_SITE"):
        pytest.fail(f"the built site's chapter pages do not load the current live.js ({SITE})")
    else:
        views = _rendered_pages(request.getfixturevalue("page_model"),
                                request.getfixturevalue("attention_model"))
        root = playground_site.live_site(tmp_path_factory.mktemp("live-site"), views,
                                         export_dir)
    server, url = serve_directory(root)
    yield url
    server.shutdown()
    server.server_close()


MODEL_FILES = "performance.getEntriesByType('resource').map(e => e.name)" \
    ".filter(n => /\\.(onnx|wasm)|playground\\.js|vocab\\.json/.test(n))"


def _open(browser, live_url, chapter: str, width: int | None = None):
    """A chapter page, its forms set up; (page, context, problems)."""
    page, context, problems = open_page(browser, f"{live_url}book/{chapter}.html")
    if width:
        page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_function("window.S2SLive !== undefined")
    return page, context, problems


def _type(page, form: str, text: str, **fields) -> str:
    """Type `text` (and `fields`) into the form `form` (a selector) and press Enter; returns
    the form's state once it has drawn or refused."""
    page.fill(f"{form} input[name=sentence]", text)
    for name, value in fields.items():
        page.fill(f"{form} input[name={name}]", str(value))
    page.press(f"{form} input[name=sentence]", "Enter")
    page.wait_for_function("(f) => ['done', 'error'].includes(document.querySelector(f)"
                           ".dataset.state)", arg=form, timeout=120_000)
    return page.get_attribute(form, "data-state")


def _view(form: str) -> str:
    """The selector of the view under a form."""
    return f"{form} + .s2sw"


def _shot(page, form: str, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("(f) => document.querySelector(f).scrollIntoView()", form)
    box = page.evaluate("""(f) => { const a = document.querySelector(f).getBoundingClientRect(),
        b = document.querySelector(f + ' + .s2sw').getBoundingClientRect();
        return {x: Math.max(0, a.x - 4), y: a.y + window.scrollY - 4, width: a.width + 8,
                height: b.bottom - a.top + 8}; }""", form)
    page.screenshot(path=str(SHOTS / f"{name}.png"), clip=box, full_page=True)


# The drawn structure of each view inside `root`: what a reader sees, numbers apart (those are
# compared with a tolerance: the browser's int8 model and lib's agree to about 1e-5 in log P,
# which can move a rounded last digit).
STEPPER = """(root) => ({
  chips: [...root.querySelectorAll('.s2s-chip')].map(c => [c.className, c.firstChild.textContent]),
  steps: [...root.querySelectorAll('.s2s-step')].map(s => [s.querySelector('h5').textContent
    .replace(/= [−\\d.]+/, '= x'), [...s.querySelectorAll('.w')].map(w => w.textContent)]),
  p: [...root.querySelectorAll('.s2s-step .p')].map(p => parseFloat(p.textContent)),
  slider: root.querySelector('[data-slider]').outerHTML,
  summary: root.querySelector('.s2s-summary').textContent
    .replace(/tokens = [−\\d.]+/, 'tokens = x'),
})"""
ATTENTION = """(root) => ({
  head: root.querySelector('.s2s-head h4').textContent,
  cols: [...root.querySelectorAll('th.src')].map(t => [t.className, t.textContent]),
  rows: [...root.querySelectorAll('tr[data-step] th')].map(t => t.textContent),
  cells: [...root.querySelectorAll('tr[data-step] td')].map(t => parseFloat(t.textContent)),
  summary: root.querySelector('.s2s-summary').textContent,
})"""


def _static_view(page, view) -> str:
    """Insert Python's rendering of a view (View.to_html) into the page, as a notebook output
    arrives (live.js has started, so it gets no form); returns the selector of its view."""
    page.evaluate("""(html) => { const div = document.createElement('div');
        div.id = 'static-view'; div.innerHTML = html; document.body.appendChild(div); }""",
                  view.to_html())
    page.wait_for_selector("#static-view .s2sw[data-ready]")
    return "#static-view .s2sw"


def _drawn(page, script: str, selector: str):
    return page.evaluate(script, page.query_selector(selector))


def _same(ours: dict, theirs: dict, numbers: str, tol: float) -> None:
    """The two drawings have the same structure, and their `numbers` agree within `tol`."""
    assert {k: v for k, v in ours.items() if k != numbers} == \
        {k: v for k, v in theirs.items() if k != numbers}
    assert ours[numbers] == pytest.approx(theirs[numbers], abs=tol)


@pytest.mark.slow
@pytest.mark.browser
def test_encoder_hidden_view_redraws_for_a_typed_sentence(browser, live_url,
                                                          page_model):
    """The encoder page's view: its form, nothing of the model until the reader types, then the
    view redrawn for the typed sentence as lib draws it, placed on the build's map."""
    from test_playground import HIDDEN

    from lib.widgets import HiddenView, capture_hidden

    page, context, problems = _open(browser, live_url, "encoder")
    form = ".s2s-live[data-kind=hidden]"
    assert page.locator(form).count() == 1
    assert page.evaluate(MODEL_FILES) == []  # nothing of the model before the reader asks
    built = page.locator(_view(form) + " .s2s-head h4").inner_text()
    assert f"«{page.input_value(form + ' input[name=sentence]')}»" in built
    sentence = TYPED["encoder"]
    assert _type(page, form, sentence) == "done"
    assert page.evaluate(MODEL_FILES)  # loaded on demand
    view = _view(form)
    assert page.get_attribute(view, "data-live") == "reader"
    ours = _drawn(page, HIDDEN, view)
    trace = capture_hidden(page_model, sentence)
    theirs = _drawn(page, HIDDEN, _static_view(page, HiddenView(trace)))
    assert ours == theirs and f"«{sentence}»" in ours["head"][0]
    L, S, T = page_model.config.num_layers, len(trace.source), len(trace.output)
    assert page.locator(view + " .s2s-traj .pt").count() == L * (S + T)
    # the build's map, with the typed sentence's context placed on it by the map's own PCA
    built = page.evaluate("(f) => JSON.parse(document.getElementById("
                          "document.querySelector(f).id + '-data').textContent).map", view)
    live = page.evaluate("window.S2SLive.views.find(v => v.kind === 'hidden').data.map")
    if built.get("pca"):  # a site built before the map carried its PCA: no map once redrawn
        enc, _ = trace.tensors()  # (L, S, H)
        want = (enc[built["layer"] - 1, -1].double().numpy() - np.array(built["pca"]["mean"])) \
            @ np.array(built["pca"]["components"]).T  # (2,)
        assert [m["label"] for m in live["marks"]] == [f"«{sentence}»"]
        np.testing.assert_allclose(live["marks"][0]["xy"], want, atol=1e-3)
        assert live["xy"] == built["xy"] and page.locator(view + " .s2s-map").count() == 1
    else:
        assert live is None
    status = page.locator(f"{form} .s2s-live-status").inner_text()
    assert status.startswith("Drawn for your sentence in ") and "in this browser" in status
    page.evaluate("document.getElementById('static-view').remove()")
    _shot(page, form, "encoder_hidden")
    context.close()
    assert not problems["console"] and not problems["external"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_decoder_stepper_redraws_with_a_forced_prefix(browser, live_url, page_model):
    """The decoder page's stepper: a typed sentence and a forced French prefix give lib's
    steps (tokens, top-k, forced chips, summary)."""
    from lib.widgets import StepperView, capture_steps

    page, context, problems = _open(browser, live_url, "decoder")
    assert page.locator(".s2s-live[data-kind=hidden]").count() == 1
    form = ".s2s-live[data-kind=stepper] >> nth=0"
    css = "document.querySelector('.s2s-live[data-kind=stepper]')"
    top_k = page.evaluate(f"JSON.parse(document.getElementById({css}.nextElementSibling.id + "
                          "'-data').textContent).steps[0].top.length")
    sentence, prefix = TYPED["decoder"], "Où est"
    page.fill(f"{form} >> input[name=sentence]", sentence)
    page.fill(f"{form} >> input[name=prefix]", prefix)
    page.press(f"{form} >> input[name=sentence]", "Enter")
    page.wait_for_function(f"{css}.dataset.state === 'done'", timeout=120_000)
    view = ".s2s-live[data-kind=stepper] + .s2sw"
    ours = _drawn(page, STEPPER, view)
    trace = capture_steps(page_model, sentence, prefix, top_k=top_k)
    theirs = _drawn(page, STEPPER, _static_view(page, StepperView(trace)))
    _same(ours, theirs, "p", 0.11)
    assert [c[1] for c in ours["chips"]][1:] == [s["token"] for s in trace.steps]
    assert sum("forced" in c[0].split() for c in ours["chips"]) == len(tokenize(prefix))
    page.evaluate("document.getElementById('static-view').remove()")
    _shot(page, ".s2s-live[data-kind=stepper]", "decoder_stepper")
    context.close()
    assert not problems["console"] and not problems["external"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_beam_view_redraws_for_a_typed_sentence_and_beam_size(browser, live_url,
                                                              page_model):
    """The beam search page: the toy table's tree has no form; the trained model's redraws for
    a typed sentence and beam size as lib's beam_explorer draws it."""
    from test_playground import TREE

    from lib.widgets import BeamView, capture_beam

    page, context, problems = _open(browser, live_url, "beam_search")
    form = ".s2s-live[data-kind=beam]"
    assert page.locator(form).count() == 1
    assert page.locator(".s2sw-out > .s2sw-beam").count() == 2
    sentence, k = TYPED["beam_search"], 4
    assert _type(page, form, sentence, k=k) == "done"
    ours = _drawn(page, TREE, _view(form))
    cap = capture_beam(page_model, sentence, beam_size=k)
    theirs = _drawn(page, TREE, _static_view(page, BeamView(cap)))
    assert len(ours["nodes"]) == len(theirs["nodes"]) >= 2
    for a, b in zip(ours["nodes"], theirs["nodes"]):  # class, step, place, token, log P
        assert a[:4] == b[:4] and a[4] == pytest.approx(b[4], abs=0.011)
    assert {k: v for k, v in ours.items() if k != "nodes"} == \
        {k: v for k, v in theirs.items() if k != "nodes"}
    assert cap.translation in page.locator(_view(form)).inner_text()
    page.evaluate("document.getElementById('static-view').remove()")
    _shot(page, form, "beam")
    # once loaded, offline: another sentence and beam size redraw with nothing fetched
    context.set_offline(True)
    try:
        assert _type(page, form, TYPED["encoder"], k=2) == "done"
    finally:
        context.set_offline(False)
    assert f"«{TYPED['encoder']}»" in page.locator(_view(form) + " .s2s-head h4").inner_text()
    context.close()
    assert not problems["console"] and not problems["external"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_attention_view_redraws_for_a_typed_sentence(browser, live_url,
                                                     attention_model):
    """The attention page's view runs the attention model: lib's weights for the typed
    sentence, drawn by the view's own script."""
    from lib.widgets import AttentionView, capture_attention

    page, context, problems = _open(browser, live_url, "attention")
    form = ".s2s-live[data-kind=attention]"
    assert page.locator(form).count() == 1
    sentence = TYPED["attention"]
    assert _type(page, form, sentence) == "done"
    assert "attention model" in page.locator(f"{form} .s2s-live-status").inner_text()
    ours = _drawn(page, ATTENTION, _view(form))
    theirs = _drawn(page, ATTENTION, _static_view(page, AttentionView(
        capture_attention(attention_model, sentence))))
    _same(ours, theirs, "cells", 0.011)
    assert [c[1] for c in ours["cols"]] == tokenize(sentence)
    page.evaluate("document.getElementById('static-view').remove()")
    _shot(page, form, "attention")
    context.close()
    assert not problems["console"] and not problems["external"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_bad_input_is_said_in_the_view(browser, live_url, page_model):
    """Empty and too long sentences are refused with lib's reasons and the view keeps its
    drawing; unknown words are listed as read as <unk> and marked in the view; a forced prefix
    as long as the length cap is refused. At 390 px the form still fits the page."""
    page, context, problems = _open(browser, live_url, "decoder", width=390)
    form = ".s2s-live[data-kind=hidden]"
    view = _view(form)
    before = page.locator(view).inner_html()
    assert _type(page, form, "   ") == "error"
    error = page.locator(f"{form} .s2s-live-error")
    assert error.is_visible() and "is empty" in error.inner_text()
    with pytest.raises(ValueError, match="is empty"):
        page_model.prepare(["   "])
    assert page.locator(view).inner_html() == before  # the build's drawing stays
    status = page.locator(f"{form} .s2s-live-status").inner_text()
    assert "still shows the build's sentence" in status
    long = " ".join(["word"] * (page_model.config.max_src_len + 1))
    with pytest.raises(ValueError) as lib_error:
        page_model.prepare([long])
    why = str(lib_error.value).split("sentence 0 ", 1)[1]  # "has 41 tokens, more than ..."
    assert _type(page, form, long) == "error"
    assert why.split(".")[0] in error.inner_text()
    assert _type(page, form, UNKNOWN) == "done"
    assert error.is_hidden()
    unknown = [t for t in tokenize(UNKNOWN) if t not in page_model.src_vocab.stoi]
    assert unknown and page.locator(f"{form} .s2s-live-read .tok.unk").all_inner_texts() == \
        [f"{t} → <unk>" for t in unknown]
    L = page_model.config.num_layers  # the encoder's panels mark them as the kernel view does
    marked = page.locator(f'{view} .s2s-heat[data-key="enc{L}"] .tok.unk').all_text_contents()
    assert len(marked) == len(unknown)  # each: its tooltip, then the token
    assert all(m == f"{t}: not in the vocabulary, read as <unk>{t}"
               for m, t in zip(marked, unknown))
    stepper = ".s2s-live[data-kind=stepper] >> nth=0"
    cap = page_model.config.max_tgt_len
    page.fill(f"{stepper} >> input[name=prefix]", " ".join(["oui"] * cap))
    page.press(f"{stepper} >> input[name=sentence]", "Enter")
    page.wait_for_function("document.querySelector('.s2s-live[data-kind=stepper]').dataset.state"
                           " === 'error'", timeout=120_000)
    refused = page.locator(f"{stepper} >> .s2s-live-error").inner_text()
    assert "leaves no step to continue" in refused
    widths = page.evaluate("[document.documentElement.scrollWidth, "
                           "document.querySelector('.s2s-live').getBoundingClientRect().right]")
    assert widths[1] <= 390, widths
    _shot(page, form, "bad_input_390px")
    context.close()
    assert not problems["console"] and not problems["external"], problems


# ---------------------------------------------------------------------------------------------
# Parity with lib on held-out sentences
# ---------------------------------------------------------------------------------------------

PARITY_RUN = """async ([sentences, topK, k, alpha, margin]) => {
  const P = window.S2SPlayground, out = [];
  await P.use('reference');
  for (const s of sentences) {
    out.push({hidden: await P.hiddenView(s, {units: 48}), stepper: await P.stepperView(s, '', topK),
              beam: await P.beamView(s, k, alpha, margin)});
  }
  return out;
}"""
ATTENTION_RUN = """async (sentences) => {
  const P = window.S2SPlayground, out = [];
  await P.use('attention');
  for (const s of sentences) out.push(await P.attentionView(s));
  return out;
}"""


def _int8(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype=np.int8).astype(int)


@pytest.fixture(scope="module")
def engine_page(browser, live_url):
    """A chapter page with the engine loaded (as the first typed sentence loads it)."""
    page, context, problems = _open(browser, live_url, "decoder")
    page.evaluate("window.S2SLive.engine().then(() => true)")
    yield page, problems
    context.close()


@pytest.mark.slow
@pytest.mark.browser
def test_views_data_match_lib_on_held_out_sentences(engine_page, page_model, held_out):
    """For PARITY_SENTENCES held-out sentences, each live view's data from the browser against
    lib's for the same int8 weights: the hidden view's tokens, units and values (int8 steps) and
    PCA, the stepper's tokens, top-k and log P, the beam's every node and its winner."""
    from lib.search import DEFAULT_ALPHA, DEFAULT_MARGIN
    from lib.widgets import capture_beam, capture_hidden, capture_steps
    from lib.widgets.beam import beam_data
    from lib.widgets.hidden import HiddenView
    from lib.widgets.stepper import stepper_data

    page, problems = engine_page
    sentences = [en for en, _ in held_out[:PARITY_SENTENCES]]
    assert len(sentences) == PARITY_SENTENCES
    results = []
    for i in range(0, len(sentences), 25):
        results += page.evaluate(PARITY_RUN, [sentences[i:i + 25], TOP_K, BEAM, DEFAULT_ALPHA,
                                              DEFAULT_MARGIN])
    worst = {"logp": 0.0, "value steps": 0, "xy": 0.0, "raw": 0.0}
    units_swapped = 0
    for s, r in zip(sentences, results):
        hidden = HiddenView(capture_hidden(page_model, s)).data
        assert r["hidden"]["source"] == hidden["source"] and \
            r["hidden"]["output"] == hidden["output"], s
        for key, panel in hidden["panels"].items():
            ours = r["hidden"]["panels"][key]
            shared = sorted(set(panel["units"]) & set(ours["units"]))
            units_swapped += len(panel["units"]) - len(shared)  # near-ties at the edge
            a = _int8(ours["vals"]).reshape(-1, len(ours["units"]))
            b = _int8(panel["vals"]).reshape(-1, len(panel["units"]))
            for u in shared:
                diff = np.abs(a[:, ours["units"].index(u)] - b[:, panel["units"].index(u)])
                worst["value steps"] = max(worst["value steps"], int(diff.max()))
        for mine, lib_ in zip(r["hidden"]["trajectories"], hidden["trajectories"]):
            xy = np.array(lib_["xy"])
            worst["xy"] = max(worst["xy"], float(np.abs(np.array(mine["xy"]) - xy).max() /
                                               max(np.abs(xy).max(), 1e-9)))
        steps = stepper_data(capture_steps(page_model, s, top_k=TOP_K))
        ours = r["stepper"]
        assert [x["token"] for x in ours["steps"]] == [x["token"] for x in steps["steps"]], s
        assert (ours["translation"], ours["greedy"], ours["capped"], ours["start"]) == \
            (steps["translation"], steps["greedy"], steps["capped"], steps["start"]), s
        for a, b in zip(ours["steps"], steps["steps"]):
            assert (a["input"], a["rank"], a["forced"]) == (b["input"], b["rank"], b["forced"]), s
            lp_a, lp_b = np.array([t[1] for t in a["top"]]), np.array([t[1] for t in b["top"]])
            worst["logp"] = max(worst["logp"], abs(a["logp"] - b["logp"]),
                                float(np.abs(lp_a - lp_b).max()))
            if [t[0] for t in a["top"]] != [t[0] for t in b["top"]]:  # only near-ties may swap
                order = np.argsort(-lp_b, kind="stable")
                assert np.all(np.abs(np.diff(lp_b[order])) < 2 * LOGP_TOL) or \
                    sorted(t[0] for t in a["top"][:-1]) == sorted(t[0] for t in b["top"][:-1]), s
        beam = beam_data(capture_beam(page_model, s, beam_size=BEAM))
        ours = r["beam"]
        assert (ours["translation"], ours["greedy_translation"], ours["winner"],
                ours["max_len"], ours["margin"]) == (
            beam["translation"], beam["greedy_translation"], beam["winner"], beam["max_len"],
            beam["margin"]), s
        assert [(n["id"], n["parent"], n["step"], n["text"], n["status"]) for n in ours["nodes"]] \
            == [(n["id"], n["parent"], n["step"], n["text"], n["status"]) for n in beam["nodes"]], s
        worst["raw"] = max(worst["raw"], max(abs(a["raw"] - b["raw"])
                                             for a, b in zip(ours["nodes"], beam["nodes"])))
    print(f"\nlive views, browser vs lib on {len(sentences)} held-out sentences: largest "
          f"differences {worst}; units swapped at the edge of a panel: {units_swapped}")
    assert worst["logp"] < LOGP_TOL and worst["raw"] < 10 * LOGP_TOL
    assert worst["value steps"] <= 1 and worst["xy"] < XY_TOL
    assert not problems["console"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_attention_data_match_lib_on_held_out_sentences(engine_page, attention_model,
                                                        held_out):
    """The attention view's data from the browser's attention model against lib's
    (capture_attention, attention_data) on PARITY_SENTENCES held-out sentences."""
    from lib.widgets.attention_view import attention_data, capture_attention

    page, problems = engine_page
    sentences = [en for en, _ in held_out[:PARITY_SENTENCES]]
    results = []
    for i in range(0, len(sentences), 25):
        results += page.evaluate(ATTENTION_RUN, sentences[i:i + 25])
    worst = {"weights": 0.0, "p": 0.0}
    for s, ours in zip(sentences, results):
        want = attention_data(capture_attention(attention_model, s))
        assert (ours["source"], ours["unknown"], ours["output"], ours["translation"],
                ours["start"], ours["capped"]) == (want["source"], want["unknown"],
                                                   want["output"], want["translation"],
                                                   want["start"], want["capped"]), s
        worst["weights"] = max(worst["weights"], float(np.abs(
            np.array(ours["weights"]) - np.array(want["weights"])).max()))
        worst["p"] = max(worst["p"], float(np.abs(np.array(ours["p"]) - np.array(want["p"])).max()))
    print(f"\nattention view, browser vs lib on {len(sentences)} held-out sentences: largest "
          f"differences {worst}")
    assert worst["weights"] < WEIGHT_TOL and worst["p"] < WEIGHT_TOL
    assert not problems["console"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_the_view_says_while_the_model_loads(browser, live_url):
    """Until the model has arrived the form says it is loading and the view keeps the build's
    drawing; then the view redraws."""
    page, context, problems = _open(browser, live_url, "beam_search")
    held = []

    def hold(route):  # answered below, when the test says
        held.append(route)

    page.route("**/model/decoder_step.onnx*", hold)
    form = ".s2s-live[data-kind=beam]"
    before = page.locator(_view(form)).inner_html()
    page.fill(f"{form} input[name=sentence]", TYPED["beam_search"])
    page.press(f"{form} input[name=sentence]", "Enter")
    for _ in range(600):  # until the page asks for the model's decoder, held back
        if held:
            break
        page.wait_for_timeout(100)
    status = page.locator(f"{form} .s2s-live-status").inner_text()
    assert held and status == "Loading the model (once per visit)…"
    assert page.get_attribute(form, "data-state") == "busy"
    assert page.locator(_view(form)).inner_html() == before
    for route in held:
        route.continue_()
    page.wait_for_function("(f) => document.querySelector(f).dataset.state === 'done'",
                           arg=form, timeout=120_000)
    assert f"«{TYPED['beam_search']}»" in page.locator(_view(form) + " .s2s-head h4").inner_text()
    context.close()
    assert not problems["console"] and not problems["external"], problems

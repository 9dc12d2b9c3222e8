"""The Playground page: the exported model against lib, in Python and in Chromium.

Oracles: `lib.course.playground.page_model(model)`, the reference model with the page's int8-rounded
weights, run by lib (Seq2Seq.translate, lib.widgets.trace.capture_hidden); lib.data's
tokeniser and detokeniser; BLEU by sacrebleu (lib.evaluate). The browser tests run against the
built site when there is one (`make test`), else against a small site assembled here from
web/playground/ and the current export (`make playground`), so the page can be tested before
the website is built.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import statistics
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import ROOT, SITE, open_page, serve_directory

from lib import search
from lib.course import playground
from lib.course.memo import load_corpus
from lib.data import EOS, SOS, SPECIALS, UNK, detokenize, normalize, tokenize
from scripts import playground_site

EXPORTS = ROOT / "_build" / "playground"
SHOTS = ROOT / "_build" / "screenshots" / "playground"
PARITY_SENTENCES = 500
STATE_TOL = 1e-4
WEIGHT_TOL = 1e-5  # attention weights, browser or onnxruntime against lib
SPEED_SENTENCE = "Tom wants to go to the park."  # 7 words
SPEED_LIMIT_MS = 300
MODEL_BYTES_LIMIT = 15_000_000
BLEU_TOL = 0.5
PAGE = ROOT / "book" / "playground.md"
MODELS = ("reference", "attention")  # the Playground's two models (the export's and attention/)
# The sentences of the page's "Experiments to try", in the order the text first names them: the
# tests below replay them on the exported models (the browser parity tests included) and check
# what the text states about them.
EXPERIMENTS = {"look": "I am cold.", "last": "I am cold",
               "hypotheses": "Tom wants to go to the park.", "both": "Where is the station?",
               "joined": "I am cold. Tom is hungry. We are tired.", "unknown": "The xyzzy is cold."}
# Text the tokeniser must treat exactly as lib.data does: Unicode spaces and quotes, elision,
# hyphens, digits, symbols, accents in NFD form, non-Latin scripts.
TRICKY = ["Qu\u2019est-ce que c'est\u202f?", "  I'm\thungry\u00a0!  ", "e\u0301te\u0301 -- x_y",
          "It costs $5,000.50 (really)…", "dit-il « oui »",
          "\u4f60\u597d, \u0645\u0631\u062d\u0628\u0627",
          "a\u2010b\u2011c \u02bcx", "\u2160 \u00bd 3\u00b2 \u2007 ok", "\x1cfoo\x85bar\u3000baz"]


def require(message: str):
    if os.environ.get("COURSE_REQUIRE_SITE"):
        pytest.fail(message)
    pytest.skip(message)


# ---------------------------------------------------------------------------------------------
# int8 weights (no model needed)
# ---------------------------------------------------------------------------------------------


def test_int8_rows_round_trip():
    torch.manual_seed(0)
    w = torch.randn(7, 33) * torch.linspace(0.01, 3, 7).unsqueeze(1)  # rows of different range
    w[3] = 0
    q, scale = playground.quantize(w, 0)
    assert q.dtype == torch.int8 and scale.shape == (7,)
    assert int(q.abs().max()) == playground.INT8_MAX  # each non-zero row uses the full range
    back = playground.dequantize(q, scale, 0)
    assert torch.all((back - w).abs() <= scale.unsqueeze(1) / 2 + 1e-7)
    assert torch.equal(back[3], torch.zeros(33))
    # rounding an already rounded matrix changes nothing: the ONNX file stores exactly these
    assert torch.equal(playground.dequantize(*playground.quantize(back, 0), 0), back)
    q1, s1 = playground.quantize(back.T, 1)  # the same rows, seen as columns
    assert torch.equal(playground.dequantize(q1, s1, 1), back.T)


def test_the_form_takes_its_defaults_from_the_export():
    """One home for the search defaults: lib.search's go into vocab.json, and the page's markup
    types none of its own (the script fills k, alpha and margin from vocab.json)."""
    from lib.experiments.toy import tiny_model

    settings = playground.page_settings(tiny_model())
    assert (settings["default_beam"], settings["default_alpha"], settings["default_margin"]) == (
        search.DEFAULT_BEAM, search.DEFAULT_ALPHA, search.DEFAULT_MARGIN)
    html = (ROOT / "web" / "playground" / "playground.html").read_text(encoding="utf-8")
    for name in ("k", "alpha", "margin"):
        tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', html).group(0)
        assert "value=" not in tag, tag
    assert re.search(r'<output name="kval">\s*</output>', html)


def _experiments_text() -> str:
    """The page's section "Experiments to try", up to the next section."""
    text = PAGE.read_text(encoding="utf-8")
    return text.split("## Experiments to try", 1)[1].split("\n## ", 1)[0]


def test_the_pages_experiments_are_the_ones_replayed():
    """The sentences the experiments name are EXPERIMENTS, which the tests below replay."""
    spans = [c for c in re.findall(r"`([^`]+)`", _experiments_text()) if c not in SPECIALS]
    assert list(dict.fromkeys(spans)) == list(EXPERIMENTS.values())


def test_what_the_experiments_say_about_their_sentences():
    tokens = {name: tokenize(sentence) for name, sentence in EXPERIMENTS.items()}
    # 1 and 2: the full stop is the last token, and without it the last token is "cold"
    assert tokens["look"][-1] == "." and tokens["last"] == tokens["look"][:-1]
    assert tokens["last"][-1] == "cold"
    # 4: three short sentences joined, the first experiment's first
    assert sum(t in (".", "!", "?") for t in tokens["joined"]) == 3
    assert EXPERIMENTS["joined"].startswith(EXPERIMENTS["look"] + " ")
    # 1: the attention chapter's section that measures where the rows copying a name or number
    # put their largest weight, over all the test sentences
    chapter = (ROOT / "book" / "attention.md").read_text(encoding="utf-8")
    section = chapter.split("\n## Reading the alignments\n", 1)[1].split("\n## ", 1)[0]
    assert "alignment.copy_alignment(attn_model" in section
    assert "section *Reading the alignments* measures where the darkest cell lies in every row " \
        "that copies a name or number" in " ".join(_experiments_text().split())


def test_the_pages_rules_are_the_codes():
    """What the page says of the search and the weights is what lib.search and the export do."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    a, b = search.SOURCE_CAP
    assert f"the length cap {a}*S* + {b}" in text
    assert "stored as 8-bit integers" in text and playground.INT8_MAX == 2 ** 7 - 1


def test_attention_model_is_the_chapters():
    """The Playground's attention model is the attention chapter's (lib.pretrained's)."""
    from lib.experiments import long_inputs

    assert playground.ATTENTION == long_inputs.MODELS["attention"]
    chapter = (ROOT / "book" / "attention.md").read_text(encoding="utf-8")
    assert "attn_model = lib.pretrained(attention=True)" in chapter


def test_attention_export_refuses_a_model_without_attention(tmp_path):
    from lib.course import checkpoint
    from lib.experiments.toy import tiny_model

    weights = checkpoint.save(tiny_model(), tmp_path / "plain.pt")
    with pytest.raises(ValueError, match="without attention"):
        playground.export_attention(tmp_path / "out", weights, bleu=False)


@pytest.mark.parametrize("attends", [False, True], ids=["reference", "attention"])
def test_graphs_match_lib_on_a_tiny_model(tmp_path, attends):
    """The one export path, for a small random model of each kind (no cached model needed): the
    inputs and outputs the page's JavaScript reads, their shapes, and lib's numbers (states,
    keys, one step for N hypotheses: log P, states and attention weights)."""
    from lib.experiments.toy import tiny_model

    page = playground.page_model(tiny_model(seed=1, attention=attends))
    assert page.attends == attends
    playground.export_graphs(page, tmp_path)
    playground.int8_initializers(tmp_path / "encoder.onnx")
    playground.int8_initializers(tmp_path / "decoder_step.onnx")
    enc, dec = (_session(tmp_path / f) for f in ("encoder.onnx", "decoder_step.onnx"))
    names = (["src"], ["states", "keys"] if attends else ["states"])
    assert ([i.name for i in enc.get_inputs()], [o.name for o in enc.get_outputs()]) == names
    names = (["prev", "state", "memory", "keys"] if attends else ["prev", "state", "context"],
             ["logp", "next_state", "weights"] if attends else ["logp", "next_state"])
    assert ([i.name for i in dec.get_inputs()], [o.name for o in dec.get_outputs()]) == names
    src = torch.tensor([[4, 5, 6, 7, 5]])  # (1, S)
    N, L, S = 3, page.config.num_layers, src.size(1)
    H, V = page.config.hidden_size, len(page.tgt_vocab)
    with torch.no_grad():
        outputs, hidden, source = page.encode(src, torch.tensor([S]))
        states, *keys = enc.run(None, {"src": src.numpy()})  # (L, S, H) [, (S, A)]
        assert states.shape == (L, S, H)
        np.testing.assert_allclose(states[-1], outputs[0].numpy(), atol=STATE_TOL)
        np.testing.assert_allclose(states[:, -1], hidden[:, 0].numpy(), atol=STATE_TOL)
        prev = torch.tensor([SOS, 4, 6])  # (N,)
        state = hidden.expand(L, N, -1).contiguous() + 0.1 * torch.randn(L, N, H)
        if attends:
            (keys,) = keys
            np.testing.assert_allclose(keys, source.keys[0].numpy(), atol=1e-5)
            logits, want_state, want_w = page.decoder.step(
                prev, state, source.index_select(0, torch.zeros(N, dtype=torch.long)),
                return_attention=True)
            logp, got_state, got_w = dec.run(None, {"prev": prev.numpy(), "state": state.numpy(),
                                                    "memory": states[-1], "keys": keys})
            assert got_w.shape == (N, S)
            np.testing.assert_allclose(got_w, want_w.numpy(), atol=WEIGHT_TOL)
            np.testing.assert_allclose(got_w.sum(1), 1, atol=1e-6)
        else:
            assert keys == []
            context = source.expand(N, -1)  # (N, H)
            logits, want_state = page.decoder.step(prev, state, context)
            logp, got_state = dec.run(None, {"prev": prev.numpy(), "state": state.numpy(),
                                             "context": context.numpy()})
    assert logp.shape == (N, V) and got_state.shape == (L, N, H)
    np.testing.assert_allclose(logp, torch.log_softmax(logits, -1).numpy(), atol=STATE_TOL)
    np.testing.assert_allclose(got_state, want_state.numpy(), atol=STATE_TOL)


def test_the_export_key_follows_what_the_files_depend_on(tmp_path, monkeypatch):
    """A comment in playground.py changes no exported file, so it keeps the key; the model's
    key, EXPORT_VERSION and the exporter's versions change it, for both models."""
    import importlib.util

    key = playground.export_key()
    weights = tmp_path / "copy-0123.pt"
    weights.write_bytes(b"")
    attention = playground.attention_key(weights)
    code = Path(playground.__file__).read_text(encoding="utf-8")
    edited = tmp_path / "playground_edited.py"
    edited.write_text(code.replace("\nOPSET = ", "\n# a comment\nOPSET = ", 1), encoding="utf-8")
    assert edited.read_text(encoding="utf-8") != code
    spec = importlib.util.spec_from_file_location("playground_edited", edited)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (module.export_key(), module.attention_key(weights)) == (key, attention)

    other = tmp_path / "copy-4567.pt"
    other.write_bytes(b"")
    assert playground.attention_key(other) not in (None, attention, key)
    keys = {key}
    monkeypatch.setattr(playground.reference, "reference_key", lambda: "another model")
    keys.add(playground.export_key())
    monkeypatch.setattr(playground, "EXPORT_VERSION", playground.EXPORT_VERSION + 1)
    keys.add(playground.export_key())
    assert playground.attention_key(weights) != attention
    monkeypatch.setattr(playground.torch, "__version__", "0.0.0")
    keys.add(playground.export_key())
    assert len(keys) == 4, keys


def test_mini_site_holds_the_page_and_both_models(tmp_path):
    """The page without the website (what the browser tests fall back on and the benchmark
    times): the markup in a bare document, the scripts, and every file of the export."""
    model = tmp_path / "export"
    for rel in (*playground.FILES, *(f"{playground.ATTENTION_DIR}/{f}" for f in playground.FILES)):
        (model / rel).parent.mkdir(parents=True, exist_ok=True)
        (model / rel).write_text(rel, encoding="utf-8")
    (model / ".attention.partial").mkdir()  # an unfinished export is left out
    (model / ".attention.partial" / "x.onnx").write_text("x", encoding="utf-8")
    root = playground_site.mini_site(tmp_path / "site", model)
    html = (root / "book" / "playground.html").read_text(encoding="utf-8")
    fragment = (ROOT / "web" / "playground" / "playground.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and fragment in html
    static = root / "_static" / "playground"
    copied = sorted(p.relative_to(static / "model").as_posix()
                    for p in (static / "model").rglob("*") if p.is_file())
    assert copied == sorted(p.relative_to(model).as_posix() for p in model.rglob("*")
                            if p.is_file() and ".attention.partial" not in p.parts)
    for name in playground_site.PAGE_FILES:
        assert (static / name).read_bytes() == (ROOT / "web" / "playground" / name).read_bytes()


def test_page_model_rounds_only_the_weight_matrices():
    from lib.experiments.toy import tiny_model

    model = tiny_model()
    page = playground.page_model(model)
    for (name, p), (_, r) in zip(model.named_parameters(), page.named_parameters()):
        if p.dim() == 2:
            _, scale = playground.quantize(p, 0)
            assert torch.all((p - r).abs() <= scale.unsqueeze(1) / 2 + 1e-7), name
        else:
            assert torch.equal(p, r), name


# ---------------------------------------------------------------------------------------------
# The export, in Python with onnxruntime
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def export_dir() -> Path:
    target = EXPORTS / playground.export_key()
    if not playground.is_complete(target):
        require(f"no Playground export for key {playground.export_key()}: run `make playground`")
    return target


def _session(path: Path):
    """An onnxruntime session as the page opens one: one thread, every optimisation but the
    fusion of quantised nodes (which would round the activations to 8 bits too)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    return ort.InferenceSession(str(path), options)


@pytest.fixture(scope="module")
def attention_dir(export_dir) -> Path:
    target = playground.attention_export(export_dir)
    if target is None:
        require("no attention model in the Playground export: run the attention chapter (or "
                "the site build), then `make playground`")
    return target


@pytest.fixture(scope="module")
def attention_model(attention_dir):
    """The attention model with the page's int8-rounded weights (the checkpoint it was
    exported from: the chapter's cached model)."""
    from lib.course import checkpoint
    from lib.experiments import long_inputs

    name = json.loads((attention_dir / "manifest.json").read_text(encoding="utf-8"))["checkpoint"]
    path = long_inputs.weights_path(playground.ATTENTION).parent / name
    if not path.is_file():
        require(f"the attention model's weights {path} are gone: run the attention chapter")
    return playground.page_model(checkpoint.load(path, device="cpu"))


@pytest.fixture(scope="module")
def page_model():
    from lib.course.reference import pretrained

    return playground.page_model(pretrained(progress=False))


@pytest.fixture(scope="module")
def held_out(page_model) -> list[tuple[str, list[str]]]:
    """The first PARITY_SENTENCES test pairs that translate() accepts (at most 40 tokens)."""
    pairs = [p for p in load_corpus().split.test
             if len(tokenize(p[0])) <= page_model.config.max_src_len]
    return pairs[:PARITY_SENTENCES]


def _exported(request, name: str):
    """(export directory, the page's int8 model) of the Playground's model `name` (MODELS)."""
    if name == "reference":
        return request.getfixturevalue("export_dir"), request.getfixturevalue("page_model")
    return request.getfixturevalue("attention_dir"), request.getfixturevalue("attention_model")


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_manifest_size_and_bleu(request, name):
    """The download fits the budget, the int8 weights are exactly page_model's, and the manifest
    holds what the page shows; the reference model's int8 BLEU is within BLEU_TOL of float32's."""
    directory, _ = _exported(request, name)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    model_bytes = sum((directory / f).stat().st_size for f in playground.FILES)
    print(f"\n{name} model download: {model_bytes / 1e6:.2f} MB "
          f"({manifest['bytes']}); BLEU: {manifest['bleu']}")
    assert model_bytes <= MODEL_BYTES_LIMIT
    assert all(e == 0 for e in manifest["requantization_error"].values())
    vocab = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
    if name == "attention":
        assert vocab["attention"] is True and manifest["config"]["attention"] is True
        return
    assert manifest["key"] == directory.name == playground.export_key()
    bleu = manifest["bleu"]
    assert bleu and bleu["sentences"] == len(load_corpus().split.test)
    for beam in (1, 5):
        assert abs(bleu[f"int8_beam{beam}"] - bleu[f"float32_beam{beam}"]) <= BLEU_TOL, bleu


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_onnx_graphs_match_lib(request, name, held_out):
    """Encoder states (and the attention model's keys), teacher-forced decoder steps (log P,
    states, and the attention model's weights) on 100 held-out sentences."""
    directory, m = _exported(request, name)
    attends = name == "attention"
    enc, dec = (_session(directory / f) for f in ("encoder.onnx", "decoder_step.onnx"))
    worst = {"encoder": 0.0, "logp": 0.0, "state": 0.0, **({"weights": 0.0} if attends else {})}
    with torch.no_grad():
        for en, refs in held_out[:100]:
            src, lengths = m.prepare([en])  # (1, S)
            outputs, hidden, source = m.encode(src, lengths)  # source: context or Memory
            states, *keys = enc.run(None, {"src": src.numpy()})  # (L, S, H) [, keys (S, A)]
            worst["encoder"] = max(worst["encoder"],
                                   float(np.abs(states[-1] - outputs[0].numpy()).max()),
                                   float(np.abs(states[:, -1] - hidden[:, 0].numpy()).max()),
                                   *(float(np.abs(k - source.keys[0].numpy()).max())
                                     for k in keys))
            feeds = {"memory": outputs[0].numpy(), "keys": source.keys[0].numpy()} if attends \
                else {"context": source.numpy()}
            tgt = m.tgt_vocab.encode(tokenize(refs[0]))
            prev = torch.tensor([SOS] + tgt[:-1])  # teacher forcing: (T,)
            state = hidden
            for t in range(len(tgt)):
                want = m.decoder.step(prev[t:t + 1], state, source, return_attention=attends)
                got = dec.run(None, {"prev": prev[t:t + 1].numpy(), "state": state.numpy(),
                                     **feeds})  # log P, state [, weights]
                worst["logp"] = max(worst["logp"], float(np.abs(
                    got[0] - torch.log_softmax(want[0].float(), -1).numpy()).max()))
                worst["state"] = max(worst["state"], float(np.abs(got[1] - want[1].numpy()).max()))
                if attends:
                    worst["weights"] = max(worst["weights"],
                                           float(np.abs(got[2] - want[2].numpy()).max()))
                state = want[1]
    print(f"\nonnxruntime vs lib ({name} model), largest differences: {worst}")
    assert worst.get("weights", 0.0) < WEIGHT_TOL
    assert max(worst.values()) < STATE_TOL, worst


# ---------------------------------------------------------------------------------------------
# The page in headless Chromium
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def playground_url(export_dir, tmp_path_factory):
    """The Playground page: in the built site if it has the current page, else in a site
    assembled here (`make test` always has a fresh build)."""
    built = SITE / "_static" / "playground" / "playground.js"
    fresh = (SITE / "book" / "playground.html").is_file() and built.is_file() and \
        built.read_bytes() == (ROOT / "web" / "playground" / "playground.js").read_bytes()
    if fresh:
        root = SITE
    elif os.environ.get("COURSE_REQUIRE_SITE"):
        pytest.fail(f"the built site has no Playground page ({SITE}/book/playground.html)")
    else:
        root = playground_site.mini_site(tmp_path_factory.mktemp("playground-site"),
                                         export_dir)
    server, url = serve_directory(root)
    yield url + "book/playground.html"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def pg(browser, playground_url):
    """The page, loaded, with its model ready; yields (page, context, problems)."""
    page, context, problems = open_page(browser, playground_url)
    page.wait_for_function("document.getElementById('s2s-playground').dataset.state !== 'loading'",
                           timeout=120_000)
    state = page.evaluate("document.getElementById('s2s-playground').dataset.state")
    assert state == "ready", page.locator(".s2s-pg-status").inner_text()
    yield page, context, problems
    context.close()


def _floats(b64: str, shape) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype=np.float32).reshape(shape)


@pytest.mark.slow
@pytest.mark.browser
def test_the_form_shows_the_exported_defaults(pg, export_dir):
    """Once loaded, the form holds vocab.json's search defaults (lib.search's)."""
    page, _, _ = pg
    vocab = json.loads((export_dir / "vocab.json").read_text(encoding="utf-8"))
    shown = page.evaluate("""() => { const f = document.querySelector('#s2s-playground form');
        return [f.k.value, f.kval.value, f.alpha.value, f.margin.value]; }""")
    assert [float(v) if v != "" else None for v in shown] == [
        vocab["default_beam"], vocab["default_beam"], vocab["default_alpha"],
        vocab["default_margin"]]


@pytest.mark.slow
@pytest.mark.browser
def test_tokeniser_matches_lib(pg, held_out):
    page, _, _ = pg
    texts = TRICKY + [en for en, _ in held_out] + [fr for _, refs in held_out for fr in refs]
    got = page.evaluate("""(texts) => texts.map((t) => {
      const P = window.S2SPlayground, toks = P.tokenize(t);
      return [P.normalize(t), toks, P.detokenize(toks)]; })""", texts)
    for text, (norm, toks, detok) in zip(texts, got):
        assert norm == normalize(text), text
        assert toks == tokenize(text), text
        assert detok == detokenize(tokenize(text)), text
    print(f"\ntokeniser: {len(texts)} texts, normalize/tokenize/detokenize identical to lib.data")


@pytest.mark.slow
@pytest.mark.browser
def test_beam5_speed(pg):
    page, _, _ = pg
    assert len(SPEED_SENTENCE.split()) == 7
    times = page.evaluate("""async (s) => {
      const P = window.S2SPlayground, M = P.model, out = [];
      for (let i = 0; i < 6; i++) {
        const t0 = performance.now();
        await P.translate(s, {search: "beam", k: M.vocab.default_beam,
                              alpha: M.vocab.default_alpha, margin: M.vocab.default_margin});
        out.push(performance.now() - t0);
      }
      return out; }""", SPEED_SENTENCE)
    median = statistics.median(times[1:])  # the first run warms the wasm code up
    print(f"\nbeam 5 on {SPEED_SENTENCE!r} in headless Chromium ({os.cpu_count()} cores): "
          f"median {median:.0f} ms, runs {[round(t) for t in times]} ms (the first warms up)")
    assert median < SPEED_LIMIT_MS


def _translate(page, text: str, search: str = "beam", alpha: str | None = None,
               margin: str | None = None):
    """Translate `text` with the form; k, alpha and margin stay as the page filled them (the
    exported defaults) unless given."""
    page.fill("#s2s-playground input[name=sentence]", text)
    page.check(f"#s2s-playground input[name=search][value={search}]")
    for name, value in (("alpha", alpha), ("margin", margin)):
        if value is not None:
            page.fill(f"#s2s-playground input[name={name}]", value)
    page.click("#s2s-playground button[type=submit]")
    page.wait_for_function("['done', 'error'].includes(document.getElementById('s2s-playground')"
                           ".dataset.state)", timeout=60_000)
    return page.evaluate("document.getElementById('s2s-playground').dataset.state")


@pytest.mark.slow
@pytest.mark.browser
def test_offline_after_load_with_screenshots(pg, page_model, export_dir):
    """With every request refused after the load, a typed sentence still translates."""
    page, context, problems = pg
    blocked = []

    def block(route):
        blocked.append(route.request.url)
        route.abort()

    page.route("**/*", block)  # added last, so it runs before open_page's own route
    context.set_offline(True)
    try:
        sentence = "I think Tom is afraid of the dark."
        assert _translate(page, sentence) == "done"
        shown = page.locator(".s2s-pg-translation").inner_text()
        assert shown == page_model.translate([sentence], beam_size=search.DEFAULT_BEAM)[0]
        tokens = page.locator(".s2s-pg-probs tr").first.locator("td").all_inner_texts()
        probs = page.locator(".s2s-pg-probs tr").last.locator("td").all_inner_texts()
        out = page_model.tgt_vocab.encode(tokenize(shown), eos=True)
        assert tokens == page_model.tgt_vocab.decode(out, strip=False)
        src, lengths = page_model.prepare([sentence])
        with torch.no_grad():  # teacher-forced: log P (1, T, V) of the shown output
            want = torch.log_softmax(page_model.decoder(
                torch.tensor([[SOS] + out[:-1]]), *page_model.encode(src, lengths)[1:])[0], -1)
        want = want[0, torch.arange(len(out)), out].exp()  # P of each written token
        assert [float(p) for p in probs] == pytest.approx(want.tolist(), abs=1e-3)
        # the static widgets' views, drawn by their scripts (S2S.draw): every layer's heatmaps
        # and trajectory, and the tree with the winner's path
        L, S, T = page_model.config.num_layers, len(tokenize(sentence)), len(out)
        hidden = page.locator(".s2s-pg-hidden .s2sw-hidden.js")
        assert hidden.locator(".s2s-heat image").count() == 2 * L
        assert hidden.locator(".s2s-traj .pt").count() == L * (S + T)
        assert displayed(page, ".s2s-pg-hidden .s2s-heat") == 1  # the last layer's encoder
        hidden.locator('[data-group="mode"] [data-value="dec"]').click()
        assert hidden.locator(".s2s-heat:not([hidden])").get_attribute("data-key") == f"dec{L}"
        set_range(page, '.s2s-pg-hidden [data-slider="t"]', 2)
        assert displayed(page, ".s2s-pg-hidden .s2s-traj:not([hidden]) .pt") == 2
        set_range(page, '.s2s-pg-hidden [data-slider="t"]', S + T)  # back to the whole run
        assert hidden.locator('[data-save="html"]').count() == 0  # no fragment to save here
        tree = page.locator(".s2s-pg-tree .s2sw-beam.js .s2s-tree")
        assert tree.locator(".node.win").count() == len(out) + 1  # <sos> to <eos>
        set_range(page, '.s2s-pg-tree [data-slider="step"]', 1)
        assert page.locator(".s2s-pg-tree .s2s-beamout").inner_text().startswith("Step 1:")
        last = '.s2s-pg-tree [data-slider="step"]'
        set_range(page, last, int(page.get_attribute(last, "max")))
        bleu = json.loads((export_dir / "manifest.json").read_text(encoding="utf-8"))["bleu"]
        k = search.DEFAULT_BEAM
        assert f"beam {k}: {bleu[f'int8_beam{k}']} with these weights, " \
            f"{bleu[f'float32_beam{k}']} in full precision" in \
            page.locator(".s2s-pg-model").inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "page.png"), full_page=True)
        page.locator(".s2s-pg-form").screenshot(path=str(SHOTS / "form.png"))
        page.locator(".s2s-pg-hidden").screenshot(path=str(SHOTS / "hidden_states.png"))
        page.locator(".s2s-pg-tree").screenshot(path=str(SHOTS / "beam_tree.png"))
        assert _translate(page, "I am cold.", search="greedy") == "done"
        assert page.locator(".s2s-pg-translation").inner_text() == \
            page_model.translate(["I am cold."])[0]
    finally:
        context.set_offline(False)
        page.unroute("**/*", block)
    assert not blocked, f"the page fetched after it had loaded: {blocked}"
    assert not problems["console"], problems


def displayed(page, selector: str) -> int:
    """How many elements matching `selector` are displayed."""
    return page.evaluate(
        "s => [...document.querySelectorAll(s)].filter(e => e.getClientRects().length).length",
        selector)


def set_range(page, selector: str, value: int) -> None:
    page.locator(selector).evaluate(
        "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        value)


# The drawn structure of a beam view and of a hidden-state view inside `root`.
TREE = """(root) => ({
  nodes: [...root.querySelectorAll('.s2s-tree .node')].map(g => [g.getAttribute('class'),
    g.getAttribute('data-step'), g.getAttribute('transform'), g.querySelector('text').textContent,
    Number(g.querySelector('.sc').textContent.replace('\u2212', '-'))]),
  greedy: [...root.querySelectorAll('.s2s-tree .gnode')].map(g => [g.getAttribute('transform'),
    g.querySelector('text').textContent]),
  edges: [...root.querySelectorAll('.s2s-tree path')].map(p => [p.getAttribute('class'),
    p.getAttribute('data-step')]),
  marks: root.querySelectorAll('.s2s-tree .gb').length,
  finished: [...root.querySelectorAll('tr[data-step]')].map(r => [r.className,
    r.cells[0].textContent, r.cells[1].textContent]),
  controls: [...root.querySelectorAll('[data-slider], [data-toggle], [data-group] button')]
    .map(e => e.outerHTML),
  box: root.querySelector('.s2s-tree').getAttribute('viewBox'),
})"""
HIDDEN = """(root) => ({
  heat: [...root.querySelectorAll('.s2s-heat')].map(p => [p.dataset.key, p.dataset.cw,
    p.dataset.ch, p.querySelector('svg').getAttribute('viewBox'), p.querySelector('p').textContent,
    [...p.querySelectorAll('.tok')].map(t => t.getAttribute('class') + ' ' + t.textContent)]),
  points: [...root.querySelectorAll('.s2s-traj')].map(p => p.querySelectorAll('.pt').length),
  controls: [...root.querySelectorAll('[data-group] button, [data-slider]')].map(e => e.outerHTML),
  head: [...root.querySelectorAll('.s2s-head h4, .s2s-head + .s2s-sub')].map(e => e.textContent),
})"""


def _static_view(page, view) -> str:
    """Insert a static view's fragment (Python's to_html) into the page, as a notebook output
    arrives; returns the selector of its started view."""
    page.evaluate("""(html) => { const div = document.createElement('div');
        div.id = 'static-view'; div.innerHTML = html; document.body.appendChild(div); }""",
                  view.to_html())
    page.wait_for_selector("#static-view .s2sw[data-ready]")
    return "#static-view .s2sw"


@pytest.mark.slow
@pytest.mark.browser
def test_views_are_the_static_widgets_views(pg, page_model):
    """The page's beam tree and hidden-state view have the structure of the static views
    (lib.widgets.BeamView, HiddenView) drawn from Python's data for the same sentence and
    settings: the same drawing functions, fed the same numbers (computed here in JavaScript)."""
    from lib.widgets import BeamView, HiddenView, capture_beam, capture_hidden

    page, _, problems = pg
    sentence = "Tom is afraid of the dark, isn't he?"
    try:
        assert _translate(page, sentence) == "done"  # the form's defaults: lib.search's
        ours = page.evaluate(TREE, page.query_selector(".s2s-pg-tree .s2sw"))
        static = _static_view(page, BeamView(capture_beam(
            page_model, sentence, search.DEFAULT_BEAM, alpha=search.DEFAULT_ALPHA)))
        theirs = page.evaluate(TREE, page.query_selector(static))
        winner = [n for n in ours["nodes"] if "win" in n[0].split()]  # <sos> to <eos>
        assert len(ours["nodes"]) == len(theirs["nodes"]) >= len(winner) >= 2
        for a, b in zip(ours["nodes"], theirs["nodes"]):  # class, step, place, token, log P
            assert a[:4] == b[:4] and a[4] == pytest.approx(b[4], abs=0.011)
        assert {k: v for k, v in ours.items() if k != "nodes"} == \
            {k: v for k, v in theirs.items() if k != "nodes"}
        page.evaluate("document.getElementById('static-view').remove()")

        assert _translate(page, sentence, search="greedy") == "done"
        ours = page.evaluate(HIDDEN, page.query_selector(".s2s-pg-hidden .s2sw"))
        view = HiddenView(capture_hidden(page_model, sentence))
        theirs = page.evaluate(HIDDEN, page.query_selector(_static_view(page, view)))
        assert ours == theirs and len(ours["heat"]) == 2 * page_model.config.num_layers
        # the numbers behind the pictures: units shown and the PCA (lib.widgets.hidden)
        data = page.evaluate("""async (s) => { const P = window.S2SPlayground;
            return P.hiddenData(await P.translate(s, {search: 'greedy'})); }""", sentence)
        for key, panel in view.data["panels"].items():
            same = set(panel["units"]) & set(data["panels"][key]["units"])
            assert len(same) >= len(panel["units"]) - 2, key  # near-ties may swap at the edge
        for mine, lib_ in zip(data["trajectories"], view.data["trajectories"]):
            xy = np.array(lib_["xy"])
            np.testing.assert_allclose(mine["xy"], xy, atol=2e-3 * np.abs(xy).max())
            np.testing.assert_allclose(mine["explained"], lib_["explained"], atol=1e-3)
    finally:
        page.evaluate("() => { const v = document.getElementById('static-view'); "
                      "if (v) v.remove(); }")
    assert not problems["console"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_bad_input_messages_match_lib(pg, page_model):
    page, _, problems = pg

    def lib_message(text: str) -> str:
        with pytest.raises(ValueError) as e:
            page_model.prepare([text])
        return str(e.value)

    assert _translate(page, "   ") == "error"
    shown = page.locator(".s2s-pg-error").inner_text()
    assert "is empty" in lib_message("   ") and "is empty" in shown
    assert page.locator(".s2s-pg-result").is_hidden()
    long = " ".join(["word"] * (page_model.config.max_src_len + 1))
    assert _translate(page, long) == "error"
    why = lib_message(long).split("sentence 0 ", 1)[1]  # "has 41 tokens, more than ..."
    assert why in page.locator(".s2s-pg-error").inner_text()
    default_alpha = page.input_value("#s2s-playground input[name=alpha]")  # the exported one
    assert _translate(page, "Hello", alpha="-1") == "error"
    assert "alpha (the length-normalisation exponent) must be a finite number >= 0" in \
        page.locator(".s2s-pg-error").inner_text()
    text = "The xyzzy plugh is cold."
    assert _translate(page, text, alpha=default_alpha) == "done"  # the form keeps what was typed
    unknown = [t for t in tokenize(text) if t not in page_model.src_vocab.stoi]
    shown = page.locator(".s2s-pg-source .tok.unk").all_inner_texts()
    assert shown == [f"{t} → <unk>" for t in unknown] and unknown
    assert page.locator(".s2s-pg-translation").inner_text() == \
        page_model.translate([text], beam_size=5)[0]
    assert not problems["console"], problems


@pytest.mark.slow
@pytest.mark.browser
def test_other_pages_do_not_load_the_playground(site_dir):
    """Another page refers to no file of the Playground but live.js, deferred, and only a page
    with a view it makes live (the model loads when the reader types: tests/test_live_views.py)."""
    if not (site_dir / "book" / "playground.html").is_file():
        require(f"the built site {site_dir} has no Playground page: rebuild it (`make book`)")
    pages = [p for p in site_dir.rglob("*.html") if p.name != "playground.html"
             and "_static" not in p.parts]
    assert pages
    heavy, live = [], []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        tag = playground_site.live_script_tag(page, site_dir / "_static")
        if tag in text:
            live.append(page)
            assert any(f'class="{view}"' in text for view in playground_site.LIVE_VIEWS), page
        if "_static/playground" in text.replace(tag, ""):
            heavy.append(page)
    assert not heavy, f"pages other than the Playground load its files: {heavy[:5]}"
    assert site_dir / "book" / "encoder.html" in live
    assert (site_dir / "_static" / "playground" / "model" / "manifest.json").is_file()


# ---------------------------------------------------------------------------------------------
# The attention model (the attention chapter's fine-tuned copy), in Python and in Chromium
# ---------------------------------------------------------------------------------------------


def _finished(trace) -> list[tuple[list[int], np.ndarray]]:
    """Every hypothesis a traced beam search finished, best first as the page lists them:
    (token ids, the weights (T, S) the search scored each of its tokens with)."""
    nodes = {n.id: n for n in trace.nodes}
    out = []
    for node in sorted((n for n in trace.nodes if n.status == "finished"),
                       key=lambda n: (-n.score, n.id)):
        path = []
        while node.parent is not None:
            path.append(node)
            node = nodes[node.parent]
        out.append(([n.token for n in reversed(path)],
                    np.array([n.attention for n in reversed(path)])))
    return out


def _shared_rows(a: list[int], b: list[int]) -> int:
    """How many rows two outputs share: those of their common first words, and the row of the
    first word where they differ (scored from the same state, before that word was chosen)."""
    same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return min(same + 1, len(a), len(b))


@pytest.mark.slow
def test_the_experiments_hold_for_the_attention_model(attention_model):
    """What the page's experiments state as fact, on the exported attention model (the page's
    int8 weights): the browser parity tests show the page computes the same on these
    sentences."""
    m = attention_model
    # 5: xyzzy is not in the English vocabulary, so it is read as <unk>
    unknown = tokenize(EXPERIMENTS["unknown"])
    assert "xyzzy" in unknown and "xyzzy" not in m.src_vocab.stoi
    assert m.prepare([EXPERIMENTS["unknown"]])[0][0, unknown.index("xyzzy")] == UNK
    _check_the_experiments_rules(m)


def test_the_experiments_rules_hold_for_a_tiny_attention_model():
    """The rules the page's experiments state, on a small random attention model whose search
    finishes several hypotheses sharing their first words, so the shared rows are compared."""
    from lib.experiments.toy import tiny_model

    model = playground.page_model(tiny_model(attention=True, scale=2.0, tgt_words=50))
    finished = _check_the_experiments_rules(model)
    assert any(_shared_rows(a, b) >= 2 for hyps in finished
               for (a, _), (b, _) in itertools.combinations(hyps, 2))


def _check_the_experiments_rules(m) -> list[list[tuple[list[int], np.ndarray]]]:
    """What the experiments state for any attention model, on each of their sentences, with the
    page's search (lib.search's defaults, the source cap); returns the finished hypotheses."""
    finished = []
    for sentence in EXPERIMENTS.values():
        src, lengths = m.prepare([sentence])
        trace = search.beam_search(m, src, lengths, source_cap=True, trace=True).trace
        hyps = _finished(trace)
        # the heatmap of a hypothesis: the weights lib computes for its output, teacher-forced
        # (what the page draws), are the ones the search scored it with
        drawn = [(ids, _lib_weights(m, sentence, ids)) for ids, _ in hyps]
        for (ids, rows), (_, weights) in zip(hyps, drawn):
            np.testing.assert_allclose(weights, rows, atol=WEIGHT_TOL)
            # every row is a softmax over the source: its weights add up to 1
            assert weights.shape == (len(ids), len(tokenize(sentence)))
            np.testing.assert_allclose(weights.sum(1), 1, atol=1e-5)
        # 3: two hypotheses' rows are identical up to and including the row of the first word
        # where they differ
        for (a, wa), (b, wb) in itertools.combinations(drawn, 2):
            n = _shared_rows(a, b)
            np.testing.assert_allclose(wa[:n], wb[:n], atol=1e-6)
        assert hyps and hyps[0][0] == trace.path(trace.winner), hyps  # one button at least
        finished.append(hyps)
    return finished


@pytest.fixture(scope="module")
def pg_attention(browser, playground_url, attention_dir):
    """A page of its own, switched to the attention model; yields (page, problems, loaded):
    the resources fetched before the switch, then after it."""
    page, context, problems = open_page(browser, playground_url)
    page.wait_for_function("document.getElementById('s2s-playground').dataset.state !== 'loading'",
                           timeout=120_000)
    resources = "performance.getEntriesByType('resource').map(e => e.name)"
    before = page.evaluate(resources)
    page.check("#s2s-playground input[name=model][value=attention]")
    page.wait_for_function("window.S2SPlayground.model.name === 'attention' && "
                           "document.getElementById('s2s-playground').dataset.state === 'ready'",
                           timeout=120_000)
    yield page, problems, {"before": before, "after": page.evaluate(resources)}
    context.close()


def _lib_weights(model, sentence: str, ids: list[int]) -> np.ndarray:
    """lib's attention weights (T, S) for writing `ids` (up to <eos>) from `sentence`."""
    from lib.attention import attention_weights

    src, lengths = model.prepare([sentence])
    return attention_weights(model, src, lengths, torch.tensor([ids]))[0].numpy()


@pytest.mark.slow
@pytest.mark.browser
def test_attention_model_loads_only_on_switch(pg_attention):
    """The reference model translates before anything of the attention model but its small
    manifest is fetched; the switch fetches its graphs."""
    page, problems, loaded = pg_attention
    big = ("attention/encoder.onnx", "attention/decoder_step.onnx", "attention/vocab.json")
    assert not [u for u in loaded["before"] if any(b in u for b in big)], loaded["before"]
    assert any("model/encoder.onnx" in u for u in loaded["before"])
    assert all(any(b in u for u in loaded["after"]) for b in big), loaded["after"]
    line = page.locator(".s2s-pg-model").inner_text()  # its BLEU, as the page says
    assert line.startswith("The attention model.") and "BLEU on the" in line, line
    assert not problems["console"], problems


PARITY_RUN = """async (sentences) => {
  const P = window.S2SPlayground, M = P.model;
  function b64(arrays) {
    const n = arrays.reduce((s, a) => s + a.length, 0), all = new Float32Array(n);
    let o = 0; for (const a of arrays) { all.set(a, o); o += a.length; }
    const bytes = new Uint8Array(all.buffer); let s = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return btoa(s);
  }
  const rows = (weights) => weights ? weights.map((w) => Array.from(w)) : null;
  const out = [];
  for (const s of sentences) {
    const src = P.prepare(s);
    const g = await P.decode(src.ids, null);
    const b = await P.beamSearch(src.ids, M.vocab.default_beam, M.vocab.default_alpha,
                                 M.vocab.default_margin);
    out.push({tokens: src.tokens, greedy: P.detokenize(P.words(g.tokens)), greedyIds: g.tokens,
      greedyW: rows(g.weights), beam: P.detokenize(P.words(b.tokens)), beamIds: b.tokens,
      beamW: rows(b.finished[0].weights), winner: b.finished[0].id === b.trace.winner,
      encoder: b64([g.encoder]), decoder: b64(g.states)});
  }
  return out;
}"""


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("name", MODELS)
def test_browser_parity_with_lib(request, name, held_out):
    """Each model in the page against lib on the held-out sentences and the page's experiments:
    tokens, greedy and beam-5 outputs, the first finished hypothesis being the search's winner;
    the reference model's hidden states, the attention model's weights."""
    from lib.evaluate import translate_all
    from lib.widgets import capture_hidden

    _, model = _exported(request, name)
    if name == "reference":
        page, _, problems = request.getfixturevalue("pg")
    else:
        page, problems, _ = request.getfixturevalue("pg_attention")
    assert len(held_out) == PARITY_SENTENCES
    sources = [en for en, _ in held_out] + list(EXPERIMENTS.values())  # the page's experiments
    greedy = translate_all(model, sources, beam_size=1)
    beam = translate_all(model, sources, beam_size=5)
    start, results = time.perf_counter(), []
    for k in range(0, len(sources), 50):
        results += page.evaluate(PARITY_RUN, sources[k:k + 50])
    browser_s = time.perf_counter() - start
    L, H = model.config.num_layers, model.config.hidden_size
    mismatches, worst = [], {"states": 0.0, "weights": 0.0}
    for s, r, g, b in zip(sources, results, greedy, beam):
        assert r["tokens"] == tokenize(s), s
        assert r["winner"], s  # the first finished hypothesis is the search's winner
        if r["greedy"] != g:
            mismatches.append(("greedy", s, r["greedy"], g))
        if r["beam"] != b:
            mismatches.append(("beam-5", s, r["beam"], b))
        if name == "attention":
            for ids, got in ((r["greedyIds"], r["greedyW"]), (r["beamIds"], r["beamW"])):
                want = _lib_weights(model, s, ids)  # (T, S)
                worst["weights"] = max(worst["weights"], float(np.abs(np.array(got) - want).max()))
            continue
        enc, dec = capture_hidden(model, s).tensors()  # (L, S, H), (L, T, H)
        got_enc = _floats(r["encoder"], (L, len(r["tokens"]), H))
        worst["states"] = max(worst["states"], float(np.abs(got_enc - enc.numpy()).max()))
        got_dec = _floats(r["decoder"], (len(r["greedyIds"]), L, H)).transpose(1, 0, 2)
        if got_dec.shape == tuple(dec.shape):  # else greedy differs, a mismatch listed above
            worst["states"] = max(worst["states"], float(np.abs(got_dec - dec.numpy()).max()))
    print(f"\n{name} model, browser vs lib on {len(sources)} sentences ({browser_s:.0f} s in "
          f"Chromium): {len(mismatches)} different outputs, largest differences {worst}")
    for m in mismatches:
        print("  mismatch", m)
    assert worst["states"] < STATE_TOL and worst["weights"] < WEIGHT_TOL
    assert not mismatches
    assert not problems["console"] and not problems["external"], problems


def _shown_heatmap(page) -> tuple[list[str], list[str], np.ndarray]:
    """The heatmap on the page: source tokens, output tokens, the cells' weights (T, S)."""
    table = page.locator(".s2s-pg-attention table.s2s-pg-attn")
    source = table.locator("thead th").all_inner_texts()[1:]
    rows = table.locator("tbody tr")
    output = rows.locator("th").all_inner_texts()
    cells = [[float(v) for v in rows.nth(t).locator("td").evaluate_all(
        "tds => tds.map(td => td.dataset.w)")] for t in range(rows.count())]
    return source, output, np.array(cells)


@pytest.mark.slow
@pytest.mark.browser
def test_attention_heatmaps_show_libs_weights(pg_attention, attention_model):
    """The switch, a translation, the heatmap of the winner and of each finished hypothesis:
    the drawn cells hold lib's weights for those outputs."""
    page, problems, _ = pg_attention
    sentence = EXPERIMENTS["hypotheses"]  # the page's third experiment
    assert _translate(page, sentence) == "done"
    shown = page.locator(".s2s-pg-translation").inner_text()
    assert shown == attention_model.translate([sentence], beam_size=search.DEFAULT_BEAM)[0]
    buttons = page.locator(".s2s-pg-hyps button")
    assert buttons.count() >= 1
    assert buttons.first.get_attribute("aria-pressed") == "true"
    assert buttons.first.inner_text().startswith(f"1. {shown} (")
    hyps = page.evaluate("""async (s) => { const P = window.S2SPlayground, M = P.model;
        const b = await P.beamSearch(P.prepare(s).ids, M.vocab.default_beam,
                                     M.vocab.default_alpha, M.vocab.default_margin);
        return b.finished.map((h) => h.tokens); }""", sentence)
    assert len(hyps) == buttons.count()
    shown_cells = []
    for i, ids in enumerate(hyps):
        buttons.nth(i).click()
        source, output, cells = _shown_heatmap(page)
        assert source == tokenize(sentence)
        assert output == [attention_model.tgt_vocab.itos[t] for t in ids]
        want = _lib_weights(attention_model, sentence, ids)
        assert cells.shape == want.shape
        np.testing.assert_allclose(cells, want, atol=WEIGHT_TOL)
        np.testing.assert_allclose(cells.sum(1), 1, atol=1e-5)
        shown_cells.append(cells)
    # the experiment: rows identical up to and including the first word where two differ
    for (a, ca), (b, cb) in itertools.combinations(zip(hyps, shown_cells), 2):
        n = _shared_rows(a, b)
        np.testing.assert_array_equal(ca[:n], cb[:n])
    SHOTS.mkdir(parents=True, exist_ok=True)
    buttons.first.click()
    page.locator(".s2s-pg-attention").screenshot(path=str(SHOTS / "attention.png"))
    # greedy: one heatmap, no hypotheses; back to the reference model: no heatmap, a note
    assert _translate(page, sentence, search="greedy") == "done"
    assert page.locator(".s2s-pg-hyps").count() == 0
    _, output, cells = _shown_heatmap(page)
    src, lengths = attention_model.prepare([sentence])
    greedy_ids = search.greedy(attention_model, src, lengths, source_cap=True)[0].tolist()
    greedy_ids = greedy_ids[:greedy_ids.index(EOS) + 1]  # lib's output up to its <eos>
    assert output == [attention_model.tgt_vocab.itos[t] for t in greedy_ids]
    np.testing.assert_allclose(cells, _lib_weights(attention_model, sentence, greedy_ids),
                               atol=WEIGHT_TOL)
    # the fifth experiment: xyzzy is marked as read as <unk>, and has a column of its own
    assert _translate(page, EXPERIMENTS["unknown"]) == "done"
    assert page.locator(".s2s-pg-source .tok.unk").all_inner_texts() == ["xyzzy → <unk>"]
    assert _shown_heatmap(page)[0] == tokenize(EXPERIMENTS["unknown"])
    page.check("#s2s-playground input[name=model][value=reference]")
    page.wait_for_function("window.S2SPlayground.model.name === 'reference' && "
                           "document.getElementById('s2s-playground').dataset.state === 'done'",
                           timeout=60_000)
    assert page.locator(".s2s-pg-attention table").count() == 0
    assert "has no attention" in page.locator(".s2s-pg-attention").inner_text()
    assert not problems["console"], problems


def test_offline_is_said_to_last_only_while_the_tab_is_open():
    """The page keeps the models in memory, not in a service worker's cache: it says so."""
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert "for as long as the tab stays open" in text and "no service worker" in text
    script = (ROOT / "web" / "playground" / "playground.js").read_text(encoding="utf-8")
    assert "serviceWorker" not in script

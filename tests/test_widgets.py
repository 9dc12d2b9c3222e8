"""lib.widgets: the views show what the model computes, carry no external URL, and the live
controls redraw (fast; a tiny random model on a hand-written vocabulary, no corpus needed)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lib import bleu, search
from lib.data import SOS, Vocab, tokenize
from lib.evaluate import reference_streams
from lib.experiments.toy import tiny_model
from lib.model import Seq2Seq
from lib.widgets import (
    beam_explorer,
    bleu_breakdown,
    bleu_explorer,
    capture_beam,
    capture_contexts,
    capture_hidden,
    capture_steps,
    context_map,
    decoder_stepper,
    hidden_state_explorer,
    live_beam,
    live_bleu,
    live_hidden,
    live_stepper,
)
from lib.widgets.trace import BeamCapture, HiddenTrace, StepTrace

ROOT = Path(__file__).resolve().parents[1]
WIDGETS = ROOT / "lib" / "widgets"

PAIRS = [
    ("I am cold.", "J'ai froid."), ("I am hungry.", "J'ai faim."),
    ("You are tall.", "Tu es grand."), ("He is here.", "Il est ici."),
    ("Are you tired?", "Es-tu fatigué ?"), ("We won!", "Nous avons gagné !"),
    ("She is reading a book.", "Elle lit un livre."), ("Tom is my friend.", "Tom est mon ami."),
    ("I like cats.", "J'aime les chats."), ("Where is the station?", "Où est la gare ?"),
]
SENTENCES = [en for en, _ in PAIRS]


def make_model(layers: int = 2, hidden: int = 24, seed: int = 0, feed_context: bool = True,
               max_tgt_len: int = 9) -> Seq2Seq:
    src = Vocab.build([tokenize(en) for en, _ in PAIRS])
    tgt = Vocab.build([tokenize(fr) for _, fr in PAIRS])
    return tiny_model(seed, src_vocab=src, tgt_vocab=tgt, emb_dim=12, hidden=hidden,
                      layers=layers, dropout=0.3, feed_context=feed_context,
                      max_tgt_len=max_tgt_len)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny matrices: one thread is several times faster than two fighting over a busy CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model():
    return make_model().eval()


@pytest.fixture(scope="module")
def views(model):
    """One of every static view."""
    return {
        "hidden": hidden_state_explorer(model, "I am cold, zorglub.", map_sentences=SENTENCES),
        "map": context_map(model, SENTENCES, highlight=["I am cold."]),
        "beam": beam_explorer(model, "She is reading a book.", beam_size=3),
        "stepper": decoder_stepper(model, "I am cold.", prefix="Tu es"),
        "bleu": bleu_explorer("Le le chat est sur le tapis.", ["Le chat est sur le tapis."]),
        "bleu-corpus": bleu_explorer(["Il est ici.", "J'ai"], [["Il est là.", "Il est ici."],
                                                             ["J'ai froid."]]),
    }


# ---------------------------------------------------------------------------------------------
# Self-contained HTML
# ---------------------------------------------------------------------------------------------

# No address, no loader, no stylesheet or script fetched from anywhere (CSS url() included).
FORBIDDEN = re.compile(r"https?://|//cdn|\brequire(js)?\b|<link|@import|<script[^>]*\ssrc=|"
                       r"\burl\(|<iframe|<img[^>]*\ssrc=[\"']?(?!data:)", re.I)


def refuse(constant: str):
    raise ValueError(f"{constant} is not JSON")


@pytest.mark.parametrize("name", ["hidden", "map", "beam", "stepper", "bleu", "bleu-corpus"])
def test_views_are_self_contained(views, name, tmp_path):
    view = views[name]
    fragment, page = view.to_html(), view.html_document()
    for text in (fragment, page, view._repr_html_()):
        found = [m.group(0) for m in FORBIDDEN.finditer(text)]
        assert not found, f"{name} view refers to the outside: {found}"
    # every output carries its own style, data and script (Colab renders outputs in isolation)
    assert fragment.count("<style") == 1 and fragment.count("<script>") == 1
    # ... and runs that script itself where it was inserted as inert markup (static/activate.js)
    assert re.search(r'^<div class="s2sw-out" id="[^"]+"><style onload="[^"<>]+">', fragment)
    assert 'type="application/json"' in fragment
    assert "<noscript>" in fragment, "a view must say what JavaScript adds"
    assert len(fragment.encode()) < 300_000
    # the embedded data is valid JSON, and the fragment ids are fresh at every render
    data = re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', fragment, re.S)
    json.loads(data.group(1), parse_constant=refuse)  # JSON.parse reads no NaN or Infinity
    ids = set(re.findall(r'id="(s2s-[^"]+)"', fragment))
    assert ids and not ids & set(re.findall(r'id="(s2s-[^"]+)"', view.to_html()))
    path = view.save_html(tmp_path / "sub" / f"{name}.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def script_data(html: str) -> str:
    return re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', html,
                     re.S).group(1)


def markup(view) -> str:
    """The view's own markup in its fragment: after its style, before its data and script."""
    return view.to_html().split("</style>", 1)[1].split("<script", 1)[0]


def noscript(view) -> str:
    return re.search(r"<noscript>(.*?)</noscript>", markup(view), re.S).group(1)


@pytest.mark.parametrize("name", ["hidden", "map", "beam", "stepper", "bleu", "bleu-corpus"])
def test_python_draws_nothing_and_says_the_result_without_javascript(views, name):
    """One drawing per picture (render.py's docstring): JavaScript draws every view from its
    data, so the fragment carries no markup of the drawing, only a <noscript> text saying the
    view's result."""
    html = markup(views[name])
    drawn = re.findall(r'<svg|<circle|class="(?:node|mp|tk|s2s-step|s2s-heat|s2s-chip)\b', html)
    assert not drawn, f"{name}: drawn in Python too: {drawn}"
    trace = views[name].trace
    result = {"hidden": lambda: f"«{trace.translation}»", "beam": lambda: f"«{trace.translation}»",
              "stepper": lambda: f"«{trace.translation}»",
              "map": lambda: f"{len(trace.sentences)} sentences",
              "bleu": lambda: f"{trace.result['score']:.2f}",
              "bleu-corpus": lambda: f"{trace.result['score']:.2f}"}[name]()
    assert result.replace("'", "&#x27;") in noscript(views[name])


def test_no_python_module_draws_a_picture():
    """The widgets' drawings live in static/*.js only: no SVG or view markup in Python."""
    for path in sorted(WIDGETS.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        found = re.findall(r"<(?:svg|circle|rect|line|path|table|button)\b", source)
        assert not found, f"{path.name} writes markup of a drawing: {found}"


def test_importing_widgets_imports_no_ipywidgets():
    code = ("import sys, lib.widgets as w; w.beam_explorer; w.bleu_explorer; w.HiddenView; "
            "assert 'ipywidgets' not in sys.modules, 'ipywidgets imported too early'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr


# APIs that ipywidgets 8 added and Colab's 7.7.1 lacks (or whose meaning changed).
IPYWIDGETS_8_ONLY = ("Stack", "TagsInput", "ColorsInput", "FloatsInput", "IntsInput",
                     "description_allow_html", "NaiveDatetimePicker", "tooltip=", "text_color",
                     "font_size=", "selected_index=None", "Datetime(")


def test_widget_sources_avoid_ipywidgets_8_only_apis():
    for path in sorted(WIDGETS.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        used = [name for name in IPYWIDGETS_8_ONLY if re.search(rf"\b{re.escape(name)}", source)]
        assert not used, f"{path.name} uses ipywidgets 8-only APIs: {used}"


# ---------------------------------------------------------------------------------------------
# The traces are what the model computes
# ---------------------------------------------------------------------------------------------


def encoder_layers_by_hand(model, src) -> list[torch.Tensor]:
    """Each layer of the encoder GRU as its own nn.GRU with copied weights: (1, S, H) each."""
    rnn, x, outs = model.encoder.rnn, model.encoder.embedding(src), []
    for layer in range(rnn.num_layers):
        one = nn.GRU(x.size(-1), rnn.hidden_size, 1, batch_first=True)
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(one, f"{name}_l0").data.copy_(getattr(rnn, f"{name}_l{layer}"))
        x, _ = one(x)
        outs.append(x)
    return outs


@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("sentence", ["I am cold.", "Where is the station?", "zorglub"])
def test_encoder_states_are_the_models(layers, sentence):
    model = make_model(layers=layers, seed=layers)
    model.train()  # the capture must switch dropout off, then restore the mode
    threads = torch.get_num_threads()
    trace = capture_hidden(model, sentence)
    assert model.training and torch.get_num_threads() == threads
    model.eval()
    enc, _ = trace.tensors()  # (L, S, H)
    src, lengths = model.prepare([sentence])
    with torch.no_grad():
        outputs, hidden, context = model.encode(src, lengths)
        by_hand = encoder_layers_by_hand(model, src)
    assert enc.shape == (layers, len(tokenize(sentence)), model.config.hidden_size)
    assert torch.equal(enc[-1], outputs[0])  # output states: the last layer over time
    assert torch.equal(enc[:, -1], hidden[:, 0])  # hidden states: every layer's last step
    assert torch.equal(enc[-1, -1], context[0])
    for layer, states in enumerate(by_hand):
        torch.testing.assert_close(enc[layer], states[0], rtol=0, atol=1e-6)
    assert trace.source == tokenize(sentence)
    assert trace.unknown == [w == "zorglub" for w in trace.source]


@pytest.mark.parametrize("feed_context", [True, False])
def test_decoder_states_are_the_models(feed_context):
    model = make_model(layers=2, seed=3, feed_context=feed_context).eval()
    for sentence in SENTENCES[:4]:
        trace = capture_hidden(model, sentence)
        _, dec = trace.tensors()  # (L, T, H)
        src, lengths = model.prepare([sentence])
        greedy = search.greedy(model, src, lengths)[0].tolist()
        ids = model.tgt_vocab.encode(trace.output)
        assert ids == [i for i in greedy if i != 0]  # greedy's tokens, <eos> included
        with torch.no_grad():
            _, state, context = model.encode(src, lengths)
            prev = torch.tensor([SOS])
            for t, tok in enumerate(ids):
                _, state = model.decoder.step(prev, state, context)  # (L, 1, H)
                assert torch.equal(dec[:, t], state[:, 0])
                prev = torch.tensor([tok])
        assert dec.size(1) == len(ids)
        assert trace.translation == model.translate([sentence])[0]


@pytest.mark.parametrize("beam_size", [1, 2, 3, 5])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_beam_winner_is_what_translate_returns(model, beam_size, alpha):
    for sentence in SENTENCES[::3]:
        cap = capture_beam(model, sentence, beam_size=beam_size, alpha=alpha)
        expected = model.translate([sentence], beam_size=beam_size, alpha=alpha)[0]
        assert cap.translation == expected
        trace = cap.beam_trace()
        assert trace.beam_size == beam_size and trace.alpha == alpha
        assert trace.node(trace.winner).status == "finished"
        assert cap.greedy_translation == model.translate([sentence])[0]
        src, lengths = model.prepare([sentence])
        raw = search.sequence_log_prob(model, src, lengths,
                                       torch.tensor([model.tgt_vocab.encode(cap.greedy)]))
        assert sum(cap.greedy_logp) == pytest.approx(float(raw), abs=1e-4)


def test_beam_view_data_is_the_search(model):
    """What static/beam.js draws from: the trace's nodes as the search left them, the winner,
    and greedy's path with its running log P and length-normalised score."""
    view = beam_explorer(model, "She is reading a book.", beam_size=3, alpha=0.6)
    data, cap = view.data, view.trace
    trace = cap.beam_trace()
    assert data["nodes"] == cap.trace["nodes"] and data["winner"] == trace.winner
    assert (data["beam_size"], data["alpha"], data["margin"]) == (3, 0.6, search.DEFAULT_MARGIN)
    statuses = {n["status"] for n in data["nodes"] if n["parent"] is not None}
    assert statuses == {"kept", "pruned", "finished"}
    winner = trace.node(trace.winner)
    assert winner.status == "finished"
    assert model.tgt_vocab.decode(trace.path(winner.id)) == tokenize(data["translation"])
    assert data["translation"] == model.translate(["She is reading a book."], beam_size=3,
                                                  alpha=0.6)[0]
    for node in data["nodes"]:  # every score is its log P normalised at its own length
        if node["step"]:
            assert node["score"] == pytest.approx(node["raw"] / node["step"] ** 0.6, rel=1e-5)
    greedy = data["greedy"]
    assert [g["text"] for g in greedy] == cap.greedy
    running = torch.tensor(cap.greedy_logp, dtype=torch.float64).cumsum(0)
    assert [g["raw"] for g in greedy] == pytest.approx(running.tolist())
    assert [g["score"] for g in greedy] == pytest.approx(
        [r / (i + 1) ** 0.6 for i, r in enumerate(running.tolist())])
    assert greedy[-1]["score"] == pytest.approx(cap.greedy_score)
    assert data["greedy_translation"] == model.translate(["She is reading a book."])[0]


def test_hidden_view_data_is_the_states(model):
    """What static/hidden.js draws from: per layer and side the most varying units, sorted by
    their last value, with their values; each layer's PCA trajectory with its sign convention."""
    view = hidden_state_explorer(model, "I am cold, zorglub.", units=10)
    data, trace = view.data, view.trace
    enc, dec = trace.tensors()  # (L, S, H), (L, T, H)
    L, S, H = enc.shape
    T = dec.size(1)
    assert (data["L"], data["S"], data["T"], data["H"]) == (L, S, T, H)
    assert data["source"] == tokenize("I am cold, zorglub.") == trace.source
    assert data["unknown"] == [w not in model.src_vocab.stoi for w in data["source"]]
    assert data["output"] == trace.output and data["translation"] == trace.translation
    assert (data["mode"], data["layer"]) == ("enc", L)
    for layer in range(1, L + 1):
        for mode, states in (("enc", enc[layer - 1]), ("dec", dec[layer - 1])):
            panel = data["panels"][f"{mode}{layer}"]
            spread = states.var(0, unbiased=False)  # (H,)
            top = sorted(range(H), key=lambda h: -float(spread[h]))[:10]
            assert sorted(panel["units"]) == sorted(top)
            last = [float(states[-1, u]) for u in panel["units"]]
            assert last == sorted(last, reverse=True)
            vals = torch.frombuffer(bytearray(base64.b64decode(panel["vals"])), dtype=torch.int8)
            shown = vals.reshape(len(states), 10).float() / 127  # (time, unit) time-major
            torch.testing.assert_close(shown, states[:, panel["units"]], atol=0.5 / 127, rtol=0)
        points = torch.cat([enc[layer - 1], dec[layer - 1]]).double()  # (S + T, H)
        centred = points - points.mean(0)
        _, sv, vh = torch.linalg.svd(centred, full_matrices=False)
        comps = vh[:2] * torch.where(vh[:2].gather(1, vh[:2].abs().argmax(1, keepdim=True)) < 0,
                                     -1.0, 1.0)  # the largest loading of a direction is positive
        trajectory = data["trajectories"][layer - 1]
        torch.testing.assert_close(torch.tensor(trajectory["xy"], dtype=torch.float64),
                                   centred @ comps.T, rtol=1e-3, atol=1e-4)
        assert trajectory["explained"] == pytest.approx((sv[:2] ** 2 / (sv ** 2).sum()).tolist(),
                                                        rel=1e-3)
    with pytest.raises(ValueError, match="mode"):
        hidden_state_explorer(model, "I am cold.", mode="both")


def test_beam_explorer_draws_the_chapters_toy_tables():
    """lib.experiments.toy's hand-set tables: the walkthrough (A, C -> AB, CE -> ABD, CED) and
    greedy losing."""
    from lib.experiments.toy import TableModel, greedy_loses_table, walkthrough_table

    view = beam_explorer(TableModel(greedy_loses_table()), beam_size=2, alpha=0.0)
    assert (view.trace.translation, view.trace.greedy_translation) == ("B C", "A C")
    assert "Beam search found a more probable sentence than greedy." in view.to_html()
    toy = TableModel(walkthrough_table(), max_len=3)
    view = beam_explorer(toy, beam_size=2, alpha=0.6)
    trace = view.trace.beam_trace()
    beams = {step: sorted(" ".join(toy.tgt_vocab.decode(trace.path(n.id))) for n in nodes
                          if n.status == "kept")
             for step, nodes in enumerate(trace.steps()) if step}
    assert beams[1] == ["A", "C"] and beams[2] == ["A B", "C E"]
    finished = sorted(n.score for n in trace.nodes if n.status == "finished")
    assert len(finished) == 6 and view.trace.translation == "A"


def test_stepper_forces_the_prefix_then_continues_greedily(model):
    model.eval()
    sentence, prefix = "I am cold.", "Tu es grand"
    trace = capture_steps(model, sentence, prefix, top_k=5)
    forced = model.tgt_vocab.encode(tokenize(prefix))
    ids = model.tgt_vocab.encode(trace.output)
    assert ids[:len(forced)] == forced
    assert [s["forced"] for s in trace.steps] == [i < len(forced) for i in range(len(ids))]
    src, lengths = model.prepare([sentence])
    with torch.no_grad():  # replay: forced tokens, then the argmax at every later step
        _, state, context = model.encode(src, lengths)
        prev = torch.tensor([SOS])
        for t, (tok, step) in enumerate(zip(ids, trace.steps)):
            logits, state = model.decoder.step(prev, state, context)
            logp = search.log_probs(logits)[0]
            if t >= len(forced):
                assert tok == int(logp.argmax())
            top_lp, top_id = logp.topk(5)
            assert [w for w, _ in step["top"]] == [model.tgt_vocab.itos[i] for i in top_id]
            assert [p for _, p in step["top"]] == pytest.approx(top_lp.tolist(), abs=1e-6)
            assert step["logp"] == pytest.approx(float(logp[tok]), abs=1e-6)
            assert step["rank"] == int((logp > logp[tok]).sum()) + 1
            prev = torch.tensor([tok])
    assert trace.log_prob == pytest.approx(
        float(search.sequence_log_prob(model, src, lengths, torch.tensor([ids]))), abs=1e-4)
    plain = capture_steps(model, sentence)
    assert plain.translation == model.translate([sentence])[0] and plain.prefix == []
    assert trace.greedy == plain.output


def test_stepper_writes_sentences_as_translate_does(model):
    """Detokenised like `Seq2Seq.translate` (lib.data.detokenize): «J'ai froid.», not
    «J' ai froid .» (#28 §6)."""
    from lib.data import detokenize
    from lib.widgets.stepper import stepper_data

    for sentence, prefix in (("I am cold.", "J'ai"), ("Are you tired?", "Es-tu"),
                             ("I am cold.", "")):
        data = decoder_stepper(model, sentence, prefix=prefix).data
        trace = capture_steps(model, sentence, prefix)
        assert data["prefix"] == detokenize(tokenize(prefix))
        assert data["greedy"] == model.translate([sentence])[0]
        assert data["translation"] == trace.translation == detokenize(
            [t for t in trace.output if t != "<eos>"])
        assert data == stepper_data(trace)
    assert decoder_stepper(model, "I am cold.", prefix="J'ai").data["prefix"] == "J'ai"


def test_stepper_reports_unknown_prefix_words_and_a_prefix_too_long(model):
    trace = capture_steps(model, "I am cold.", "Je zorglub")
    assert trace.prefix_unknown == ["Je", "zorglub"]  # the tiny vocabulary has no "Je"
    assert trace.prefix == ["<unk>", "<unk>"]
    assert decoder_stepper(model, "I am cold.", "Je zorglub").data["prefix_unknown"] == [
        "Je", "zorglub"]
    with pytest.raises(ValueError, match="max_len"):
        capture_steps(model, "I am cold.", "a " * 20)


def test_context_map_places_sentences_and_finds_neighbours(model):
    cmap = capture_contexts(model, SENTENCES + ["x" * 5 + " word" * 50])  # too long: skipped
    assert cmap.sentences == SENTENCES
    src, lengths = model.prepare(SENTENCES)
    model.eval()
    with torch.no_grad():
        ctx = model.encode(src, lengths)[2].double()  # (N, H)
    points = torch.tensor(cmap.points, dtype=torch.float64)
    torch.testing.assert_close(cmap.pca().project(ctx), points)
    centred = ctx - ctx.mean(0)
    top2 = torch.linalg.svdvals(centred)[:2] ** 2 / (torch.linalg.svdvals(centred) ** 2).sum()
    assert cmap.explained == pytest.approx(top2.tolist())
    unit = nn.functional.normalize(ctx, dim=1)
    sim = unit @ unit.T
    for i, nn_ids in enumerate(cmap.neighbours):
        sim[i, i] = -2
        assert nn_ids == sim[i].topk(3).indices.tolist()
    assert len(set(cmap.groups)) > 1


def test_map_data_is_the_map_and_places_marked_sentences_with_its_pca(model):
    """What static/map.js draws: each sentence's point, group and neighbours, and a marked
    sentence placed by the map's own PCA; the hidden-state explorer marks its sentence."""
    from lib.widgets.map_view import map_data
    from lib.widgets.trace import encode_contexts

    cmap = capture_contexts(model, SENTENCES)
    view = context_map(model, SENTENCES, highlight=["I am cold.", "We won!"])
    data = view.data["map"]
    assert {**data, "marks": []} == map_data(cmap, standalone=True)
    assert data["sentences"] == SENTENCES and data["nn"] == cmap.neighbours
    torch.testing.assert_close(torch.tensor(data["xy"]), torch.tensor(cmap.points), rtol=1e-3,
                               atol=1e-6)
    assert data["groups"][-1:] == ["other"] or "other" not in data["groups"]
    assert [data["groups"][g] for g in data["group"]] == cmap.groups
    placed = cmap.pca().project(encode_contexts(model, ["I am cold.", "We won!"]))
    assert [m["label"] for m in data["marks"]] == ["«I am cold.»", "«We won!»"]
    torch.testing.assert_close(torch.tensor([m["xy"] for m in data["marks"]]), placed.float(),
                               rtol=1e-3, atol=1e-6)
    hidden = hidden_state_explorer(model, "I am cold.", cmap=cmap).data["map"]
    assert hidden["marks"][0]["label"] == "«I am cold.»" and not hidden["standalone"]
    assert hidden["marks"][0]["xy"] == pytest.approx(placed[0].tolist(), rel=1e-3, abs=1e-6)
    assert hidden_state_explorer(model, "I am cold.").data["map"] is None
    plain = context_map(model, SENTENCES, color_by="").data["map"]
    assert plain["groups"] == [] and set(plain["group"]) == {0}


@pytest.mark.parametrize("cls, make", [
    (HiddenTrace, lambda m: capture_hidden(m, "I am cold.")),
    (StepTrace, lambda m: capture_steps(m, "I am cold.", "J'ai")),
    (BeamCapture, lambda m: capture_beam(m, "I am cold.", 2)),
])
def test_traces_survive_json(model, cls, make):
    trace = make(model)
    again = cls.from_json(json.dumps(json.loads(trace.to_json())))
    assert again == trace


def test_views_draw_from_the_trace_alone(model):
    """A trace saved as JSON and read back draws the same view (ids aside), without the model."""
    from lib.widgets import BeamView, HiddenView, StepperView

    for view_cls, trace in ((HiddenView, capture_hidden(model, "I am cold.")),
                            (BeamView, capture_beam(model, "I am cold.", 3)),
                            (StepperView, capture_steps(model, "I am cold.", "Tu"))):
        again = type(trace).from_json(trace.to_json())
        strip = lambda html: re.sub(r"s2s-\w+-[0-9a-f]{10}", "ID", html)  # noqa: E731
        assert strip(view_cls(trace).to_html()) == strip(view_cls(again).to_html())


@pytest.mark.parametrize("make", [
    lambda m: hidden_state_explorer(m, "Go", max_len=1),  # one token in, one out
    lambda m: hidden_state_explorer(m, "I", units=None),
    lambda m: beam_explorer(m, "I am cold.", beam_size=1, max_len=1),
    lambda m: beam_explorer(m, "I am cold.", beam_size=4, max_len=2, alpha=0.0),
    lambda m: decoder_stepper(m, "Go", max_len=1),
    lambda m: context_map(m, ["I am cold.", "Go"]),
    lambda m: bleu_explorer("", ["Le chat."]),
])
def test_small_cases_draw(make):
    """Their data is complete (static/*.js draws them: tests/test_widgets_browser.py)."""
    view = make(make_model(layers=1).eval())
    json.loads(script_data(view.to_html()))
    if view.kind == "hidden":
        assert len(view.data["trajectories"][0]["xy"]) == view.data["S"] + view.data["T"]
    if view.kind == "beam":
        assert view.data["nodes"][0]["parent"] is None and view.data["greedy"]
    if view.kind == "stepper":
        assert view.data["T"] == len(view.data["steps"]) >= 1
    if view.kind == "map":
        assert len(view.data["map"]["xy"]) == 2


def test_bad_arguments_are_refused_with_clear_errors(model):
    with pytest.raises(TypeError):
        capture_hidden(model, ["I am cold."])
    with pytest.raises(ValueError, match="empty"):
        hidden_state_explorer(model, "")
    with pytest.raises(ValueError, match="layer"):
        hidden_state_explorer(model, "I am cold.", layer=3)
    with pytest.raises(ValueError, match="beam_size"):
        beam_explorer(model, "I am cold.", beam_size=0)
    with pytest.raises(ValueError, match="references"):
        bleu_breakdown(["a"], [["a"], ["b"]])
    for layer in (0, -1, 3, True):  # layers count from 1, as in the chapters
        with pytest.raises(ValueError, match="layer must be an integer from 1 to 2"):
            context_map(model, SENTENCES, layer=layer)
    with pytest.raises(ValueError, match="neighbours"):
        capture_contexts(model, SENTENCES, neighbours=0)


def test_context_map_layers_count_from_one(model):
    """layer=1 maps the first layer's final states, None (the default) the last layer's."""
    src, lengths = model.prepare(SENTENCES)
    with torch.no_grad():
        _, hidden, _ = model.encode(src, lengths)  # (L, N, H)
    for layer, expected in ((1, hidden[0]), (2, hidden[1]), (None, hidden[1])):
        cmap = capture_contexts(model, SENTENCES, layer=layer)
        assert cmap.layer == (layer or 2)
        projected = cmap.pca().project(expected)  # (N, 2)
        torch.testing.assert_close(projected, torch.tensor(cmap.points, dtype=torch.float64))
    assert context_map(model, SENTENCES, layer=1).data["map"]["layer"] == 1


# ---------------------------------------------------------------------------------------------
# BLEU: equal to lib.bleu and sacrebleu
# ---------------------------------------------------------------------------------------------

WORDS = st.sampled_from(["le", "chat", "est", "sur", "la", "table", ".", "il", "a", "faim"])
SENT = st.lists(WORDS, min_size=0, max_size=12).map(" ".join)


def assert_same(ours: dict, theirs, exact_counts: bool = True):
    assert ours["score"] == pytest.approx(theirs.score, abs=1e-9)
    assert ours["bp"] == pytest.approx(theirs.bp, abs=1e-12)
    assert ours["precisions"] == pytest.approx(list(theirs.precisions), abs=1e-9)
    assert (ours["sys_len"], ours["ref_len"]) == (theirs.sys_len, theirs.ref_len)
    if exact_counts:
        assert ours["counts"] == list(theirs.counts)
        assert ours["totals"] == list(theirs.totals)


@settings(max_examples=60, deadline=None)
@given(hyp=SENT, refs=st.lists(SENT.filter(bool), min_size=1, max_size=3))
def test_sentence_numbers_equal_lib_bleu_and_sacrebleu(hyp, refs):
    trace = bleu_breakdown(hyp, refs)
    assert_same(trace.result, bleu.sentence_bleu(hyp, refs))
    assert_same(trace.result, sacrebleu.sentence_bleu(hyp, refs))
    for n, rows in enumerate(trace.details, start=1):  # the n-gram table adds up to the counts
        assert sum(k for *_, k in rows) == trace.counts[n - 1]
        assert sum(c for _, c, _, _ in rows) == trace.totals[n - 1]
    marked = [sum(m == "m" for m in row) for row in trace.marks[0]["hyp"]]
    assert marked[0] == trace.counts[0]  # unigrams: one credited token per match


@settings(max_examples=30, deadline=None)
@given(data=st.lists(st.tuples(SENT, st.lists(SENT.filter(bool), min_size=1, max_size=2)),
                     min_size=1, max_size=4))
def test_corpus_numbers_equal_lib_bleu_and_sacrebleu(data):
    hyps, refs = [h for h, _ in data], [r for _, r in data]
    trace = bleu_breakdown(hyps, refs)
    assert_same(trace.result, bleu.corpus_bleu(hyps, refs, layout="per-hypothesis"))
    assert_same(trace.result, sacrebleu.corpus_bleu(hyps, reference_streams(refs)))
    assert trace.sentence_scores == [bleu.sentence_bleu(h, r).score for h, r in data]


def test_bleu_view_highlights_clipped_and_matched_tokens():
    view = bleu_explorer("le le le chat", ["le chat", "un chat"])
    marks = view.trace.marks[0]["hyp"]
    assert marks[0] == ["m", "x", "x", "m"]  # "le" credited once (its clip limit), "chat" once
    assert marks[1] == ["", "", "m", "m"]  # the bigram "le chat"
    assert view.data["marks"] == view.trace.marks and "references" not in view.data


# ---------------------------------------------------------------------------------------------
# Live widgets (ipywidgets 8 here; the same calls exist in 7.7.1)
# ---------------------------------------------------------------------------------------------


def shown(box) -> str:
    """The HTML the live view's HTML widget currently shows."""
    return box.live.area.value


def test_live_views_draw_into_an_html_widget_that_runs_their_script(model):
    """Not an Output: widgetsnbextension 3.6.7-3.6.10 (Colab's pin) cannot create one in the
    classic Notebook, and its first render ran no script there. An HTML widget sets innerHTML,
    which runs no <script>, so the fragment's <style onload> runs it (static/activate.js)."""
    import ipywidgets

    box = live_beam(model, "I am cold.", beam_size=2)
    assert isinstance(box.live.area, ipywidgets.HTML)
    assert not any(isinstance(child, ipywidgets.Output) for child in box.children)
    html = shown(box)
    assert html.startswith('<div class="s2sw-out"') and html.count("<style onload=") == 1
    assert "Output(" not in (WIDGETS / "live.py").read_text(encoding="utf-8")


def test_live_beam_redraws_on_every_control(model):
    box = live_beam(model, "I am cold.", beam_size=3)
    import ipywidgets

    assert isinstance(box, ipywidgets.VBox)
    live = box.live
    assert "k = 3" in shown(box)
    before = shown(box)
    live.controls["beam_size"].value = 2
    assert shown(box) != before and "k = 2" in shown(box)
    assert live.view.trace.translation == model.translate(["I am cold."], beam_size=2)[0]
    live.controls["alpha"].value = 1.0
    assert "α = 1" in shown(box)
    live.controls["sentence"].value = "We won!"
    assert "«We won!»" in shown(box)
    live.controls["max_len"].value = 2
    assert max(n["step"] for n in live.view.trace.trace["nodes"]) <= 2
    live.controls["sentence"].value = "   "
    assert live.error is not None and "empty" in shown(box)


def test_live_hidden_redraws_and_keeps_the_map(model):
    """One set of controls for encoder/decoder and the layer: the view's own buttons (every
    layer is in the view), not ipywidgets that disagree with them."""
    box = live_hidden(model, "I am cold.", map_sentences=SENTENCES)
    live = box.live
    assert list(live.controls) == ["sentence"]
    assert live.view.data["map"]["sentences"] == SENTENCES
    live.controls["sentence"].value = "Tom is my friend."
    assert "Tom is my friend." in shown(box)
    assert live.view.trace.source == tokenize("Tom is my friend.")
    assert live.view.data["map"]["sentences"] == SENTENCES
    assert live.view.data["map"]["marks"][0]["label"] == "«Tom is my friend.»"
    assert set(live.view.data["panels"]) == {"enc1", "dec1", "enc2", "dec2"}


def test_live_stepper_and_bleu_redraw(model):
    box = live_stepper(model, "I am cold.")
    box.live.controls["prefix"].value = "J'ai"
    assert box.live.view.data["prefix"] == "J'ai"
    box.live.controls["top_k"].value = 3
    assert all(len(s["top"]) == 3 for s in box.live.view.trace.steps)

    box = live_bleu("Le chat.", ["Le chat est là."])
    score = bleu.sentence_bleu("Le chat est là.", ["Le chat est là."]).score
    box.live.controls["hypothesis"].value = "Le chat est là."
    assert box.live.view.data["result"]["score"] == score and f"{score:.2f}" in shown(box)
    box.live.controls["references"].value = "\n"
    assert box.live.error is not None


def test_live_widgets_on_ipywidgets_7():
    """The live tests again, on ipywidgets 7.x (Colab ships 7.7.1) installed in a folder:
    `pip install --no-deps --target DIR ipywidgets==7.7.1 ipython_genutils`, then set
    IPYWIDGETS7_PATH=DIR. Skipped without it."""
    folder = os.environ.get("IPYWIDGETS7_PATH")
    if not folder:
        pytest.skip("set IPYWIDGETS7_PATH to a folder holding ipywidgets 7.x")
    code = ("import ipywidgets, torch, test_widgets as T; "
            "assert ipywidgets.__version__.startswith('7.'), ipywidgets.__version__; "
            "torch.set_num_threads(1); m = T.make_model().eval(); "
            "T.test_live_beam_redraws_on_every_control(m); "
            "T.test_live_hidden_redraws_and_keeps_the_map(m); "
            "T.test_live_stepper_and_bleu_redraw(m)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT / "tests"), str(ROOT)])}
    result = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_decoding_widgets_bound_their_length_cap():
    """hidden_state_explorer and beam_explorer decode without a source cap: max_len=10**9 was
    accepted; above search.MAX_FREE_LEN it is refused before any step."""
    from lib.widgets import beam_explorer, hidden_state_explorer

    model = tiny_model(0)
    for call in (lambda: hidden_state_explorer(model, "en1 en2", max_len=10**9),
                 lambda: beam_explorer(model, "en1 en2", max_len=10**9)):
        with pytest.raises(ValueError, match="at most MAX_FREE_LEN=1,000 without source_cap"):
            call()


def test_numpy_integers_are_accepted_and_json_gets_python_ints(model):
    import numpy as np
    cap = capture_beam(model, "I am cold.", beam_size=np.int64(2), max_len=np.int64(5))
    assert cap.to_dict() == capture_beam(model, "I am cold.", beam_size=2, max_len=5).to_dict()
    json.dumps(cap.to_dict())
    steps = capture_steps(model, "I am cold.", "Je", top_k=np.int64(3))
    assert steps.to_dict() == capture_steps(model, "I am cold.", "Je", top_k=3).to_dict()
    view = hidden_state_explorer(model, "I am cold.", units=np.int64(4), layer=np.int64(1))
    assert view.data == hidden_state_explorer(model, "I am cold.", units=4, layer=1).data
    json.dumps(view.data)


def test_flags_zero_units_and_non_token_prefixes_are_refused(model):
    from lib.widgets.stepper import StepperView
    with pytest.raises(ValueError, match="units .* >= 1"):
        hidden_state_explorer(model, "I am cold.", units=0)
    with pytest.raises(ValueError, match="units"):
        hidden_state_explorer(model, "I am cold.", units=True)
    with pytest.raises(ValueError, match="layer must be an integer between 1 and 2"):
        hidden_state_explorer(model, "I am cold.", layer=True)
    with pytest.raises(TypeError, match="prefix must be French text or a list of token"):
        decoder_stepper(model, "I am cold.", prefix=[5, 6])
    with pytest.raises(ValueError, match="top_k"):
        decoder_stepper(model, "I am cold.", top_k=True)
    trace = capture_steps(model, "I am cold.")
    for start in (True, 0, len(trace.steps) + 1):
        with pytest.raises(ValueError, match="start must be a step between 1 and"):
            StepperView(trace, start=start)
    StepperView(trace, start=1)


def test_bleu_explorer_names_the_argument_of_the_wrong_type():
    with pytest.raises(TypeError, match="hypotheses must be a str .* got 123"):
        bleu_explorer(123, ["a"])
    with pytest.raises(TypeError, match="references must be a list .* got 7"):
        bleu_explorer("a b", 7)
    with pytest.raises(TypeError, match="references must be a list of str"):
        bleu_explorer(["a b"], [[1]])
    with pytest.raises(TypeError, match="hypotheses"):
        bleu_breakdown(["a", 3], [["a"], ["b"]])


def test_attention_explorer_refuses_a_flag_as_its_start_step(model):
    import numpy as np
    from conftest import with_attention

    from lib.widgets import attention_explorer
    attending = with_attention(model, max_len=9, seed=0).eval()
    with pytest.raises(ValueError, match="start must be a step between 1 and"):
        attention_explorer(attending, "I am cold.", start=True)
    view = attention_explorer(attending, "I am cold.", start=np.int64(1))
    assert view.data["start"] == 1 and type(view.data["start"]) is int

"""lib.widgets.attention_view: the attention explorer shows the weights the model decodes with.

The oracle is a decoding written here step by step (`model.decoder.step` with its weights,
greedy's argmax and `lib.search`'s length cap), not the view's path (lib.search.greedy, then
lib.attention.attention_weights teacher-forced): the tokens, the weights and the probabilities
must agree, and the output is what `model.translate` returns. A tiny random attention model on
a hand-written vocabulary (no corpus needed); its attention is made peaky, so rows differ.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import ipywidgets
import pytest
import torch
from conftest import with_attention
from test_widgets import FORBIDDEN, make_model, markup, noscript

from lib.attention import attention_weights
from lib.data import EOS, SOS, detokenize
from lib.search import SOURCE_CAP, log_probs
from lib.widgets import (
    AttentionTrace,
    AttentionView,
    attention_explorer,
    capture_attention,
    live_attention,
)
from lib.widgets.render import asset

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("one_thread")

SENTENCE = "She is reading a book."


def make_attention_model(seed: int = 0, max_tgt_len: int = 9, sharpen: float = 30.0):
    """test_widgets' tiny model with additive attention; v scaled so the weights are peaky."""
    model = with_attention(make_model(seed=seed, max_tgt_len=max_tgt_len), max_len=max_tgt_len,
                           seed=seed)
    with torch.no_grad():
        model.decoder.attention.v.weight.mul_(sharpen)
    return model.eval()


@pytest.fixture(scope="module")
def model():
    return make_attention_model()


def decode_by_hand(model, sentence: str):
    """Greedy decoding one step at a time, with the weights of each step: tokens, weights
    (T, S), log P (T,). Stops at <eos> or at min(max_tgt_len, 2 S + 6), as translate does."""
    src, lengths = model.prepare([sentence])  # (1, S)
    a, b = SOURCE_CAP
    cap = min(model.config.max_tgt_len, a * src.size(1) + b)
    with torch.no_grad():
        _, state, memory = model.encode(src, lengths)
        prev = torch.tensor([SOS])
        tokens, rows, logps = [], [], []
        for _ in range(cap):
            logits, state, w = model.decoder.step(prev, state, memory, return_attention=True)
            lp = log_probs(logits)[0]  # (V,)
            tok = int(lp.argmax())
            tokens.append(tok)
            rows.append(w[0])
            logps.append(float(lp[tok]))
            if tok == EOS:
                break
            prev = torch.tensor([tok])
    return tokens, torch.stack(rows), logps  # (T,), (T, S), (T,)


@pytest.mark.parametrize("sentence", [SENTENCE, "I am cold, zorglub!", "We won!"])
def test_the_view_embeds_the_weights_the_model_decodes_with(model, sentence):
    view = attention_explorer(model, sentence)
    data, trace = view.data, view.trace
    tokens, weights, logps = decode_by_hand(model, sentence)
    itos = model.tgt_vocab.itos
    assert data["output"] == [itos[t] for t in tokens]
    assert data["translation"] == model.translate([sentence])[0]
    assert data["translation"] == detokenize([itos[t] for t in tokens if t != EOS])
    assert data["capped"] == (tokens[-1] != EOS)
    # the trace keeps the full precision, the page 4 significant digits
    assert torch.allclose(torch.tensor(trace.weights), weights, atol=1e-6)
    embedded = torch.tensor(data["weights"])  # (T, S)
    assert embedded.shape == weights.shape == (len(tokens), len(data["source"]))
    assert torch.allclose(embedded, weights, rtol=5e-4, atol=1e-7)
    assert torch.allclose(embedded.sum(1), torch.ones(len(tokens)), atol=2e-3)
    assert torch.allclose(torch.tensor(data["p"]), torch.tensor(logps).exp(), rtol=5e-4)
    # neither rows nor columns are alike (beyond the rounding): a swap would be seen
    assert not torch.allclose(weights[0], weights[-1], rtol=5e-3, atol=0)
    assert float(weights.max()) > 2 * float(weights.min())


def test_the_sentence_gets_the_same_weights_in_a_padded_batch(model):
    """The view decodes one sentence; batched with a longer one, its row of lib's
    attention_weights is the same, and the padded positions get exactly zero."""
    view = attention_explorer(model, "We won!")
    ids = model.tgt_vocab.encode(view.data["output"])
    src, lengths = model.prepare(["We won!", SENTENCE])  # (2, S_max): the first is padded
    S = len(view.data["source"])
    assert S < src.size(1)
    tgt = torch.full((2, len(ids)), EOS)
    tgt[0] = torch.tensor(ids)
    batched = attention_weights(model, src, lengths, tgt)[0]  # (T, S_max)
    assert torch.equal(batched[:, S:], torch.zeros(len(ids), src.size(1) - S))
    assert torch.allclose(batched[:, :S], torch.tensor(view.trace.weights), atol=1e-6)


def test_source_tokens_and_unknown_words(model):
    view = attention_explorer(model, "I am cold, zorglub!")
    assert view.data["source"] == ["I", "am", "cold", ",", "zorglub", "!"]
    assert view.data["unknown"] == [False, False, False, True, True, False]


def test_the_length_cap_and_the_first_step(model):
    view = attention_explorer(model, SENTENCE, max_len=2)
    assert len(view.data["output"]) <= 2
    assert view.data["start"] == len(view.data["output"])  # the whole heatmap first
    assert attention_explorer(model, SENTENCE, start=1).data["start"] == 1


def test_bad_input_is_refused_with_a_clear_error(model):
    plain = make_model().eval()
    with pytest.raises(ValueError, match="no attention"):
        attention_explorer(plain, SENTENCE)
    with pytest.raises(ValueError, match="attention model"):
        live_attention(plain)
    with pytest.raises(ValueError, match="empty"):
        attention_explorer(model, "   ")
    with pytest.raises(TypeError, match="str"):
        attention_explorer(model, ["I am cold."])
    with pytest.raises(ValueError, match="start must be a step between 1 and"):
        attention_explorer(model, SENTENCE, start=0)
    with pytest.raises(ValueError, match="max_len"):
        attention_explorer(model, SENTENCE, max_len=0)


def test_the_trace_survives_json_and_draws_the_same_view(model):
    trace = capture_attention(model, SENTENCE)
    again = AttentionTrace.from_json(trace.to_json())
    assert again == trace
    assert AttentionView(again).data == AttentionView(trace).data


def test_the_view_is_self_contained_and_says_its_result_without_javascript(model):
    view = attention_explorer(model, "I am cold, zorglub!")
    fragment = view.to_html()
    assert not FORBIDDEN.findall(fragment)
    assert fragment.count("<style") == 1 and fragment.count("<script>") == 1
    assert 'class="s2sw s2sw-attention"' in fragment
    data = re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', fragment,
                     re.S).group(1)
    assert json.loads(data)["weights"] == view.data["weights"]
    # one drawing per picture: Python writes no cell of the heatmap, only the result in words
    assert not re.findall(r"<table|<td|<svg|s2s-attn", markup(view))
    assert f"«{view.trace.translation}»".replace("'", "&#x27;") in noscript(view)
    # the view's files are shipped, and the script defines what View.to_html starts
    script = asset("attention.js")
    assert "S2S.draw.attention = function" in script
    assert "S2S.views.attention = function" in script
    assert asset("attention.css")


# ---------------------------------------------------------------------------------------------
# The live widget (ipywidgets 8 here; 7.7.1 below, as Colab has it)
# ---------------------------------------------------------------------------------------------


def test_live_attention_redraws_for_a_typed_sentence(model):
    box = live_attention(model, "I am cold.")
    live = box.live
    assert isinstance(box, ipywidgets.VBox) and isinstance(live.area, ipywidgets.HTML)
    assert list(live.controls) == ["sentence"]
    assert live.area.value.startswith('<div class="s2sw-out"') and "s2sw-attention" in \
        live.area.value
    live.controls["sentence"].value = "Tom is my friend."
    assert live.view.data["source"] == ["Tom", "is", "my", "friend", "."]
    assert live.view.data["translation"] == model.translate(["Tom is my friend."])[0]
    assert "Tom is my friend." in live.area.value
    live.controls["sentence"].value = "   "
    assert live.error is not None and "empty" in live.area.value


def test_live_attention_on_ipywidgets_7():
    """The live test again on ipywidgets 7.x (Colab ships 7.7.1) installed in a folder, as
    tests/test_widgets.py does: `pip install --no-deps --target DIR ipywidgets==7.7.1
    ipython_genutils`, then IPYWIDGETS7_PATH=DIR. Skipped without it."""
    folder = os.environ.get("IPYWIDGETS7_PATH")
    if not folder:
        pytest.skip("set IPYWIDGETS7_PATH to a folder holding ipywidgets 7.x")
    code = ("import ipywidgets, torch, test_attention_view as T; "
            "assert ipywidgets.__version__.startswith('7.'), ipywidgets.__version__; "
            "torch.set_num_threads(1); "
            "T.test_live_attention_redraws_for_a_typed_sentence(T.make_attention_model())")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT / "tests"), str(ROOT)])}
    result = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here")
def test_the_view_of_a_model_on_the_gpu_is_the_cpus(model):
    """The model decodes on its own device; only the numbers come back to the CPU."""
    on_gpu = copy.deepcopy(model).to("cuda")
    cpu, gpu = capture_attention(model, SENTENCE), capture_attention(on_gpu, SENTENCE)
    assert gpu.output == cpu.output
    assert torch.allclose(torch.tensor(gpu.weights), torch.tensor(cpu.weights), atol=1e-4)
    box = live_attention(on_gpu, SENTENCE)
    assert box.live.view.data["output"] == cpu.output

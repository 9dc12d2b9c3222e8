"""Attention explorer: where an attention decoder looks in the source at every step.

    attention_explorer(model, "I am cold.")     # the view (static: works without a kernel)
    live_attention(model)                        # type a sentence, in Jupyter or Colab

`model` is an attention model (`ModelConfig.attention=True`). It decodes greedily, exactly as
`model.translate([sentence])` does (`lib.search.greedy` with the source cap), and
`lib.attention.attention_weights` gives the weights a_{t,j} with which it wrote each token.
The view is a heatmap with one row per output token t and one column per source token j (each
row sums to 1), which static/attention.js builds up row by row as the reader steps through the
decoding (buttons, or the arrow keys), the current row highlighted and its weights as numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from lib.attention import attention_weights
from lib.data import SOS, detokenize
from lib.search import greedy, log_probs
from lib.validate import as_int, is_int
from lib.widgets.live import EXAMPLE, Live
from lib.widgets.live import _text as text_control
from lib.widgets.render import View, esc, num
from lib.widgets.runtime import evaluating
from lib.widgets.trace import Record, _sentence, _source, _text

DIGITS = 4  # significant digits of the embedded weights (render.num): the data stays small


@dataclass
class AttentionTrace(Record):
    """One greedy decoding of one sentence by an attention model, with its weights.

    weights[t][j] is a_{t+1, j+1}: how much the decoder drew on source token j when it wrote
    output[t] (each row sums to 1); logp[t] is the log-probability of output[t].
    """

    sentence: str
    source: list[str]  # source tokens (lib.data.tokenize)
    unknown: list[bool]  # the token is not in the source vocabulary (read as <unk>)
    output: list[str]  # greedy's tokens, <eos> included when it was written
    weights: list  # (T, S)
    logp: list[float]  # (T,)

    @property
    def translation(self) -> str:
        """The output as `Seq2Seq.translate` returns it (detokenised, no <eos>)."""
        return detokenize([t for t in self.output if t != "<eos>"])


def capture_attention(model, sentence: str, max_len: int | None = None) -> AttentionTrace:
    """Decode `sentence` greedily (as `model.translate` does) and keep each step's weights."""
    sentence = _sentence(sentence)
    if not model.attends:
        raise ValueError("this model has no attention (ModelConfig.attention=False): there are "
                         "no attention weights to show; pass an attention model")
    with evaluating(model):
        src, lengths = model.prepare([sentence])  # (1, S), (1,)
        ids = greedy(model, src, lengths, max_len=max_len, source_cap=True)  # (1, T)
        weights = attention_weights(model, src, lengths, ids)[0]  # (T, S)
        sos = torch.full_like(ids[:, :1], SOS)  # (1, 1)
        logits = model(src, lengths, torch.cat([sos, ids[:, :-1]], dim=1))[0]  # (T, V)
        logp = log_probs(logits).gather(1, ids[0].unsqueeze(1))[:, 0]  # (T,)
    source, unknown = _source(model, sentence)
    return AttentionTrace(sentence, source, unknown, _text(model, ids[0].tolist()),
                          weights.float().cpu().tolist(), logp.float().cpu().tolist())


def attention_data(trace: AttentionTrace, start: int | None = None) -> dict:
    """What static/attention.js draws: the tokens, the weights (T, S) rounded to DIGITS
    significant digits, each written token's probability, and the step shown first
    (`start`, 1 .. T; None: the last, the whole heatmap)."""
    T = len(trace.output)
    start = T if start is None else as_int(start)
    if not is_int(start) or not 1 <= start <= max(T, 1):
        raise ValueError(f"start must be a step between 1 and {T}, got {start!r}")
    return {"sentence": trace.sentence, "translation": trace.translation,
            "source": trace.source, "unknown": trace.unknown, "output": trace.output,
            "weights": [[num(w, DIGITS) for w in row] for row in trace.weights],
            "p": [num(math.exp(lp), DIGITS) for lp in trace.logp], "start": start,
            "capped": not trace.output or trace.output[-1] != "<eos>"}


class AttentionView(View):
    """The attention explorer of one sentence (see `attention_explorer`), drawn by
    static/attention.js from `data`."""

    kind = "attention"
    scripts = styles = ("attention",)  # static/attention.js, static/attention.css

    def __init__(self, trace: AttentionTrace, start: int | None = None):
        body = (f'<noscript><p class="s2s-note">Attention while decoding «{esc(trace.sentence)}»: '
                f"«{esc(trace.translation)}». JavaScript is off: the heatmap of the decoder's "
                "weights over the source, step by step, is drawn by JavaScript.</p></noscript>")
        super().__init__(body, attention_data(trace, start),
                         f"Attention: {trace.sentence}", trace)


def attention_explorer(model, sentence: str, max_len: int | None = None,
                       start: int | None = None) -> AttentionView:
    """Step through the greedy decoding of `sentence` and see, at every step, the attention
    weights over the source (a heatmap built up row by row). `start`: the step shown first
    (default: the last, so the whole heatmap shows)."""
    return AttentionView(capture_attention(model, sentence, max_len=max_len), start)


def live_attention(model, sentence: str = EXAMPLE, max_len: int | None = None):
    """The attention explorer with a sentence control: type a sentence, and the model decodes
    it on its own device (CPU or GPU). The steps switch in the view, without the kernel."""
    if not model.attends:  # before any control is drawn
        raise ValueError("live_attention needs an attention model (ModelConfig.attention=True)")

    def build(sentence):
        return attention_explorer(model, sentence, max_len=max_len)

    return Live({"sentence": text_control(sentence, "English:")}, build, [["sentence"]]).box

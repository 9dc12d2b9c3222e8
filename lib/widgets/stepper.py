"""Decoder step-through: the prediction head's top-k next tokens at every decoding step.

    decoder_stepper(model, "I am cold.")                     # greedy decoding
    decoder_stepper(model, "I am cold.", prefix="Je suis")   # force a prefix, then greedy

Forcing a prefix is teacher forcing made interactive: the decoder is fed your tokens instead of
its own predictions, and the continuation shows how the rest of the sentence follows from them.
Python records the steps (`lib.widgets.trace.capture_steps`); static/stepper.js draws them.
"""

from __future__ import annotations

from lib.data import detokenize
from lib.validate import as_int, is_int
from lib.widgets.render import View, esc
from lib.widgets.trace import StepTrace, capture_steps


def stepper_data(trace: StepTrace, start: int | None = None) -> dict:
    """What static/stepper.js draws: every step (the token read, the top k with their log P,
    the token written, forced or greedy's) and the sentences written, detokenised as
    `Seq2Seq.translate` returns them."""
    steps = [dict(s, prev_forced=i > 0 and trace.steps[i - 1]["forced"])
             for i, s in enumerate(trace.steps)]
    n_forced = sum(s["forced"] for s in steps)
    start = start if start is None else as_int(start)
    if start is not None and (not is_int(start) or not 1 <= start <= max(len(steps), 1)):
        raise ValueError(f"start must be a step between 1 and {len(steps)}, got {start!r}")
    return {"sentence": trace.sentence, "T": len(steps),
            "start": start or min(n_forced + 1, len(steps)), "steps": steps,
            "translation": trace.translation, "prefix": detokenize(trace.prefix),
            "greedy": detokenize([t for t in trace.greedy if t != "<eos>"]),
            "log_prob": trace.log_prob, "prefix_unknown": trace.prefix_unknown,
            "capped": not steps or steps[-1]["token"] != "<eos>"}


class StepperView(View):
    """The decoder step-through of one sentence (see `decoder_stepper`)."""

    kind = "stepper"
    scripts = styles = ("stepper",)  # static/stepper.js, static/stepper.css

    def __init__(self, trace: StepTrace, start: int | None = None):
        body = (f'<noscript><p class="s2s-note">Decoding «{esc(trace.sentence)}»: '
                f"«{esc(trace.translation)}». JavaScript is off: the decoder's steps and their "
                "next-token probabilities are drawn by JavaScript.</p></noscript>")
        super().__init__(body, stepper_data(trace, start), f"Decoder steps: {trace.sentence}",
                         trace)


def decoder_stepper(model, sentence: str, prefix: str | list[str] = "", top_k: int = 8,
                    max_len: int | None = None) -> StepperView:
    """Step through the decoding of `sentence`: the top-k next-token probabilities at every
    step; `prefix` (French text) is forced first, then the decoder continues greedily."""
    return StepperView(capture_steps(model, sentence, prefix, top_k=top_k, max_len=max_len))

"""Beam explorer: the tree of hypotheses that beam search considered, step by step.

    beam_explorer(model, "I am cold.", beam_size=3)

Drawn from `lib.search.beam_search(..., trace=True).trace`: every step's 2k best candidates,
which stayed in the beam (blue), which were pruned (grey, dashed: beyond the k best, or too far
below the step's best with the default pruning margin), which ended with <eos>
(purple), the winner's path (green) and, beside it, the path greedy search takes (orange).
"""

from __future__ import annotations

from lib.search import DEFAULT_ALPHA, normalize
from lib.widgets.render import View, esc
from lib.widgets.trace import BeamCapture, capture_beam


def greedy_steps(cap: BeamCapture) -> list[dict]:
    """Greedy's path for the strip under the tree: each token with its log P, the running
    log P and that normalised like a beam hypothesis ending there (raw / step^alpha)."""
    steps, raw = [], 0.0
    for i, (tok, lp) in enumerate(zip(cap.greedy, cap.greedy_logp), start=1):
        raw += lp
        steps.append({"text": tok, "logp": lp, "raw": raw,
                      "score": float(normalize(raw, i, cap.trace["alpha"]))})
    return steps


def beam_data(cap: BeamCapture) -> dict:
    """What static/beam.js draws: the search's trace, the sentences, greedy's path."""
    return {**cap.trace, "sentence": cap.sentence, "translation": cap.translation,
            "greedy_translation": cap.greedy_translation, "greedy": greedy_steps(cap)}


class BeamView(View):
    """The beam explorer of one search (see `beam_explorer`), drawn by static/beam.js from
    `data` (the Playground draws its own searches with the same script)."""

    kind = "beam"
    scripts = styles = ("beam",)  # static/beam.js, static/beam.css

    def __init__(self, cap: BeamCapture):
        t = cap.trace
        on = f" on «{esc(cap.sentence)}»" if cap.sentence else ""
        body = (f'<noscript><p class="s2s-note">Beam search{on} (k = {t["beam_size"]}, α = '
                f'{t["alpha"]:g}): «{esc(cap.translation)}»; greedy: '
                f"«{esc(cap.greedy_translation)}». JavaScript is off: the tree of the hypotheses "
                "it considered is drawn by JavaScript.</p></noscript>")
        super().__init__(body, beam_data(cap), f"Beam search: {cap.sentence}".rstrip(": "), cap)


def beam_explorer(model, sentence: str = "", beam_size: int = 3, alpha: float | None = None,
                  max_len: int | None = None) -> BeamView:
    """Run beam search on `sentence` with a trace and draw its tree (alpha None: the default
    of `lib.search`). The winner is what `model.translate([sentence], beam_size, ...)` gives.

    `model` may also be a `lib.experiments.toy.TableModel` (no sentence needed): the chapter's
    hand-set
    probability tables, e.g. `beam_explorer(TableModel(walkthrough_table()), beam_size=2)`.
    """
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    return BeamView(capture_beam(model, sentence, beam_size, alpha, max_len))

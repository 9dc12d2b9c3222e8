"""Decoder step-through: the prediction head's top-k next tokens at every decoding step.

    decoder_stepper(model, "I am cold.")                     # greedy decoding
    decoder_stepper(model, "I am cold.", prefix="Je suis")   # force a prefix, then greedy

Forcing a prefix is teacher forcing made interactive: the decoder is fed your tokens instead of
its own predictions, and the continuation shows how the rest of the sentence follows from them.
"""

from __future__ import annotations

import math

from lib.widgets.render import View, esc, fmt, header, short, slider
from lib.widgets.trace import StepTrace, capture_steps

BAR_SPAN = 80  # percent of its column that a probability of 1 fills (room for the number)


def _bars(step: dict, t: int) -> str:
    """The top-k bars of one step, with the written token highlighted."""
    written = step["token"]
    cls = "force" if step["forced"] else "pick"
    rows = []
    for tok, lp in step["top"]:
        p = math.exp(lp)
        mark = f" {cls}" if tok == written else ""
        tag = ""
        if tok == written:
            colour = "var(--keep)" if step["forced"] else "var(--good)"
            tag = f'<span class="s2s-tag" style="background:{colour}">' \
                  f'{"forced" if step["forced"] else "greedy"}</span>'
        rows.append(f'<span class="w{" pick" if mark else ""}" title="{esc(tok)}">'
                    f"{esc(short(tok))}</span>"
                    f'<span class="bw"><span class="b{mark}" style="width:{BAR_SPAN * p:.1f}%">'
                    f'</span><span class="p">{100 * p:.1f}%{tag}</span></span>')
    if written not in [tok for tok, _ in step["top"]]:  # a forced token outside the top k
        p = math.exp(step["logp"])
        rows.append(f'<span class="gap">… {step["rank"] - len(step["top"]) - 1} more …</span>'
                    f'<span class="w pick">{esc(short(written))}</span><span class="bw">'
                    f'<span class="b force" style="width:{BAR_SPAN * p:.1f}%"></span>'
                    f'<span class="p">{100 * p:.2g}%<span class="s2s-tag" style="background:'
                    f'var(--keep)">forced</span></span></span>')
    prev = esc(step["input"])
    how = "your forced token" if t > 1 and step.get("prev_forced") else (
        "the start token" if t == 1 else "its own previous prediction")
    loss = (f' · −log P(«{esc(written)}») = {fmt(-step["logp"])}, this step\'s term of the '
            f"training loss (eq. 7)" if step["forced"] else "")
    return (f'<div class="s2s-step" data-step="{t}"><h5>Step {t}: the decoder reads '
            f"«{prev}» ({how}); P(next token) from the prediction head, top {len(step['top'])}"
            f'{loss}</h5><div class="s2s-bars">' + "".join(rows) + "</div></div>")


class StepperView(View):
    """The decoder step-through of one sentence (see `decoder_stepper`)."""

    kind = "stepper"
    scripts = styles = ("stepper",)  # static/stepper.js, static/stepper.css

    def __init__(self, trace: StepTrace, start: int | None = None):
        steps = [dict(s, prev_forced=i > 0 and trace.steps[i - 1]["forced"])
                 for i, s in enumerate(trace.steps)]
        T = len(steps)
        n_forced = sum(s["forced"] for s in steps)
        start = start or min(n_forced + 1, T)
        chips = ['<span class="s2s-chip sos">&lt;sos&gt;<small>start</small></span>']
        for t, s in enumerate(steps, start=1):
            cls = "s2s-chip forced" if s["forced"] else "s2s-chip"
            tip = f"step {t}: P = {math.exp(s['logp']):.3f}, rank {s['rank']}" + (
                " (forced)" if s["forced"] else "")
            chips.append(f'<button type="button" class="{cls}" data-step="{t}" '
                         f'title="{esc(tip)}">{esc(short(s["token"]))}'
                         f"<small>{100 * math.exp(s['logp']):.0f}%</small></button>")
        output = esc(trace.translation) or "(nothing)"
        lines = []
        if trace.prefix:
            lines.append(f"Forced prefix «{esc(' '.join(trace.prefix))}» (dashed, blue), then "
                         f"greedy: «{output}»")
            plain = " ".join(t for t in trace.greedy if t != "<eos>")
            lines.append(f"Without forcing, greedy writes: «{esc(plain)}»")
        else:
            lines.append(f"Greedy decoding writes: «{output}»")
        lines.append(f"log P(output | source) = Σ log P of the written tokens = "
                     f"{fmt(trace.log_prob, 3)}")
        if trace.prefix_unknown:
            lines.append('<span class="s2s-err">Not in the French vocabulary (read as '
                         f"&lt;unk&gt;): {esc(', '.join(trace.prefix_unknown))}</span>")
        if not steps or steps[-1]["token"] != "<eos>":
            lines.append("It stopped at the length cap before writing &lt;eos&gt;.")
        body = (
            header(f"Decoding «{esc(trace.sentence)}» step by step", png=False)
            + '<p class="s2s-sub">At each step the decoder reads the previous token and the '
            "prediction head turns its state into probabilities for the next token (eq. 8). "
            "Greedy writes the most probable one; a forced prefix writes yours instead "
            "(teacher forcing). Click a token or move the slider.</p>"
            f'<div class="s2s-chips">{"".join(chips)}</div>'
            f'<div class="s2s-bar">{slider("step", 1, T, start, "step")}'
            f'<span class="s2s-js s2s-stepval"></span></div>'
            + "".join(_bars(s, t) for t, s in enumerate(steps, start=1))
            + f'<p class="s2s-summary">{"<br>".join(lines)}</p>'
            '<noscript><p class="s2s-note">JavaScript is off: every step is listed; choosing '
            "one needs JavaScript.</p></noscript>")
        super().__init__(body, {"T": T, "start": start}, f"Decoder steps: {trace.sentence}",
                         trace)


def decoder_stepper(model, sentence: str, prefix: str | list[str] = "", top_k: int = 8,
                    max_len: int | None = None) -> StepperView:
    """Step through the decoding of `sentence`: the top-k next-token probabilities at every
    step; `prefix` (French text) is forced first, then the decoder continues greedily."""
    return StepperView(capture_steps(model, sentence, prefix, top_k=top_k, max_len=max_len))

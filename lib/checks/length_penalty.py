"""Checkers for the beam-search chapter's two length penalties.

* `check_length_normalisation(fn)`: `fn(raw, lengths, alpha)` -> log P / L^alpha, and which of
  the walk-through's finished hypotheses it makes win, against `lib.search`.
* `check_gnmt(score_fn, flip_fn)`: GNMT's penalty ((5 + L) / 6)^alpha, and the alpha at which it
  lets the longer of two hypotheses win.

Each returns a `lib.checks.harness.CheckResult` that says in words what is wrong;
`lib.checks.search` imports both, so the chapter reaches them with its other checkers.
"""

from __future__ import annotations

import math

import torch

from lib.checks.harness import (
    CheckResult,
    Mismatch,
    call,
    expect_close,
    expect_shape,
    run_checks,
    tokens_text,
)
from lib.experiments.toy import TableModel, walkthrough_table
from lib.search import beam_search, normalize
from lib.validate import is_number

# ---------------------------------------------------------------------------------------------
# Exercise: length normalisation
# ---------------------------------------------------------------------------------------------


NORM_NAMES = ("raw", "lengths", "alpha")


def check_length_normalisation(fn) -> CheckResult:
    """Check `fn(raw (N,), lengths (N,), alpha) -> raw / lengths**alpha (N,)`."""
    raw = torch.tensor([-0.5, -2.0, -3.5, -6.0, -9.0])
    lengths = torch.tensor([1, 2, 4, 6, 10])

    def values():
        for alpha in (0.0, 0.6, 1.0, 1.5):
            got = torch.as_tensor(call(fn, raw, lengths, alpha, names=NORM_NAMES))
            expected = normalize(raw, lengths.double(), alpha)
            expect_shape(f"the scores for alpha={alpha}", got, (len(raw),))
            if torch.allclose(got.double(), expected.double(), atol=1e-5):
                continue
            if torch.allclose(got.double(), (raw * lengths.double() ** alpha).double()):
                raise Mismatch(f"alpha={alpha}: you multiplied by L^alpha; divide, so that a "
                               f"long sentence's many log-probabilities are averaged, not "
                               f"amplified")
            if torch.allclose(got.double(), (raw / lengths.double()).double()):
                raise Mismatch(f"alpha={alpha}: you divided by L, ignoring alpha: the score "
                               f"is log P / L^alpha")
            if torch.allclose(got.double(), (raw.exp() / lengths.double() ** alpha).double()):
                raise Mismatch(f"alpha={alpha}: you normalised the probability; normalise the "
                               f"log-probability log P")
            if alpha == 0.0:
                raise Mismatch("alpha=0 must leave the raw log P unchanged (no normalisation)")
            expect_close(f"the scores for alpha={alpha}", got, expected)
        return "log P / L^alpha for alpha in 0, 0.6, 1, 1.5"

    def winner():
        model = TableModel(walkthrough_table(), max_len=3)
        src, lengths_ = model.inputs()
        for alpha in (0.0, 0.6, 1.0):
            res = beam_search(model, src, lengths_, beam_size=2, alpha=alpha, trace=True)
            pool = res.trace
            finished = [n for n in pool.nodes if n.status == "finished"]
            raws = torch.tensor([n.raw for n in finished])
            lens = torch.tensor([n.step for n in finished])
            got = torch.as_tensor(call(fn, raws, lens, alpha, names=NORM_NAMES))
            pick = finished[int(got.argmax())]
            want = res.nbest[0][0][0]  # the winner's ids
            if pool.path(pick.id) != want:
                raise Mismatch(f"alpha={alpha}: with your scores the walk-through's answer would "
                               f"be {tokens_text(model, pool.path(pick.id))}, but beam search "
                               f"picks {tokens_text(model, want)} (L counts the tokens, <eos> "
                               f"included)")
        return "the walk-through's winner for alpha in 0, 0.6, 1"

    return run_checks("length normalisation", values, winner)


# ---------------------------------------------------------------------------------------------
# GNMT's length penalty, and the alpha at which it changes a ranking
# ---------------------------------------------------------------------------------------------

GNMT_NAMES = ("raw", "lengths", "alpha")
FLIP_NAMES = ("raw_short", "len_short", "raw_long", "len_long")


def gnmt_penalty(lengths: torch.Tensor, alpha: float) -> torch.Tensor:
    """Wu et al. (2016)'s length penalty lp(Y) = ((5 + |Y|) / 6) ** alpha."""
    return ((5.0 + lengths.double()) / 6.0) ** alpha


def gnmt_flip(raw_short: float, len_short: int, raw_long: float, len_long: int) -> float:
    """The alpha above which the longer of two finished hypotheses wins under GNMT's penalty:
    raw_s / lp_s = raw_l / lp_l  <=>  alpha = log(raw_l / raw_s) / log((5 + L_l) / (5 + L_s))."""
    return math.log(raw_long / raw_short) / math.log((5 + len_long) / (5 + len_short))


def check_gnmt(score_fn, flip_fn=None) -> CheckResult:
    """`score_fn(raw (N,), lengths (N,), alpha)` -> log P / lp (N,) with GNMT's length penalty;
    `flip_fn(raw_short, len_short, raw_long, len_long)` -> the alpha at which the longer
    hypothesis starts to win (both log-probabilities negative, the longer one lower)."""
    raw = torch.tensor([-0.5, -2.0, -3.5, -6.0, -9.0], dtype=torch.float64)
    lengths = torch.tensor([1, 2, 4, 6, 10])

    def scores():
        for alpha in (0.0, 0.6, 1.0, 1.5):
            got = call(score_fn, raw.clone(), lengths.clone(), alpha, names=GNMT_NAMES)
            got = torch.as_tensor(got).double()
            expect_shape(f"the scores for alpha={alpha}", got, (len(raw),))
            want = raw / gnmt_penalty(lengths, alpha)
            if torch.allclose(got, want, atol=1e-6):
                continue
            L = lengths.double()
            mistakes = {
                "you divided by L^alpha, the penalty of the chapter; GNMT's is "
                "((5 + L) / 6)^alpha": raw / L ** alpha,
                "you multiplied by the penalty; divide the log-probability by it, so that "
                "long outputs are not punished more": raw * gnmt_penalty(lengths, alpha),
                "you left out the division by 6: it does not change any ranking, but the "
                "scores are not GNMT's (with it, a one-token output keeps log P)":
                    raw / (5.0 + L) ** alpha,
                "you divided by ((5 + L) / 6) without the power alpha": raw / ((5.0 + L) / 6.0),
            }
            for message, value in mistakes.items():
                if torch.allclose(got, value, atol=1e-6):
                    raise Mismatch(f"alpha={alpha}: {message}")
            expect_close(f"the scores for alpha={alpha}", got, want)
        return "log P / ((5 + L) / 6)^alpha for alpha in 0, 0.6, 1, 1.5"

    def flip():
        if flip_fn is None:
            return "no flip function given"
        cases = [(-2.0, 3, -2.6, 6), (-1.2, 2, -3.0, 9), (-4.0, 5, -4.4, 7)]
        for rs, ls, rl, ll in cases:
            got = call(flip_fn, rs, ls, rl, ll, names=FLIP_NAMES)
            if not is_number(got):
                raise Mismatch(f"return the alpha as a number, got {type(got).__name__}")
            want = gnmt_flip(rs, ls, rl, ll)
            plain = math.log(rl / rs) / math.log(ll / ls)
            if abs(got - want) <= 1e-4 * max(1.0, abs(want)):
                continue
            if abs(got - plain) <= 1e-4 * max(1.0, abs(plain)):
                raise Mismatch(f"for log P {rs} (L={ls}) against {rl} (L={ll}) you found "
                               f"{got:.3f}, where L^alpha flips the ranking; with GNMT's "
                               f"penalty the lengths enter as 5 + L, so it flips later, at "
                               f"{want:.3f}")
            raise Mismatch(f"for log P {rs} (L={ls}) against {rl} (L={ll}) the ranking "
                           f"changes at alpha = {want:.3f}, you returned {got}. Set the two "
                           f"scores equal and solve for alpha (take logs of both sides)")
        return "the alpha where the longer hypothesis starts to win, on three pairs"

    return run_checks("GNMT's length penalty", scores, flip)

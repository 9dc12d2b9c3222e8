"""Checkers for the exercises of "Teacher forcing".

    check_reversed_shift(make_reversed_io)  target id lists -> (tgt_in, tgt_out) for a decoder
                                            that writes right to left
    check_schedule(inverse_sigmoid, k, steps)  the inverse-sigmoid schedule, 0.5 mid-run
    check_error_after_error(error_after_error)  wrong-after-wrong and wrong-after-right rates

Each checker runs the learner's function on several cases, compares it with the reference
(`lib.data.collate` of the reversed targets, Bengio et al.'s formula, greedy decoding) and
recognises the usual mistakes (no shift, <eos> fed as an input, padding reversed to the front,
a rising schedule, <pad> after <eos> counted as right, joint instead of conditional rates...).
"""

from __future__ import annotations

import functools
import math

import torch

from lib.checks.harness import CheckResult, Mismatch, call, expect_shape, run_checks
from lib.data import EOS, PAD, SOS, collate, make_batches, pad
from lib.experiments.reversal import reversal_examples, reversal_model
from lib.search import greedy
from lib.train import batch_loss
from lib.validate import is_int

# ---------------------------------------------------------------------------------------------
# make_reversed_io(targets: list[list[int]]) -> (tgt_in (B, T), tgt_out (B, T))
# ---------------------------------------------------------------------------------------------

SHIFT_CASES = [
    [[5, 6, 7]],  # one sentence: no padding
    [[5, 6, 7, 8], [9], [10, 11]],  # different lengths: padding
    [[12], [13, 14, 15, 16, 17]],
]


def _as_pair(got, name: str):
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise Mismatch(f"{name} must return a pair (tgt_in, tgt_out), got {type(got).__name__}")
    tgt_in, tgt_out = got
    for label, x in (("tgt_in", tgt_in), ("tgt_out", tgt_out)):
        if not torch.is_tensor(x):
            raise Mismatch(f"{label} must be a tensor, got {type(x).__name__}")
    return tgt_in.long(), tgt_out.long()


def _reversal_mistakes(targets: list[list[int]]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Typical wrong (tgt_in, tgt_out) for a right-to-left decoder, each with its explanation."""
    forward = collate([([4], t) for t in targets])  # the left-to-right pair
    backward = collate([([4], t[::-1]) for t in targets])  # the right answer
    return {
        "these are the left-to-right inputs and targets: reverse each target's words first":
            (forward.tgt_in, forward.tgt_out),
        "only tgt_out is reversed: the decoder reads the words it has written, so its inputs "
        "must run right to left too (tgt_in is tgt_out shifted by one)":
            (forward.tgt_in, backward.tgt_out),
        "only tgt_in is reversed: the targets must run right to left too, and tgt_in is still "
        "tgt_out shifted by one": (backward.tgt_in, forward.tgt_out),
        "you flipped the padded tensors: the <pad> of a short row moved to the front and "
        "<eos>/<sos> to the wrong ends. Reverse each sentence's words before padding; <sos> "
        "still comes first, <eos> still ends the words, <pad> still fills the end":
            (forward.tgt_in.flip(1), forward.tgt_out.flip(1)),
        "you reversed after adding <sos> and <eos>, so tgt_in ends with <sos> and tgt_out "
        "starts with <eos>. The decoder still starts from <sos> and still learns to stop: "
        "reverse the words, then add <sos> in front and <eos> at the end":
            (pad([([SOS] + t)[::-1] for t in targets]), pad([(t + [EOS])[::-1] for t in targets])),
    }


def _shift_case(fn, targets: list[list[int]]) -> str:
    # the source does not matter here; a right-to-left decoder writes each target backwards
    ref = collate([([4], t[::-1]) for t in targets])
    B, T = ref.tgt_in.shape
    got = call(fn, [list(t) for t in targets], names=("targets",))  # fresh: SHIFT_CASES stays
    tgt_in, tgt_out = _as_pair(got, "make_reversed_io")
    if not (torch.equal(tgt_in, ref.tgt_in) and torch.equal(tgt_out, ref.tgt_out)):
        for why, (w_in, w_out) in _reversal_mistakes(targets).items():
            if (tgt_in.shape == w_in.shape and tgt_out.shape == w_out.shape
                    and torch.equal(tgt_in, w_in) and torch.equal(tgt_out, w_out)):
                raise Mismatch(f"targets {targets}: {why}")
    longest = max(len(t) for t in targets)
    for label, x in (("tgt_in", tgt_in), ("tgt_out", tgt_out)):
        if tuple(x.shape) == (B, longest):
            raise Mismatch(f"{label} has shape {tuple(x.shape)}: one column short. The longest "
                           f"target has {longest} tokens; tgt_in adds <sos> in front and "
                           f"tgt_out adds <eos> at the end, so both have {T} columns")
        expect_shape(label, x, (B, T))
    if torch.equal(tgt_in, ref.tgt_out) and torch.equal(tgt_out, ref.tgt_in):
        raise Mismatch("tgt_in and tgt_out are swapped: the decoder READS <sos> y1 .. yn "
                       "(tgt_in) and must PREDICT y1 .. yn <eos> (tgt_out)")
    if torch.equal(tgt_in, tgt_out):
        raise Mismatch("tgt_in equals tgt_out: you forgot to shift by one. At step t the "
                       "decoder reads y_{t-1} and predicts y_t, so the inputs are the targets "
                       "moved one place to the right, with <sos> in front")
    if bool((tgt_in[:, 0] != SOS).any()):
        raise Mismatch(f"tgt_in must start with <sos> (id {SOS}) in every row; row 0 starts "
                       f"with {int(tgt_in[0, 0])}")
    if bool((tgt_in == EOS).any()):
        raise Mismatch(f"tgt_in contains <eos> (id {EOS}): the decoder never reads <eos>, it "
                       f"only has to predict it, so <eos> belongs in tgt_out only")
    for b, t in enumerate(targets):
        if int(tgt_out[b, len(t)]) != EOS:
            raise Mismatch(f"tgt_out row {b} should have <eos> (id {EOS}) at position "
                           f"{len(t)}, right after its {len(t)} tokens; it has "
                           f"{int(tgt_out[b, len(t)])}")
    for label, x, r in (("tgt_in", tgt_in, ref.tgt_in), ("tgt_out", tgt_out, ref.tgt_out)):
        pad_mask = r == PAD
        if bool((x[pad_mask] != PAD).any()):
            raise Mismatch(f"{label}: the positions after a sentence's end must be <pad> "
                           f"(id {PAD}); found {x[pad_mask].unique().tolist()} there")
        bad = (x != r).nonzero()
        if len(bad):
            b, t = (int(i) for i in bad[0])
            raise Mismatch(f"{label}[{b}, {t}] is {int(x[b, t])}, expected {int(r[b, t])} "
                           f"(as lib.data.collate builds it: {r[b].tolist()})")
    return (f"{B} target(s), lengths {[len(t) for t in targets]}: equal to lib.data.collate "
            f"of the reversed targets")


def check_reversed_shift(fn) -> CheckResult:
    """`fn(targets)` -> padded (tgt_in, tgt_out) for a decoder that writes each target backwards."""
    return run_checks("a right-to-left decoder's inputs and targets",
                      # padded cases first: there a flipped tensor and a sentence reversed
                      # with its <sos>/<eos> differ, so the message can name which it was
                      *[lambda t=t: _shift_case(fn, t)
                        for t in SHIFT_CASES[1:] + SHIFT_CASES[:1]])


# ---------------------------------------------------------------------------------------------
# inverse_sigmoid(step, k) and the k that puts ratio 0.5 in the middle of a run
# ---------------------------------------------------------------------------------------------


def _inverse_sigmoid(step: float, k: float) -> float:
    """Bengio et al.'s inverse-sigmoid schedule: k / (k + exp(step / k)), written as the
    logistic function of z = step / k - ln k so that no exp overflows (step / k = 1000 is
    a ratio of 0, not an OverflowError)."""
    z = step / k - math.log(k)
    return 1 / (1 + math.exp(z)) if z <= 0 else math.exp(-z) / (1 + math.exp(-z))


def _schedule_formula(fn) -> str:
    points = [(0, 5.0), (10, 5.0), (30, 12.0), (120, 25.0), (200, 40.0)]
    for step, k in points:
        got = call(fn, step, k, names=("step", "k"), where=f"step {step}, k {k}")
        try:
            got = float(got)
        except (TypeError, ValueError):
            raise Mismatch(f"inverse_sigmoid({step}, {k}) must return a number, got "
                           f"{type(got).__name__}") from None
        expected = _inverse_sigmoid(step, k)
        if math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-9):
            continue
        if math.isclose(got, 1 - expected, rel_tol=1e-6, abs_tol=1e-9):
            raise Mismatch("your schedule rises from 0 to 1; the teacher-forcing ratio must "
                           "START near 1 (the model's own predictions are useless at first) and "
                           "fall: k / (k + exp(step / k))")
        if step and math.isclose(got, k / (k + math.exp(k / step)), rel_tol=1e-6):
            raise Mismatch("the exponent is step / k, not k / step")
        raise Mismatch(f"inverse_sigmoid({step}, {k}) returned {got:.6g}; k / (k + exp(step / "
                       f"k)) is {expected:.6g}")
    return "inverse_sigmoid agrees with k / (k + exp(step / k))"


def _schedule_k(k, steps: int) -> str:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k):
        raise Mismatch(f"k must be a number, got {k!r}")
    if k < 1:
        raise Mismatch(f"k = {k:.4g}: the schedule needs k >= 1 (at k < 1 it starts below "
                       f"a ratio of 1/2)")
    middle = steps / 2
    ratio = _inverse_sigmoid(middle, k)
    if abs(ratio - 0.5) <= 1e-3:
        return f"k = {k:.3f}: the ratio is {ratio:.4f} at step {middle:g} of {steps}"
    if abs(_inverse_sigmoid(steps, k) - 0.5) <= 1e-3:
        raise Mismatch(f"with k = {k:.4g} the ratio is 0.5 at the LAST step, {steps}; the "
                       f"exercise asks for 0.5 in the middle, at step {middle:g}")
    direction = "larger" if ratio < 0.5 else "smaller"
    raise Mismatch(f"with k = {k:.4g} the ratio at step {middle:g} is {ratio:.4f}, not 0.5; "
                   f"the ratio there grows with k, so try a {direction} k (bisection finds it)")


def check_schedule(fn, k, steps: int) -> CheckResult:
    """`fn(step, k)` is the inverse-sigmoid schedule and `k` gives ratio 0.5 at steps / 2.

    `steps`, the run's length, is the checker's own argument: a bad one raises here, before
    anything is blamed on the learner's `fn` or `k`."""
    if not is_int(steps) or steps < 2:
        raise ValueError(f"check_schedule: steps is the number of training steps, a whole "
                         f"number of at least 2, got {steps!r}")
    return run_checks("a scheduled-sampling schedule",
                      lambda: _schedule_formula(fn), lambda: _schedule_k(k, steps))


# ---------------------------------------------------------------------------------------------
# error_after_error(model, batch) -> (P(wrong | previous wrong), P(wrong | previous right))
# ---------------------------------------------------------------------------------------------


def _free_run(model, batch) -> tuple[torch.Tensor, int]:
    """written (B, T): greedy's tokens with <pad> after <eos>; and the width greedy wrote."""
    T = batch.tgt_out.size(1)
    with torch.no_grad():
        out = greedy(model, batch.src, batch.src_lengths, max_len=T)  # (B, T') <= T
    written = torch.full_like(batch.tgt_out, PAD)
    written[:, :out.size(1)] = out  # after <eos>, greedy wrote <pad>: wrong where real
    return written, out.size(1)


# error_after_error_reference(model, batch, mistake): the typical slips, each with its message
_AFTER_ERROR_MISTAKES = {
    "forced": "these are teacher-forced predictions: every step read the reference, so no "
              "mistake was ever fed back. Decode freely (lib.search.greedy) and compare its "
              "tokens with tgt_out",
    "tgt_in": "you compared the output with tgt_in, the decoder's inputs; at step t the model "
              "predicts tgt_out[:, t], so compare its tokens with tgt_out",
    "pad_ok": "a <pad> written after the model's <eos> counts as right in your rates: where "
              "the target is still real, the sentence stopped too early, so that position is "
              "wrong. Compare all T positions of tgt_out, with <pad> after greedy's <eos>",
    "truncated": "you compared only the columns greedy wrote: where a target is longer than "
                 "the output, the missing positions are wrong (greedy stopped too early). "
                 "Pad the output with <pad> to tgt_out's width and compare all T positions",
    "pads": "padding positions are counted: keep only pairs (t, t + 1) where both are real "
            "target tokens (tgt_out != PAD)",
    "t_only": "you kept pairs whose position t is real but t + 1 is padding: both must be real "
              "target tokens (tgt_out[:, t] and tgt_out[:, t + 1] != PAD)",
    "joint": "these are shares of ALL pairs (joint rates, wrong-then-wrong over every pair); "
             "the exercise asks for conditional rates: divide by the number of pairs whose "
             "token at t was wrong (or right)",
}


def error_after_error_reference(model, batch, mistake: str = "") -> tuple[float, float]:
    """The rates over consecutive real positions (t, t + 1) of the free-running output; with
    `mistake` (a key of _AFTER_ERROR_MISTAKES), what that slip returns instead."""
    real = batch.tgt_out != PAD  # (B, T); tgt_in has the same padding
    if mistake == "forced":  # teacher-forced predictions: no mistake is ever fed back
        with torch.no_grad():
            logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
        wrong = logits.argmax(-1) != batch.tgt_out
    else:
        written, width = _free_run(model, batch)
        wrong = written != (batch.tgt_in if mistake == "tgt_in" else batch.tgt_out)
        if mistake == "pad_ok":
            wrong &= written != PAD
        if mistake == "truncated":
            real = real.clone()
            real[:, width:] = False
    prev, nxt = wrong[:, :-1], wrong[:, 1:]  # (B, T - 1)
    both = real[:, :-1] & real[:, 1:]
    if mistake == "pads":
        both = torch.ones_like(both)
    if mistake == "t_only":
        both = real[:, :-1]
    after_wrong = both & prev
    after_right = both & ~prev
    if mistake == "joint":
        n = max(1, int(both.sum()))
        return float((nxt & after_wrong).sum()) / n, float((nxt & after_right).sum()) / n
    rate = lambda mask: float((nxt & mask).sum()) / max(1, int(mask.sum()))  # noqa: E731
    return rate(after_wrong), rate(after_right)


@functools.lru_cache(maxsize=1)
def _lightly_trained_model():
    """A reversal model after 60 teacher-forced steps: it gets some tokens right, so its two
    rates differ clearly (a random model is wrong almost everywhere). Trained once, in under a
    second; its own seeded batches leave the global random state alone."""
    model = reversal_model(0, hidden=32).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for batch in make_batches(reversal_examples(60 * 32, seed=5), 32, seed=0)[:60]:
        loss = batch_loss(model, batch, 1.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def _random_model(seed: int):
    model = reversal_model(seed)
    with torch.no_grad():  # a random model makes mistakes of every kind
        for p in model.parameters():
            p.mul_(2.0)
    return model


def check_error_after_error(fn) -> CheckResult:
    """`fn(model, batch)` -> (P(wrong at t + 1 | wrong at t), P(wrong at t + 1 | right at t))
    over consecutive real target positions of the model's free-running (greedy) output."""

    def near(a, b):
        return all(math.isclose(g, w, abs_tol=1e-6) for g, w in zip(a, b))

    def case(label, make_model, seed):
        def check():
            model = make_model()
            batch = collate(reversal_examples(40, seed=seed))
            got = call(fn, model, batch, names=("model", "batch"))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise Mismatch("return a pair (after_wrong, after_right) of two numbers")
            got = tuple(float(x) for x in got)
            want = error_after_error_reference(model, batch)
            if near(got, want):
                return (f"{label}: {want[0]:.2f} after a wrong token, {want[1]:.2f} after a "
                        f"right one")
            if near(got, want[::-1]):
                raise Mismatch(f"{label}: the two rates are swapped: first the rate after a "
                               f"wrong token, then after a right one")
            for mistake, why in _AFTER_ERROR_MISTAKES.items():
                if near(got, error_after_error_reference(model, batch, mistake)):
                    raise Mismatch(f"{label}: {why}")
            raise Mismatch(f"{label}: expected ({want[0]:.4f}, {want[1]:.4f}), got "
                           f"({got[0]:.4f}, {got[1]:.4f})")
        return check

    return run_checks("error_after_error",
                      case("a random model (seed 0)", lambda: _random_model(0), 0),
                      case("a lightly trained model", _lightly_trained_model, 1))

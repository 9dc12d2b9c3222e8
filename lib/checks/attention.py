"""Checkers for the attention chapter's exercises.

* `check_all_scores(fn)`: `fn(s, h, W_s, W_h, v)` -> the scores e (B, T, S) of all T decoder
  steps at once, e_{t,j} = v^T tanh(W_s s_t + W_h h_j), against explicit loops.
* `check_masked_softmax(fn)`: `fn(scores, lengths)` -> weights (B, S) that sum to 1 over the
  real positions, are exactly 0 on the padding ("padding got weight" otherwise), and are all 0,
  not nan, on a row with no real position (length 0); differentiable; the scores left as they
  were (an in-place change, `masked_fill_` or `scores[...] = ...`, is named).
* `check_contexts(fn)`: `fn(weights, states)` -> the contexts (B, T, H) of all T steps, from
  weights (B, T, S) and time-major states (S, B, H), against loops.
* `check_offsets(fn)`: `fn(weights)` -> for each digit row t of a reversal heatmap (L + 1, L),
  its peak's column minus L - 1 - t, the column of the digit it copies, against a loop.
* `check_guess(fn, weights)`: `fn(t, L)` -> the column the reader expects the reversal model to
  peak on for output digit t. Refuses what can be known wrong without the model (not a column,
  the diagonal, a state that has not read the copied digit yet) and reports, without grading,
  where the guess and the model's measured weights differ (the off-by-ones named).
* `check_crossover(fn)`: `fn(E, H, A, V, layers)` -> the source length at which attention's
  extra multiply-adds per decoder step equal the whole fixed-vector step's, against a count from
  real layers (`lib.experiments.timing.decoder_step_macs`).

Each returns a `lib.checks.harness.CheckResult` that says in words what is wrong.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch

from lib.attention import AdditiveAttention, masked_softmax, source_mask
from lib.checks.harness import CheckResult, Mismatch, call, expect_close, expect_shape, run_checks
from lib.course.verdicts.wording import count_of
from lib.decoder import Decoder
from lib.experiments.timing import decoder_step_macs

# ---------------------------------------------------------------------------------------------
# The reference answers: lib.attention's masked softmax, and explicit loops where lib
# has no function of its own (all steps' scores and contexts at once)
# ---------------------------------------------------------------------------------------------


def scores_reference(s, h, W_s, W_h, v) -> torch.Tensor:
    """e[b, t, j] = v . tanh(W_s s_{b,t} + W_h h_{b,j}), one sentence, step and position at a
    time."""
    B, S, _ = h.shape
    T = s.size(1)
    out = torch.zeros(B, T, S, dtype=h.dtype)
    for b in range(B):
        for t in range(T):
            query = W_s @ s[b, t]  # (A,)
            for j in range(S):
                out[b, t, j] = v @ torch.tanh(query + W_h @ h[b, j])
    return out


def softmax_reference(scores, lengths) -> torch.Tensor:
    """`lib.attention.masked_softmax` over each row's first lengths[b] positions, zeros after
    them, and zeros on a row of length 0 (where the chapter's masked softmax, which needs a
    real position, gives nan)."""
    mask = source_mask(lengths, scores.size(-1))  # (B, S)
    return masked_softmax(scores, mask).masked_fill(~mask, 0.0)


def contexts_reference(weights, states) -> torch.Tensor:
    """c[b, t] = sum_j a_{b,t,j} h_{j,b}: weights (B, T, S), time-major states (S, B, H)."""
    B, T, S = weights.shape
    return torch.stack([torch.stack([sum(weights[b, t, j] * states[j, b] for j in range(S))
                                     for t in range(T)]) for b in range(B)])


def _tensor(name: str, got) -> torch.Tensor:
    if not torch.is_tensor(got):
        raise Mismatch(f"return a tensor ({name}), got {type(got).__name__}")
    return got


# ---------------------------------------------------------------------------------------------
# 1. all_scores(s, h, W_s, W_h, v) -> e (B, T, S)
# ---------------------------------------------------------------------------------------------


def _score_inputs(seed: int, B: int = 2, T: int = 3, S: int = 5, Hs: int = 6, Hh: int = 4,
                  A: int = 7):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(B, T, Hs, generator=g, dtype=torch.float64)
    h = torch.randn(B, S, Hh, generator=g, dtype=torch.float64)
    W_s = torch.randn(A, Hs, generator=g, dtype=torch.float64)
    W_h = torch.randn(A, Hh, generator=g, dtype=torch.float64)
    v = torch.randn(A, generator=g, dtype=torch.float64)
    return s, h, W_s, W_h, v


def _score_case(fn, seed: int) -> str:
    s, h, W_s, W_h, v = _score_inputs(seed)
    B, S = h.shape[:2]
    T, A = s.size(1), W_s.size(0)
    got = _tensor("the scores e (B, T, S)", call(fn, s, h, W_s, W_h, v,
                                                names=("s", "h", "W_s", "W_h", "v")))
    expected = scores_reference(s, h, W_s, W_h, v)
    got = got.detach().to(torch.float64)
    if got.shape == (B, T, S, A):
        raise Mismatch(f"your scores have shape {tuple(got.shape)}: one vector of size A per "
                       f"step and position; take its dot product with v to get one number "
                       f"e_tj, shape {(B, T, S)}")
    if got.shape == (B, S, T):
        raise Mismatch(f"your scores have shape {tuple(got.shape)}, (B, S, T): the steps and "
                       f"the positions are swapped; row t of sentence b holds step t's scores "
                       f"over the S positions, so give the queries W_s s_t the position axis "
                       f"(unsqueeze(2)) and the keys W_h h_j the step axis (unsqueeze(1))")
    expect_shape("the scores e", got, (B, T, S))
    if torch.allclose(got, expected, atol=1e-6):
        return f"{B} sentences, {T} steps, {S} positions (seed {seed})"
    if torch.allclose(got.sum(-1), torch.ones(B, T, dtype=got.dtype), atol=1e-6) and \
            bool((got >= 0).all()):
        raise Mismatch("your rows sum to 1: you returned the weights (a softmax of the "
                       "scores); this function returns the scores e before any softmax")
    queries = (s @ W_s.T).unsqueeze(2)  # (B, T, 1, A)
    keys = (h @ W_h.T).unsqueeze(1)  # (B, 1, S, A)
    if torch.allclose(got, (queries + keys) @ v, atol=1e-6):
        raise Mismatch("the tanh is missing: e_tj = v^T tanh(W_s s_t + W_h h_j); without it the "
                       "score is linear, v^T W_s s_t is the same for every position, and the "
                       "query could not change which position wins")
    if torch.allclose(got, torch.tanh(queries + keys).sum(-1), atol=1e-6):
        raise Mismatch("you added up the A numbers of tanh(W_s s_t + W_h h_j); the score is "
                       "their dot product with v, which weighs each of them")
    if torch.allclose(got, torch.tanh(keys).squeeze(1).unsqueeze(1).expand(B, T, S, A) @ v,
                      atol=1e-6):
        raise Mismatch("your scores ignore the decoder states s: add W_s s_t inside the tanh, "
                       "or every step would attend to the same positions")
    if torch.allclose(got, got[:, :1].expand_as(got), atol=1e-9):
        raise Mismatch("every step of a sentence got the same scores: each step t has its own "
                       "state s_t, so each row needs its own W_s s_t")
    expect_close("the scores e", got, expected, atol=1e-6)
    return ""


def check_all_scores(fn) -> CheckResult:
    """`fn(s, h, W_s, W_h, v)`: s (B, T, Hs), h (B, S, Hh), W_s (A, Hs), W_h (A, Hh), v (A,)
    -> e (B, T, S) with e[b, t, j] = v . tanh(W_s s_{b,t} + W_h h_{b,j})."""
    return run_checks("the scores of all steps", lambda: _score_case(fn, 0),
                      lambda: _score_case(fn, 1))


# ---------------------------------------------------------------------------------------------
# 2. masked_softmax(scores, lengths) -> weights (B, S)
# ---------------------------------------------------------------------------------------------


def _softmax_call(fn, scores, lengths, what: str):
    """The learner's weights for `scores`; an in-place change of the scores is named with why it
    matters (the caller may still read them)."""
    try:  # the harness compares every argument with its snapshot from before the call
        got = call(fn, scores, lengths, names=("scores", "lengths"))
    except Mismatch as e:
        if "in place" not in str(e):
            raise
        raise Mismatch(f"{what}: {e}. The scores are the caller's, who may still read them (to "
                       f"print them, or to mask them another way): masked_fill makes a new "
                       f"tensor, masked_fill_ changes the caller's") from None
    return _tensor("the weights (B, S)", got)


def _softmax_values(got: torch.Tensor, scores, lengths, what: str) -> None:
    """Weights (B, S) in float64 against the masked softmax: nan on an empty row, overflow,
    weight on padding (an off-by-one mask named) and rows that do not sum to 1 each named."""
    positions = torch.arange(scores.size(1)).unsqueeze(0)  # (1, S)
    pad = positions >= lengths.unsqueeze(1)  # (B, S)
    empty = lengths == 0  # (B,) rows with no real position
    if not bool(torch.isfinite(got).all()):
        b = int((~torch.isfinite(got)).any(-1).nonzero()[0])
        if bool(empty[b]):
            raise Mismatch(f"{what}: sentence {b} has no real position (length 0), and its "
                           f"weights are nan: every score of the row is -inf, and a softmax of "
                           f"only -inf is 0 / 0. Decide what such a row should get and return "
                           f"that instead (a nan in one row makes the whole batch's loss nan)")
        raise Mismatch(f"{what}: your weights contain nan or inf. exp() of a large score "
                       f"overflows: use torch.softmax (it subtracts the row's maximum first)")
    if bool((got[pad] != 0).any()):
        b, j = (int(i) for i in (pad & (got != 0)).nonzero()[0])
        hint = (" at the first padded position: your mask is off by one (position j is real "
                "when j < length)") if j == int(lengths[b]) and not bool(
            (pad & (got != 0) & (positions > lengths.unsqueeze(1))).any()) else ""
        if bool(empty[b]):
            hint = (": this row has no real position at all, so every weight it gives is "
                    "weight on padding, and its context would be an average of padding states")
        raise Mismatch(f"{what}: padding got weight: sentence {b} has {int(lengths[b])} real "
                       f"tokens, yet position {j} has weight {got[b, j].item():.3g}{hint}. A "
                       f"padded position must get exactly 0, or a sentence's context depends on "
                       f"the batch it is in")
    sums = got.sum(-1)
    want = (~empty).to(sums.dtype)  # 1 for a sentence, 0 for an empty row
    if not torch.allclose(sums, want, atol=1e-6):
        b = int((sums - want).abs().argmax())
        raise Mismatch(f"{what}: sentence {b}'s weights sum to {sums[b].item():.4f}, not 1: "
                       f"zeroing the padding after the softmax leaves the real positions "
                       f"short; mask the scores before the softmax so the real ones share all "
                       f"the weight")
    expect_close("the weights", got, softmax_reference(scores.detach().to(torch.float64),
                                                       lengths), atol=1e-6)


def _softmax_gradient(weights: torch.Tensor, leaf: torch.Tensor, what: str) -> None:
    """The scores' gradient flows back through the weights, finite: detached weights and an
    in-place change that breaks backward are named."""
    if not weights.requires_grad:
        raise Mismatch(f"{what}: the gradient of the scores is missing: your weights do not "
                       f"depend on the scores through autograd (.detach(), a detour through "
                       f"numpy, or torch.no_grad), so the attention layer could not learn")
    g = torch.Generator().manual_seed(5)
    try:
        (weights * torch.randn(leaf.shape, generator=g, dtype=weights.dtype)).sum().backward()
    except RuntimeError as e:
        raise Mismatch(f"{what}: the gradient cannot flow back through your weights ({e}). "
                       f"An in-place change of a tensor the softmax still needs for its "
                       f"gradient (w[...] = 0) breaks backward; build a new tensor instead") \
            from None
    if leaf.grad is None or not bool(torch.isfinite(leaf.grad).all()):
        raise Mismatch(f"{what}: the gradient of the scores is missing or not finite: the "
                       f"weights must be computed from the scores with differentiable "
                       f"operations (no .detach(), no nan on the way)")


def _softmax_case(fn, scores, lengths, what: str) -> str:
    leaf = scores.clone().requires_grad_(True)  # for the gradient check at the end
    scores = leaf.clone()  # (B, S) not a leaf: an in-place change is named, not refused
    weights = _softmax_call(fn, scores, lengths, what)
    got = weights.detach().to(torch.float64)
    expect_shape("the weights", got, tuple(scores.shape))
    _softmax_values(got, scores, lengths, what)
    _softmax_gradient(weights, leaf, what)
    return what


def check_masked_softmax(fn) -> CheckResult:
    """`fn(scores, lengths)`: scores (B, S), lengths (B,) -> weights (B, S), a softmax over
    each sentence's real positions, exactly 0 on its padding, all 0 on a row of length 0."""
    g = torch.Generator().manual_seed(3)
    scores = torch.randn(4, 6, generator=g, dtype=torch.float64)
    lengths = torch.tensor([6, 3, 1, 5])
    big = torch.tensor([[1000.0, 999.0, 0.0, 5.0], [-3.0, 800.0, 0.0, 0.0]],
                       dtype=torch.float64)
    return run_checks("the masked softmax",
                      lambda: _softmax_case(fn, scores, lengths, "a batch of lengths 6, 3, 1, 5"),
                      lambda: _softmax_case(fn, big, torch.tensor([3, 2]),
                                            "large scores (1000)"),
                      lambda: _softmax_case(fn, scores[:3, :4], torch.tensor([3, 0, 2]),
                                            "a batch of lengths 3, 0, 2"))


# ---------------------------------------------------------------------------------------------
# 3. contexts(weights, states) -> c (B, T, H), the states time-major
# ---------------------------------------------------------------------------------------------


def _contexts_case(fn, seed: int, B: int, T: int, S: int, H: int) -> str:
    g = torch.Generator().manual_seed(seed)
    states = torch.randn(S, B, H, generator=g, dtype=torch.float64)  # time-major
    lengths = torch.tensor([S - b % 2 for b in range(B)])  # some padded sentences
    weights = torch.stack([softmax_reference(torch.randn(B, S, generator=g,
                                                         dtype=torch.float64) * 2, lengths)
                           for _ in range(T)], dim=1)  # (B, T, S)
    got = _tensor("the contexts (B, T, H)", call(fn, weights, states,
                                                names=("weights", "states")))
    got = got.detach().to(torch.float64)
    expected = contexts_reference(weights, states)
    where = f"B={B}, T={T}, S={S}, H={H}"
    if got.shape == (T, B, H) and (B, T) != (T, B):
        raise Mismatch(f"{where}: your contexts have shape {(T, B, H)}; return (B, T, H), the "
                       f"layout of the weights")
    expect_shape(f"the contexts ({where})", got, (B, T, H))
    if torch.allclose(got, expected, atol=1e-6):
        return where
    if B == S and torch.allclose(got, weights @ states, atol=1e-6):
        raise Mismatch(f"{where}: your contexts mix the sentences of the batch: weights @ "
                       f"states pairs sentence b's weights with states[b], which in this "
                       f"layout is position b of every sentence; transpose states to "
                       f"(B, S, H) first (reshape or view would not: they do not reorder numbers)")
    if torch.allclose(got, weights @ states.reshape(B, S, H), atol=1e-6):
        raise Mismatch(f"{where}: reshape (or view) does not reorder numbers: it reads the "
                       f"time-major (S, B, H) memory as if it were (B, S, H), so positions and "
                       f"sentences get mixed up; swap the axes with transpose(0, 1) or permute")
    if torch.allclose(got, expected.sum(1, keepdim=True).expand(B, T, H), atol=1e-6) or \
            torch.allclose(got, expected.mean(1, keepdim=True).expand(B, T, H), atol=1e-6):
        raise Mismatch(f"{where}: every step got the same context: each step t has its own "
                       f"weights, row t of weights[b]")
    expect_close(f"the contexts ({where})", got, expected, atol=1e-6)
    return ""


def check_contexts(fn) -> CheckResult:
    """`fn(weights, states)`: weights (B, T, S), states (S, B, H) time-major -> (B, T, H),
    c[b, t] = sum_j weights[b, t, j] * states[j, b]."""
    return run_checks("the contexts of all steps",
                      lambda: _contexts_case(fn, 0, B=3, T=4, S=5, H=6),
                      lambda: _contexts_case(fn, 1, B=4, T=2, S=4, H=3))


# ---------------------------------------------------------------------------------------------
# 4. offsets(weights) and guess(t, L): where the reversal model's attention peaks
# ---------------------------------------------------------------------------------------------


def offsets_reference(weights) -> list[int]:
    """For each of the L digit rows of weights (L + 1, L) (the last row writes <eos>): the column
    of the row's largest weight minus L - 1 - t, the column of the digit it copies."""
    L = weights.size(1)
    out = []
    for t in range(L):
        row = weights[t].tolist()
        out.append(row.index(max(row)) - (L - 1 - t))
    return out


def peaked_weights(peaks: list[int], eos_peak: int = 0, seed: int = 0) -> torch.Tensor:
    """Weights (L + 1, L) of a made-up reversal heatmap: row t peaks on column peaks[t], the
    <eos> row on eos_peak, every row a softmax of random scores that sums to 1."""
    L = len(peaks)
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(L + 1, L, generator=g, dtype=torch.float64)
    for t, p in enumerate(list(peaks) + [eos_peak]):
        scores[t, p] = scores[t].max() + 2.0
    return torch.softmax(scores, dim=-1)


def _positions(got, what: str) -> list:
    if torch.is_tensor(got):
        if got.is_floating_point():
            raise Mismatch(f"you returned floating-point numbers ({what}); return whole numbers "
                           f"of columns (argmax gives them)")
        got = got.tolist()
    if not isinstance(got, (list, tuple)) or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in got):
        raise Mismatch(f"return a list of ints ({what}), got {got!r}")
    return list(got)


def _offsets_case(fn, weights) -> str:
    L = weights.size(1)
    got = _positions(call(fn, weights.clone(), names=("weights",)), "one offset per digit row")
    expected = offsets_reference(weights)
    peaks = [o + (L - 1 - t) for t, o in enumerate(expected)]
    if got == expected:
        return f"L = {L}: {L} digit rows"
    if got[:L] == [o - 1 for o in expected]:
        raise Mismatch(f"every offset is 1 too small: you took L from the rows, but weights has "
                       f"L + 1 = {L + 1} rows (the last writes <eos>); L, the number of digits, "
                       f"is the number of columns, weights.size(1) = {L}")
    if len(got) == L + 1 and got[:L] == expected:
        raise Mismatch(f"return one offset per digit row, {L}: the last of the {L + 1} rows "
                       f"writes <eos>, which copies no digit")
    if len(got) != L:
        raise Mismatch(f"return one offset per digit row: {L} rows (weights has L + 1 = {L + 1}, "
                       f"the last for <eos>), got {len(got)}")
    if got == [-o for o in expected]:
        raise Mismatch("your offsets have the wrong sign: the offset is the peak's column minus "
                       "the copied digit's column, L - 1 - t, so + means right of the "
                       "anti-diagonal, towards the later states")
    if got == [p - t for t, p in enumerate(peaks)]:
        raise Mismatch("you measured from the diagonal, column t; output digit t copies input "
                       "digit L - 1 - t (the output is the input backwards)")
    t = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    raise Mismatch(f"row {t}: its largest weight is in column {peaks[t]} and the digit it copies "
                   f"in column {L - 1 - t}, so its offset is {expected[t]:+d}, not {got[t]:+d}")


def check_offsets(fn) -> CheckResult:
    """`fn(weights)`: weights (L + 1, L), the last row <eos> -> [peak column - (L - 1 - t) for
    each digit row t], against a loop over rows."""
    return run_checks("the offsets from the anti-diagonal",
                      lambda: _offsets_case(fn, peaked_weights([4, 4, 3, 2, 0], eos_peak=1)),
                      lambda: _offsets_case(fn, peaked_weights([6, 6, 5, 3, 3, 2, 1], seed=1)))


def _guess_case(fn, weights) -> str:
    if not torch.is_tensor(weights) or weights.dim() != 2 or weights.size(0) != \
            weights.size(1) + 1:
        raise Mismatch(f"pass the reversal heatmap's weights, (L + 1, L) with the <eos> row "
                       f"last (weights_toy), as the second argument; got "
                       f"{getattr(weights, 'shape', type(weights).__name__)}")
    L = weights.size(1)
    peaks = weights[:L].argmax(dim=-1).tolist()  # the model's measured peak of each digit row
    got = []
    for t in range(L):
        g = call(fn, t, L, names=("t", "L"))
        if torch.is_tensor(g) and g.numel() == 1 and not g.is_floating_point():
            g = int(g)
        if isinstance(g, bool) or not isinstance(g, int):
            raise Mismatch(f"guess(t, L) returns one column, an int; guess({t}, {L}) = {g!r}")
        if not 0 <= g < L:
            hint = (": L - t, one column right of the copied digit, runs off the end at t = 0, "
                    "where the copied digit is the last one and no state comes after it. Which "
                    "column is left for the first row?" if t == 0 and g == L else "")
            raise Mismatch(f"guess({t}, {L}) = {g} is not a column: the columns are 0 to "
                           f"L - 1 = {L - 1}{hint}")
        got.append(g)
    # What can be derived without the model: row t copies input digit L - 1 - t, and only the
    # states from column L - 1 - t on have read it. A guess left of that is refused, unless the
    # model itself peaks there (then it is a reading of the heatmap, and the note says so).
    early = [t for t in range(L) if got[t] < L - 1 - t and got[t] != peaks[t]]
    if got == list(range(L)) and got != peaks:
        raise Mismatch("you guessed the diagonal, column t for output t; the output is the "
                       "input backwards, so output digit t copies input digit L - 1 - t")
    if early:
        t = early[0]
        raise Mismatch(f"guess({t}, {L}) = {got[t]}: output digit {t} copies input digit "
                       f"{L - 1 - t}, and the state in column {got[t]} has not read it yet (a "
                       f"column j is the encoder's state after digits 0 .. j); "
                       f"{count_of(len(early), 'row')} guess such a column")
    # The comparison with the model's measured weights: reported, not graded, since where a
    # trained model reads a digit from is learned, and differs from one training run to another.
    misses = [t for t in range(L) if got[t] != peaks[t]]
    note = (f"every guess is a state that has read the digit it copies; against this model's "
            f"measured weights your guess matches the peak on {L - len(misses)} of {L} rows")
    if not misses:
        return note
    listed = ", ".join(f"t = {t} (you: {got[t]}, the model: {peaks[t]})" for t in misses[:4])
    note += (f"; it differs on {count_of(len(misses), 'row')}: {listed}"
             + (f" and {len(misses) - 4} more" if len(misses) > 4 else ""))
    right = sum(peaks[t] == got[t] + 1 for t in misses)
    if right:
        note += (f". On {right} of these rows the model reads one column right of your guess: "
                 f"the state one step later has read that digit too, and which of the states "
                 f"that hold a digit a model reads it from is learned, not given")
    return note


def check_guess(fn, weights) -> CheckResult:
    """`fn(t, L)` -> the column 0 .. L-1 on which the reader expects the reversal model's weights
    to peak for output digit t. Refused when it is not a column, when it is the diagonal, or when
    a row's column lies left of the digit it copies (that state has not read it) and the model
    does not peak there; otherwise passed, with the comparison against the model's measured
    weights (L + 1, L): on how many rows it matches their peak, and where they differ."""
    return run_checks("your guess against the model's weights", lambda: _guess_case(fn, weights))


# ---------------------------------------------------------------------------------------------
# 5. crossover(E, H, A, V, layers): the source length at which attention doubles a step's work
# ---------------------------------------------------------------------------------------------


def budget_reference(S: int, H: int, A: int) -> dict:
    """What each decoder reads about the source, and attention's multiply-adds per step.

    fixed: the context c, H numbers, whatever S. attention: the S output states, S * H.
    extra_per_step: W_s s_{t-1} (A * H), v^T tanh(.) at S positions (S * A) and the weighted
    sum c_t (S * H); W_h h_j is computed once per sentence, not per step.
    """
    return {"fixed": H, "attention": S * H, "extra_per_step": A * H + S * A + S * H}


def crossover_reference(E: int, H: int, A: int, V: int, layers: int) -> float:
    """The source length S at which the multiply-adds attention adds to one decoder step equal
    those of the whole fixed-vector step (its GRU layers on [e(y); c] and its head), counted by
    `lib.experiments.timing.decoder_step_macs` from a real decoder's layers (built on the meta
    device: shapes
    only, no memory)."""
    with torch.device("meta"):
        decoder = Decoder(V, E, H, layers, attention=True)
        decoder.attention = AdditiveAttention(H, H, A)
    model = SimpleNamespace(decoder=decoder)
    one, two = decoder_step_macs(model, 1), decoder_step_macs(model, 2)
    per_token = two["attention"] - one["attention"]  # grows with S
    per_step = one["attention"] - per_token  # the same at every S
    return (one["gru"] + one["head"] - per_step) / per_token


def _crossover_mistakes(E: int, H: int, A: int, V: int, layers: int) -> list[tuple[float, str]]:
    """(what a typical wrong count gives, what it got wrong)."""
    def gru(first_in: int, gates: int = 3, n: int = layers) -> int:
        return gates * H * (first_in + H) + (n - 1) * gates * H * (H + H)

    fixed, head = gru(E + H) + H * V, H * V
    return [
        ((fixed - A * H) / (A + H + A * H),
         "you counted W_h h_j at every step: it does not depend on the step, so it is computed "
         "once per sentence (AdditiveAttention.memory), and the extra cost per source token is "
         "A + H"),
        (fixed / (A + H),
         "you left out W_s s_{t-1}: A x H multiply-adds at every step, whatever S, so "
         "attention's extra cost at S = 0 is not zero"),
        ((gru(E + H) - A * H) / (A + H),
         "you left out the prediction head, H x V multiply-adds, which every step pays, with or "
         "without attention"),
        ((gru(E) + head - A * H) / (A + H),
         "the first GRU layer reads [e(y_{t-1}); c], E + H numbers, not the embedding alone: "
         "3H(E + H + H) multiply-adds"),
        ((gru(E + H, n=1) + head - A * H) / (A + H),
         f"you counted one GRU layer; the decoder has {layers}, and each layer after the first "
         f"reads the H numbers of the layer below: 3H(H + H)"),
        ((gru(E + H, gates=4) + head - A * H) / (A + H),
         "a GRU has three blocks of H rows (reset, update, candidate), 3H; four is an LSTM"),
    ]


def _crossover_case(fn, E: int, H: int, A: int, V: int, layers: int) -> str:
    where = f"E={E}, H={H}, A={A}, V={V}, layers={layers}"
    got = call(fn, E, H, A, V, layers, names=("E", "H", "A", "V", "layers"))
    if torch.is_tensor(got) and got.numel() == 1:
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        raise Mismatch(f"return one number, a source length in tokens; got {got!r}")
    expected = crossover_reference(E, H, A, V, layers)
    if abs(got - expected) <= 1:
        return f"{where}: {expected:,.1f} tokens"
    for wrong, why in _crossover_mistakes(E, H, A, V, layers):
        if layers == 1 and "one GRU layer" in why:
            continue
        if abs(got - wrong) <= 1:
            raise Mismatch(f"{where}: {why}")
    if got > 10 * expected:
        raise Mismatch(f"{where}: you returned {got:,.0f}, which looks like a count of "
                       f"multiply-adds; return the length S, in tokens, at which the two "
                       f"counts are equal")
    raise Mismatch(f"{where}: got {got:,.1f} tokens, expected {expected:,.1f} (count the fixed "
                   f"step: every GRU layer's two weight matrices and the head; then attention's "
                   f"extra per step, A x H + S(A + H); set them equal and solve for S)")


def check_crossover(fn) -> CheckResult:
    """`fn(E, H, A, V, layers)` -> the source length S (a float; within one token) at which
    attention's extra multiply-adds per decoder step equal the fixed-vector step's, against a
    count from real layers (`crossover_reference`)."""
    return run_checks("the crossover length",
                      lambda: _crossover_case(fn, 8, 16, 16, 40, 1),
                      lambda: _crossover_case(fn, 16, 32, 24, 50, 3),
                      lambda: _crossover_case(fn, 256, 512, 512, 4000, 2))

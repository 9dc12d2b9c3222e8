"""Checkers for the attention chapter's exercises.

* `check_additive_score(fn)`: `fn(s, H, W_s, W_h, v)` -> the scores e (B, S) of
  e_j = v^T tanh(W_s s + W_h h_j), against an explicit loop over sentences and positions.
* `check_masked_softmax(fn)`: `fn(scores, lengths)` -> weights (B, S) that sum to 1 over the
  real positions and are exactly 0 on the padding ("padding got weight" otherwise).
* `check_context(fn)`: `fn(weights, states)` -> the context vectors (B, H), c = sum_j a_j h_j
  for each sentence of a batch, against a loop.
* `check_most_attended(fn)`: `fn(weights, src_tokens, tgt_tokens, word)` -> the source token
  with the largest weight in the row with which `word` was written.
* `check_attention_budget(fn)`: `fn(S, H, A)` -> the numbers each decoder can read about the
  source and the multiply-adds attention adds to one decoder step.

Each returns a `lib.checks.harness.CheckResult` that says in words what is wrong.
"""

from __future__ import annotations

import torch

from lib.checks.harness import CheckResult, Mismatch, call, expect_close, expect_shape, run_checks

# ---------------------------------------------------------------------------------------------
# The reference answers: explicit loops, independent of lib.attention's batched code
# ---------------------------------------------------------------------------------------------


def scores_reference(s, H, W_s, W_h, v) -> torch.Tensor:
    """e[b, j] = v . tanh(W_s s_b + W_h h_{b,j}), one sentence and one position at a time."""
    B, S, _ = H.shape
    out = torch.zeros(B, S, dtype=H.dtype)
    for b in range(B):
        query = W_s @ s[b]  # (A,)
        for j in range(S):
            out[b, j] = v @ torch.tanh(query + W_h @ H[b, j])
    return out


def softmax_reference(scores, lengths) -> torch.Tensor:
    """Softmax over each row's first lengths[b] positions, zeros after them."""
    out = torch.zeros_like(scores)
    for b, n in enumerate(lengths.tolist()):
        out[b, :n] = torch.softmax(scores[b, :n], dim=0)
    return out


def context_reference(weights, states) -> torch.Tensor:
    """c_b = sum_j a_{b,j} h_{b,j}, one sentence at a time."""
    return torch.stack([sum(weights[b, j] * states[b, j] for j in range(states.size(1)))
                        for b in range(states.size(0))])


def _tensor(name: str, got) -> torch.Tensor:
    if not torch.is_tensor(got):
        raise Mismatch(f"return a tensor ({name}), got {type(got).__name__}")
    return got


# ---------------------------------------------------------------------------------------------
# 1. additive_score(s, H, W_s, W_h, v) -> e (B, S)
# ---------------------------------------------------------------------------------------------


def _score_inputs(seed: int, B: int = 3, S: int = 5, Hs: int = 6, Hh: int = 4, A: int = 7):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(B, Hs, generator=g, dtype=torch.float64)
    H = torch.randn(B, S, Hh, generator=g, dtype=torch.float64)
    W_s = torch.randn(A, Hs, generator=g, dtype=torch.float64)
    W_h = torch.randn(A, Hh, generator=g, dtype=torch.float64)
    v = torch.randn(A, generator=g, dtype=torch.float64)
    return s, H, W_s, W_h, v


def _score_case(fn, seed: int) -> str:
    s, H, W_s, W_h, v = _score_inputs(seed)
    B, S = H.shape[:2]
    got = _tensor("the scores e (B, S)", call(fn, s, H, W_s, W_h, v,
                                             names=("s", "H", "W_s", "W_h", "v")))
    expected = scores_reference(s, H, W_s, W_h, v)
    got = got.detach().to(torch.float64)
    if got.shape == (B, S, W_s.size(0)):
        raise Mismatch(f"your scores have shape {tuple(got.shape)}: one vector of size A per "
                       f"position; take its dot product with v to get one number e_j per "
                       f"position, shape {(B, S)}")
    if got.shape == (S, B):
        raise Mismatch(f"your scores have shape {tuple(got.shape)}, (S, B); return (B, S): one "
                       f"row per sentence")
    expect_shape("the scores e", got, (B, S))
    if torch.allclose(got, expected, atol=1e-6):
        return f"{B} sentences of {S} positions"
    if torch.allclose(got.sum(-1), torch.ones(B, dtype=got.dtype), atol=1e-6) and \
            bool((got >= 0).all()):
        raise Mismatch("your rows sum to 1: you returned the weights (a softmax of the "
                       "scores); this function returns the scores e before any softmax")
    no_tanh = torch.einsum("a,bsa->bs", v, (s @ W_s.T).unsqueeze(1) + H @ W_h.T)
    if torch.allclose(got, no_tanh, atol=1e-6):
        raise Mismatch("the tanh is missing: e_j = v^T tanh(W_s s + W_h h_j); without it the "
                       "score is linear in h_j and v^T W_s s is the same for every position, so "
                       "the query could not change which position wins")
    only_keys = torch.tanh(H @ W_h.T) @ v
    if torch.allclose(got, only_keys, atol=1e-6):
        raise Mismatch("your scores ignore the decoder state s: add W_s s inside the tanh, or "
                       "every step would attend to the same positions")
    expect_close("the scores e", got, expected, atol=1e-6)
    return ""


def check_additive_score(fn) -> CheckResult:
    """`fn(s, H, W_s, W_h, v)`: s (B, Hs), H (B, S, Hh), W_s (A, Hs), W_h (A, Hh), v (A,)
    -> e (B, S) with e[b, j] = v . tanh(W_s s_b + W_h h_{b,j})."""
    return run_checks("the additive score", lambda: _score_case(fn, 0),
                      lambda: _score_case(fn, 1))


# ---------------------------------------------------------------------------------------------
# 2. masked_softmax(scores, lengths) -> weights (B, S)
# ---------------------------------------------------------------------------------------------


def _softmax_case(fn, scores, lengths, what: str) -> str:
    got = _tensor("the weights (B, S)", call(fn, scores, lengths, names=("scores", "lengths")))
    got = got.detach().to(torch.float64)
    expect_shape("the weights", got, tuple(scores.shape))
    if not bool(torch.isfinite(got).all()):
        raise Mismatch(f"{what}: your weights contain nan or inf. exp() of a large score "
                       f"overflows: use torch.softmax (it subtracts the row's maximum first), "
                       f"and give padded positions -inf, not a finite number")
    positions = torch.arange(scores.size(1)).unsqueeze(0)  # (1, S)
    pad = positions >= lengths.unsqueeze(1)  # (B, S)
    if bool((got[pad] != 0).any()):
        b, j = (int(i) for i in (pad & (got != 0)).nonzero()[0])
        hint = (" at the first padded position: your mask is off by one (position j is real "
                "when j < length)") if j == int(lengths[b]) and not bool(
            (pad & (got != 0) & (positions > lengths.unsqueeze(1))).any()) else ""
        raise Mismatch(f"{what}: padding got weight: sentence {b} has {int(lengths[b])} real "
                       f"tokens, yet position {j} has weight {got[b, j].item():.3g}{hint}. A "
                       f"padded position must get exactly 0, or a sentence's context depends on "
                       f"the batch it is in: give its score -inf before the softmax")
    sums = got.sum(-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=1e-6):
        b = int((sums - 1).abs().argmax())
        raise Mismatch(f"{what}: sentence {b}'s weights sum to {sums[b].item():.4f}, not 1: "
                       f"zeroing the padding after the softmax leaves the real positions "
                       f"short; mask the scores before the softmax so the real ones share all "
                       f"the weight")
    expect_close("the weights", got, softmax_reference(scores.to(torch.float64), lengths),
                 atol=1e-6)
    return what


def check_masked_softmax(fn) -> CheckResult:
    """`fn(scores, lengths)`: scores (B, S), lengths (B,) -> weights (B, S), a softmax over
    each sentence's real positions and exactly 0 on its padding."""
    g = torch.Generator().manual_seed(3)
    scores = torch.randn(4, 6, generator=g, dtype=torch.float64)
    lengths = torch.tensor([6, 3, 1, 5])
    big = torch.tensor([[1000.0, 999.0, 0.0, 5.0], [-3.0, 800.0, 0.0, 0.0]],
                       dtype=torch.float64)
    return run_checks("the masked softmax",
                      lambda: _softmax_case(fn, scores, lengths, "a batch of lengths 6, 3, 1, 5"),
                      lambda: _softmax_case(fn, big, torch.tensor([3, 2]),
                                            "large scores (1000)"))


# ---------------------------------------------------------------------------------------------
# 3. context(weights, states) -> c (B, H)
# ---------------------------------------------------------------------------------------------


def _context_case(fn, seed: int) -> str:
    g = torch.Generator().manual_seed(seed)
    B, S, H = 3, 5, 4
    states = torch.randn(B, S, H, generator=g, dtype=torch.float64)
    weights = softmax_reference(torch.randn(B, S, generator=g, dtype=torch.float64) * 2,
                                torch.tensor([5, 2, 4]))
    got = _tensor("the contexts c (B, H)", call(fn, weights, states,
                                               names=("weights", "states")))
    got = got.detach().to(torch.float64)
    expected = context_reference(weights, states)
    if got.shape == (B, S):
        raise Mismatch(f"your result has shape {(B, S)}: you summed over the hidden units; "
                       f"sum the weighted states over the source positions (dim 1) to get one "
                       f"vector of {H} per sentence")
    if got.shape == (B, B, H):
        raise Mismatch(f"your result has shape {(B, B, H)}: each sentence's weights met every "
                       f"sentence's states; pair sentence b's weights with sentence b's states "
                       f"(torch.bmm with weights.unsqueeze(1), or broadcasting)")
    expect_shape("the contexts c", got, (B, H))
    if torch.allclose(got, expected, atol=1e-6):
        return f"{B} sentences, {S} positions, {H} units"
    if torch.allclose(got, states.mean(1), atol=1e-6):
        raise Mismatch("you averaged the states with equal weights; weight each h_j by its "
                       "a_j")
    if torch.allclose(got, states.sum(1), atol=1e-6):
        raise Mismatch("you summed the states without their weights; c = sum_j a_j h_j")
    mixed = torch.einsum("bs,csh->bh", weights, states)
    if torch.allclose(got, mixed, atol=1e-6):
        raise Mismatch("your contexts mix the sentences of the batch: sentence b's context "
                       "must use sentence b's states only")
    expect_close("the contexts c", got, expected, atol=1e-6)
    return ""


def check_context(fn) -> CheckResult:
    """`fn(weights, states)`: weights (B, S), states (B, S, H) -> c (B, H), c_b = sum_j a h."""
    return run_checks("the context vector of a batch", lambda: _context_case(fn, 0),
                      lambda: _context_case(fn, 1))


# ---------------------------------------------------------------------------------------------
# 4. most_attended(weights, src_tokens, tgt_tokens, word) -> a source token
# ---------------------------------------------------------------------------------------------

SRC = ["the", "train", "station", "is", "far", "."]
TGT = ["la", "gare", "est", "loin", ".", "<eos>"]
# row t: the weights with which the decoder wrote TGT[t]
ATTN = torch.tensor([
    [0.70, 0.10, 0.10, 0.04, 0.03, 0.03],  # la     <- the
    [0.05, 0.30, 0.55, 0.04, 0.03, 0.03],  # gare   <- station
    [0.02, 0.03, 0.05, 0.80, 0.05, 0.05],  # est    <- is
    [0.02, 0.03, 0.05, 0.05, 0.80, 0.05],  # loin   <- far
    [0.02, 0.03, 0.05, 0.05, 0.05, 0.80],  # .      <- .
    [0.10, 0.40, 0.10, 0.10, 0.10, 0.20],  # <eos>
])


def most_attended_reference(weights, src_tokens, tgt_tokens, word) -> str:
    t = list(tgt_tokens).index(word)
    return src_tokens[int(torch.as_tensor(weights)[t].argmax())]


def _attended_case(fn, word: str) -> str:
    got = call(fn, ATTN, list(SRC), list(TGT), word,
               names=("weights", "src_tokens", "tgt_tokens", "word"))
    expected = most_attended_reference(ATTN, SRC, TGT, word)
    if torch.is_tensor(got) and got.numel() == 1:
        got = int(got)
    if isinstance(got, int) and not isinstance(got, bool):
        raise Mismatch(f"you returned the position {got}; return the source token there "
                       f"(src_tokens[{got}])")
    if not isinstance(got, str):
        raise Mismatch(f"return a source token (a str), got {type(got).__name__}")
    if got == expected:
        return f"{word!r} <- {expected!r}"
    t = TGT.index(word)
    if t > 0 and got == SRC[int(ATTN[t - 1].argmax())]:
        raise Mismatch(f"for {word!r} you read the row of the previous step; row t holds the "
                       f"weights with which the decoder wrote tgt_tokens[t]")
    if got == SRC[int(ATTN.argmax(0)[t])]:  # weights.argmax(0): over the target axis
        raise Mismatch(f"for {word!r} you took the argmax over the target axis (a column); "
                       f"take it over the source positions, along row t")
    if got in TGT:
        raise Mismatch(f"{got!r} is a target token: take the argmax over the source positions "
                       f"(the columns of row t), and return src_tokens at it")
    raise Mismatch(f"when writing {word!r} the largest weight is on {expected!r}, not {got!r}")


def check_most_attended(fn) -> CheckResult:
    """`fn(weights, src_tokens, tgt_tokens, word)`: weights (T, S), row t the weights with
    which tgt_tokens[t] was written -> the source token with the largest weight for `word`
    (its first occurrence)."""
    return run_checks("the most attended source word",
                      *[lambda w=w: _attended_case(fn, w) for w in ("gare", "la", "loin")])


# ---------------------------------------------------------------------------------------------
# 5. attention_budget(S, H, A) -> {"fixed": ..., "attention": ..., "extra_per_step": ...}
# ---------------------------------------------------------------------------------------------


def budget_reference(S: int, H: int, A: int) -> dict:
    """What each decoder reads about the source, and attention's multiply-adds per step.

    fixed: the context c, H numbers, whatever S. attention: the S output states, S * H.
    extra_per_step: W_s s_{t-1} (A * H), v^T tanh(.) at S positions (S * A) and the weighted
    sum c_t (S * H); W_h h_j is computed once per sentence, not per step.
    """
    return {"fixed": H, "attention": S * H, "extra_per_step": A * H + S * A + S * H}


def _budget_case(fn, S: int, H: int, A: int) -> str:
    got = call(fn, S, H, A, names=("S", "H", "A"))
    if not isinstance(got, dict) or set(got) != {"fixed", "attention", "extra_per_step"}:
        raise Mismatch("return a dict with the keys 'fixed', 'attention' and 'extra_per_step'"
                       f", got {got!r}")
    expected = budget_reference(S, H, A)
    if got["fixed"] != expected["fixed"]:
        if got["fixed"] == S * H:
            raise Mismatch("'fixed': the fixed-vector decoder reads one context c of H "
                           "numbers, whatever the source length")
        raise Mismatch(f"'fixed' for S={S}, H={H}: the context c has H = {H} numbers, got "
                       f"{got['fixed']}")
    if got["attention"] != expected["attention"]:
        raise Mismatch(f"'attention' for S={S}, H={H}: the decoder can read every output "
                       f"state h_1..h_S, S x H = {S * H} numbers; got {got['attention']}")
    extra = got["extra_per_step"]
    if extra == expected["extra_per_step"]:
        return f"S={S}, H={H}, A={A}"
    if extra == expected["extra_per_step"] + S * H * A:
        raise Mismatch("you counted W_h h_j at every step; it does not depend on t, so it is "
                       "computed once per sentence (AdditiveAttention.memory) and costs no "
                       "step anything")
    if extra == S * A + S * H:
        raise Mismatch("you forgot W_s s_{t-1}: A x H multiply-adds, once per step")
    if extra == A * H + S * A:
        raise Mismatch("you forgot the weighted sum c_t = sum_j a_j h_j: S x H multiply-adds")
    if extra == A * H + S * H:
        raise Mismatch("you forgot the scores v^T tanh(...) at every position: S x A")
    raise Mismatch(f"'extra_per_step' for S={S}, H={H}, A={A}: got {extra}, expected "
                   f"{expected['extra_per_step']} (count W_s s_{{t-1}}, the S scores and the "
                   f"weighted sum)")


def check_attention_budget(fn) -> CheckResult:
    """`fn(S, H, A)` -> {'fixed': H, 'attention': S * H, 'extra_per_step': A*H + S*A + S*H}."""
    return run_checks("what attention reads and costs",
                      lambda: _budget_case(fn, 5, 512, 512),
                      lambda: _budget_case(fn, 30, 64, 16))

"""Checkers for the attention chapter's exercises.

* `check_all_scores(fn)`: `fn(s, H, W_s, W_h, v)` -> the scores e (B, T, S) of all T decoder
  steps at once, e_{t,j} = v^T tanh(W_s s_t + W_h h_j), against explicit loops.
* `check_masked_softmax(fn)`: `fn(scores, lengths)` -> weights (B, S) that sum to 1 over the
  real positions, are exactly 0 on the padding ("padding got weight" otherwise), and are all 0,
  not nan, on a row with no real position (length 0); differentiable.
* `check_contexts(fn)`: `fn(weights, states)` -> the contexts (B, T, H) of all T steps, from
  weights (B, T, S) and time-major states (S, B, H), against loops.
* `check_guess(fn)`: `fn(t, L)` -> an input position 0 .. L-1 (its form only: it is a guess).
* `check_strongest(fn)`: `fn(weights)` -> for each row of weights (T, S), the position of its
  largest weight.
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
    """e[b, t, j] = v . tanh(W_s s_{b,t} + W_h h_{b,j}), one sentence, step and position at a
    time."""
    B, S, _ = H.shape
    T = s.size(1)
    out = torch.zeros(B, T, S, dtype=H.dtype)
    for b in range(B):
        for t in range(T):
            query = W_s @ s[b, t]  # (A,)
            for j in range(S):
                out[b, t, j] = v @ torch.tanh(query + W_h @ H[b, j])
    return out


def softmax_reference(scores, lengths) -> torch.Tensor:
    """Softmax over each row's first lengths[b] positions, zeros after them (and on a row of
    length 0)."""
    out = torch.zeros_like(scores)
    for b, n in enumerate(lengths.tolist()):
        if n:
            out[b, :n] = torch.softmax(scores[b, :n], dim=0)
    return out


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
# 1. all_scores(s, H, W_s, W_h, v) -> e (B, T, S)
# ---------------------------------------------------------------------------------------------


def _score_inputs(seed: int, B: int = 2, T: int = 3, S: int = 5, Hs: int = 6, Hh: int = 4,
                  A: int = 7):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(B, T, Hs, generator=g, dtype=torch.float64)
    H = torch.randn(B, S, Hh, generator=g, dtype=torch.float64)
    W_s = torch.randn(A, Hs, generator=g, dtype=torch.float64)
    W_h = torch.randn(A, Hh, generator=g, dtype=torch.float64)
    v = torch.randn(A, generator=g, dtype=torch.float64)
    return s, H, W_s, W_h, v


def _score_case(fn, seed: int) -> str:
    s, H, W_s, W_h, v = _score_inputs(seed)
    B, S = H.shape[:2]
    T, A = s.size(1), W_s.size(0)
    got = _tensor("the scores e (B, T, S)", call(fn, s, H, W_s, W_h, v,
                                                names=("s", "H", "W_s", "W_h", "v")))
    expected = scores_reference(s, H, W_s, W_h, v)
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
        return f"{B} sentences, {T} steps, {S} positions"
    if torch.allclose(got.sum(-1), torch.ones(B, T, dtype=got.dtype), atol=1e-6) and \
            bool((got >= 0).all()):
        raise Mismatch("your rows sum to 1: you returned the weights (a softmax of the "
                       "scores); this function returns the scores e before any softmax")
    queries = (s @ W_s.T).unsqueeze(2)  # (B, T, 1, A)
    keys = (H @ W_h.T).unsqueeze(1)  # (B, 1, S, A)
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
    """`fn(s, H, W_s, W_h, v)`: s (B, T, Hs), H (B, S, Hh), W_s (A, Hs), W_h (A, Hh), v (A,)
    -> e (B, T, S) with e[b, t, j] = v . tanh(W_s s_{b,t} + W_h h_{b,j})."""
    return run_checks("the scores of all steps", lambda: _score_case(fn, 0),
                      lambda: _score_case(fn, 1))


# ---------------------------------------------------------------------------------------------
# 2. masked_softmax(scores, lengths) -> weights (B, S)
# ---------------------------------------------------------------------------------------------


def _softmax_case(fn, scores, lengths, what: str) -> str:
    leaf = scores.clone().requires_grad_(True)  # for the gradient check at the end
    scores = leaf.clone()  # (B, S) not a leaf: an in-place change is named, not refused
    got = _tensor("the weights (B, S)", call(fn, scores, lengths, names=("scores", "lengths")))
    weights = got
    got = got.detach().to(torch.float64)
    expect_shape("the weights", got, tuple(scores.shape))
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
                       f"overflows: use torch.softmax (it subtracts the row's maximum first), "
                       f"and give padded positions -inf, not a finite number")
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
    if not weights.requires_grad:
        raise Mismatch(f"{what}: the gradient of the scores is missing: your weights do not "
                       f"depend on the scores through autograd (.detach(), a detour through "
                       f"numpy, or torch.no_grad), so the attention layer could not learn")
    g = torch.Generator().manual_seed(5)
    try:
        (weights * torch.randn(scores.shape, generator=g, dtype=weights.dtype)).sum().backward()
    except RuntimeError as e:
        raise Mismatch(f"{what}: the gradient cannot flow back through your weights ({e}). "
                       f"An in-place change of a tensor the softmax still needs for its "
                       f"gradient (w[...] = 0) breaks backward; build a new tensor instead") \
            from None
    if leaf.grad is None or not bool(torch.isfinite(leaf.grad).all()):
        raise Mismatch(f"{what}: the gradient of the scores is missing or not finite: the "
                       f"weights must be computed from the scores with differentiable "
                       f"operations (no .detach(), no nan on the way)")
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
# 4. strongest(weights) -> the position of each row's largest weight
# ---------------------------------------------------------------------------------------------

# rows: output steps (the last one writes <eos>), columns: source positions
PEAKS = torch.tensor([
    [0.05, 0.10, 0.15, 0.70],
    [0.10, 0.15, 0.60, 0.15],
    [0.05, 0.80, 0.10, 0.05],
    [0.55, 0.25, 0.10, 0.10],
    [0.20, 0.30, 0.10, 0.40],
], dtype=torch.float64)


def _strongest_case(fn, weights) -> str:
    got = call(fn, weights.clone(), names=("weights",))
    T, S = weights.shape
    expected = weights.argmax(-1).tolist()
    if torch.is_tensor(got):
        if got.is_floating_point():
            raise Mismatch("you returned the largest weights themselves; return where they are: "
                           "the position (column) of each row's maximum")
        got = got.tolist()
    if not isinstance(got, (list, tuple)) or not all(
            isinstance(p, int) and not isinstance(p, bool) for p in got):
        raise Mismatch(f"return a list of positions (ints), one per row, got {got!r}")
    got = list(got)
    if len(got) != T:
        hint = (": you took the maximum of each column (over the rows, dim 0); take it along "
                "each row (dim -1), over the source positions") if len(got) == S else ""
        raise Mismatch(f"return one position per row of weights (T = {T}), got {len(got)}{hint}")
    if got == expected:
        return f"{T} rows"
    if got == [p + 1 for p in expected]:
        raise Mismatch("your positions count from 1; count from 0, as Python indexes, so that "
                       "src_tokens[p] is the strongest source token")
    if got == weights.argmin(-1).tolist():
        raise Mismatch("you returned each row's smallest weight's position; take the largest")
    t = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    raise Mismatch(f"row {t}: its largest weight is at position {expected[t]}, not {got[t]}")


def _guess_case(fn, L: int) -> str:
    got = [call(fn, t, L, names=("t", "L")) for t in range(L)]
    if torch.is_tensor(got[0]):
        got = [int(g) if g.numel() == 1 else g for g in got]
    bad = next((g for g in got if isinstance(g, bool) or not isinstance(g, int)), None)
    if bad is not None:
        raise Mismatch(f"guess(t, L) must return one input position, an int, got {bad!r}")
    t = next((t for t, g in enumerate(got) if not 0 <= g < L), None)
    if t is not None:
        raise Mismatch(f"guess({t}, {L}) = {got[t]} is not an input position: positions count "
                       f"from 0 to L - 1 = {L - 1}")
    return f"L = {L}: a position for each t"


def check_guess(fn) -> CheckResult:
    """`fn(t, L)` -> an input position in 0 .. L-1 for each output digit t. Only the form is
    checked: the guess itself is the reader's prediction, compared with the model afterwards."""
    return run_checks("your guess (its form only)", lambda: _guess_case(fn, 5),
                      lambda: _guess_case(fn, 20))


def check_strongest(fn) -> CheckResult:
    """`fn(weights)`: weights (T, S) -> [the position of the largest weight of each row]."""
    return run_checks("the strongest position of each row",
                      lambda: _strongest_case(fn, PEAKS),
                      lambda: _strongest_case(fn, PEAKS[:, [3, 0, 2, 1]]))


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

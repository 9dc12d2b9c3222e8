"""Checkers for the exercises of "The prediction head".

    check_log_softmax(log_softmax)              log of eq. 8, finite where a softmax underflows
    check_masked_cross_entropy(cross_entropy)   eq. 7 averaged over real tokens, padding masked
                                                (torch's own cross-entropy switched off)
    check_smoothed_shortlist_loss(fn)           close to the reference model's training loss
                                                (without its drawn rare words): label
                                                smoothing over a shortlist softmax, padding out
                                                (torch's own cross-entropy switched off)
    check_sequence_log_prob(sequence_log_prob)  log P(y | x) by teacher forcing
    check_calibration(calibration)              per confidence group: mean P(top), share right

Each checker compares the learner's function with the reference (torch.log_softmax,
lib.head.masked_cross_entropy, lib.search.sequence_log_prob) and, when the answer equals a
common mistake (padding in the loss, the mean over every position, the log forgotten, the
model's own prediction fed instead of the target...), computes that mistake too and names it.
"""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F

from lib.checks.harness import CheckResult, Mismatch, call, expect_close, expect_shape, run_checks
from lib.checks.models import shared_vocab_model
from lib.data import EOS, PAD, SOS, SPECIALS, tokenize
from lib.head import masked_cross_entropy, shortlist_ids
from lib.search import greedy, log_probs, sequence_log_prob

# ---------------------------------------------------------------------------------------------
# log_softmax(logits (..., V)) -> log-probabilities (..., V)
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _refusing(names: tuple[str, ...], message: str):
    """Make torch's functions `names` (in torch, torch.nn.functional, torch.special and as
    tensor methods) raise `message` while the learner's code runs; put them back afterwards."""
    def refuse(*args, **kwargs):
        raise Mismatch(message)

    saved = [(owner, name, getattr(owner, name))
             for owner in (torch, F, torch.special, torch.Tensor) for name in names
             if hasattr(owner, name)]
    try:
        for owner, name, _ in saved:
            setattr(owner, name, refuse)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def _no_builtin_softmax():
    """Make torch's own softmax, log_softmax and logsumexp raise while the learner's code runs."""
    return _refusing(("softmax", "log_softmax", "logsumexp"),
                     "write log_softmax from torch.exp, torch.log, max and sums; torch's own "
                     "softmax, log_softmax and logsumexp are what the exercise rebuilds")


# F.cross_entropy and F.nll_loss (nn.CrossEntropyLoss and nn.NLLLoss call them): both pick the
# target's -log P, and ignore_index masks the padding, which is what exercises 2 and 3 rebuild
BUILTIN_LOSS_REFUSED = ("you called torch's own cross-entropy (F.cross_entropy, F.nll_loss, "
                        "nn.CrossEntropyLoss or nn.NLLLoss), which the exercise asks you to "
                        "build: take torch.log_softmax, pick each target's log-probability "
                        "with gather, and mask the padding yourself")


def _no_builtin_loss():
    """Make torch's own cross-entropy and NLL loss raise while the learner's code runs."""
    return _refusing(("cross_entropy", "nll_loss"), BUILTIN_LOSS_REFUSED)


def _log_softmax_case(fn, logits: torch.Tensor, label: str) -> str:
    expected = torch.log_softmax(logits, dim=-1)  # (..., V)
    with _no_builtin_softmax():
        got = call(fn, logits, names=("logits",), where=label)
    if not torch.is_tensor(got):
        raise Mismatch(f"{label}: return a tensor of log-probabilities, got {type(got).__name__}")
    expect_shape(f"{label}: the log-probabilities", got, tuple(logits.shape))
    got = got.detach().float()
    ninf = torch.isneginf(got)  # (..., V)
    # -inf where the answer is modest (all of a row, say) comes from log(inf): an overflow
    overflow = bool(torch.isnan(got).any() | torch.isposinf(got).any()
                    | (ninf & (expected > -80)).any())
    if overflow:
        raise Mismatch(f"{label}: you returned nan or inf. exp() of a large logit overflows "
                       f"(float32 exp(89) is already inf); subtract each row's maximum m before "
                       f"exp, and add it back outside the log: log sum exp(z) = m + log sum "
                       f"exp(z - m)")
    if bool(ninf.any()):
        raise Mismatch(f"{label}: you returned -inf where the log-probability is a finite number "
                       f"(here as low as {float(expected.min()):.1f}). That is the log of a "
                       f"softmax: exp(z - m) underflows to exactly 0 once z is about 104 below "
                       f"the maximum, and log(0) = -inf. Never take the log of a probability: "
                       f"log softmax(z) = (z - m) - log sum exp(z - m), and that sum is >= 1")
    if bool((got > 1e-4).any()) and torch.allclose(got, -expected, atol=1e-4, rtol=1e-4):
        raise Mismatch(f"{label}: you returned -log P (the loss of each word); log-probabilities "
                       f"are <= 0")
    m = logits.max(dim=-1, keepdim=True).values  # (..., 1)
    if torch.allclose(got, logits - m, atol=1e-4, rtol=1e-5) and not torch.allclose(
            got, expected, atol=1e-4, rtol=1e-5):
        raise Mismatch(f"{label}: you returned z - max(z): the largest becomes 0, but the rows "
                       f"are not normalised yet; subtract log sum exp(z - max(z)) too, so that "
                       f"exp of each row sums to 1")
    if torch.allclose(got, expected + m, atol=1e-3, rtol=1e-5) and bool((m.abs() > 1e-3).any()):
        raise Mismatch(f"{label}: off by each row's maximum m: you subtracted log sum exp(z - m) "
                       f"but not m; log softmax(z) = (z - m) - log sum exp(z - m)")
    if logits.dim() > 1:
        over_batch = torch.log_softmax(logits, dim=0)
        if torch.allclose(got, over_batch, atol=1e-4, rtol=1e-4):
            raise Mismatch(f"{label}: you normalised over dim 0 (the batch); normalise over the "
                           f"last dimension, the vocabulary (dim=-1, keepdim=True)")
    expect_close(f"{label}: the log-probabilities", got, expected, atol=1e-4, rtol=1e-4)
    return label


def check_log_softmax(fn) -> CheckResult:
    """fn(logits (..., V)) -> log softmax over the last dimension, finite wherever it should be."""
    g = torch.Generator().manual_seed(0)
    return run_checks(
        "log_softmax",
        lambda: _log_softmax_case(fn, torch.randn(5, generator=g), "one vector of 5 logits"),
        lambda: _log_softmax_case(fn, torch.randn(4, 7, generator=g) * 3, "a batch (4, 7)"),
        lambda: _log_softmax_case(fn, torch.randn(2, 3, 6, generator=g), "a batch (2, 3, 6)"),
        lambda: _log_softmax_case(fn, torch.tensor([[0.0, -200.0, 3.0], [1.0, 2.0, -150.0]]),
                                  "logits far apart [0, -200, 3]"),
        lambda: _log_softmax_case(fn, torch.tensor([[1000.0, 1001.0, 1002.0],
                                                    [-5.0, 0.0, 5.0]]),
                                  "large logits [1000, 1001, 1002]"),
        lambda: _log_softmax_case(fn, torch.tensor([[-1000.0, -1001.0, -999.0]]),
                                  "very negative logits"),
    )


# ---------------------------------------------------------------------------------------------
# cross_entropy(logits (B, T, V), targets (B, T), pad) -> mean -log P over real tokens
# ---------------------------------------------------------------------------------------------


def _ce_variants(logits: torch.Tensor, targets: torch.Tensor, pad: int) -> dict[str, float]:
    """Typical wrong losses, each with the explanation of its mistake."""
    flat, tgt = logits.reshape(-1, logits.size(-1)), targets.reshape(-1)  # (B*T, V), (B*T,)
    real = tgt != pad  # (B*T,)
    logp = F.log_softmax(flat, -1).gather(1, tgt.unsqueeze(1)).squeeze(1)  # (B*T,)
    p = logp.exp()
    per_sentence = torch.stack([-logp.view(targets.shape)[b][real.view(targets.shape)[b]].mean()
                                for b in range(targets.size(0))])
    return {
        "padding not masked: the <pad> positions entered the loss (they are not words to "
        "predict; skip positions where the target equals the pad argument, which is not "
        "always 0)": float(-logp.mean()),
        "averaged over all positions instead of real tokens: the padding is masked in the sum "
        "but still counted in the denominator; divide by the number of real tokens":
            float(-(logp * real).sum() / real.numel()),
        "you summed the negative log-probabilities; eq. 7's sum is right, but this function "
        "returns the mean per real token (divide by their number)": float(-(logp * real).sum()),
        "forgot the log: the loss is the mean of -log P(y*_t), not of -P(y*_t)":
            float(-(p * real).sum() / real.sum()),
        "forgot the log: the loss is -log P(y*_t), not 1 - P(y*_t)":
            float((1 - p)[real].mean()),
        "the sign: the loss is the NEGATIVE log-probability (it is >= 0, and smaller is "
        "better)": float((logp * real).sum() / real.sum()),
        "you used the raw logit of the target; apply log_softmax first, so that the scores "
        "become log-probabilities": float(-flat.gather(1, tgt.unsqueeze(1)).squeeze(1)[real]
                                           .mean()),
        "you averaged per sentence, then over sentences: a token of a short sentence then "
        "weighs more than one of a long sentence; average over all real tokens at once":
            float(per_sentence.mean()),
    }


def _ce_case(fn, B: int, T: int, V: int, lengths: list[int], seed: int, pad: int = PAD,
             scale: float = 2.0) -> str:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V, generator=g) * scale  # (B, T, V)
    targets = torch.randint(len(SPECIALS), V, (B, T), generator=g)  # (B, T)
    for b, n in enumerate(lengths):
        targets[b, n:] = pad
    expected = float(masked_cross_entropy(logits, targets, pad=pad))
    label = f"B={B}, T={T}, V={V}, lengths {lengths}"
    with _no_builtin_loss():
        got = call(fn, logits, targets, pad, names=("logits", "targets", "pad"), where=label)
    if torch.is_tensor(got):
        if got.numel() != 1:
            raise Mismatch(f"{label}: return one number (a scalar tensor), got shape "
                           f"{tuple(got.shape)}")
        got = float(got)
    if not isinstance(got, (int, float)):
        raise Mismatch(f"{label}: return a number (a scalar tensor), got {type(got).__name__}")
    if math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-5):
        return label
    for why, value in _ce_variants(logits, targets, pad).items():
        if math.isclose(got, value, rel_tol=1e-4, abs_tol=1e-5):
            raise Mismatch(f"{label}: {why}")
    raise Mismatch(f"{label}: you returned {got:.5g}, expected {expected:.5g} (the mean of "
                   f"-log softmax(logits)[target] over the positions whose target is not pad)")


def check_masked_cross_entropy(fn) -> CheckResult:
    """fn(logits (B, T, V), targets (B, T), pad) -> mean -log P(target) over real tokens."""
    return run_checks(
        "masked cross-entropy",
        lambda: _ce_case(fn, 3, 5, 7, [5, 2, 3], 0),
        lambda: _ce_case(fn, 2, 4, 6, [4, 1], 1, scale=6.0),
        lambda: _ce_case(fn, 4, 6, 9, [6, 6, 3, 1], 2, pad=5),
        lambda: _ce_case(fn, 2, 3, 5, [3, 3], 3),
    )


# ---------------------------------------------------------------------------------------------
# smoothed_shortlist_loss(logits (B, T, V), targets (B, T), pad, eps, listed (C,)) -> scalar
# ---------------------------------------------------------------------------------------------


def smoothed_shortlist_reference(logits: torch.Tensor, targets: torch.Tensor, pad: int,
                                 eps: float, listed: torch.Tensor) -> torch.Tensor:
    """Mean over real tokens of (1 - eps)(-log P_S(y*)) + eps * mean_{v in S}(-log P_S(v)),
    P_S the softmax over the columns `listed` (sorted word ids holding every target): the
    label-smoothed `lib.head.masked_cross_entropy` of the listed columns, each target read as
    its column there."""
    real = targets != pad  # (B, T)
    column = torch.searchsorted(listed, targets.masked_fill(~real, int(listed[0])))  # (B, T)
    return masked_cross_entropy(logits[..., listed], column.masked_fill(~real, -1), pad=-1,
                                label_smoothing=eps)


def _smoothed_variants(logits, targets, pad, eps, listed) -> dict[str, float]:
    """Typical wrong losses, each with the explanation of its mistake."""
    real = targets != pad  # (B, T)
    column = torch.searchsorted(listed, targets.clamp(min=0))  # (B, T)
    column = column.clamp(max=len(listed) - 1)  # pad positions may fall off the end
    lp_s = torch.log_softmax(logits[..., listed], -1)  # (B, T, C) over S
    lp_all = torch.log_softmax(logits, -1)[..., listed]  # (B, T, C) over all V, then kept
    nll = -lp_s.gather(-1, column.unsqueeze(-1)).squeeze(-1)  # (B, T)
    uni = -lp_s.mean(-1)  # (B, T)
    n, C = real.sum(), len(listed)

    def mean_real(x):
        return float((x * real).sum() / n)

    wrong = {
        "the softmax must run over the listed columns only, as in training: you took the "
        "log-probabilities over all V words and then kept the listed columns, so they do not "
        "sum to 1 over S": mean_real((1 - eps) * -lp_all.gather(-1, column.unsqueeze(-1))
                                     .squeeze(-1) - eps * lp_all.mean(-1)),
        "padding not masked: the <pad> positions entered the loss; keep only positions whose "
        "target is not pad (the pad argument, which is not always 0)":
            float(((1 - eps) * nll + eps * uni).mean()),
        "averaged over all positions instead of real tokens: divide by the number of real "
        "tokens": float((((1 - eps) * nll + eps * uni) * real).sum() / real.numel()),
        "the weights are the wrong way round: the reference word gets 1 - eps, the uniform "
        "term eps": mean_real(eps * nll + (1 - eps) * uni),
        "the uniform term is the MEAN of -log P_S(v) over the |S| columns, not their sum":
            mean_real((1 - eps) * nll - eps * lp_s.sum(-1)),
        "the page's formula spreads eps over ALL columns of S, the reference word's included; "
        "you left the reference out of the uniform term":
            mean_real((1 - eps) * nll - eps * (lp_s.sum(-1) + nll) / (C - 1)),
        "no smoothing: you returned eq. 7 over S; add eps times the uniform term and weight "
        "the reference term by 1 - eps": mean_real(nll),
        "the smoothing is there but the reference term is not weighted: (1 - eps) times "
        "-log P_S(y*), plus eps times the uniform term": mean_real(nll + eps * uni),
    }
    if int(targets[real].max()) < C:  # a word id used as a column index
        by_id = -lp_s.gather(-1, targets.clamp(0, C - 1).unsqueeze(-1)).squeeze(-1)
        wrong["you indexed the listed columns with the word id: column j of the shortlist "
              "logits is word listed[j]; find each target's column (torch.searchsorted(listed, "
              "target), or a lookup table)"] = mean_real((1 - eps) * by_id + eps * uni)
    return wrong


def _smoothed_case(fn, B: int, T: int, V: int, lengths: list[int], short: int, eps: float,
                   seed: int, pad: int = PAD) -> str:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V, generator=g) * 2.0  # (B, T, V)
    targets = torch.randint(len(SPECIALS), V, (B, T), generator=g)  # (B, T)
    for b, n in enumerate(lengths):
        targets[b, n:] = pad
    listed = shortlist_ids(targets, short, pad)  # (C,) sorted
    expected = float(smoothed_shortlist_reference(logits, targets, pad, eps, listed))
    label = (f"B={B}, T={T}, V={V}, lengths {lengths}, |S| = {len(listed)}, eps = {eps}, "
             f"pad = {pad}")
    with _no_builtin_loss():
        got = call(fn, logits, targets, pad, eps, listed,
                   names=("logits", "targets", "pad", "eps", "listed"), where=label)
    if torch.is_tensor(got):
        if got.numel() != 1:
            raise Mismatch(f"{label}: return one number (a scalar tensor), got shape "
                           f"{tuple(got.shape)}")
        got = float(got)
    if not isinstance(got, (int, float)):
        raise Mismatch(f"{label}: return a number (a scalar tensor), got {type(got).__name__}")
    if math.isclose(got, expected, rel_tol=1e-4, abs_tol=1e-5):
        return label
    for why, value in _smoothed_variants(logits, targets, pad, eps, listed).items():
        if math.isclose(got, value, rel_tol=1e-4, abs_tol=1e-5):
            raise Mismatch(f"{label}: {why}")
    raise Mismatch(f"{label}: you returned {got:.5g}, expected {expected:.5g}")


def check_smoothed_shortlist_loss(fn) -> CheckResult:
    """fn(logits (B, T, V), targets (B, T), pad, eps, listed (C,)) -> the label-smoothed loss
    over the shortlist softmax, averaged over real tokens."""
    return run_checks(
        "label-smoothed loss over a shortlist",
        lambda: _smoothed_case(fn, 3, 5, 20, [5, 2, 3], 6, 0.1, 0),
        lambda: _smoothed_case(fn, 2, 4, 30, [4, 1], 8, 0.3, 1),
        lambda: _smoothed_case(fn, 4, 6, 25, [6, 6, 3, 1], 7, 0.1, 2, pad=5),
        lambda: _smoothed_case(fn, 2, 3, 12, [3, 3], 12, 0.2, 3),
    )


# ---------------------------------------------------------------------------------------------
# sequence_log_prob(model, src, src_lengths, tgt) -> log P(y | x) (B,)
# ---------------------------------------------------------------------------------------------


@torch.no_grad()
def _wrong_log_prob(model, src, src_lengths, tgt, mistake: str) -> torch.Tensor:
    """sequence_log_prob with one typical mistake, to recognise it in a learner's answer."""
    _, state, context = model.encode(src, src_lengths)
    B, T = tgt.shape
    dev = tgt.device
    total = torch.zeros(B, device=dev)  # (B,)
    live = torch.ones(B, dtype=torch.bool, device=dev)  # (B,)
    prev = torch.full((B,), SOS, dtype=torch.long, device=dev)  # (B,)
    for t in range(T):
        if mistake == "shifted":  # reads y_t to predict y_t
            prev = tgt[:, t]
        logits, state = model.decoder.step(prev, state, context)
        tok = tgt[:, t]
        # log_softmax equals log_probs on every token that may be written
        lp = F.log_softmax(logits.float(), -1).gather(1, tok.unsqueeze(1)).squeeze(1)  # (B,)
        counts = torch.ones_like(live) if mistake == "count pad" else live & (tok != PAD)
        total += torch.where(counts, lp, torch.zeros_like(lp))
        live &= tok != EOS
        if mistake == "own prediction":  # greedy's choice, <pad> and <sos> forbidden
            prev = log_probs(logits).argmax(-1)
        elif mistake == "own prediction, raw":  # the same from the raw logits
            prev = logits.argmax(-1)
        else:
            prev = tok
    return total.cpu()


def _seq_case(fn, model, src, src_lengths, tgt, label: str) -> str:
    with torch.no_grad():
        expected = sequence_log_prob(model, src, src_lengths, tgt).float().cpu()  # (B,)
        got = call(fn, model, src, src_lengths, tgt,
                   names=("model", "src", "src_lengths", "tgt"), where=label)
    B = tgt.size(0)
    if not torch.is_tensor(got):
        raise Mismatch(f"{label}: return a tensor of log-probabilities (B,), got "
                       f"{type(got).__name__}")
    expect_shape(f"{label}: log P(y | x)", got, (B,))
    got = got.detach().float().cpu()
    if torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
        return f"{label}: equal to lib.search.sequence_log_prob"
    if bool(torch.isnan(got).any()):
        raise Mismatch(f"{label}: your log P is {got.tolist()}: nan comes from arithmetic "
                       f"such as inf - inf or 0 * inf (multiplying a -inf log-probability by a "
                       f"0/1 mask, say); pick the counted terms with torch.where instead")
    if not bool(torch.isfinite(got).all()):
        raise Mismatch(f"{label}: your log P is {got.tolist()}: -inf comes from scoring a "
                       f"<pad> position (lib.search.log_probs forbids <pad>); stop counting "
                       f"after the first <eos>")
    if bool((got > 0).all()):
        if torch.allclose(got, -expected, atol=1e-4, rtol=1e-4):
            raise Mismatch(f"{label}: you returned -log P; log P(y | x) is <= 0")
        raise Mismatch(f"{label}: log-probabilities are <= 0, yours are positive: forgot the "
                       f"log? (sum log P(y_t | ...), do not multiply or add probabilities)")
    own = ("you fed the model's own prediction (its argmax) as the next input, which is "
           "right only where the output is the one greedy decoding writes; to score a given "
           "output, feed its own previous token y_{t-1} (teacher forcing)")
    for mistake, why in (
            ("count pad", "you counted the <pad> positions after <eos>: only the tokens up to "
                          "and including the first <eos> belong to the output"),
            ("own prediction", own),
            ("own prediction, raw", own),
            ("shifted", "off by one: step t must read the previous token y_{t-1} (<sos> at "
                        "step 1) and score y_t; you fed y_t itself")):
        wrong = _wrong_log_prob(model, src, src_lengths, tgt, mistake)
        if torch.allclose(got, wrong, atol=1e-4, rtol=1e-4):
            raise Mismatch(f"{label}: {why}")
    expect_close(f"{label}: log P(y | x)", got, expected, atol=1e-4)
    return ""


def _targets(rows: list[list[int]]) -> torch.Tensor:
    T = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (T - len(r)) for r in rows])  # (B, T)


def check_sequence_log_prob(fn, model=None) -> CheckResult:
    """fn(model, src (B, S), src_lengths (B,), tgt (B, T)) -> log P(tgt | src) (B,).

    tgt rows hold tokens, then <eos>, then <pad>, as the search functions return them.
    """
    tiny = shared_vocab_model(7)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, PAD, PAD], [10, 4, 11, PAD]])  # (3, 4)
    lengths = torch.tensor([4, 2, 3])
    tgt = _targets([[5, 6, EOS], [7, EOS], [4, 8, 9, 10, EOS]])
    checks = [lambda: _seq_case(fn, tiny, src, lengths, tgt, "tiny model, 3 outputs")]
    if model is not None:
        s, n = model.prepare(["I am cold.", "Where is the station?"])

        def own():
            out = greedy(model, s, n)  # (2, T): tokens, <eos>, <pad>
            return _seq_case(fn, model, s, n, out, "course model, its own greedy outputs")

        def given():
            ids = [model.tgt_vocab.encode(tokenize(fr)) + [EOS]
                   for fr in ("J'ai très froid.", "Où se trouve la gare ?")]
            return _seq_case(fn, model, s, n, _targets(ids).to(s.device),
                             "course model, outputs greedy does not write")
        checks += [own, given]
    return run_checks("sequence_log_prob", *checks)


# ---------------------------------------------------------------------------------------------
# calibration(top_p (N,), right (N,), edges) -> [(mean top_p, share right)] per group
# ---------------------------------------------------------------------------------------------


def _calibration_reference(top_p, right, edges, closed_last=True, left_open=False):
    """Per group [lo, hi) (the last one [lo, hi]): (mean confidence, share right)."""
    groups = []
    for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
        last = closed_last and i == len(edges) - 2
        if left_open:  # (lo, hi]: the learner's mistake
            inside = (top_p > lo) & (top_p <= hi)  # (N,)
        else:
            inside = (top_p >= lo) & ((top_p <= hi) if last else (top_p < hi))  # (N,)
        groups.append((float(top_p[inside].mean()), float(right[inside].float().mean())))
    return groups


def _calibration_case(fn, top_p, right, edges, label: str) -> str:
    expected = _calibration_reference(top_p, right, edges)
    got = call(fn, top_p, right, list(edges), names=("top_p", "right", "edges"), where=label)
    try:
        got = [(float(c), float(a)) for c, a in got]
    except (TypeError, ValueError):
        raise Mismatch(f"{label}: return a list with one pair (mean top_p, share right) per "
                       f"group, got {got!r:.80}") from None
    if len(got) != len(expected):
        raise Mismatch(f"{label}: {len(edges)} edges make {len(expected)} groups; you returned "
                       f"{len(got)} pairs")

    def same(a, b):
        return all(math.isclose(x, y, abs_tol=1e-5) or (math.isnan(x) and math.isnan(y))
                   for p, q in zip(a, b) for x, y in zip(p, q))

    if same(got, expected):
        return label
    for g, ((c, a), (ec, _)) in enumerate(zip(got, expected)):
        if math.isnan(ec) and not (math.isnan(c) and math.isnan(a)):
            raise Mismatch(f"{label}: group {g} [{edges[g]}, {edges[g + 1]}) has no positions: "
                           f"return (nan, nan) for it, as the statement asks, not "
                           f"({c:.4g}, {a:.4g}); a mean of nothing is undefined, not 0")
    last = len(edges) - 2
    counts = [int(((top_p >= lo) & ((top_p <= hi) if i == last else (top_p < hi))).sum())
              for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]  # positions per group
    for wrong, why in (
            ([(a, c) for c, a in expected], "each pair is (mean top_p, share right): you "
                                             "returned them the other way round"),
            (_calibration_reference(top_p, right, edges, closed_last=False),
             "the top word's probability can be exactly 1.0, and those positions fell outside "
             "every group: the last group must include its upper edge ([lo, hi])"),
            (_calibration_reference(top_p, right, edges, left_open=True),
             "a probability equal to a lower edge belongs to the group that starts there: "
             "groups are [lo, hi), not (lo, hi]"),
            ([(c, a * n / len(top_p)) for (c, a), n in zip(expected, counts)],
             "the share right is over the positions IN the group (right ones / the group's "
             "size), not over all positions"),
            ([(c, a * n) for (c, a), n in zip(expected, counts)],
             "you returned how many are right; return the share (a number between 0 and 1)")):
        if same(got, wrong):
            raise Mismatch(f"{label}: {why}")
    for g, ((c, a), (ec, ea)) in enumerate(zip(got, expected)):
        if not (math.isclose(c, ec, abs_tol=1e-5) and math.isclose(a, ea, abs_tol=1e-5)):
            raise Mismatch(f"{label}: group {g} [{edges[g]}, {edges[g + 1]}): you returned "
                           f"({c:.4g}, {a:.4g}), expected mean top_p {ec:.4g} and share right "
                           f"{ea:.4g}")
    return label


def check_calibration(fn) -> CheckResult:
    """fn(top_p (N,), right (N,) bool, edges) -> [(mean top_p, share right)] per group."""
    hand_p = torch.tensor([0.2, 0.5, 0.5, 0.7, 0.8, 0.9, 1.0, 1.0])
    hand_right = torch.tensor([False, True, False, True, True, False, True, True])
    g = torch.Generator().manual_seed(0)
    many_p = torch.rand(400, generator=g) * 0.7 + 0.3  # (N,) in [0.3, 1)
    many_right = torch.rand(400, generator=g) < many_p  # right about as often as claimed
    return run_checks(
        "calibration",
        # by hand: [0, 0.5) holds 0.2 (wrong): (0.2, 0); [0.5, 0.8) holds 0.5, 0.5, 0.7: (0.5667,
        # 2/3); [0.8, 1] holds 0.8, 0.9, 1.0, 1.0: (0.925, 3/4)
        lambda: _calibration_case(fn, hand_p, hand_right, [0.0, 0.5, 0.8, 1.0],
                                  "8 positions worked out by hand, some on the edges"),
        lambda: _calibration_case(fn, many_p, many_right, [0.3, 0.5, 0.7, 0.9, 1.0],
                                  "400 random positions, 4 groups"),
        # no position below 0.1: the first group is empty, (nan, nan)
        lambda: _calibration_case(fn, hand_p, hand_right, [0.0, 0.1, 0.5, 1.0],
                                  "the same 8 positions, a first group with none"),
    )

"""lib.checks.head: each checker accepts the reference solution, rejects typical wrong ones with
a message that names the mistake, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import skeleton
from torch import nn

from lib.checks import head as checks
from lib.checks.models import shared_vocab_model
from lib.data import EOS, PAD, SOS
from lib.head import masked_cross_entropy, shortlist_ids
from lib.search import greedy, log_probs
from lib.search import sequence_log_prob as search_log_prob

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


# --- log_softmax ----------------------------------------------------------------------------


def log_softmax(logits):
    z = logits - logits.max(dim=-1, keepdim=True).values  # the largest becomes 0
    return z - torch.log(torch.exp(z).sum(dim=-1, keepdim=True))


def _stable_softmax(z):
    e = torch.exp(z - z.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def _max(z, dim=-1):
    return z.max(dim=dim, keepdim=True).values


def test_log_softmax_accepts_the_reference():
    result = checks.check_log_softmax(log_softmax)
    assert result.ok, result


def test_the_reference_is_torch_log_softmax_where_the_log_of_a_softmax_is_not():
    z = torch.tensor([0.0, -200.0])
    assert torch.allclose(log_softmax(z), torch.log_softmax(z, -1))
    assert float(log_softmax(z)[1]) == pytest.approx(-200.0)
    assert torch.isneginf(torch.log(_stable_softmax(z))[1])  # the exercise's prediction


@pytest.mark.parametrize("wrong, words", [
    (lambda z: torch.log(_stable_softmax(z)), "That is the log of a softmax"),
    (lambda z: z - torch.log(torch.exp(z).sum(-1, keepdim=True)), "overflows"),
    (lambda z: z - _max(z), "you returned z - max(z)"),
    (lambda z: z - torch.log(torch.exp(z - _max(z)).sum(-1, keepdim=True)),
     "off by each row's maximum"),
    (lambda z: -log_softmax(z), "you returned -log P"),
    (lambda z: z - _max(z, 0) - torch.log(torch.exp(z - _max(z, 0)).sum(0, keepdim=True)),
     "dim 0"),
    (lambda z: torch.log_softmax(z, -1), "torch's own softmax, log_softmax and logsumexp"),
    (lambda z: F.log_softmax(z, dim=-1), "torch's own"),
    (lambda z: z.log_softmax(-1), "torch's own"),
    (lambda z: z - torch.logsumexp(z, -1, keepdim=True), "torch's own"),
    (lambda z: z - z.logsumexp(-1, keepdim=True), "torch's own"),
    (lambda z: torch.log(torch.softmax(z, -1)), "torch's own"),
    (lambda z: torch.special.log_softmax(z, -1), "torch's own"),
    (lambda z: z - torch.special.logsumexp(z, -1, keepdim=True), "torch's own"),
    (lambda z: torch.log(torch.special.softmax(z, -1)), "torch's own"),
    (lambda z: log_softmax(z) * 1.01, "differs at index"),
])
def test_log_softmax_rejects_typical_mistakes(wrong, words):
    result = checks.check_log_softmax(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_log_softmax_check_restores_torch_functions():
    checks.check_log_softmax(lambda z: torch.log_softmax(z, -1))
    two = torch.zeros(2)
    half = torch.tensor([0.5, 0.5])
    assert torch.allclose(torch.softmax(two, -1), half)
    assert torch.allclose(two.softmax(-1), half)
    assert torch.allclose(F.log_softmax(two, -1).exp(), half)
    assert torch.allclose(torch.logsumexp(two, -1), torch.tensor(2.0).log())
    assert torch.allclose(torch.special.log_softmax(two, -1).exp(), half)


def test_log_softmax_skeleton_is_not_done():
    assert not checks.check_log_softmax(skeleton).done


# --- masked cross-entropy -------------------------------------------------------------------


def cross_entropy(logits, targets, pad):
    logp = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    picked = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = targets != pad  # (B, T)
    return -(picked * real).sum() / real.sum()


def _picked(logits, targets):
    return torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def test_cross_entropy_accepts_the_reference():
    result = checks.check_masked_cross_entropy(cross_entropy)
    assert result.ok, result


def _unmasked(logits, targets, pad):
    return -_picked(logits, targets).mean()  # every position, <pad> targets included


@pytest.mark.parametrize("wrong, words", [
    (_unmasked, "padding not masked"),
    (lambda lg, tg, pad: -(_picked(lg, tg) * (tg != pad)).sum() / tg.numel(),
     "averaged over all positions instead of real tokens"),
    (lambda lg, tg, pad: -(_picked(lg, tg).exp() * (tg != pad)).sum() / (tg != pad).sum(),
     "forgot the log"),
    (lambda lg, tg, pad: (_picked(lg, tg) * (tg != pad)).sum() / (tg != pad).sum(),
     "NEGATIVE log-probability"),
    (lambda lg, tg, pad: -(_picked(lg, tg) * (tg != pad)).sum(), "summed"),
    (lambda lg, tg, pad: -lg.gather(-1, tg.unsqueeze(-1)).squeeze(-1)[tg != pad].mean(),
     "raw logit"),
    (lambda lg, tg, pad: -_picked(lg, tg)[tg != 0].mean(), "padding not masked"),
])
def test_cross_entropy_rejects_typical_mistakes(wrong, words):
    result = checks.check_masked_cross_entropy(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


@pytest.mark.parametrize("builtin", [
    masked_cross_entropy,  # the library's own, printed on the page: F.cross_entropy inside
    lambda lg, tg, pad: F.cross_entropy(lg.transpose(1, 2), tg, ignore_index=pad),
    lambda lg, tg, pad: F.nll_loss(torch.log_softmax(lg, -1).transpose(1, 2), tg,
                                   ignore_index=pad),
    lambda lg, tg, pad: nn.CrossEntropyLoss(ignore_index=pad)(lg.transpose(1, 2), tg),
    lambda lg, tg, pad: nn.NLLLoss(ignore_index=pad)(torch.log_softmax(lg, -1).transpose(1, 2),
                                                     tg),
])
def test_cross_entropy_refuses_torchs_own_loss(builtin):
    result = checks.check_masked_cross_entropy(builtin)
    assert result.done and not result.ok
    assert "you called torch's own cross-entropy" in str(result), result


def test_cross_entropy_check_restores_torchs_own_loss():
    checks.check_masked_cross_entropy(masked_cross_entropy)
    logits, targets = torch.zeros(1, 2, 4), torch.tensor([[1, 0]])
    for value in (F.cross_entropy(logits[0], targets[0], ignore_index=0),
                  F.nll_loss(torch.log_softmax(logits[0], -1), targets[0], ignore_index=0),
                  masked_cross_entropy(logits, targets, pad=0)):
        assert math.isclose(float(value), math.log(4), rel_tol=1e-6)


def test_cross_entropy_skeleton_is_not_done():
    assert not checks.check_masked_cross_entropy(skeleton).done


# --- sequence log-probability ---------------------------------------------------------------


def sequence_log_prob(model, src, src_lengths, tgt):
    _, state, context = model.encode(src, src_lengths)
    B, T = tgt.shape
    total = torch.zeros(B)
    live = torch.ones(B, dtype=torch.bool)  # before the first <eos>
    prev = torch.full((B,), SOS, dtype=torch.long)
    for t in range(T):
        logits, state = model.decoder.step(prev, state, context)  # (B, V)
        lp = torch.log_softmax(logits, -1).gather(1, tgt[:, t:t + 1]).squeeze(1)  # (B,)
        total += torch.where(live & (tgt[:, t] != PAD), lp, torch.zeros_like(lp))
        live &= tgt[:, t] != EOS
        prev = tgt[:, t]  # teacher forcing: the given token, whatever the model predicted
    return total


def test_sequence_log_prob_accepts_the_reference():
    result = checks.check_sequence_log_prob(sequence_log_prob)
    assert result.ok, result


def test_sequence_log_prob_accepts_the_reference_on_a_model_with_prepare():
    model = shared_vocab_model(8)  # its vocabulary: w0 w1 ...; prepare() and greedy() work on it
    src, n = model.prepare(["w0 w1 w2", "w3"])
    tgt = greedy(model, src, n, max_len=6)
    assert checks._seq_case(sequence_log_prob, model, src, n, tgt, "x")


def _wrong(mistake):
    return lambda model, src, n, tgt: checks._wrong_log_prob(model, src, n, tgt, mistake)


def _no_log(model, src, n, tgt):
    return sequence_log_prob(model, src, n, tgt).exp()


@pytest.mark.parametrize("wrong, words", [
    (_wrong("count pad"), "<pad> positions"),
    (_wrong("own prediction"), "teacher forcing"),
    (_wrong("shifted"), "off by one"),
    (_no_log, "forgot the log"),
    (lambda m, s, n, t: -sequence_log_prob(m, s, n, t), "-log P"),
])
def test_sequence_log_prob_rejects_typical_mistakes(wrong, words):
    result = checks.check_sequence_log_prob(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def _masked_by_product(model, src, src_lengths, tgt):
    """Masks with a product: log_probs gives <pad> -inf, and -inf * 0 is nan."""
    _, state, context = model.encode(src, src_lengths)
    total = torch.zeros(tgt.size(0))
    live = torch.ones(tgt.size(0), dtype=torch.bool)
    prev = torch.full_like(tgt[:, 0], SOS)
    for t in range(tgt.size(1)):
        logits, state = model.decoder.step(prev, state, context)
        lp = log_probs(logits).gather(1, tgt[:, t:t + 1]).squeeze(1)  # -inf at <pad>
        total += lp * (live & (tgt[:, t] != PAD))
        live &= tgt[:, t] != EOS
        prev = tgt[:, t]
    return total


def test_sequence_log_prob_names_nan_as_nan_not_as_pad_scored():
    result = checks.check_sequence_log_prob(_masked_by_product)
    assert result.done and not result.ok
    assert "nan comes from" in str(result) and "-inf comes from" not in str(result), result


def scorer(model, src, src_lengths, tgt):
    """The chapter's buggy scorer (book/prediction_head.md): it feeds its own argmax."""
    _, state, context = model.encode(src, src_lengths)
    total = torch.zeros(tgt.size(0), device=tgt.device)
    live = torch.ones_like(total, dtype=torch.bool)
    prev = torch.full_like(tgt[:, 0], SOS)
    for t in range(tgt.size(1)):
        logits, state = model.decoder.step(prev, state, context)
        logp = log_probs(logits)
        lp = logp.gather(1, tgt[:, t:t + 1]).squeeze(1)
        total += torch.where(live, lp, torch.zeros_like(lp))
        live &= tgt[:, t] != EOS
        prev = logp.argmax(-1)
    return total


def test_the_chapters_buggy_scorer_is_right_on_greedy_outputs_only():
    model = shared_vocab_model(8)
    src, n = model.prepare(["w0 w1 w2", "w3", "w4 w5 w6 w7"])
    with torch.no_grad():
        own = greedy(model, src, n, max_len=6)
        assert torch.allclose(scorer(model, src, n, own), search_log_prob(model, src, n, own),
                              atol=1e-5)
    assert checks._seq_case(scorer, model, src, n, own, "greedy's outputs")
    result = checks.check_sequence_log_prob(scorer)
    assert result.done and not result.ok
    assert "own prediction" in str(result) and "teacher forcing" in str(result), result


def test_sequence_log_prob_skeleton_is_not_done():
    assert not checks.check_sequence_log_prob(skeleton).done


# --- inputs changed in place ------------------------------------------------------------------


def test_log_softmax_names_logits_changed_in_place():
    def in_place(logits):
        logits -= logits.max(dim=-1, keepdim=True).values
        return logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))

    result = checks.check_log_softmax(in_place)
    assert not result.ok and result.done
    assert "your function changed its input `logits` in place" in str(result)
    assert "compute a new tensor instead" in str(result)


def test_cross_entropy_names_targets_changed_in_place():
    def masks_in_place(logits, targets, pad):
        real = targets != pad
        targets[~real] = 0  # gather needs valid indices... but these are the caller's targets
        picked = torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return -(picked * real).sum() / real.sum()

    assert "`targets` in place" in str(checks.check_masked_cross_entropy(masks_in_place))


# --- calibration ------------------------------------------------------------------------------


def calibration(top_p, right, edges):
    groups = []
    for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
        last = i == len(edges) - 2
        inside = (top_p >= lo) & ((top_p <= hi) if last else (top_p < hi))
        groups.append((float(top_p[inside].mean()), float(right[inside].float().mean())))
    return groups


def test_calibration_accepts_the_reference_and_agrees_with_the_hand_computation():
    result = checks.check_calibration(calibration)
    assert result.ok, result
    top_p = torch.tensor([0.2, 0.5, 0.5, 0.7, 0.8, 0.9, 1.0, 1.0])
    right = torch.tensor([False, True, False, True, True, False, True, True])
    got = calibration(top_p, right, [0.0, 0.5, 0.8, 1.0])
    flat = [x for pair in got for x in pair]
    assert flat == pytest.approx([0.2, 0.0, 1.7 / 3, 2 / 3, 3.7 / 4, 3 / 4], abs=1e-6)


def _half_open(top_p, right, edges):  # [lo, hi) everywhere: p = 1.0 falls out
    return [(float(top_p[(top_p >= lo) & (top_p < hi)].mean()),
             float(right[(top_p >= lo) & (top_p < hi)].float().mean()))
            for lo, hi in zip(edges, edges[1:])]


def _left_open(top_p, right, edges):  # (lo, hi]
    return [(float(top_p[(top_p > lo) & (top_p <= hi)].mean()),
             float(right[(top_p > lo) & (top_p <= hi)].float().mean()))
            for lo, hi in zip(edges, edges[1:])]


def _over_all(top_p, right, edges):  # right ones of the group / all positions
    return [(c, a * int(((top_p >= lo) & ((top_p <= hi) if i == len(edges) - 2
                                          else (top_p < hi))).sum()) / len(top_p))
            for i, ((c, a), lo, hi) in enumerate(zip(calibration(top_p, right, edges), edges,
                                                     edges[1:]))]


@pytest.mark.parametrize("wrong, words", [
    (lambda p, r, e: [(a, c) for c, a in calibration(p, r, e)], "other way round"),
    (_half_open, "must include its upper edge"),
    (_left_open, "not (lo, hi]"),
    (_over_all, "not over all positions"),
    (lambda p, r, e: [(c, a * 100) for c, a in calibration(p, r, e)], "expected mean top_p"),
    (lambda p, r, e: calibration(p, r, e)[:-1], "groups; you returned 2 pairs"),
    (lambda p, r, e: 0.5, "return a list with one pair"),
])
def test_calibration_names_typical_mistakes(wrong, words):
    result = checks.check_calibration(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_calibration_names_counts_instead_of_shares():
    def counts(top_p, right, edges):
        out = []
        for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
            last = i == len(edges) - 2
            inside = (top_p >= lo) & ((top_p <= hi) if last else (top_p < hi))
            out.append((float(top_p[inside].mean()), int(right[inside].sum())))
        return out

    assert "how many are right" in str(checks.check_calibration(counts))


def test_calibration_names_a_zero_for_an_empty_group():
    def zeros_when_empty(top_p, right, edges):
        out = []
        for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
            last = i == len(edges) - 2
            inside = (top_p >= lo) & ((top_p <= hi) if last else (top_p < hi))
            if not inside.any():
                out.append((0.0, 0.0))
                continue
            out.append((float(top_p[inside].mean()), float(right[inside].float().mean())))
        return out

    result = checks.check_calibration(zeros_when_empty)
    assert result.done and not result.ok
    assert "has no positions: return (nan, nan)" in str(result), result


def test_calibration_gives_a_message_when_an_empty_group_divides_by_zero():
    def python_mean(top_p, right, edges):
        out = []
        for i, (lo, hi) in enumerate(zip(edges, edges[1:])):
            last = i == len(edges) - 2
            ps = [(float(p), bool(r)) for p, r in zip(top_p, right)
                  if lo <= p and (p <= hi if last else p < hi)]
            out.append((sum(p for p, _ in ps) / len(ps), sum(r for _, r in ps) / len(ps)))
        return out

    result = checks.check_calibration(python_mean)  # must not raise
    assert result.done and not result.ok
    assert "ZeroDivisionError" in str(result) or "division" in str(result), result


def test_calibration_skeleton_is_not_done():
    assert not checks.check_calibration(skeleton).done


# --- label-smoothed loss over a shortlist ----------------------------------------------------


def smoothed_shortlist_loss(logits, targets, pad, eps, listed):
    real = targets != pad  # (B, T)
    logp = torch.log_softmax(logits[real][:, listed], -1)  # (N, C)
    column = torch.searchsorted(listed, targets[real])  # (N,)
    nll = -logp.gather(1, column.unsqueeze(1)).squeeze(1)  # (N,)
    return ((1 - eps) * nll - eps * logp.mean(-1)).mean()


def test_smoothed_reference_equals_torch_label_smoothing_and_a_hand_value():
    # independent oracle: torch's own label smoothing over the listed columns
    g = torch.Generator().manual_seed(0)
    logits, targets = torch.randn(2, 4, 15, generator=g), torch.randint(4, 15, (2, 4), generator=g)
    targets[1, 2:] = 0
    listed = shortlist_ids(targets, 5)
    real = targets != 0
    column = torch.searchsorted(listed, targets[real])
    torch_value = F.cross_entropy(logits[real][:, listed], column, label_smoothing=0.1)
    ours = checks.smoothed_shortlist_reference(logits, targets, 0, 0.1, listed)
    assert torch.isclose(ours, torch_value, atol=1e-6)
    # by hand: two equal logits over S = {a, b}: -log P = log 2 for each, any eps
    two = torch.zeros(1, 1, 3)
    hand = checks.smoothed_shortlist_reference(two, torch.tensor([[1]]), 0, 0.3,
                                               torch.tensor([1, 2]))
    assert math.isclose(float(hand), math.log(2), rel_tol=1e-6)


def test_smoothed_shortlist_accepts_the_reference():
    result = checks.check_smoothed_shortlist_loss(smoothed_shortlist_loss)
    assert result.ok, result


def _all_words(logits, targets, pad, eps, listed):
    real = targets != pad
    logp = torch.log_softmax(logits[real], -1)[:, listed]  # over V, then kept: not normalised
    column = torch.searchsorted(listed, targets[real])
    return ((1 - eps) * -logp.gather(1, column[:, None]).squeeze(1) - eps * logp.mean(-1)).mean()


def _swapped(logits, targets, pad, eps, listed):
    return smoothed_shortlist_loss(logits, targets, pad, 1 - eps, listed)


def _padding_in(logits, targets, pad, eps, listed):
    logp = torch.log_softmax(logits.reshape(-1, logits.size(-1))[:, listed], -1)
    column = torch.searchsorted(listed, targets.reshape(-1))  # pad -> a column near the start
    nll = -logp.gather(1, column[:, None]).squeeze(1)
    return ((1 - eps) * nll - eps * logp.mean(-1)).mean()


def _no_smoothing(logits, targets, pad, eps, listed):
    return smoothed_shortlist_loss(logits, targets, pad, 0.0, listed)


@pytest.mark.parametrize("wrong, words", [
    (_all_words, "over the listed columns only"),
    (_swapped, "wrong way round"),
    (_padding_in, "padding not masked"),
    (_no_smoothing, "no smoothing"),
])
def test_smoothed_shortlist_names_typical_mistakes(wrong, words):
    result = checks.check_smoothed_shortlist_loss(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def _torch_smoothing(logits, targets, pad, eps, listed):  # the printed shortlist_cross_entropy
    real = targets != pad
    column = torch.searchsorted(listed, targets[real])
    return F.cross_entropy(logits[real][:, listed], column, label_smoothing=eps)


def test_smoothed_shortlist_refuses_torchs_own_loss():
    result = checks.check_smoothed_shortlist_loss(_torch_smoothing)
    assert result.done and not result.ok
    assert "you called torch's own cross-entropy" in str(result), result
    # the same loss, right, once the checker has put F.cross_entropy back
    g = torch.Generator().manual_seed(0)
    logits, targets = torch.randn(2, 3, 9, generator=g), torch.tensor([[4, 5, 0], [6, 0, 0]])
    listed = shortlist_ids(targets, 5)
    assert torch.isclose(_torch_smoothing(logits, targets, 0, 0.1, listed),
                         smoothed_shortlist_loss(logits, targets, 0, 0.1, listed), atol=1e-6)


def test_smoothed_shortlist_skeleton_is_not_done():
    def todo(logits, targets, pad, eps, listed):
        raise NotImplementedError

    assert not checks.check_smoothed_shortlist_loss(todo).done

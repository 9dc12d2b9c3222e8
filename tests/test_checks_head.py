"""lib.checks.head: each checker accepts the reference solution, rejects typical wrong ones with
a message that names the mistake, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import skeleton

from lib.checks import head as checks
from lib.checks.decoder import tiny_model
from lib.data import EOS, PAD, SOS


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread; on 2 shared cores more threads thrash."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- softmax --------------------------------------------------------------------------------


def softmax(logits):
    z = logits - logits.max(dim=-1, keepdim=True).values  # the largest becomes 0
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def test_softmax_accepts_the_reference():
    result = checks.check_softmax(softmax)
    assert result.ok, result


@pytest.mark.parametrize("wrong, words", [
    (lambda z: torch.exp(z) / torch.exp(z).sum(-1, keepdim=True), "subtract each row's maximum"),
    (lambda z: torch.exp(z - z.max()), "must sum to 1"),
    (lambda z: torch.exp(z - z.max(0, keepdim=True).values)
     / torch.exp(z - z.max(0, keepdim=True).values).sum(0, keepdim=True), "dim 0"),
    (lambda z: torch.softmax(z, -1), "torch's own softmax"),
    (lambda z: F.softmax(z, dim=-1), "torch's own softmax"),
    (lambda z: z.softmax(-1), "torch's own softmax"),
])
def test_softmax_rejects_typical_mistakes(wrong, words):
    result = checks.check_softmax(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


def test_softmax_check_restores_torch_softmax():
    checks.check_softmax(lambda z: torch.softmax(z, -1))
    assert torch.allclose(torch.softmax(torch.zeros(2), -1), torch.tensor([0.5, 0.5]))
    assert torch.allclose(torch.zeros(2).softmax(-1), torch.tensor([0.5, 0.5]))


def test_softmax_skeleton_is_not_done():
    assert not checks.check_softmax(skeleton).done


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


@pytest.mark.parametrize("wrong, words", [
    (lambda lg, tg, pad: F.cross_entropy(lg.reshape(-1, lg.size(-1)), tg.reshape(-1)),
     "padding not masked"),
    (lambda lg, tg, pad: -(_picked(lg, tg) * (tg != pad)).sum() / tg.numel(),
     "averaged over all positions instead of real tokens"),
    (lambda lg, tg, pad: -(_picked(lg, tg).exp() * (tg != pad)).sum() / (tg != pad).sum(),
     "forgot the log"),
    (lambda lg, tg, pad: (_picked(lg, tg) * (tg != pad)).sum() / (tg != pad).sum(),
     "NEGATIVE log-probability"),
    (lambda lg, tg, pad: -(_picked(lg, tg) * (tg != pad)).sum(), "summed"),
    (lambda lg, tg, pad: -lg.gather(-1, tg.unsqueeze(-1)).squeeze(-1)[tg != pad].mean(),
     "raw logit"),
    (lambda lg, tg, pad: F.cross_entropy(lg.reshape(-1, lg.size(-1)), tg.reshape(-1),
                                         ignore_index=0), "padding not masked"),
])
def test_cross_entropy_rejects_typical_mistakes(wrong, words):
    result = checks.check_masked_cross_entropy(wrong)
    assert result.done and not result.ok
    assert words in str(result), result


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
    model = tiny_model(8)  # its vocabulary: w0 w1 ...; prepare() and greedy() work on it
    src, n = model.prepare(["w0 w1 w2", "w3"])
    from lib.search import greedy
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


def test_sequence_log_prob_skeleton_is_not_done():
    assert not checks.check_sequence_log_prob(skeleton).done


# --- inputs changed in place ------------------------------------------------------------------


def test_softmax_names_logits_changed_in_place():
    def in_place(logits):
        logits -= logits.max(dim=-1, keepdim=True).values
        logits.exp_()
        return logits / logits.sum(dim=-1, keepdim=True)

    result = checks.check_softmax(in_place)
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

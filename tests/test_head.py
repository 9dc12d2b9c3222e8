"""lib.head: the prediction head (eq. 6, 8), the masked cross-entropy (eq. 7) and the shortlist
softmax of training, checked against hand computations with padding present."""

from __future__ import annotations

import math

import pytest
import torch

from lib.data import PAD
from lib.head import (
    PredictionHead,
    masked_cross_entropy,
    shortlist_columns,
    shortlist_cross_entropy,
    shortlist_ids,
)

# One sentence of 3 real tokens and one of 1, padded to T = 3, over a vocabulary of 5.
# Real positions carry logits log([1, 2, 3, 4, 10]) so that P = [1, 2, 3, 4, 10] / 20 exactly.
PROBS = [1, 2, 3, 4, 10]
TARGETS = [[1, 2, 4], [3, PAD, PAD]]


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


def _logits():
    real = [math.log(p) for p in PROBS]
    garbage = [50.0, -30.0, 7.0, 0.0, 1e3]  # at padded positions: must not matter
    rows = [[real, [r + 1.5 for r in real], real], [real, garbage, garbage]]
    return torch.tensor(rows, dtype=torch.float64, requires_grad=True)


def test_mean_and_sum_equal_the_hand_computation():
    logits, targets = _logits(), torch.tensor(TARGETS)
    # -log P of each real target: P(1) = 2/20, P(2) = 3/20 (adding 1.5 to every logit changes
    # nothing), P(4) = 10/20, P(3) = 4/20
    nll = [-math.log(2 / 20), -math.log(3 / 20), -math.log(10 / 20), -math.log(4 / 20)]
    total = masked_cross_entropy(logits, targets, reduction="sum")
    mean = masked_cross_entropy(logits, targets)
    assert total.item() == pytest.approx(sum(nll), abs=1e-12)
    assert total.item() == pytest.approx(-math.log(2 * 3 * 10 * 4 / 20 ** 4), abs=1e-12)  # eq. 7
    assert mean.item() == pytest.approx(sum(nll) / 4, abs=1e-12)  # 4 real tokens, not 6


def test_equals_an_explicit_log_softmax_on_random_logits():
    g = torch.Generator().manual_seed(0)
    B, T, V = 3, 5, 7
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64) * 3
    targets = torch.randint(1, V, (B, T), generator=g)
    targets[0, 3:] = PAD
    targets[2, 1:] = PAD
    terms = []
    for b in range(B):
        for t in range(T):
            y = int(targets[b, t])
            if y == PAD:
                continue
            row = logits[b, t].tolist()
            m = max(row)
            log_z = m + math.log(sum(math.exp(v - m) for v in row))
            terms.append(-(row[y] - log_z))
    assert len(terms) == 15 - 2 - 4
    assert masked_cross_entropy(logits, targets, reduction="sum").item() == pytest.approx(
        sum(terms), rel=1e-12)
    assert masked_cross_entropy(logits, targets).item() == pytest.approx(
        sum(terms) / len(terms), rel=1e-12)


def test_padded_positions_get_no_gradient_and_do_not_change_the_loss():
    logits, targets = _logits(), torch.tensor(TARGETS)
    loss = masked_cross_entropy(logits, targets)
    loss.backward()
    pad = targets == PAD
    assert (logits.grad[pad] == 0).all()
    assert (logits.grad[~pad].abs().sum(-1) > 0).all()
    # d(mean loss)/d logits = (softmax - onehot) / n_real at real positions
    expected = torch.tensor([p / 20 for p in PROBS], dtype=torch.float64)
    expected[1] -= 1
    torch.testing.assert_close(logits.grad[0, 0], expected / 4)
    with torch.no_grad():
        other = logits.detach().clone()
        other[pad] = torch.randn(int(pad.sum()), 5, dtype=torch.float64) * 100
    assert masked_cross_entropy(other, targets).item() == loss.item()


def test_padding_weighs_nothing_batch_equals_concatenated_sentences():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(1, 4, 6, generator=g), torch.randn(1, 2, 6, generator=g)
    ya, yb = torch.tensor([[4, 5, 1, 3]]), torch.tensor([[2, 3]])
    batch_logits = torch.cat([a, torch.cat([b, torch.zeros(1, 2, 6)], 1)], 0)  # (2, 4, 6)
    batch_targets = torch.tensor([[4, 5, 1, 3], [2, 3, PAD, PAD]])
    flat = torch.cat([a, b], 1)  # (1, 6, 6): one sequence of the 6 real tokens
    torch.testing.assert_close(masked_cross_entropy(batch_logits, batch_targets),
                               masked_cross_entropy(flat, torch.cat([ya, yb], 1)))


def test_custom_pad_index():
    logits, targets = _logits(), torch.tensor([[1, 2, 4], [3, 2, 2]])
    nll = [-math.log(2 / 20), -math.log(10 / 20), -math.log(4 / 20)]
    got = masked_cross_entropy(logits, targets, pad=2, reduction="sum")
    assert got.item() == pytest.approx(sum(nll), abs=1e-12)


@pytest.mark.parametrize("logits_shape, targets_shape", [
    ((2, 3, 5), (2, 4)),
    ((2, 3, 5), (3, 2)),
    ((2, 3, 5), (2, 3, 1)),
    ((2, 3, 5), (6,)),
])
def test_mismatched_shapes_raise(logits_shape, targets_shape):
    with pytest.raises(ValueError, match=r"do not match targets .*expected logits \(B, T, V\)"):
        masked_cross_entropy(torch.zeros(logits_shape), torch.ones(targets_shape,
                                                                   dtype=torch.long))


def test_label_smoothing_equals_the_hand_computation():
    """eps > 0: (1 - eps) * (-log P(y*)) + eps * mean over all V tokens of -log P(v), per real
    position, averaged over real positions; padded positions still count for nothing."""
    logits, targets = _logits(), torch.tensor(TARGETS)
    eps = 0.1
    log_p = [math.log(p / 20) for p in PROBS]  # the same distribution at every real position
    terms = [(1 - eps) * -log_p[y] + eps * -sum(log_p) / len(PROBS) for y in (1, 2, 4, 3)]
    got = masked_cross_entropy(logits, targets, label_smoothing=eps)
    assert got.item() == pytest.approx(sum(terms) / 4, rel=1e-12)
    assert masked_cross_entropy(logits, targets, reduction="sum", label_smoothing=eps).item() \
        == pytest.approx(sum(terms), rel=1e-12)
    # smoothing raises the loss of a confident correct prediction: it penalises certainty
    assert got.item() > masked_cross_entropy(logits, targets).item()


@pytest.mark.parametrize("eps", [-0.1, 1.0, 1.5])
def test_label_smoothing_out_of_range_raises(eps):
    with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\)"):
        masked_cross_entropy(torch.zeros(1, 2, 5), torch.ones(1, 2, dtype=torch.long),
                             label_smoothing=eps)


def test_unknown_reduction_raises():
    with pytest.raises(ValueError, match="reduction must be 'mean' or 'sum', got 'none'"):
        masked_cross_entropy(torch.zeros(1, 2, 5), torch.ones(1, 2, dtype=torch.long),
                             reduction="none")


def test_head_is_one_linear_map_and_argmax_needs_no_softmax():
    torch.manual_seed(0)
    head = PredictionHead(8, 11)
    params = dict(head.named_parameters())
    assert set(params) == {"proj.weight", "proj.bias"}
    assert params["proj.weight"].shape == (11, 8) and params["proj.bias"].shape == (11,)
    states = torch.randn(4, 6, 8)
    logits = head(states)  # eq. 6: W_p s + b_p
    assert logits.shape == (4, 6, 11)
    torch.testing.assert_close(logits, states @ head.proj.weight.T + head.proj.bias)
    probs = torch.softmax(logits, dim=-1)  # eq. 8
    torch.testing.assert_close(probs.sum(-1), torch.ones(4, 6))
    assert torch.equal(logits.argmax(-1), probs.argmax(-1))  # softmax is monotonic
    torch.testing.assert_close(head(states[0, 0]), logits[0, 0])  # any leading shape


# ---------------------------------------------------------------------------------------------
# The shortlist softmax used in training
# ---------------------------------------------------------------------------------------------


def _shortlist_case(seed=0):
    """A head of V = 9 words, a padded batch whose real targets are {1, 3, 5, 7}."""
    g = torch.Generator().manual_seed(seed)
    head = PredictionHead(6, 9).double()
    with torch.no_grad():
        head.proj.weight.copy_(torch.randn(9, 6, generator=g, dtype=torch.float64))
        head.proj.bias.copy_(torch.randn(9, generator=g, dtype=torch.float64))
    states = torch.randn(2, 3, 6, generator=g, dtype=torch.float64, requires_grad=True)
    targets = torch.tensor([[5, 1, 7], [3, PAD, PAD]])
    return head, states, targets


def test_shortlist_ids_are_the_common_words_plus_the_targets():
    _, _, targets = _shortlist_case()
    assert shortlist_ids(targets, 3).tolist() == [0, 1, 2, 3, 5, 7]
    assert shortlist_ids(targets, 6).tolist() == [0, 1, 2, 3, 4, 5, 7]
    assert shortlist_ids(torch.tensor([[8, PAD]]), 2).tolist() == [0, 1, 8]


def _hand_loss(head, states, targets, listed, drawn=(), weight=0.0, eps=0.0):
    """Mean over real positions of the smoothed -log softmax over the listed words' logits and
    the drawn words' logits + weight, written out in plain Python."""
    terms = []
    for b in range(targets.size(0)):
        for t in range(targets.size(1)):
            y = int(targets[b, t])
            if y == PAD:
                continue
            z = (head.proj.weight @ states[b, t] + head.proj.bias).tolist()  # eq. 6, all V
            row = [z[v] for v in listed] + [z[v] + weight for v in drawn]
            m = max(row)
            log_z = m + math.log(sum(math.exp(v - m) for v in row))
            nll = -(z[y] - log_z)
            uniform = sum(-(v - log_z) for v in row) / len(row)
            terms.append((1 - eps) * nll + eps * uniform)
    return sum(terms) / len(terms)


@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_shortlist_loss_is_a_softmax_over_the_listed_words_only(eps):
    head, states, targets = _shortlist_case()
    listed = [0, 1, 2, 3, 5, 7]  # shortlist 3: ids 0..2, plus the targets 3, 5, 7 (1 is in)
    got = shortlist_cross_entropy(head, states, targets, 3, label_smoothing=eps)
    assert int((targets != PAD).sum()) == 4  # the mean runs over 4 real tokens
    assert got.item() == pytest.approx(_hand_loss(head, states, targets, listed, eps=eps),
                                       rel=1e-12)
    # more words in the denominator: the restricted loss is the smaller one
    if eps == 0.0:
        assert got.item() < masked_cross_entropy(head(states), targets).item()


@pytest.mark.parametrize("shortlist", [9, 50])
def test_a_shortlist_covering_the_vocabulary_is_the_full_loss(shortlist):
    head, states, targets = _shortlist_case(1)
    got = shortlist_cross_entropy(head, states, targets, shortlist, label_smoothing=0.1)
    full = masked_cross_entropy(head(states), targets, label_smoothing=0.1)
    assert got.item() == pytest.approx(full.item(), rel=1e-12)
    g_got = torch.autograd.grad(got, [states, head.proj.weight, head.proj.bias])
    g_full = torch.autograd.grad(full, [states, head.proj.weight, head.proj.bias])
    for a, b in zip(g_got, g_full):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_shortlist_leaves_unlisted_words_and_padding_untouched():
    head, states, targets = _shortlist_case()
    shortlist_cross_entropy(head, states, targets, 3).backward()
    unlisted = [4, 6, 8]
    assert (head.proj.weight.grad[unlisted] == 0).all()
    assert (head.proj.bias.grad[unlisted] == 0).all()
    assert (head.proj.bias.grad[[0, 1, 2, 3, 5, 7]] != 0).all()
    assert (states.grad[targets == PAD] == 0).all()


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "100"])
def test_bad_shortlist_is_refused_by_name(bad):
    head, states, targets = _shortlist_case()
    with pytest.raises(ValueError, match="shortlist must be a positive int"):
        shortlist_cross_entropy(head, states, targets, bad)


def test_shortlist_states_must_match_the_targets():
    head, states, targets = _shortlist_case()
    with pytest.raises(ValueError, match=r"states \(2, 3, 6\) do not match targets \(2, 2\)"):
        shortlist_cross_entropy(head, states, targets[:, :2], 3)


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_samples_covering_every_rare_word_give_the_full_loss(eps):
    """Shortlist 3 of V = 9 leaves 6 rare words; drawing all 6 gives each weight log(6/6) = 0."""
    head, states, targets = _shortlist_case(2)
    got = shortlist_cross_entropy(head, states, targets, 3, label_smoothing=eps, samples=6)
    full = masked_cross_entropy(head(states), targets, label_smoothing=eps)
    assert got.item() == pytest.approx(full.item(), rel=1e-12)
    more = shortlist_cross_entropy(head, states, targets, 3, label_smoothing=eps, samples=50)
    assert more.item() == pytest.approx(full.item(), rel=1e-12)


def test_sampled_rare_words_enter_the_softmax_with_the_inverse_probability():
    head, states, targets = _shortlist_case()
    # the words the function will draw: 2 of the 6 rare ids 3..8, from the same generator
    drawn = (torch.randperm(6, generator=torch.Generator().manual_seed(5))[:2] + 3).tolist()
    listed = [0, 1, 2, 3, 5, 7]
    extra = [w for w in drawn if w not in listed]  # targets are listed once, not drawn again
    assert extra == [8]  # one drawn word is new: the weight below is really tested
    expected = _hand_loss(head, states, targets, listed, extra, weight=math.log(6 / 2))
    got = shortlist_cross_entropy(head, states, targets, 3, samples=2,
                                  generator=torch.Generator().manual_seed(5))
    assert got.item() == pytest.approx(expected, rel=1e-12)


def test_shortlist_columns_are_the_words_the_loss_scores():
    _, _, targets = _shortlist_case()
    listed, drawn, offset = shortlist_columns(targets, 9, 3, samples=2,
                                              generator=torch.Generator().manual_seed(5))
    assert listed.tolist() == [0, 1, 2, 3, 5, 7] and drawn.tolist() == [8]  # as above
    assert offset == pytest.approx(math.log(6 / 2))
    listed, drawn, offset = shortlist_columns(targets, 9, 3)  # nothing drawn
    assert listed.tolist() == [0, 1, 2, 3, 5, 7] and drawn.numel() == 0 and offset == 0.0
    assert shortlist_columns(targets, 9, 50, samples=4)[1].numel() == 0  # no rare words


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_samples_are_refused_by_name(bad):
    head, states, targets = _shortlist_case()
    with pytest.raises(ValueError, match="samples must be an int >= 0"):
        shortlist_cross_entropy(head, states, targets, 3, samples=bad)

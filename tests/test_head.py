"""lib.head: the prediction head (eq. 6, 8) and the masked cross-entropy (eq. 7), checked against
hand computations with padding present."""

from __future__ import annotations

import math

import pytest
import torch

from lib.data import PAD
from lib.head import PredictionHead, masked_cross_entropy

# One sentence of 3 real tokens and one of 1, padded to T = 3, over a vocabulary of 5.
# Real positions carry logits log([1, 2, 3, 4, 10]) so that P = [1, 2, 3, 4, 10] / 20 exactly.
PROBS = [1, 2, 3, 4, 10]
TARGETS = [[1, 2, 4], [3, PAD, PAD]]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run fastest on one thread; on 2 shared cores more threads thrash (20x)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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

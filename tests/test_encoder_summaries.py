"""lib.encoder's summaries of a sentence beside the last state: pooling over the real steps,
the linear probe, the paired bootstrap interval, and the LSTM step with one joined state."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from lib.encoder import (
    LSTMStateCell,
    linear_probe,
    lstm_state_factors,
    paired_interval,
    pool_states,
)
from lib.experiments import gradient_flow

torch.set_num_threads(1)


def test_pool_states_skips_padding_by_hand():
    outputs = torch.tensor([[[1.0, -2.0], [3.0, -1.0], [0.0, 0.0]],  # length 2, then a pad
                            [[-1.0, -5.0], [-3.0, -4.0], [-2.0, -6.0]]])  # length 3
    lengths = torch.tensor([2, 3])
    assert torch.equal(pool_states(outputs, lengths, "mean"),
                       torch.tensor([[2.0, -1.5], [-2.0, -5.0]]))
    # the pad's zeros would win the maximum of the first sentence's second unit
    assert torch.equal(pool_states(outputs, lengths, "max"),
                       torch.tensor([[3.0, -1.0], [-1.0, -4.0]]))


def test_pool_states_names_bad_input():
    outputs = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match="how must be one of"):
        pool_states(outputs, torch.tensor([1, 2]), "sum")
    with pytest.raises(ValueError, match="lengths must be in"):
        pool_states(outputs, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="expected outputs"):
        pool_states(outputs, torch.tensor([1, 2, 3]))


def test_linear_probe_matches_numpy_least_squares():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 5, generator=g)
    y = x[:, :3].argmax(1)  # linearly readable classes
    xt = torch.randn(50, 5, generator=g)
    got = linear_probe(x, y, xt, 3, ridge=2.0)
    # independent: ridge regression as an augmented least-squares problem in NumPy
    xn, xtn = x.double().numpy(), xt.double().numpy()
    mean, std = xn.mean(0), xn.std(0, ddof=1)
    a = np.hstack([(xn - mean) / std, np.ones((200, 1))])
    at = np.hstack([(xtn - mean) / std, np.ones((50, 1))])
    aug = np.vstack([a, np.sqrt(2.0) * np.eye(6)])
    targets = np.vstack([np.eye(3)[y.numpy()], np.zeros((6, 3))])
    w = np.linalg.lstsq(aug, targets, rcond=None)[0]
    assert got.tolist() == (at @ w).argmax(1).tolist()
    assert (got == xt[:, :3].argmax(1)).float().mean() > 0.8  # it learned the rule


def test_linear_probe_names_bad_input():
    x = torch.zeros(4, 3)
    with pytest.raises(ValueError, match="labels must be in"):
        linear_probe(x, torch.tensor([0, 1, 2, 3]), x, 3)
    with pytest.raises(ValueError, match="train_y should have shape"):
        linear_probe(x, torch.tensor([0, 1]), x, 3)
    with pytest.raises(ValueError, match="expected train_x"):
        linear_probe(x, torch.tensor([0, 1, 2, 0]), torch.zeros(4, 2), 3)


def test_paired_interval_edges_and_centre():
    ones, zeros = torch.ones(50), torch.zeros(50)
    assert paired_interval(ones, zeros) == (1.0, 1.0)
    assert paired_interval(ones, ones) == (0.0, 0.0)
    a = torch.tensor([1.0, 0.0] * 100)  # accuracy 0.5
    b = torch.tensor([1.0, 1.0, 0.0, 0.0] * 50)  # accuracy 0.5, differs item by item
    lo, hi = paired_interval(a, b)
    assert lo < 0 < hi and hi - lo < 0.4
    with pytest.raises(ValueError, match="same items"):
        paired_interval(ones, torch.ones(3))


def test_lstm_state_cell_is_nn_lstmcell():
    torch.manual_seed(0)
    cell = LSTMStateCell(3, 4)
    ref = nn.LSTMCell(3, 4)
    ref.load_state_dict(cell.lstm.state_dict())
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    h_ref, c_ref = ref(x, (h, c))
    assert torch.allclose(cell(x, torch.cat([h, c], 1)), torch.cat([h_ref, c_ref], 1))
    with pytest.raises(ValueError, match=r"\(B, 2H\)"):
        cell(x, h)


def test_lstm_state_cell_gradient_norm_equals_autograd_jacobian():
    torch.manual_seed(1)
    cell = LSTMStateCell(3, 4)
    x = torch.randn(6, 3)  # (T, I)

    def unroll(s0):  # the whole run: [h_0; c_0] (8,) -> [h_T; c_T] (8,)
        s = s0[None]
        for x_t in x:
            s = cell(x_t[None], s)
        return s[0]

    jac = torch.autograd.functional.jacobian(unroll, torch.zeros(8))  # (8, 8)
    norms = gradient_flow.gradient_norms(cell, x)  # (T + 1,)
    assert torch.isclose(norms[0], torch.linalg.matrix_norm(jac, ord=2), rtol=1e-4)
    assert torch.isclose(norms[-1], torch.tensor(1.0))


def test_lstm_state_factors_by_hand_without_recurrent_weights():
    # With W_hh = 0 the gates ignore h: c_T = (prod f_t) c_0 + ..., so ∂c_T/∂c_0 = diag(prod f_t)
    # and h_0 reaches nothing, ∂h_T/∂h_0 = 0.
    torch.manual_seed(2)
    cell = LSTMStateCell(3, 4)
    with torch.no_grad():
        cell.lstm.weight_hh.zero_()
    x = torch.randn(5, 3)  # (T, I)
    lstm = cell.lstm
    pre_f = x @ lstm.weight_ih[4:8].T + lstm.bias_ih[4:8] + lstm.bias_hh[4:8]  # (T, H)
    expected_c = float(torch.sigmoid(pre_f).prod(dim=0).max().detach())
    g_h, g_c = lstm_state_factors(cell, x)
    assert g_h == pytest.approx(0.0, abs=1e-12)
    assert g_c == pytest.approx(expected_c, rel=1e-5)


def test_lstm_state_factors_blocks_bounded_by_joint_norm():
    torch.manual_seed(3)
    cell = LSTMStateCell(3, 4)
    x = torch.randn(6, 3)
    g_h, g_c = lstm_state_factors(cell, x)
    joint = float(gradient_flow.gradient_norms(cell, x)[0])
    assert 0 < g_h <= joint * (1 + 1e-5) and 0 < g_c <= joint * (1 + 1e-5)


def test_lstm_state_factors_rejects_bad_input():
    cell = LSTMStateCell(3, 4)
    with pytest.raises(ValueError, match=r"\(T, I\)"):
        lstm_state_factors(cell, torch.randn(5, 2))
    with pytest.raises(TypeError, match="LSTMStateCell"):
        lstm_state_factors(nn.LSTMCell(3, 4), torch.randn(5, 3))

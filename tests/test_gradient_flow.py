"""lib.experiments.gradient_flow: the fast gradient norms equal lib.gru's readable product of
Jacobians, and
the vanilla RNN's factors equal hand-computed ones."""

from __future__ import annotations

import pytest
import torch

from lib import gru
from lib.experiments import gradient_flow


def _sequence(seed: int, T: int = 12, D: int = 5):
    torch.manual_seed(seed)
    return torch.randn(T, D)  # (T, D)


@pytest.mark.parametrize("make", [lambda: gru.GRUCell(5, 7), lambda: gru.VanillaRNNCell(5, 7)])
def test_gradient_norms_equal_the_readable_product(make):
    x = _sequence(0)
    cell = make()
    fast = gradient_flow.gradient_norms(cell, x)
    slow = gru.gradient_norms_through_time(cell, x)
    assert fast.shape == (13,) and float(fast[-1]) == pytest.approx(1.0, abs=1e-5)
    torch.testing.assert_close(fast, slow, rtol=1e-3, atol=1e-7)


def test_gradient_norms_from_a_given_state_equal_autograd_through_the_whole_sequence():
    """Independent oracle: the Jacobian of h_T with respect to h_0 by autograd end to end."""
    x = _sequence(1, T=6)
    cell = gru.GRUCell(5, 4)
    h0 = torch.randn(4).tanh()

    def run(h):
        for x_t in x:
            h = cell(x_t[None], h[None])[0]
        return h

    J = torch.autograd.functional.jacobian(run, h0)  # (H, H): ∂h_T/∂h_0
    got = gradient_flow.gradient_norms(cell, x, h0)[0]
    assert float(got) == pytest.approx(float(torch.linalg.matrix_norm(J, ord=2)), rel=1e-4)


def test_spectral_norm_is_the_largest_singular_value():
    a = torch.randn(9, 6)
    assert float(gradient_flow.spectral_norm(a)) == pytest.approx(
        float(torch.linalg.svdvals(a)[0]), rel=1e-4)


def test_vanilla_factors_by_hand():
    x = _sequence(2, T=8)
    cell = gru.VanillaRNNCell(5, 6)
    f = gradient_flow.vanilla_factors(cell, x)
    W = cell.weight_hh.detach().double()
    assert f.spectral_radius == pytest.approx(max(abs(complex(v)) for v in
                                                  torch.linalg.eigvals(W)), rel=1e-4)
    assert f.largest_singular_value == pytest.approx(float(torch.linalg.svdvals(W)[0]), rel=1e-4)
    power = W
    for _ in range(7):
        power = power @ W  # W^8
    assert f.power_norm == pytest.approx(float(torch.linalg.svdvals(power)[0]), rel=1e-3)
    h, derivs = torch.zeros(6), []
    with torch.no_grad():
        for x_t in x:
            h = torch.tanh(cell.weight_xh @ x_t + cell.weight_hh @ h + cell.bias)
            derivs.append(1 - h ** 2)
    assert f.mean_tanh_prime == pytest.approx(float(torch.stack(derivs).mean()), rel=1e-5)
    assert f.gradient_norm == pytest.approx(float(gru.gradient_norms_through_time(cell, x)[0]),
                                            rel=1e-3)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"\(T, input_size\)"):
        gradient_flow.gradient_norms(gru.GRUCell(5, 4), torch.randn(3, 4))
    with pytest.raises(TypeError, match="VanillaRNNCell"):
        gradient_flow.vanilla_factors(gru.GRUCell(5, 4), torch.randn(3, 5))

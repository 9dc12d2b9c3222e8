"""How much gradient flows back through a recurrence: the measurements of "The encoder".

`lib.gru.gradient_norms_through_time` is the readable version: one Jacobian per step with
`torch.autograd.functional.jacobian`, then their product. `gradient_norms` computes the same
numbers with one vectorised `torch.func.jacrev` call per step, fast enough for the reference
encoder's 512 units. `vanilla_factors` splits the vanilla RNN's Jacobian product into its two
factors, the matrix W_hh and the tanh' values, so a chapter can say which one does the
vanishing.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn


def _states_and_jacobians(cell: nn.Module, x: Tensor, h0: Tensor | None):
    """Run `cell` over x (T, I) from h0 (H,); return the states (T + 1, H) and the Jacobians
    ∂h_t/∂h_{t-1}, (T, H, H), each from one vectorised reverse-mode call."""
    if x.dim() != 2 or x.size(1) != cell.input_size:
        raise ValueError(f"x should have shape (T, input_size) = (T, {cell.input_size}), "
                         f"got {tuple(x.shape)}")
    H = cell.hidden_size
    h = x.new_zeros(H) if h0 is None else h0.detach()  # (H,)
    states, jacobians = [h], []
    with torch.no_grad():  # jacrev builds its own graph; nothing else needs one
        for x_t in x.detach():  # x_t (I,)

            def step(h_prev, x_t=x_t):
                return cell(x_t[None], h_prev[None])[0]  # (H,) -> (H,)

            jacobians.append(torch.func.jacrev(step)(h))  # (H, H)
            h = step(h)
            states.append(h)
    return torch.stack(states), torch.stack(jacobians)


def spectral_norm(a: Tensor) -> Tensor:
    """||a||_2, the largest singular value, as the square root of the largest eigenvalue of the
    symmetric a a^T: the same number as torch.linalg.matrix_norm(a, ord=2), about 3 times
    faster for 512 x 512 on a CPU (a symmetric eigensolver instead of an SVD)."""
    return torch.linalg.eigvalsh(a @ a.T)[..., -1].clamp(min=0).sqrt()


def gradient_norms(cell: nn.Module, x: Tensor, h0: Tensor | None = None) -> Tensor:
    """||∂h_T/∂h_t|| (spectral norm) for t = 0..T, (T + 1,): same contract and numbers as
    `lib.gru.gradient_norms_through_time`, each Jacobian from one vectorised call."""
    _, jacobians = _states_and_jacobians(cell, x, h0)
    H = cell.hidden_size
    product = torch.eye(H, dtype=x.dtype, device=x.device)  # ∂h_T/∂h_T
    norms = [spectral_norm(product)]
    for J in reversed(jacobians):  # t = T-1 down to 0
        product = product @ J  # (H, H): ∂h_T/∂h_t
        norms.append(spectral_norm(product))
    return torch.stack(norms[::-1])  # (T + 1,)


@dataclass
class VanillaFactors:
    """The two factors of the vanilla RNN's Jacobians J_k = diag(1 - h_k²) W_hh, measured."""

    spectral_radius: float  # largest |eigenvalue| of W_hh: the growth rate of W_hh^n
    largest_singular_value: float  # ||W_hh||_2: the most one step of W_hh can stretch
    power_norm: float  # ||W_hh^T||_2 with T the number of steps: W_hh alone, no tanh'
    mean_tanh_prime: float  # mean of 1 - h_k² over steps and units
    gradient_norm: float  # ||∂h_T/∂h_0||_2: both factors together


def vanilla_factors(cell: nn.Module, x: Tensor, h0: Tensor | None = None) -> VanillaFactors:
    """Measure each factor of ∂h_T/∂h_0 for a `lib.gru.VanillaRNNCell` run over x (T, I).

    The product of T Jacobians shrinks if W_hh^T does (its eigenvalues below 1 in modulus) or
    if the tanh' values are small (saturated units); the two numbers say which one dominates.
    """
    if not hasattr(cell, "weight_hh") or cell.weight_hh.shape[0] != cell.hidden_size:
        raise TypeError(f"expected a VanillaRNNCell (one W_hh of shape (H, H)), got "
                        f"{type(cell).__name__}")
    W = cell.weight_hh.detach()  # (H, H)
    states, _ = _states_and_jacobians(cell, x, h0)  # (T + 1, H)
    T = x.size(0)
    return VanillaFactors(
        spectral_radius=float(torch.linalg.eigvals(W).abs().max()),
        largest_singular_value=float(torch.linalg.matrix_norm(W, ord=2)),
        power_norm=float(torch.linalg.matrix_norm(torch.linalg.matrix_power(W, T), ord=2)),
        mean_tanh_prime=float((1 - states[1:] ** 2).mean()),
        gradient_norm=float(gradient_norms(cell, x, h0)[0]),
    )

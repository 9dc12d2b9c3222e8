"""The GRU of Cho et al. (2014) in the variant PyTorch computes, written from its equations, and
the vanilla RNN it improves on. (Cho et al. apply the reset gate to h_{t-1} before the matrix and
use no biases; PyTorch applies it to W_hn h_{t-1} + b_hn, as below.)

The encoder chapter explains recurrence with this code; the model's fast path uses ``nn.GRU``.
Parameters use PyTorch's layout — ``weight_ih`` stacks the rows of W_ir, W_iz, W_in in that
order — so weights copy to and from ``nn.GRU`` and the tests check that both compute the same
outputs and gradients. One step of the GRU:

    r_t = σ(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)           reset gate
    z_t = σ(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)           update gate
    n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t-1} + b_hn))  candidate state
    h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}

When z_t is close to 1 the state is copied forward almost unchanged, and so is its gradient:
that is why a GRU remembers over many more steps than the vanilla RNN
h_t = tanh(W_xh x_t + W_hh h_{t-1} + b), whose gradient is a product of one Jacobian per step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def gru_step(
    x: Tensor, h: Tensor, weight_ih: Tensor, weight_hh: Tensor, bias_ih: Tensor, bias_hh: Tensor
) -> Tensor:
    """One GRU step as a plain function: x (B, I), h (B, H) -> new h (B, H)."""
    gi = x @ weight_ih.T + bias_ih  # (B, 3H): W_i{r,z,n} x_t + b_i{r,z,n}
    gh = h @ weight_hh.T + bias_hh  # (B, 3H): W_h{r,z,n} h_{t-1} + b_h{r,z,n}
    i_r, i_z, i_n = gi.chunk(3, dim=1)  # each (B, H)
    h_r, h_z, h_n = gh.chunk(3, dim=1)  # each (B, H)
    r = torch.sigmoid(i_r + h_r)  # (B, H) reset gate
    z = torch.sigmoid(i_z + h_z)  # (B, H) update gate
    n = torch.tanh(i_n + r * h_n)  # (B, H) candidate; r scales W_hn h + b_hn, bias included
    return (1 - z) * n + z * h  # (B, H)


def _check_shape(name: str, t: Tensor, expected: Sequence[int | None], meaning: str) -> None:
    """Raise a ValueError saying what shape was expected (None = any size) and what came."""
    ok = t.dim() == len(expected) and all(e is None or e == s for e, s in zip(expected, t.shape))
    if not ok:
        want = ", ".join("*" if e is None else str(e) for e in expected)
        raise ValueError(
            f"{name} should have shape {meaning} = ({want}), got {tuple(t.shape)}"
        )


def _init_uniform(module: nn.Module, hidden_size: int) -> None:
    """PyTorch's RNN initialisation: every parameter ~ U(-1/sqrt(H), 1/sqrt(H))."""
    bound = 1 / math.sqrt(hidden_size)
    for p in module.parameters():
        nn.init.uniform_(p, -bound, bound)


class GRUCell(nn.Module):
    """One GRU step with learnable weights, laid out like ``nn.GRUCell``."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(3 * hidden_size, input_size))  # (3H, I)
        self.weight_hh = nn.Parameter(torch.empty(3 * hidden_size, hidden_size))  # (3H, H)
        self.bias_ih = nn.Parameter(torch.empty(3 * hidden_size))  # (3H,)
        self.bias_hh = nn.Parameter(torch.empty(3 * hidden_size))  # (3H,)
        _init_uniform(self, hidden_size)

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        """x (B, I), h (B, H) -> h (B, H)."""
        _check_shape("GRUCell input x", x, (None, self.input_size), "(B, input_size)")
        _check_shape("GRUCell state h", h, (x.size(0), self.hidden_size), "(B, hidden_size)")
        return gru_step(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class GRU(nn.Module):
    """A stack of GRU layers with the same call contract as ``nn.GRU``.

    Layer 1 reads x_t; layer i > 1 reads h_t^{i-1}, the state of the layer below at the same
    step (eq. 1). ``forward(x, h0)`` returns the last layer's states at every step — the
    *output states* (B, T, H) — and every layer's state at the last step — the *hidden
    states* (L, B, H), which the decoder starts from.

    ``lengths`` (B,) handles padded batches: step t of sequence b runs only if t < lengths[b].
    After its length a sequence's state is frozen and its outputs are zeros, exactly what
    ``nn.GRU`` gives over ``pack_padded_sequence`` followed by ``pad_packed_sequence``; h_n
    then holds each sequence's state at its own last real step. A length of 0 returns h0.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        batch_first: bool = True,
        dropout: float = 0.0,
    ):
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.batch_first, self.dropout = batch_first, dropout
        sizes = [input_size] + [hidden_size] * (num_layers - 1)  # what each layer reads
        self.cells = nn.ModuleList(GRUCell(i, hidden_size) for i in sizes)

    def forward(
        self,
        x: Tensor,
        h0: Tensor | None = None,
        lengths: Tensor | Sequence[int] | None = None,
    ) -> tuple[Tensor, Tensor]:
        """x (B, T, I) (or (T, B, I) if not batch_first), h0 (L, B, H) or None.

        Returns output (B, T, H) (or (T, B, H)) and h_n (L, B, H).
        """
        meaning = "(B, T, input_size)" if self.batch_first else "(T, B, input_size)"
        _check_shape("GRU input x", x, (None, None, self.input_size), meaning)
        if not self.batch_first:
            x = x.transpose(0, 1)  # (B, T, I)
        B, T, _ = x.shape
        if T == 0:
            raise ValueError("GRU input x has no time steps (T = 0)")
        L, H = self.num_layers, self.hidden_size
        if h0 is None:
            h0 = x.new_zeros(L, B, H)
        _check_shape("GRU initial state h0", h0, (L, B, H), "(num_layers, B, hidden_size)")
        mask = None if lengths is None else self._step_mask(lengths, B, T, x.device)  # (B, T)

        layer_input, h_n = x, []  # layer_input (B, T, I) for layer 1, then (B, T, H)
        for i, cell in enumerate(self.cells):
            h, outputs = h0[i], []  # h (B, H)
            for t in range(T):
                h_new = cell(layer_input[:, t], h)  # (B, H)
                if mask is not None:
                    keep = mask[:, t, None]  # (B, 1): is step t real for this sequence?
                    h = torch.where(keep, h_new, h)  # padded steps leave the state alone
                    h_new = h_new * keep  # ... and output zeros
                else:
                    h = h_new
                outputs.append(h_new)
            layer_input = torch.stack(outputs, dim=1)  # (B, T, H): h_1^i .. h_T^i
            h_n.append(h)
            if self.dropout > 0 and self.training and i < L - 1:  # between layers, like nn.GRU
                layer_input = F.dropout(layer_input, self.dropout, training=True)
        output = layer_input if self.batch_first else layer_input.transpose(0, 1)
        return output, torch.stack(h_n)  # (B, T, H), (L, B, H)

    @staticmethod
    def _step_mask(lengths, B: int, T: int, device) -> Tensor:
        """(B, T) bool: True where step t < lengths[b]; validates the lengths."""
        lengths = torch.as_tensor(lengths, device=device)
        if lengths.shape != (B,):
            raise ValueError(f"lengths should have shape (B,) = ({B},), got {tuple(lengths.shape)}")
        if lengths.is_floating_point() or lengths.min() < 0 or lengths.max() > T:
            raise ValueError(f"lengths must be integers in [0, T={T}], got {lengths.tolist()}")
        return torch.arange(T, device=device)[None, :] < lengths[:, None]  # (B, T)

    @torch.no_grad()
    def load_from_torch(self, module: nn.GRU) -> GRU:
        """Copy the weights of an ``nn.GRU`` with the same sizes into this GRU (in place)."""
        _check_compatible(module)
        got = (module.input_size, module.hidden_size, module.num_layers)
        want = (self.input_size, self.hidden_size, self.num_layers)
        if got != want:
            raise ValueError(
                f"nn.GRU has (input_size, hidden_size, num_layers) = {got}, this GRU has {want}"
            )
        for k, cell in enumerate(self.cells):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(cell, name).copy_(getattr(module, f"{name}_l{k}"))
        return self

    def extra_repr(self) -> str:
        return (
            f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, "
            f"batch_first={self.batch_first}, dropout={self.dropout}"
        )


def _check_compatible(module: nn.GRU) -> None:
    """Only plain GRUs map onto ours: refuse the variants this teaching GRU leaves out."""
    if not isinstance(module, nn.GRU):
        raise TypeError(f"expected an nn.GRU, got {type(module).__name__}")
    if module.bidirectional or not module.bias or getattr(module, "proj_size", 0):
        raise ValueError("only unidirectional nn.GRU with bias=True can be copied")


def copy_from_torch(module: nn.GRU) -> GRU:
    """A from-scratch GRU holding a copy of ``module``'s weights (same device and dtype)."""
    _check_compatible(module)
    gru = GRU(
        module.input_size,
        module.hidden_size,
        module.num_layers,
        batch_first=module.batch_first,
        dropout=module.dropout,
    )
    ref = module.weight_ih_l0
    return gru.to(device=ref.device, dtype=ref.dtype).load_from_torch(module)


@torch.no_grad()
def to_torch(gru: GRU) -> nn.GRU:
    """An ``nn.GRU`` holding a copy of ``gru``'s weights: the fast path with the same numbers."""
    ref = gru.cells[0].weight_ih
    module = nn.GRU(
        gru.input_size,
        gru.hidden_size,
        gru.num_layers,
        batch_first=gru.batch_first,
        dropout=gru.dropout,
        device=ref.device,
        dtype=ref.dtype,
    )
    for k, cell in enumerate(gru.cells):
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(module, f"{name}_l{k}").copy_(getattr(cell, name))
    return module


class VanillaRNNCell(nn.Module):
    """h_t = tanh(W_xh x_t + W_hh h_{t-1} + b): the recurrence that forgets."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_xh = nn.Parameter(torch.empty(hidden_size, input_size))  # (H, I)
        self.weight_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))  # (H, H)
        self.bias = nn.Parameter(torch.empty(hidden_size))  # (H,)
        _init_uniform(self, hidden_size)

    def forward(self, x: Tensor, h: Tensor) -> Tensor:
        """x (B, I), h (B, H) -> h (B, H)."""
        _check_shape("VanillaRNNCell input x", x, (None, self.input_size), "(B, input_size)")
        _check_shape("VanillaRNNCell state h", h, (x.size(0), self.hidden_size), "(B, hidden_size)")
        return torch.tanh(x @ self.weight_xh.T + h @ self.weight_hh.T + self.bias)  # (B, H)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


def gradient_norms_through_time(
    cell: nn.Module, x: Tensor, h0: Tensor | None = None
) -> Tensor:
    """How much of the last state's gradient reaches each earlier state: (T + 1,) norms.

    Runs ``cell`` (a GRUCell or VanillaRNNCell) over one sequence x (T, I) from h0 (H,)
    (zeros if None) and returns ``norms[t]`` = ||∂h_T/∂h_t||, the spectral norm (the largest
    stretch) of the Jacobian, for t = 0..T; ``norms[T]`` = 1. The chain rule makes
    ∂h_T/∂h_t = J_T J_{T-1} ... J_{t+1} with one Jacobian J_k = ∂h_k/∂h_{k-1} per step, and
    that product is computed here literally: if the J_k shrink vectors, it vanishes
    geometrically and the early inputs stop influencing learning.
    """
    _check_shape("x", x, (None, cell.input_size), "(T, input_size)")
    H = cell.hidden_size
    h = x.new_zeros(H) if h0 is None else h0.detach()  # (H,)
    jacobians = []
    for x_t in x.detach():  # x_t (I,)

        def step(h_prev, x_t=x_t):
            return cell(x_t[None], h_prev[None])[0]  # (H,) -> (H,)

        jacobians.append(torch.autograd.functional.jacobian(step, h))  # (H, H): ∂h_t/∂h_{t-1}
        with torch.no_grad():
            h = step(h)
    product = torch.eye(H, dtype=x.dtype, device=x.device)  # ∂h_T/∂h_T
    norms = [torch.linalg.matrix_norm(product, ord=2)]
    for J in reversed(jacobians):  # t = T-1 down to 0
        product = product @ J  # (H, H): ∂h_T/∂h_t
        norms.append(torch.linalg.matrix_norm(product, ord=2))
    return torch.stack(norms[::-1]).detach()  # (T + 1,), index t = ||∂h_T/∂h_t||

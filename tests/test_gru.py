"""The from-scratch GRU equals nn.GRU; the vanilla RNN's gradient vanishes, measurably."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib.gru import (
    GRU,
    GRUCell,
    VanillaRNNCell,
    copy_from_torch,
    gradient_norms_through_time,
    gru_step,
    to_torch,
)

D = torch.float64  # tight comparisons


def _pair(In, H, L, seed=0):
    """An nn.GRU and a from-scratch copy of it, float64."""
    torch.manual_seed(seed)
    ref = nn.GRU(In, H, L, batch_first=True).to(D)
    return ref, copy_from_torch(ref)


def _close(a, b):
    torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-8)


@pytest.mark.parametrize("L", [1, 2, 3])
@pytest.mark.parametrize("B,T", [(1, 1), (3, 5), (8, 12)])
@pytest.mark.parametrize("with_h0", [False, True])
def test_forward_equals_nn_gru(L, B, T, with_h0):
    ref, ours = _pair(4, 6, L)
    x = torch.randn(B, T, 4, dtype=D)
    h0 = torch.randn(L, B, 6, dtype=D) if with_h0 else None
    out_ref, hn_ref = ref(x, h0)
    out, hn = ours(x, h0)
    assert out.shape == (B, T, 6) and hn.shape == (L, B, 6)
    _close(out, out_ref)
    _close(hn, hn_ref)


@pytest.mark.parametrize("L", [1, 3])
def test_gradients_equal_nn_gru(L):
    ref, ours = _pair(3, 5, L, seed=1)
    x = torch.randn(4, 7, 3, dtype=D)
    h0 = torch.randn(L, 4, 5, dtype=D)
    w_out, w_h = torch.randn(4, 7, 5, dtype=D), torch.randn(L, 4, 5, dtype=D)
    grads = []
    for model in (ref, ours):
        xg, hg = x.clone().requires_grad_(), h0.clone().requires_grad_()
        out, hn = model(xg, hg)
        ((out * w_out).sum() + (hn * w_h).sum()).backward()
        grads.append((xg.grad, hg.grad))
    _close(grads[1][0], grads[0][0])  # d loss / d x
    _close(grads[1][1], grads[0][1])  # d loss / d h0
    for k, cell in enumerate(ours.cells):
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            _close(getattr(cell, name).grad, getattr(ref, f"{name}_l{k}").grad)


def _packed_reference(ref, x, lengths, h0):
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, hn = ref(packed, h0)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
    return out, hn


@pytest.mark.parametrize("L", [1, 2])
def test_lengths_equal_packed_nn_gru(L):
    ref, ours = _pair(3, 4, L, seed=2)
    lengths = torch.tensor([5, 1, 3, 5, 2])
    x = torch.randn(5, 5, 3, dtype=D)
    h0 = torch.randn(L, 5, 4, dtype=D)
    out_ref, hn_ref = _packed_reference(ref, x, lengths, h0)
    out, hn = ours(x, h0, lengths=lengths.tolist())
    _close(out, out_ref)
    _close(hn, hn_ref)
    assert (out[1, 1:] == 0).all()  # padded positions are zeros


def test_padding_values_do_not_matter():
    _, ours = _pair(3, 4, 2, seed=3)
    x = torch.randn(2, 6, 3, dtype=D)
    lengths = torch.tensor([6, 2])
    x_noisy = x.clone()
    x_noisy[1, 2:] = 1e3 * torch.randn(4, 3, dtype=D)
    a, b = ours(x, lengths=lengths), ours(x_noisy, lengths=lengths)
    _close(a[0], b[0])
    _close(a[1], b[1])


def test_hand_computed_step():
    """Hidden size 1, weights chosen so every quantity is a round number.

    x = 2, h = 1.
    r = σ(0.5·2 + 0 + (−1)·1 + 0) = σ(0) = 1/2
    z = σ((ln3/2)·2 + 0 + 0·1 + 0) = σ(ln 3) = 3/4
    n = tanh(0.25·2 − 0.5 + r·((ln3 − 1)·1 + 1)) = tanh(ln3 / 2) = (3 − 1)/(3 + 1) = 1/2
    h' = (1 − z)·n + z·h = 1/4 · 1/2 + 3/4 · 1 = 0.875
    (Applying r before the bias b_hn would give tanh(0.5·(ln3 − 1) + 1) instead, and swapping
    z and 1 − z would give 0.625: the numbers catch both slips.)
    """
    cell = GRUCell(1, 1).to(D)
    ln3 = math.log(3)
    with torch.no_grad():  # rows in PyTorch's order: r, z, n
        cell.weight_ih.copy_(torch.tensor([[0.5], [ln3 / 2], [0.25]], dtype=D))
        cell.bias_ih.copy_(torch.tensor([0.0, 0.0, -0.5]))
        cell.weight_hh.copy_(torch.tensor([[-1.0], [0.0], [ln3 - 1]], dtype=D))
        cell.bias_hh.copy_(torch.tensor([0.0, 0.0, 1.0]))
    h = cell(torch.tensor([[2.0]], dtype=D), torch.tensor([[1.0]], dtype=D))
    assert h.item() == pytest.approx(0.875, abs=1e-12)
    ref = nn.GRUCell(1, 1).to(D)
    ref.load_state_dict(cell.state_dict())
    assert ref(torch.tensor([[2.0]], dtype=D), torch.tensor([[1.0]], dtype=D)).item() == (
        pytest.approx(0.875, abs=1e-12)
    )


def test_cell_and_step_function_equal_nn_grucell():
    torch.manual_seed(4)
    ref = nn.GRUCell(3, 5).to(D)
    cell = GRUCell(3, 5).to(D)
    cell.load_state_dict(ref.state_dict())  # same parameter names
    x, h = torch.randn(6, 3, dtype=D), torch.randn(6, 5, dtype=D)
    _close(cell(x, h), ref(x, h))
    _close(gru_step(x, h, *(p for p in ref.parameters())), ref(x, h))


def test_hand_computed_vanilla_step():
    cell = VanillaRNNCell(1, 1).to(D)
    with torch.no_grad():
        cell.weight_xh.fill_(0.5)
        cell.weight_hh.fill_(2.0)
        cell.bias.fill_(-1.0)
    # tanh(0.5·2 + 2·(ln3/4) − 1) = tanh(ln3 / 2) = 1/2
    h = cell(torch.tensor([[2.0]], dtype=D), torch.tensor([[math.log(3) / 4]], dtype=D))
    assert h.item() == pytest.approx(0.5, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    B=st.integers(1, 4),
    T=st.integers(1, 6),
    In=st.integers(1, 5),
    H=st.integers(1, 5),
    L=st.integers(1, 3),
    with_h0=st.booleans(),
    padded=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_random_shapes_equal_nn_gru(B, T, In, H, L, with_h0, padded, seed):
    ref, ours = _pair(In, H, L, seed=seed)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, In, dtype=D, generator=g)
    h0 = torch.randn(L, B, H, dtype=D, generator=g) if with_h0 else None
    if padded:
        lengths = torch.randint(1, T + 1, (B,), generator=g)
        out_ref, hn_ref = _packed_reference(ref, x, lengths, h0)
        out, hn = ours(x, h0, lengths=lengths)
    else:
        out_ref, hn_ref = ref(x, h0)
        out, hn = ours(x, h0)
    _close(out, out_ref)
    _close(hn, hn_ref)


def test_seq_first_layout_and_round_trip_to_torch():
    torch.manual_seed(5)
    ref = nn.GRU(3, 4, 2, batch_first=False).to(D)
    ours = copy_from_torch(ref)
    assert not ours.batch_first
    x = torch.randn(7, 2, 3, dtype=D)  # (T, B, I)
    _close(ours(x)[0], ref(x)[0])
    back = to_torch(ours)
    for name, p in ref.named_parameters():
        assert torch.equal(p, getattr(back, name))
    assert back.batch_first is False and back.weight_ih_l0.dtype == D


def test_dropout_only_in_training():
    torch.manual_seed(6)
    ours = GRU(3, 4, num_layers=2, dropout=0.5).to(D)
    ref = to_torch(ours)
    x = torch.randn(2, 5, 3, dtype=D)
    ours.eval()
    ref.eval()
    _close(ours(x)[0], ref(x)[0])
    ours.train()
    assert not torch.allclose(ours(x)[0], ref(x)[0])


def test_wrong_shapes_name_expected_and_got():
    gru = GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"\(B, T, input_size\) = \(\*, \*, 3\), got \(2, 5, 7\)"):
        gru(torch.randn(2, 5, 7))
    with pytest.raises(ValueError, match=r"got \(5, 3\)"):
        gru(torch.randn(5, 3))  # unbatched input is not accepted
    with pytest.raises(ValueError, match=r"h0 should have shape .* = \(2, 2, 4\), got \(1, 2, 4\)"):
        gru(torch.randn(2, 5, 3), torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="no time steps"):
        gru(torch.randn(2, 0, 3))
    with pytest.raises(ValueError, match=r"lengths should have shape \(B,\) = \(2,\)"):
        gru(torch.randn(2, 5, 3), lengths=[5])
    with pytest.raises(ValueError, match=r"lengths must be integers in \[0, T=5\]"):
        gru(torch.randn(2, 5, 3), lengths=[6, 1])
    cell = GRUCell(3, 4)
    with pytest.raises(ValueError, match=r"\(B, input_size\) = \(\*, 3\), got \(2, 5\)"):
        cell(torch.randn(2, 5), torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"\(B, hidden_size\) = \(2, 4\), got \(3, 4\)"):
        cell(torch.randn(2, 3), torch.zeros(3, 4))
    with pytest.raises(ValueError, match=r"got \(2, 5\)"):
        VanillaRNNCell(3, 4)(torch.randn(2, 5), torch.zeros(2, 4))


def test_copy_refuses_what_it_cannot_represent():
    with pytest.raises(ValueError, match="unidirectional"):
        copy_from_torch(nn.GRU(3, 4, bidirectional=True))
    with pytest.raises(ValueError, match="bias=True"):
        copy_from_torch(nn.GRU(3, 4, bias=False))
    with pytest.raises(TypeError, match="LSTM"):
        copy_from_torch(nn.LSTM(3, 4))
    with pytest.raises(ValueError, match=r"\(3, 4, 1\), this GRU has \(3, 5, 1\)"):
        GRU(3, 5).load_from_torch(nn.GRU(3, 4))


def _autograd_norms(cell, x):
    """||∂h_T/∂h_t|| straight from autograd: one backward pass per unit of h_T."""
    H = cell.hidden_size
    hs = [torch.zeros(1, H, dtype=x.dtype, requires_grad=True)]
    for x_t in x:
        h = cell(x_t[None], hs[-1])
        h.retain_grad()
        hs.append(h)
    rows = []  # rows[j][t] = ∂h_T[j]/∂h_t, (H,)
    for j in range(H):
        grads = torch.autograd.grad(hs[-1][0, j], hs[:-1], retain_graph=True)
        rows.append([g[0] for g in grads] + [torch.eye(H, dtype=x.dtype)[j]])
    jac = [torch.stack([rows[j][t] for j in range(H)]) for t in range(len(hs))]  # (H, H) each
    return torch.stack([torch.linalg.matrix_norm(J, ord=2) for J in jac])


def test_vanilla_rnn_gradient_vanishes_and_gru_can_keep_it():
    torch.manual_seed(7)
    T, In, H = 30, 4, 8
    x = torch.randn(T, In, dtype=D)
    rnn = VanillaRNNCell(In, H).to(D)
    with torch.no_grad():  # small recurrent weights: spectral norm 0.5
        rnn.weight_hh.mul_(0.5 / torch.linalg.matrix_norm(rnn.weight_hh, ord=2))
    norms = gradient_norms_through_time(rnn, x)
    assert norms.shape == (T + 1,)
    _close(norms, _autograd_norms(rnn, x))  # the product of Jacobians is the true gradient
    assert norms[-1] == pytest.approx(1.0)
    assert norms[0] / norms[-1] < 1e-8  # at most 0.5^30 ≈ 1e-9: many orders of magnitude
    assert (norms[1:] >= norms[:-1]).all()  # it only shrinks going back in time

    gru = GRUCell(In, H).to(D)
    with torch.no_grad():  # an update gate near 1 (z ≈ σ(4) ≈ 0.98) copies the state forward
        gru.bias_ih[H : 2 * H].fill_(4.0)
    gru_norms = gradient_norms_through_time(gru, x)
    _close(gru_norms, _autograd_norms(gru, x))
    assert gru_norms[0] > 0.1  # after 30 steps the GRU still passes on a tenth or more
    assert gru_norms[0] > 1e6 * norms[0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_equals_nn_gru_with_lengths():
    ref, ours = _pair(3, 4, 2, seed=8)
    ref, ours = ref.cuda(), ours.cuda()
    x = torch.randn(3, 6, 3, dtype=D, device="cuda")
    lengths = torch.tensor([6, 2, 4])  # on the CPU, as pack_padded_sequence wants
    out_ref, hn_ref = _packed_reference(ref, x, lengths, None)
    out, hn = ours(x, lengths=lengths)
    _close(out, out_ref)
    _close(hn, hn_ref)
    assert copy_from_torch(ref).cells[0].weight_ih.device.type == "cuda"

"""Checkers for the exercises of "The encoder".

    check_gru_step(gru_step)           one GRU step from the equations, against nn.GRUCell
    check_gru_step_cho(gru_step_cho)   the same step with Cho et al.'s reset gate, applied to
                                       h_{t-1} before the matrix W_hn (a hand-written reference)
    check_stacked_gru(stacked_gru)     a stack of GRU cells over a sequence, against nn.GRU
    check_stacked_gru_by_step(fn)      the same stack with the loops swapped: time outside,
                                       layers inside (as a decoder must run), against nn.GRU
    check_last_states(last_states)     each sentence's last real output state = the context
    check_bidirectional_context(fn)    a bidirectional GRU's sentence summary from its padded
                                       output states: forward at the last real token, backward
                                       at the first, against nn.GRU's h_n over a packed batch
    check_open_bias(fn)                the smallest update-gate bias that lets a given share
                                       of the gradient reach the first step (copy, don't edit)

When a GRU step is wrong in a common way (gates swapped, update gate reversed, reset gate
outside its bias...), the checker recognises the mistake by computing it too, and names it.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from lib.checks.harness import CheckResult, Mismatch, call, expect_close, expect_shape, run_checks
from lib.gru import GRU, GRUCell, gradient_norms_through_time, to_torch

# ---------------------------------------------------------------------------------------------
# gru_step(x, h, weight_ih, weight_hh, bias_ih, bias_hh) -> h'
# ---------------------------------------------------------------------------------------------


def _gates(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = x @ w_ih.T + b_ih  # (B, 3H)
    gh = h @ w_hh.T + b_hh  # (B, 3H)
    return gi.chunk(3, dim=1), gh.chunk(3, dim=1)


def _variants(x, h, w_ih, w_hh, b_ih, b_hh) -> dict[str, torch.Tensor]:
    """Typical wrong GRU steps, each with the explanation of its mistake."""
    (i_r, i_z, i_n), (h_r, h_z, h_n) = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    H = h.size(1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    r_sw, z_sw = z, r  # the first two row blocks read in the wrong order
    n_sw = torch.tanh(i_n + r_sw * h_n)
    hn_no_bias = h @ w_hh[2 * H:].T  # W_hn h without b_hn
    b_hn = b_hh[2 * H:]
    return {
        "the update gate is used the wrong way round: h_t = (1 - z) * n + z * h_{t-1} "
        "(z close to 1 keeps the old state)": z * n + (1 - z) * h,
        "the reset and update gates are swapped: PyTorch stacks the rows of weight_ih and "
        "weight_hh in the order r, z, n": (1 - z_sw) * n_sw + z_sw * h,
        "the reset gate must multiply W_hn h_{t-1} + b_hn, bias included (PyTorch's "
        "convention), not W_hn h_{t-1} alone": (1 - z) * torch.tanh(
            i_n + r * hn_no_bias + b_hn) + z * h,
        "the reset gate r is not used: the candidate is tanh(W_in x + b_in + r * (W_hn h + "
        "b_hn))": (1 - z) * torch.tanh(i_n + h_n) + z * h,
        "the candidate n must use tanh, not a sigmoid": (1 - z) * torch.sigmoid(
            i_n + r * h_n) + z * h,
        "you returned the candidate n; the new state mixes it with the old one: "
        "h_t = (1 - z) * n + z * h_{t-1}": n,
        "the reset gate multiplies h_{t-1} inside W_hn (that is the variant of Cho et al.); "
        "here r multiplies the whole W_hn h_{t-1} + b_hn": (1 - z) * torch.tanh(
            i_n + (r * h) @ w_hh[2 * H:].T + b_hn) + z * h,
    }


def _gru_case(fn, B: int, D: int, H: int, seed: int) -> str:
    g = torch.Generator().manual_seed(seed)
    cell = nn.GRUCell(D, H)
    with torch.no_grad():
        for p in cell.parameters():  # larger weights than the default: the gates matter
            p.copy_(torch.randn(p.shape, generator=g) * 0.8)
    x = torch.randn(B, D, generator=g)  # (B, D)
    h = torch.randn(B, H, generator=g).tanh()  # (B, H)
    args = [x, h] + [p.detach().clone() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                                  cell.bias_hh)]
    with torch.no_grad():
        expected = cell(x, h)  # (B, H)
    return _judge_step(fn, args, expected, _variants, "nn.GRUCell")


def _judge_step(fn, args: list, expected: torch.Tensor, variants, reference: str) -> str:
    """Run a learner's GRU step on `args` (x, h, weights) and compare with `expected` (B, H);
    a wrong answer that equals one of `variants(*args)` is named by its key."""
    (B, D), H = args[0].shape, args[1].shape[1]
    with torch.no_grad():
        got = call(fn, *args, names=("x", "h", "weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    if not torch.is_tensor(got):
        raise Mismatch(f"return the new state as a tensor (B, H), got {type(got).__name__}")
    expect_shape("the new state", got, (B, H))
    got = got.detach()
    if torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
        return f"B={B}, input {D}, hidden {H}: equal to {reference}"
    with torch.no_grad():
        for why, wrong in variants(*args).items():
            if torch.allclose(got, wrong, atol=1e-5, rtol=1e-4):
                raise Mismatch(why)
    expect_close("the new state", got, expected)
    return ""


def check_gru_step(fn) -> CheckResult:
    """`fn(x, h, weight_ih, weight_hh, bias_ih, bias_hh)` -> h' (B, H), as nn.GRUCell."""
    return run_checks("gru_step", *[
        (lambda c=c: _gru_case(fn, *c)) for c in [(2, 3, 4, 0), (5, 6, 3, 1), (1, 4, 4, 2)]])


# ---------------------------------------------------------------------------------------------
# gru_step_cho(...) -> h': the reset gate applied to h_{t-1} before W_hn (Cho et al. 2014)
# ---------------------------------------------------------------------------------------------


def gru_step_cho_reference(x, h, w_ih, w_hh, b_ih, b_hh):
    """Cho et al.'s placement: n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn), written out.

    The gates r and z are PyTorch's (same rows, same biases); only the candidate differs from
    nn.GRU, which computes r ⊙ (W_hn h + b_hn). The two agree where r = 1 everywhere.
    """
    w_ir, w_iz, w_in = w_ih.chunk(3, dim=0)  # each (H, D)
    w_hr, w_hz, w_hn = w_hh.chunk(3, dim=0)  # each (H, H)
    b_ir, b_iz, b_in = b_ih.chunk(3)  # each (H,)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(x @ w_ir.T + b_ir + h @ w_hr.T + b_hr)  # (B, H) reset gate
    z = torch.sigmoid(x @ w_iz.T + b_iz + h @ w_hz.T + b_hz)  # (B, H) update gate
    n = torch.tanh(x @ w_in.T + b_in + (r * h) @ w_hn.T + b_hn)  # (B, H): r before W_hn
    return (1 - z) * n + z * h  # (B, H)


def _cho_variants(x, h, w_ih, w_hh, b_ih, b_hh) -> dict[str, torch.Tensor]:
    """Typical wrong answers to the Cho exercise, each with the words that name it."""
    (i_r, i_z, i_n), (h_r, h_z, h_n) = _gates(x, h, w_ih, w_hh, b_ih, b_hh)
    H = h.size(1)
    w_hn, b_hn = w_hh[2 * H:], b_hh[2 * H:]  # (H, H), (H,)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)

    def mix(n, z=z):
        return (1 - z) * n + z * h

    r_sw, z_sw = z, r  # the first two row blocks read in the wrong order
    return {
        "this is PyTorch's placement, r * (W_hn h_{t-1} + b_hn), as in lib.gru.gru_step; in "
        "Cho's the reset gate multiplies h_{t-1} before the matrix: W_hn (r * h_{t-1}) + b_hn":
            mix(torch.tanh(i_n + r * h_n)),
        "r multiplies the product W_hn h_{t-1}: that is still after the matrix. Multiply the "
        "state first, (r * h) @ W_hn.T, then add b_hn":
            mix(torch.tanh(i_n + r * (h @ w_hn.T) + b_hn)),
        "the reset gate scales b_hn too; in Cho's placement only the state is gated: "
        "W_hn (r * h_{t-1}) + b_hn, with b_hn outside":
            mix(torch.tanh(i_n + (r * h) @ w_hn.T + r * b_hn)),
        "b_hn is missing: the candidate is tanh(W_in x + b_in + W_hn (r * h_{t-1}) + b_hn)":
            mix(torch.tanh(i_n + (r * h) @ w_hn.T)),
        "the update gate is used the wrong way round: h_t = (1 - z) * n + z * h_{t-1} "
        "(z close to 1 keeps the old state)":
            z * torch.tanh(i_n + (r * h) @ w_hn.T + b_hn) + (1 - z) * h,
        "the reset and update gates are swapped: PyTorch stacks the rows of weight_ih and "
        "weight_hh in the order r, z, n":
            mix(torch.tanh(i_n + (r_sw * h) @ w_hn.T + b_hn), z_sw),
        "the reset gate r is not used: gate the state before the matrix, W_hn (r * h_{t-1})":
            mix(torch.tanh(i_n + h_n)),
        "you returned the candidate n; the new state mixes it with the old one: "
        "h_t = (1 - z) * n + z * h_{t-1}": torch.tanh(i_n + (r * h) @ w_hn.T + b_hn),
    }


def _cho_case(fn, B: int, D: int, H: int, seed: int) -> str:
    g = torch.Generator().manual_seed(seed)
    w = [torch.randn(3 * H, D, generator=g) * 0.8, torch.randn(3 * H, H, generator=g) * 0.8,
         torch.randn(3 * H, generator=g) * 0.8, torch.randn(3 * H, generator=g) * 0.8]
    x = torch.randn(B, D, generator=g)  # (B, D)
    h = torch.randn(B, H, generator=g).tanh()  # (B, H)
    args = [x, h] + w
    with torch.no_grad():
        expected = gru_step_cho_reference(*args)  # (B, H)
    return _judge_step(fn, args, expected, _cho_variants, "Cho's placement")


def check_gru_step_cho(fn) -> CheckResult:
    """`fn(x, h, weight_ih, weight_hh, bias_ih, bias_hh)` -> h' (B, H) with Cho et al.'s reset
    gate: n = tanh(W_in x + b_in + W_hn (r ⊙ h) + b_hn); gates and layout as nn.GRUCell."""
    return run_checks("gru_step_cho", *[
        (lambda c=c: _cho_case(fn, *c)) for c in [(2, 3, 4, 0), (5, 6, 3, 1), (1, 4, 4, 2)]])


# ---------------------------------------------------------------------------------------------
# stacked_gru(x, cells, h0) -> (outputs (B, T, H), h_n (L, B, H))
# ---------------------------------------------------------------------------------------------


def _stack_case(fn, B: int, T: int, D: int, H: int, L: int, seed: int) -> str:
    torch.manual_seed(seed)
    gru = GRU(D, H, L)
    x = torch.randn(B, T, D)  # (B, T, D)
    h0 = torch.randn(L, B, H).tanh() * 0.5  # (L, B, H)
    with torch.no_grad():
        out_ref, h_ref = to_torch(gru)(x, h0)  # PyTorch's own stacked GRU
        got = call(fn, x, list(gru.cells), h0, names=("x", "cells", "h0"))
    if not (isinstance(got, tuple) and len(got) == 2):
        raise Mismatch("return a pair (outputs, h_n): the last layer's states at every step "
                       "(B, T, H) and every layer's state at the last step (L, B, H)")
    outputs, h_n = (t.detach() if torch.is_tensor(t) else t for t in got)
    if torch.is_tensor(outputs) and tuple(outputs.shape) == (T, B, H) and B != T:
        raise Mismatch(f"outputs has shape (T, B, H) = {(T, B, H)}; stack the steps on dim=1 "
                       f"to get (B, T, H) (batch first)")
    expect_shape("outputs", outputs, (B, T, H))
    if torch.is_tensor(h_n) and tuple(h_n.shape) == (B, H) and L > 1:
        raise Mismatch(f"h_n has shape (B, H) = {(B, H)}: return the last state of *every* "
                       f"layer, stacked to (L, B, H) = {(L, B, H)}")
    expect_shape("h_n", h_n, (L, B, H))
    if not torch.allclose(outputs, out_ref, atol=1e-5, rtol=1e-4):
        with torch.no_grad():
            one = nn.GRU(D, H, 1, batch_first=True)
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(one, f"{name}_l0").copy_(getattr(gru.cells[0], name))
            first, _ = one(x, h0[:1])  # (B, T, H): layer 1 alone
        if L > 1 and torch.allclose(outputs, first, atol=1e-5, rtol=1e-4):
            raise Mismatch("outputs are the first layer's states; return the last layer's")
        if L > 1 and D == H:
            with torch.no_grad():
                flat = []
                for i, cell in enumerate(gru.cells):  # every layer reads x: a typical mistake
                    h, seq = h0[i], []  # (B, H)
                    for t in range(T):
                        h = cell(x[:, t], h)
                        seq.append(h)
                    flat.append(torch.stack(seq, 1))  # (B, T, H)
            if torch.allclose(outputs, flat[-1], atol=1e-5, rtol=1e-4):
                raise Mismatch("every layer reads x: layer i > 1 must read the states of layer "
                               "i-1 at the same step (eq. 1), not the input")
        if L > 1 and torch.allclose(outputs, _lagged(gru.cells, x, h0), atol=1e-5, rtol=1e-4):
            raise Mismatch("layer i reads the state of layer i-1 from the previous step "
                           "(h_{t-1}^{i-1}): at step t, update the layers bottom up and give "
                           "layer i the state layer i-1 has just computed, h_t^{i-1} (eq. 1)")
        steps = (outputs - out_ref).abs().amax(dim=(0, 2))  # (T,)
        t = int((steps > 1e-4).nonzero()[0])
        raise Mismatch(f"outputs differ from nn.GRU from step t={t} on (max difference "
                       f"{float(steps[t]):.3g}); check the initial state of each layer "
                       f"(h0[i] for layer i) and that each layer carries its own state")
    expect_close("h_n", h_n, h_ref)
    return f"{L} layer{'s' * (L > 1)}, B={B}, T={T}: outputs and h_n equal nn.GRU's"


@torch.no_grad()
def _lagged(cells, x, h0):
    """A typical time-outside mistake: every layer updated from the old states of all layers,
    so layer i reads h_{t-1}^{i-1} instead of h_t^{i-1}. Returns the outputs (B, T, H)."""
    h, outs = list(h0), []
    for t in range(x.size(1)):
        h = [cells[0](x[:, t], h[0])] + [cells[i](h[i - 1], h[i]) for i in range(1, len(cells))]
        outs.append(h[-1])
    return torch.stack(outs, 1)


def check_stacked_gru(fn) -> CheckResult:
    """`fn(x (B, T, I), cells [GRUCell] * L, h0 (L, B, H))` -> (outputs (B, T, H), h_n)."""
    with torch.random.fork_rng():  # seeded cases without touching the caller's random state
        return _check_stacked_gru(fn)


def check_stacked_gru_by_step(fn) -> CheckResult:
    """The same contract as `check_stacked_gru`, for the version with the time loop outside
    and the layer loop inside; the answer must be the same numbers as nn.GRU."""
    with torch.random.fork_rng():
        return _check_stacked_gru(fn, "stacked_gru_by_step")


def _check_stacked_gru(fn, title: str = "stacked_gru") -> CheckResult:
    return run_checks(
        title,
        lambda: _stack_case(fn, 2, 5, 4, 4, 2, 0),  # input size = hidden size
        lambda: _stack_case(fn, 3, 4, 6, 5, 3, 1),  # three layers, different sizes
        lambda: _stack_case(fn, 1, 1, 3, 2, 1, 2),  # one layer, one step
    )


# ---------------------------------------------------------------------------------------------
# last_states(outputs, lengths) -> (B, H)
# ---------------------------------------------------------------------------------------------


def _last_case(fn, lengths: list[int], H: int, seed: int) -> str:
    torch.manual_seed(seed)
    B, S = len(lengths), max(lengths) + 1  # one extra padded step even for the longest
    rnn = nn.GRU(3, H, 2, batch_first=True)
    x = torch.randn(B, S, 3)  # (B, S, 3)
    lens = torch.tensor(lengths)
    with torch.no_grad():
        packed, hidden = rnn(pack_padded_sequence(x, lens, batch_first=True,
                                                  enforce_sorted=False))
        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed, batch_first=True,
                                                      total_length=S)  # (B, S, H)
        got = call(fn, outputs, lens, names=("outputs", "lengths"))
    expected = hidden[-1]  # (B, H): the context
    if torch.is_tensor(got) and tuple(got.shape) == (1, B, H):
        got = got[0]
    expect_shape("the last states", got, (B, H))
    got = got.detach()
    for b, n in enumerate(lengths):
        if torch.allclose(got[b], expected[b], atol=1e-6):
            continue
        if torch.allclose(got[b], torch.zeros(H)):
            raise Mismatch(f"sentence {b} (length {n} of {S} steps): you returned zeros, the "
                           f"output at a padded step; take step lengths[b] - 1 = {n - 1}")
        for t in range(S):
            if torch.allclose(got[b], outputs[b, t], atol=1e-6):
                raise Mismatch(f"sentence {b} (length {n}): you returned the output at step "
                               f"index {t}, expected index {n - 1}, its last real token")
        expect_close(f"the last state of sentence {b}", got[b], expected[b])
    return f"lengths {lengths}: equal to the hidden state of the last layer (the context)"


def check_last_states(fn) -> CheckResult:
    """`fn(outputs (B, S, H), lengths (B,))` -> (B, H): outputs[b, lengths[b] - 1]."""
    with torch.random.fork_rng():
        return _check_last_states(fn)


def _check_last_states(fn) -> CheckResult:
    return run_checks(
        "last_states",
        lambda: _last_case(fn, [4, 2, 5], 6, 0),
        lambda: _last_case(fn, [1, 3], 4, 1),
        lambda: _last_case(fn, [3, 3, 3, 3], 2, 2),
    )


# ---------------------------------------------------------------------------------------------
# bidirectional_context(outputs, lengths) -> (B, 2H)
# ---------------------------------------------------------------------------------------------


def _bidirectional_variants(outputs, lengths, H: int) -> dict[str, torch.Tensor]:
    """Typical wrong summaries of a bidirectional GRU's padded outputs, by their mistake."""
    rows = torch.arange(outputs.size(0))
    last = outputs[rows, lengths - 1]  # (B, 2H): both directions at the last real token
    first = outputs[:, 0]  # (B, 2H): both directions at the first token
    end = outputs[:, -1]  # (B, 2H): both at the last padded step
    return {
        "the backward half is taken at the last real token, where the backward direction has "
        "read only that one token; it has read the whole sentence at step 0": last,
        "the forward half is taken at step 0, where the forward direction has read only the "
        "first token; take it at step lengths[b] - 1": first,
        "both halves are taken at the last step of the padded tensor: for a sentence shorter "
        "than the batch that is padding (zeros), and the backward half has read one token "
        "there at most": end,
        "the two halves are swapped: outputs[..., :H] is the forward direction and "
        "outputs[..., H:] the backward one, and the context keeps that order": torch.cat(
            [first[:, H:], last[:, :H]], dim=1),
    }


def _bidirectional_case(fn, lengths: list[int], H: int, layers: int, seed: int,
                        pad: int = 1) -> str:
    """`pad` padded steps after the longest sentence; pad=0 with equal lengths is a batch with
    no padding at all, where outputs[:, -1] is the last real token of every sentence."""
    torch.manual_seed(seed)
    B, S = len(lengths), max(lengths) + pad
    rnn = nn.GRU(3, H, layers, batch_first=True, bidirectional=True)
    x = torch.randn(B, S, 3)  # (B, S, 3)
    lens = torch.tensor(lengths)
    with torch.no_grad():
        packed, h_n = rnn(pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False))
        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed, batch_first=True,
                                                      total_length=S)  # (B, S, 2H)
        got = call(fn, outputs, lens, names=("outputs", "lengths"))
    expected = torch.cat([h_n[-2], h_n[-1]], dim=1)  # (B, 2H): last layer, forward, backward
    expect_shape("the bidirectional context", got, (B, 2 * H))
    got = got.detach()
    if not torch.allclose(got, expected, atol=1e-5, rtol=1e-4):
        for mistake, wrong in _bidirectional_variants(outputs, lens, H).items():
            if torch.allclose(got, wrong, atol=1e-6):
                raise Mismatch(f"lengths {lengths}: {mistake}")
        expect_close(f"the bidirectional context (lengths {lengths})", got, expected)
    padding = ", no padding" if pad == 0 else ""
    return (f"lengths {lengths}{padding}, {layers} layer(s): equal to nn.GRU's final states of "
            f"the last layer, forward then backward")


def check_bidirectional_context(fn) -> CheckResult:
    """`fn(outputs (B, S, 2H), lengths (B,))` -> (B, 2H): [forward at lengths[b] - 1;
    backward at step 0], which is what nn.GRU's h_n holds for the last layer."""
    with torch.random.fork_rng():
        return run_checks(
            "bidirectional_context",
            lambda: _bidirectional_case(fn, [4, 2, 5], 3, 1, 0),
            lambda: _bidirectional_case(fn, [1, 3], 4, 2, 1),
            lambda: _bidirectional_case(fn, [3, 3, 3], 2, 1, 2),
            lambda: _bidirectional_case(fn, [3, 3, 3], 2, 1, 3, pad=0),  # no padding at all
        )


# ---------------------------------------------------------------------------------------------
# smallest_open_bias(cell, x, biases, share) -> the smallest bias that lets `share` through
# ---------------------------------------------------------------------------------------------


def _with_bias(cell: GRUCell, bias: float, rows: slice) -> GRUCell:
    """A copy of `cell` with `bias` added to bias_hh[rows] (the update gate: rows H:2H)."""
    out = GRUCell(cell.input_size, cell.hidden_size)
    with torch.no_grad():
        out.load_state_dict(cell.state_dict())
        out.bias_hh[rows] += bias
    return out


def _first_reaching(reach: list[float], biases: list[float], share: float):
    return next((b for b, g in zip(biases, reach) if g >= share), None)


def _open_bias_case(fn, D: int, H: int, T: int, biases: list[float], share: float,
                    seed: int) -> str:
    torch.manual_seed(seed)
    cell = GRUCell(D, H)
    x = torch.randn(T, D)  # (T, D)
    before = {k: v.clone() for k, v in cell.state_dict().items()}
    z_rows = slice(H, 2 * H)
    reach = [float(gradient_norms_through_time(_with_bias(cell, b, z_rows), x)[0])
             for b in biases]
    expected = _first_reaching(reach, biases, share)
    got = call(fn, cell, x, list(biases), share, names=("cell", "x", "biases"))
    if any(not torch.equal(before[k], v) for k, v in cell.state_dict().items()):
        raise Mismatch("you changed the cell's own weights: add the bias to a copy (a new "
                       "GRUCell with load_state_dict), so each bias starts from the same cell")
    if got == expected:
        return (f"on another random cell (D={D}, H={H}, T={T}), biases {biases}, share {share}: "
                f"{expected}")
    where = f"(another random cell, D={D}, H={H}, T={T}; biases {biases}, share {share}) "
    if expected is None:
        raise Mismatch(f"{where}no bias lets that share through, so the answer is None; you "
                       f"returned {got!r}")
    if isinstance(got, (int, float)) and got not in biases:
        raise Mismatch(f"{where}you returned {got!r}, which is not one of the biases: return "
                       f"the bias, not the gradient factor")
    passing = [b for b, g in zip(biases, reach) if g >= share]
    if got == passing[-1]:
        raise Mismatch(f"{where}you returned the largest bias that lets the share through; "
                       f"the question asks for the smallest, {expected}")
    if got == biases[0]:
        raise Mismatch(f"{where}you returned the first bias, {got}, which lets only "
                       f"{reach[0]:.1e} through: compare norms[0] = ||dh_T/dh_0|| with the "
                       f"share (norms[-1] = ||dh_T/dh_T|| is always 1)")
    cumulative = [sum(biases[:k + 1]) for k in range(len(biases))]
    reach_cum = [float(gradient_norms_through_time(_with_bias(cell, c, z_rows), x)[0])
                 for c in cumulative]
    if got == _first_reaching(reach_cum, biases, share):
        raise Mismatch(f"{where}the biases add up: each one was added on top of the last, so "
                       f"+{biases[-1]} became +{cumulative[-1]}; start every bias from a fresh "
                       f"copy of the cell")
    for name, rows in (("reset gate's (rows 0:H)", slice(0, H)),
                       ("candidate's (rows 2H:3H)", slice(2 * H, 3 * H))):
        reach_rows = [float(gradient_norms_through_time(_with_bias(cell, b, rows), x)[0])
                      for b in biases]
        if got == _first_reaching(reach_rows, biases, share):
            raise Mismatch(f"{where}the bias went into the {name} bias; the update gate's rows "
                           f"are H:2H (PyTorch's order r, z, n)")
    raise Mismatch(f"{where}expected {expected} (||dh_T/dh_0|| per bias: "
                   + ", ".join(f"{g:.1e}" for g in reach) + f"), you returned {got!r}")


def check_open_bias(fn) -> CheckResult:
    """`fn(cell (GRUCell), x (T, D), biases [increasing], share)` -> the smallest bias whose
    update gate, opened by that much, lets at least `share` of the gradient reach step 0 of x,
    or None; the cell itself must not change."""
    with torch.random.fork_rng():
        return run_checks(
            "smallest_open_bias",
            lambda: _open_bias_case(fn, 5, 12, 25, [0.0, 1.0, 2.0, 3.0, 4.0], 0.01, 0),
            lambda: _open_bias_case(fn, 3, 8, 15, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0], 0.05, 1),
            lambda: _open_bias_case(fn, 4, 6, 30, [0.0, 1.0], 0.99, 2),
        )

"""lib.checks.encoder: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import encoder as checks
from lib.gru import GRUCell, gradient_norms_through_time, gru_step

torch.set_num_threads(1)


# --- gru_step ---------------------------------------------------------------------------------


def _parts(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = x @ w_ih.T + b_ih
    gh = h @ w_hh.T + b_hh
    return gi.chunk(3, 1), gh.chunk(3, 1)


def test_gru_step_accepts_reference():
    r = checks.check_gru_step(gru_step)
    assert r.ok, str(r)


def test_gru_step_names_the_reversed_update_gate():
    def wrong(x, h, *w):
        (i_r, i_z, i_n), (h_r, h_z, h_n) = _parts(x, h, *w)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        return z * torch.tanh(i_n + r * h_n) + (1 - z) * h

    r = checks.check_gru_step(wrong)
    assert not r.ok and r.done and "wrong way round" in str(r)


def test_gru_step_names_swapped_gates():
    def wrong(x, h, *w):
        (i_z, i_r, i_n), (h_z, h_r, h_n) = _parts(x, h, *w)  # order z, r, n
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        return (1 - z) * torch.tanh(i_n + r * h_n) + z * h

    r = checks.check_gru_step(wrong)
    assert not r.ok and "swapped" in str(r)


def test_gru_step_names_reset_outside_bias_and_missing_reset():
    def outside(x, h, w_ih, w_hh, b_ih, b_hh):
        H = h.size(1)
        (i_r, i_z, i_n), (h_r, h_z, _) = _parts(x, h, w_ih, w_hh, b_ih, b_hh)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * (h @ w_hh[2 * H:].T) + b_hh[2 * H:])
        return (1 - z) * n + z * h

    r = checks.check_gru_step(outside)
    assert not r.ok and "bias included" in str(r)

    def no_reset(x, h, *w):
        (i_r, i_z, i_n), (h_r, h_z, h_n) = _parts(x, h, *w)
        z = torch.sigmoid(i_z + h_z)
        return (1 - z) * torch.tanh(i_n + h_n) + z * h

    r = checks.check_gru_step(no_reset)
    assert not r.ok and "reset gate r is not used" in str(r)


def test_gru_step_wrong_shape_and_skeleton():
    r = checks.check_gru_step(lambda x, h, *w: gru_step(x, h, *w).T)
    assert not r.ok and "shape" in str(r)
    assert not checks.check_gru_step(skeleton).done


# --- stacked_gru ------------------------------------------------------------------------------


def stacked_ok(x, cells, h0):
    layer_input, last = x, []
    for i, cell in enumerate(cells):
        h, outs = h0[i], []
        for t in range(x.size(1)):
            h = cell(layer_input[:, t], h)
            outs.append(h)
        layer_input = torch.stack(outs, dim=1)
        last.append(h)
    return layer_input, torch.stack(last)


def test_stacked_accepts_reference():
    r = checks.check_stacked_gru(stacked_ok)
    assert r.ok, str(r)


def test_stacked_rejects_every_layer_reading_x():
    def wrong(x, cells, h0):
        last, outs = [], None
        for i, cell in enumerate(cells):
            h, outs = h0[i], []
            for t in range(x.size(1)):
                h = cell(x[:, t], h)
                outs.append(h)
            last.append(h)
        return torch.stack(outs, 1), torch.stack(last)

    r = checks.check_stacked_gru(wrong)
    assert not r.ok and "every layer reads x" in str(r)


def test_stacked_rejects_time_major_and_last_layer_only():
    r = checks.check_stacked_gru(lambda x, c, h0: (stacked_ok(x, c, h0)[0].transpose(0, 1),
                                                   stacked_ok(x, c, h0)[1]))
    assert not r.ok and "(T, B, H)" in str(r)
    r = checks.check_stacked_gru(lambda x, c, h0: (stacked_ok(x, c, h0)[0],
                                                   stacked_ok(x, c, h0)[1][-1]))
    assert not r.ok and "every* layer" in str(r)


def test_stacked_rejects_first_layer_outputs_and_zero_start():
    def first_layer(x, cells, h0):
        out, hn = stacked_ok(x, cells, h0)
        h, outs = h0[0], []
        for t in range(x.size(1)):
            h = cells[0](x[:, t], h)
            outs.append(h)
        return torch.stack(outs, 1), hn

    r = checks.check_stacked_gru(first_layer)
    assert not r.ok and "first layer" in str(r)
    r = checks.check_stacked_gru(lambda x, c, h0: stacked_ok(x, c, torch.zeros_like(h0)))
    assert not r.ok and "initial state" in str(r)


def test_stacked_skeleton_not_done():
    assert not checks.check_stacked_gru(skeleton).done


# --- last_states ------------------------------------------------------------------------------


def last_ok(outputs, lengths):
    return outputs[torch.arange(outputs.size(0)), lengths - 1]


def test_last_states_accepts_reference():
    r = checks.check_last_states(last_ok)
    assert r.ok, str(r)


def test_last_states_rejects_last_column_and_off_by_one():
    r = checks.check_last_states(lambda o, n: o[:, -1])
    assert not r.ok and "padded step" in str(r)
    r = checks.check_last_states(lambda o, n: o[torch.arange(o.size(0)), n - 2])
    assert not r.ok and "expected index" in str(r)


def test_last_states_skeleton_not_done():
    assert not checks.check_last_states(skeleton).done


# --- inputs changed in place ------------------------------------------------------------------


def test_gru_step_names_a_state_changed_in_place():
    def zeroes_h(x, h, *w):
        out = gru_step(x, h, *w)
        h.zero_()  # the right answer, but the caller's h is gone
        return out

    r = checks.check_gru_step(zeroes_h)
    assert not r.ok and r.done
    assert "your function changed its input `h` in place (e.g. h.zero_()" in str(r)

    def biased_in_place(x, h, weight_ih, weight_hh, bias_ih, bias_hh):
        bias_ih += bias_hh  # b_ir + b_hr in one go... in the caller's own bias
        return gru_step(x, h, weight_ih, weight_hh, bias_ih - bias_hh, bias_hh)

    assert "`bias_ih` in place" in str(checks.check_gru_step(biased_in_place))


def test_stacked_and_last_states_name_inputs_changed_in_place():
    def writes_h0(x, cells, h0):
        out = stacked_ok(x, cells, h0)
        h0[0] = out[1][0]  # stores the result in the caller's initial states
        return out

    assert "`h0` in place" in str(checks.check_stacked_gru(writes_h0))

    def sorts_lengths(outputs, lengths):
        lengths -= 1  # indices from lengths, in the caller's own tensor
        return outputs[torch.arange(outputs.size(0)), lengths]

    assert "`lengths` in place" in str(checks.check_last_states(sorts_lengths))


# --- gru_step_cho: the reset gate before the matrix -------------------------------------------


def cho_by_unit(x, h, w_ih, w_hh, b_ih, b_hh):
    """An independent reference: Cho et al.'s candidate unit by unit, with Python sums."""
    B, H = h.shape
    out = torch.empty(B, H)
    for b in range(B):
        r = [torch.sigmoid(w_ih[j] @ x[b] + b_ih[j] + w_hh[j] @ h[b] + b_hh[j]) for j in range(H)]
        for j in range(H):
            z = torch.sigmoid(w_ih[H + j] @ x[b] + b_ih[H + j] + w_hh[H + j] @ h[b] + b_hh[H + j])
            gated = sum(w_hh[2 * H + j, k] * r[k] * h[b, k] for k in range(H))  # W_hn (r * h)
            n = torch.tanh(w_ih[2 * H + j] @ x[b] + b_ih[2 * H + j] + gated + b_hh[2 * H + j])
            out[b, j] = (1 - z) * n + z * h[b, j]
    return out


def test_cho_reference_is_cho_and_equals_nn_gru_when_the_reset_gate_is_open():
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(3, 4)
    x, h = torch.randn(2, 3), torch.randn(2, 4).tanh()
    w = [p.detach().clone() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih,
                                      cell.bias_hh)]
    with torch.no_grad():
        cho = checks.gru_step_cho_reference(x, h, *w)
        torch.testing.assert_close(cho, cho_by_unit(x, h, *w))
        assert (cho - cell(x, h)).abs().max() > 1e-3  # the placement matters in general
        w[3][:4] += 50.0  # reset-gate bias: r = 1 everywhere
        cell.bias_hh[:4] += 50.0
        torch.testing.assert_close(checks.gru_step_cho_reference(x, h, *w), cell(x, h))


def test_cho_accepts_an_independent_solution():
    r = checks.check_gru_step_cho(cho_by_unit)
    assert r.ok, str(r)


def _cho_wrong(kind):
    def step(x, h, w_ih, w_hh, b_ih, b_hh):
        H = h.size(1)
        (i_r, i_z, i_n), (h_r, h_z, h_n) = _parts(x, h, w_ih, w_hh, b_ih, b_hh)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        w_hn, b_hn = w_hh[2 * H:], b_hh[2 * H:]
        n = {"pytorch": lambda: torch.tanh(i_n + r * h_n),
             "after": lambda: torch.tanh(i_n + r * (h @ w_hn.T) + b_hn),
             "gated_bias": lambda: torch.tanh(i_n + (r * h) @ w_hn.T + r * b_hn),
             "no_bias": lambda: torch.tanh(i_n + (r * h) @ w_hn.T)}[kind]()
        return (1 - z) * n + z * h
    return step


def test_cho_names_each_misplaced_reset_gate():
    assert_rejects(checks.check_gru_step_cho(gru_step), "PyTorch's placement")
    assert_rejects(checks.check_gru_step_cho(_cho_wrong("pytorch")), "PyTorch's placement")
    assert_rejects(checks.check_gru_step_cho(_cho_wrong("after")), "still after the matrix")
    assert_rejects(checks.check_gru_step_cho(_cho_wrong("gated_bias")), "scales b_hn too")
    assert_rejects(checks.check_gru_step_cho(_cho_wrong("no_bias")), "b_hn is missing")


def test_cho_names_gate_mistakes_and_the_candidate():
    def reversed_z(x, h, *w):
        (_, i_z, _), (_, h_z, _) = _parts(x, h, *w)
        z = torch.sigmoid(i_z + h_z)
        right = checks.gru_step_cho_reference(x, h, *w)
        n = (right - z * h) / (1 - z)  # recover the candidate
        return z * n + (1 - z) * h

    assert_rejects(checks.check_gru_step_cho(reversed_z), "wrong way round")

    def swapped(x, h, w_ih, w_hh, b_ih, b_hh):
        H = h.size(1)
        order = torch.cat([torch.arange(H, 2 * H), torch.arange(H), torch.arange(2 * H, 3 * H)])
        return checks.gru_step_cho_reference(x, h, w_ih[order], w_hh[order], b_ih[order],
                                             b_hh[order])

    assert_rejects(checks.check_gru_step_cho(swapped), "swapped")

    def candidate(x, h, w_ih, w_hh, b_ih, b_hh):
        H = h.size(1)
        (i_r, _, i_n), (h_r, _, _) = _parts(x, h, w_ih, w_hh, b_ih, b_hh)
        r = torch.sigmoid(i_r + h_r)
        return torch.tanh(i_n + (r * h) @ w_hh[2 * H:].T + b_hh[2 * H:])

    assert_rejects(checks.check_gru_step_cho(candidate), "returned the candidate")

    def no_reset(x, h, *w):
        (_, i_z, i_n), (_, h_z, h_n) = _parts(x, h, *w)
        z = torch.sigmoid(i_z + h_z)
        return (1 - z) * torch.tanh(i_n + h_n) + z * h

    assert_rejects(checks.check_gru_step_cho(no_reset), "reset gate r is not used")
    assert not checks.check_gru_step_cho(skeleton).done


# --- stacked_gru_by_step: time outside, layers inside -----------------------------------------


def by_step_ok(x, cells, h0):
    h, outs = list(h0), []
    for t in range(x.size(1)):
        inp = x[:, t]
        for i, cell in enumerate(cells):
            h[i] = cell(inp, h[i])
            inp = h[i]
        outs.append(h[-1])
    return torch.stack(outs, 1), torch.stack(h)


def test_by_step_accepts_time_outside():
    r = checks.check_stacked_gru_by_step(by_step_ok)
    assert r.ok and "stacked_gru_by_step" in str(r), str(r)
    assert checks.check_stacked_gru_by_step(stacked_ok).ok  # same numbers, either order


def test_by_step_names_the_one_step_lag_between_layers():
    def lagged(x, cells, h0):
        h, outs = list(h0), []
        for t in range(x.size(1)):
            h = [cells[0](x[:, t], h[0])] + [cells[i](h[i - 1], h[i])
                                             for i in range(1, len(cells))]
            outs.append(h[-1])
        return torch.stack(outs, 1), torch.stack(h)

    assert_rejects(checks.check_stacked_gru_by_step(lagged), "previous step", "h_t^{i-1}")


def test_by_step_names_every_layer_reading_x_and_skeleton():
    def flat(x, cells, h0):
        h, outs = list(h0), []
        for t in range(x.size(1)):
            h = [cell(x[:, t], h[i]) for i, cell in enumerate(cells)]
            outs.append(h[-1])
        return torch.stack(outs, 1), torch.stack(h)

    assert_rejects(checks.check_stacked_gru_by_step(flat), "every layer reads x")
    assert not checks.check_stacked_gru_by_step(skeleton).done


# --- bidirectional_context --------------------------------------------------------------------


def bidirectional_ok(outputs, lengths):
    H = outputs.size(2) // 2
    forward = outputs[torch.arange(outputs.size(0)), lengths - 1, :H]  # read x_1 .. x_n
    backward = outputs[:, 0, H:]  # read x_n .. x_1
    return torch.cat([forward, backward], dim=1)


def test_bidirectional_context_accepts_reference():
    r = checks.check_bidirectional_context(bidirectional_ok)
    assert r.ok, str(r)
    assert len(set(r.messages)) == len(r.messages), "each case's line says which case it is"
    assert any("no padding" in m for m in r.messages), str(r)


def test_bidirectional_context_names_each_wrong_step():
    rows = torch.arange

    def both_last(o, n):
        return o[rows(o.size(0)), n - 1]

    assert_rejects(checks.check_bidirectional_context(both_last), "backward half",
                   "only that one token")
    assert_rejects(checks.check_bidirectional_context(lambda o, n: o[:, 0]), "forward half",
                   "step 0")
    assert_rejects(checks.check_bidirectional_context(lambda o, n: o[:, -1]), "padding")

    def swapped(o, n):
        right = bidirectional_ok(o, n)
        H = right.size(1) // 2
        return torch.cat([right[:, H:], right[:, :H]], dim=1)

    assert_rejects(checks.check_bidirectional_context(swapped), "swapped")


def test_bidirectional_context_without_padding_names_the_backward_half():
    # with no padded step, outputs[:, -1] is the last real token: the backward half is wrong
    with pytest.raises(checks.Mismatch, match="backward half"):
        checks._bidirectional_case(lambda o, n: o[:, -1], [3, 3, 3], 2, 1, 3, pad=0)


def test_bidirectional_context_rejects_a_shape_and_an_unknown_mistake():
    assert_rejects(checks.check_bidirectional_context(lambda o, n: o.sum(1)[:, :2]), "shape")
    assert_rejects(checks.check_bidirectional_context(lambda o, n: bidirectional_ok(o, n) + 0.1),
                   "differs at index")


def test_bidirectional_context_skeleton_not_done():
    assert not checks.check_bidirectional_context(skeleton).done


# --- smallest_open_bias ---------------------------------------------------------------------


def _opened(cell, bias, rows):
    out = GRUCell(cell.input_size, cell.hidden_size)
    out.load_state_dict(cell.state_dict())
    with torch.no_grad():
        out.bias_hh[rows] += bias
    return out


def _open_bias(first_step=True, rows_of=lambda H: slice(H, 2 * H), smallest=True):
    """An independent solution, or a wrong one: the last step's factor, other rows, largest."""
    def fn(cell, x, biases, share):
        H = cell.hidden_size
        found = None
        for b in biases:
            norms = gradient_norms_through_time(_opened(cell, b, rows_of(H)), x)  # (T + 1,)
            if float(norms[0 if first_step else -1]) >= share:
                found = b
                if smallest:
                    break
        return found
    return fn


def test_open_bias_accepts_an_independent_solution():
    r = checks.check_open_bias(_open_bias())
    assert r.ok and r.done, str(r)
    assert "None" in str(r)  # the case where no bias is enough


def test_open_bias_names_each_slip():
    assert_rejects(checks.check_open_bias(_open_bias(first_step=False)), "norms[0]",
                   "always 1")
    assert_rejects(checks.check_open_bias(_open_bias(rows_of=lambda H: slice(0, H))),
                   "reset gate", "rows are H:2H")
    assert_rejects(checks.check_open_bias(_open_bias(smallest=False)), "largest bias",
                   "smallest")


def test_open_bias_names_cumulative_biases_and_in_place_edits():
    def cumulative(cell, x, biases, share):
        H, c = cell.hidden_size, _opened(cell, 0.0, slice(0, 0))
        for b in biases:
            with torch.no_grad():
                c.bias_hh[H:2 * H] += b  # on top of the previous bias
            if float(gradient_norms_through_time(c, x)[0]) >= share:
                return b
        return None

    def in_place(cell, x, biases, share):
        with torch.no_grad():
            cell.bias_hh += 1.0
        return biases[0]

    assert_rejects(checks.check_open_bias(cumulative), "add up", "fresh copy")
    assert_rejects(checks.check_open_bias(in_place), "in place")
    assert_rejects(checks.check_open_bias(lambda c, x, b, s: 0.5), "not one of the biases")


def test_open_bias_skeleton_not_done():
    r = checks.check_open_bias(skeleton)
    assert not r.done and not r.ok

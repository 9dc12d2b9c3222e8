"""lib.checks.encoder: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import torch
from conftest import skeleton

from lib.checks import encoder as checks
from lib.gru import gru_step

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

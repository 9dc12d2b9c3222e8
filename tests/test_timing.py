"""lib.experiments.timing: best_times (the best of several rounds, measured in turns, gradients
cleared and
the model's mode restored), times_by_size and slope_interval (time against size, robust to a
busy moment), decoder_step_macs (against torch's own FLOP counter); bad input is refused with a
message that names it."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from conftest import with_attention
from torch.utils.flop_counter import FlopCounterMode

from lib.checks.attention import budget_reference
from lib.decoder import Decoder
from lib.experiments import timing
from lib.experiments.reversal import reversal_model
from lib.experiments.timing import best_times
from lib.experiments.toy import tiny_model


def test_best_time_is_the_known_duration_of_each_candidate():
    x = torch.ones(3, requires_grad=True)

    def sleeper(seconds):
        def fn():
            time.sleep(seconds)
            return (2 * x).sum()
        return fn

    times = best_times({"short": sleeper(0.01), "long": sleeper(0.05)}, rounds=3)
    assert list(times) == ["short", "long"]
    # a sleep lasts at least its duration; the best of three is rarely much longer
    assert 0.01 <= times["short"] < 0.04
    assert 0.05 <= times["long"] < 0.09


def test_candidates_are_measured_in_turns_and_the_best_round_is_kept():
    x = torch.ones(1, requires_grad=True)
    order, durations = [], iter([0.03, 0.03, 0.005, 0.03, 0.03, 0.03])

    def make(name):
        def fn():
            order.append(name)
            time.sleep(next(durations))
            return x.sum()
        return fn

    times = best_times({"a": make("a"), "b": make("b")}, rounds=3)
    assert order == ["a", "b"] * 3  # round-robin, not a, a, a, b, b, b
    assert times["a"] < 0.02 <= times["b"]  # a's best round was its fast second one


def test_backward_runs_and_model_gradients_are_cleared_and_mode_restored():
    model = torch.nn.Linear(4, 2)
    model.eval()
    inputs = torch.randn(5, 4)
    seen = []

    def loss():
        seen.append(model.weight.grad)  # cleared before every pass
        return model(inputs).square().mean()

    best_times({"linear": loss}, rounds=2, model=model)
    assert seen == [None, None]
    assert model.weight.grad is None and not model.training


def test_backward_really_runs():
    w = torch.ones(2, requires_grad=True)
    best_times({"w": lambda: (3 * w).sum()}, rounds=2)
    assert torch.equal(w.grad, torch.full((2,), 6.0))  # two passes of d(3 w)/dw accumulated


@pytest.mark.parametrize("fns, rounds, words", [
    ({}, 3, "non-empty dict"),
    ([lambda: None], 3, "non-empty dict"),
    ({"x": 3}, 3, "must be a function"),
    ({"x": lambda: torch.ones(1, requires_grad=True).sum()}, 0, "rounds must be an integer"),
    ({"x": lambda: torch.ones(1, requires_grad=True).sum()}, True, "rounds must be an integer"),
    ({"x": lambda: 1.0}, 1, "got float"),
    ({"x": lambda: torch.ones(2, requires_grad=True) * 2}, 1, "shape (2,)"),
    ({"x": lambda: torch.ones(1).sum()}, 1, "without grad"),
])
def test_bad_input_is_refused_with_a_clear_message(fns, rounds, words):
    with pytest.raises((ValueError, TypeError), match=None) as error:
        best_times(fns, rounds=rounds)
    assert words in str(error.value)


def test_a_failing_candidate_still_restores_the_model():
    model = torch.nn.Linear(2, 2)
    model.eval()
    with pytest.raises(ValueError):
        best_times({"bad": lambda: model(torch.ones(1, 2))}, model=model)  # shape (1, 2)
    assert not model.training and model.weight.grad is None


# --- time against size --------------------------------------------------------------------------


def test_times_by_size_measures_every_candidate_at_every_size_in_turns():
    calls = []

    def make(name):
        def build(size):
            calls.append(("build", name, size))

            def fn():
                calls.append((name, size))
                time.sleep(0.002 * size)
            return fn
        return build

    threads = torch.get_num_threads()
    times = timing.times_by_size({"a": make("a"), "b": make("b")}, [1, 3], repeats=3, number=2)
    assert torch.get_num_threads() == threads  # one thread inside, restored after
    assert set(times) == {"a", "b"} and all(len(row) == 3 for t in times.values() for row in t)
    timed = [c for c in calls if c[0] != "build"][4:]  # after one warm-up call of each
    assert len(timed) == 2 * 2 * 3 * 2
    # in turns: a's two calls at one size are followed by b's at the same size
    pairs = [timed[i:i + 4] for i in range(0, len(timed), 4)]
    assert all(p[0][0] == p[1][0] == "a" and p[2][0] == p[3][0] == "b"
               and len({c[1] for c in p}) == 1 for p in pairs)
    # a sleep of 2 ms per unit of size: the slope of the medians is about 2 ms per unit
    fit = timing.slope_interval([1, 3], times["a"])
    assert 0.0018 <= fit.slope < 0.004


@pytest.mark.parametrize("make, sizes, repeats, words", [
    ({}, [1, 2], 3, "non-empty dict"),
    ({"x": 3}, [1, 2], 3, "function of the size"),
    ({"x": lambda n: lambda: None}, [1], 3, "at least two different sizes"),
    ({"x": lambda n: lambda: None}, [1, 1], 3, "at least two different sizes"),
    ({"x": lambda n: lambda: None}, [1, 2], 0, "repeats must be"),
])
def test_times_by_size_refuses_bad_input(make, sizes, repeats, words):
    with pytest.raises((ValueError, TypeError)) as error:
        timing.times_by_size(make, sizes, repeats=repeats)
    assert words in str(error.value)


def test_fit_line_matches_numpy_polyfit():
    g = torch.Generator().manual_seed(0)
    xs = torch.rand(9, generator=g).tolist()
    ys = torch.rand(9, generator=g).tolist()
    slope, intercept = timing.fit_line(xs, ys)
    ref_slope, ref_intercept = np.polyfit(xs, ys, 1)
    assert slope == pytest.approx(ref_slope) and intercept == pytest.approx(ref_intercept)
    assert timing.fit_line([0, 1, 2], [1, 3, 5]) == (2.0, 1.0)
    with pytest.raises(ValueError, match="two different x"):
        timing.fit_line([1, 1], [2, 3])


def test_slope_interval_is_exact_without_noise_and_ignores_a_busy_repeat():
    sizes = [10, 20, 30]
    clean = [[0.001 * s + 0.5] * 5 for s in sizes]  # 1 ms per unit, 5 identical repeats
    fit = timing.slope_interval(sizes, clean)
    assert fit.slope == pytest.approx(0.001) and fit.intercept == pytest.approx(0.5)
    assert fit.low == pytest.approx(0.001) and fit.high == pytest.approx(0.001)
    busy = [row[:] for row in clean]
    busy[2][1] += 10.0  # one busy moment at the largest size, in repeat 1
    fit = timing.slope_interval(sizes, busy)
    assert fit.slope == pytest.approx(0.001)  # the median does not see it
    assert fit.high > 0.001  # draws that repeat it often do: the interval widens
    flat = [[1.0, 1.2, 0.9], [1.1, 0.9, 1.0], [1.0, 1.1, 0.95]]
    fit = timing.slope_interval([1, 2, 3], flat)
    assert fit.low <= 0 <= fit.high


@pytest.mark.parametrize("times, level, words", [
    ([[1.0], [1.0, 2.0]], 0.95, "same number of repeats"),
    ([[1.0]], 0.95, "one list of repeats per size"),
    ([[1.0], [2.0]], 1.5, "level must be"),
])
def test_slope_interval_refuses_bad_input(times, level, words):
    with pytest.raises(ValueError, match=words):
        timing.slope_interval([1, 2], times, level=level)


# --- where the attention step reaches twice the fixed step -------------------------------------


def _slope(slope, intercept, low=None, high=None):
    return timing.Slope(slope, slope if low is None else low, slope if high is None else high,
                        intercept)


def test_doubling_length_by_hand():
    """fixed 1 + 0.01 S, attention 1.5 + 0.05 S: 1.5 + 0.05 S = 2 + 0.02 S at S = 0.5 / 0.03."""
    fixed = _slope(0.01, 1.0, 0.0, 0.02)
    attention = _slope(0.05, 1.5, 0.04, 0.07)
    at, earliest, latest = timing.doubling_length(fixed, attention)
    assert at == pytest.approx(0.5 / 0.03)
    assert earliest == pytest.approx(0.5 / (0.07 - 0.0))  # steepest attention, flattest fixed
    assert latest == math.inf  # 0.04 - 2 * 0.02 = 0: that pair of ends never crosses
    # with narrower intervals the late end crosses too
    _, _, late = timing.doubling_length(_slope(0.01, 1.0, 0.005, 0.012),
                                        _slope(0.05, 1.5, 0.045, 0.06))
    assert late == pytest.approx(0.5 / (0.045 - 0.024))


def test_doubling_length_holds_the_point_fit_even_outside_a_bootstrap_interval():
    at, earliest, latest = timing.doubling_length(_slope(0.01, 1.0),
                                                  _slope(0.05, 1.5, 0.06, 0.08))
    assert earliest <= at <= latest and latest == at


@pytest.mark.parametrize("fixed, attention", [
    (_slope(0.01, 1.0), _slope(0.05, 1.5, -0.01, 0.1)),  # attention's growth not measured
    (_slope(0.01, 1.0), _slope(0.05, 2.5, 0.04, 0.06)),  # already twice as long at S = 0
    (_slope(0.03, 1.0), _slope(0.05, 1.5, 0.04, 0.06)),  # never grows faster than twice fixed
])
def test_doubling_length_is_none_when_the_timings_give_no_positive_length(fixed, attention):
    assert timing.doubling_length(fixed, attention) is None


# --- a decoder step: its work counted, and ready to time -----------------------------------------


@pytest.mark.parametrize("attention", [False, True])
def test_step_macs_agree_with_torch_flop_counter(attention):
    model = reversal_model(0, hidden=8, attention=attention, max_len=30).eval()
    S = 7
    step = timing.decoder_step(model, S, batch=1)
    with FlopCounterMode(display=False) as counter:
        step()
    macs = timing.decoder_step_macs(model, S)
    H = model.config.hidden_size
    # the counter sees matrix products (2 flops per multiply-add); the weighted sum
    # sum_j a_j h_j is a product and a sum of tensors, S * H multiply-adds it does not count
    weighted_sum = S * H if attention else 0
    assert sum(macs.values()) == counter.get_total_flops() // 2 + weighted_sum
    assert macs["head"] == H * model.config.tgt_vocab_size
    if attention:
        assert macs["attention"] == budget_reference(S, H, H)["extra_per_step"]
    else:
        assert macs["attention"] == 0


def test_step_macs_of_the_reference_shape_by_hand():
    class Model:  # only the decoder is read
        decoder = Decoder(6849, 256, 512, num_layers=2, attention=True)

    macs = timing.decoder_step_macs(Model, 10)
    # layer 1 reads [e(y); c] (256 + 512), layer 2 reads s^1 (512); 3 gates each
    assert macs["gru"] == 3 * 512 * (768 + 512) + 3 * 512 * (512 + 512)
    assert macs["head"] == 512 * 6849
    assert macs["attention"] == 512 * 512 + 10 * 512 + 10 * 512


def test_step_and_tanh_run_and_refuse_a_model_in_training_mode():
    model = reversal_model(0, hidden=8, attention=True, max_len=30).eval()
    timing.decoder_step(model, 5, batch=2)()
    timing.score_tanh(model, 5, batch=2)()
    with pytest.raises(ValueError, match="source_len must be"):
        timing.decoder_step(model, 0)
    with pytest.raises(ValueError, match="no attention"):
        timing.score_tanh(reversal_model(0, hidden=8, max_len=30).eval(), 5)
    with pytest.raises(ValueError, match="model.eval"):
        timing.decoder_step(model.train(), 5)
    with pytest.raises(ValueError, match="source_len must be"):
        timing.decoder_step_macs(model, 0)


@pytest.mark.parametrize("attention", [False, True])
def test_step_seconds_times_a_step(attention):
    model = with_attention(tiny_model(0, hidden=16, emb_dim=8), attention)
    seconds = timing.step_seconds(model, 7, batch=4, steps=3, rounds=2)
    assert 0 < seconds < 60  # a loaded machine is slow; the point is a positive time


@pytest.mark.parametrize("kwargs, words", [
    ({"steps": 0}, "steps must be an integer >= 1"),
    ({"steps": 2.0}, "steps must be an integer >= 1"),
    ({"rounds": 0}, "rounds must be an integer >= 1"),
    ({"batch": 0}, "batch must be an integer >= 1"),
    ({"source_len": 0}, "source_len must be an integer >= 1"),
])
def test_step_seconds_names_a_bad_count(kwargs, words):
    """steps=0 once raised a bare ZeroDivisionError."""
    from lib.experiments.toy import tiny_model

    with pytest.raises(ValueError, match=words):
        timing.step_seconds(tiny_model(0), **{"source_len": 3, **kwargs})

"""lib.timing.best_times: the best of several rounds, measured in turns, gradients cleared and
the model's mode restored; bad input is refused with a message that names it."""

from __future__ import annotations

import time

import pytest
import torch

from lib.timing import best_times


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

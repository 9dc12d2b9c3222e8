"""lib.course.verdicts.encoder: a gradient's fate, two gradients by order of magnitude, the
stretch bound and the probes' comparisons, in words that follow the numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import encoder as v


@pytest.mark.parametrize("norm, fate", [
    (5e-9, "vanishes"), (0.0099, "vanishes"), (0.43, "survives"), (10.0, "survives"),
    (90.9, "explodes")])
def test_gradient_fate(norm, fate):
    assert v.gradient_fate(norm) == fate


@pytest.mark.parametrize("norm, word", [
    (1e-3, "vanishes"), (0.0099, "vanishes"), (0.01, "shrinks but survives"),
    (0.43, "shrinks but survives"), (0.999, "shrinks but survives"), (1.0, "grows"),
    (7.0, "grows"), (10.0, "grows"), (10.01, "explodes"), (91.0, "explodes")])
def test_gradient_trend_never_calls_growth_survival(norm, word):
    assert v.gradient_trend(norm) == word


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_gradient_trend_rejects_bad_norms(bad):
    with pytest.raises(ValueError, match="gradient norm"):
        v.gradient_trend(bad)


def test_gru_against_vanilla_says_how_much_better_and_whether_it_still_vanishes():
    # the numbers the issue quotes: the GRU passes back ~1000x more, yet still vanishes
    text = v.gru_against_vanilla(5.5e-6, 5.1e-9)
    assert "about 1,000 times more" in text and "still vanishes" in text
    assert "no better" not in text
    assert "about as much" in v.gru_against_vanilla(1e-6, 1.2e-6)
    assert "less" in v.gru_against_vanilla(1e-9, 1e-6)
    assert "survives" in v.gru_against_vanilla(0.5, 1e-9)
    assert "explodes" in v.gru_against_vanilla(50.0, 1e-9)
    grown = v.gru_against_vanilla(5.0, 1e-9)  # growth below tenfold is not survival
    assert grown.endswith("and its gradient grows") and "survives" not in grown


@pytest.mark.parametrize("x, up", [
    (3.41e-06, 3.5e-06), (3.5e-06, 3.5e-06), (3.46e-06, 3.5e-06), (9.91e-07, 1.0e-06),
    (1.0, 1.0), (0.123, 0.13)])
def test_round_up_never_rounds_below(x, up):
    got = v.round_up(x)
    assert got == pytest.approx(up) and got >= x * (1 - 1e-12)
    assert f"{got:.1e}" == f"{up:.1e}"


@pytest.mark.parametrize("x, printed", [
    (3.52e-06, "4e-06"), (3.5e-06, "4e-06"), (1.8e-06, "2e-06"), (4e-06, "4e-06"),
    (9.2e-06, "1e-05")])
def test_round_up_to_one_digit_bounds_the_printed_maximum(x, printed):
    # the GRU check glues round_up(max difference, digits=1) with :.0e after printing :.1e
    got = v.round_up(x, digits=1)
    assert f"{got:.0e}" == printed and got >= x * (1 - 1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_round_up_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="positive finite"):
        v.round_up(bad)


@pytest.mark.parametrize("g_a, g_b, expected", [
    (5e-3, 5e-6, "passes back about 1,000 times more of the gradient than the GRU"),
    (3.0, 1.0, "passes back about 3 times more of the gradient than the GRU"),
    (2.9, 1.0, "passes back about as much of the gradient as the GRU"
     " (within a factor of 3)"),
    (4.6e-6, 5.5e-6, "passes back about as much of the gradient as the GRU"
     " (within a factor of 3)"),
    (1.0, 2.9, "passes back about as much of the gradient as the GRU"
     " (within a factor of 3)"),
    (1.0, 3.0, "passes back about 3 times less of the gradient than the GRU"),
    (1e-9, 5e-6, "passes back about 5,000 times less of the gradient than the GRU"),
])
def test_by_order_follows_the_ratio(g_a, g_b, expected):
    assert v.by_order(g_a, g_b, "the GRU", "passes back", "more", "much", "less",
                      " of the gradient") == expected


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_by_order_refuses_non_positive_norms(bad):
    with pytest.raises(ValueError, match="positive and finite"):
        v.by_order(bad, 1.0, "x", "is", "larger", "large", "smaller")
    with pytest.raises(ValueError, match="positive and finite"):
        v.by_order(1.0, bad, "x", "is", "larger", "large", "smaller")


@pytest.mark.parametrize("sigma, start", [
    (0.5, "below 1, so the safe bound above applies"), (0.999, "below 1"),
    (1.0, "at least 1, so the safe bound above does not apply"), (1.07, "at least 1")])
def test_stretch_bound_follows_sigma(sigma, start):
    assert v.stretch_bound(sigma).startswith(start)


def test_stretch_bound_says_the_matrix_not_the_step_stretches():
    # the page's 48-unit W_hh (seed 0) has sigma_1 = 1.07: W_hh can stretch a vector, but the
    # Jacobian diag(tanh') W_hh need not, so the verdict speaks of the multiplication by W_hh
    said = v.stretch_bound(1.070670485496521)
    assert said.endswith("one multiplication by it can stretch some vectors")
    assert "one step can stretch" not in said


def test_stretch_bound_rejects_negative():
    with pytest.raises(ValueError, match="singular value"):
        v.stretch_bound(-0.1)


@pytest.mark.parametrize("acc_a, acc_b, lo, hi, start", [
    (0.998, 1.0, -0.004, 0.0, "A and B are both at the ceiling"),
    (0.99, 0.995, 0.001, 0.01, "A and B are both at the ceiling"),
    (0.98, 1.0, -0.03, -0.01, "A scores lower than B"),
    (0.61, 0.38, 0.18, 0.28, "A scores higher than B"),
    (0.60, 0.61, -0.02, 0.01, "A and B are not told apart")])
def test_probe_gap_says_ceiling_only_when_both_are_at_it(acc_a, acc_b, lo, hi, start):
    assert v.probe_gap(acc_a, acc_b, lo, hi, "A", "B").startswith(start)


def test_probe_gap_rejects_percentages():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.probe_gap(99.8, 100.0, 0, 0, "A", "B")


def test_curve_trend_reads_the_whole_curve_not_only_its_endpoint():
    # norms[0] is h_0's factor, the last entry h_T's own (1)
    trained = [0.574, 1.5, 3.02, 4.958, 2.0, 1.0]  # the review's curve: peak 5.0, end 0.57
    text = v.curve_trend(trained)
    assert text == "it shrinks but survives there, after growing as high as 5.0 on the way"
    assert v.curve_trend([3.5e-6, 1e-3, 0.5, 1.0]) == "it vanishes"  # never above 1
    assert v.curve_trend([0.43, 0.7, 1.02, 1.0]) == "it shrinks but survives"  # 1.0 as printed
    assert v.curve_trend([1e-3, 12.0, 1.0]).endswith("after exploding to 12.0 on the way")
    assert v.curve_trend([3.0, 6.0, 1.0]) == "it grows, peaking at 6.0 on the way"
    assert v.curve_trend([90.9, 20.0, 1.0]) == "it explodes"  # the peak is h_0's own
    assert v.curve_trend([0.01, 1.0]) == "it shrinks but survives"


@pytest.mark.parametrize("bad", [[], [0.5, float("nan"), 1.0], [-1.0, 1.0]])
def test_curve_trend_rejects_bad_curves(bad):
    with pytest.raises(ValueError):
        v.curve_trend(bad)

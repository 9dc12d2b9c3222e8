"""The wrap-up's and the attention chapter's verdicts: every outcome gets words that match it."""

from __future__ import annotations

import pytest

from lib.course import verdicts as v


@pytest.mark.parametrize("short, long, start", [
    ((30.0, 27.0, 33.0), (40.0, 36.0, 44.0), "rises with length"),
    ((40.0, 36.0, 44.0), (30.0, 27.0, 33.0), "falls with length"),
    ((30.0, 27.0, 33.0), (32.0, 29.0, 35.0), "does not clearly change"),
    ((32.0, 29.0, 35.0), (30.0, 27.0, 33.0), "does not clearly change"),
])
def test_length_trend_follows_the_intervals(short, long, start):
    text = v.length_trend(short, long)
    assert text.startswith(start)
    assert f"{long[0]:.1f}" in text and f"{short[0]:.1f}" in text
    if start.startswith("does not"):
        assert ("above" in text) == (long[0] > short[0])
        assert ("below" in text) == (long[0] < short[0])


def test_length_trend_refuses_a_reversed_interval():
    with pytest.raises(ValueError, match="interval"):
        v.length_trend((30.0, 33.0, 31.0), (30.0, 27.0, 33.0))


def test_reversal_verdict_each_outcome():
    text = v.reversal_verdict([1.0, 0.76, 0.11], [0.99, 0.96, 0.93], tolerance=0.1)
    assert "fixed-vector decoder's share of exact reversals falls" in text
    assert "attention decoder's holds" in text and "attention decoder is ahead" in text
    text = v.reversal_verdict([1.0, 0.9, 0.8], [0.5, 0.4, 0.3], tolerance=0.1)
    assert "attention decoder's falls" in text and "is behind" in text
    text = v.reversal_verdict([0.9, 0.9], [0.92, 0.91], tolerance=0.05)
    assert "holds" in text and "two are level" in text
    with pytest.raises(ValueError):
        v.reversal_verdict([1.0], [1.0, 0.5])


@pytest.mark.parametrize("lo, hi, words", [
    (0.5, 3.0, "scores higher than"),
    (-3.0, -0.5, "scores lower than"),
    (-1.0, 1.0, "not told apart"),
])
def test_paired_difference(lo, hi, words):
    assert words in v.paired_difference(lo, hi, "A", "B")


@pytest.mark.parametrize("lo, hi, words", [
    (0.5, 3.0, "already helps"),
    (-3.0, -0.5, "does worse"),
    (-1.0, 1.0, "cannot be told apart"),
])
def test_long_input_conclusion(lo, hi, words):
    assert words in v.long_input_conclusion(lo, hi)


def test_interval_order_is_checked():
    with pytest.raises(ValueError):
        v.paired_difference(2.0, 1.0, "A", "B")
    with pytest.raises(ValueError):
        v.long_input_conclusion(2.0, 1.0)


def test_cost_growth_names_the_build_machine_and_never_says_1x():
    text = v.cost_growth(0.001, 0.003, "an attention decoder", 5, 80)
    assert "3.0 times as long" in text and "machine that built this page" in text
    assert "about as long" in v.cost_growth(0.001, 0.00102, "a fixed-vector decoder", 5, 80)
    faster = v.cost_growth(0.002, 0.001, "a fixed-vector decoder", 5, 80)
    assert "3.0" not in faster and "1x" not in faster and "1.0 times" not in faster
    with pytest.raises(ValueError):
        v.cost_growth(0.0, 1.0, "x", 5, 80)


def test_alignment_reading_follows_the_measured_shares():
    collapsed = v.alignment_reading(0.93, 0.99, True, 0.4)
    assert "93 %" in collapsed and "last source token" in collapsed
    assert "no alignment" in collapsed and "diagonal" not in collapsed
    blocks = v.alignment_reading(0.1, 0.8, True, 0.35)
    assert "80 %" in blocks and "never goes back" in blocks and "diagonal" in blocks
    mixed = v.alignment_reading(0.1, 0.8, False, 0.35)
    assert "goes back to an earlier sentence at least once" in mixed and "diagonal" not in mixed
    even = v.alignment_reading(0.1, 0.45, True, 0.35)
    assert "no blocks" in even and "diagonal" not in even
    with pytest.raises(ValueError, match="last_share"):
        v.alignment_reading(1.5, 0.5, True)

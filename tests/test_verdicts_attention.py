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


# --- the alignment of the fine-tuned copy, measured over all joined test sources ----------------

NAN = float("nan")


@pytest.mark.parametrize("entropy, last, block, uniform_block, kind", [
    (0.97, 0.63, 0.50, 0.45, "uniform"),  # near uniform, tilted to the last token
    (0.95, 0.10, 0.90, 0.40, "uniform"),  # the entropy decides first
    (0.90, 0.00, NAN, NAN, "uniform"),  # the threshold itself counts as close
    (0.60, 0.80, 0.95, 0.40, "last"),  # peaked on the last token: no block claim
    (0.60, 0.50, 0.30, 0.40, "last"),
    (0.60, 0.20, 0.80, 0.40, "blocks"),
    (0.89, 0.49, 0.55, 0.40, "blocks"),  # exactly the margin
    (0.60, 0.20, 0.50, 0.40, "spread"),  # peaked, but not by sentence
    (0.60, 0.20, NAN, NAN, "spread"),  # no source of two sentences: no blocks
])
def test_alignment_kind_each_outcome(entropy, last, block, uniform_block, kind):
    assert v.alignment_kind(entropy, last, block, uniform_block) == kind


@pytest.mark.parametrize("args", [(1.2, 0.5, 0.5, 0.4), (0.5, -0.1, 0.5, 0.4),
                                  (0.5, 0.5, 50.0, 0.4), (0.5, 0.5, 0.5, -1.0)])
def test_alignment_kind_refuses_values_that_are_not_shares(args):
    with pytest.raises(ValueError, match="share"):
        v.alignment_kind(*args)


# The page's sentences around the verdicts, with each outcome in its place.
READING = "where uniform weights would put 45 %. {}."
SUMMARY = "The fine-tuned copy's weights, measured over all 573 joined test sources, {}."


def test_alignment_reading_near_uniform_says_it_did_not_learn_to_align():
    text = v.alignment_reading(0.97, 0.63, 0.50, 0.45)
    assert text.startswith("So these weights are close to uniform")
    assert "has not learned to align" in text and "no alignment to read" in text
    assert "tilt towards the last source token" in text and "90 %" in text
    assert "aligns in blocks" not in text
    untilted = v.alignment_reading(0.97, 0.10, 0.50, 0.45)
    assert "has not learned to align" in untilted and "tilt" not in untilted
    summary = SUMMARY.format(v.alignment_summary(0.97, 0.63, 0.50, 0.45))
    assert "are close to uniform: it did not learn to align in this budget." in summary


def test_alignment_reading_last_token_says_it_did_not_learn_to_align():
    text = v.alignment_reading(0.60, 0.80, 0.95, 0.40)
    assert text.startswith("So most rows peak on the last source token")
    assert "has not learned to align words" in text and "leans on the summary" in text
    assert "no word alignment to read" in text and "blocks" not in text
    summary = SUMMARY.format(v.alignment_summary(0.60, 0.80, 0.95, 0.40))
    assert "peak on the last source token in most rows: it did not learn to align words" in summary
    assert summary.endswith("leans on the summary at the end of the source instead.")


def test_alignment_reading_blocks_says_it_aligns():
    text = v.alignment_reading(0.60, 0.20, 0.80, 0.40)
    assert text.startswith("So the copy aligns in blocks")
    assert "15 points" in text and "not learned" not in text and "no alignment" not in text
    summary = SUMMARY.format(v.alignment_summary(0.60, 0.20, 0.80, 0.40))
    assert "draw on one joined sentence at a time: it aligns in blocks." in summary


def test_alignment_reading_spread_claims_no_alignment_and_no_uniformity():
    text = v.alignment_reading(0.60, 0.20, 0.50, 0.40)
    assert text.startswith("So these weights are far from uniform")
    assert "show no alignment by sentence" in text and "aligns in blocks" not in text
    summary = SUMMARY.format(v.alignment_summary(0.60, 0.20, 0.50, 0.40))
    assert "are neither close to uniform" in summary and "no alignment by sentence shows." \
        in summary


@pytest.mark.parametrize("args", [(0.97, 0.63, 0.5, 0.45), (0.6, 0.8, 0.95, 0.4),
                                  (0.6, 0.2, 0.8, 0.4), (0.6, 0.2, 0.5, 0.4)])
def test_alignment_sentences_are_well_formed_in_place(args):
    reading = READING.format(v.alignment_reading(*args))
    assert reading.count("..") == 0 and "nan" not in reading
    summary = SUMMARY.format(v.alignment_summary(*args))
    assert summary.endswith(".") and not summary.endswith("..")


# --- the summary's sentence on the joined-input comparison ---------------------------------------

LONG_SUMMARY = "On the 95 sources of 25 tokens or more, {}."


@pytest.mark.parametrize("lo, hi, words", [
    (0.5, 3.0, "the attention copy scores higher than the fixed-vector copy (the 95 % interval "
               "of the difference lies above zero)."),
    (-3.0, -0.5, "the attention copy scores lower than the fixed-vector copy (the 95 % interval "
                 "of the difference lies below zero)."),
    (-1.0, 1.0, "the attention copy and the fixed-vector copy cannot be told apart (the 95 % "
                "interval of the difference includes zero)."),
])
def test_difference_clause_reads_in_the_summary_sentence(lo, hi, words):
    text = LONG_SUMMARY.format(v.difference_clause(lo, hi, "the attention copy",
                                                   "the fixed-vector copy"))
    assert text.endswith(words)
    assert "zero on sources" not in text


def test_difference_clause_refuses_a_reversed_interval():
    with pytest.raises(ValueError):
        v.difference_clause(1.0, -1.0, "A", "B")


# --- the crossover of the cost exercise ----------------------------------------------------------


@pytest.mark.parametrize("by_clock, words", [
    (300.0, ["at about 300 tokens", "24 times sooner than the count", "takes longer"]),
    (2400.0, ["at about 2,400 tokens", "3.0 times sooner"]),
    (5000.0, ["at about 5,000 tokens", "about where the count puts it"]),
    (20000.0, ["at about 20,000 tokens", "later than the count", "takes less time"]),
    (None, ["no positive length"]),
])
def test_crossover_reading_each_outcome(by_clock, words):
    text = v.crossover_reading(7200.0, by_clock)
    for w in words:
        assert w in text, (w, text)
    assert "1.0 times" not in text


@pytest.mark.parametrize("by_count, by_clock", [(0.0, 10.0), (100.0, -5.0), (100.0, 0.0),
                                                (float("inf"), 10.0)])
def test_crossover_reading_refuses_lengths_that_are_not_positive(by_count, by_clock):
    with pytest.raises(ValueError):
        v.crossover_reading(by_count, by_clock)

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


# (entropy, peak, last, block, uniform_block, current, chance_current)
UNIFORM_TILTED = (0.97, 0.08, 0.63, 0.50, 0.45, 0.30, 0.40)
TILT = (0.84, 0.14, 0.64, 0.50, 0.305, 0.28, 0.40)  # the page's numbers on one build
LAST = (0.40, 0.70, 0.80, 0.95, 0.40, 0.30, 0.40)
BLOCKS = (0.60, 0.30, 0.20, 0.80, 0.40, 0.80, 0.40)
PEAKED = (0.40, 0.70, 0.20, 0.80, 0.40, 0.30, 0.40)  # weight on one sentence, the wrong one
SPREAD = (0.80, 0.20, 0.20, 0.50, 0.40, 0.50, 0.40)


@pytest.mark.parametrize("args, kind", [
    (UNIFORM_TILTED, "uniform"),
    ((0.95, 0.9, 0.10, 0.90, 0.40, 0.9, 0.4), "uniform"),  # the entropy decides first
    ((0.90, 0.1, 0.00, NAN, NAN, NAN, NAN), "uniform"),  # the threshold itself counts as close
    (LAST, "last"),
    ((0.60, 0.50, 0.50, 0.30, 0.40, 0.2, 0.4), "last"),  # both thresholds themselves count
    (TILT, "tilt"),
    ((0.60, 0.49, 0.50, 0.95, 0.40, 0.9, 0.4), "tilt"),  # the last token decides before blocks
    (BLOCKS, "blocks"),
    ((0.89, 0.2, 0.49, 0.55, 0.40, 0.55, 0.40), "blocks"),  # exactly the margins
    ((0.60, 0.2, 0.20, 0.80, 0.40, 0.49, 0.30), "spread"),  # heavy sentence, not the current one
    ((0.60, 0.2, 0.20, 0.80, 0.40, 0.60, 0.50), "spread"),  # current, but not above chance
    ((0.60, 0.2, 0.20, 0.50, 0.40, 0.90, 0.40), "spread"),  # current, but no heavier than uniform
    (PEAKED, "peaked"),
    ((0.40, 0.5, 0.20, NAN, NAN, NAN, NAN), "peaked"),  # no source of two sentences: no blocks
    (SPREAD, "spread"),
    ((0.60, 0.2, 0.20, NAN, NAN, NAN, NAN), "spread"),
])
def test_alignment_kind_each_outcome(args, kind):
    assert v.alignment_kind(*args) == kind


@pytest.mark.parametrize("args", [(1.2, 0.5, 0.5, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 1.5, 0.5, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, -0.1, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 50.0, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, -1.0, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, 0.4, 2.0, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, 0.4, 0.5, -0.5)])
def test_alignment_kind_refuses_values_that_are_not_shares(args):
    with pytest.raises(ValueError, match="share"):
        v.alignment_kind(*args)


# The page's sentences around the verdicts, with each outcome in its place.
READING = "where a sentence drawn at random would be in 40 %. {}."
SUMMARY = "The fine-tuned copy's weights, measured over all 573 joined test sources, {}."
ALIGNS = ("aligns by sentence", "aligns in blocks", "can be read for which source words")


def test_alignment_reading_near_uniform_says_it_did_not_learn_to_align():
    text = v.alignment_reading(*UNIFORM_TILTED)
    assert text.startswith("So these weights are close to uniform")
    assert "has not learned to align" in text and "find no alignment" in text
    assert "tilt towards the last source token" in text and "90 %" in text
    assert not any(w in text for w in ALIGNS)
    untilted = v.alignment_reading(0.97, 0.08, 0.10, 0.50, 0.45, 0.3, 0.4)
    assert "has not learned to align" in untilted and "tilt" not in untilted
    summary = SUMMARY.format(v.alignment_summary(*UNIFORM_TILTED))
    assert "are close to uniform: it did not learn to align in this budget." in summary


def test_alignment_reading_diffuse_tilt_says_the_peak_is_weak_not_a_read_back():
    text = v.alignment_reading(*TILT)
    assert text.startswith("So these weights are diffuse and tilted towards the end")
    assert "less than half of its weight" in text and "50 %" in text
    assert "not the summary h_S" in text and "no word alignment" in text
    assert "reads back" not in text and "leans on the summary" not in text
    assert "whatever word" not in text and not any(w in text for w in ALIGNS)
    summary = SUMMARY.format(v.alignment_summary(*TILT))
    assert "diffuse and tilted towards the end of the source" in summary
    assert summary.endswith("no word alignment shows in this budget.")


def test_alignment_reading_peaked_on_last_token_says_it_leans_on_the_summary():
    text = v.alignment_reading(*LAST)
    assert text.startswith("So most rows put most of their weight on one column")
    assert "last source token" in text and "leans on the summary" in text
    assert "no word alignment" in text and "whatever word" not in text
    assert not any(w in text for w in ALIGNS)
    summary = SUMMARY.format(v.alignment_summary(*LAST))
    assert "on the last source token in most rows: it leans on the summary" in summary


def test_alignment_reading_blocks_says_it_aligns_by_sentence_and_no_finer():
    text = v.alignment_reading(*BLOCKS)
    assert text.startswith("So the copy aligns by sentence")
    assert "15 points" in text and "sentence being translated" in text
    assert "do not say whether, within a sentence" in text and "not learned" not in text
    summary = SUMMARY.format(v.alignment_summary(*BLOCKS))
    assert "follow the joined sentences in order" in summary and "nothing finer." in summary


def test_alignment_reading_peaked_elsewhere_does_not_claim_the_right_words():
    text = v.alignment_reading(*PEAKED)
    assert text.startswith("So most rows put most of their weight on one column")
    assert "not the last token" in text and "do not say whether" in text
    assert not any(w in text for w in ALIGNS) and "leans on the summary" not in text
    summary = SUMMARY.format(v.alignment_summary(*PEAKED))
    assert "peak on one column in most rows" in summary


def test_alignment_reading_spread_claims_no_alignment_and_no_uniformity():
    text = v.alignment_reading(*SPREAD)
    assert text.startswith("So these weights are diffuse")
    assert "neither close to uniform" in text and "no alignment by position or by sentence" \
        in text and not any(w in text for w in ALIGNS)
    summary = SUMMARY.format(v.alignment_summary(*SPREAD))
    assert "are diffuse, neither on the last token" in summary and \
        "no alignment by position or by sentence shows." in summary


@pytest.mark.parametrize("args", [UNIFORM_TILTED, TILT, LAST, BLOCKS, PEAKED, SPREAD])
def test_alignment_sentences_are_well_formed_in_place(args):
    reading = READING.format(v.alignment_reading(*args))
    assert reading.count("..") == 0 and "nan" not in reading
    summary = SUMMARY.format(v.alignment_summary(*args))
    assert summary.endswith(".") and not summary.endswith("..")


def test_every_alignment_kind_is_covered():
    kinds = {v.alignment_kind(*a) for a in (UNIFORM_TILTED, TILT, LAST, BLOCKS, PEAKED, SPREAD)}
    assert kinds == {"uniform", "tilt", "last", "blocks", "peaked", "spread"}


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
    (300.0, ["at about 300 tokens", "sooner than the count", "takes longer"]),
    (2400.0, ["at about 2,400 tokens", "sooner than the count"]),
    (5000.0, ["at about 5,000 tokens", "about where the count puts it"]),
    (20000.0, ["at about 20,000 tokens", "later than the count", "takes less time"]),
    (None, ["no positive length"]),
])
def test_crossover_reading_each_outcome_of_a_point(by_clock, words):
    text = v.crossover_reading(7200.0, by_clock)
    for w in words:
        assert w in text, (w, text)
    assert "intervals" not in text and "extrapolation" not in text


@pytest.mark.parametrize("earliest, by_clock, latest, words, absent", [
    # the page's case on one build: a range beyond the timed lengths, all of it before the count
    (310.0, 342.0, 930.0, ["at about 342 tokens (from 310 to 930", "95 % intervals",
                           "beyond the longest source timed (90 tokens)", "extrapolation",
                           "even the latest of these comes sooner"], ["times sooner"]),
    (310.0, 342.0, float("inf"), ["with no upper end", "too wide"], ["even the latest"]),
    (300.0, 2000.0, 9000.0, ["too wide"], ["even the latest", "even the earliest",
                                           "about where the count puts it"]),
    (4000.0, 5000.0, 9000.0, ["about where the count puts it"], ["too wide"]),
    (15000.0, 20000.0, 30000.0, ["even the earliest of these comes later"], ["too wide"]),
    (60.0, 342.0, 930.0, ["from 60 to 930"], ["beyond the longest", "extrapolation"]),
])
def test_crossover_reading_gives_the_range_of_the_intervals(earliest, by_clock, latest, words,
                                                            absent):
    text = v.crossover_reading(7200.0, by_clock, earliest, latest, longest_timed=90)
    for w in words:
        assert w in text, (w, text)
    for w in absent:
        assert w not in text, (w, text)
    assert not text.endswith(".")


def test_crossover_reading_refuses_a_range_around_the_wrong_point():
    with pytest.raises(ValueError, match="earliest"):
        v.crossover_reading(7200.0, 300.0, 400.0, 900.0)


@pytest.mark.parametrize("by_count, by_clock", [(0.0, 10.0), (100.0, -5.0), (100.0, 0.0),
                                                (float("inf"), 10.0)])
def test_crossover_reading_refuses_lengths_that_are_not_positive(by_count, by_clock):
    with pytest.raises(ValueError):
        v.crossover_reading(by_count, by_clock)

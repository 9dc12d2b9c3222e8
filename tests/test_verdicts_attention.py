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
    (0.5, 3.0, "the attention copy scores higher on the long inputs; which of its differences"),
    (-3.0, -0.5, "the attention copy scores lower on the long inputs; which of its differences"),
    (-1.0, 1.0, "cannot be told apart"),
    (0.0, 1.0, "cannot be told apart"),  # an end on zero: zero is in the interval
])
def test_long_input_conclusion(lo, hi, words):
    text = v.long_input_conclusion(lo, hi)
    assert words in text
    # no outcome names a cause that nothing measures: attention adds a path to every source
    # state (it does not remove the bottleneck), and the new layer's cost is not measured
    for claim in ("removing the bottleneck", "removal predicts", "cost of a new layer",
                  "random weights"):
        assert claim not in text, (claim, text)


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


# A mean peak of at least half says nothing of how many rows are peaked: no "most rows put most of
# their weight" may come out of it.
ROWS_CLAIM = ("most rows put most", "peak on one column in most rows", "most of a row's weight")


def test_alignment_reading_peaked_on_last_token_names_the_summary_without_overclaiming():
    text = v.alignment_reading(*LAST)
    assert text.startswith("So a row's strongest column holds on average at least half of its "
                           "weight")
    assert "in most rows that column is the last source token" in text
    assert "the summary its decoder was trained to read" in text
    assert "no word alignment" in text and "whatever word" not in text
    assert not any(w in text for w in ALIGNS + ROWS_CLAIM)
    summary = SUMMARY.format(v.alignment_summary(*LAST))
    assert "hold on average at least half of a row's weight on its strongest column, which is " \
        "the last source token in most rows: no word alignment shows." in summary
    assert not any(w in summary for w in ROWS_CLAIM)


def test_alignment_reading_blocks_says_it_aligns_by_sentence_and_no_finer():
    text = v.alignment_reading(*BLOCKS)
    assert text.startswith("So the copy aligns by sentence")
    assert "15 points" in text and "sentence being translated" in text
    assert "do not say whether, within a sentence" in text and "not learned" not in text
    summary = SUMMARY.format(v.alignment_summary(*BLOCKS))
    assert "follow the joined sentences in order" in summary and "nothing finer." in summary


def test_alignment_reading_peaked_elsewhere_does_not_claim_the_right_words():
    text = v.alignment_reading(*PEAKED)
    assert text.startswith("So a row's strongest column holds on average at least half of its "
                           "weight")
    assert "not the last token" in text and "do not say whether" in text
    assert not any(w in text for w in ALIGNS + ROWS_CLAIM) and "summary" not in text
    summary = SUMMARY.format(v.alignment_summary(*PEAKED))
    assert "at least half of a row's weight on its strongest column, but that column is not the " \
        "last token in most rows, and the rows do not follow the sentences in order" in summary
    assert not any(w in summary for w in ROWS_CLAIM)


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
    (310.0, 342.0, 930.0, ["at about 342 tokens (at the ends of the two slopes' 95 % "
                           "intervals, from 310 to 930 tokens), beyond the longest source timed "
                           "(90 tokens)", "extrapolation",
                           "even the latest of these comes sooner"], ["times sooner"]),
    # an end that never crosses: the range has no upper end, and reads so (no "inf", no "to")
    (310.0, 342.0, float("inf"), ["(at the ends of the two slopes' 95 % intervals, from 310 "
                                  "tokens upward, with no upper end), beyond", "too wide"],
     ["even the latest", "inf", "to with"]),
    (108.0, 415.0, float("inf"), ["at about 415 tokens (at the ends of the two slopes' 95 % "
                                  "intervals, from 108 tokens upward, with no upper end), beyond "
                                  "the longest source timed (90 tokens)"], ["inf"]),
    (300.0, 2000.0, 9000.0, ["too wide"], ["even the latest", "even the earliest",
                                           "about where the count puts it"]),
    (4000.0, 5000.0, 9000.0, ["about where the count puts it"], ["too wide"]),
    (15000.0, 20000.0, 30000.0, ["even the earliest of these comes later"], ["too wide"]),
    (60.0, 342.0, 930.0, ["from 60 to 930 tokens)"], ["beyond the longest", "extrapolation"]),
    (60.0, 342.0, float("inf"), ["from 60 tokens upward, with no upper end)"],
     ["beyond the longest", "inf"]),
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


@pytest.mark.parametrize("earliest, latest, text", [
    (108.0, 930.4, "from 108 to 930 tokens"),
    (108.0, float("inf"), "from 108 tokens upward, with no upper end"),
    (1200.0, 1200.0, "from 1,200 to 1,200 tokens"),
])
def test_length_range_never_prints_inf(earliest, latest, text):
    assert v.length_range(earliest, latest) == text


@pytest.mark.parametrize("earliest, latest", [(900.0, 100.0), (float("inf"), float("inf")),
                                              (-1.0, 5.0), (1.0, float("nan"))])
def test_length_range_refuses_a_range_that_is_not_one(earliest, latest):
    with pytest.raises(ValueError):
        v.length_range(earliest, latest)


# --- the toy's loss curves: window means, not two single points ---------------------------------


def test_last_windows_are_means_of_the_last_two_fifths_by_hand():
    values = [9.0] * 12 + [2.0, 4.0, 6.0, 0.0] + [1.0, 2.0, 0.0, 3.0]  # 20 points: 4 a fifth
    assert v.last_windows(values, share=0.2) == (pytest.approx(3.0), pytest.approx(1.5))
    # a single spike at the end moves a mean of many points far less than the point itself
    noisy = [1.0] * 80 + [2.0] + [1.0] * 19
    before, last = v.last_windows(noisy)
    assert before == 1.0 and last == pytest.approx(1.05)


@pytest.mark.parametrize("values, share", [([1.0], 0.2), ([], 0.2), ([1.0] * 10, 0.0),
                                           ([1.0] * 10, 0.6)])
def test_last_windows_refuse_too_few_points_or_a_bad_share(values, share):
    with pytest.raises(ValueError):
        v.last_windows(values, share)


@pytest.mark.parametrize("before, after, text", [
    (0.50, 0.44, "12 % lower than"),
    (0.50, 0.53, "6 % higher than"),
    (0.50, 0.503, "within 1 % of"),
    (0.50, 0.4951, "within 1 % of"),
])
def test_relative_change_follows_the_sign(before, after, text):
    assert v.relative_change(before, after) == text


def test_relative_change_refuses_a_base_that_is_not_positive():
    with pytest.raises(ValueError):
        v.relative_change(0.0, 1.0)


# --- the offsets of the reversal model's rows -----------------------------------------------------


@pytest.mark.parametrize("offsets, text", [
    ([1] * 19, "all 19 have offset +1"),
    ([1] * 12 + [0] * 7, "12 of 19 have offset +1 and 7 offset +0"),
    ([0] * 12 + [1] * 5 + [3, -2], "12 of 19 have offset +0, 5 offset +1 and 2 other offsets"),
    ([1] * 12 + [0] * 6 + [-4], "12 of 19 have offset +1, 6 offset +0 and 1 another offset"),
    ([-1], "the one row has offset -1"),
    ([1, 0], "1 of 2 has offset +0 and 1 offset +1"),
])
def test_offset_tally_counts_every_row(offsets, text):
    assert v.offset_tally(offsets) == text
    assert " and 0 " not in text and "0 offset" not in text.replace("+0", "")


def test_offset_tally_refuses_no_rows():
    with pytest.raises(ValueError):
        v.offset_tally([])


# --- the length buckets of joined sources and the number of sentences joined --------------------

JOINED = [("1–8", {1: 96, 2: 2}), ("9–16", {2: 94, 3: 21}), ("17–24", {2: 1, 3: 74, 4: 59}),
          ("25–32", {4: 36, 5: 79, 6: 10}), ("≥ 33", {5: 16, 6: 85})]  # one build's table


def test_parts_by_length_names_the_confound_when_the_number_grows_with_every_bucket():
    text = v.parts_by_length(JOINED)
    assert text.startswith("the most common number of joined sentences grows from every bucket")
    assert "1–8 tokens: 1 sentence in 96 of 98 sources; 9–16 tokens: 2 sentences in 94 of 115 " \
        "sources" in text and "≥ 33 tokens: 6 sentences in 85 of 101 sources" in text
    assert "cannot tell the two apart" in text


def test_parts_by_length_says_when_the_buckets_do_not_follow_the_number():
    flat = [("1–8", {1: 10}), ("9–16", {1: 6, 2: 4}), ("17–24", {3: 5})]
    text = v.parts_by_length(flat)
    assert "does not grow from every bucket" in text and "cannot tell" not in text
    assert "1–8 tokens: 1 sentence in all 10 sources" in text
    tie = v.parts_by_length([("a", {1: 3, 2: 3}), ("b", {2: 5})])  # a tie goes to the fewer
    assert "a tokens: 1 sentence in 3 of 6 sources" in tie and "grows" in tie


@pytest.mark.parametrize("table", [[("1–8", {1: 3})], [("a", {1: 2}), ("b", {})],
                                   [("a", {1: 2}), ("b", {2: 0})]])
def test_parts_by_length_refuses_a_table_without_two_filled_buckets(table):
    with pytest.raises(ValueError):
        v.parts_by_length(table)

"""lib.course.verdicts.attention: every outcome of the attention chapter's measurements gets
words that match it (the toy's curves and reversals, the joined-input fine-tuning, the alignment
of its weights, and the cost of a step)."""

from __future__ import annotations

import math

import pytest

from lib.course.verdicts import attention as v
from lib.experiments.alignment import alignment_kind


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


ZERO = "Even at S = 0 the attention step's fitted time is "


@pytest.mark.parametrize("fixed, at_zero, text", [
    # the build's: 0.57 ms and 0.62 ms, where A·H adds 1.6 % on paper
    (0.573, 0.619, f"{ZERO}8 % higher than the fixed step's median, where A·H adds 1.6 % on paper"
                   f": each extra call has a cost of its own"),
    (0.573, 0.5773, f"{ZERO}within 1 % of the fixed step's median, where A·H adds 1.6 % on paper"
                    f", about what the count says"),
    (0.573, 0.588, f"{ZERO}3 % higher than the fixed step's median, where A·H adds 1.6 % on paper"
                   f", about what the count says"),  # under twice the count: no cost of its own
    (0.573, 0.54, f"{ZERO}6 % lower than the fixed step's median, where A·H adds 1.6 % on paper: "
                  f"a fit below the step it extends, so the timing's noise hides it"),
])
def test_at_zero_reading_names_a_cost_of_its_own_only_beyond_the_count(fixed, at_zero, text):
    assert v.at_zero_reading(fixed, at_zero, 0.016) == text
    assert len(text.split()) <= 40


def test_at_zero_reading_refuses_bad_inputs():
    with pytest.raises(ValueError):
        v.at_zero_reading(0.0, 0.5, 0.016)
    with pytest.raises(ValueError, match="share"):
        v.at_zero_reading(0.5, 0.6, 1.6)  # a percentage, not a share


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


@pytest.mark.parametrize("copied, after, words", [
    (0.9, 0.05, "on the anti-diagonal itself"),
    (0.06, 0.89, "one column right of the anti-diagonal"),
    (0.3, 0.3, "spread over the anti-diagonal and the column right"),
    (0.1, 0.2, "mostly away from the anti-diagonal"),
    (0.5, 0.5, "on the anti-diagonal itself"),
])
def test_anti_diagonal_names_where_the_weight_lies(copied, after, words):
    assert v.anti_diagonal(copied, after).startswith(words)


def test_anti_diagonal_refuses_shares_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.anti_diagonal(89.0, 6.0)  # percentages, not shares


FIXED, ATTENTION = [8.9, 8.9, 9.0, 6.5, 7.0], [19.2, 27.3, 28.5, 28.6, 27.0]  # a build's


@pytest.mark.parametrize("growth, robust, words", [
    ((4.3, 0.8, 7.4), (2.6, -1.2, 6.2), "The lead grows with length (+4.3, 95 % interval +0.8 to "
     "+7.4), but not beyond the noise without the sources of 1–8 tokens (+2.6, -1.2 to +6.2). So "
     "the lead, not its growth, is the finding"),  # the build's
    ((4.3, 0.8, 7.4), (3.0, 0.5, 6.0), "and still does without the sources of 1–8 tokens"),
    ((-4.3, -7.4, -0.9), (2.6, -1.2, 6.2), "The lead shrinks with length"),
    ((2.0, -1.0, 5.0), (3.0, 0.5, 6.0), "Whether the lead grows with length is within the noise"),
    ((0.0, 0.0, 3.0), (3.0, 0.5, 6.0), "within the noise (+0.0, 95 % interval +0.0 to +3.0)"),
])
def test_growth_finding_reads_both_growth_intervals(growth, robust, words):
    text = v.growth_finding(growth, robust)
    assert words in text, text
    assert len(text.split()) <= 40
    if growth[1] <= 0:  # no growth to test for robustness: the second interval is not named
        assert f"{robust[1]:+.1f}" not in text


@pytest.mark.parametrize("growth, robust, phrase", [
    ((4.3, 0.8, 7.4), (2.6, -1.2, 6.2), "does not robustly grow with length"),  # the build's
    ((4.3, 0.8, 7.4), (3.0, 0.5, 6.0), "grows with length"),
    ((2.0, -1.0, 5.0), (3.0, 0.5, 6.0), "does not clearly grow with length"),
    ((-4.3, -7.4, -0.9), (2.6, -1.2, 6.2), "shrinks with length"),
])
def test_growth_phrase_agrees_with_the_finding(growth, robust, phrase):
    assert v.growth_phrase(growth, robust) == phrase
    kind = v.growth_kind(growth, robust)
    finding = v.growth_finding(growth, robust)
    assert ("not beyond the noise" in finding) == (kind == "fragile")
    assert ("still does" in finding) == (kind == "robust")


def test_lead_reading_counts_the_buckets_where_attention_is_ahead():
    assert v.lead_reading(FIXED, ATTENTION, 16.7, 21.0) == (
        "Attention is ahead in every length bucket, by +16.7 BLEU on short sources and +21.0 on "
        "long ones")
    assert v.lead_reading(FIXED, [19.2, 8.0, 28.5, 6.0, 27.0], 16.7, 21.0).startswith(
        "Attention is ahead in 3 of the 5 length buckets")
    with pytest.raises(ValueError, match="one BLEU per length bucket"):
        v.lead_reading(FIXED, ATTENTION[:4], 16.7, 21.0)


def test_growth_finding_refuses_a_growth_outside_its_interval():
    with pytest.raises(ValueError, match="must lie in its interval"):
        v.growth_finding((11.0, 12.0, 13.0), (2.0, 1.0, 3.0))
    with pytest.raises(ValueError, match="must lie in its interval"):
        v.growth_finding((2.0, 1.0, 3.0), (5.0, 0.0, 1.0))


@pytest.mark.parametrize("row, words", [
    ([0.1, 0.62, 0.28], 'peaks on the state at "car" (62 %)'),
    ([0.34, 0.3, 0.28, 0.08], 'spreads over the states at "red", "car" and "."'),  # a near-tie
    ([0.45, 0.19, 0.18, 0.18], 'peaks weakly on the state at "red" (45 %)'),
    # the build's row writing "voiture": a state, not a word, since the state at "red" has not
    # read "car"
    ([0.02, 0.05, 0.08, 0.53, 0.2, 0.12], 'peaks on the state at "red" (53 %)'),
])
def test_peak_phrase_says_when_a_row_has_no_clear_peak(row, words):
    tokens = (["I", "have", "a", "red", "car", "."] if len(row) == 6
              else ["red", "car", ".", "x"][:len(row)])
    assert v.peak_phrase(tokens, row) == words


def test_peak_phrase_refuses_rows_that_are_not_weights():
    with pytest.raises(ValueError, match="one weight per source token"):
        v.peak_phrase(["a"], [0.5, 0.5])
    with pytest.raises(ValueError, match="sums to 1"):
        v.peak_phrase(["a", "b"], [62.0, 38.0])  # percentages


@pytest.mark.parametrize("args, words", [
    ((0.3, 94, 0.9), "hits the copied word in 30 % of these rows; where it misses, the model finds "
     "the word in 85 of 94 rows, which position alone does not explain"),
    ((0.3, 94, 0.2), "finds the word in 19 of 94 rows, so position explains much of it"),
    ((1.0, 0, math.nan), "in 100 % of these rows, so position alone explains them"),
])
def test_copy_control_compares_the_model_with_reading_by_position(args, words):
    text = v.copy_control(*args)
    assert text.endswith(words) and len(text.split()) <= 40


def test_copy_control_refuses_percentages():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.copy_control(30.0, 94, 0.9)
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.copy_control(0.3, 94, 90.0)


@pytest.mark.parametrize("on, after, words", [
    (0.85, 0.10, "the copied word's own column in most rows"),
    (0.20, 0.70, "the column just after the copied word"),
    (0.30, 0.30, "the copied word's column or the one after it in most rows, neither alone"),
    (0.10, 0.20, "elsewhere"),
])
def test_copy_reading_names_where_the_copying_rows_look(on, after, words):
    assert v.copy_reading(on, after).startswith(words)


def test_copy_reading_refuses_percentages_and_impossible_shares():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.copy_reading(85.0, 10.0)
    with pytest.raises(ValueError, match="not both"):
        v.copy_reading(0.7, 0.6)


# --- the alignment of the attention model, measured over all joined test sources ----------------
# alignment_kind (lib.experiments.alignment) decides which of the sentences below is written


NAN = float("nan")


# (entropy, peak, last, block, uniform_block, current, chance_current)
UNIFORM_TILTED = (0.97, 0.08, 0.63, 0.50, 0.45, 0.30, 0.40)


TILT = (0.84, 0.14, 0.64, 0.50, 0.305, 0.28, 0.40)  # the page's numbers on one build


LAST = (0.40, 0.70, 0.80, 0.95, 0.40, 0.30, 0.40)


BLOCKS = (0.60, 0.30, 0.20, 0.80, 0.40, 0.80, 0.40)


PEAKED = (0.40, 0.70, 0.20, 0.80, 0.40, 0.30, 0.40)  # weight on one sentence, the wrong one


SPREAD = (0.80, 0.20, 0.20, 0.50, 0.40, 0.50, 0.40)


LAST_PART = (0.80, 0.20, 0.40, 0.60, 0.40, 0.30, 0.253, 0.738)


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
    (LAST_PART, "last part"),  # the strongest number of the fine-tuned copies' pages
    ((0.60, 0.2, 0.20, 0.80, 0.40, 0.30, 0.35, 0.50), "last part"),  # exactly the margin
    ((0.60, 0.2, 0.20, 0.80, 0.40, 0.30, 0.36, 0.50), "spread"),  # one point short of it
    ((0.60, 0.7, 0.20, 0.80, 0.40, 0.80, 0.40, 0.90), "blocks"),  # blocks decide first
])
def test_alignment_kind_each_outcome(args, kind):
    assert alignment_kind(*args) == kind


@pytest.mark.parametrize("args", [(1.2, 0.5, 0.5, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 1.5, 0.5, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, -0.1, 0.5, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 50.0, 0.4, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, -1.0, 0.5, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, 0.4, 2.0, 0.5),
                                  (0.5, 0.5, 0.5, 0.5, 0.4, 0.5, -0.5),
                                  (0.5, 0.5, 0.5, 0.5, 0.4, 0.5, 0.5, 73.8)])
def test_alignment_kind_refuses_values_that_are_not_shares(args):
    with pytest.raises(ValueError, match="share"):
        alignment_kind(*args)


# The page's sentences around the verdicts, with each outcome in its place.
READING = "where a sentence drawn at random would be in 40 %. {}."


ALIGNS = ("aligns by sentence", "aligns in blocks", "can be read for which source words")


def test_alignment_reading_near_uniform_says_it_did_not_learn_to_align():
    text = v.alignment_reading(*UNIFORM_TILTED)
    assert text == ("So these weights are close to uniform (an entropy of at least 90 % of log "
                    "S): in this budget the model has not learned to align; they tilt towards the "
                    "last source token, the summary h_S")
    untilted = v.alignment_reading(0.97, 0.08, 0.10, 0.50, 0.45, 0.3, 0.4)
    assert untilted == ("So these weights are close to uniform (an entropy of at least 90 % of "
                        "log S): in this budget the model has not learned to align")


def test_alignment_reading_diffuse_tilt_says_the_peak_is_weak_not_a_read_back():
    text = v.alignment_reading(*TILT)
    assert text == ("So these weights are diffuse (a row's peak holds under half its weight on "
                    "average), tilted to the last source token in most rows: each c_t is a "
                    "spread-out average, not the summary h_S; no word alignment shows")


# A mean peak of at least half says nothing of how many rows are peaked: no "most rows put most of
# their weight" may come out of it.
ROWS_CLAIM = ("most rows put most", "peak on one column in most rows", "most of a row's weight")


def test_alignment_reading_peaked_on_last_token_names_the_summary_without_overclaiming():
    text = v.alignment_reading(*LAST)
    assert text == ("So a row's strongest column holds on average at least half of its weight, "
                    "and in most rows that column is the last source token, the summary its "
                    "decoder was trained to read: no word alignment shows")
    assert not any(w in text for w in ALIGNS + ROWS_CLAIM)


def test_alignment_reading_blocks_says_it_aligns_by_sentence_and_no_finer():
    text = v.alignment_reading(*BLOCKS)
    assert text == ("So the model aligns by sentence: the sentence being translated draws the "
                    "most weight in 80 % of rows, and the top sentence holds 80 % of a row's "
                    "weight against 40 % for uniform weights")


def test_alignment_reading_peaked_elsewhere_does_not_claim_the_right_words():
    text = v.alignment_reading(*PEAKED)
    assert text == ("So a row's strongest column holds on average at least half its weight, yet "
                    "is not the last token in most rows, nor do rows follow the sentences in "
                    "order: what it aligns with, these measures do not say")
    assert not any(w in text for w in ALIGNS + ROWS_CLAIM)


def test_alignment_reading_spread_claims_no_alignment_and_no_uniformity():
    text = v.alignment_reading(*SPREAD)
    assert text == ("So these weights are diffuse (a row's peak holds under half its weight on "
                    "average) but not uniform, their peak not mostly on the last token, nor "
                    "following the sentences in order: no alignment by position or sentence "
                    "shows")


def test_alignment_reading_last_part_names_the_last_sentence_not_an_alignment():
    text = v.alignment_reading(*LAST_PART)
    assert "the source's last one, well above chance, not the one being translated" in text


@pytest.mark.parametrize("args", [UNIFORM_TILTED, TILT, LAST, BLOCKS, PEAKED, SPREAD, LAST_PART])
def test_alignment_sentences_are_well_formed_in_place(args):
    reading = READING.format(v.alignment_reading(*args))
    assert reading.count("..") == 0 and "nan" not in reading


def test_every_alignment_kind_is_covered():
    kinds = {alignment_kind(*a) for a in (UNIFORM_TILTED, TILT, LAST, BLOCKS, PEAKED, SPREAD,
                                          LAST_PART)}
    assert kinds == {"uniform", "tilt", "last", "blocks", "peaked", "spread", "last part"}


# --- what a decoder step costs against the source length, and where the two lines cross ---------


def test_growth_reading_claims_growth_only_when_the_interval_is_above_zero():
    assert v.growth_reading(101.6, 55.0, 137.0, "the attention step") == (
        "the attention step grows by 102 µs per source token (95 % interval 55 to 137)")
    assert v.growth_reading(6.8, -36.4, 28.2, "the fixed-vector step") == (
        "the fixed-vector step does not change measurably with the source length (+6.8 µs per "
        "source token, 95 % interval -36 to +28)")
    assert v.growth_reading(-3.0, -4.0, -2.5, "x").startswith("x shrinks by 3.0 µs per source "
                                                              "token (95 % interval 2.5 to 4.0)")
    assert "0.33 ms per" in v.growth_reading(0.33, 0.2, 0.5, "y", unit="ms per")
    assert v.growth_reading(15.2, 14.8, 15.4, "z").endswith("(95 % interval 14.8 to 15.4)")
    with pytest.raises(ValueError, match="must lie in its interval"):
        v.growth_reading(5.0, 6.0, 7.0, "x")


def test_flat_step_reading_calls_a_slope_drift():
    assert v.flat_step_reading(-0.21, -0.38, -0.05).startswith(
        "The fixed-vector step never reads S, yet its line slopes (-0.21 µs per source token, "
        "95 % interval -0.38 to -0.05): an artefact of the timing")
    assert v.flat_step_reading(0.1, -0.2, 0.4) == (
        "The fixed-vector step, which never reads S, shows no slope (+0.10 µs per source token, "
        "95 % interval -0.20 to +0.40)")
    with pytest.raises(ValueError, match="must lie in its interval"):
        v.flat_step_reading(1.0, 0.0, 0.5)


def test_against_count_follows_the_ratio_and_the_interval():
    far = v.against_count(100.0, 55.0, 137.0, 3.3)
    assert far == ("17 to 42 times the 3.3 µs per source token that the count predicts, far more "
                   "than the count")
    assert v.against_count(4.0, 2.0, 6.0, 3.3) == (
        "0.61 to 1.8 times the 3.3 µs per source token that the count predicts, in line with the "
        "count")
    # the interval reaches 2x the prediction: not "far more", and the slope (2.4x) not in line
    assert v.against_count(8.0, 6.6, 9.0, 3.3) == (
        "2.0 to 2.7 times the 3.3 µs per source token that the count predicts, too wide a range "
        "on this machine to rule the count out")
    # a build's numbers: 22x with an interval from 1.0 to 39 must not read "in line"
    wide = v.against_count(25.1, 1.0, 38.7, 1.15)
    assert "in line" not in wide and wide.startswith("0.87 to 34 times") and "too wide" in wide
    assert v.against_count(0.5, 0.2, 1.0, 3.3).endswith("less than the count")
    assert v.against_count(5.0, -1.0, 9.0, 3.3).startswith(
        "not distinguishable from zero on this machine, so it neither confirms nor refutes the "
        "3.3 µs")
    assert v.against_count(-5.0, -9.0, -1.0, 3.3).startswith("negative, which no count")
    with pytest.raises(ValueError, match="positive"):
        v.against_count(1.0, 0.5, 2.0, 0.0)


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


@pytest.mark.parametrize("by_clock, text", [
    (300.0, "at about 300 tokens; even the latest comes sooner than the count says: here "
            "attention's multiply-adds are slower"),
    (2400.0, "at about 2,400 tokens; even the latest comes sooner than the count says: here "
             "attention's multiply-adds are slower"),
    (5000.0, "at about 5,000 tokens, about where the count puts it"),
    (20000.0, "at about 20,000 tokens; even the earliest comes later than the count says: here "
              "attention's multiply-adds are faster"),
    (None, "the timings above give no positive length to compare with it: the attention step's "
           "growth with S is not measurable, or it costs twice the fixed step already for a "
           "short source"),
])
def test_crossover_reading_each_outcome_of_a_point(by_clock, text):
    assert v.crossover_reading(7200.0, by_clock) == text


ENDS = "across the slopes' 95 % intervals"
SOONER = "even the latest comes sooner than the count says: here attention's multiply-adds are " \
         "slower"
LATER = "even the earliest comes later than the count says: here attention's multiply-adds are " \
        "faster"
WIDE = "too wide a range to place against the count's crossing"


@pytest.mark.parametrize("earliest, by_clock, latest, text", [
    # the page's case on one build: a range beyond the timed lengths, all of it before the count
    (310.0, 342.0, 930.0, f"at about 342 tokens (from 310 to 930 tokens {ENDS}), beyond the 90 "
                          f"tokens timed; {SOONER}"),
    # an end that never crosses: the range has no upper end, and reads so (no "inf")
    (310.0, 342.0, float("inf"), f"at about 342 tokens (from 310 tokens upward, with no upper "
                                 f"end {ENDS}), beyond the 90 tokens timed: {WIDE}"),
    (300.0, 2000.0, 9000.0, f"at about 2,000 tokens (from 300 to 9,000 tokens {ENDS}), beyond "
                            f"the 90 tokens timed: {WIDE}"),
    (4000.0, 5000.0, 9000.0, f"at about 5,000 tokens (from 4,000 to 9,000 tokens {ENDS}), beyond "
                             f"the 90 tokens timed, about where the count puts it"),
    (15000.0, 20000.0, 30000.0, f"at about 20,000 tokens (from 15,000 to 30,000 tokens {ENDS}), "
                                f"beyond the 90 tokens timed; {LATER}"),
    (60.0, 342.0, 930.0, f"at about 342 tokens (from 60 to 930 tokens {ENDS}); {SOONER}"),
])
def test_crossover_reading_gives_the_range_of_the_intervals(earliest, by_clock, latest, text):
    assert v.crossover_reading(7200.0, by_clock, earliest, latest, longest_timed=90) == text


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


def test_size_verdict_follows_the_breaking_lengths():
    text = v.size_verdict({32: 8, 64: 13, 128: 18}, {32: 24, 64: 24}, longest=24)
    assert "sequences exactly grows with its state (8, 13, 18 digits at 32, 64, 128 units)" in text
    assert "attention's reaches the longest tested, 24, at every size tried" in text
    assert len(text.split()) <= 40
    flat = v.size_verdict({32: 9, 64: 9}, {32: 20, 64: 24}, longest=24)
    assert "does not grow" in flat and "falls short of the longest tested at 32 units (20)" in flat


def test_size_verdict_refuses_lengths_outside_the_test():
    with pytest.raises(ValueError, match="lengths from 0 to 24"):
        v.size_verdict({32: 30}, {32: 24}, longest=24)


def test_reading_order_says_whether_any_row_goes_back():
    forward = v.reading_order([[0, 1, 2, 3, 5, 5], [0, 2, 3, 3]])  # the build's two maps
    assert forward.startswith("In both maps the rows' peaks never move back to an earlier "
                              "column")  # a peak may stay on its column: 5, 5 and 3, 3
    assert v.reading_order([[0, 4, 3], [0, 2, 1], [1, 0]]).startswith(
        "In all 3 maps the rows' peaks go back to an earlier source column at least once")
    mixed = v.reading_order([[0, 4, 3], [0, 1, 2]])
    assert mixed.startswith("The rows' peaks go back") and "in 1 of the 2 maps" in mixed
    assert "both" not in mixed and mixed.endswith("in 1 of the 2 maps and never in the others")
    with pytest.raises(ValueError, match="one non-empty list"):
        v.reading_order([[]])


def test_reference_size_pair_reads_the_longest_interval_first():
    # bench/results/from-scratch-gpu.json's 2 x 512 pair: both intervals include zero
    tied = v.reference_size_pair((0.78, -0.19, 1.72), (0.12, -1.47, 1.71))
    assert tied == ("attention minus fixed vector is +0.8 BLEU on all joined sources (95 % "
                    "interval -0.2 to +1.7) and +0.1 on the longest (-1.5 to +1.7): not told "
                    "apart, even on the longest sources")
    assert len(tied.split()) <= 40
    # its 1 x 128 pair: attention ahead on the longest sources
    assert v.reference_size_pair((20.0, 18.6, 21.3), (21.2, 18.9, 23.8)).endswith(
        ": attention leads on long sources, so one vector limits even this size")
    assert v.reference_size_pair((-3.0, -5.0, -1.0), (-4.0, -6.0, -2.0)).endswith(
        ": the fixed vector leads on long sources")
    assert v.reference_size_pair((2.0, 0.5, 3.5), (1.0, -1.0, 3.0)).endswith(
        ": attention leads overall, not on the longest sources")
    assert v.reference_size_pair((-2.0, -3.5, -0.5), (0.0, -2.0, 2.0)).endswith(
        ": the fixed vector leads overall, not on the longest sources")
    with pytest.raises(ValueError, match="low end"):
        v.reference_size_pair((0.0, 1.0, -1.0), (0.0, -1.0, 1.0))

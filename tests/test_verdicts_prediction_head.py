"""lib.course.verdicts.prediction_head: the sweep's evidence on label smoothing, its uniform
term, unsure steps, the drawn words of a sampled softmax and calibration against sampling noise,
in words that follow the numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import prediction_head as v


@pytest.mark.parametrize("measured, start", [(10.6, "1.4 nats above the 9.2"),
                                             (8.0, "1.2 nats below the 9.2"),
                                             (9.3, "within 0.25 nats of the 9.2")])
def test_smoothing_gap_follows_the_sign_of_the_gap(measured, start):
    assert v.smoothing_gap(measured, 9.2).startswith(start)
    assert v.smoothing_gap(10.6, 9.2) == (
        "1.4 nats above the 9.2 of a model matching the smoothed target exactly. On "
        "(geometric) average a column gets 4.1 times less than ε/n, so the model leaves the "
        "other words less than the target does, or spreads it unevenly")
    for measured in (10.6, 8.0, 9.3):  # a glued sentence: at most 40 words
        assert len(v.smoothing_gap(measured, 9.2).split()) <= 40


# the sweep's own seed runs: 36.29, 35.61 and 35.95 BLEU, standard deviation 0.34, so a
# difference of two runs has about 0.48 and a gain counts beyond 0.96
SEEDS = [36.29, 35.61, 35.95]
HEAD = ("3 seeds give a standard deviation of 0.34 BLEU, so about 0.48 for a difference of two "
        "runs; ")


@pytest.mark.parametrize("gains, words", [
    # the sweep's own pairs: 2.06 and 0.86 BLEU
    ([2.06, 0.86], HEAD + "1 of the 2 gains is over twice that, the other, 0.86, is not: weak "
                          "evidence that smoothing helps"),
    ([2.0, 1.6], HEAD + "each of the 2 gains is over twice that: evidence that smoothing helps, "
                        "not a measured size of its effect"),
    ([2.0, 0.3, 0.2], HEAD + "1 of the 3 gains is over twice that, the others, 0.30 and 0.20, "
                             "are not: weak evidence that smoothing helps"),
    ([0.9, 0.5], HEAD + "no gain is over twice that: the sweep does not show that smoothing "
                        "helps"),
    ([2.0, -1.2], HEAD + "in 1 of the 2 pairs smoothing lowered BLEU by over twice that: the "
                         "sweep does not show that it helps")])
def test_sweep_gains_counts_a_gain_only_beyond_the_noise_of_a_difference(gains, words):
    assert v.sweep_gains(gains, SEEDS) == words
    assert len(words.split()) <= 40


def test_sweep_gains_weighs_a_difference_not_one_run():
    # 0.86 is more than the seeds' range (0.68) and their standard deviation (0.34), but not
    # more than twice the standard deviation of a difference of two runs (0.96)
    assert "the other, 0.86, is not" in v.sweep_gains([2.06, 0.86], SEEDS)
    # with z = 1 it counts
    assert "each of the 2 gains is over 1 times that" in v.sweep_gains([2.06, 0.86], SEEDS, z=1)


def test_sweep_gains_rejects_what_it_cannot_weigh():
    with pytest.raises(ValueError, match="two seeds"):
        v.sweep_gains([1.0], [36.0])
    with pytest.raises(ValueError, match="finite"):
        v.sweep_gains([float("nan")], [36.0, 35.0])


def test_two_way_choice_says_two_words_only_when_they_hold_most_of_it():
    text = v.two_way_choice("Tu", 0.45, "Vous", 0.44)
    assert "«Tu» gets 0.450 and «Vous» 0.440" in text and "89%" in text
    assert "choice between two words" in text
    spread = v.two_way_choice("il", 0.30, "elle", 0.20)
    assert "only 50% between them" in spread and "choice between two" not in spread
    # three decimals: a favourite picked as below even odds does not print as 0.50
    assert v.two_way_choice("vous", 0.4987, "tu", 0.4412).startswith(
        "«vous» gets 0.499 and «tu» 0.441: 94% of the probability")
    assert "«vous» gets 0.504 and «tu» 0.455: 96%" in v.two_way_choice("vous", 0.5044,
                                                                       "tu", 0.4554)
    with pytest.raises(ValueError):
        v.two_way_choice("a", 0.2, "b", 0.3)  # the second is more likely than the first


def test_timed_pads_says_whether_padding_is_in_the_ratio():
    assert v.timed_pads(0.0) == ("This batch has no pad positions, so none of that ratio comes "
                                 "from padding")
    assert v.timed_pads(41.2) == ("Part of that ratio comes from the batch's 41% of pad "
                                  "positions, which the full head, as in training, runs on and "
                                  "the shortlist skips")
    with pytest.raises(ValueError):
        v.timed_pads(120.0)


@pytest.mark.parametrize("lo, hi, optimum, words", [
    (0.90, 0.95, 0.9001, "the bar that holds that optimum, 0.9001, at its lower edge"),
    (0.85, 0.90, 0.8999, "the bar that holds that optimum, 0.8999, at its upper edge"),
    (0.85, 0.90, 0.8750, "the bar that holds that optimum, 0.8750"),
    (0.95, 1.00, 0.9001, "above that optimum, 0.9001"),
    (0.85, 0.90, 0.9001, "below that optimum, 0.9001")])
def test_fullest_bar_places_the_bar_against_the_optimum(lo, hi, optimum, words):
    assert v.fullest_bar(lo, hi, optimum) == words
    with pytest.raises(ValueError):
        v.fullest_bar(0.95, 0.90, 0.9)


@pytest.mark.parametrize("wrong, low, words", [
    (48, 43, "usually too low, but not always: here 48 of the 64 references are scored wrong, "
             "43 too low and 5 too high"),
    (10, 10, "too low: here 10 of the 64 references are scored wrong, all of them too low"),
    (10, 0, "too high: here 10 of the 64 references are scored wrong, all of them too high"),
    (10, 3, "more often too high than too low: here 10 of the 64 references are scored wrong, "
            "3 too low and 7 too high"),
    (10, 5, "as often too high as too low: here 10 of the 64 references are scored wrong, 5 too "
            "low and 5 too high"),
    (0, 0, "neither here: all 64 references are scored right")])
def test_wrong_scores_answers_too_high_or_too_low_from_the_counts(wrong, low, words):
    assert v.wrong_scores(wrong, low, 64) == words
    with pytest.raises(ValueError):
        v.wrong_scores(3, 4, 64)


def test_unsure_spread_names_unk_and_a_thin_spread():
    text = v.unsure_spread(["<unk>", "méjugé", "donné"], [0.03, 0.03, 0.02])
    assert text == ("its favourite words are «<unk>» 0.03, «méjugé» 0.03, «donné» 0.02, and the "
                    "3 most likely words hold 8% of the probability together; the favourite is "
                    "<unk>, the unknown-word token: the probability is spread thin")
    sure = v.unsure_spread(["chat", "chien"], [0.45, 0.40])
    assert "<unk>" not in sure and "spread thin" not in sure and "85%" in sure
    with pytest.raises(ValueError, match="sorted"):
        v.unsure_spread(["a", "b"], [0.1, 0.2])
    with pytest.raises(ValueError, match="one probability per word"):
        v.unsure_spread(["a"], [0.1, 0.2])


def test_calibration_noise_counts_a_gap_only_beyond_the_standard_error():
    # 0.31 vs 0.38 on 60 positions: SE = 0.06, gap 0.07 < 2 SE -> noise
    assert v.calibration_noise([(0.31, 0.38, 60)]).startswith("calibrated within sampling")
    # the same gap on 6,000 positions: SE = 0.006 -> under-confident
    assert v.calibration_noise([(0.31, 0.38, 6000)]).startswith("under-confident in every")
    assert v.calibration_noise([(0.9, 0.8, 1000)]).startswith("over-confident in every")
    mixed = v.calibration_noise([(0.31, 0.38, 6000), (0.91, 0.93, 300), (0.6, 0.4, 1000)])
    assert mixed == ("under-confident, beyond 2 standard errors, in the group of mean P(top) 0.31 "
                     "and over-confident in that of 0.60; within sampling noise in that of 0.91")
    two = v.calibration_noise([(0.9, 0.8, 1000), (0.5, 0.5, 10), (0.6, 0.6, 10)])
    assert two == ("over-confident, beyond 2 standard errors, in the group of mean P(top) 0.90; "
                   "within sampling noise in those of 0.50 and 0.60")
    with pytest.raises(ValueError):
        v.calibration_noise([])
    with pytest.raises(ValueError):
        v.calibration_noise([(0.5, 0.5, 0)])


@pytest.mark.parametrize("right, k, end", [(130, "3.0 standard errors more", "under-confident "
                                            "beyond sampling noise"),
                                           (70, "3.0 standard errors fewer", "over-confident "
                                            "beyond sampling noise"),
                                           (110, "1.0 standard errors more", "within sampling "
                                            "noise")])
def test_calibration_pooled_follows_the_count_against_its_spread(right, k, end):
    # 100 expected, variance 100: one standard error is 10 positions
    said = v.calibration_pooled(right, 100.0, 100.0, 400)
    assert k in said and said.endswith(end)
    assert f"right at {right} of the 400 positions" in said
    with pytest.raises(ValueError):
        v.calibration_pooled(1, 1.0, 0.0, 4)


@pytest.mark.parametrize("sampled, words", [
    (0.33, "the drawn words, standing in for the words outside the list, close most of the 0.060 "
           "nats between the list alone and all words (67%)"),
    (0.30, "the drawn words, standing in for the words outside the list, close only part of the "
           "0.060 nats between the list alone and all words (17%)"),
    (0.37, "0.020 nats above the loss over all words, nearer to it than the list alone, 0.060 "
           "below: the drawn words stand in for the words outside the list, with this draw's "
           "noise"),
    (0.25, "0.100 nats below the loss over all words, further than the list alone: this draw's "
           "words do not stand in for the words outside the list")])
def test_drawn_words_gap_measures_the_share_of_the_list_gap_they_close(sampled, words):
    assert v.drawn_words_gap(0.35, 0.29, sampled) == words
    assert len(words.split()) <= 40


def test_drawn_words_gap_needs_a_gap_and_a_list_below_all_words():
    assert v.drawn_words_gap(0.35, 0.35, 0.34) == ("the list alone already gives the loss over "
                                                  "all words")
    with pytest.raises(ValueError, match="cannot have a larger loss"):
        v.drawn_words_gap(0.35, 0.40, 0.35)
    with pytest.raises(ValueError, match="finite"):
        v.drawn_words_gap(float("nan"), 0.3, 0.3)


def test_calibration_table_counts_each_group_and_its_standard_error():
    top_p = [0.2, 0.4, 0.5, 0.7, 0.8, 0.9, 1.0]
    groups = [(0.3, 0.5), (0.6, 1.0), (0.9, 1.0)]
    sizes, table = v.calibration_table(top_p, [0.0, 0.5, 0.8, 1.0], groups)
    assert sizes == [2, 2, 3]  # 0.5 and 0.8 open the next group; 1.0 stays in the last
    lines = table.splitlines()
    # sqrt(0.3 * 0.7 / 2) = 0.324; sqrt(0.09 / 3) = 0.173
    assert lines[0] == ("P(top) in [0.0, 0.5):   2 positions, mean P(top) 0.30, top word = "
                        "reference in 50% (standard error 32%)")
    assert lines[2].startswith("P(top) in [0.8, 1.0]:   3 positions") and "error 17%" in lines[2]
    empty = v.calibration_table([0.9], [0.0, 0.5, 1.0], [(float("nan"), float("nan")),
                                                          (0.9, 1.0)])
    assert empty[0] == [0, 1] and "standard error none: no positions" in empty[1]
    with pytest.raises(ValueError):
        v.calibration_table(top_p, [0.0, 1.0], groups)

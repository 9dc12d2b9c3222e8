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
        "1.4 nats above the 9.2 of a model that matched the smoothed target exactly: on "
        "(geometric) average a word of S gets 4.1 times less than ε/|S|, so the model spreads ε "
        "unevenly")


@pytest.mark.parametrize("gains, words", [
    ([2.0, 0.8], "3 runs spread over 0.7 BLEU, and each pair's gain is larger, the smallest only "
                 "1.1 times that: 2 pairs in favour of smoothing, one per setting, suggestive "
                 "rather than a measured size of its effect"),
    ([2.0, 1.6], "3 runs spread over 0.7 BLEU, and each pair's gain is more than 2 times that: 2 "
                 "pairs in favour of smoothing, one per setting, not a measured size of its "
                 "effect"),
    ([2.0, 0.6], "3 runs spread over 0.7 BLEU, and only 1 of the 2 pairs' gains is larger: weak "
                 "evidence that smoothing helps"),
    ([0.5, -0.5], "3 runs spread over 0.7 BLEU, and no pair's gain is larger: the sweep does not "
                  "show that smoothing helps"),
    ([2.0, -0.9], "3 runs spread over 0.7 BLEU, and in 1 of the 2 pairs smoothing lowered BLEU "
                  "by more: the sweep does not show that it helps")])
def test_sweep_gains_counts_a_gain_only_beyond_the_seed_spread(gains, words):
    assert v.sweep_gains(gains, [36.0, 35.6, 36.3]) == words
    assert len(words.split()) <= 40


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


@pytest.mark.parametrize("lo, hi, words", [(0.90, 0.95, "the bar that holds that optimum, 0.90"),
                                           (0.95, 1.00, "above that optimum, 0.90"),
                                           (0.85, 0.90, "below that optimum, 0.90")])
def test_fullest_bar_places_the_bar_against_the_optimum(lo, hi, words):
    assert v.fullest_bar(lo, hi, 0.9001) == words
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

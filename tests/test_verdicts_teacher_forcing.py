"""lib.course.verdicts.teacher_forcing: timings of a part and its whole, the exposure-bias
experiment and its control, and the rankings of the ratio runs, in words that follow the
numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import teacher_forcing as v


def test_part_within_whole():
    assert v.part_within_whole("ok", 1.0, 2.0, "the GRU", "the decoder") == "ok"
    assert v.part_within_whole("ok", 2.0, 2.0, "the GRU", "the decoder") == "ok"
    noisy = v.part_within_whole("ok", 1.7, 1.3, "the GRU", "the decoder")
    assert noisy.startswith("the timings were too noisy")
    assert "the GRU took longer than the decoder" in noisy
    with pytest.raises(ValueError, match="positive"):
        v.part_within_whole("ok", 0.0, 1.0, "a", "b")


@pytest.mark.parametrize("before, after, lo, hi, words", [
    (34.3, 22.3, 9.2, 14.7,  # the page's numbers: the fall's interval lies above zero
     "falls from 34.3 to 22.3 (the fall's 95 % interval: 9.2 to 14.7 points)"),
    (20.0, 25.0, -7.1, -2.9, "rises from 20.0 to 25.0 (the rise's 95 % interval: 2.9 to 7.1 "
                             "points)"),
    (34.3, 22.3, -0.4, 24.0, "goes from 34.3 to 22.3, a change whose 95 % interval (-24.0 to "
                             "+0.4 points) includes zero"),
    (20.0, 20.2, -1.0, 0.6, "goes from 20.0 to 20.2, a change whose 95 % interval (-0.6 to "
                            "+1.0 points) includes zero")])
def test_exposure_drop_follows_the_interval(before, after, lo, hi, words):
    """A fall is named only when the whole interval of before - after lies above zero."""
    assert v.exposure_drop(before, after, lo, hi) == words


def test_exposure_drop_refuses_scores_against_the_interval():
    with pytest.raises(ValueError, match="low end"):
        v.exposure_drop(34.3, 22.3, 14.6, 9.8)
    with pytest.raises(ValueError, match="against"):
        v.exposure_drop(22.3, 34.3, 9.8, 14.6)  # a 'fall' whose scores rise
    with pytest.raises(ValueError, match="against"):
        v.exposure_drop(34.3, 22.3, -14.6, -9.8)


@pytest.mark.parametrize("lo, hi, words", [
    (0.4, 3.5, "Forcing the other reference's first word raises the score by 0.4 to 3.5 points "
               "(95 % interval), so BLEU does not count this rewording as damage"),
    (-3.0, -0.5, "Forcing the other reference's first word lowers the score by 0.5 to 3.0 "
                 "points (95 % interval), so BLEU counts even this rewording as damage"),
    (-1.4, 14.8, "Forcing the other reference's first word changes the score by -1.4 to +14.8 "
                 "points (95 % interval), which includes zero: no cost of this rewording is "
                 "measurable"),
    (0.0, 0.0, "Forcing the other reference's first word changes the score by +0.0 to +0.0 "
               "points (95 % interval), which includes zero: no cost of this rewording is "
               "measurable")])
def test_rewording_change_words_the_rewording_from_its_interval(lo, hi, words):
    """The interval is of other - right, the change the rewording makes: each printed bound
    keeps its sign, so 'raises' and 'lowers' follow the numbers."""
    assert v.rewording_change(lo, hi) == words
    with pytest.raises(ValueError, match="low end"):
        v.rewording_change(2.0, 1.0)


@pytest.mark.parametrize("lo, hi, words", [
    (8.0, 21.4, "The wrong word scores 8.0 to 21.4 points below the other reference's word "
                "(95 % interval), so it costs more than a rewording that a reference continues"),
    (-2.0, 20.0, "The wrong word's score minus the other reference's word's is -20.0 to +2.0 "
                 "points (95 % interval), which includes zero, so the drop may all be "
                 "rewording"),
    (-20.0, -2.0, "The wrong word scores 2.0 to 20.0 points above the other reference's word "
                  "(95 % interval), so the drop may all be rewording")])
def test_beyond_rewording_words_the_wrong_words_score_from_its_interval(lo, hi, words):
    """The interval is of other - wrong; the sentence states wrong - other's sign, and claims
    no bound on exposure bias: the control is one rewording among many."""
    assert v.beyond_rewording(lo, hi) == words
    assert "at most" not in v.beyond_rewording(lo, hi)
    with pytest.raises(ValueError, match="low end"):
        v.beyond_rewording(2.0, 1.0)


@pytest.mark.parametrize("forced, plain, words", [
    (0.25, 0.58, "On this sentence, chosen for that low confidence, the model is less sure how "
                 "to go on than in its own translation"),
    (0.70, 0.58, "Even on this sentence, chosen for its low confidence, the model is surer of "
                 "its continuation after the forced token than without it"),
    (0.59, 0.58, "On this sentence, chosen for its low confidence, the model is about as sure "
                 "of its continuation either way")])
def test_forced_confidence_follows_the_two_probabilities(forced, plain, words):
    """Each branch speaks of the one chosen sentence, not of the model in general."""
    assert v.forced_confidence(forced, plain) == words
    with pytest.raises(ValueError, match="probabilities"):
        v.forced_confidence(1.5, 0.5)


@pytest.mark.parametrize("test_min, seen, possible, words", [
    (4, 512, 512, "none shorter than 4 digits: the training set holds all 512 possible shorter "
                  "sequences"),
    (4, 511, 512, "none shorter than 4 digits: the training set holds 511 of the 512 possible "
                  "shorter sequences"),
    (3, 0, 0, "the shortest has 3 digits, as in training")])
def test_shortest_test_says_what_the_training_set_holds(test_min, seen, possible, words):
    assert v.shortest_test(test_min, 3, seen, possible) == words
    with pytest.raises(ValueError):
        v.shortest_test(2, 3, 0, 0)
    with pytest.raises(ValueError):
        v.shortest_test(4, 3, 513, 512)


def test_times_as_long_here_drops_only_the_machine():
    assert v.times_as_long_here(1.2, 1.0, "stepping", "one call") == (
        "stepping took 1.2 times as long as one call")
    assert v.times_as_long_here(1.0, 1.0, "stepping", "one call") == (
        "stepping took about as long as one call")


_CONTROL = ("A control on the 72 sentences whose references start in more than one way (forcing "
            "another reference's first word)")


@pytest.mark.parametrize("lo, hi, words", [
    (-3.5, -0.4, f"{_CONTROL} lowered BLEU too, so part of that drop can be rewording"),
    (0.5, 3.0, f"{_CONTROL} raised BLEU; a rewording that no reference continues may still "
               "lower it"),
    # the page's interval on its 72 sentences: the point estimate is +7.2, but the interval
    # includes zero
    (-1.0, 15.5, f"{_CONTROL} changed BLEU by -1.0 to +15.5 points (95 % interval), which "
                 "includes zero"),
    (0.0, 0.0, f"{_CONTROL} changed BLEU by +0.0 to +0.0 points (95 % interval), which "
               "includes zero")])
def test_rewording_summary_follows_the_same_interval(lo, hi, words):
    """The same interval as rewording_change's, other - right: below zero BLEU counts the
    rewording as damage, above zero it gains; the sentence names how many sentences it rests on
    (at most 40 words, the limit of a glued text)."""
    assert v.rewording_summary(lo, hi, 72) == words
    assert len(words.split()) <= 40
    with pytest.raises(ValueError, match="low end"):
        v.rewording_summary(1.0, 0.0, 72)


def test_exact_ranking_names_first_and_last_and_the_noise():
    text = v.exact_ranking({"ratio 1.0": 0.83, "ratio 0.5": 0.60, "ratio 0.0": 0.40}, 500)
    assert text == "ratio 1.0 solves the most, ratio 0.0 the fewest"
    text = v.exact_ranking({"ratio 1.0": 0.83, "ratio 0.5": 0.82, "ratio 0.0": 0.40}, 500)
    assert "closer than the noise of 500 test sequences" in text
    assert v.exact_ranking({"a": 0.5, "b": 0.5}, 500) == "all 2 runs solve the same share"
    with pytest.raises(ValueError):
        v.exact_ranking({"a": 0.5}, 10)


def test_lowest_and_highest_name_ties_together():
    assert v.lowest({1.0: 0.3, 0.0: 0.5}, "ratio ") == "ratio 1.0"
    assert v.highest({1.0: 0.3, 0.0: 0.5}, "ratio ") == "ratio 0.0"
    assert v.lowest({1.0: 0.3, 0.0: 0.3}, "ratio ") == "ratio 1.0 and ratio 0.0"


def test_loss_ranking_follows_each_measure_separately():
    forced = {"ratio 1.0": 0.1, "ratio 0.0": 0.3}
    text = v.loss_ranking(forced, {"ratio 1.0": 0.5, "ratio 0.0": 0.4})
    assert text == ("The lowest forced loss belongs to ratio 1.0, the lowest free-running loss "
                    "to ratio 0.0, and the smallest gap between the two to ratio 0.0")
    text = v.loss_ranking(forced, {"ratio 1.0": 0.2, "ratio 0.0": 0.6})
    assert "free-running loss to ratio 1.0" in text
    assert "smallest gap between the two to ratio 1.0" in text


@pytest.mark.parametrize("name, words", [
    ("a", "has the highest exact share of the 4 runs"),
    ("d", "has the lowest exact share of the 4 runs"),
    ("b", "is 2nd of the 4 runs in exact share"),
    ("c", "is 2nd of the 4 runs in exact share")])
def test_place_of_names_the_place(name, words):
    assert v.place_of(name, {"a": 0.8, "b": 0.7, "c": 0.7, "d": 0.6}, "exact share") == words


def test_place_of_all_tied_and_unknown():
    assert v.place_of("a", {"a": 1.0, "b": 1.0}, "x") == "has the same x as the other 1 runs"
    assert v.place_of("c", {"a": 3, "b": 2, "c": 1.5, "d": 1}, "x") == "is 3rd of the 4 runs in x"
    with pytest.raises(ValueError, match="among"):
        v.place_of("z", {"a": 1.0, "b": 2.0}, "x")


def test_checkpoint_leaders_claims_a_leader_only_when_it_leads_throughout():
    steady = {"ratio 1.0": [(100, 0.2), (200, 0.5)], "ratio 0.0": [(100, 0.1), (200, 0.4)]}
    assert v.checkpoint_leaders(steady) == ("ratio 1.0 leads at every one of the 2 checkpoints "
                                            "(steps 100 to 200)")
    tied = {"a": [(1, 0.2), (2, 0.5)], "b": [(1, 0.2), (2, 0.5)]}
    assert v.checkpoint_leaders(tied).startswith("a and b share the lead at every one")
    changing = {"1.0": [(1, 0.2), (2, 0.3), (3, 0.5)], "linear": [(1, 0.1), (2, 0.4), (3, 0.6)],
                "0.0": [(1, 0.1), (2, 0.2), (3, 0.7)]}
    text = v.checkpoint_leaders(changing)
    assert text.startswith("the lead changes between the 3 checkpoints (1.0 at step 1; linear "
                           "at step 2; 0.0 at step 3)")
    assert "not a settled one" in text
    grouped = {"a": [(1, 0.5), (2, 0.5), (3, 0.1)], "b": [(1, 0.1), (2, 0.1), (3, 0.9)]}
    assert "(a at steps 1 to 2; b at step 3)" in v.checkpoint_leaders(grouped)
    with pytest.raises(ValueError, match="same"):
        v.checkpoint_leaders({"a": [(1, 0.5)], "b": [(2, 0.5)]})
    with pytest.raises(ValueError, match="two runs"):
        v.checkpoint_leaders({"a": [(1, 0.5)]})


def test_checkpoint_places_says_whether_the_place_holds():
    curves = {"a": [(1, 0.5), (2, 0.5)], "b": [(1, 0.1), (2, 0.9)], "c": [(1, 0.3), (2, 0.2)]}
    assert v.checkpoint_places("a", curves, "exact share") == (
        "across the 2 checkpoints it moves between 1st and 2nd of the 3 runs in exact share")
    assert v.checkpoint_places("c", {"a": curves["a"], "c": curves["c"]}, "x") == (
        "it is 2nd of the 2 runs in x at every one of the 2 checkpoints")
    with pytest.raises(ValueError, match="not among"):
        v.checkpoint_places("z", curves, "x")


@pytest.mark.parametrize("last, words", [
    ((0.9, 0.8), "all 2 runs had their best exact share at the last checkpoint, step 300, so "
                 "none had stopped improving by that measure. This ranks the runs at this "
                 "budget only"),
    ((0.9, 0.5), "1 of the 2 runs had their best exact share at the last checkpoint, step 300, "
                 "so they had not stopped improving by that measure. This ranks"),
    ((0.6, 0.5), "no run had its best exact share at the last checkpoint, step 300"),
    ((0.7, 0.6), "no run had its best"),  # equal to an earlier best is not higher
])
def test_still_rising_reads_the_curves_and_names_the_measure(last, words):
    curves = {"a": [(100, 0.3), (200, 0.7), (300, last[0])],
              "b": [(100, 0.2), (200, 0.6), (300, last[1])]}
    assert words in v.still_rising(curves, "exact share")


@pytest.mark.parametrize("test_mean, words", [
    (6.9, "leans long: 6.9 digits on average, against 5.5 in training"),
    (4.0, "leans short: 4.0 digits on average, against 5.5 in training"),
    (5.52, "averages 5.5 digits, as the training set does"),
])
def test_length_lean_says_which_way_the_test_set_leans(test_mean, words):
    assert v.length_lean(test_mean, 5.5) == words
    with pytest.raises(ValueError):
        v.length_lean(0.0, 5.5)


def test_still_rising_needs_two_checkpoints():
    with pytest.raises(ValueError):
        v.still_rising({"a": [(100, 0.3)], "b": [(100, 0.2)]}, "x")

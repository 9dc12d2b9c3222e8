"""lib.course.verdicts.decoder: backpropagation through time, the wiring experiment and the
context swap, in words that follow the numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import decoder as v


def test_gradient_reach_names_the_largest_and_smallest_positions():
    text = v.gradient_reach([0.5, 2.0, 1.0], ["I", "am", "cold"])
    assert text == ("the largest gradient reaches «am» (position 2 of 3) and the smallest "
                    "reaches «I» (position 1), 4.0 times smaller")
    text = v.gradient_reach([3.0, 1.0], ["a", "b"])
    assert text.startswith("the largest gradient reaches «a» (position 1 of 2)")
    assert text.endswith("«b» (position 2), 3.0 times smaller")


def test_gradient_reach_edges_and_bad_input():
    assert v.gradient_reach([1.0, 1.0], ["a", "b"]) == (
        "every one of the 2 source tokens receives the same gradient norm")
    assert v.gradient_reach([1.0, 0.0], ["a", "b"]).endswith(
        "«b» (position 2) receives no gradient at all")
    with pytest.raises(ValueError, match="one norm per token"):
        v.gradient_reach([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="finite and >= 0"):
        v.gradient_reach([1.0, float("nan")], ["a", "b"])
    with pytest.raises(ValueError, match="finite and >= 0"):
        v.gradient_reach([1.0, -1.0], ["a", "b"])


@pytest.mark.parametrize("only_a, only_b, n, text", [
    # 40 vs 10 of 500: se = sqrt(50 - 30**2/500) / 500 = 0.01389, 2 se = 2.8 points
    (40, 10, 500, "a is ahead of b by 6.0 points (40 items only it gets right, 10 only the "
                  "other), beyond the noise of about 2.8 points"),
    (10, 40, 500, "b is ahead of a by 6.0 points (40 items only it gets right, 10 only the "
                  "other), beyond the noise of about 2.8 points"),
    (30, 25, 500, "a is ahead of b by 1.0 points (30 items only it gets right, 25 only the "
                  "other), within the noise of about 3.0 points"),
    (12, 5, 50, "a is ahead of b by 14.0 points (12 items only it gets right, 5 only the "
                "other), within the noise of about 16.0 points"),
    (0, 50, 50, "b is ahead of a by 100.0 points (50 items only it gets right, 0 only the "
                "other), beyond the noise of about 0.0 points")])
def test_paired_gap_follows_discordant_counts(only_a, only_b, n, text):
    assert v.paired_gap(only_a, only_b, n, "a", "b") == text


def test_paired_gap_tie_and_bad_counts():
    assert v.paired_gap(7, 7, 100, "a", "b") == ("a and b get the same share right (7 items "
                                                 "only one of them gets right, 7 only the other)")
    with pytest.raises(ValueError, match="discordant"):
        v.paired_gap(60, 50, 100, "a", "b")
    with pytest.raises(ValueError, match="integers"):
        v.paired_gap(-1, 2, 100, "a", "b")


LEAD = "the fed context beats the initial state only beyond the noise of 500 held-out sequences"
NO_HELP = "this run does not show that feeding the context helps"


@pytest.mark.parametrize("on_off, on_wide, wide_off, words", [
    # the first two: the wider model does not matter
    ((10, 8), (40, 0), (0, 40), "the gap between the fed context and the initial state only is "
                                f"within the noise of 500 held-out sequences: {NO_HELP}"),
    ((8, 10), (40, 0), (0, 40), "the gap between the fed context and the initial state only is "
                                f"within the noise of 500 held-out sequences: {NO_HELP}"),
    ((5, 60), (40, 0), (0, 0), "the initial state only beats the fed context beyond the noise "
                               f"of 500 held-out sequences: {NO_HELP}"),
    ((60, 5), (60, 5), (30, 5), f"{LEAD}, and beats the wider model without it too: on this "
                                f"seed a model of about its size does not close the gap"),
    # the fed context within noise of the wider one: what the wider one does against the narrow
    # one decides whether size is a rival explanation or the control says nothing
    ((60, 5), (20, 17), (55, 10), f"{LEAD}; the wider model without it also does, level with "
                                  f"the fed one within that noise: this run cannot tell wiring "
                                  f"from size"),
    ((60, 5), (20, 17), (20, 17), f"{LEAD}; the wider model without it is within that noise of "
                                  f"both: the size control is inconclusive"),
    ((60, 5), (20, 17), (5, 60), f"{LEAD}; the wider model without it is within that noise of "
                                 f"the fed one but behind the other: the size control is "
                                 f"inconclusive"),
    ((60, 5), (5, 60), (60, 5), f"{LEAD}, but the wider model without it beats the fed context "
                                f"beyond that noise: on this seed the wiring is not what wins")])
def test_wiring_summary_attributes_only_what_the_controls_allow(on_off, on_wide, wide_off,
                                                                words):
    text = v.wiring_summary(on_off, on_wide, wide_off, 500)
    assert text == words
    assert len(text.split()) <= 40  # the build's limit for a generated sentence
    assert len(v.wiring_summary(on_off, on_wide, wide_off, 500 * 1000).split()) <= 40


def test_wiring_summary_rejects_impossible_counts():
    with pytest.raises(ValueError, match="discordant"):
        v.wiring_summary((300, 300), (0, 0), (0, 0), 500)
    with pytest.raises(ValueError, match="integers"):
        v.wiring_summary((1.5, 0), (0, 0), (0, 0), 500)
    with pytest.raises(ValueError, match="integers"):
        v.wiring_summary((60, 5), (20, 17), (-1, 0), 500)


@pytest.mark.parametrize("on, off, wide, words", [
    # the page's seeds: the fed context ahead of the wider model on two, level on the third
    ([77.8, 76.2, 76.4], [71.6, 69.0, 71.8], [77.2, 76.2, 73.8],
     "the fed context's gap to the initial state only is +4.6 to +7.2 points (ahead on 3 of 3 "
     "seeds); to the wider model, 0.0 to +2.6 (ahead on 2)"),
    # every per-seed gap positive although the ranges overlap: counted seed by seed
    ([77.8, 76.0, 79.0], [71.6, 72.0, 73.0], [77.2, 75.0, 78.0],
     "the fed context's gap to the initial state only is +4.0 to +6.2 points (ahead on 3 of 3 "
     "seeds); to the wider model, +0.6 to +1.0 (ahead on 3)"),
    ([77.8, 76.0, 79.0], [71.6, 72.0, 76.2], [80.0, 81.0, 84.0],
     "the fed context's gap to the initial state only is +2.8 to +6.2 points (ahead on 3 of 3 "
     "seeds); to the wider model, -5.0 to -2.2 (ahead on 0, behind on 3)"),
    ([70.0, 71.0, 72.0], [71.0, 70.0, 72.04], [70.0, 71.0, 72.0],
     "the fed context's gap to the initial state only is -1.0 to +1.0 points (ahead on 1 of 3 "
     "seeds, behind on 1); to the wider model, 0.0 (ahead on 0)"),
    ([75.0, 75.0], [73.0, 73.0], [74.0, 76.0],
     "the fed context's gap to the initial state only is +2.0 points (ahead on 2 of 2 seeds); "
     "to the wider model, -1.0 to +1.0 (ahead on 1, behind on 1)")])
def test_seed_conclusion_counts_the_seeds_one_by_one(on, off, wide, words):
    assert v.seed_conclusion(on, off, wide) == words
    assert len(words.split()) <= 40


def test_seed_conclusion_stays_short_in_the_longest_case():
    text = v.seed_conclusion([50.0, 60.0, 70.0, 80.0], [40.0, 60.0, 75.0, 90.0],
                             [45.0, 60.0, 75.0, 99.9])
    assert "ahead on 1 of 4 seeds, behind on 2" in text and len(text.split()) <= 40


def test_seed_ranges_gives_each_runs_range():
    assert v.seed_ranges([77.8, 76.2, 76.4], [71.6, 69.0, 71.8], [77.2, 76.2, 73.8]) == (
        "over 3 training seeds, exact reversals range 76.2–77.8 % with the context fed, "
        "69.0–71.8 % without and 73.8–77.2 % for the wider model")


def test_seed_ranges_prints_one_number_for_equal_shares_and_rejects_bad_input():
    assert "range 75.0 % with the context fed" in v.seed_ranges([75.0, 75.0], [70.0, 71.0],
                                                                 [60.0, 61.0])
    with pytest.raises(ValueError, match="same number of seeds"):
        v.seed_ranges([75.0, 76.0], [70.0], [60.0, 61.0])
    with pytest.raises(ValueError, match="same number of seeds"):
        v.seed_conclusion([75.0, 76.0], [70.0], [60.0, 61.0])
    with pytest.raises(ValueError, match="same number of seeds"):
        v.seed_conclusion([75.0], [70.0], [60.0])
    with pytest.raises(ValueError, match="percentages"):
        v.seed_conclusion([75.0, 176.0], [70.0, 71.0], [60.0, 61.0])


@pytest.mark.parametrize("states, context, route", [(80.0, 10.0, "the initial states"),
                                                     (10.0, 80.0, "the context"),
                                                     (40.0, 35.0, "neither")])
def test_followed_is_decided_by_content_not_string_equality(states, context, route):
    assert v.followed(states, context) == route


STATES = ("the initial states", "the initial states")


@pytest.mark.parametrize("routes, changed, swap", [
    (STATES, 0, "in both directions the output is word for word the translation of the sentence "
                "the initial states come from: here the fed context does not change the output"),
    (STATES, 1, "in both directions the output follows the sentence the initial states come "
                "from, but 1 of the 2 outputs differs from its translation: the fed context still "
                "changes the output"),
    (STATES, 2, "in both directions the output follows the sentence the initial states come "
                "from, but both outputs differ from its translation: the fed context still "
                "changes the output"),
    (("the context", "the context"), 2,
     "in both directions the output translates the sentence whose context is fed: on these "
     "sentences the model follows the fed context, not its initial states"),
    (("neither", "neither"), 2, "in neither direction is the output clearly the translation of "
                                "one of the two sentences: this model mixes both routes"),
    (("the context", "the initial states"), 1,
     "the two directions disagree, so neither route decides the output on its own for this "
     "model")])
def test_context_swap_verdict(routes, changed, swap):
    """The swap's verdict says the fed context changes nothing only when no swapped output
    differs from its states' sentence's translation (the built page's «gare ?» -> «gare.»)."""
    assert v.context_swap_verdict(routes, changed) == swap


def test_context_swap_verdict_rejects_impossible_counts():
    for changed in (-1, 3, True):
        with pytest.raises(ValueError, match="changed"):
            v.context_swap_verdict(STATES, changed)


@pytest.mark.parametrize("probs, words", [
    # the page's «Où se trouve la gare ? <eos>»: the loop stops at «se», the least sure is «la»
    ([0.91, 0.79, 0.70, 0.66, 0.93], "it stops before «se» (0.79), the first token below 0.9; "
                                     "the least sure token, «la» (0.66), comes later, so the two "
                                     "differ"),
    ([0.91, 0.66, 0.70, 0.79, 0.93], "it stops before «se» (0.66), the first token below 0.9, "
                                     "which is also the least sure token of the whole output"),
    ([0.91, 0.95, 0.92, 0.99, 0.93], "no token is below 0.9, so it writes them all; the least "
                                     "sure is «Où» (0.91)"),
    # equal minima: the first of them is the stopping token, so they are the same
    ([0.91, 0.66, 0.70, 0.66, 0.93], "it stops before «se» (0.66), the first token below 0.9, "
                                     "which is also the least sure token of the whole output")])
def test_unsure_stop_tells_the_first_unsure_token_from_the_least_sure(probs, words):
    assert v.unsure_stop(["Où", "se", "trouve", "la", "gare"], probs, 0.9) == words


def test_unsure_stop_rejects_bad_input():
    with pytest.raises(ValueError, match="one probability per token"):
        v.unsure_stop(["a", "b"], [0.5], 0.9)
    with pytest.raises(ValueError, match="one probability per token"):
        v.unsure_stop([], [], 0.9)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        v.unsure_stop(["a"], [-0.1], 0.9)


@pytest.mark.parametrize("on_off, on_wide, wide_off, words", [
    ((10, 8), (40, 0), (0, 40), "the run does not show that feeding the context helps"),
    ((5, 60), (40, 0), (0, 0), "the run does not show that feeding the context helps"),
    ((60, 5), (60, 5), (30, 5), "the fed context beats both controls, the wider model included"),
    ((60, 5), (20, 17), (55, 10), "the wider model without the fed context does about as well, so "
                                  "the toy cannot tell wiring from size"),
    ((60, 5), (20, 17), (20, 17), "the fed context beats the initial state only, but the size "
                                  "control is inconclusive"),
    ((60, 5), (5, 60), (60, 5), "the wider model without the fed context wins, so the wiring is "
                                "not what helps")])
def test_wiring_takeaway_agrees_with_the_summary(on_off, on_wide, wide_off, words):
    assert v.wiring_takeaway(on_off, on_wide, wide_off, 500) == words
    with pytest.raises(ValueError, match="integers"):
        v.wiring_takeaway(on_off, on_wide, (-1, 0), 500)

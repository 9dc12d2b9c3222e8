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


LEAD = "the fed context is ahead of the initial state only, beyond the noise of these 500 " \
       "held-out sequences"


@pytest.mark.parametrize("on_off, on_wide, words", [
    ((10, 8), (40, 0), "the fed context's lead over the initial state only is within the noise "
                       "of these 500 held-out sequences: this run does not show that feeding "
                       "the context helps"),
    ((5, 60), (40, 0), "the initial state only does better than the fed context, beyond the "
                       "noise of these 500 held-out sequences: this run does not show that "
                       "feeding the context helps"),
    ((60, 5), (60, 5), f"{LEAD}, and ahead of the wider model without it too: on this seed and "
                       f"budget the wiring, not extra capacity, explains the gap"),
    ((60, 5), (20, 17), f"{LEAD}, but the wider model without it is within that noise: "
                        f"extra capacity explains the gap as well as the wiring"),
    ((60, 5), (5, 60), f"{LEAD}, but the wider model without it does better still, beyond the "
                       f"noise: extra capacity, not the wiring, explains the gap here")])
def test_wiring_summary_attributes_only_what_the_controls_allow(on_off, on_wide, words):
    assert v.wiring_summary(on_off, on_wide, 500) == words


def test_wiring_summary_rejects_impossible_counts():
    with pytest.raises(ValueError, match="discordant"):
        v.wiring_summary((300, 300), (0, 0), 500)
    with pytest.raises(ValueError, match="integers"):
        v.wiring_summary((1.5, 0), (0, 0), 500)


@pytest.mark.parametrize("on, off, wide, words", [
    ([77.8, 76.0, 79.0], [71.6, 72.0, 73.0], [70.0, 72.0, 74.0],
     "the fed context leads both others on every seed"),
    ([77.8, 76.0, 79.0], [71.6, 72.0, 73.0], [77.2, 75.0, 78.0],
     "the fed context leads the initial state only on every seed, not the wider model"),
    ([77.8, 76.0, 79.0], [71.6, 72.0, 73.0], [80.0, 81.0, 84.0],
     "the fed context leads the initial state only on every seed, the wider model leads it"),
    # one seed of the initial state only above one of the fed context's: no lead is claimed
    ([77.8, 76.0, 79.0], [71.6, 72.0, 76.2], [70.0, 72.0, 74.0],
     "the first two ranges overlap, so the seed moves a run as much as the wiring does"),
    ([70.0, 71.0, 72.0], [73.0, 74.0, 75.0], [1.0, 2.0, 3.0],
     "the initial state only leads the fed context on every seed")])
def test_seed_conclusion_claims_a_lead_only_where_the_seed_ranges_part(on, off, wide, words):
    assert v.seed_conclusion(on, off, wide) == words
    text = v.seed_ranges(on, off, wide)
    assert text.endswith(f": {words}") and len(text.split()) <= 40
    assert text.startswith(f"over 3 training seeds, exact reversals range {min(on):.1f}–"
                           f"{max(on):.1f} % with the context fed, {min(off):.1f}–{max(off):.1f} "
                           f"% without")


def test_seed_ranges_prints_one_number_for_equal_shares_and_rejects_bad_input():
    assert "range 75.0 % with the context fed" in v.seed_ranges([75.0, 75.0], [70.0, 71.0],
                                                                 [60.0, 61.0])
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

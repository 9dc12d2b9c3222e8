"""lib.course.verdicts: every outcome a chapter's numbers can take gets words that say it.

Each test feeds a function each possible outcome (and the edges between them) and checks that
the wording follows the numbers, so no seed, model or machine can make a page print a claim
its own numbers contradict.
"""

from __future__ import annotations

import pytest

from lib.course import verdicts as v

# --- generic words ----------------------------------------------------------------------------


@pytest.mark.parametrize("change, word", [
    (1.0, "rises"), (-1.0, "falls"), (0.0, "barely changes"), (0.2, "barely changes"),
    (-0.2, "barely changes")])
def test_direction_follows_the_sign_beyond_the_tolerance(change, word):
    assert v.direction(change, tolerance=0.3) == word


def test_direction_and_comparison_take_their_own_words():
    assert v.direction(2, up="grows", down="shrinks", flat="holds") == "grows"
    assert v.comparison(3, 5) == "lower"
    assert v.comparison(5, 3) == "higher"
    assert v.comparison(5, 5) == "about the same"
    assert v.comparison(5.05, 5, tolerance=0.1) == "about the same"


@pytest.mark.parametrize("slow, fast, expected", [
    (2.4, 1.0, "took 2.4 times as long"),
    (25.0, 1.0, "took 25 times as long"),
    (1.05, 1.0, "took about as long"),
    (1.0, 1.05, "took about as long"),
    (1.0, 1.6, "took only 0.62 times as long"),
])
def test_times_as_long_never_says_1x_and_names_the_build_machine(slow, fast, expected):
    text = v.times_as_long(slow, fast)
    assert text.startswith(expected)
    assert text.endswith("on the machine that built this page")
    assert "1x" not in text and "1.0 times" not in text


def test_times_as_long_names_both_sides_and_rejects_nonsense():
    text = v.times_as_long(3.0, 1.0, "stepping", "one call")
    assert text == ("stepping took 3.0 times as long as one call on the machine that built "
                    "this page")
    with pytest.raises(ValueError):
        v.times_as_long(0.0, 1.0)


@pytest.mark.parametrize("ratio, word", [
    (6.0, "several times slower"), (3.0, "several times slower"), (1.5, "slower"),
    (1.0, "about as fast"), (0.95, "about as fast"), (0.5, "faster")])
def test_speed_word_holds_on_any_machine(ratio, word):
    assert v.speed_word(ratio) == word


@pytest.mark.parametrize("share, chance, n, words", [
    (0.69, 0.02, 1000, "34 times as often as chance"),
    (0.40, 0.05, 1000, "8.0 times as often as chance"),
    (0.498, 0.05, 1000, "10 times as often as chance"),  # 9.96 is not written "10.0"
    (0.12, 0.08, 1000, "1.5 times as often as chance, yet fewer than 10 percentage points "
                       "above it"),
    (0.07, 0.03, 1000, "2.3 times as often as chance, yet fewer than 10 percentage points "
                       "above it"),  # the ratio alone would oversell a 4-point gap
    (0.85, 0.80, 100_000, "slightly more often than chance, yet fewer than 10 percentage points "
                          "above it"),
    (0.61, 0.50, 100_000, "1.2 times as often as chance"),
    (0.30, 0.0, 1000, "more often than chance, which scores 0%"),
    (0.02, 0.0, 1000, "more often than chance, which scores 0%, yet fewer than 10 percentage "
                      "points above it"),
    (0.051, 0.05, 1000, "no more often than chance"),
    (0.30, 0.25, 20, "no more often than chance"),  # a small sample: the same gap is noise
    (0.01, 0.10, 1000, "less often than chance"),
])
def test_against_chance_needs_the_gap_to_exceed_the_noise(share, chance, n, words):
    assert v.against_chance(share, chance, n) == words


def test_against_chance_names_its_baseline_and_rejects_impossible_input():
    assert v.against_chance(0.5, 0.5, 100, baseline="the random start") == (
        "no more often than the random start")
    assert v.against_chance(0.07, 0.03, 1000, small=0.02) == "2.3 times as often as chance"
    for share, chance, n in ((0.5, 0.2, 0), (1.2, 0.2, 10), (0.5, -0.1, 10)):
        with pytest.raises(ValueError):
            v.against_chance(share, chance, n)


@pytest.mark.parametrize("share, words", [(1.0, "all"), (0.95, "nearly all"), (0.7, "most"),
                                          (0.5, "about half"), (0.2, "a minority"),
                                          (0.05, "very few"), (0.0, "none")])
def test_how_many(share, words):
    assert v.how_many(share) == words


def test_how_many_and_all_or_count_reject_impossible_shares():
    with pytest.raises(ValueError):
        v.how_many(1.2)
    with pytest.raises(ValueError):
        v.all_or_count(5, 4)
    assert v.all_or_count(1234, 1234) == "all 1,234"
    assert v.all_or_count(1230, 1234) == "1,230 of 1,234"


def test_lowest_and_highest_name_ties_together():
    assert v.lowest({1.0: 0.3, 0.0: 0.5}, "ratio ") == "ratio 1.0"
    assert v.highest({1.0: 0.3, 0.0: 0.5}, "ratio ") == "ratio 0.0"
    assert v.lowest({1.0: 0.3, 0.0: 0.3}, "ratio ") == "ratio 1.0 and ratio 0.0"


# --- encoder ----------------------------------------------------------------------------------


@pytest.mark.parametrize("norm, fate", [
    (5e-9, "vanishes"), (0.0099, "vanishes"), (0.43, "survives"), (10.0, "survives"),
    (90.9, "explodes")])
def test_gradient_fate(norm, fate):
    assert v.gradient_fate(norm) == fate


def test_gru_against_vanilla_says_how_much_better_and_whether_it_still_vanishes():
    # the numbers the issue quotes: the GRU passes back ~1000x more, yet still vanishes
    text = v.gru_against_vanilla(5.5e-6, 5.1e-9)
    assert "about 1,000 times more" in text and "still vanishes" in text
    assert "no better" not in text
    assert "about as much" in v.gru_against_vanilla(1e-6, 1.2e-6)
    assert "less" in v.gru_against_vanilla(1e-9, 1e-6)
    assert "survives" in v.gru_against_vanilla(0.5, 1e-9)
    assert "explodes" in v.gru_against_vanilla(50.0, 1e-9)


# --- decoder ----------------------------------------------------------------------------------


def test_wiring_verdict_covers_all_three_outcomes():
    assert "fed the context at every step is ahead on all" in v.wiring_verdict(1, 2, 1, 2, 20, 10)
    assert "initial state is ahead on all" in v.wiring_verdict(2, 1, 2, 1, 10, 20)
    assert "split" in v.wiring_verdict(1, 2, 2, 1, 10, 20)


def test_bleu_gap_caveat_names_the_leader_only_beyond_a_point():
    assert "cannot tell from noise" in v.bleu_gap_caveat(20.3, 20.0)
    assert "in favour of the fed context" in v.bleu_gap_caveat(22.0, 20.0)
    assert "in favour of the initial state only" in v.bleu_gap_caveat(18.0, 20.0)


@pytest.mark.parametrize("states, context, route", [(80.0, 10.0, "the initial states"),
                                                     (10.0, 80.0, "the context"),
                                                     (40.0, 35.0, "neither")])
def test_followed_is_decided_by_content_not_string_equality(states, context, route):
    assert v.followed(states, context) == route


def test_context_swap_verdict_and_the_drift_conclusion_agree():
    cases = {
        ("the initial states", "the initial states"): ("follows its initial states",
                                                       "argmax output follows the initial"),
        ("the context", "the context"): ("follows the fed context",
                                         "argmax output follows the fed context"),
        ("neither", "neither"): ("mixes both routes", "neither route decides"),
        ("the context", "the initial states"): ("disagree", "neither route decides"),
    }
    for routes, (swap, drift) in cases.items():
        assert swap in v.context_swap_verdict(routes)
        drift_text = v.drift_conclusion(routes)
        assert drift in drift_text
        # every outcome limits itself to two sentences' argmax outputs
        assert "two sentences" in drift_text and "may still move the probabilities" in drift_text
        assert "relies on" not in drift_text and "being used" not in drift_text
    # the built page's case: both outputs translate the states' sentence
    states = v.context_swap_verdict(["the initial states"] * 2)
    assert "neither" not in states


# --- prediction head ---------------------------------------------------------------------------


def test_calibration_verdict():
    assert v.calibration_verdict([(0.3, 0.4), (0.7, 0.8)]).startswith("under-confident")
    assert v.calibration_verdict([(0.3, 0.2), (0.7, 0.6)]).startswith("over-confident")
    assert "some groups" in v.calibration_verdict([(0.3, 0.4), (0.7, 0.6)])
    with pytest.raises(ValueError):
        v.calibration_verdict([])


# --- teacher forcing --------------------------------------------------------------------------


@pytest.mark.parametrize("before, after, words", [(34.3, 22.0, "falls from 34.3 to 22.0"),
                                                  (20.0, 25.0, "rises from 20.0 to 25.0"),
                                                  (20.0, 20.2, "stays about the same")])
def test_exposure_drop(before, after, words):
    assert v.exposure_drop(before, after).startswith(words)


def test_toy_exposure_verdict_never_claims_what_the_losses_deny():
    # the built page's case: ratio 1.0 has both lower losses, ratio 0.0 the smaller gap
    text = v.toy_exposure_verdict({1.0: 0.10, 0.0: 0.30}, {1.0: 0.50, 0.0: 0.60})
    assert "ratio 1.0 model has the lower loss in both regimes" in text
    assert "larger gap between the two belongs to the ratio 1.0 model" in text
    text = v.toy_exposure_verdict({1.0: 0.10, 0.0: 0.30}, {1.0: 0.90, 0.0: 0.40})
    assert "ratio 1.0 model has the lower forced loss" in text
    assert "ratio 0.0 model the lower free-running loss" in text
    text = v.toy_exposure_verdict({1.0: 0.40, 0.0: 0.30}, {1.0: 0.50, 0.0: 0.35})
    assert "ratio 0.0 model has the lower loss in both regimes" in text


# --- beam search ------------------------------------------------------------------------------


@pytest.mark.parametrize("lengths, words", [([5.0, 5.5, 6.0], "grows with α"),
                                            ([6.0, 5.5, 5.0], "shrinks as α grows"),
                                            ([5.0, 5.0, 5.0], "does not change"),
                                            ([5.0, 6.0, 5.5], "does not move steadily")])
def test_length_direction(lengths, words):
    assert v.length_direction(lengths).startswith(words)


@pytest.mark.parametrize("wins, total, words", [
    (95, 100, "nearly always"), (60, 100, "more often than not"), (50, 100, "as often as not"),
    (30, 100, "less often than not"), (5, 100, "rarely")])
def test_raw_score_winner(wins, total, words):
    assert v.raw_score_winner(wins, total) == words


@pytest.mark.parametrize("ratio, words", [
    (0.24 / 0.76, "about a third as"), (0.25, "about a quarter as"), (0.5, "about half as"),
    (0.41, "0.41 times as")])
def test_ratio_words(ratio, words):
    assert v.ratio_words(ratio) == words


def test_length_verdict_reports_both_token_counts_and_the_penalty():
    text = v.length_verdict(5.0, 6.0, 5.5, 1.046, 0.938, 1.0, 0.934)
    assert text.startswith("With α = 0 the beam's outputs are shorter than the first references")
    assert "shorter than greedy's" in text
    assert "1.046 times as long as the references (no brevity penalty)" in text
    assert "the ratio is 0.938 (a brevity penalty of 6.6 % off the score)" in text
    text = v.length_verdict(5.0, 6.0, 4.0, 0.95, 0.93, 0.948, 0.93)
    assert "no shorter than greedy's" in text and "5.2 % off" in text
    assert "already as long as the first references" in v.length_verdict(6.5, 6.0, 6.0, 1.1,
                                                                          1.0, 1.0, 1.0)


def test_alpha_default_note_says_what_the_default_does():
    assert "does no normalisation" in v.alpha_default_note(0.0)
    assert v.alpha_default_note(0.6) == ("The default, α = 0.6, was chosen on the validation "
                                         "sentences")


@pytest.mark.parametrize("greedy, beam, words", [
    (20, 3, "avoids 85 % of the misses"), (0, 0, "neither greedy decoding nor"),
    (3, 5, "more often than greedy decoding"), (0, 2, "more often than greedy decoding"),
    (10, 10, "avoids 0 % of the misses")])
def test_misses_closed(greedy, beam, words):
    assert words in v.misses_closed(greedy, beam)


def test_leader_names_the_higher_score_and_never_a_negative_gap():
    assert v.leader(31.2, 30.0, "beam search", "greedy decoding") == \
        "beam search is ahead by 1.20 points"
    assert v.leader(30.0, 31.2, "beam search", "greedy decoding") == \
        "greedy decoding is ahead by 1.20 points"
    assert v.leader(30.0, 30.0, "a", "b") == "a and b are level"


@pytest.mark.parametrize("share, words", [(0.97, "the gain passes"), (0.95, "the gain passes"),
                                          (0.6, "neither lead passes"),
                                          (0.02, "the other system's lead passes")])
def test_bootstrap_verdict(share, words):
    assert words in v.bootstrap_verdict(share)


@pytest.mark.parametrize("right, other, wrong, words", [
    (30.0, 29.5, 20.0, ("costs BLEU little", "9.5 points more than the rewording")),
    (30.0, 22.0, 12.0, ("alone costs 8.0 points", "10.0 points more than the rewording")),
    (30.0, 22.0, 21.5, ("alone costs 8.0 points", "about as much as the rewording")),
    (30.0, 22.0, 25.0, ("alone costs 8.0 points", "costs less than the rewording")),
])
def test_rewording_control_separates_rewording_from_error(right, other, wrong, words):
    text = v.rewording_control(right, other, wrong)
    for part in words:
        assert part in text
    # the control's rewording has a reference that continues it: the gap is only an upper bound
    assert ("upper bound on the part a rewording cannot explain" in text) == (other - wrong > 1)


@pytest.mark.parametrize("wrong, beyond, words", [
    (15.6, (8.0, 17.0), "12.6 points more than the rewording (95 % interval +8.0 to +17.0), an "
                        "upper bound on the part a rewording cannot explain, not that part"),
    (15.6, (-2.0, 20.0), "cost beyond the rewording, +12.6 points (95 % interval -2.0 to "
                         "+20.0), cannot be told from zero"),
    (40.0, (-20.0, -2.0), "costs 11.8 points less than the rewording (95 % interval -20.0 to "
                          "-2.0), so on these sentences the drop cannot be told apart")])
def test_rewording_interval_words_the_wrong_words_cost_from_its_interval(wrong, beyond, words):
    assert words in v.rewording_interval(30.0, 28.2, wrong, 0.4, 3.5, 73, beyond=beyond)
    with pytest.raises(ValueError, match="low end"):
        v.rewording_interval(30.0, 28.2, 15.6, 0.4, 3.5, 73, beyond=(2.0, 1.0))


def test_exact_ranking_names_first_and_last_and_the_noise():
    text = v.exact_ranking({"ratio 1.0": 0.83, "ratio 0.5": 0.60, "ratio 0.0": 0.40}, 500)
    assert text == "ratio 1.0 solves the most, ratio 0.0 the fewest"
    text = v.exact_ranking({"ratio 1.0": 0.83, "ratio 0.5": 0.82, "ratio 0.0": 0.40}, 500)
    assert "closer than the noise of 500 test sequences" in text
    assert v.exact_ranking({"a": 0.5, "b": 0.5}, 500) == "all 2 runs solve the same share"
    with pytest.raises(ValueError):
        v.exact_ranking({"a": 0.5}, 10)


def test_loss_ranking_follows_each_measure_separately():
    forced = {"ratio 1.0": 0.1, "ratio 0.0": 0.3}
    text = v.loss_ranking(forced, {"ratio 1.0": 0.5, "ratio 0.0": 0.4})
    assert text == ("The lowest forced loss belongs to ratio 1.0, the lowest free-running loss "
                    "to ratio 0.0, and the smallest gap between the two to ratio 0.0")
    text = v.loss_ranking(forced, {"ratio 1.0": 0.2, "ratio 0.0": 0.6})
    assert "free-running loss to ratio 1.0" in text
    assert "smallest gap between the two to ratio 1.0" in text


def test_the_beam_chapters_notes_follow_their_counts():
    assert v.same_output_note(True, "k = 5") == ("which finds the same output as k = 5 on this "
                                                 "sentence")
    assert "a different output from k = 5" in v.same_output_note(False, "k = 5")
    assert "did not happen" in v.k1_note(200, 200)
    assert "longer answer" in v.k1_note(198, 200)
    assert "do not change at all" in v.pruned_note(True, 2.5, 2.5)
    assert v.pruned_note(False, 3.3, 2.5).endswith("misses 3.3 % instead of 2.5 %")


def test_k3_gain_never_speaks_of_a_gain_that_is_not_there():
    assert v.k3_gain({1: 30.0, 2: 30.5, 3: 31.0, 5: 31.0, 10: 30.8}) == (
        "a beam of three gets 100 % of the best improvement over greedy")
    assert v.k3_gain({1: 30.0, 3: 30.5, 5: 31.0}) == (
        "a beam of three gets 50 % of the best improvement over greedy")
    assert "no beam size scores above greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 29.5})
    assert "below greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 31.0})


def test_learned_enough_refuses_to_rank_models_that_have_not_learned():
    assert v.learned_enough(5.5).startswith("Neither model reaches 10 BLEU")
    assert v.learned_enough(25.0).startswith("The better model reaches 25.0 BLEU")


# --- the decoder chapter: backpropagation through time -----------------------------------------


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


# --- the wrap-up: the walk-through sentence, and search against model errors --------------------


def test_pick_example_decides_by_content():
    known = {"I", "am", "cold", ".", "We", "won", "Tom", "is", "here"}
    items = [("I am Saskatchewan.", ["a", "b"]),  # an unknown word
             ("We won.", ["a", "b"]),  # 3 tokens: too short
             ("Tom is here.", ["Tom est là."]),  # one reference only
             ("I am cold.", ["J'ai froid.", "Je suis froid."])]
    tok = str.split
    assert v.pick_example([(a.replace(".", " ."), r) for a, r in items], tok, known) == (
        "I am cold .", ["J'ai froid.", "Je suis froid."])
    # no item meets every condition: the first with known words, then the first of all
    assert v.pick_example([("x y", ["r"]), ("We won .", ["r"])], tok, known) == (
        "We won .", ["r"])
    assert v.pick_example([("x y", ["r"])], tok, known) == ("x y", ["r"])
    with pytest.raises(ValueError, match="no sentences"):
        v.pick_example([], tok, known)


def test_error_split_follows_the_counts():
    assert v.error_split(30, 70, "greedy decoding") == (
        "for 30 of the 100 outputs of greedy decoding that differ from every reference (30 %), "
        "a reference is more probable than the output: search errors; the other 70 are model "
        "errors by this test")
    assert v.error_split(0, 12, "the beam").startswith(
        "for none of the 12 outputs of the beam")
    assert "nothing to diagnose" in v.error_split(0, 0, "the beam")
    with pytest.raises(ValueError, match="negative"):
        v.error_split(-1, 3, "x")


def test_copy_outcome_names_what_happened():
    assert v.copy_outcome("Tom", "railroads") == (
        "Some copies are right: «Tom» is written the same way in a reference. Others are not: "
        "«railroads» appears in no reference, which says it another way or not at all")
    assert v.copy_outcome("Tom", None).startswith("Every copied word appears")
    assert v.copy_outcome(None, "railroads").startswith("No copied word appears")
    assert v.copy_outcome(None, None) == "Nothing was copied"


def test_share_gap_says_when_the_gap_is_noise():
    # p = 0.747, 2 * sqrt(2 p (1 - p) / 500) = 0.0550
    assert v.share_gap(0.716, 0.778, "A", "B", 500) == (
        "B is ahead of A by 6.2 points, more than the noise of 500 test items (about 5.5 "
        "points)")
    assert v.share_gap(0.75, 0.72, "A", "B", 500) == (
        "A is ahead of B by 3.0 points, within the noise of 500 test items (about 5.6 "
        "points): this sample cannot rank them")  # p = 0.735
    assert v.share_gap(0.5, 0.5, "A", "B", 10) == "A and B get the same share right"
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.share_gap(1.5, 0.5, "A", "B", 10)
    with pytest.raises(ValueError, match="at least 1"):
        v.share_gap(0.5, 0.4, "A", "B", 0)


# --- the encoder's LSTM section ---------------------------------------------------------------


@pytest.mark.parametrize("g_a, g_b, expected", [
    (5e-3, 5e-6, "passes back about 1,000 times more of the gradient than the GRU"),
    (3.0, 1.0, "passes back about 3 times more of the gradient than the GRU"),
    (2.9, 1.0, "passes back about as much of the gradient as the GRU"),
    (4.6e-6, 5.5e-6, "passes back about as much of the gradient as the GRU"),
    (1.0, 2.9, "passes back about as much of the gradient as the GRU"),
    (1.0, 3.0, "passes back about 3 times less of the gradient than the GRU"),
    (1e-9, 5e-6, "passes back about 5,000 times less of the gradient than the GRU"),
])
def test_gradient_against_follows_the_ratio(g_a, g_b, expected):
    assert v.gradient_against(g_a, g_b, "the GRU") == expected


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_gradient_against_refuses_non_positive_norms(bad):
    with pytest.raises(ValueError, match="positive and finite"):
        v.gradient_against(bad, 1.0, "x")
    with pytest.raises(ValueError, match="positive and finite"):
        v.gradient_against(1.0, bad, "x")


# --- prediction head, beam search, BLEU (#27 §5 review) ---------------------------------------


@pytest.mark.parametrize("n, text", [(0, "0 sentences"), (1, "1 sentence"), (2, "2 sentences"),
                                     (1200, "1,200 sentences")])
def test_count_of_puts_the_noun_in_the_right_number(n, text):
    assert v.count_of(n, "sentence") == text
    assert v.count_of(1, "child", "children") == "1 child"
    assert v.count_of(3, "child", "children") == "3 children"
    with pytest.raises(ValueError, match="negative"):
        v.count_of(-1, "sentence")


def test_two_way_choice_says_two_words_only_when_they_hold_most_of_it():
    text = v.two_way_choice("Tu", 0.45, "Vous", 0.44)
    assert "«Tu» gets 0.45 and «Vous» 0.44" in text and "89 %" in text
    assert "choice between two words" in text
    spread = v.two_way_choice("il", 0.30, "elle", 0.20)
    assert "only 50 % between them" in spread and "choice between two" not in spread
    with pytest.raises(ValueError):
        v.two_way_choice("a", 0.2, "b", 0.3)  # the second is more likely than the first


def test_unsure_spread_names_unk_and_a_thin_spread():
    text = v.unsure_spread(["<unk>", "méjugé", "donné"], [0.03, 0.03, 0.02])
    assert "«<unk>» 0.03" in text and "8 %" in text
    assert "the favourite is <unk>" in text and "spread thin" in text
    sure = v.unsure_spread(["chat", "chien"], [0.45, 0.40])
    assert "<unk>" not in sure and "spread thin" not in sure and "85 %" in sure
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
    assert "under-confident beyond 2 standard errors in the group of mean P(top) 0.31" in mixed
    assert "over-confident beyond 2 standard errors in the group of mean P(top) 0.60" in mixed
    assert "within sampling noise in the group of mean P(top) 0.91" in mixed
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


@pytest.mark.parametrize("measured, start", [(10.6, "1.4 nats above the 9.2"),
                                             (8.0, "1.2 nats below the 9.2"),
                                             (9.3, "within 0.25 nats of the 9.2")])
def test_smoothing_gap_follows_the_sign_of_the_gap(measured, start):
    assert v.smoothing_gap(measured, 9.2).startswith(start)
    assert "Jensen" in v.smoothing_gap(10.6, 9.2)
    assert "4.1 times less" in v.smoothing_gap(10.6, 9.2)


def test_default_holds_compares_the_default_with_the_best_of_the_grid():
    assert "scores highest" in v.default_holds({0.0: 40.0, 1.0: 39.0}, 0.0, "α")
    near = v.default_holds({0.0: 40.0, 0.6: 40.05}, 0.0, "α")
    assert "within 0.1 BLEU of the best, α = 0.6 (0.05 below it)" in near
    far = v.default_holds({0.0: 40.0, 0.6: 41.0}, 0.0, "α")
    assert "α = 0.6 scores 1.00 BLEU above the default" in far and "not be chosen" in far
    with pytest.raises(ValueError, match="not among"):
        v.default_holds({0.0: 40.0}, 1.0, "α")


def test_smallest_margin_within_and_its_note():
    grid = {2.0: 40.0, 1.5: 39.95, 1.0: 39.5, 0.5: 38.0}
    assert v.smallest_margin_within(grid, 40.0) == 1.5
    assert v.smallest_margin_within(grid, 41.0) is None
    assert v.margin_rule_note(1.5, 1.5) == "here the rule picks 1.5, the default"
    assert "smaller than the default 1.5" in v.margin_rule_note(1.0, 1.5)
    assert "larger than the default 1.5" in v.margin_rule_note(2.0, 1.5)
    assert "picks none" in v.margin_rule_note(None, 1.5)


def test_mean_vs_corpus_says_where_the_mean_lies_and_where_each_change_moves_it():
    text = v.mean_vs_corpus(35.9, 41.1, 30.2, 41.3)
    assert "lies above corpus BLEU (41.10 against 35.90)" in text
    assert "the mean falls (-10.90 points, to 30.20)" in text
    assert "it barely changes (+0.20 points, to 41.30)" in text
    below = v.mean_vs_corpus(40.0, 30.0, 31.0, 35.0)
    assert "lies below corpus BLEU" in below and "the mean rises (+1.00" in below
    assert "it rises (+5.00" in below


# --- the attention chapter: step cost against source length, the reversal model's alignment -----


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


def test_against_count_follows_the_ratio_and_the_interval():
    far = v.against_count(100.0, 55.0, 137.0, 3.3)
    assert far == ("30 times the 3.3 µs per source token that the count predicts: far more "
                   "than the count")
    assert v.against_count(4.0, 2.0, 6.0, 3.3).endswith("about what the count says")
    assert v.against_count(4.0, 2.0, 6.0, 3.3).startswith("1.2 times")
    # the interval reaches 2x the prediction: not "far more", and the slope (2.4x) not "about"
    assert v.against_count(8.0, 6.6, 9.0, 3.3) == (
        "2.4 times the 3.3 µs per source token that the count predicts, but its interval (6.6 to "
        "9.0) is too wide on this machine to rule the count out")
    # a build's numbers: 22x with an interval from 1.0 to 39 must not read "about"
    wide = v.against_count(25.1, 1.0, 38.7, 1.15)
    assert "about" not in wide and wide.startswith("22 times") and "too wide" in wide
    assert v.against_count(0.5, 0.2, 1.0, 3.3).endswith("less than the count")
    assert v.against_count(5.0, -1.0, 9.0, 3.3).startswith(
        "not distinguishable from zero on this machine, so it neither confirms nor refutes the "
        "3.3 µs")
    assert v.against_count(-5.0, -9.0, -1.0, 3.3).startswith("negative, which no count")
    with pytest.raises(ValueError, match="positive"):
        v.against_count(1.0, 0.5, 2.0, 0.0)


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


# --- intro, tensors, encoder (#27 §5 review 2) ------------------------------------------------


@pytest.mark.parametrize("norm, word", [
    (1e-3, "vanishes"), (0.0099, "vanishes"), (0.01, "shrinks but survives"),
    (0.43, "shrinks but survives"), (0.999, "shrinks but survives"), (1.0, "grows"),
    (7.0, "grows"), (10.0, "grows"), (10.01, "explodes"), (91.0, "explodes")])
def test_gradient_trend_never_calls_growth_survival(norm, word):
    assert v.gradient_trend(norm) == word


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_gradient_trend_rejects_bad_norms(bad):
    with pytest.raises(ValueError, match="gradient norm"):
        v.gradient_trend(bad)


@pytest.mark.parametrize("a, b, words", [
    (7.0, 0.43, "is about 20 times larger than the GRU"),
    (0.64, 0.43, "is about as large as the GRU"),
    (1.0, 2.9, "is about as large as the GRU"),
    (4.6e-6, 5.5e-6, "is about as large as the GRU"),
    (1e-6, 5e-3, "is about 5,000 times smaller than the GRU")])
def test_factor_against_is_neutral_and_follows_the_ratio(a, b, words):
    text = v.factor_against(a, b, "the GRU")
    assert text == words
    assert "passes" not in text and "better" not in text


def test_factor_against_rejects_zero():
    with pytest.raises(ValueError, match="positive and finite"):
        v.factor_against(0.0, 1.0, "x")


@pytest.mark.parametrize("acc_a, acc_b, lo, hi, start", [
    (0.998, 1.0, -0.004, 0.0, "A and B are both at the ceiling"),
    (0.99, 0.995, 0.001, 0.01, "A and B are both at the ceiling"),
    (0.98, 1.0, -0.03, -0.01, "A scores lower than B"),
    (0.61, 0.38, 0.18, 0.28, "A scores higher than B"),
    (0.60, 0.61, -0.02, 0.01, "A and B are not told apart")])
def test_probe_gap_says_ceiling_only_when_both_are_at_it(acc_a, acc_b, lo, hi, start):
    assert v.probe_gap(acc_a, acc_b, lo, hi, "A", "B").startswith(start)


def test_probe_gap_rejects_percentages():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.probe_gap(99.8, 100.0, 0, 0, "A", "B")


@pytest.mark.parametrize("sigma, start", [
    (0.5, "below 1, so the safe bound above applies"), (0.999, "below 1"),
    (1.0, "at least 1, so the safe bound above does not apply"), (1.07, "at least 1")])
def test_stretch_bound_follows_sigma(sigma, start):
    assert v.stretch_bound(sigma).startswith(start)


def test_stretch_bound_rejects_negative():
    with pytest.raises(ValueError, match="singular value"):
        v.stretch_bound(-0.1)


@pytest.mark.parametrize("before, after, words", [
    (1.33, 2.87, "more than doubles"), (1.82, 3.63, "grows 2.0-fold"),
    (1.0, 3.5, "more than triples"), (1.0, 1.5, "grows 1.5-fold"),
    (1.0, 1.05, "barely changes"), (1.0, 0.95, "barely changes"), (1.0, 0.5, "falls"),
    (1.0, 2.0, "doubles"), (1.0, 2.01, "more than doubles")])
def test_growth_words_follow_the_ratio(before, after, words):
    assert v.growth_words(before, after) == words


def test_growth_words_rejects_zero_base():
    with pytest.raises(ValueError, match="positive"):
        v.growth_words(0.0, 1.0)


# --- decoder, teacher forcing, wrap-up (#27 §5, second review) --------------------------------

@pytest.mark.parametrize("only_a, only_b, n, start, noise", [
    (40, 10, 500, "a is ahead of b by 6.0 points (40 of the 500", "more than the noise"),
    (10, 40, 500, "b is ahead of a by 6.0 points (40 of the 500", "more than the noise"),
    (30, 25, 500, "a is ahead of b by 1.0 points", "within the noise"),
    (12, 5, 50, "a is ahead of b by 14.0 points", "within the noise"),
    (0, 50, 50, "b is ahead of a by 100.0 points", "more than the noise")])
def test_paired_gap_follows_discordant_counts(only_a, only_b, n, start, noise):
    text = v.paired_gap(only_a, only_b, n, "a", "b")
    assert text.startswith(start)
    assert noise in text


def test_paired_gap_noise_by_hand():
    # 40 vs 10 of 500: se = sqrt(50 - 30**2/500) / 500 = 0.01389, 2 se = 2.8 points
    assert "(about 2.8 points)" in v.paired_gap(40, 10, 500, "a", "b")


def test_paired_gap_tie_and_bad_counts():
    assert v.paired_gap(7, 7, 100, "a", "b").startswith("a and b get the same share right")
    with pytest.raises(ValueError, match="discordant"):
        v.paired_gap(60, 50, 100, "a", "b")
    with pytest.raises(ValueError, match="integers"):
        v.paired_gap(-1, 2, 100, "a", "b")


@pytest.mark.parametrize("lo, hi, start", [
    (0.4, 3.5, "a right rewording alone changes the score by -1.8 points (95 % interval of "
               "that change -3.5 to -0.4 points"),
    (-1.5, 4.9, "a right rewording changes the score by -1.8 points, but the 95 % interval of "
                "that change -4.9 to +1.5 points over 73 sentences includes zero")])
def test_rewording_interval_words_follow_the_interval(lo, hi, start):
    text = v.rewording_interval(30.0, 28.2, 15.6, lo, hi, 73)
    assert text.startswith(start)
    assert "; the wrong word costs 12.6 points more than the rewording" in text


def test_rewording_interval_when_the_rewording_scores_higher():
    text = v.rewording_interval(28.0, 29.5, 15.6, -3.0, -0.5, 73)
    assert text.startswith("a right rewording even changes the score by +1.5 points (95 % "
                           "interval of that change +0.5 to +3.0")
    assert "does not count rewording as damage" in text
    assert "; the wrong word costs 13.9 points more" in text


@pytest.mark.parametrize("right, other, lo, hi", [
    (30.0, 28.2, 0.4, 3.5), (30.0, 28.2, -1.5, 4.9), (28.0, 29.5, -3.0, -0.5),
    (28.0, 29.5, -4.0, 1.0), (30.0, 30.0, -1.0, 1.0)])
def test_rewording_interval_states_change_and_interval_with_the_same_sign(right, other, lo, hi):
    """The review's case: the change (other - right) and its interval must be one quantity, so
    the point estimate lies inside the stated interval whatever the signs."""
    import re
    text = v.rewording_interval(right, other, 10.0, lo, hi, 50)
    change, low, high = (float(x) for x in re.search(
        r"by ([+-]\d+\.\d) points.*interval of that change ([+-]\d+\.\d) to ([+-]\d+\.\d)",
        text).groups())
    assert change == pytest.approx(other - right)
    assert (low, high) == (pytest.approx(-hi), pytest.approx(-lo))
    assert low <= change <= high


def test_rewording_interval_rejects_reversed_interval():
    with pytest.raises(ValueError, match="low end"):
        v.rewording_interval(30.0, 28.2, 15.6, 2.0, 1.0, 73)


def test_part_within_whole():
    assert v.part_within_whole("ok", 1.0, 2.0, "the GRU", "the decoder") == "ok"
    assert v.part_within_whole("ok", 2.0, 2.0, "the GRU", "the decoder") == "ok"
    noisy = v.part_within_whole("ok", 1.7, 1.3, "the GRU", "the decoder")
    assert noisy.startswith("the timings were too noisy")
    assert "the GRU took longer than the decoder" in noisy
    with pytest.raises(ValueError, match="positive"):
        v.part_within_whole("ok", 0.0, 1.0, "a", "b")


@pytest.mark.parametrize("lo, hi, start, tail", [
    (1.0, 5.0, "rises with length: sources of more than 6 tokens score 37.2", "+5.0)"),
    (-5.0, -1.0, "falls with length:", "-1.0)"),
    (-1.2, 5.7, "does not clearly change with length:", "put the longer half higher, but")])
def test_length_halves_follow_the_interval(lo, hi, start, tail):
    text = v.length_halves(34.9, 37.2, lo, hi, 6)
    assert text.startswith(start)
    assert tail in text


def test_length_halves_level_and_bad_interval():
    assert "the point estimates are level" in v.length_halves(35.0, 35.0, -2.0, 2.0, 6)
    assert "put the longer half lower" in v.length_halves(36.0, 35.0, -3.0, 1.0, 6)
    with pytest.raises(ValueError, match="low end"):
        v.length_halves(35.0, 36.0, 2.0, 1.0, 6)


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


def test_loss_vs_exact_agree_and_disagree():
    free = {"1.0": 0.358, "0.0": 0.287}
    assert v.loss_vs_exact(free, {"1.0": 0.70, "0.0": 0.72}).startswith(
        "here the run with the lowest free-running loss, 0.0, also reverses the most")
    text = v.loss_vs_exact(free, {"1.0": 0.826, "0.0": 0.724})
    assert text.startswith("here 0.0 has the lowest free-running loss, yet 1.0 reverses more")
    assert "exact match gives nothing" in text
    with pytest.raises(ValueError, match="same runs"):
        v.loss_vs_exact(free, {"1.0": 0.5})


# --- decoder, prediction head, teacher forcing (third review) ---------------------------------


@pytest.mark.parametrize("on_off, on_wide, words", [
    ((10, 8), (40, 0), "within the noise of these 500 held-out sequences, so this run does not"),
    ((5, 60), (40, 0), "the initial state only does better than the fed context, beyond"),
    ((60, 5), (60, 5), "also ahead of the wider model without it"),
    ((60, 5), (20, 17), "comes within the noise of it: the gap is as well explained by size as"),
    ((60, 5), (5, 60), "does better still, beyond the noise: size, not the wiring")])
def test_wiring_summary_attributes_only_what_the_controls_allow(on_off, on_wide, words):
    text = v.wiring_summary(on_off, on_wide, 500)
    assert words in text
    if "within the noise of it" in text:
        assert "the wiring does" not in text


def test_wiring_summary_rejects_impossible_counts():
    with pytest.raises(ValueError, match="discordant"):
        v.wiring_summary((300, 300), (0, 0), 500)
    with pytest.raises(ValueError, match="integers"):
        v.wiring_summary((1.5, 0), (0, 0), 500)


@pytest.mark.parametrize("lo, hi, words", [
    (0.4, 3.5, "part of that drop can be rewording, and the control's cost is only a lower "
               "bound"), (-3.0, -0.5, "does not lower BLEU"),
    (-4.7, 7.4, "could not tell whether"), (0.0, 0.0, "could not tell")])
def test_rewording_summary_follows_the_same_interval(lo, hi, words):
    assert words in v.rewording_summary(lo, hi)
    with pytest.raises(ValueError, match="low end"):
        v.rewording_summary(1.0, 0.0)


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


def test_share_interval_claims_a_difference_only_outside_zero():
    a, b = "the beam's share of search errors", "greedy's"
    assert v.share_interval(-9.04, -1.0, a, b) == (
        "the beam's share of search errors is lower than greedy's (the 95 % interval of the "
        "difference, -9.0 to -1.0 points, lies below zero)")
    assert v.share_interval(0.5, 3.0, a, b).startswith(
        "the beam's share of search errors is higher than greedy's (")
    assert "+0.5 to +3.0 points, lies above zero" in v.share_interval(0.5, 3.0, a, b)
    for lo, hi in ((-4.0, 2.0), (0.0, 3.0), (-3.0, 0.0), (0.0, 0.0)):
        assert v.share_interval(lo, hi, a, b).startswith(
            "the beam's share of search errors cannot be told apart from greedy's on these "
            "items (")
        assert v.share_interval(lo, hi, a, b).endswith("includes zero)")
    with pytest.raises(ValueError, match="above its high end"):
        v.share_interval(1.0, -1.0, a, b)

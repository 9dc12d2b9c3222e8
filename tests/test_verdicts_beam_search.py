"""lib.course.verdicts.beam_search: what a beam finds against greedy decoding, output length
against α, defaults on the validation grid and misses of the optimum, in words that follow the
numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import beam_search as v


def test_the_beam_chapters_notes_follow_their_counts():
    assert v.same_output_note(True, "k = 5") == ("which finds the same output as k = 5 on this "
                                                 "sentence")
    assert "a different output from k = 5" in v.same_output_note(False, "k = 5")
    assert "did not happen" in v.k1_note(200, 200)
    assert "longer answer" in v.k1_note(198, 200)
    assert "do not change at all" in v.pruned_note(True, 2.5, 2.5)
    assert v.pruned_note(False, 3.3, 2.5).endswith("misses 3.3 % instead of 2.5 %")


@pytest.mark.parametrize("lengths, words", [([5.0, 5.5, 6.0], "grows with α"),
                                            ([6.0, 5.5, 5.0], "shrinks as α grows"),
                                            ([5.0, 5.0, 5.0], "does not change"),
                                            ([5.0, 6.0, 5.5], "does not move steadily")])
def test_length_direction(lengths, words):
    assert v.length_direction(lengths).startswith(words)


@pytest.mark.parametrize("lengths, ratios, text", [
    ((5.0, 6.0, 5.5), (1.046, 0.938, 1.0, 0.934),
     "With α = 0 the outputs are shorter than both the first references and greedy's. BLEU's "
     "length ratio is 1.046 (no brevity penalty); with <unk> as one word, 0.938 (brevity penalty "
     "6.6 %)"),
    ((5.0, 6.0, 5.0), (0.95, 0.93, 0.948, 0.93),
     "With α = 0 the outputs are shorter than the first references, though no shorter than "
     "greedy's. BLEU's length ratio is 0.950 (brevity penalty 5.2 %); with <unk> as one word, "
     "0.930 (brevity penalty 7.0 %)"),
    ((6.0, 6.0, 6.0), (1.1, 1.0, 1.0, 1.0),
     "With α = 0 the outputs are already as long as the first references or longer. BLEU's "
     "length ratio is 1.100 (no brevity penalty); with <unk> as one word, 1.000 (no brevity "
     "penalty)")])
def test_length_verdict_reports_both_token_counts_and_the_penalty(lengths, ratios, text):
    assert v.length_verdict(*lengths, *ratios) == text


def test_alpha_default_note_says_what_the_default_does_and_whether_the_grid_backs_it():
    kept = v.alpha_default_note(0.0, beaten=False)
    assert "does no normalisation" in kept and "no other α scored higher" in kept
    beaten = v.alpha_default_note(0.0, beaten=True)
    assert "though another α scored higher" in beaten and "no other" not in beaten
    assert v.alpha_default_note(0.6, beaten=False).startswith("The default, α = 0.6, divides by")


def test_by_count_follows_each_interval():
    same = v.by_count("α = 1", "α = 0", {"13a": (-1.9, 0.3), "word": (-1.2, 1.1)})
    assert same == ("α = 1 and α = 0 cannot be told apart, whether <unk> counts as three tokens "
                    "or one (each 95 % interval of the difference includes zero)")
    lower = v.by_count("a", "b", {"13a": (-2.0, -0.1), "word": (-1.0, -0.2)})
    assert lower.startswith("a scores lower than b, whether") and "lies below zero" in lower
    mixed = v.by_count("a", "b", {"13a": (-2.0, -0.1), "word": (-1.0, 0.5)})
    assert mixed == ("with <unk> as three tokens (13a), a scores lower than b; with <unk> as one "
                     "word, a and b cannot be told apart (95 % intervals of the difference)")
    higher = v.by_count("a", "b", {"word": (0.1, 0.5)})
    assert higher.startswith("a scores higher than b, with <unk> as one word")
    with pytest.raises(ValueError, match="keyed by"):
        v.by_count("a", "b", {"chrF": (0.0, 1.0)})


def test_grid_best_says_which_setting_leads_and_whether_beyond_the_noise():
    text = v.grid_best(0.0, "α", {"13a": (0.0, 0.0, 0.0, 0.0),
                                  "word": (0.6, 0.09, -0.85, 1.04)})
    assert text == ("with <unk> as three tokens (13a), the default α = 0 scores highest; with "
                    "<unk> as one word, α = 0.6 scores 0.09 higher, within the noise (95 % "
                    "interval -0.85 to +1.04)")
    assert "beyond the noise (95 % interval +0.20 to +1.50)" in v.grid_best(0.0, "α",
                                                             {"word": (1.0, 0.8, 0.2, 1.5)})
    assert not v.default_beaten(0.0, {"13a": (0.0, 0.0, 0.0, 0.0),
                                      "word": (0.6, 0.09, -0.85, 1.04)})
    assert v.default_beaten(0.0, {"word": (1.0, 0.8, 0.2, 1.5)})
    with pytest.raises(ValueError, match="keyed by"):
        v.grid_best(0.0, "α", {})


def test_k3_gain_never_speaks_of_a_gain_that_is_not_there():
    assert v.k3_gain({1: 30.0, 2: 30.5, 3: 31.0, 5: 31.0, 10: 30.8}) == (
        "a beam of three gets 100 % of the best improvement over greedy")
    assert "no beam size scores above greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 29.5})
    assert "below greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 31.0}, 1.5, 2.5)


def test_k3_gain_says_whether_the_best_k_is_told_apart_from_three():
    # the page's numbers: k = 5 leads k = 3 by -0.42 to +0.69 BLEU (a paired bootstrap)
    bleu = {1: 37.69, 2: 40.1, 3: 41.26, 5: 41.43, 10: 41.23}
    assert v.k3_gain(bleu, -0.42, 0.69) == (
        "a beam of three gets 95 % of the best improvement over greedy (k = 3 and the best, "
        "k = 5, are within bootstrap noise)")
    beyond = v.k3_gain({1: 30.0, 3: 30.5, 5: 31.0}, 0.1, 0.9)
    assert beyond == ("a beam of three gets 50 % of the best improvement over greedy (the best, "
                      "k = 5, scores higher beyond bootstrap noise)")
    assert "noise" not in v.k3_gain({1: 30.0, 3: 31.0, 5: 30.9}, -5.0, -1.0)
    with pytest.raises(ValueError, match="below zero"):
        v.k3_gain(bleu, -0.9, -0.1)


@pytest.mark.parametrize("greedy, beam, words", [
    (20, 3, "has 85 % fewer misses than greedy"), (0, 0, "neither greedy decoding nor"),
    (3, 5, "more often than greedy decoding"), (0, 2, "more often than greedy decoding"),
    (10, 10, "has 0 % fewer misses")])
def test_misses_closed(greedy, beam, words):
    assert words in v.misses_closed(greedy, beam)


def test_optimum_shapes_says_when_the_optima_are_degenerate():
    real = v.optimum_shapes(7, 0, 120)
    assert real == ("113 of the 120 optima are real sentences; 7 are <eos> alone, 0 cut by the "
                    "length cap")
    degenerate = v.optimum_shapes(115, 3, 120)
    assert degenerate.startswith("only 2 of the 120 optima are real sentences")
    assert "mostly test whether a search ends" in degenerate
    assert "mostly" in v.optimum_shapes(30, 31, 120)
    assert "mostly" not in v.optimum_shapes(30, 30, 120)
    with pytest.raises(ValueError):
        v.optimum_shapes(100, 30, 120)


def test_alpha1_note_gives_both_rates_and_a_cause_only_with_more_misses():
    more = v.alpha1_note(16.7, 2.5)
    assert more.startswith("With α = 1 the beam of five misses the normalised optimum for 16.7 %, "
                           "against 2.5 % at α = 0: the beam keeps")
    assert v.alpha1_note(1.7, 20.0) == ("With α = 1 the beam of five misses the normalised "
                                        "optimum for 1.7 %, against 20.0 % at α = 0")


def test_example_choice_says_how_the_example_was_picked():
    assert v.example_choice(True, 0.5) == ("the shortest in characters with no <unk>, a gain "
                                           "over 0.5 and the same output at k = 3")
    fallback = v.example_choice(False, 0.5)
    assert fallback.startswith("the sentence with no <unk> and the largest gain")
    assert "none with a gain over 0.5" in fallback


@pytest.mark.parametrize("gain, gains, text", [
    (3.45, [0.2, 0.4, 3.45], "a gain of 3.45, 8.6 times the median gain of the 3 improved "
                             "sentences"),
    (3.0, [0.1, 0.2, 0.3, 3.0], "a gain of 3.00, 12 times the median gain of the 4 improved "
                                "sentences"),
    (0.5, [0.4, 0.5, 0.6], "a gain of 0.50, near the median gain (0.50) of the 3 improved "
                           "sentences"),
    (0.1, [0.1, 0.5, 0.6], "a gain of 0.10, below the median gain (0.50) of the 3 improved "
                           "sentences"),
    (-0.2, [], "a gain of -0.20; the beam improved no sentence")])
def test_gain_note_places_the_example_against_the_median(gain, gains, text):
    assert v.gain_note(gain, gains) == text


def test_worse_intro_explains_a_count_and_allows_none():
    assert v.worse_intro(4, 400) == (
        "The course's beam of five found a less likely output than greedy for 4 of the 400 "
        "held-out sentences. How, if a beam contains greedy's first choice?")
    none = v.worse_intro(0, 400)
    assert "for none of the 400 held-out sentences, but it can happen" in none
    assert "How, if" not in none and none.endswith(".")

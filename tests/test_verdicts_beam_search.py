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


def test_alpha_default_note_says_what_the_default_does():
    assert "does no normalisation" in v.alpha_default_note(0.0)
    assert v.alpha_default_note(0.6) == ("The default, α = 0.6, was chosen on the validation "
                                         "sentences")


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


def test_k3_gain_never_speaks_of_a_gain_that_is_not_there():
    assert v.k3_gain({1: 30.0, 2: 30.5, 3: 31.0, 5: 31.0, 10: 30.8}) == (
        "a beam of three gets 100 % of the best improvement over greedy")
    assert v.k3_gain({1: 30.0, 3: 30.5, 5: 31.0}) == (
        "a beam of three gets 50 % of the best improvement over greedy")
    assert "no beam size scores above greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 29.5})
    assert "below greedy" in v.k3_gain({1: 30.0, 3: 29.0, 5: 31.0})


@pytest.mark.parametrize("greedy, beam, words", [
    (20, 3, "avoids 85 % of the misses"), (0, 0, "neither greedy decoding nor"),
    (3, 5, "more often than greedy decoding"), (0, 2, "more often than greedy decoding"),
    (10, 10, "avoids 0 % of the misses")])
def test_misses_closed(greedy, beam, words):
    assert words in v.misses_closed(greedy, beam)

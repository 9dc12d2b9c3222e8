"""lib.course.verdicts.bleu: the mean of sentence BLEUs against corpus BLEU, the leader of two
scores and the paired bootstrap, in words that follow the numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import bleu as v


@pytest.mark.parametrize("args, text", [
    ((35.9, 41.1, 30.2, 41.3), "The mean of sentence BLEUs, 41.10, lies above corpus BLEU, 35.90. "
                               "Scored on all four orders, it falls (30.20); weighted by tokens, "
                               "roughly as corpus BLEU's sums weigh sentences, it barely "
                               "changes (41.30)"),
    ((40.0, 30.0, 31.0, 35.0), "The mean of sentence BLEUs, 30.00, lies below corpus BLEU, 40.00. "
                               "Scored on all four orders, it rises (31.00); weighted by tokens, "
                               "roughly as corpus BLEU's sums weigh sentences, it rises (35.00)"),
    ((40.0, 40.2, 40.0, 40.0), "The mean of sentence BLEUs, 40.20, lies close to corpus BLEU, "
                               "40.00. Scored on all four orders, it barely changes (40.00); "
                               "weighted by tokens, roughly as corpus BLEU's sums weigh sentences, "
                               "it barely changes (40.00)")])
def test_mean_vs_corpus_says_where_the_mean_lies_and_where_each_change_moves_it(args, text):
    assert v.mean_vs_corpus(*args) == text


def test_leader_names_the_higher_score_and_never_a_negative_gap():
    assert v.leader(31.2, 30.0, "beam search", "greedy decoding") == \
        "beam search is ahead by 1.20 points"
    assert v.leader(30.0, 31.2, "beam search", "greedy decoding") == \
        "greedy decoding is ahead by 1.20 points"
    assert v.leader(30.0, 30.0, "a", "b") == "a and b are level"


def test_leader_gap_is_the_difference_of_the_printed_scores():
    """The page prints 49.33 and 46.70 (:.2f); the gap beside them reads 2.63, not the 2.64 of
    the unrounded scores."""
    assert v.leader(49.3349, 46.6951, "13a", "none") == "13a is ahead by 2.63 points"
    assert v.leader(30.004, 29.996, "a", "b") == "a and b are level"  # both print 30.00


@pytest.mark.parametrize("share, words", [(0.97, "the gain passes"), (0.95, "the gain passes"),
                                          (0.6, "neither lead passes"),
                                          (0.02, "the other system's lead passes")])
def test_bootstrap_verdict(share, words):
    assert words in v.bootstrap_verdict(share)


@pytest.mark.parametrize("share, low, high, words", [
    (0.999, 2.24, 3.86, "lies above zero, and the share is 99.9%: the two agree"),
    (0.975, 0.01, 1.2, "the two agree"),
    (0.974, 0.01, 1.2, "they disagree"),
    (0.60, -0.5, 1.0, "contains zero, and the share is 60.0%: the two agree"),
    (0.01, -3.0, -0.4, "lies below zero, and the share is 1.0%: the two agree"),
    (0.5, -3.0, -0.4, "they disagree")])
def test_bootstrap_agreement(share, low, high, words):
    """The share and the interval from the same resamples agree; the sentence says so."""
    assert words in v.bootstrap_agreement(share, low, high)


def test_bootstrap_agreement_refuses_impossible_inputs():
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.bootstrap_agreement(1.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="low end"):
        v.bootstrap_agreement(0.5, 1.0, 0.0)


@pytest.mark.parametrize("bp_greedy, bp_beam, words", [
    (0.968, 0.930, "the beam's outputs are the shorter ones"),
    (0.930, 0.968, "greedy's outputs are the shorter ones"),
    (0.950, 0.952, "about equally short"),
    (1.0, 0.999, "neither decoder's outputs are short enough to be penalised")])
@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_shorter_outputs_follows_the_penalties(bp_greedy, bp_beam, words, alpha):
    """The lower brevity penalty belongs to the shorter outputs; the sentence names that one."""
    text = v.shorter_outputs(bp_greedy, bp_beam, alpha)
    assert text.startswith("Counted that way, ") and words in text
    with pytest.raises(ValueError, match="between 0 and 1"):
        v.shorter_outputs(1.2, 0.9, alpha)


def test_shorter_outputs_says_whether_the_beam_normalised_length():
    """A shorter beam is said to run without normalisation only when alpha is 0, and with the
    alpha it used otherwise; a negative alpha is refused."""
    none = v.shorter_outputs(0.968, 0.930, 0.0)
    assert none.endswith("runs with alpha = 0")  # no claim about what another chapter found
    assert "even with" not in none
    some = v.shorter_outputs(0.968, 0.930, 0.6)
    assert "even with length normalisation" in some and "alpha = 0.6" in some
    assert "none" not in some
    for bp_greedy, bp_beam in ((0.930, 0.968), (0.950, 0.952), (1.0, 0.999)):
        assert "alpha" not in v.shorter_outputs(bp_greedy, bp_beam, 0.0)
    with pytest.raises(ValueError, match="0 or more"):
        v.shorter_outputs(0.968, 0.930, -0.5)

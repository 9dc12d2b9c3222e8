"""lib.course.verdicts.wording: every outcome a chapter's numbers can take gets words that say it.

Each test file of lib.course.verdicts (tests/test_verdicts_<module>.py) feeds a function each
possible outcome (and the edges between them) and checks that the wording follows the numbers,
so no seed, model or machine can make a page print a claim its own numbers contradict. This one
checks the words the chapters share: directions, comparisons, timings, counts and intervals.
"""

from __future__ import annotations

import pytest

from lib.course.verdicts import wording as v


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


@pytest.mark.parametrize("n, text", [(0, "0 sentences"), (1, "1 sentence"), (2, "2 sentences"),
                                     (1200, "1,200 sentences")])
def test_count_of_puts_the_noun_in_the_right_number(n, text):
    assert v.count_of(n, "sentence") == text
    assert v.count_of(1, "child", "children") == "1 child"
    assert v.count_of(3, "child", "children") == "3 children"
    with pytest.raises(ValueError, match="negative"):
        v.count_of(-1, "sentence")


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


@pytest.mark.parametrize("lo, hi, words", [
    (0.5, 3.0, "scores higher than"),
    (-3.0, -0.5, "scores lower than"),
    (-1.0, 1.0, "not told apart"),
])
def test_paired_difference(lo, hi, words):
    assert words in v.paired_difference(lo, hi, "A", "B")


def test_paired_difference_refuses_a_reversed_interval():
    with pytest.raises(ValueError):
        v.paired_difference(2.0, 1.0, "A", "B")


LONG_SUMMARY = "On the 95 sources of 25 tokens or more, {}."


@pytest.mark.parametrize("lo, hi, words", [
    (0.5, 3.0, "the attention copy scores higher than the fixed-vector copy (the 95 % interval "
               "of the difference lies above zero)."),
    (-3.0, -0.5, "the attention copy scores lower than the fixed-vector copy (the 95 % interval "
                 "of the difference lies below zero)."),
    (-1.0, 1.0, "the attention copy and the fixed-vector copy cannot be told apart (the 95 % "
                "interval of the difference includes zero)."),
])
def test_difference_clause_reads_in_the_summary_sentence(lo, hi, words):
    text = LONG_SUMMARY.format(v.difference_clause(lo, hi, "the attention copy",
                                                   "the fixed-vector copy"))
    assert text.endswith(words)
    assert "zero on sources" not in text


def test_difference_clause_refuses_a_reversed_interval():
    with pytest.raises(ValueError):
        v.difference_clause(1.0, -1.0, "A", "B")


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


def test_times_as_long_names_the_machine_the_times_come_from():
    text = v.times_as_long(3.0, 2.0, "training A", "B", machine="the machine that trained them")
    assert text == "training A took 1.5 times as long as B on the machine that trained them"
    assert v.times_as_long(3.0, 2.0).endswith("on the machine that built this page")

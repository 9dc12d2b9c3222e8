"""lib.course.verdicts.wrap_up: BLEU by source length, the walk-through sentence, copying and
search errors against model errors, in words that follow the numbers."""

from __future__ import annotations

import pytest

from lib.course.verdicts import wrap_up as v

BOTH = "the longer sources score 37.2, the shorter 34.9 (95 % interval of the difference"


@pytest.mark.parametrize("lo, hi, text", [
    (1.0, 5.0, f"rises with length: {BOTH} +1.0 to +5.0)"),
    (-5.0, -1.0, f"falls with length: {BOTH} -5.0 to -1.0)"),
    (-1.2, 5.7, f"does not clearly change with length (if anything, it rises): {BOTH} -1.2 "
                f"to +5.7, which includes zero)")])
def test_length_halves_follow_the_interval(lo, hi, text):
    assert v.length_halves(34.9, 37.2, lo, hi) == text


@pytest.mark.parametrize("short, long, lo, hi, words", [
    (33.9, 41.0, -1.3, 5.8, "does not clearly change with length (if anything, it rises)"),
    (41.0, 33.9, -5.8, 1.3, "does not clearly change with length (if anything, it falls)"),
    (36.0, 36.3, -3.0, 3.5, "does not clearly change with length"),
    (30.0, 36.0, 1.0, 9.0, "rises with length"),
    (36.0, 30.0, -9.0, -1.0, "falls with length")])
def test_length_trend_leans_with_the_measured_difference(short, long, lo, hi, words):
    """Inside an interval that includes zero, the lean follows the sign of long - short: the
    sentence cannot say 'rises' of numbers that fall, nor call a rise 'no change' alone."""
    assert v.length_trend(short, long, lo, hi) == words
    with pytest.raises(ValueError, match="low end"):
        v.length_trend(short, long, hi + 1, hi)


def test_length_halves_bad_interval():
    with pytest.raises(ValueError, match="low end"):
        v.length_halves(35.0, 36.0, 2.0, 1.0)


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


def test_copy_outcome_names_what_happened():
    assert v.copy_outcome("Tom", "railroads") == (
        "Some copies are right: «Tom» is written the same way in a reference. Others are not: "
        "«railroads» appears in no reference, which says it another way or not at all")
    assert v.copy_outcome("Tom", None).startswith("Every copied word appears")
    assert v.copy_outcome(None, "railroads").startswith("No copied word appears")
    assert v.copy_outcome(None, None) == "Nothing was copied"


@pytest.mark.parametrize("n_changed, n, start", [
    (0, 7, "Beam search changed none of these 7 translations: keeping alternatives"),
    (1, 7, "Beam search changed 1 of these 7 translations: at some step"),
    (3, 7, "Beam search changed 3 of these 7 translations: at some step"),
    (7, 7, "Beam search changed every one of these 7 translations: at some step"),
    (0, 1, "Beam search did not change the one translation: keeping alternatives"),
    (1, 1, "Beam search changed the one translation: at some step")])
def test_beam_changes_follows_the_count(n_changed, n, start):
    """None, one, some or all: the sentence never describes a change that did not happen."""
    text = v.beam_changes(n_changed, n)
    assert text.startswith(start)
    assert ("greedy kept only" in text) == (n_changed > 0)


def test_beam_changes_refuses_impossible_counts():
    for n_changed, n in ((-1, 7), (8, 7), (0, 0)):
        with pytest.raises(ValueError, match="expected"):
            v.beam_changes(n_changed, n)


def test_explorer_target_says_whether_the_beam_changed_it():
    assert v.explorer_target("We won.", True) == (
        "for «We won.», the first of these sentences whose translation it changed")
    assert v.explorer_target("We won.", False) == (
        "for «We won.», the first of these sentences (it changed none of them)")


def test_error_split_follows_the_counts():
    assert v.error_split(30, 70, "greedy decoding") == (
        "for 30 of the 100 outputs of greedy decoding that differ from every reference (30 %), "
        "a reference is more probable than the output: search errors; the other 70 are model "
        "errors by this test")
    assert v.error_split(0, 12, "the beam").startswith(
        "for none of the 12 outputs of the beam")
    assert "nothing to diagnose" in v.error_split(0, 0, "the beam")
    # the noun agrees with its count
    one = v.error_split(1, 92, "a beam of five")
    assert "than the output: a search error; the other 92 are model errors" in one
    assert "the other 1 is a model error by this test" in v.error_split(5, 1, "x")
    assert v.error_split(4, 0, "x").endswith("all are search errors by this test")
    assert "other" not in v.error_split(4, 0, "x")
    assert v.error_split(1, 0, "x") == (
        "for the one output of x that differs from every reference, a reference is more "
        "probable: a search error by this test")
    assert v.error_split(0, 1, "x").endswith("no reference is more probable: a model error by "
                                             "this test")
    with pytest.raises(ValueError, match="negative"):
        v.error_split(-1, 3, "x")

"""lib.course.verdicts.tensors: how a rate grows, in words that follow the ratio; in how many rows
a statement holds."""

from __future__ import annotations

import pytest

from lib.course.verdicts import tensors as v


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


@pytest.mark.parametrize("holds, words", [
    ([True] * 5, "at every"), ([True, False, True], "at some but not every"),
    ([False], "at no"), ([False, False], "at no"), ([True], "at every")])
def test_at_how_many_follows_the_rows(holds, words):
    assert v.at_how_many(holds) == words


def test_at_how_many_rejects_an_empty_table():
    with pytest.raises(ValueError, match="no rows"):
        v.at_how_many([])


@pytest.mark.parametrize("n_near, n_test, words", [
    (5, 2000, "near-duplicates across the split are rare, 5 of 2,000 (0.25%), so the split by "
     "string is close to leak-free by this key"),
    (0, 2000, "rare, 0 of 2,000 (0.00%)"), (19, 2000, "rare"),
    (20, 2000, "20 of 2,000 (1.00%) test sentences have a near-duplicate in training, so the "
     "split by string leaks a little by this key"),
    (100, 2000, "common, 100 of 2,000 (5.00%), so the split by string leaks here"),
    (2000, 2000, "common")])
def test_leak_verdict_follows_the_count(n_near, n_test, words):
    assert words in v.leak_verdict(n_near, n_test)


@pytest.mark.parametrize("n_near, n_test", [(1, 0), (-1, 10), (11, 10)])
def test_leak_verdict_rejects_impossible_counts(n_near, n_test):
    with pytest.raises(ValueError, match="n_near"):
        v.leak_verdict(n_near, n_test)

"""The tensors chapter's own sentences (book/tensors.md): how a rate grows, in how many rows
of a table a statement holds, and what a count of near-duplicates says about a split. Its other
verdicts are `wording`'s."""

from __future__ import annotations

from collections.abc import Sequence


def growth_words(before: float, after: float) -> str:
    """How a positive rate changed, in words: 'more than doubles', 'more than triples',
    'grows 1.5-fold', 'barely changes' or 'falls', from after / before."""
    if not (before > 0 and after >= 0):
        raise ValueError(f"rates must be positive, got {before!r}, {after!r}")
    ratio = after / before
    if ratio >= 3:
        return "more than triples"
    if ratio >= 2:
        return "doubles" if ratio == 2 else "more than doubles"
    if ratio >= 1.1:
        return f"grows {ratio:.1f}-fold"
    if ratio > 1 / 1.1:
        return "barely changes"
    return "falls"


def at_how_many(holds: Sequence[bool]) -> str:
    """In how many rows of a table a statement holds, to follow it: 'at every', 'at some but not
    every' or 'at no' (as in 'larger at every min_freq of the table')."""
    holds = [bool(h) for h in holds]
    if not holds:
        raise ValueError("no rows to count")
    if all(holds):
        return "at every"
    return "at some but not every" if any(holds) else "at no"


def leak_verdict(n_near: int, n_test: int) -> str:
    """What a count of test sentences with a near-duplicate in training says about a split by
    string: 'rare ... close to leak-free' under 1 % of the test set, 'a few ... leaks a little'
    under 5 %, else 'common ... leaks'. The count and its share are part of the sentence; 'by
    this key' since near-duplicates the key does not catch (paraphrases) are not counted."""
    if not (n_test > 0 and 0 <= n_near <= n_test):
        raise ValueError(f"need 0 <= n_near <= n_test, n_test > 0, got {n_near!r}, {n_test!r}")
    share = n_near / n_test
    count = f"{n_near:,} of {n_test:,} ({share:.2%})"
    if share < 0.01:
        return (f"near-duplicates across the split are rare, {count}, so the split by string "
                "is close to leak-free by this key")
    if share < 0.05:
        return (f"{count} test sentences have a near-duplicate in training, so the split by "
                "string leaks a little by this key")
    return (f"near-duplicates across the split are common, {count}, so the split by string "
            "leaks here and the stricter key matters")

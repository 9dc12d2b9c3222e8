"""The tensors chapter's own sentences (book/tensors.md): how a rate grows, and in how many rows
of a table a statement holds. Its other verdicts are `wording`'s."""

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

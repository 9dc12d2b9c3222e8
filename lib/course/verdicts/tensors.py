"""The tensors chapter's own sentence (book/tensors.md): how a rate grows. Its other verdicts
are `wording`'s."""

from __future__ import annotations


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

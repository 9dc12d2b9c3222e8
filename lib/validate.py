"""Type tests for argument checks, shared by lib and its exercise checkers.

`bool` is a subclass of `int` in Python, so `isinstance(True, int)` holds; a flag passed where a
count or a score belongs is a mistake, and these tests say no to it.
"""

from __future__ import annotations

import math
import numbers


def is_int(x) -> bool:
    """True for an int that is not a bool."""
    return isinstance(x, int) and not isinstance(x, bool)


def as_int(x):
    """x as a Python int when it is an int or a numpy integer (not a bool); else x unchanged,
    for the caller's own check to refuse."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    return x


def is_number(x, finite: bool = False) -> bool:
    """True for an int or float that is not a bool (and, with finite=True, not inf or nan)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    return not finite or math.isfinite(x)


def check_ids(ids, vocab_size: int, name: str) -> None:
    """ValueError naming the first id of the tensor `ids` outside the vocabulary 0 .. size - 1,
    instead of the embedding's bare index error."""
    bad = (ids < 0) | (ids >= vocab_size)
    if bad.any():
        where = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(f"{name} holds the id {int(ids[where])} at {where}, outside the "
                         f"vocabulary of {vocab_size} tokens (ids 0 to {vocab_size - 1})")

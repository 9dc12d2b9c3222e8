"""Long inputs made from the corpus itself: k consecutive sentence pairs joined into one.

Tatoeba's English sides are short (a handful of words), too short for one context vector to be
the limit. The attention chapter needs sources of 30 tokens and more, and no longer corpus can be
used here, so it builds them: shuffle one split's sentences with a seed, cut them into groups of
k = 1 … k_max, and join each group, English to English and French to French.

What this keeps: every joined source is made of sentences of *one* split, so a test source shares
no sentence with training (the split is by English sentence, `lib.data.split_by_source`), and
the French side is a correct translation, part by part. What it does not make: a real long
sentence. Joined parts are independent, so a model can translate them one by one; there are no
long-range agreements or reorderings across parts. The data tests one thing only: whether the
decoder can still reach the first sentence's words after reading the last.

References: a held-out English sentence has one or more French translations. The j-th reference
of a joined source joins each part's j-th translation (its last one when it has fewer), so every
reference is a whole translation and BLEU sees as many references as the richest part has.

    groups = joined_groups(split.test, k_max=5, seed=0)      # [(English, [references])]
    pairs = joined_train_pairs(split.train, k_max=5, n=40_000, seed=0)
"""

from __future__ import annotations

import random

from lib.validate import is_int


def _check(k_max, seed) -> None:
    if not is_int(k_max) or k_max < 1:
        raise ValueError(f"k_max (the most sentences joined into one) must be an integer >= 1, "
                         f"got {k_max!r}")
    if not is_int(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")


def group_sizes(n_items: int, k_max: int, seed: int) -> list[int]:
    """Sizes k of consecutive groups covering n_items: k cycles through 1 … k_max in a seeded
    order, so every k is equally common (the last group takes what is left)."""
    rng = random.Random(seed)
    sizes, used = [], 0
    while used < n_items:
        cycle = list(range(1, k_max + 1))
        rng.shuffle(cycle)
        for k in cycle:
            k = min(k, n_items - used)
            if k == 0:
                break
            sizes.append(k)
            used += k
    return sizes


def join_references(parts: list[list[str]]) -> list[str]:
    """The references of a joined source: the j-th joins each part's j-th (or last) reference."""
    if not parts or any(not refs for refs in parts):
        raise ValueError("every part needs at least one reference")
    n = max(len(refs) for refs in parts)
    return [" ".join(refs[min(j, len(refs) - 1)] for refs in parts) for j in range(n)]


def joined_groups(held_out: list[tuple[str, list[str]]], k_max: int = 5, seed: int = 0
                  ) -> list[tuple[str, list[str], int]]:
    """Join a held-out split's (English, [references]) items into (English, [references], k).

    Each item is used exactly once, in a seeded order: the split's sentences, all of them, in
    groups of 1 … k_max.
    """
    _check(k_max, seed)
    order = list(range(len(held_out)))
    random.Random(seed).shuffle(order)
    out, i = [], 0
    for k in group_sizes(len(order), k_max, seed + 1):
        parts = [held_out[j] for j in order[i:i + k]]
        i += k
        out.append((" ".join(en for en, _ in parts), join_references([r for _, r in parts]), k))
    return out


def joined_train_pairs(train: list[tuple[str, str]], k_max: int = 5, n: int = 40_000,
                       seed: int = 0) -> list[tuple[str, str]]:
    """`n` (English, French) training pairs, each of k = 1 … k_max training pairs joined.

    Training pairs may repeat an English sentence (one pair per translation); a joined pair
    takes k pairs drawn without replacement within a pass over the shuffled pairs, and as many
    passes as `n` needs, each with its own seeded order.
    """
    _check(k_max, seed)
    if not is_int(n) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not train:
        raise ValueError("no training pairs to join")
    out: list[tuple[str, str]] = []
    rng = random.Random(seed)
    while len(out) < n:
        order = list(range(len(train)))
        rng.shuffle(order)
        i = 0
        for k in group_sizes(len(order), k_max, rng.randrange(1 << 30)):
            parts = [train[j] for j in order[i:i + k]]
            i += k
            out.append((" ".join(en for en, _ in parts), " ".join(fr for _, fr in parts)))
            if len(out) == n:
                break
    return out

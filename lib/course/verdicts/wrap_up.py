"""The sentences of the wrap-up (book/wrap_up.md): BLEU by source length, the walk-through
sentence (chosen by its content), what copying unknown words did, and search errors against
model errors."""

from __future__ import annotations

from collections.abc import Sequence


def length_trend(short: float, long: float, lo: float, hi: float,
                 tolerance: float = 0.5) -> str:
    """What BLEU does with source length, from the corpus BLEU of the shorter half (`short`),
    of the longer half (`long`) and the 95 % bootstrap interval (lo, hi) of long - short:
    'rises' or 'falls' when the interval excludes zero; otherwise 'does not clearly change',
    with the direction the measured difference leans when it is beyond `tolerance`, so that
    no change is not read as flat when the numbers lean one way."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    if lo > 0:
        return "rises with length"
    if hi < 0:
        return "falls with length"
    lean = long - short
    if lean > tolerance:
        return "does not clearly change with length (if anything, it rises)"
    if lean < -tolerance:
        return "does not clearly change with length (if anything, it falls)"
    return "does not clearly change with length"


def length_halves(short: float, long: float, lo: float, hi: float, cut: int) -> str:
    """`length_trend` with both scores and the interval, so the reader sees which way they
    lean: corpus BLEU of the sources up to `cut` tokens (`short`) and of the longer ones."""
    trend = length_trend(short, long, lo, hi)
    both = (f"sources of more than {cut} tokens score {long:.1f}, those of {cut} or fewer "
            f"{short:.1f} (95 % interval of the difference {lo:+.1f} to {hi:+.1f}")
    if lo > 0 or hi < 0:
        return f"{trend}: {both})"
    return f"{trend}: {both}, which includes zero)"


def pick_example(items: Sequence[tuple[str, list[str]]], tokenize, known,
                 min_tokens: int = 4, max_tokens: int = 6) -> tuple[str, list[str]]:
    """The walk-through sentence of a page, chosen by what it contains rather than by its
    text: the first (English, [references]) item whose source has min_tokens to max_tokens
    tokens, all of them known to the model (`known`), and at least two references, so its
    BLEU line compares with more than one. Falls back to the first item with every token
    known, then to the first item."""
    if not items:
        raise ValueError("no sentences to choose from")
    for strict in (True, False):
        for en, refs in items:
            tokens = tokenize(en)
            if all(t in known for t in tokens) and (not strict or (
                    min_tokens <= len(tokens) <= max_tokens and len(refs) >= 2)):
                return en, refs
    return items[0]


def copy_outcome(right: str | None, wrong: str | None) -> str:
    """What copying unknown source words did, from one copied word that a reference contains
    (`right`) and one that no reference contains (`wrong`); None where there is none."""
    if right and wrong:
        return (f"Some copies are right: «{right}» is written the same way in a reference. "
                f"Others are not: «{wrong}» appears in no reference, which says it another "
                f"way or not at all")
    if right:
        return (f"Every copied word appears in a reference of its sentence («{right}», for "
                f"one)")
    if wrong:
        return (f"No copied word appears in a reference of its sentence («{wrong}», for one): "
                f"the references say each another way or not at all")
    return "Nothing was copied"


def error_split(n_search: int, n_model: int, who: str) -> str:
    """How many of a decoder's wrong outputs a reference shows to be search errors."""
    if n_search < 0 or n_model < 0:
        raise ValueError("counts cannot be negative")
    n = n_search + n_model
    if n == 0:
        return f"{who} wrote a reference for every sentence: nothing to diagnose"
    if n_search == 0:
        return (f"for none of the {n:,} outputs of {who} that differ from every reference is a "
                f"reference more probable: all {n:,} are model errors by this test")
    return (f"for {n_search:,} of the {n:,} outputs of {who} that differ from every reference "
            f"({100 * n_search / n:.0f} %), a reference is more probable than the output: search "
            f"errors; the other {n_model:,} are model errors by this test")

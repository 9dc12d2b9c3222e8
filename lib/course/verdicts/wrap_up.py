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


def length_halves(short: float, long: float, lo: float, hi: float) -> str:
    """`length_trend` with both scores and the interval, so the reader sees which way they
    lean: corpus BLEU of the sources up to the cut (`short`) and of the longer ones."""
    trend = length_trend(short, long, lo, hi)
    both = (f"the longer sources score {long:.1f}, the shorter {short:.1f} (95 % interval of "
            f"the difference {lo:+.1f} to {hi:+.1f}")
    if lo > 0 or hi < 0:
        return f"{trend}: {both})"
    return f"{trend}: {both}, which includes zero)"


def beam_changes(n_changed: int, n: int) -> str:
    """How many of the page's own sentences beam search translated differently from greedy
    decoding, with what that means when it is none, some or all of them."""
    if not 0 <= n_changed <= n or n < 1:
        raise ValueError(f"expected 0 <= {n_changed} <= {n} and at least one sentence")
    these = "the one translation" if n == 1 else f"these {n} translations"
    if n_changed == 0:
        did = f"did not change {these}" if n == 1 else f"changed none of {these}"
        return (f"Beam search {did}: keeping alternatives at every step, it still ended on "
                f"greedy's sentence")
    if n_changed == n:
        which = these if n == 1 else f"every one of {these}"
    else:
        which = f"{n_changed} of {these}"
    return (f"Beam search changed {which}: at some step greedy kept only its most likely word, "
            f"where the beam also kept alternatives and in the end chose among whole sentences "
            f"by their score")


def explorer_target(sentence: str, changed: bool) -> str:
    """Which sentence the beam explorer shows: the first one whose translation beam search
    changed, or, where it changed none, the first of all (and the page says so)."""
    if changed:
        return f"for «{sentence}», the first of these sentences whose translation it changed"
    return f"for «{sentence}», the first of these sentences (it changed none of them)"


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
    if n == 1:
        kind = ("a reference is more probable: a search error" if n_search else
                "no reference is more probable: a model error")
        return f"for the one output of {who} that differs from every reference, {kind} by this test"
    if n_search == 0:
        return (f"for none of the {n:,} outputs of {who} that differ from every reference is a "
                f"reference more probable: all {n:,} are model errors by this test")
    if n_model == 0:
        return (f"for all {n:,} outputs of {who} that differ from every reference, a reference "
                f"is more probable than the output: all are search errors by this test")
    search = "a search error" if n_search == 1 else "search errors"
    model = "is a model error" if n_model == 1 else "are model errors"
    return (f"for {n_search:,} of the {n:,} outputs of {who} that differ from every reference "
            f"({100 * n_search / n:.0f} %), a reference is more probable than the output: "
            f"{search}; the other {n_model:,} {model} by this test")

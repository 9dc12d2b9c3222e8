"""The sentences of the decoder chapter (book/decoder.md): where backpropagation through time
sends the gradient, the wiring experiment's paired comparisons, and the context-swap
experiment's routes."""

from __future__ import annotations

import math
from collections.abc import Sequence


def gradient_reach(norms: Sequence[float], tokens: Sequence[str]) -> str:
    """Which source tokens receive the largest and the smallest gradient (norms measured per
    source position, in order), and how many times smaller the smallest is."""
    if len(norms) != len(tokens) or len(norms) < 2:
        raise ValueError(f"need one norm per token and at least two tokens, got {len(norms)} "
                         f"norms for {len(tokens)} tokens")
    if any(not math.isfinite(x) or x < 0 for x in norms):
        raise ValueError(f"gradient norms are finite and >= 0, got {list(norms)!r}")
    hi = max(range(len(norms)), key=lambda i: norms[i])
    lo = min(range(len(norms)), key=lambda i: norms[i])
    S = len(norms)
    if norms[hi] == norms[lo]:
        return f"every one of the {S} source tokens receives the same gradient norm"
    smallest = (f"«{tokens[lo]}» (position {lo + 1}) receives no gradient at all"
                if norms[lo] == 0 else
                f"the smallest reaches «{tokens[lo]}» (position {lo + 1}), "
                f"{norms[hi] / norms[lo]:.1f} times smaller")
    return (f"the largest gradient reaches «{tokens[hi]}» (position {hi + 1} of {S}) and "
            f"{smallest}")


def _paired_stats(only_a: int, only_b: int, n: int) -> tuple[float, float]:
    """(a's share right minus b's, its standard error) from the discordant counts of n items."""
    for count in (only_a, only_b, n):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"counts must be integers >= 0, got {count!r}")
    if n < 1 or only_a + only_b > n:
        raise ValueError(f"need n >= 1 and at most n discordant items, got {only_a} + "
                         f"{only_b} of {n}")
    gap = (only_a - only_b) / n
    return gap, math.sqrt(max(only_a + only_b - (only_a - only_b) ** 2 / n, 0.0)) / n


def paired_gap(only_a: int, only_b: int, n: int, name_a: str, name_b: str,
               z: float = 2.0) -> str:
    """Two models scored on the same n items, from the discordant ones: `only_a` items that
    only a gets right, `only_b` that only b does. Which is ahead, by how many points, and
    whether that is more than z standard errors of the paired difference (McNemar's view:
    items both get right or both get wrong say nothing about which is better)."""
    gap, se = _paired_stats(only_a, only_b, n)
    if only_a == only_b:
        return (f"{name_a} and {name_b} get the same share right ({only_a} items only one of "
                f"them gets right, {only_b} only the other)")
    (lead, ahead, behind), (trail, _, _) = sorted(
        [(only_a, name_a, name_b), (only_b, name_b, name_a)], reverse=True)
    gap = abs(gap)
    text = (f"{ahead} is ahead of {behind} by {100 * gap:.1f} points ({lead} items only it gets "
            f"right, {trail} only the other)")
    where = "beyond" if gap > z * se else "within"
    return f"{text}, {where} the noise of about {100 * z * se:.1f} points"


def _paired_side(only_a: int, only_b: int, n: int, z: float = 2.0) -> int:
    """+1 when a is ahead of b by more than z standard errors of the paired difference (as in
    `paired_gap`), -1 when b is, 0 when the gap is within that noise."""
    gap, se = _paired_stats(only_a, only_b, n)
    if only_a == only_b or abs(gap) <= z * se:
        return 0
    return 1 if gap > 0 else -1


def _wiring_case(on_vs_off: tuple[int, int], on_vs_wide: tuple[int, int],
                 wide_vs_off: tuple[int, int], n: int, z: float) -> str:
    """Which outcome the three paired comparisons of `wiring_summary` show, as a key."""
    off = _paired_side(*on_vs_off, n, z)
    wide = _paired_side(*on_vs_wide, n, z)
    wide_off = _paired_side(*wide_vs_off, n, z)
    if off == 0:
        return "level"
    if off < 0:
        return "behind"
    if wide != 0:
        return "beats wide" if wide > 0 else "wide wins"
    return {1: "size", 0: "inconclusive", -1: "inconclusive behind"}[wide_off]


def wiring_summary(on_vs_off: tuple[int, int], on_vs_wide: tuple[int, int],
                   wide_vs_off: tuple[int, int], n: int, z: float = 2.0) -> str:
    """The decoder chapter's wiring experiment, from discordant counts on the same n held-out
    items, each pair (only the first model right, only the second right): the fed-context model
    against the model of the same width without it, the fed-context model against the wider
    one without it (about as many weights, wider states), and the wider one against the
    narrow one. Each gap is weighed against z standard errors of the paired difference. Says
    only which gaps are beyond that noise; it credits the gap to the wiring rather than to
    size only when the fed context also beats the wider model."""
    case = _wiring_case(on_vs_off, on_vs_wide, wide_vs_off, n, z)
    noise = f"the noise of {n:,} held-out sequences"
    no_help = "this run does not show that feeding the context helps"
    lead = f"the fed context beats the initial state only beyond {noise}"
    return {
        "level": (f"the gap between the fed context and the initial state only is within "
                  f"{noise}: {no_help}"),
        "behind": f"the initial state only beats the fed context beyond {noise}: {no_help}",
        "beats wide": (f"{lead}, and beats the wider model without it too: on this seed a "
                       f"model of about its size does not close the gap"),
        "wide wins": (f"{lead}, but the wider model without it beats the fed context beyond "
                      f"that noise: on this seed the wiring is not what wins"),
        "size": (f"{lead}; the wider model without it also does, level with the fed one "
                 f"within that noise: this run cannot tell wiring from size"),
        "inconclusive": (f"{lead}; the wider model without it is within that noise of both: "
                         f"the size control is inconclusive"),
        "inconclusive behind": (f"{lead}; the wider model without it is within that noise of "
                                f"the fed one but behind the other: the size control is "
                                f"inconclusive"),
    }[case]


def wiring_takeaway(on_vs_off: tuple[int, int], on_vs_wide: tuple[int, int],
                    wide_vs_off: tuple[int, int], n: int, z: float = 2.0) -> str:
    """The conclusion of `wiring_summary` alone, in a few words, for the chapter's summary:
    what the run says about feeding the context, from the same counts and the same test."""
    return {
        "level": "the run does not show that feeding the context helps",
        "behind": "the run does not show that feeding the context helps",
        "beats wide": "the fed context beats both controls, the wider model included",
        "wide wins": "the wider model without the fed context wins, so the wiring is not "
                     "what helps",
        "size": "the wider model without the fed context does about as well, so the toy cannot "
                "tell wiring from size",
        "inconclusive": "the fed context beats the initial state only, but the size control "
                        "is inconclusive",
        "inconclusive behind": "the fed context beats the initial state only, but the size "
                               "control is inconclusive",
    }[_wiring_case(on_vs_off, on_vs_wide, wide_vs_off, n, z)]


def _span(shares: Sequence[float]) -> str:
    """'71.6–76.0 %' from the smallest and largest share, or '74.0 %' when they print alike."""
    lo, hi = f"{min(shares):.1f}", f"{max(shares):.1f}"
    return f"{lo} %" if lo == hi else f"{lo}–{hi} %"


def _signed(x: float) -> str:
    return "0.0" if x == 0 else f"{x:+.1f}"


def _per_seed(on: Sequence[float], other: Sequence[float], points: str, seeds: str) -> str:
    """'+4.6 to +7.2 points (ahead on 3 of 3 seeds)': the fed context's share minus the other
    run's, seed by seed, each rounded to the 0.1 point the page prints (so a gap that prints as
    0.0 counts neither as ahead nor as behind)."""
    gaps = [round(a - b, 1) for a, b in zip(on, other)]
    ahead, behind = sum(g > 0 for g in gaps), sum(g < 0 for g in gaps)
    lo, hi = _signed(min(gaps)), _signed(max(gaps))
    span = lo if lo == hi else f"{lo} to {hi}"
    count = f"ahead on {ahead}{seeds}" + (f", behind on {behind}" if behind else "")
    return f"{span}{points} ({count})"


def seed_conclusion(on: Sequence[float], off: Sequence[float], wide: Sequence[float]) -> str:
    """What the wiring experiment's training seeds show, from the exact-reversal shares (%, one
    per seed, in the same seed order) of the fed context, the initial state only and the wider
    model: seed by seed, the fed context's gap to each other run, and on how many seeds it is
    ahead or behind. Counts only; it makes no claim about noise."""
    for shares in (on, off, wide):
        if len(shares) != len(on) or len(shares) < 2:
            raise ValueError("need the same number of seeds, at least two, for the three runs")
        if any(not math.isfinite(x) or not 0 <= x <= 100 for x in shares):
            raise ValueError(f"shares are percentages, got {list(shares)!r}")
    n = f" of {len(on)} seeds"
    return (f"the fed context's gap to the initial state only is "
            f"{_per_seed(on, off, ' points', n)}; to the wider model, "
            f"{_per_seed(on, wide, '', '')}")


def seed_ranges(on: Sequence[float], off: Sequence[float], wide: Sequence[float]) -> str:
    """The wiring experiment's three runs under several training seeds: each run's range of
    exact-reversal shares (%); `seed_conclusion` compares them seed by seed."""
    seed_conclusion(on, off, wide)  # the same checks of the input
    return (f"over {len(on)} training seeds, exact reversals range {_span(on)} with the context "
            f"fed, {_span(off)} without and {_span(wide)} for the wider model")


def followed(score_states: float, score_context: float, margin: float = 10.0) -> str:
    """Which source an output translates, from its similarity (e.g. BLEU, 0-100) to the
    translation of the sentence that gave the initial states and to that of the sentence
    whose context was fed: 'the initial states', 'the context', or 'neither' when the two
    scores are within `margin` of each other."""
    if score_states - score_context > margin:
        return "the initial states"
    if score_context - score_states > margin:
        return "the context"
    return "neither"


def context_swap_verdict(routes: Sequence[str], changed: int) -> str:
    """The verdict of the context-swap experiment, from `followed` in each direction and the
    number of swapped outputs that differ, as strings, from the translation of the sentence
    their initial states come from: only when none differs may it say that the fed context
    changes nothing."""
    n = len(routes)
    if isinstance(changed, bool) or not isinstance(changed, int) or not 0 <= changed <= n:
        raise ValueError(f"changed counts swapped outputs, 0 to {n}, got {changed!r}")
    routes = set(routes)
    if routes == {"the context"}:
        return ("in both directions the output translates the sentence whose context is fed: "
                "on these sentences the model follows the fed context, not its initial states")
    if routes == {"the initial states"} and not changed:
        return ("in both directions the output is word for word the translation of the sentence "
                "the initial states come from: here the fed context does not change the output")
    if routes == {"the initial states"}:
        differ = ("both outputs differ" if changed == n == 2 else
                  f"{changed} of the {n} outputs {'differs' if changed == 1 else 'differ'}")
        return (f"in both directions the output follows the sentence the initial states come "
                f"from, but {differ} from its translation: the fed context still changes the "
                f"output")
    if routes == {"neither"}:
        return ("in neither direction is the output clearly the translation of one of the two "
                "sentences: this model mixes both routes")
    return ("the two directions disagree, so neither route decides the output on its own "
            "for this model")


def unsure_stop(tokens: Sequence[str], probs: Sequence[float], min_prob: float) -> str:
    """Where a greedy loop that stops before its first token below `min_prob` stops, given the
    tokens and probabilities of the full greedy output, and whether that token is also the
    least sure one. The least sure token can only be the stopping one or a later one: every
    token before the first below `min_prob` is at or above it."""
    if len(tokens) != len(probs) or not tokens:
        raise ValueError(f"need one probability per token, got {len(tokens)} tokens and "
                         f"{len(probs)} probabilities")
    if any(not 0 <= p <= 1 for p in probs):
        raise ValueError(f"probabilities lie in [0, 1], got {list(probs)!r}")
    first = next((i for i, p in enumerate(probs) if p < min_prob), None)
    least = min(range(len(probs)), key=lambda i: probs[i])  # the first of equal minima
    sure = f"«{tokens[least]}» ({probs[least]:.2f})"
    if first is None:
        return f"no token is below {min_prob:g}, so it writes them all; the least sure is {sure}"
    stop = f"it stops before «{tokens[first]}» ({probs[first]:.2f}), the first token below " \
           f"{min_prob:g}"
    if first == least:
        return f"{stop}, which is also the least sure token of the whole output"
    return f"{stop}; the least sure token, {sure}, comes later, so the two differ"

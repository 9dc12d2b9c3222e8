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


def wiring_summary(on_vs_off: tuple[int, int], on_vs_wide: tuple[int, int], n: int,
                   z: float = 2.0) -> str:
    """The decoder chapter's wiring experiment, from discordant counts on the same n held-out
    items: (only the fed-context model right, only the other right) against the model of the
    same width without the fed context, and against the wider one without it, which has about
    as many weights and wider states. Says what the gaps, weighed against the paired noise,
    can attribute to the wiring and what as well to size."""
    off = _paired_side(*on_vs_off, n, z)
    wide = _paired_side(*on_vs_wide, n, z)
    noise = f"the noise of these {n:,} held-out sequences"
    if off == 0:
        return (f"the fed context's lead over the initial state only is within {noise}: this "
                f"run does not show that feeding the context helps")
    if off < 0:
        return (f"the initial state only does better than the fed context, beyond {noise}: this "
                f"run does not show that feeding the context helps")
    lead = f"the fed context is ahead of the initial state only, beyond {noise}"
    if wide > 0:
        return (f"{lead}, and ahead of the wider model without it too: on this seed and budget "
                f"the wiring, not extra capacity, explains the gap")
    if wide == 0:
        return (f"{lead}, but the wider model without it is within that noise: extra capacity "
                f"explains the gap as well as the wiring")
    return (f"{lead}, but the wider model without it does better still, beyond the noise: "
            f"extra capacity, not the wiring, explains the gap here")


def _span(shares: Sequence[float]) -> str:
    """'71.6–76.0 %' from the smallest and largest share, or '74.0 %' when they print alike."""
    lo, hi = f"{min(shares):.1f}", f"{max(shares):.1f}"
    return f"{lo} %" if lo == hi else f"{lo}–{hi} %"


def _ranges(a: Sequence[float], b: Sequence[float]) -> int:
    """+1 when every share of a is above every share of b, -1 when below, 0 when they overlap."""
    if min(a) > max(b):
        return 1
    if max(a) < min(b):
        return -1
    return 0


def seed_conclusion(on: Sequence[float], off: Sequence[float], wide: Sequence[float]) -> str:
    """What the wiring experiment's training seeds show: the fed context's exact-reversal
    shares (%, one per seed) against those of the initial state only and of the wider model;
    a run leads another only where their ranges do not overlap."""
    for shares in (on, off, wide):
        if len(shares) != len(on) or len(shares) < 2:
            raise ValueError("need the same number of seeds, at least two, for the three runs")
        if any(not math.isfinite(x) or not 0 <= x <= 100 for x in shares):
            raise ValueError(f"shares are percentages, got {list(shares)!r}")
    vs_off, vs_wide = _ranges(on, off), _ranges(on, wide)
    if vs_off < 0:
        return "the initial state only leads the fed context on every seed"
    if vs_off == 0:
        return "the first two ranges overlap, so the seed moves a run as much as the wiring does"
    if vs_wide > 0:
        return "the fed context leads both others on every seed"
    if vs_wide == 0:
        return "the fed context leads the initial state only on every seed, not the wider model"
    return "the fed context leads the initial state only on every seed, the wider model leads it"


def seed_ranges(on: Sequence[float], off: Sequence[float], wide: Sequence[float]) -> str:
    """The wiring experiment's three runs under several training seeds: each run's range of
    exact-reversal shares (%), then `seed_conclusion`."""
    conclusion = seed_conclusion(on, off, wide)
    return (f"over {len(on)} training seeds, exact reversals range {_span(on)} with the context "
            f"fed, {_span(off)} without and {_span(wide)} for the wider model: {conclusion}")


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

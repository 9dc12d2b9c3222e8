"""The sentences of the prediction-head chapter (book/prediction_head.md): the settings
sweep's evidence on label smoothing, its uniform term, the least sure steps of a translation,
what the sampled softmax's drawn words add to a shortlist, and calibration against sampling
noise."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def smoothing_gap(measured: float, design: float, tolerance: float = 0.25) -> str:
    """The uniform term of label smoothing as measured, against -log(eps / n), its value for
    a model whose distribution equals the smoothed target (both in nats per position). A term
    above it can come from less than eps left to the other words as well as from an uneven
    spread, so the sentence names both."""
    gap = measured - design
    if gap > tolerance:
        return (f"{gap:.1f} nats above the {design:.1f} of a model matching the smoothed "
                f"target exactly. On (geometric) average a column gets "
                f"{math.exp(gap):.1f} times less than ε/n, so the model leaves the other words "
                f"less than the target does, or spreads it unevenly")
    if gap < -tolerance:
        return (f"{-gap:.1f} nats below the {design:.1f} of a model that matched the smoothed "
                f"target exactly: the columns other than the reference get more than "
                f"ε/n on (geometric) average")
    return (f"within {tolerance:g} nats of the {design:.1f} of a model that matched the "
            f"smoothed target exactly")


def sweep_gains(gains: Sequence[float], seed_scores: Sequence[float], z: float = 2.0) -> str:
    """The settings sweep's evidence on label smoothing: the BLEU gain of each pair of runs that
    differ only in epsilon (with minus without), against the noise of such a difference. Runs
    that differ only in their seed give the standard deviation of one run's BLEU; a difference
    of two independent runs varies sqrt(2) times as much, and a gain counts only beyond `z`
    times that. A few seeds give only a rough standard deviation, so even a gain that counts
    is evidence, not a measured size."""
    if not gains or len(seed_scores) < 2:
        raise ValueError(f"need at least one gain and two seeds, got {len(gains)} and "
                         f"{len(seed_scores)}")
    if any(not math.isfinite(x) for x in [*gains, *seed_scores]):
        raise ValueError("gains and scores must be finite")
    sd = statistics.stdev(seed_scores)
    noise = math.sqrt(2) * sd  # the standard deviation of a difference of two runs
    times = "twice" if z == 2 else f"{z:g} times"
    head = (f"{len(seed_scores)} seeds give a standard deviation of {sd:.2f} BLEU, so about "
            f"{noise:.2f} for a difference of two runs")
    beyond = [g for g in gains if g > z * noise]
    within = [g for g in gains if abs(g) <= z * noise]
    lower = [g for g in gains if g < -z * noise]
    n = len(gains)
    if lower:
        return (f"{head}; in {len(lower)} of the {n} pairs smoothing lowered BLEU by over "
                f"{times} that: the sweep does not show that it helps")
    if not within:
        each = f"each of the {n} gains is" if n > 1 else "the gain is"
        return (f"{head}; {each} over {times} that: evidence that smoothing helps, not a "
                f"measured size of its effect")
    if not beyond:
        return (f"{head}; no gain is over {times} that: the sweep does not show that smoothing "
                f"helps")
    rest = " and ".join(f"{g:.2f}" for g in within)
    other = ("the other" if len(within) == 1 else "the others") + f", {rest}, "
    return (f"{head}; {len(beyond)} of the {n} gains {'is' if len(beyond) == 1 else 'are'} over "
            f"{times} that, {other}{'is' if len(within) == 1 else 'are'} not: weak evidence "
            f"that smoothing helps")


def two_way_choice(first: str, p_first: float, second: str, p_second: float,
                   together: float = 0.8) -> str:
    """An unsure step described by its two favourite words: a choice between two words when
    they hold at least `together` of the probability between them, a wider spread otherwise.
    Three decimals, so that a favourite just below even odds does not read as 0.50."""
    if not 0 <= p_second <= p_first <= 1:
        raise ValueError(f"need 0 <= p_second <= p_first <= 1, got {p_first!r}, {p_second!r}")
    # the share from the two numbers as printed, so that the parts add up to it
    both = round(p_first, 3) + round(p_second, 3)
    head = (f"«{first}» gets {p_first:.3f} and «{second}» {p_second:.3f}")
    if both >= together:
        return (f"{head}: {100 * both:.0f}% of the probability between them, a choice between "
                f"two words rather than ignorance")
    return (f"{head}, only {100 * both:.0f}% between them: the rest is spread over other "
            f"words")


def unsure_spread(words: Sequence[str], probs: Sequence[float], unk: str = "<unk>") -> str:
    """The least sure step: its favourite words, how much the listed words hold together, and
    whether the favourite is the unknown-word token (probs sorted, largest first)."""
    if not words or len(words) != len(probs):
        raise ValueError(f"need one probability per word, got {len(words)} words and "
                         f"{len(probs)} probabilities")
    if any(b > a for a, b in zip(probs, probs[1:])):
        raise ValueError(f"probabilities must be sorted, largest first, got {list(probs)!r}")
    listed = ", ".join(f"«{w}» {p:.2f}" for w, p in zip(words[:3], probs[:3]))
    mass = sum(probs)
    text = (f"its favourite words are {listed}, and the {len(words)} most likely words hold "
            f"{100 * mass:.0f}% of the probability together")
    if words[0] == unk:
        text += f"; the favourite is {unk}, the unknown-word token"
    if mass < 0.5:
        text += ": the probability is spread thin"
    return text


def drawn_words_gap(full: float, listed: float, sampled: float) -> str:
    """What the sampled softmax's drawn words add to a shortlist: the losses (nats per token)
    over all words, over the listed words alone, and over the list plus the drawn words with
    their offset. The list alone can only be lower than the full loss (its denominator leaves
    out words); the drawn words stand in for those, so the share of that gap they close says
    how well one draw estimates the full denominator."""
    if not all(math.isfinite(x) for x in (full, listed, sampled)):
        raise ValueError(f"losses must be finite, got {(full, listed, sampled)!r}")
    if listed > full + 1e-6:
        raise ValueError(f"the list alone cannot have a larger loss than all words, got "
                         f"{listed!r} > {full!r}")
    gap = full - listed
    if gap < 5e-4:
        return "the list alone already gives the loss over all words"
    left = abs(full - sampled)
    side = "below" if sampled < full else "above"
    if left > gap:
        return (f"{left:.3f} nats {side} the loss over all words, further than the list alone: "
                f"this draw's words do not stand in for the words outside the list")
    if sampled > full:
        return (f"{left:.3f} nats above the loss over all words, nearer to it than the list "
                f"alone, {gap:.3f} below: the drawn words stand in for the words outside the "
                f"list, with this draw's noise")
    closed = 100 * (1 - left / gap)
    how = "most" if closed >= 50 else "only part"
    return (f"the drawn words, standing in for the words outside the list, close {how} of the "
            f"{gap:.3f} nats between the list alone and all words ({closed:.0f}%)")


def timed_pads(pad_share: float) -> str:
    """What padding adds to the timed ratio of the full head to the shortlist: the full head,
    as training runs it, reads every position, pads included; the shortlist reads real ones
    only. `pad_share` is the batch's share of pad positions, in percent. A sentence."""
    if not 0 <= pad_share <= 100:
        raise ValueError(f"a share of positions must be in [0, 100], got {pad_share!r}")
    if pad_share < 0.5:
        return "This batch has no pad positions, so none of that ratio comes from padding"
    return (f"Part of that ratio comes from the batch's {pad_share:.0f}% of pad positions, which "
            f"the full head, as in training, runs on and the shortlist skips")


def fullest_bar(lo: float, hi: float, optimum: float) -> str:
    """Where the histogram's fullest bar of P(top), [lo, hi), lies against `optimum`, the
    reference word's probability at which the smoothed loss is lowest (1 - eps + eps / |S|)."""
    if not 0 <= lo < hi <= 1:
        raise ValueError(f"need 0 <= lo < hi <= 1, got {lo!r}, {hi!r}")
    if lo <= optimum < hi:
        edge = (" at its lower edge" if optimum - lo < (hi - lo) / 10
                else " at its upper edge" if hi - optimum < (hi - lo) / 10 else "")
        return f"the bar that holds that optimum, {optimum:.4f},{edge}".rstrip(",")
    return f"{'above' if lo > optimum else 'below'} that optimum, {optimum:.4f}"


def wrong_scores(wrong: int, too_low: int, n: int) -> str:
    """Whether a scorer that feeds the model's own argmax scores references too high or too
    low: `wrong` of `n` references scored wrong, `too_low` of them below the right score."""
    if not 0 <= too_low <= wrong <= n:
        raise ValueError(f"need 0 <= too_low <= wrong <= n, got {(too_low, wrong, n)!r}")
    too_high = wrong - too_low
    if wrong == 0:
        return f"neither here: all {n:,} references are scored right"
    here = f"here {wrong:,} of the {n:,} references are scored wrong"
    if too_high == 0:
        return f"too low: {here}, all of them too low"
    if too_low == 0:
        return f"too high: {here}, all of them too high"
    both = f"{here}, {too_low:,} too low and {too_high:,} too high"
    if too_low > too_high:
        return f"usually too low, but not always: {both}"
    if too_high > too_low:
        return f"more often too high than too low: {both}"
    return f"as often too high as too low: {both}"


def calibration_noise(groups: Sequence[tuple[float, float, int]], z: float = 2.0) -> str:
    """Calibration per confidence group [(mean P(top), share right, positions)], judged against
    sampling noise: a gap counts only beyond z binomial standard errors, sqrt(p (1 - p) / n)
    with p the mean P(top), the error a calibrated model's share right would have."""
    if not groups:
        raise ValueError("no groups to judge")
    under, over, noise = [], [], []
    for conf, acc, n in groups:
        if n < 1 or not 0 <= conf <= 1 or not 0 <= acc <= 1:
            raise ValueError(f"need 0 <= P, share <= 1 and n >= 1, got {(conf, acc, n)!r}")
        se = math.sqrt(max(conf * (1 - conf), 1e-12) / n)
        label = f"{conf:.2f}"
        (under if acc - conf > z * se else over if conf - acc > z * se else noise).append(label)
    g = len(groups)

    def which(labels):
        return "the group" + ("s" if len(labels) > 1 else "") + " of mean P(top) " + \
            " and ".join(labels)

    if len(noise) == g:
        return (f"calibrated within sampling noise in every group: no gap is larger than {z:g} "
                f"standard errors")
    if len(under) == g:
        return (f"under-confident in every group, by more than {z:g} standard errors: its top "
                f"word is right more often than it claims")
    if len(over) == g:
        return (f"over-confident in every group, by more than {z:g} standard errors: its top "
                f"word is right less often than it claims")
    # the first group named gets the full name, later ones "that of 0.91"
    named = []

    def name(labels):
        named.append(labels)
        if len(named) == 1:
            return which(labels)
        return ("those of " if len(labels) > 1 else "that of ") + " and ".join(labels)

    # "under-confident, beyond 2 standard errors, in the group of ... and over-confident in ..."
    beyond = []
    for side, labels in (("under", under), ("over", over)):
        if labels:
            how = "" if beyond else f", beyond {z:g} standard errors,"
            beyond.append(f"{side}-confident{how} in {name(labels)}")
    text = " and ".join(beyond)
    return f"{text}; within sampling noise in {name(noise)}" if noise else text


def calibration_pooled(right: float, expected: float, variance: float, n: int,
                       z: float = 2.0) -> str:
    """Calibration of all positions together: the count of right top words against the sum of
    their P(top), `expected`, judged against `variance`, the sum of P(top) (1 - P(top)): the
    spread a calibrated model's count would have. It can see a lean that most positions
    share even when no group alone shows it beyond its noise."""
    if n < 1 or variance <= 0 or not 0 <= right <= n or not 0 <= expected <= n:
        raise ValueError(f"need n >= 1, variance > 0, 0 <= right, expected <= n, got "
                         f"{(right, expected, variance, n)!r}")
    k = (right - expected) / math.sqrt(variance)
    said = (f"the top word is right at {right:,.0f} of the {n:,} positions, where the "
            f"probabilities it was given add up to {expected:,.0f}: {abs(k):.1f} standard "
            f"errors {'more' if k >= 0 else 'fewer'}")
    if k > z:
        return (f"{said}, so together the positions are under-confident beyond sampling "
                f"noise")
    if k < -z:
        return f"{said}, so together the positions are over-confident beyond sampling noise"
    return f"{said}, within sampling noise"


def calibration_table(top_p: Sequence[float], edges: Sequence[float],
                      groups: Sequence[tuple[float, float]]) -> tuple[list[int], str]:
    """The calibration exercise's table: the positions in each group [lo, hi) of `edges` (the
    last group keeps its upper edge, P = 1.0), and one line per group with its mean P(top), its
    share right (`groups`, as `calibration` returns them) and the standard error a calibrated
    model's share would have there, sqrt(p (1 - p) / n) with p the mean P(top)."""
    if len(edges) < 2 or len(groups) != len(edges) - 1:
        raise ValueError(f"need one group per pair of edges, got {len(groups)} groups and "
                         f"{len(edges)} edges")
    last = len(edges) - 2
    sizes = [sum(lo <= p < hi or (i == last and p == hi) for p in top_p)
             for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]
    lines = []
    for i, (lo, hi, (conf, acc), n) in enumerate(zip(edges, edges[1:], groups, sizes)):
        se = f"{math.sqrt(conf * (1 - conf) / n):.0%}" if n else "none: no positions"
        close = "]" if i == last else ")"
        lines.append(f"P(top) in [{lo:.1f}, {hi:.1f}{close}: {n:3d} positions, mean P(top) "
                     f"{conf:.2f}, top word = reference in {acc:.0%} (standard error {se})")
    return sizes, "\n".join(lines)

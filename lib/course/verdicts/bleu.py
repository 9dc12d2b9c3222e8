"""The sentences of the BLEU chapter (book/bleu.md): the mean of sentence BLEUs against corpus
BLEU, which of two scores leads, which decoder's outputs are the shorter, and Koehn's paired
bootstrap."""

from __future__ import annotations

from lib.course.verdicts.wording import direction


def mean_vs_corpus(corpus: float, mean: float, mean_full_order: float, mean_weighted: float,
                   tolerance: float = 0.5) -> str:
    """Why the mean of sentence BLEUs differs from corpus BLEU: what happens to the mean when
    sentence BLEU stops using the effective order, and when sentences are weighted by their
    number of tokens instead of equally."""
    side = direction(mean - corpus, tolerance, up="above", down="below", flat="close to")
    order = mean_full_order - mean
    weight = mean_weighted - mean
    o = direction(order, tolerance, up="rises", down="falls", flat="barely changes")
    w = direction(weight, tolerance, up="rises", down="falls", flat="barely changes")
    return (f"The mean of sentence BLEUs, {mean:.2f}, lies {side} corpus BLEU, {corpus:.2f}. "
            f"Scored on all four orders, it {o} ({mean_full_order:.2f}); weighted by tokens, "
            f"roughly as corpus BLEU's sums weigh sentences, it {w} ({mean_weighted:.2f})")


def leader(score_a: float, score_b: float, name_a: str, name_b: str,
           tolerance: float = 0.005) -> str:
    """'<a> is ahead by 0.42 points', '<b> is ahead by ...', or 'the two are level'. The gap is
    taken between the scores rounded to two decimals, as the page prints them."""
    gap = round(score_a, 2) - round(score_b, 2)
    if gap > tolerance:
        return f"{name_a} is ahead by {gap:.2f} points"
    if gap < -tolerance:
        return f"{name_b} is ahead by {-gap:.2f} points"
    return f"{name_a} and {name_b} are level"


def bootstrap_verdict(share: float, level: float = 0.95) -> str:
    """Koehn's paired bootstrap: the share of resamples on which system A beats system B."""
    if not 0 <= share <= 1:
        raise ValueError(f"a share is between 0 and 1, got {share!r}")
    if share >= level:
        return f"here it is at least {level:.0%}, so the gain passes that test"
    if share <= 1 - level:
        return (f"here it is at most {1 - level:.0%}, so the other system's lead passes that "
                f"test")
    return f"here it is between {1 - level:.0%} and {level:.0%}, so neither lead passes that test"


def bootstrap_agreement(share: float, low: float, high: float) -> str:
    """Whether the share of resamples on which A wins agrees with the 95 % interval of A's lead
    drawn from the same resamples: an interval above zero goes with a share of at least
    97.5 %, one below zero with at most 2.5 %, one across zero with a share in between."""
    if not 0 <= share <= 1:
        raise ValueError(f"a share is between 0 and 1, got {share!r}")
    if low > high:
        raise ValueError(f"an interval's low end is not above its high end, got {low}, {high}")
    if low > 0:
        where, agrees = "lies above zero", share >= 0.975
    elif high < 0:
        where, agrees = "lies below zero", share <= 0.025
    else:
        where, agrees = "contains zero", 0.025 <= share <= 0.975
    return (f"The interval above ({low:.2f} to {high:.2f}) {where}, and the share is "
            f"{share:.1%}: " + ("the two agree, as they must on the same resamples" if agrees
                                else "they disagree, so check how the resamples are drawn"))


def shorter_outputs(bp_greedy: float, bp_beam: float, alpha: float,
                    tolerance: float = 0.005) -> str:
    """Which decoder's outputs the brevity penalty finds the shorter, from the two penalties
    (1.0 = not shorter than the references; lower = shorter). `alpha` is the length
    normalisation the beam ran with (0 = none): when the beam's outputs are the shorter, the
    sentence says whether any normalisation was there to offset that."""
    for bp in (bp_greedy, bp_beam):
        if not 0 <= bp <= 1:
            raise ValueError(f"a brevity penalty is between 0 and 1, got {bp!r}")
    if not alpha >= 0:
        raise ValueError(f"length normalisation's alpha is 0 or more, got {alpha!r}")
    if min(bp_greedy, bp_beam) >= 1 - tolerance:
        return "Counted that way, neither decoder's outputs are short enough to be penalised"
    if bp_beam < bp_greedy - tolerance:
        if alpha == 0:
            return ("Counted that way, the beam's outputs are the shorter ones. Length "
                    "normalisation (the previous chapter's alpha) could offset that, but this "
                    "beam runs with alpha = 0")
        return ("Counted that way, the beam's outputs are the shorter ones, even with length "
                f"normalisation (the previous chapter's alpha) at alpha = {alpha:g}")
    if bp_greedy < bp_beam - tolerance:
        return "Counted that way, greedy's outputs are the shorter ones"
    return "Counted that way, both decoders' outputs are about equally short"

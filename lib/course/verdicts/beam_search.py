"""The sentences of the beam-search chapter (book/beam_search.md): what a beam finds against
greedy decoding, how output length follows the normalisation exponent α, whether a default
setting holds on the validation grid, and how often a search misses the optimum."""

from __future__ import annotations

from collections.abc import Sequence


def same_output_note(same: bool, other: str) -> str:
    """'which finds the same output as k = 5 on this sentence', or a different one."""
    word = "the same output as" if same else "a different output from"
    return f"which finds {word} {other} on this sentence"


def k1_note(n_same: int, n: int) -> str:
    """Beam k = 1 with alpha = 1 against greedy: did the normalised score change any answer?"""
    if n_same == n:
        return "the difference is possible, but it did not happen on these sentences"
    return ("on the others, the beam set greedy's answer aside at <eos>, went on, and found a "
            "longer answer with a better normalised score")


def length_direction(lengths: Sequence[float]) -> str:
    """How the mean output length moves as alpha grows (lengths ordered by alpha)."""
    steps = list(zip(lengths, lengths[1:]))
    if all(b >= a for a, b in steps) and lengths[-1] > lengths[0]:
        return ("grows with α, as the formula predicts: a larger α lets longer outputs win")
    if all(b <= a for a, b in steps) and lengths[-1] < lengths[0]:
        return ("shrinks as α grows, against what the formula predicts: on so few sentences a "
                "few outputs decide it")
    if lengths[-1] == lengths[0] and all(a == b for a, b in steps):
        return "does not change with α on these sentences"
    return ("does not move steadily with α here: on so few sentences a few outputs decide it")


def length_verdict(len_beam: float, len_ref: float, len_greedy: float, ratio: float,
                   ratio_unk_word: float, bp: float, bp_unk_word: float) -> str:
    """The beam's output length with alpha = 0 against the references and greedy's, in the
    course's tokens and in BLEU's, where 13a splits each <unk> into three tokens."""
    if len_beam >= len_ref:
        head = "With α = 0 the outputs are already as long as the first references or longer"
    elif len_beam < len_greedy:
        head = "With α = 0 the outputs are shorter than both the first references and greedy's"
    else:
        head = ("With α = 0 the outputs are shorter than the first references, though no "
                "shorter than greedy's")
    # sacrebleu's 13a tokenizer makes three tokens of each <unk>: the second ratio counts one
    return (f"{head}. BLEU's length ratio is {ratio:.3f} ({_penalty(bp)}); with <unk> as one "
            f"word, {ratio_unk_word:.3f} ({_penalty(bp_unk_word)})")


def _penalty(bp: float) -> str:
    return "no brevity penalty" if bp >= 1 else f"brevity penalty {100 * (1 - bp):.1f} %"


def alpha_default_note(alpha: float) -> str:
    """What the default length-normalisation exponent does, whatever it was chosen to be."""
    if alpha == 0:
        return ("The default, α = 0, does no normalisation at all: it was chosen on the "
                "validation sentences, where normalising did not raise BLEU")
    return f"The default, α = {alpha:g}, was chosen on the validation sentences"


def default_holds(bleu_by_setting: dict, default, name: str, tolerance: float = 0.1) -> str:
    """Does a default setting still score within `tolerance` BLEU of the best of a grid?"""
    if default not in bleu_by_setting:
        raise ValueError(f"the default {default!r} is not among {list(bleu_by_setting)!r}")
    best = max(bleu_by_setting, key=lambda s: bleu_by_setting[s])
    gap = bleu_by_setting[best] - bleu_by_setting[default]
    if best == default or gap <= 0:
        return f"the default, {name} = {default}, scores highest of the grid"
    if gap <= tolerance:
        return (f"the default, {name} = {default}, is within {tolerance:g} BLEU of the best, "
                f"{name} = {best} ({gap:.2f} below it)")
    return (f"{name} = {best} scores {gap:.2f} BLEU above the default, {name} = {default}: on "
            f"these sentences the default would not be chosen again")


def smallest_margin_within(bleu_by_margin: dict, plain: float, tolerance: float = 0.1):
    """The smallest pruning margin whose BLEU stays within `tolerance` of the beam without
    pruning (BLEU `plain`), or None when none does."""
    ok = [m for m, b in bleu_by_margin.items() if b >= plain - tolerance]
    return min(ok) if ok else None


def margin_rule_note(chosen, default) -> str:
    """What the margin rule picks on the page's sentences, against lib's default."""
    if chosen is None:
        return "no margin of the grid stays that close, so the rule picks none here"
    if chosen == default:
        return f"here the rule picks {chosen:g}, the default"
    word = "smaller" if chosen < default else "larger"
    return (f"here the rule picks {chosen:g}, {word} than the default {default:g}: on so few "
            f"sentences a tenth of a BLEU point is within the noise, so the rule is a loose one")


def k3_gain(bleu_by_k: dict[int, float]) -> str:
    """How much of the best BLEU gain over greedy (k = 1) a beam of three gets."""
    best = max(bleu_by_k.values())
    gain = best - bleu_by_k[1]
    if gain <= 0:
        return "no beam size scores above greedy decoding on these sentences"
    share = 100 * (bleu_by_k[3] - bleu_by_k[1]) / gain
    if share < 0:
        return "a beam of three scores below greedy decoding here"
    return f"a beam of three gets {share:.0f} % of the best improvement over greedy"


def misses_closed(miss_greedy: int, miss_beam: int, beam: str = "a beam of five") -> str:
    """How many of greedy's misses of the exhaustive optimum a beam avoids (counts)."""
    if miss_greedy < 0 or miss_beam < 0:
        raise ValueError("counts cannot be negative")
    if miss_greedy == 0 and miss_beam == 0:
        return "neither greedy decoding nor " + beam + " missed the optimum on these models"
    if miss_beam > miss_greedy:
        return (f"{beam} misses the optimum more often than greedy decoding ({miss_beam} "
                f"sentences against {miss_greedy})")
    avoided = 100 * (miss_greedy - miss_beam) / miss_greedy
    return f"{beam} avoids {avoided:.0f} % of the misses of greedy decoding"


def pruned_note(unchanged: bool, pruned_pct: float, plain_pct: float) -> str:
    """What the default pruning margin did to the tiny models' miss rates (beam of five)."""
    if unchanged:
        return ("With the default pruning margin these miss rates do not change at all on these "
                "models")
    return (f"With the default pruning margin the beam of five misses {pruned_pct:.1f} % instead "
            f"of {plain_pct:.1f} %")

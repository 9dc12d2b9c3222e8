"""The sentences of the beam-search chapter (book/beam_search.md): what a beam finds against
greedy decoding, how output length follows the normalisation exponent α, whether a default
setting holds on the validation grid, and how often a search misses the optimum."""

from __future__ import annotations

from collections.abc import Sequence

from lib.course.verdicts import wording


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


UNK_COUNTS = {"13a": "<unk> as three tokens (13a)", "word": "<unk> as one word"}
"""The two ways the chapter counts the model's <unk> in BLEU: sacrebleu's 13a tokeniser cuts it
into "<", "unk", ">", which lengthens outputs that hold it; written as one word it counts once."""


def by_count(a: str, b: str, intervals: dict[str, tuple[float, float]]) -> str:
    """How a scores against b under each count of <unk> (keys of UNK_COUNTS), from a 95 %
    interval (lo, hi) of BLEU(a) - BLEU(b) per count (a paired bootstrap): one verdict when
    the counts agree, one clause per count when they do not."""
    if not intervals or set(intervals) - set(UNK_COUNTS):
        raise ValueError(f"intervals are keyed by {sorted(UNK_COUNTS)}, got {sorted(intervals)}")
    sides = {c: wording.side_of_zero(lo, hi) for c, (lo, hi) in intervals.items()}
    verb = {"above": f"{a} scores higher than {b}", "below": f"{a} scores lower than {b}",
            "zero": f"{a} and {b} cannot be told apart"}
    if len(set(sides.values())) == 1:
        side = next(iter(sides.values()))
        where = {"above": "lies above zero", "below": "lies below zero",
                 "zero": "includes zero"}[side]
        counts = "whether <unk> counts as three tokens or one" if len(sides) > 1 else (
            "with " + UNK_COUNTS[next(iter(sides))])
        return f"{verb[side]}, {counts} (each 95 % interval of the difference {where})"
    return "; ".join(f"with {UNK_COUNTS[c]}, {verb[side]}" for c, side in sides.items()) + (
        " (95 % intervals of the difference)")


def grid_best(default, name: str, best: dict[str, tuple]) -> str:
    """Which setting of a validation grid scores highest under each count of <unk>, against
    the default: `best` maps a count (key of UNK_COUNTS) to (best setting, its BLEU minus the
    default's, lo, hi), lo and hi a 95 % interval of that difference (ignored where the best
    is the default)."""
    if not best or set(best) - set(UNK_COUNTS):
        raise ValueError(f"best is keyed by {sorted(UNK_COUNTS)}, got {sorted(best)}")
    parts = []
    for count, (setting, diff, lo, hi) in best.items():
        if setting == default or diff <= 0:
            parts.append(f"with {UNK_COUNTS[count]}, the default {name} = {default:g} scores "
                         f"highest")
            continue
        noise = "beyond" if lo > 0 else "within"
        parts.append(f"with {UNK_COUNTS[count]}, {name} = {setting:g} scores {diff:.2f} higher, "
                     f"{noise} the noise (95 % interval {lo:+.2f} to {hi:+.2f})")
    return "; ".join(parts)


def default_beaten(default, best: dict[str, tuple]) -> bool:
    """Does any count of `grid_best`'s put another setting above the default beyond the
    noise (its whole 95 % interval above zero)?"""
    return any(s != default and diff > 0 and lo > 0 for s, diff, lo, _ in best.values())


def alpha_default_note(alpha: float, beaten: bool) -> str:
    """What the default length-normalisation exponent does, and whether the validation grid
    backs it (`beaten`: another alpha scored higher beyond the noise, see `default_beaten`)."""
    does = ("does no normalisation at all" if alpha == 0 else f"divides by L^{alpha:g}")
    if beaten:
        return (f"The default, α = {alpha:g}, {does}, though another α scored higher on the "
                f"validation sentences, beyond the bootstrap noise")
    return (f"The default, α = {alpha:g}, {does}: on the validation sentences no other α scored "
            f"higher beyond the bootstrap noise, however <unk> is counted")


def k3_gain(bleu_by_k: dict[int, float], lo: float = 0.0, hi: float = 0.0) -> str:
    """How much of the best BLEU gain over greedy (k = 1) a beam of three gets, and whether the
    best k is told apart from k = 3: (lo, hi) is a 95 % paired-bootstrap interval of BLEU(best
    k) - BLEU(k = 3), ignored where k = 3 is the best. The best is a maximum over noisy scores,
    so the share alone would overstate how well the best k is known."""
    best_k = max(bleu_by_k, key=bleu_by_k.get)
    gain = bleu_by_k[best_k] - bleu_by_k[1]
    if gain <= 0:
        return "no beam size scores above greedy decoding on these sentences"
    share = 100 * (bleu_by_k[3] - bleu_by_k[1]) / gain
    if share < 0:
        return "a beam of three scores below greedy decoding here"
    head = f"a beam of three gets {share:.0f} % of the best improvement over greedy"
    if best_k == 3:
        return head
    side = wording.side_of_zero(lo, hi)
    if side == "zero":
        return f"{head} (k = 3 and the best, k = {best_k}, are within bootstrap noise)"
    if side == "above":
        return f"{head} (the best, k = {best_k}, scores higher beyond bootstrap noise)"
    raise ValueError(f"k = {best_k} scores highest, yet its interval against k = 3 lies below zero")


def misses_closed(miss_greedy: int, miss_beam: int, beam: str = "a beam of five") -> str:
    """How many fewer misses of the exhaustive optimum a beam has than greedy decoding, net:
    a beam may miss where greedy does not, so this is not the share of greedy's it avoids."""
    if miss_greedy < 0 or miss_beam < 0:
        raise ValueError("counts cannot be negative")
    if miss_greedy == 0 and miss_beam == 0:
        return "neither greedy decoding nor " + beam + " missed the optimum on these models"
    if miss_beam > miss_greedy:
        return (f"{beam} misses the optimum more often than greedy decoding ({miss_beam} "
                f"sentences against {miss_greedy})")
    fewer = 100 * (miss_greedy - miss_beam) / miss_greedy
    return f"{beam} has {fewer:.0f} % fewer misses than greedy decoding"


def pruned_note(unchanged: bool, pruned_pct: float, plain_pct: float) -> str:
    """What the default pruning margin did to the tiny models' miss rates (beam of five)."""
    if unchanged:
        return ("With the default pruning margin these miss rates do not change at all on these "
                "models")
    return (f"With the default pruning margin the beam of five misses {pruned_pct:.1f} % instead "
            f"of {plain_pct:.1f} %")


def optimum_shapes(empty: int, capped: int, total: int) -> str:
    """What the exhaustive optima of the tiny models are: real sentences (at least one word,
    then <eos>), <eos> alone, or cut by the length cap. Where the last two are most of them,
    the miss rates test little more than whether a search ends at the first step or never."""
    if min(empty, capped) < 0 or empty + capped > total or total < 1:
        raise ValueError(f"need 0 <= empty + capped <= total, got {empty}, {capped}, {total}")
    real = total - empty - capped
    parts = f"{empty} are <eos> alone, {capped} cut by the length cap"
    if 2 * (empty + capped) > total:
        return (f"only {real} of the {total} optima are real sentences ({parts}), so these rates "
                f"mostly test whether a search ends at once or never")
    return f"{real} of the {total} optima are real sentences; {parts}"


def alpha1_note(a1_pct: float, a0_pct: float, beam: str = "the beam of five") -> str:
    """The miss rate against the normalised optimum (alpha = 1) next to the one at alpha = 0;
    where it is higher, why a beam can miss the normalised optimum (no cause where it is not)."""
    head = (f"With α = 1 {beam} misses the normalised optimum for {a1_pct:.1f} %, against "
            f"{a0_pct:.1f} % at α = 0")
    if a1_pct > a0_pct:
        return (f"{head}: the beam keeps the best raw log-probabilities, while the answer is "
                f"ranked by the normalised score")
    return head


def example_choice(found: bool, min_gain: float) -> str:
    """How the chapter's example sentence was chosen among the test sentences: `found` when
    some sentence with no <unk> gains over min_gain in log P with the same output at k = 3 (the
    shortest of them in characters is the example), else the fallback, the largest gain with
    no <unk>."""
    if found:
        return (f"the shortest in characters with no <unk>, a gain over {min_gain:g} and the "
                f"same output at k = 3")
    return (f"the sentence with no <unk> and the largest gain (none with a gain over "
            f"{min_gain:g} has the same output at k = 3)")


def gain_note(gain: float, gains_better: Sequence[float]) -> str:
    """The example's gain in log P against the median gain of the sentences the beam improved
    (`gains_better`, each above zero): how typical the example is."""
    head = f"a gain of {gain:.2f}"
    if not gains_better:
        return f"{head}; the beam improved no sentence"
    ordered = sorted(gains_better)
    n, mid = len(ordered), len(ordered) // 2
    median = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    ratio = gain / median
    if ratio >= 1.5:
        times = f"{ratio:.1f}" if ratio < 10 else f"{ratio:.0f}"
        return f"{head}, {times} times the median gain of the {n} improved sentences"
    if ratio > 1 / 1.5:
        return f"{head}, near the median gain ({median:.2f}) of the {n} improved sentences"
    return f"{head}, below the median gain ({median:.2f}) of the {n} improved sentences"


def worse_intro(worse: int, n: int) -> str:
    """Opens "why a beam can return a less likely output than greedy" from the count of such
    sentences: a puzzle to explain where there are some, a possibility where there are none."""
    if worse == 0:
        return (f"The course's beam of five found a less likely output than greedy for none of "
                f"the {n} held-out sentences, but it can happen, though a beam contains "
                f"greedy's first choice.")
    return (f"The course's beam of five found a less likely output than greedy for {worse} of "
            f"the {n} held-out sentences. How, if a beam contains greedy's first choice?")

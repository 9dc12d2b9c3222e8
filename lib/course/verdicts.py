"""The sentences a chapter writes from its own measurements, one small function each.

A chapter never types "better", "rises" or "three times faster" next to a number it computes:
another model, seed or machine could make that word false. It hands the numbers to one of these
functions and glues the sentence that comes back, so the words always follow the numbers.
tests/test_verdicts.py feeds each function every outcome it can meet and checks the wording.

Times are a special case: the page shows the build machine's, while a reader who runs the
notebook sees their own. `times_as_long` therefore says how the build machine measured and
never claims a factor for every machine; "1x slower" cannot come out of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def direction(change: float, tolerance: float = 0.0, up: str = "rises", down: str = "falls",
              flat: str = "barely changes") -> str:
    """`up` when change > tolerance, `down` when change < -tolerance, otherwise `flat`."""
    if change > tolerance:
        return up
    if change < -tolerance:
        return down
    return flat


def comparison(a: float, b: float, tolerance: float = 0.0, more: str = "higher",
               less: str = "lower", same: str = "about the same") -> str:
    """How a compares with b: `more`, `less`, or `same` within `tolerance`."""
    return direction(a - b, tolerance, up=more, down=less, flat=same)


def times_as_long(slow: float, fast: float, what: str = "", than: str = "") -> str:
    """'<what> took 2.4 times as long as <than> on the machine that built this page'.

    The factor is the build machine's: a reader's run prints its own. Between 1/1.1 and 1.1 it
    says "about as long", so no factor reads "1x"; below that, "only 0.62 times as long".
    """
    if slow <= 0 or fast <= 0:
        raise ValueError(f"times must be positive, got {slow!r} and {fast!r}")
    ratio = slow / fast
    subject = f"{what} " if what else ""
    other = f" as {than}" if than else ""
    where = " on the machine that built this page"
    if ratio >= 1.1:
        factor = f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}"
        return f"{subject}took {factor} times as long{other}{where}"
    if ratio > 1 / 1.1:
        return f"{subject}took about as long{other}{where}"
    return f"{subject}took only {ratio:.2f} times as long{other}{where}"


def speed_word(ratio: float) -> str:
    """A machine-independent word for how much slower one way was: ratio = slow / fast."""
    if ratio >= 3:
        return "several times slower"
    if ratio >= 1.1:
        return "slower"
    if ratio > 1 / 1.1:
        return "about as fast"
    return "faster"


def gradient_fate(norm: float, vanish: float = 1e-2, explode: float = 1e1) -> str:
    """What happened to a gradient factor after many steps: 'vanishes', 'explodes' or 'survives'.

    The thresholds are the encoder chapter's definition: less than a hundredth of the gradient
    reaches the first step, or it grows more than tenfold.
    """
    if norm < vanish:
        return "vanishes"
    if norm > explode:
        return "explodes"
    return "survives"


def gru_against_vanilla(g_gru: float, g_vanilla: float) -> str:
    """The default GRU's gradient after T steps, compared with the vanilla RNN's."""
    ratio = g_gru / g_vanilla
    if ratio >= 3:
        how = f"passes back {_order(ratio)} more of the gradient than the vanilla RNN"
    elif ratio > 1 / 3:
        how = "passes back about as much of the gradient as the vanilla RNN"
    else:
        how = f"passes back {_order(1 / ratio)} less of the gradient than the vanilla RNN"
    fate = gradient_fate(g_gru)
    if fate == "vanishes":
        return f"{how}, yet its gradient still vanishes: gates alone do not keep it alive"
    if fate == "explodes":
        return f"{how}, and its gradient explodes"
    return f"{how}, and enough of it survives to matter"


def _order(ratio: float) -> str:
    """A ratio >= 3 in words: 'about 3 times', 'about 1,000 times' (one significant digit)."""
    power = math.floor(math.log10(ratio))
    lead = round(ratio / 10 ** power)
    if lead == 10:
        lead, power = 1, power + 1
    return f"about {lead * 10 ** power:,} times"


def wiring_verdict(loss_on: float, loss_off: float, long_on: float, long_off: float,
                   bleu_on: float, bleu_off: float) -> str:
    """Which decoder wiring the three held-out measures favour (lower loss, higher BLEU)."""
    fed_wins = [loss_on < loss_off, long_on < long_off, bleu_on > bleu_off]
    if all(fed_wins):
        return "the model fed the context at every step is ahead on all three measures"
    if not any(fed_wins):
        return ("the model that gets the context only as its initial state is ahead on all "
                "three measures")
    return "the two wirings split the three measures between them"


def bleu_gap_caveat(bleu_a: float, bleu_b: float, name_a: str = "the fed context",
                    name_b: str = "the initial state only") -> str:
    """How far apart two single-seed BLEU scores are, and what one seed can say about it."""
    gap = abs(bleu_a - bleu_b)
    if gap < 1:
        return (f"{gap:.1f} BLEU points apart, a gap that one seed per run cannot tell from "
                f"noise")
    ahead = name_a if bleu_a > bleu_b else name_b
    return (f"{gap:.1f} BLEU points apart, in favour of {ahead}; one seed per run cannot say "
            f"how much of that gap another seed would keep")


def leader(score_a: float, score_b: float, name_a: str, name_b: str,
           tolerance: float = 0.005) -> str:
    """'<a> is ahead by 0.42 points', '<b> is ahead by ...', or 'the two are level'."""
    gap = score_a - score_b
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


def learned_enough(bleu: float, floor: float = 10.0) -> str:
    """Whether a small comparison's models learned enough to rank anything (best BLEU)."""
    if bleu < floor:
        return (f"Neither model reaches {floor:.0f} BLEU: at this budget both have barely begun "
                f"to translate, so the comparison shows how the wirings start, not which one is "
                f"better")
    return (f"The better model reaches {bleu:.1f} BLEU, so both have learned something to "
            f"compare")


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


def context_swap_verdict(routes: Sequence[str]) -> str:
    """The verdict of the context-swap experiment, from `followed` in each direction."""
    routes = set(routes)
    if routes == {"the context"}:
        return ("in both directions the output translates the sentence whose context is fed: "
                "on these sentences the model follows the fed context, not its initial states")
    if routes == {"the initial states"}:
        return ("in both directions the output translates the sentence the initial states "
                "come from: on these sentences the model follows its initial states, and the "
                "fed context does not change what the output says")
    if routes == {"neither"}:
        return ("in neither direction is the output clearly the translation of one of the two "
                "sentences: this model mixes both routes")
    return ("the two directions disagree, so neither route decides the output on its own "
            "for this model")


def drift_conclusion(routes: Sequence[str]) -> str:
    """What the drift exercise may conclude about the fed context, given the swap experiment."""
    routes = set(routes)
    caveat = ("; that is the argmax output on two sentences only, with another sentence's "
              "context, an input the model never met in training, and the fed context may "
              "still move the probabilities")
    if routes == {"the context"}:
        return ("and on the two sentences of the swap experiment above the argmax output "
                "follows the fed context: given another sentence's context, it translates that "
                "sentence" + caveat)
    if routes == {"the initial states"}:
        return ("but on the two sentences of the swap experiment above the argmax output "
                "follows the initial states, not the fed context" + caveat)
    return ("and on the two sentences of the swap experiment above neither route decides the "
            "argmax output on its own" + caveat)


def calibration_verdict(groups: Sequence[tuple[float, float]]) -> str:
    """groups = [(mean P(top), share right)]: under-, over-confident, or mixed."""
    if not groups:
        raise ValueError("no groups to judge")
    if all(acc > conf for conf, acc in groups):
        return ("under-confident in every group: its top word is right more often than it "
                "claims")
    if all(acc < conf for conf, acc in groups):
        return ("over-confident in every group: its top word is right less often than it "
                "claims")
    return "under-confident in some groups and over-confident in others"


def exposure_drop(before: float, after: float, tolerance: float = 0.5) -> str:
    """BLEU of a continuation after a right and after a wrong forced token."""
    if after < before - tolerance:
        return f"falls from {before:.1f} to {after:.1f}"
    if after > before + tolerance:
        return f"rises from {before:.1f} to {after:.1f}"
    return f"stays about the same ({before:.1f} and {after:.1f})"


def rewording_control(bleu_right: float, bleu_other: float, bleu_wrong: float,
                      tolerance: float = 1.0) -> str:
    """The exposure-bias control: continuation BLEU after the first reference's first word,
    after another reference's (a right rewording) and after a wrong word."""
    reword = bleu_right - bleu_other
    beyond = bleu_other - bleu_wrong
    if reword > tolerance:
        first = (f"a right rewording alone costs {reword:.1f} points, so BLEU does count "
                 f"rewording as damage")
    else:
        first = "a right rewording costs BLEU little here"
    return f"{first}, and {_beyond_rewording(beyond, tolerance)}"


# The control forces another reference's first word, which that reference continues; a wrong
# first word has no reference that continues it. So the control's cost is a lower bound on what
# a rewording costs, and the wrong word's extra cost an upper bound on what rewording leaves.
_UPPER_BOUND = ("an upper bound on the part a rewording cannot explain, not that part: the "
                "control's rewording is one that another reference continues, and a rewording "
                "no reference continues can cost more")


def _beyond_rewording(beyond: float, tolerance: float, lo: float | None = None,
                      hi: float | None = None) -> str:
    """The wrong word's cost beyond the control's rewording, other - wrong, with its 95 %
    interval (lo, hi) when one was measured."""
    if lo is not None and hi is not None:
        if lo > hi:
            raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
        span = f"95 % interval {lo:+.1f} to {hi:+.1f}"
        if lo > 0:
            return (f"the wrong word costs {beyond:.1f} points more than the rewording ({span}), "
                    f"{_UPPER_BOUND}")
        if hi < 0:
            return (f"the wrong word costs {-beyond:.1f} points less than the rewording ({span}), "
                    f"so on these sentences the drop cannot be told apart from rewording")
        return (f"the wrong word's cost beyond the rewording, {beyond:+.1f} points ({span}), "
                f"cannot be told from zero, so on these sentences the drop cannot be told apart "
                f"from rewording")
    if beyond > tolerance:
        return f"the wrong word costs {beyond:.1f} points more than the rewording, {_UPPER_BOUND}"
    if beyond < -tolerance:
        return ("the wrong word costs less than the rewording, so on these sentences the drop "
                "cannot be told apart from rewording")
    return ("the wrong word costs about as much as the rewording, so on these sentences the drop "
            "cannot be told apart from rewording")


def lowest(values: dict, what: str = "") -> str:
    """'ratio 1.0' style name of the key with the lowest value; ties are named together."""
    best = min(values.values())
    keys = [k for k, v in values.items() if v == best]
    return " and ".join(f"{what}{k}" for k in keys)


def highest(values: dict, what: str = "") -> str:
    """Like `lowest`, for the highest value."""
    return lowest({k: -v for k, v in values.items()}, what)


def toy_exposure_verdict(forced: dict[float, float], free: dict[float, float]) -> str:
    """The reversal toy of the teacher-forcing exercise: ratio -> forced and free-run loss.

    Says which model has the lower loss in each regime and the larger gap, in words that hold
    whichever way the numbers fall."""
    gap = {r: free[r] - forced[r] for r in forced}
    low_forced, low_free = lowest(forced, "ratio "), lowest(free, "ratio ")
    big_gap = highest(gap, "ratio ")
    if low_forced == low_free:
        both = (f"the {low_forced} model has the lower loss in both regimes, forced and free "
                f"running")
    else:
        both = (f"the {low_forced} model has the lower forced loss and the {low_free} model the "
                f"lower free-running loss")
    return f"{both}; the larger gap between the two belongs to the {big_gap} model"


def exact_ranking(shares: dict[str, float], n: int, z: float = 2.0) -> str:
    """Shares of n test sequences solved exactly, by run name: which run is first and which
    last, and whether the first two are further apart than the noise of n sequences."""
    if len(shares) < 2:
        raise ValueError("a ranking needs at least two runs")
    order = sorted(shares, key=lambda k: -shares[k])
    best, second, worst = order[0], order[1], order[-1]
    if shares[best] == shares[worst]:
        return f"all {len(shares)} runs solve the same share"
    text = f"{best} solves the most, {worst} the fewest"
    p = (shares[best] + shares[second]) / 2
    se = math.sqrt(max(2 * p * (1 - p), 1 / n) / n)  # of a difference of two shares
    if shares[best] - shares[second] <= z * se:
        text += (f"; {best} and {second} are closer than the noise of {n:,} test sequences "
                 f"can separate")
    return text


def loss_ranking(forced: dict[str, float], free: dict[str, float]) -> str:
    """Which runs have the lowest forced loss, the lowest free-running loss and the smallest
    gap between the two (ties named together), as one sentence."""
    gap = {k: free[k] - forced[k] for k in forced}
    return (f"The lowest forced loss belongs to {lowest(forced)}, the lowest free-running loss "
            f"to {lowest(free)}, and the smallest gap between the two to {lowest(gap)}")


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
    if len_beam < len_ref:
        head = ("With α = 0 the beam's outputs are shorter than the first references on "
                "average, and " + ("shorter" if len_beam < len_greedy else "no shorter")
                + " than greedy's")
    else:
        head = ("With α = 0 the beam's outputs are already as long as the first references or "
                "longer")
    view = (f"BLEU, which compares each output with the reference closest to it in length and "
            f"counts in its own tokens, finds them {ratio:.3f} times as long as the references "
            f"({_penalty(bp)}); but its tokenizer splits each <unk> into three tokens, and with "
            f"<unk> counted as one word the ratio is {ratio_unk_word:.3f} "
            f"({_penalty(bp_unk_word)})")
    return f"{head}. {view}"


def _penalty(bp: float) -> str:
    return ("no brevity penalty" if bp >= 1
            else f"a brevity penalty of {100 * (1 - bp):.1f} % off the score")


def alpha_default_note(alpha: float) -> str:
    """What the default length-normalisation exponent does, whatever it was chosen to be."""
    if alpha == 0:
        return ("The default, α = 0, does no normalisation at all: it was chosen on the "
                "validation sentences, where normalising did not raise BLEU")
    return f"The default, α = {alpha:g}, was chosen on the validation sentences"


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


def pruned_note(unchanged: bool, pruned_pct: float, plain_pct: float) -> str:
    """What the default pruning margin did to the tiny models' miss rates (beam of five)."""
    if unchanged:
        return ("With the default pruning margin these miss rates do not change at all on these "
                "models")
    return (f"With the default pruning margin the beam of five misses {pruned_pct:.1f} % instead "
            f"of {plain_pct:.1f} %")


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


def raw_score_winner(short_wins: int, total: int) -> str:
    """How often raw log P preferred the shorter of two finished outputs (counted)."""
    if total <= 0:
        raise ValueError("nothing counted")
    share = short_wins / total
    if share >= 0.9:
        return "nearly always"
    if share > 0.5:
        return "more often than not"
    if share == 0.5:
        return "as often as not"
    if share > 0.1:
        return "less often than not"
    return "rarely"


def ratio_words(ratio: float) -> str:
    """A probability ratio below 1 in words: 'about a third', 'about a quarter', ..."""
    if not 0 < ratio <= 1:
        raise ValueError(f"expected a ratio in (0, 1], got {ratio!r}")
    names = {1: "as", 2: "half as", 3: "a third as", 4: "a quarter as", 5: "a fifth as",
             6: "a sixth as", 8: "an eighth as", 10: "a tenth as"}
    n = min(names, key=lambda k: abs(1 / k - ratio))
    if abs(1 / n - ratio) / ratio < 0.12:
        return f"about {names[n]}"
    return f"{ratio:.2f} times as"


def against_chance(share: float, chance: float, n: int, z: float = 3.0,
                   baseline: str = "chance", small: float = 0.10) -> str:
    """How a share measured on n items compares with `baseline`'s share, with the ratio.

    Within z standard errors: 'no more often than chance'; below: 'less often than chance';
    above: '2.3 times as often as chance' ('slightly more often' under 1.1 times), and when
    the gap is under `small` it adds ', yet fewer than 10 percentage points above it'."""
    if n <= 0:
        raise ValueError("n must be positive")
    if not (0 <= share <= 1 and 0 <= chance <= 1):
        raise ValueError(f"shares are between 0 and 1, got {share!r} and {chance!r}")
    p = min(max(chance, 1 / n), 1 - 1 / n)
    se = math.sqrt(p * (1 - p) / n)
    if share < chance - z * se:
        return f"less often than {baseline}"
    if share <= chance + z * se:
        return f"no more often than {baseline}"
    ratio = share / chance if chance > 0 else math.inf
    if ratio == math.inf:
        words = f"more often than {baseline}, which scores 0%"
    elif ratio < 1.1:
        words = f"slightly more often than {baseline}"
    else:
        factor = f"{ratio:.1f}" if ratio < 9.95 else f"{ratio:.0f}"
        words = f"{factor} times as often as {baseline}"
    if share - chance < small:
        words += f", yet fewer than {100 * small:.0f} percentage points above it"
    return words


def how_many(share: float) -> str:
    """A share of items in words: 'all', 'nearly all', 'most', 'about half', 'a minority'..."""
    if not 0 <= share <= 1:
        raise ValueError(f"a share is between 0 and 1, got {share!r}")
    if share == 1:
        return "all"
    if share >= 0.9:
        return "nearly all"
    if share > 0.6:
        return "most"
    if share >= 0.4:
        return "about half"
    if share > 0.1:
        return "a minority"
    if share > 0:
        return "very few"
    return "none"


# ---------------------------------------------------------------------------------------------
# The wrap-up and the attention chapter (tests/test_verdicts_attention.py)
# ---------------------------------------------------------------------------------------------


def length_trend(short: tuple[float, float, float], long: tuple[float, float, float]) -> str:
    """BLEU of the shortest and the longest length group, each (score, low, high) with its
    95 % interval: 'falls', 'rises' or 'does not clearly change' with length, by whether the
    two intervals are apart. The words never go further than the intervals do."""
    (s, s_lo, s_hi), (g, g_lo, g_hi) = short, long
    for lo, hi in ((s_lo, s_hi), (g_lo, g_hi)):
        if lo > hi:
            raise ValueError(f"an interval's low end {lo} is above its high end {hi}")
    if g_hi < s_lo:
        return (f"falls with length: the longest group scores {g:.1f}, below the shortest "
                f"group's {s:.1f}, and their 95 % intervals do not overlap")
    if g_lo > s_hi:
        return (f"rises with length: the longest group scores {g:.1f}, above the shortest "
                f"group's {s:.1f}, and their 95 % intervals do not overlap")
    word = comparison(g, s, more="above", less="below", same="level with")
    return (f"does not clearly change with length: the longest group scores {g:.1f}, {word} "
            f"the shortest group's {s:.1f}, and their 95 % intervals overlap")


def trend(values: Sequence[float], tolerance: float) -> str:
    """How a series over growing lengths moves from its first to its last value:
    'falls', 'rises' or 'holds' (within `tolerance`)."""
    if len(values) < 2:
        raise ValueError("a trend needs at least two values")
    return direction(values[-1] - values[0], tolerance, up="rises", down="falls", flat="holds")


def reversal_verdict(fixed: Sequence[float], attention: Sequence[float],
                     tolerance: float = 0.05) -> str:
    """The reversal toy: shares reversed exactly (0-1), by length bucket from short to long,
    for the fixed-vector and the attention decoder. Says how each moves with length and which
    is ahead on the longest bucket."""
    if len(fixed) != len(attention):
        raise ValueError("one share per bucket for each decoder")
    f, a = trend(fixed, tolerance), trend(attention, tolerance)
    last = comparison(attention[-1], fixed[-1], tolerance, more="ahead", less="behind",
                      same="level")
    if last == "level":
        end = "on the longest sequences the two are level"
    else:
        end = f"on the longest sequences the attention decoder is {last}"
    return (f"from the shortest bucket to the longest, the fixed-vector decoder's share of "
            f"exact reversals {f} and the attention decoder's {a}; {end}")


def _side_of_zero(lo: float, hi: float) -> str:
    """Where a 95 % interval (lo, hi) lies: "above" or "below" zero, or "zero" (includes it)."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    return "above" if lo > 0 else "below" if hi < 0 else "zero"


def _difference(lo: float, hi: float, a: str, b: str, apart: str) -> tuple[str, str]:
    """(what a 95 % interval (lo, hi) of score(a) - score(b) says, where the interval lies):
    `apart` ends the verdict when it includes zero."""
    side = _side_of_zero(lo, hi)
    verdict = {"above": f"{a} scores higher than {b}", "below": f"{a} scores lower than {b}",
               "zero": f"{a} and {b} {apart}"}[side]
    where = {"above": "lies above zero", "below": "lies below zero", "zero": "includes zero"}[side]
    return verdict, f"the 95 % interval of the difference {where}"


def paired_difference(lo: float, hi: float, a: str, b: str) -> str:
    """A 95 % interval (lo, hi) of score(a) - score(b), in words: which is higher, or that the
    difference is within the noise of the sample."""
    verdict, where = _difference(lo, hi, a, b, "are not told apart")
    return f"{verdict}: {where}"


def long_input_conclusion(lo: float, hi: float) -> str:
    """What the joined-input fine-tuning may conclude, from the 95 % interval of attention's
    BLEU minus the fixed vector's on the long inputs. The two copies differ in more than the path
    to every source state (a new layer, a step loop), so no outcome names a cause."""
    side = _side_of_zero(lo, hi)
    if side == "above":
        return ("At this budget the attention copy scores higher on the long inputs; which of its "
                "differences from the fixed-vector copy gives the gain, and how the gap would move "
                "with more training, this run does not measure")
    if side == "below":
        return ("At this budget the attention copy scores lower on the long inputs; which of its "
                "differences from the fixed-vector copy costs it, and how the gap would move with "
                "more training, this run does not measure")
    return ("At this budget the two copies cannot be told apart on the long inputs, so this run "
            "neither shows the bottleneck nor its removal; whether the attention copy had "
            "learned to attend at all, the alignments below say")


def cost_growth(short: float, long: float, what: str, short_len: int, long_len: int) -> str:
    """How a decoder step's time moved from a short to a long source, on the build machine."""
    if short <= 0 or long <= 0:
        raise ValueError(f"times must be positive, got {short!r} and {long!r}")
    return times_as_long(long, short, f"{what} step for a source of {long_len} tokens",
                         f"for {short_len} tokens")


def all_or_count(n_true: int, n: int) -> str:
    """'all 1,234' when every one of n holds, else '1,230 of 1,234'."""
    if not 0 <= n_true <= n:
        raise ValueError(f"expected 0 <= {n_true} <= {n}")
    return f"all {n:,}" if n_true == n else f"{n_true:,} of {n:,}"


# How close to uniform a row's weights must be, as a share of the uniform entropy log S, to count
# as "close to uniform": at 0.9 a row over S = 30 tokens is as spread as uniform weights over
# 30^0.9 = 21 of them. A row is "peaked" when its strongest column holds at least PEAKED of its
# weight on average: only then is the context c_t mostly one state. Rows whose strongest column is
# the last token count when they are a majority. A reading "by sentence" needs both more weight on
# one sentence than uniform weights put there (BLOCK_MARGIN) and that sentence to be the one being
# translated at that point of the output in most rows, BLOCK_MARGIN above a sentence drawn at
# random. The page prints the measured values beside the words.
NEAR_UNIFORM = 0.9
PEAKED = 0.5
BLOCK_MARGIN = 0.15


def alignment_kind(entropy: float, peak: float, last: float, block: float, uniform_block: float,
                   current: float, chance_current: float) -> str:
    """Which reading the measured weights of an attention model support
    (`lib.experiments.alignment`):

    'uniform': mean row entropy at least NEAR_UNIFORM of log S; else, when the strongest column
    is the last source token in at least half the rows, 'last' if the strongest column holds at
    least PEAKED of a row's weight on average, 'tilt' if less (diffuse weights whose weak peak is
    the last token); else 'blocks' when the sentence a row draws on most holds BLOCK_MARGIN more
    weight than uniform weights put there AND is the sentence being translated (`current`) in at
    least half the rows and BLOCK_MARGIN above chance; else 'peaked' or 'spread' by the peak.
    block, uniform_block, current and chance_current may be nan (no source of two sentences):
    then no 'blocks'."""
    for name, share in (("entropy", entropy), ("peak", peak), ("last", last)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be a share between 0 and 1, got {share!r}")
    for name, share in (("block", block), ("uniform_block", uniform_block),
                        ("current", current), ("chance_current", chance_current)):
        if not (math.isnan(share) or 0.0 <= share <= 1.0):
            raise ValueError(f"{name} must be a share between 0 and 1 (or nan), got {share!r}")
    if entropy >= NEAR_UNIFORM:
        return "uniform"
    if last >= 0.5:
        return "last" if peak >= PEAKED else "tilt"
    if (block >= uniform_block + BLOCK_MARGIN and current >= 0.5
            and current >= chance_current + BLOCK_MARGIN):  # False when any is nan
        return "blocks"
    return "peaked" if peak >= PEAKED else "spread"


def alignment_reading(*measured: float) -> str:
    """What the measured weights of the fine-tuned attention copy say (`alignment_kind`, same
    arguments), as a sentence of its own (capitalised, no full stop) after the page's sentences
    of measured values."""
    kind = alignment_kind(*measured)
    last = measured[2]
    peaked = f"at least {100 * PEAKED:.0f} % would count as peaked"
    if kind == "uniform":
        tilt = ("; what pattern they have is a tilt towards the last source token, whose state is "
                "the summary the decoder was trained to read as its fixed context"
                if last >= 0.5 else "")
        return (f"So these weights are close to uniform (an entropy of at least "
                f"{100 * NEAR_UNIFORM:.0f} % of log S counts as close): in this budget the "
                f"fine-tuned copy has not learned to align, and these measures find no alignment, "
                f"by position or by sentence, in its heatmaps{tilt}")
    if kind == "tilt":
        return (f"So these weights are diffuse and tilted towards the end of the source: a row's "
                f"strongest column holds less than half of its weight on average ({peaked}), so "
                f"each context c_t is mostly a spread-out average of many states, not the summary "
                f"h_S, and that weak peak falls on the last source token in most rows: in this "
                f"budget these measures show no word alignment")
    if kind == "last":
        return (f"So a row's strongest column holds on average at least half of its weight "
                f"({peaked}), and in most rows that column is the last source token, whose state "
                f"is the summary its decoder was trained to read as its context: these measures "
                f"show no word alignment")
    if kind == "blocks":
        return (f"So the copy aligns by sentence: the sentence a row draws on most holds at least "
                f"{100 * BLOCK_MARGIN:.0f} points more weight than uniform weights put there, and "
                f"in most rows it is the sentence being translated at that point of the output; "
                f"these measures do not say whether, within a sentence, the weights fall on the "
                f"right words")
    if kind == "peaked":
        return (f"So a row's strongest column holds on average at least half of its weight "
                f"({peaked}), but it is not the last token in most rows, and the rows do not "
                f"follow the joined sentences in order: these measures do not say whether those "
                f"columns are the words being translated")
    return (f"So these weights are diffuse (a row's strongest column holds less than half of its "
            f"weight on average; {peaked}), yet neither close to uniform, nor peaked on the last "
            f"token in most rows, nor following the joined sentences in order: these measures "
            f"show no alignment by position or by sentence")


def alignment_summary(*measured: float) -> str:
    """The same reading as a predicate for the summary: 'the fine-tuned copy's weights ... '."""
    return {
        "uniform": "are close to uniform: it did not learn to align in this budget",
        "tilt": ("are diffuse and tilted towards the end of the source, their weak peak on the "
                 "last source token in most rows: no word alignment shows in this budget"),
        "last": ("hold on average at least half of a row's weight on its strongest column, "
                 "which is the last source token in most rows: no word alignment shows"),
        "blocks": ("follow the joined sentences in order, one at a time: it aligns by sentence, "
                   "and these measures say nothing finer"),
        "peaked": ("hold on average at least half of a row's weight on its strongest column, "
                   "but that column is not the last token in most rows, and the rows do not "
                   "follow the sentences in order: what they align with, these measures do not "
                   "say"),
        "spread": ("are diffuse, neither on the last token nor in the order of the sentences: no "
                   "alignment by position or by sentence shows"),
    }[alignment_kind(*measured)]


def difference_clause(lo: float, hi: float, a: str, b: str) -> str:
    """`paired_difference` as one clause that ends a sentence: 'a scores higher than b (the 95 %
    interval of the difference lies above zero)'."""
    verdict, where = _difference(lo, hi, a, b, "cannot be told apart")
    return f"{verdict} ({where})"


def length_range(earliest: float, latest: float, unit: str = "tokens") -> str:
    """'from 108 to 930 tokens', or 'from 108 tokens upward, with no upper end' when `latest` is
    inf (an end of an interval that never crosses): never 'inf'."""
    if not (math.isfinite(earliest) and 0 <= earliest <= latest) or math.isnan(latest):
        raise ValueError(f"need a finite 0 <= earliest <= latest, got {earliest!r} and "
                         f"{latest!r}")
    if math.isinf(latest):
        return f"from {earliest:,.0f} {unit} upward, with no upper end"
    return f"from {earliest:,.0f} to {latest:,.0f} {unit}"


def crossover_reading(by_count: float, by_clock: float | None, earliest: float | None = None,
                      latest: float | None = None, longest_timed: float | None = None) -> str:
    """Where the clock puts the source length at which attention's extra work per decoder step
    equals a whole fixed-vector step, against where the count of multiply-adds puts it
    (`by_count` tokens). `by_clock` is None when the timings give no positive length (the
    attention step's growth is not measurable, or it already costs twice the fixed step at
    S = 0). `earliest` and `latest`: the crossings at the ends of the slopes' 95 % intervals
    (`latest` inf when an end of the intervals never crosses); `longest_timed`: the longest source
    the timings measured. The count is only placed against the clock when the whole range lies on
    one side of it. Follows "by the clock, ..."."""
    if not (by_count > 0 and math.isfinite(by_count)):
        raise ValueError(f"the count's crossover must be a positive length, got {by_count!r}")
    if by_clock is None:
        return ("the timings above give no positive length to compare with it: the attention "
                "step's growth with S is not measurable, or it costs twice the fixed step "
                "already for a short source")
    if not (by_clock > 0 and math.isfinite(by_clock)):
        raise ValueError(f"the clock's crossover must be a positive length or None, got "
                         f"{by_clock!r}")
    earliest = by_clock if earliest is None else earliest
    latest = by_clock if latest is None else latest
    if not (0 < earliest <= by_clock <= latest):
        raise ValueError(f"need 0 < earliest <= by_clock <= latest, got {earliest!r}, "
                         f"{by_clock!r}, {latest!r}")
    at = f"at about {by_clock:,.0f} tokens"
    if earliest < by_clock or latest > by_clock:
        at += (f" (at the ends of the two slopes' 95 % intervals, "
               f"{length_range(earliest, latest)})")
    if longest_timed is not None and earliest > longest_timed:
        at += (f", beyond the longest source timed ({longest_timed:,.0f} tokens), so an "
               f"extrapolation of the straight lines")
    if latest < by_count / 2:
        return (f"{at}; even the latest of these comes sooner than the count says: on the "
                f"machine that built this page a multiply-add of attention takes longer than one "
                f"of the fixed step")
    if earliest > 2 * by_count:
        return (f"{at}; even the earliest of these comes later than the count says: on the "
                f"machine that built this page a multiply-add of attention takes less time than "
                f"one of the fixed step")
    if by_count / 2 <= earliest and latest <= 2 * by_count:
        return f"{at}, about where the count puts it"
    return (f"{at}: a range too wide to say whether the clock's crossing comes sooner than the "
            f"count's, later, or about where it does")


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


def share_gap(share_a: float, share_b: float, name_a: str, name_b: str, n: int,
              z: float = 2.0) -> str:
    """Two runs' shares (0-1) of the same n test items: which is ahead, by how many points,
    and whether that is more than z standard errors of a difference of two such shares."""
    for share in (share_a, share_b):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"a share is between 0 and 1, got {share!r}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    if share_a == share_b:
        return f"{name_a} and {name_b} get the same share right"
    (lead, ahead), (_, behind) = sorted([(share_a, name_a), (share_b, name_b)], reverse=True)
    gap = abs(share_a - share_b)
    p = (share_a + share_b) / 2
    noise = z * math.sqrt(max(2 * p * (1 - p), 1 / n) / n)
    text = f"{ahead} is ahead of {behind} by {100 * gap:.1f} points"
    if gap > noise:
        return (f"{text}, more than the noise of {n:,} test items (about {100 * noise:.1f} "
                f"points)")
    return (f"{text}, within the noise of {n:,} test items (about {100 * noise:.1f} points): "
            f"this sample cannot rank them")


def gradient_against(g_a: float, g_b: float, other: str) -> str:
    """'passes back about 1,000 times more of the gradient than <other>', '... about as much
    ... as <other>' (within a factor of 3 either way) or '... less ...': gradients after the
    same number of steps, compared by order of magnitude (they span many)."""
    if not (g_a > 0 and g_b > 0 and math.isfinite(g_a) and math.isfinite(g_b)):
        raise ValueError(f"gradient norms must be positive and finite, got {g_a!r}, {g_b!r}")
    ratio = g_a / g_b
    if ratio >= 3:
        return f"passes back {_order(ratio)} more of the gradient than {other}"
    if ratio > 1 / 3:
        return f"passes back about as much of the gradient as {other}"
    return f"passes back {_order(1 / ratio)} less of the gradient than {other}"


# --- prediction head, beam search, BLEU (#27 §5 review) ---------------------------------------


def count_of(n: int, singular: str, plural: str | None = None) -> str:
    """'1 sentence', '3 sentences', '0 sentences': a count with its noun in the right number."""
    if n < 0:
        raise ValueError(f"a count cannot be negative, got {n!r}")
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def two_way_choice(first: str, p_first: float, second: str, p_second: float,
                   together: float = 0.8) -> str:
    """An unsure step described by its two favourite words: a choice between two words when
    they hold at least `together` of the probability between them, a wider spread otherwise."""
    if not 0 <= p_second <= p_first <= 1:
        raise ValueError(f"need 0 <= p_second <= p_first <= 1, got {p_first!r}, {p_second!r}")
    both = p_first + p_second
    head = (f"«{first}» gets {p_first:.2f} and «{second}» {p_second:.2f}")
    if both >= together:
        return (f"{head}: {100 * both:.0f} % of the probability between them, a choice between "
                f"two words rather than ignorance")
    return (f"{head}, only {100 * both:.0f} % between them: the rest is spread over other "
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
            f"{100 * mass:.0f} % of the probability together")
    if words[0] == unk:
        text += (f"; the favourite is {unk}, the token that stands for every word outside "
                 f"the vocabulary")
    if mass < 0.5:
        text += ": the probability is spread thin, the model's way of saying it does not know"
    return text


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
    parts = []
    if under:
        parts.append(f"under-confident beyond {z:g} standard errors in {which(under)}")
    if over:
        parts.append(f"over-confident beyond {z:g} standard errors in {which(over)}")
    if noise:
        parts.append(f"within sampling noise in {which(noise)}")
    return "; ".join(parts)


def calibration_pooled(right: float, expected: float, variance: float, n: int,
                       z: float = 2.0) -> str:
    """Calibration of all positions together: the count of right top words against the sum of
    their P(top), `expected`, judged against `variance`, the sum of P(top) (1 - P(top)): the
    spread a calibrated model's count would have. It sees a lean that every group shares."""
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


def smoothing_gap(measured: float, design: float, tolerance: float = 0.25) -> str:
    """The uniform term of label smoothing as measured, against -log(eps / |S|), its value for
    a model whose distribution equals the smoothed target (both in nats per position)."""
    gap = measured - design
    if gap > tolerance:
        return (f"{gap:.1f} nats above the {design:.1f} of a model that matched the smoothed "
                f"target exactly, so on (geometric) average a word of S gets "
                f"{math.exp(gap):.1f} times less than ε/|S|: the model spreads ε unevenly, "
                f"and by Jensen's inequality any uneven spread raises the term")
    if gap < -tolerance:
        return (f"{-gap:.1f} nats below the {design:.1f} of a model that matched the smoothed "
                f"target exactly: the words of S other than the reference get more than "
                f"ε/|S| on (geometric) average")
    return (f"within {tolerance:g} nats of the {design:.1f} of a model that matched the "
            f"smoothed target exactly")


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
    return (f"The mean of sentence BLEUs lies {side} corpus BLEU ({mean:.2f} against "
            f"{corpus:.2f}). Scoring every sentence on all four orders, the mean {o} "
            f"({order:+.2f} points, to {mean_full_order:.2f}); weighting each sentence by its "
            f"number of tokens, as corpus BLEU's sums do, it {w} ({weight:+.2f} points, to "
            f"{mean_weighted:.2f})")


# --- the attention chapter: what a step costs, and where the reversal model looks ---------------


def _figure(x: float, signed: bool = False, extra: int = 0) -> str:
    """A measured amount with at most about two significant figures: 102, 6.8, 0.33 (`extra`
    more decimals where two numbers would otherwise print alike)."""
    digits = (0 if abs(x) >= 10 else 1 if abs(x) >= 1 else 2) + extra
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def growth_reading(slope: float, low: float, high: float, what: str,
                   unit: str = "µs per source token", level: float = 0.95) -> str:
    """How a time grows with the source length, from a fitted slope and its interval
    (`lib.experiments.timing.slope_interval`): growth only when the whole interval is above zero."""
    if not low <= slope <= high:
        raise ValueError(f"the slope {slope!r} must lie in its interval [{low!r}, {high!r}]")
    interval = f"{100 * level:.0f} % interval"
    if low > 0:
        extra = 1 if _figure(low) == _figure(high) else 0
        return (f"{what} grows by {_figure(slope)} {unit} ({interval} {_figure(low, extra=extra)}"
                f" to {_figure(high, extra=extra)})")
    if high < 0:
        return (f"{what} shrinks by {_figure(-slope)} {unit} ({interval} {_figure(-high)} to "
                f"{_figure(-low)})")
    return (f"{what} does not change measurably with the source length ({_figure(slope, True)} "
            f"{unit}, {interval} {_figure(low, True)} to {_figure(high, True)})")


def against_count(slope: float, low: float, high: float, predicted: float,
                  unit: str = "µs per source token") -> str:
    """A measured slope (with its interval) against the slope a count of multiply-adds predicts
    (> 0), worded to follow "The measured slope is ...": 'far more' or 'less' only when the whole
    interval is beyond a factor of 2 of the prediction, 'about' only when the slope is within it,
    and otherwise that the interval is too wide to decide."""
    if predicted <= 0:
        raise ValueError(f"the predicted slope must be positive, got {predicted!r}")
    if not low <= slope <= high:
        raise ValueError(f"the slope {slope!r} must lie in its interval [{low!r}, {high!r}]")
    count = f"the {_figure(predicted)} {unit} that the count predicts"
    if high < 0:
        return (f"negative, which no count of work explains: on this machine the "
                f"measurement is too noisy to compare with {count}")
    if low <= 0:
        return (f"not distinguishable from zero on this machine, so it neither confirms nor "
                f"refutes {count}")
    ratio = slope / predicted
    if low > 2 * predicted:
        return f"{_figure(ratio)} times {count}: far more than the count"
    if high < predicted / 2:
        return f"only {_figure(ratio)} times {count}: less than the count"
    if 0.5 <= ratio <= 2:
        return f"{_figure(ratio)} times {count}: about what the count says"
    return (f"{_figure(ratio)} times {count}, but its interval ({_figure(low)} to "
            f"{_figure(high)}) is too wide on this machine to rule the count out")


def anti_diagonal(copied: float, after: float) -> str:
    """Where the reversal model's attention lies, from two shares (0-1) measured over the rows
    of a heatmap: on the column of the digit being copied, and on the column just after it (the
    next state, which has read that digit too). Shares of weight or of rows' peaks alike."""
    for name, share in (("copied", copied), ("after", after)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be a share between 0 and 1, got {share!r}")
    if copied >= 0.5:
        return "on the anti-diagonal itself, the column of the digit being copied"
    if after >= 0.5:
        return ("one column right of the anti-diagonal, on the state just after the digit "
                "being copied")
    if copied + after >= 0.5:
        return "spread over the anti-diagonal and the column right of it"
    return "mostly away from the anti-diagonal and the column right of it"


def last_windows(values: Sequence[float], share: float = 0.2) -> tuple[float, float]:
    """The means of a curve's last two windows, each `share` of its points: (the window before
    the last, the last). Two means of many points, not two single points of a noisy curve."""
    if not 0 < share <= 0.5:
        raise ValueError(f"share must be above 0 and at most 0.5, got {share!r}")
    n = max(1, round(share * len(values)))
    if len(values) < 2 * n or not values:
        raise ValueError(f"{len(values)} values are too few for two windows of {n}")
    before, last = values[len(values) - 2 * n:len(values) - n], values[len(values) - n:]
    return sum(before) / n, sum(last) / n


def relative_change(before: float, after: float, tolerance: float = 0.01) -> str:
    """How `after` compares with `before` (> 0), worded to follow "... was" and to be followed by
    what it is compared with: '12 % lower than', '3 % higher than', or 'within 1 % of' when the
    change is at most `tolerance`."""
    if not before > 0:
        raise ValueError(f"the value before must be positive, got {before!r}")
    change = (after - before) / before
    if abs(change) <= tolerance:
        return f"within {100 * tolerance:.0f} % of"
    return f"{100 * abs(change):.0f} % {'lower' if change < 0 else 'higher'} than"


def offset_tally(offsets: Sequence[int]) -> str:
    """How many rows have which offset, the most common first, worded to follow "of the other N
    rows, ...": 'all 19 have offset +1', '12 of 19 have offset +1 and 7 offset +0', '12 of 19
    have offset +1, 5 offset +0 and 2 other offsets' ('the one row has offset +1' for one row).
    Ties go to the offset nearer 0."""
    if not offsets:
        raise ValueError("no offsets to count")
    counts: dict[int, int] = {}
    for o in offsets:
        counts[o] = counts.get(o, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], abs(item[0]), item[0]))
    (first, n_first), rest = ranked[0], ranked[1:]
    if len(offsets) == 1:
        return f"the one row has offset {first:+d}"
    text = f"{all_or_count(n_first, len(offsets))} {'has' if n_first == 1 else 'have'} offset " \
           f"{first:+d}"
    if not rest:
        return text
    second, n_second = rest[0]
    others = sum(n for _, n in rest[1:])
    second_text = f"{n_second:,} offset {second:+d}"
    if not others:
        return f"{text} and {second_text}"
    return (f"{text}, {second_text} and {others:,} "
            f"{'another offset' if others == 1 else 'other offsets'}")


def parts_by_length(table: Sequence[tuple[str, dict[int, int]]]) -> str:
    """Whether the source-length buckets of joined sources also sort them by the number of
    sentences joined: table is [(bucket label, {sentences joined: sources})] from short to long.
    Names each bucket's most common number; says the two go together only when that number
    grows from every bucket to the next."""
    if len(table) < 2 or any(not counts or sum(counts.values()) < 1 for _, counts in table):
        raise ValueError("need at least two buckets, each with at least one source")
    modes = []
    for label, counts in table:
        k, n = max(counts.items(), key=lambda item: (item[1], -item[0]))
        modes.append((label, k, n, sum(counts.values())))
    listed = "; ".join(f"{label} tokens: {count_of(k, 'sentence')} in "
                       f"{all_or_count(n, total)} sources" for label, k, n, total in modes)
    if all(b[1] > a[1] for a, b in zip(modes, modes[1:])):
        return (f"the most common number of joined sentences grows from every bucket to the next "
                f"({listed}), so a step from one bucket to the next is also a step to more "
                f"sentences in one input, and this comparison cannot tell the two apart")
    return (f"the most common number of joined sentences does not grow from every bucket to the "
            f"next ({listed}), so the buckets do not stand one to one for numbers of sentences")


# --- intro, tensors, encoder (#27 §5 review 2) ------------------------------------------------


def gradient_trend(norm: float, vanish: float = 1e-2, explode: float = 1e1) -> str:
    """'vanishes', 'shrinks but survives', 'grows' or 'explodes': gradient_fate with the
    survivors split at 1, so a factor above 1 (growth) is never called survival."""
    if not (norm >= 0 and math.isfinite(norm)):
        raise ValueError(f"a gradient norm must be finite and >= 0, got {norm!r}")
    if norm < vanish:
        return "vanishes"
    if norm > explode:
        return "explodes"
    return "shrinks but survives" if norm < 1 else "grows"


def factor_against(g_a: float, g_b: float, other: str) -> str:
    """'is about 20 times larger than <other>', 'is about as large as <other>' (within a factor
    of 3) or '... smaller ...': two gradient factors by size, with no word for which is better
    (a larger factor can be growth, not survival)."""
    if not (g_a > 0 and g_b > 0 and math.isfinite(g_a) and math.isfinite(g_b)):
        raise ValueError(f"gradient factors must be positive and finite, got {g_a!r}, {g_b!r}")
    ratio = g_a / g_b
    if ratio >= 3:
        return f"is {_order(ratio)} larger than {other}"
    if ratio > 1 / 3:
        return f"is about as large as {other}"
    return f"is {_order(1 / ratio)} smaller than {other}"


def probe_gap(acc_a: float, acc_b: float, lo: float, hi: float, a: str, b: str,
              ceiling: float = 0.99) -> str:
    """A probe comparison that refuses to rank two accuracies both at the ceiling (a handful
    of sentences would flip it); otherwise the paired interval's verdict."""
    for name, acc in (("acc_a", acc_a), ("acc_b", acc_b)):
        if not 0.0 <= acc <= 1.0:
            raise ValueError(f"{name} must be an accuracy between 0 and 1, got {acc!r}")
    if acc_a >= ceiling and acc_b >= ceiling:
        return (f"{a} and {b} are both at the ceiling, so this probe cannot tell them apart")
    return paired_difference(lo, hi, a, b)


def stretch_bound(sigma1: float) -> str:
    """What the largest singular value of W_hh says about one step: below 1 the safe bound
    holds (no vector is stretched), from 1 on it does not."""
    if not (sigma1 >= 0 and math.isfinite(sigma1)):
        raise ValueError(f"a singular value must be finite and >= 0, got {sigma1!r}")
    if sigma1 < 1:
        return "below 1, so the safe bound above applies and no single step stretches a vector"
    return ("at least 1, so the safe bound above does not apply and one step can stretch some "
            "vectors")


def growth_words(before: float, after: float) -> str:
    """How a positive rate changed, in words: 'more than doubles', 'more than triples',
    'grows 1.5-fold', 'barely changes' or 'falls', from after / before."""
    if not (before > 0 and after >= 0):
        raise ValueError(f"rates must be positive, got {before!r}, {after!r}")
    ratio = after / before
    if ratio >= 3:
        return "more than triples"
    if ratio >= 2:
        return "doubles" if ratio == 2 else "more than doubles"
    if ratio >= 1.1:
        return f"grows {ratio:.1f}-fold"
    if ratio > 1 / 1.1:
        return "barely changes"
    return "falls"


# --- decoder, teacher forcing, wrap-up (#27 §5, second review) --------------------------------

def paired_gap(only_a: int, only_b: int, n: int, name_a: str, name_b: str,
               z: float = 2.0) -> str:
    """Two models scored on the same n items, from the discordant ones: `only_a` items that
    only a gets right, `only_b` that only b does. Which is ahead, by how many points, and
    whether that is more than z standard errors of the paired difference (McNemar's view:
    items both get right or both get wrong say nothing about which is better)."""
    for count in (only_a, only_b, n):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"counts must be integers >= 0, got {count!r}")
    if n < 1 or only_a + only_b > n:
        raise ValueError(f"need n >= 1 and at most n discordant items, got {only_a} + "
                         f"{only_b} of {n}")
    if only_a == only_b:
        return (f"{name_a} and {name_b} get the same share right ({only_a} items only one of "
                f"them gets right, {only_b} only the other)")
    (lead, ahead, behind), (trail, _, _) = sorted(
        [(only_a, name_a, name_b), (only_b, name_b, name_a)], reverse=True)
    gap = (lead - trail) / n
    se = math.sqrt(max(lead + trail - (lead - trail) ** 2 / n, 0.0)) / n
    text = (f"{ahead} is ahead of {behind} by {100 * gap:.1f} points ({lead} of the {n:,} "
            f"items only it gets right, {trail} only the other)")
    if gap > z * se:
        return (f"{text}, more than the noise of this paired sample (about "
                f"{100 * z * se:.1f} points)")
    return (f"{text}, within the noise of this paired sample (about {100 * z * se:.1f} "
            f"points): these {n:,} items cannot rank them")


def rewording_interval(bleu_right: float, bleu_other: float, bleu_wrong: float,
                       lo: float, hi: float, n: int, tolerance: float = 1.0,
                       beyond: tuple[float, float] | None = None) -> str:
    """The exposure-bias control with the paired 95 % bootstrap interval (lo, hi) of
    bleu_right - bleu_other on n sentences: whether a right rewording costs BLEU at all is
    worded from the interval; the wrong word's extra cost as in `rewording_control`, or from
    `beyond`, the paired interval of bleu_other - bleu_wrong, when given."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    reword = bleu_right - bleu_other
    # the interval is of right - other; the sentence speaks of the change a rewording makes,
    # other - right, so it states that change's interval, (-hi, -lo), with the same sign
    span = (f"95 % interval of that change {-hi:+.1f} to {-lo:+.1f} points over {n:,} "
            f"sentences")
    if lo > 0:
        first = (f"a right rewording alone changes the score by {-reword:+.1f} points ({span}), "
                 f"so BLEU does count rewording as damage")
    elif hi < 0:
        first = (f"a right rewording even changes the score by {-reword:+.1f} points ({span}), "
                 f"so here BLEU does not count rewording as damage")
    else:
        first = (f"a right rewording changes the score by {-reword:+.1f} points, but the "
                 f"{span} includes zero, so these sentences cannot say how much BLEU counts "
                 f"rewording as damage")
    second = _beyond_rewording(bleu_other - bleu_wrong, tolerance, *(beyond or (None, None)))
    return f"{first}; {second}"


def part_within_whole(sentence: str, part: float, whole: float, part_name: str,
                      whole_name: str) -> str:
    """`sentence` (a timing comparison) when a part's time is at most that of the whole that
    contains it; otherwise that these timings were too noisy to compare, since a part cannot
    really take longer than its whole."""
    if not (part > 0 and whole > 0):
        raise ValueError(f"times must be positive, got {part!r} and {whole!r}")
    if part <= whole:
        return sentence
    return (f"the timings were too noisy to compare on the machine that built this page: "
            f"{part_name} took longer than {whole_name}, which contains it")


def length_halves(short: float, long: float, lo: float, hi: float, cut: int) -> str:
    """Corpus BLEU of the sources up to `cut` tokens and of the longer ones, with the 95 %
    bootstrap interval (lo, hi) of long - short: 'rises', 'falls' or 'does not clearly
    change' with length, and which way the two point estimates go."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    both = (f"sources of more than {cut} tokens score {long:.1f}, those of {cut} or fewer "
            f"{short:.1f} (95 % interval of the difference {lo:+.1f} to {hi:+.1f})")
    if lo > 0:
        return f"rises with length: {both}"
    if hi < 0:
        return f"falls with length: {both}"
    way = comparison(long, short, more="higher", less="lower", same="level")
    lean = "are level" if way == "level" else f"put the longer half {way}"
    return (f"does not clearly change with length: {both}; the point estimates {lean}, but "
            f"the interval includes zero")


def place_of(name: str, scores: dict[str, float], what: str) -> str:
    """Where run `name` places among `scores` (higher is better): 'has the highest <what> of
    the 4 runs', 'the lowest ...', or 'is 2nd of the 4 runs in <what>' (ties share a place)."""
    if name not in scores or len(scores) < 2:
        raise ValueError(f"need {name!r} among at least two runs, got {sorted(scores)}")
    n, x = len(scores), scores[name]
    above = sum(v > x for v in scores.values())
    below = sum(v < x for v in scores.values())
    if above == 0 and below == 0:
        return f"has the same {what} as the other {n - 1} runs"
    if above == 0:
        return f"has the highest {what} of the {n} runs"
    if below == 0:
        return f"has the lowest {what} of the {n} runs"
    place = above + 1
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(place if place < 20 else place % 10, "th")
    return f"is {place}{suffix} of the {n} runs in {what}"


def loss_vs_exact(free: dict[str, float], exact: dict[str, float]) -> str:
    """Whether the run with the lowest free-running loss also reverses the most sequences
    exactly; when not, says that the two measures reward different things."""
    if set(free) != set(exact) or len(free) < 2:
        raise ValueError("need the same runs, at least two, in both measures")
    low = min(free, key=free.get)
    best = [k for k in exact if exact[k] == max(exact.values())]
    if low in best:
        return (f"here the run with the lowest free-running loss, {low}, also reverses the most "
                f"sequences exactly")
    return (f"here {low} has the lowest free-running loss, yet {' and '.join(best)} "
            f"reverses more sequences exactly: the loss rewards probability on every right "
            f"digit, partly right sequences included, while exact match gives nothing to a "
            f"sequence with one wrong digit")


# --- decoder, prediction head, teacher forcing (third review) ---------------------------------

def _paired_side(only_a: int, only_b: int, n: int, z: float = 2.0) -> int:
    """+1 when a is ahead of b by more than z standard errors of the paired difference (as in
    `paired_gap`), -1 when b is, 0 when the gap is within that noise."""
    for count in (only_a, only_b, n):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"counts must be integers >= 0, got {count!r}")
    if n < 1 or only_a + only_b > n:
        raise ValueError(f"need n >= 1 and at most n discordant items, got {only_a} + "
                         f"{only_b} of {n}")
    gap = (only_a - only_b) / n
    se = math.sqrt(max(only_a + only_b - (only_a - only_b) ** 2 / n, 0.0)) / n
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
    if off == 0:
        return (f"the fed context's lead over the initial state only is within the noise of "
                f"these {n:,} held-out sequences, so this run does not show that feeding the "
                f"context helps")
    if off < 0:
        return (f"the initial state only does better than the fed context, beyond the noise of "
                f"these {n:,} held-out sequences, so this run does not show that feeding the "
                f"context helps")
    lead = (f"the fed context is ahead of the initial state only beyond the noise of these "
            f"{n:,} held-out sequences")
    if wide > 0:
        return (f"{lead}, and also ahead of the wider model without it, so on this seed and "
                f"budget the extra weights and the wider state that run adds do not explain "
                f"the gap; the wiring does")
    if wide == 0:
        return (f"{lead}, but the wider model without it, with about as many weights, comes "
                f"within the noise of it: the gap is as well explained by size as by the "
                f"wiring")
    return (f"{lead}, but the wider model without it does better still, beyond the noise: "
            f"size, not the wiring, explains the gap here")


def rewording_summary(lo: float, hi: float) -> str:
    """The summary's clause about the exposure-bias control, from the same 95 % interval
    (lo, hi) of right - other as `rewording_interval`: whether even a rewording that another
    reference continues lowers BLEU (a lower bound on what a rewording costs)."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    if lo > 0:
        return ("the control with another reference's first word shows that BLEU counts even a "
                "rewording that a reference continues as damage, so part of that drop can be "
                "rewording, and the control's cost is only a lower bound on that part")
    if hi < 0:
        return ("the control with another reference's first word found that a rewording that a "
                "reference continues does not lower BLEU here (one that no reference continues "
                "still may)")
    return ("the control with another reference's first word could not tell whether even a "
            "rewording that a reference continues lowers BLEU (its interval includes zero)")


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def _steps_of(curves: dict) -> list:
    if len(curves) < 2:
        raise ValueError("need at least two runs")
    steps = [s for s, _ in next(iter(curves.values()))]
    if not steps or any([s for s, _ in c] != steps for c in curves.values()):
        raise ValueError("every run needs the same, non-empty checkpoints")
    return steps


def _span(steps: Sequence[int]) -> str:
    return f"step {steps[0]}" if len(steps) == 1 else f"steps {steps[0]} to {steps[-1]}"


def checkpoint_leaders(curves: dict[str, Sequence[tuple[int, float]]]) -> str:
    """curves: run name -> [(step, score)] at the same checkpoints, higher is better. Which run
    leads at every checkpoint, or, when the lead changes, who leads when: a ranking at the last
    checkpoint of a short budget holds only if it held on the way there."""
    steps = _steps_of(curves)
    leaders = []
    for i in range(len(steps)):
        best = max(c[i][1] for c in curves.values())
        leaders.append(tuple(k for k, c in curves.items() if c[i][1] == best))
    common = [k for k in leaders[0] if all(k in lead for lead in leaders)]
    if common:
        who = " and ".join(common)
        verb = "leads" if len(common) == 1 else "share the lead"
        return (f"{who} {verb} at every one of the {len(steps)} checkpoints ({_span(steps)})")
    runs, start = [], 0
    for i in range(1, len(steps) + 1):
        if i == len(steps) or leaders[i] != leaders[start]:
            runs.append(f"{' and '.join(leaders[start])} at {_span(steps[start:i])}")
            start = i
    return (f"the lead changes between the {len(steps)} checkpoints ({'; '.join(runs)}), so "
            f"the ranking at the end of this budget is not a settled one")


def checkpoint_places(name: str, curves: dict[str, Sequence[tuple[int, float]]],
                      what: str) -> str:
    """Where run `name` places (higher is better, ties share a place) at each checkpoint of
    `curves`: the same place throughout, or the range of places it moves between."""
    steps = _steps_of(curves)
    if name not in curves:
        raise ValueError(f"{name!r} is not among {sorted(curves)}")
    places = [1 + sum(c[i][1] > curves[name][i][1] for c in curves.values())
              for i in range(len(steps))]
    n = len(curves)
    if len(set(places)) == 1:
        return (f"it is {_ordinal(places[0])} of the {n} runs in {what} at every one of the "
                f"{len(steps)} checkpoints")
    return (f"across the {len(steps)} checkpoints it moves between {_ordinal(min(places))} and "
            f"{_ordinal(max(places))} of the {n} runs in {what}")


def share_interval(lo: float, hi: float, a: str, b: str) -> str:
    """A 95 % interval (lo, hi), in points, of one share minus another measured on the same
    items (a paired bootstrap), in words: 'a is lower than b (the 95 % interval of the
    difference, -9.0 to -1.0 points, lies below zero)', higher, or not told apart when the
    interval includes zero. `a` and `b` name the shares ('the beam's share of search errors',
    'greedy's')."""
    side = _side_of_zero(lo, hi)
    span = f"the 95 % interval of the difference, {lo:+.1f} to {hi:+.1f} points"
    return {"above": f"{a} is higher than {b} ({span}, lies above zero)",
            "below": f"{a} is lower than {b} ({span}, lies below zero)",
            "zero": f"{a} cannot be told apart from {b} on these items ({span}, includes zero)"
            }[side]

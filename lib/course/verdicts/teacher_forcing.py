"""The sentences of the teacher-forcing chapter (book/teacher_forcing.md): timings of a part
against its whole, the exposure-bias experiment and its rewording control, the ratio
experiment's test set and the rankings of its runs (by exact match, by loss, at every
checkpoint)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lib.course.verdicts import wording

_HERE = "the machine that built this page"


def times_as_long_here(slow: float, fast: float, what: str = "", than: str = "") -> str:
    """`wording.times_as_long` without its machine clause: 'stepping took 1.2 times as long as
    one call', for a second timing in a sentence whose first one names the machine."""
    return wording.times_as_long(slow, fast, what, than, _HERE).removesuffix(f" on {_HERE}")


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


def exposure_drop(before: float, after: float, lo: float, hi: float) -> str:
    """BLEU of a continuation after a right (`before`) and after a wrong (`after`) forced first
    token, with the paired 95 % interval (lo, hi) of before - after on the same sentences: each
    bound's sign is the sign of the change, so the words follow the interval, and scores that
    move against it are refused."""
    side = wording.side_of_zero(lo, hi)
    if (side == "above" and after >= before) or (side == "below" and after <= before):
        raise ValueError(f"the scores {before} -> {after} move against the interval of "
                         f"before - after, {lo} to {hi}")
    if side == "above":
        return (f"falls from {before:.1f} to {after:.1f} (the fall's 95 % interval: {lo:.1f} "
                f"to {hi:.1f} points)")
    if side == "below":
        return (f"rises from {before:.1f} to {after:.1f} (the rise's 95 % interval: {-hi:.1f} "
                f"to {-lo:.1f} points)")
    return (f"goes from {before:.1f} to {after:.1f}, a change whose 95 % interval "
            f"({-hi:+.1f} to {-lo:+.1f} points) includes zero")


# The control forces another reference's first word (one drawn at random), which that
# reference continues, so BLEU can credit it. It is one rewording among many: a good rewording
# that no reference continues may cost more, so the control bounds neither exposure bias nor
# the part of the drop that rewording explains; it only says whether the wrong word costs more
# than this rewording.
_MORE = "so it costs more than a rewording that a reference continues"
_MAY_ALL = "the drop may all be rewording"


def beyond_rewording(lo: float, hi: float) -> str:
    """How far the wrong word scores below the control's word, from the paired 95 % interval
    (lo, hi) of other - wrong on the control's sentences: each bound's sign is the sign of
    the difference. One sentence, capitalised."""
    side = wording.side_of_zero(lo, hi)
    if side == "above":
        return (f"The wrong word scores {lo:.1f} to {hi:.1f} points below the other "
                f"reference's word (95 % interval), {_MORE}")
    if side == "below":
        return (f"The wrong word scores {-hi:.1f} to {-lo:.1f} points above the other "
                f"reference's word (95 % interval), so {_MAY_ALL}")
    return (f"The wrong word's score minus the other reference's word's is {-hi:+.1f} to "
            f"{-lo:+.1f} points (95 % interval), which includes zero, so {_MAY_ALL}")


def forced_confidence(p_forced: float, p_plain: float, tolerance: float = 0.02) -> str:
    """The step-through's two geometric-mean probabilities of the tokens after step 1: after
    a forced wrong first token, and in the model's own unforced translation. One sentence
    saying which way they differ (within `tolerance`, about as sure), scoped to this one
    sentence: the chapter picks it as the one, among a few worst cases, whose forced
    continuation the model is least sure of, so it says nothing of sentences in general."""
    for p in (p_forced, p_plain):
        if not 0 <= p <= 1:
            raise ValueError(f"probabilities must lie in [0, 1], got {p!r}")
    if p_forced < p_plain - tolerance:
        return ("On this sentence, chosen for that low confidence, the model is less sure how "
                "to go on than in its own translation")
    if p_forced > p_plain + tolerance:
        return ("Even on this sentence, chosen for its low confidence, the model is surer of "
                "its continuation after the forced token than without it")
    return ("On this sentence, chosen for its low confidence, the model is about as sure of "
            "its continuation either way")


def shortest_test(test_min_len: int, min_len: int, seen_shorter: int,
                  possible_shorter: int) -> str:
    """The clause on the reversal test set's shortest sequence (test sequences are those the
    training set does not contain): when it is longer than the shortest length drawn, how many
    of the possible shorter sequences the training set holds, so that the reader sees why."""
    if not min_len <= test_min_len or not 0 <= seen_shorter <= possible_shorter:
        raise ValueError(f"need min_len <= test_min_len and 0 <= seen <= possible, got "
                         f"{min_len}, {test_min_len}, {seen_shorter}, {possible_shorter}")
    if test_min_len == min_len:
        return f"the shortest has {test_min_len} digits, as in training"
    held = ("all" if seen_shorter == possible_shorter else f"{seen_shorter:,} of the")
    return (f"none shorter than {test_min_len} digits: the training set holds {held} "
            f"{possible_shorter:,} possible shorter sequences")


def length_lean(test_mean: float, train_mean: float, tolerance: float = 0.05) -> str:
    """What follows 'The test set' on the mean length of the reversal test sequences against
    that of the training sequences: the unseen sequences are mostly long ones, since the
    training set holds most of the few short ones possible."""
    if not (test_mean > 0 and train_mean > 0):
        raise ValueError(f"mean lengths must be positive, got {test_mean!r} and {train_mean!r}")
    if abs(test_mean - train_mean) <= tolerance:
        return f"averages {test_mean:.1f} digits, as the training set does"
    return (f"leans {'long' if test_mean > train_mean else 'short'}: {test_mean:.1f} digits on "
            f"average, against {train_mean:.1f} in training")


def rewording_change(lo: float, hi: float) -> str:
    """What forcing another reference's first word does to BLEU, from the paired 95 % interval
    (lo, hi) of bleu_other - bleu_right: the sign of each bound is the sign of the change.
    One sentence, capitalised."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    if lo > 0:
        return (f"Forcing the other reference's first word raises the score by {lo:.1f} to "
                f"{hi:.1f} points (95 % interval), so BLEU does not count this rewording as "
                f"damage")
    if hi < 0:
        return (f"Forcing the other reference's first word lowers the score by {-hi:.1f} to "
                f"{-lo:.1f} points (95 % interval), so BLEU counts even this rewording as damage")
    return (f"Forcing the other reference's first word changes the score by {lo:+.1f} to "
            f"{hi:+.1f} points (95 % interval), which includes zero: no cost of this rewording "
            f"is measurable")


def rewording_summary(lo: float, hi: float, n: int) -> str:
    """The summary's sentence about the exposure-bias control on the `n` sentences whose
    references start in more than one way, from the same 95 % interval (lo, hi) of other -
    right as `rewording_change`: whether forcing another reference's first word measurably
    changes BLEU, and which way, with the interval when it includes zero. One sentence,
    capitalised."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    control = (f"A control on the {n} sentences whose references start in more than one way "
               f"(forcing another reference's first word)")
    if hi < 0:
        return f"{control} lowered BLEU too, so part of that drop can be rewording"
    if lo > 0:
        return (f"{control} raised BLEU; a rewording that no reference continues may still "
                f"lower it")
    return (f"{control} changed BLEU by {lo:+.1f} to {hi:+.1f} points (95 % interval), which "
            f"includes zero")


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


def lowest(values: dict, what: str = "") -> str:
    """'ratio 1.0' style name of the key with the lowest value; ties are named together."""
    best = min(values.values())
    keys = [k for k, v in values.items() if v == best]
    return " and ".join(f"{what}{k}" for k in keys)


def highest(values: dict, what: str = "") -> str:
    """Like `lowest`, for the highest value."""
    return lowest({k: -v for k, v in values.items()}, what)


def loss_ranking(forced: dict[str, float], free: dict[str, float]) -> str:
    """Which runs have the lowest forced loss, the lowest free-running loss and the smallest
    gap between the two (ties named together), as one sentence."""
    gap = {k: free[k] - forced[k] for k in forced}
    return (f"The lowest forced loss belongs to {lowest(forced)}, the lowest free-running loss "
            f"to {lowest(free)}, and the smallest gap between the two to {lowest(gap)}")


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


def still_rising(curves: dict[str, Sequence[tuple[int, float]]], what: str) -> str:
    """curves: run name -> [(step, score)] of the measure `what`, higher is better. How many
    runs score higher at the last checkpoint than at every earlier one, i.e. had not stopped
    improving by that measure when the budget ended, and what the ranking can then claim (two
    sentences then, the second capitalised, to keep each short)."""
    steps = _steps_of(curves)
    if len(steps) < 2:
        raise ValueError("need at least two checkpoints")
    rising = sum(c[-1][1] > max(x for _, x in c[:-1]) for c in curves.values())
    n, last = len(curves), steps[-1]
    if rising == 0:
        return (f"no run had its best {what} at the last checkpoint, step {last}: by that "
                f"measure they had stopped improving before the end of this budget")
    if rising == n:
        return (f"all {n} runs had their best {what} at the last checkpoint, step {last}, so "
                f"none had stopped improving by that measure. This ranks the runs at this "
                f"budget only")
    return (f"{rising} of the {n} runs had their best {what} at the last checkpoint, step "
            f"{last}, so they had not stopped improving by that measure. This ranks the runs at "
            f"this budget only")

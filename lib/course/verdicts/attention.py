"""The sentences of the attention chapter (book/attention.md): the reversal toy's loss curves and
exact reversals, where its attention lies, the two real-language models by source length and the
alignment of their weights, and what a decoder step costs against the source length (the slopes,
the count of multiply-adds and where the two cross)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lib.course.verdicts.wording import all_or_count, comparison, side_of_zero, trend
from lib.experiments.alignment import NEAR_UNIFORM, alignment_kind


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


def at_zero_reading(fixed: float, at_zero: float, on_paper: float,
                    tolerance: float = 0.01) -> str:
    """The attention step's fitted time at S = 0 (`at_zero`) against the fixed step's median time
    (`fixed`, > 0), beside the share (0-1) that A·H adds to a fixed step on paper. Says that each
    extra call has a cost of its own only when the measured excess is over twice that share. A
    sentence, capitalised, without its full stop."""
    if not 0.0 <= on_paper <= 1.0:
        raise ValueError(f"on_paper must be a share between 0 and 1, got {on_paper!r}")
    compared = relative_change(fixed, at_zero, tolerance)  # refuses a fixed time <= 0
    change = (at_zero - fixed) / fixed
    text = (f"Even at S = 0 the attention step's fitted time is {compared} the fixed step's "
            f"median, where A·H adds {100 * on_paper:.1f} % on paper")
    if change > max(2 * on_paper, tolerance):
        return f"{text}: each extra call has a cost of its own"
    if change < -tolerance:
        return f"{text}: a fit below the step it extends, so the timing's noise hides it"
    return f"{text}, about what the count says"


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


def size_verdict(fixed: dict[int, int], attention: dict[int, int], longest: int) -> str:
    """The reversal toy by state size: {units: the longest length reversed exactly at least half
    the time} for each decoder (`lib.experiments.bottleneck.longest_reversed`), and the longest
    length tested. Says whether the fixed vector's grows with every larger state and whether
    attention's reaches the longest tested at every size. Capitalised, no full stop."""
    for name, runs in (("fixed", fixed), ("attention", attention)):
        if not runs or any(not 0 <= n <= longest for n in runs.values()):
            raise ValueError(f"{name}: lengths from 0 to {longest} for at least one size")
    f = [fixed[h] for h in sorted(fixed)]
    units = ", ".join(str(h) for h in sorted(fixed))
    grows = len(f) > 1 and all(y > x for x, y in zip(f, f[1:]))
    if all(n == longest for n in attention.values()):
        held = f"attention's reaches the longest tested, {longest}, at every size tried"
    else:
        held = "attention's falls short of the longest tested at " + ", ".join(
            f"{h} units ({n})" for h, n in sorted(attention.items()) if n < longest)
    return (f"The longest length up to which the fixed vector reverses at least half the "
            f"sequences exactly {'grows' if grows else 'does not grow'} with its state ("
            + ", ".join(str(n) for n in f) + f" digits at {units} units); {held}")


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


def _growth_interval(growth: Sequence[float]) -> tuple[float, float, float]:
    d, lo, hi = growth
    if not lo <= d <= hi:
        raise ValueError(f"the growth must lie in its interval, got {d, lo, hi}")
    return d, lo, hi


def lead_reading(fixed: Sequence[float], attention: Sequence[float], short: float,
                 long: float) -> str:
    """BLEU by length bucket for each decoder, and attention's lead on short and on long sources:
    in how many buckets attention is ahead. Capitalised, no full stop."""
    if len(fixed) != len(attention) or not fixed:
        raise ValueError("one BLEU per length bucket for each decoder")
    ahead = sum(a > f for f, a in zip(fixed, attention))
    where = ("in every length bucket" if ahead == len(fixed)
             else f"in {ahead} of the {len(fixed)} length buckets")
    return (f"Attention is ahead {where}, by {short:+.1f} BLEU on short sources and "
            f"{long:+.1f} on long ones")


def reference_size_pair(joined: Sequence[float], longest: Sequence[float]) -> str:
    """The pair trained at the reference model's size (bench.from_scratch, on a GPU): attention
    minus fixed vector as (difference, low, high) of a paired bootstrap on all joined sources and
    on the longest ones, and what the longest say about a bottleneck. No capital, no full stop."""
    (d, lo, hi), (dl, llo, lhi) = joined, longest
    numbers = (f"attention minus fixed vector is {d:+.1f} BLEU on all joined sources (95 % "
               f"interval {lo:+.1f} to {hi:+.1f}) and {dl:+.1f} on the longest ({llo:+.1f} to "
               f"{lhi:+.1f})")
    side = side_of_zero(llo, lhi)
    if side == "above":
        return numbers + ": attention leads on long sources, so one vector limits even this size"
    if side == "below":
        return numbers + ": the fixed vector leads on long sources"
    overall = side_of_zero(lo, hi)
    if overall == "zero":
        return numbers + ": not told apart, even on the longest sources"
    return numbers + (f": {'attention' if overall == 'above' else 'the fixed vector'} leads "
                      "overall, not on the longest sources")


def growth_kind(growth: Sequence[float], without_shortest: Sequence[float]) -> str:
    """How attention's lead changes from short to long sources, from its growth with all sources
    and without the shortest, each (growth, 95 % low, high) (`lib.experiments.long_inputs.
    lead_growth`): 'shrinks', 'noise' (the interval holds zero), 'robust' (above zero both
    ways) or 'fragile' (above zero only with the shortest sources)."""
    _, lo, hi = _growth_interval(growth)
    _, rlo, _ = _growth_interval(without_shortest)
    if hi < 0:
        return "shrinks"
    if lo <= 0:
        return "noise"
    return "robust" if rlo > 0 else "fragile"


def growth_finding(growth: Sequence[float], without_shortest: Sequence[float],
                   shortest: int = 8) -> str:
    """`growth_kind` as sentences, with both intervals. Capitalised, no last full stop."""
    (d, lo, hi), (rd, rlo, rhi) = growth, without_shortest
    full = f"{d:+.1f}, 95 % interval {lo:+.1f} to {hi:+.1f}"
    cut = f"{rd:+.1f}, {rlo:+.1f} to {rhi:+.1f}"
    kind = growth_kind(growth, without_shortest)
    if kind == "shrinks":
        return f"The lead shrinks with length ({full})"
    if kind == "noise":
        return f"Whether the lead grows with length is within the noise ({full})"
    if kind == "robust":
        return (f"The lead grows with length ({full}), and still does without the sources of "
                f"1–{shortest} tokens ({cut})")
    return (f"The lead grows with length ({full}), but not beyond the noise without the sources "
            f"of 1–{shortest} tokens ({cut}). So the lead, not its growth, is the finding")


def growth_phrase(growth: Sequence[float], without_shortest: Sequence[float]) -> str:
    """`growth_kind` as a phrase for a summary, to follow "a lead that"."""
    return {"shrinks": "shrinks with length", "noise": "does not clearly grow with length",
            "robust": "grows with length", "fragile": "does not robustly grow with length"}[
        growth_kind(growth, without_shortest)]


def peak_phrase(tokens: Sequence[str], row: Sequence[float], spread: float = 0.5) -> str:
    """Where one row of attention weights (a share per source token) lies, worded to follow
    "the row writing X": 'peaks on the state at "car" (62 %)' when its strongest column holds at
    least `spread` of the weight, else 'spreads over the states at "red", "car" and "."' (the
    columns holding at least a fifth each, in source order, the strongest alone when none other
    does). A column is the encoder's state after reading its token, not the token itself."""
    if len(tokens) != len(row) or not tokens:
        raise ValueError("one weight per source token")
    if any(w < 0 for w in row) or abs(sum(row) - 1.0) > 1e-3:
        raise ValueError("a row of attention weights is non-negative and sums to 1")
    top = max(range(len(row)), key=lambda j: row[j])
    if row[top] >= spread:
        return f'peaks on the state at "{tokens[top]}" ({100 * row[top]:.0f} %)'
    held = [f'"{tokens[j]}"' for j in range(len(row)) if row[j] >= 0.2] or [f'"{tokens[top]}"']
    if len(held) == 1:
        return f"peaks weakly on the state at {held[0]} ({100 * row[top]:.0f} %)"
    return f"spreads over the states at {', '.join(held[:-1])} and {held[-1]}"


def reading_order(peaks: Sequence[Sequence[int]]) -> str:
    """How the rows of some heatmaps move over the source: `peaks` holds, per heatmap, each
    output row's strongest source column in output order. A sentence, without its full stop."""
    if not peaks or any(not p or any(c < 0 for c in p) for p in peaks):
        raise ValueError("one non-empty list of source columns (>= 0) per heatmap")
    back = sum(any(b < a for a, b in zip(p, p[1:])) for p in peaks)
    maps = "both maps" if len(peaks) == 2 else f"all {len(peaks)} maps"
    if back == 0:
        return (f"In {maps} the rows' peaks never move back to an earlier column, even where "
                f"French puts a word earlier than English does")
    if back == len(peaks):
        return (f"In {maps} the rows' peaks go back to an earlier source column at least once, "
                f"as French reorders")
    return (f"The rows' peaks go back to an earlier source column in {back} of the "
            f"{len(peaks)} maps and never in the others")


def copy_reading(on_word: float, after_word: float) -> str:
    """Where an attention model looks while it writes a name or number it copies
    (`lib.experiments.alignment.CopyAlignment`'s shares, 0-1): a phrase to follow "the row's
    strongest column is"."""
    for name, share in (("on_word", on_word), ("after_word", after_word)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be a share between 0 and 1, got {share!r}")
    if on_word + after_word > 1.0 + 1e-9:
        raise ValueError("a row's strongest column is on the word or after it, not both")
    if on_word >= 0.5:
        return "the copied word's own column in most rows"
    if after_word >= 0.5:
        return "the column just after the copied word in most rows"
    if on_word + after_word >= 0.5:
        return "the copied word's column or the one after it in most rows, neither alone"
    return "elsewhere than the copied word or the one after it in most rows"


def copy_control(by_position: float, off_diagonal: int, on_word_off_diagonal: float) -> str:
    """The control for position in `lib.experiments.alignment.CopyAlignment`: how often a reader
    by position alone (the map's diagonal) lands on the copied word, and on how many of the rows
    where the diagonal misses it the model's strongest column is the word all the same. A
    sentence, without its full stop."""
    if not 0.0 <= by_position <= 1.0:
        raise ValueError(f"by_position must be a share between 0 and 1, got {by_position!r}")
    base = (f"Reading by position alone (the diagonal) hits the copied word in "
            f"{100 * by_position:.0f} % of these rows")
    if off_diagonal == 0:
        return f"{base}, so position alone explains them"
    if not 0.0 <= on_word_off_diagonal <= 1.0:
        raise ValueError("on_word_off_diagonal must be a share between 0 and 1")
    found = round(on_word_off_diagonal * off_diagonal)
    where = f"where it misses, the model finds the word in {found} of {off_diagonal} rows"
    if on_word_off_diagonal >= 0.5:
        return f"{base}; {where}, which position alone does not explain"
    return f"{base}; {where}, so position explains much of it"


def alignment_reading(*measured: float) -> str:
    """What the measured weights of an attention model say
    (`lib.experiments.alignment.alignment_kind`, same arguments), as a sentence of its own
    (capitalised, no full stop) after the page's sentences of measured values."""
    kind = alignment_kind(*measured)
    if kind == "uniform":
        tilt = ("; they tilt towards the last source token, the summary h_S"
                if measured[2] >= 0.5 else "")
        return (f"So these weights are close to uniform (an entropy of at least "
                f"{100 * NEAR_UNIFORM:.0f} % of log S): in this budget the model has not learned "
                f"to align{tilt}")
    if kind == "tilt":
        return ("So these weights are diffuse (a row's peak holds under half its weight on "
                "average), tilted to the last source token in most rows: each c_t is a "
                "spread-out average, not the summary h_S; no word alignment shows")
    if kind == "last":
        return ("So a row's strongest column holds on average at least half of its weight, and "
                "in most rows that column is the last source token, the summary its decoder was "
                "trained to read: no word alignment shows")
    if kind == "blocks":
        return (f"So the model aligns by sentence: the sentence being translated draws the most "
                f"weight in {100 * measured[5]:.0f} % of rows, and the top sentence holds "
                f"{100 * measured[3]:.0f} % of a row's weight against {100 * measured[4]:.0f} % "
                f"for uniform weights")
    if kind == "last part":
        return ("So in most rows the sentence drawing the most weight is the source's last one, "
                "well above chance, not the one being translated")
    if kind == "peaked":
        return ("So a row's strongest column holds on average at least half its weight, yet is "
                "not the last token in most rows, nor do rows follow the sentences in order: "
                "what it aligns with, these measures do not say")
    return ("So these weights are diffuse (a row's peak holds under half its weight on average) "
            "but not uniform, their peak not mostly on the last token, nor following the "
            "sentences in order: no alignment by position or sentence shows")


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


def flat_step_reading(slope: float, low: float, high: float,
                      unit: str = "µs per source token") -> str:
    """The fitted slope of a step that never reads the source (the fixed-vector step), with its
    interval: any slope is an artefact of the timing, not the model's work. A sentence,
    capitalised, without its full stop."""
    if not low <= slope <= high:
        raise ValueError(f"the slope {slope!r} must lie in its interval [{low!r}, {high!r}]")
    span = f"{_figure(slope, True)} {unit}, 95 % interval {_figure(low, True)} to " \
           f"{_figure(high, True)}"
    if low <= 0 <= high:
        return f"The fixed-vector step, which never reads S, shows no slope ({span})"
    return (f"The fixed-vector step never reads S, yet its line slopes ({span}): an artefact of "
            f"the timing, which the extra time above cancels only where both steps share it")


def against_count(slope: float, low: float, high: float, predicted: float,
                  unit: str = "µs per source token") -> str:
    """A measured slope (with its interval) against the slope a count of multiply-adds predicts
    (> 0), as the range of their ratio over the slope's interval: 'far more' or 'less' only when
    the whole interval is beyond a factor of 2 of the prediction, 'in line' only when the slope is
    within it, and otherwise that the interval is too wide to decide."""
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
    ratios = f"{_figure(low / predicted)} to {_figure(high / predicted)} times {count}"
    if low > 2 * predicted:
        return f"{ratios}, far more than the count"
    if high < predicted / 2:
        return f"only {ratios}, less than the count"
    if 0.5 <= slope / predicted <= 2:
        return f"{ratios}, in line with the count"
    return f"{ratios}, too wide a range on this machine to rule the count out"


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
        at += f" ({length_range(earliest, latest)} across the slopes' 95 % intervals)"
    if longest_timed is not None and earliest > longest_timed:
        at += f", beyond the {longest_timed:,.0f} tokens timed"
    if latest < by_count / 2:
        return (f"{at}; even the latest comes sooner than the count says: here attention's "
                f"multiply-adds are slower")
    if earliest > 2 * by_count:
        return (f"{at}; even the earliest comes later than the count says: here attention's "
                f"multiply-adds are faster")
    if by_count / 2 <= earliest and latest <= 2 * by_count:
        return f"{at}, about where the count puts it"
    return f"{at}: too wide a range to place against the count's crossing"

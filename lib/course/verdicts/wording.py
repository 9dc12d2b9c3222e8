"""The words a verdict is made of: directions, comparisons, counts, intervals, timings.

A chapter never types "better", "rises" or "three times faster" next to a number it computes:
another model, seed or machine could make that word false. It hands the numbers to a function
of this package and glues the sentence that comes back, so the words always follow the numbers.
This module holds the words that are not about any one chapter's subject; each chapter's own
sentences, built from them, are in the module named after the chapter.

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


def trend(values: Sequence[float], tolerance: float) -> str:
    """How a series over growing lengths moves from its first to its last value:
    'falls', 'rises' or 'holds' (within `tolerance`)."""
    if len(values) < 2:
        raise ValueError("a trend needs at least two values")
    return direction(values[-1] - values[0], tolerance, up="rises", down="falls", flat="holds")


def times_as_long(slow: float, fast: float, what: str = "", than: str = "",
                  machine: str = "the machine that built this page") -> str:
    """'<what> took 2.4 times as long as <than> on the machine that built this page'.

    The factor is `machine`'s (the build's unless the times were measured elsewhere, e.g. a
    downloaded model's training): a reader's run prints its own. Between 1/1.1 and 1.1 it
    says "about as long", so no factor reads "1x"; below that, "only 0.62 times as long".
    """
    if slow <= 0 or fast <= 0:
        raise ValueError(f"times must be positive, got {slow!r} and {fast!r}")
    ratio = slow / fast
    subject = f"{what} " if what else ""
    other = f" as {than}" if than else ""
    where = f" on {machine}"
    if ratio >= 1.1:
        factor = f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}"
        return f"{subject}took {factor} times as long{other}{where}"
    if ratio > 1 / 1.1:
        return f"{subject}took about as long{other}{where}"
    return f"{subject}took only {ratio:.2f} times as long{other}{where}"


def count_of(n: int, singular: str, plural: str | None = None) -> str:
    """'1 sentence', '3 sentences', '0 sentences': a count with its noun in the right number."""
    if n < 0:
        raise ValueError(f"a count cannot be negative, got {n!r}")
    return f"{n:,} {singular if n == 1 else (plural or singular + 's')}"


def all_or_count(n_true: int, n: int) -> str:
    """'all 1,234' when every one of n holds, else '1,230 of 1,234'."""
    if not 0 <= n_true <= n:
        raise ValueError(f"expected 0 <= {n_true} <= {n}")
    return f"all {n:,}" if n_true == n else f"{n_true:,} of {n:,}"


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


def side_of_zero(lo: float, hi: float) -> str:
    """Where a 95 % interval (lo, hi) lies: "above" or "below" zero, or "zero" (includes it)."""
    if lo > hi:
        raise ValueError(f"the interval's low end {lo} is above its high end {hi}")
    return "above" if lo > 0 else "below" if hi < 0 else "zero"


def _difference(lo: float, hi: float, a: str, b: str, apart: str) -> tuple[str, str]:
    """(what a 95 % interval (lo, hi) of score(a) - score(b) says, where the interval lies):
    `apart` ends the verdict when it includes zero."""
    side = side_of_zero(lo, hi)
    verdict = {"above": f"{a} scores higher than {b}", "below": f"{a} scores lower than {b}",
               "zero": f"{a} and {b} {apart}"}[side]
    where = {"above": "lies above zero", "below": "lies below zero", "zero": "includes zero"}[side]
    return verdict, f"the 95 % interval of the difference {where}"


def paired_difference(lo: float, hi: float, a: str, b: str) -> str:
    """A 95 % interval (lo, hi) of score(a) - score(b), in words: which is higher, or that the
    difference is within the noise of the sample."""
    verdict, where = _difference(lo, hi, a, b, "are not told apart")
    return f"{verdict}: {where}"


def difference_clause(lo: float, hi: float, a: str, b: str) -> str:
    """`paired_difference` as one clause that ends a sentence: 'a scores higher than b (the 95 %
    interval of the difference lies above zero)'."""
    verdict, where = _difference(lo, hi, a, b, "cannot be told apart")
    return f"{verdict} ({where})"


def share_interval(lo: float, hi: float, a: str, b: str) -> str:
    """A 95 % interval (lo, hi), in points, of one share minus another measured on the same
    items (a paired bootstrap), in words: 'a is lower than b (the 95 % interval of the
    difference, -9.0 to -1.0 points, lies below zero)', higher, or not told apart when the
    interval includes zero. `a` and `b` name the shares ('the beam's share of search errors',
    'greedy's')."""
    side = side_of_zero(lo, hi)
    span = f"the 95 % interval of the difference, {lo:+.1f} to {hi:+.1f} points"
    return {"above": f"{a} is higher than {b} ({span}, lies above zero)",
            "below": f"{a} is lower than {b} ({span}, lies below zero)",
            "zero": f"{a} cannot be told apart from {b} on these items ({span}, includes zero)"
            }[side]

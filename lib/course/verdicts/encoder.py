"""The sentences of the encoder chapter (book/encoder.md): what happens to a gradient over many
steps, two gradients against each other by order of magnitude, the bound that the largest
singular value of W_hh sets on one step, and the probes' comparisons."""

from __future__ import annotations

import math

from lib.course.verdicts.wording import paired_difference


def gradient_fate(norm: float, vanish: float = 1e-2, explode: float = 1e1) -> str:
    """What happened to a gradient factor after many steps: 'vanishes', 'explodes' or 'survives'.

    The thresholds are the encoder chapter's convention, not a standard definition: less than
    a hundredth of the gradient reaches the first step, or it grows more than tenfold.
    """
    if norm < vanish:
        return "vanishes"
    if norm > explode:
        return "explodes"
    return "survives"


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


def curve_trend(norms) -> str:
    """The whole curve of ||dh_T/dh_t||, from t = T back to h_0 (norms[0] is h_0's factor), in
    words: 'it <gradient_trend at h_0>', and when the curve rises above 1 on the way (its peak,
    to one decimal as printed, above 1.0), that too: 'it shrinks but survives there, after
    growing as high as 5.0 on the way'. A curve judged by its endpoint alone would hide that
    growth."""
    values = [float(n) for n in norms]
    if not values:
        raise ValueError("a gradient curve needs at least one norm")
    at_end = gradient_trend(values[0])
    for n in values:
        gradient_trend(n)  # every norm finite and >= 0
    peak = max(values)
    if float(f"{peak:.1f}") <= 1.0:
        return f"it {at_end}"
    how = "exploding to" if gradient_trend(peak) == "explodes" else "growing as high as"
    if values.index(peak) == 0:  # the largest factor is h_0's own
        return f"it {at_end}"
    if at_end in ("grows", "explodes"):
        return f"it {at_end}, peaking at {peak:.1f} on the way"
    return f"it {at_end} there, after {how} {peak:.1f} on the way"


def _order(ratio: float) -> str:
    """A ratio >= 3 in words: 'about 3 times', 'about 1,000 times' (one significant digit)."""
    power = math.floor(math.log10(ratio))
    lead = round(ratio / 10 ** power)
    if lead == 10:
        lead, power = 1, power + 1
    return f"about {lead * 10 ** power:,} times"


def by_order(a: float, b: float, other: str, verb: str, more: str, same: str, less: str,
             what: str = "") -> str:
    """a against b (both > 0) by order of magnitude, for amounts that span many: '<verb> about
    1,000 times <more><what> than <other>', '<verb> about as <same><what> as <other>' (within a
    factor of 3 either way) or '<verb> about 20 times <less><what> than <other>'. The factor has
    one significant digit: 'passes back about 1,000 times more of the gradient than ...',
    'is about as large as ... (within a factor of 3)': the rule is said where it is used."""
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"gradient factors must be positive and finite, got {a!r}, {b!r}")
    ratio = a / b
    if ratio >= 3:
        return f"{verb} {_order(ratio)} {more}{what} than {other}"
    if ratio > 1 / 3:
        return f"{verb} about as {same}{what} as {other} (within a factor of 3)"
    return f"{verb} {_order(1 / ratio)} {less}{what} than {other}"


def gru_against_vanilla(g_gru: float, g_vanilla: float) -> str:
    """The default GRU's gradient after T steps, compared with the vanilla RNN's by order of
    magnitude, and whether it still vanishes (gradient_trend: growth is never called
    survival)."""
    how = by_order(g_gru, g_vanilla, "the vanilla RNN", "passes back", "more", "much", "less",
                   " of the gradient")
    trend = gradient_trend(g_gru)
    if trend == "vanishes":
        return f"{how}, yet its gradient still vanishes: gates alone do not keep it alive"
    if trend in ("explodes", "grows"):
        return f"{how}, and its gradient {trend}"
    return f"{how}, and enough of it survives to matter"


def round_up(x: float, digits: int = 2) -> float:
    """x (> 0) rounded up to `digits` significant digits, so that 'at most <round_up(x)>' stays
    true however the last digit falls: 3.41e-06 -> 3.5e-06, 3.5e-06 -> 3.5e-06."""
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"round_up needs a positive finite number, got {x!r}")
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(round(x / scale, 9)) * scale


def stretch_bound(sigma1: float) -> str:
    """What the largest singular value of W_hh says about one step: below 1 the safe bound
    holds (no step stretches a vector), from 1 on it does not (W_hh can stretch some; the
    Jacobian diag(tanh')W_hh need not)."""
    if not (sigma1 >= 0 and math.isfinite(sigma1)):
        raise ValueError(f"a singular value must be finite and >= 0, got {sigma1!r}")
    if sigma1 < 1:
        return "below 1, so the safe bound above applies and no single step stretches a vector"
    return ("at least 1, so the safe bound above does not apply and one multiplication by it "
            "can stretch some vectors")


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

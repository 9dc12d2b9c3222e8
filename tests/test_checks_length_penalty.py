"""lib.checks.length_penalty accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import math

import pytest
from conftest import assert_rejects, skeleton

from lib.checks import length_penalty as checks


def not_done(*args):
    raise NotImplementedError


def test_length_normalisation():
    assert checks.check_length_normalisation(lambda raw, n, a: raw / n ** a).ok
    result = checks.check_length_normalisation(lambda raw, n, a: raw * n ** a)
    assert not result.ok and "multiplied" in str(result)
    result = checks.check_length_normalisation(lambda raw, n, a: raw / n)
    assert not result.ok and "ignoring alpha" in str(result)
    result = checks.check_length_normalisation(lambda raw, n, a: raw / (n - 1).clamp(min=1) ** a)
    assert not result.ok
    assert not checks.check_length_normalisation(not_done).done

def test_length_normalisation_names_raw_changed_in_place():
    def normalises_in_place(raw, lengths, alpha):
        raw /= lengths.double() ** alpha
        return raw

    assert "`raw` in place" in str(checks.check_length_normalisation(normalises_in_place))


# --- GNMT's length penalty (check_gnmt) -------------------------------------------------------


def gnmt_ok(raw, lengths, alpha):
    return raw / ((5 + lengths) / 6) ** alpha


def flip_ok(raw_short, len_short, raw_long, len_long):
    return math.log(raw_long / raw_short) / math.log((5 + len_long) / (5 + len_short))


def test_gnmt_accepts_the_reference_and_an_independent_bisection():
    assert checks.check_gnmt(gnmt_ok, flip_ok).ok

    def flip_by_bisection(rs, ls, rl, ll):  # no closed form: search where the ranking flips
        lo, hi = 0.0, 20.0
        for _ in range(100):
            mid = (lo + hi) / 2
            short = rs / ((5 + ls) / 6) ** mid
            long = rl / ((5 + ll) / 6) ** mid
            lo, hi = (mid, hi) if long < short else (lo, mid)
        return (lo + hi) / 2

    assert checks.check_gnmt(gnmt_ok, flip_by_bisection).ok


@pytest.mark.parametrize("wrong, words", [
    (lambda r, L, a: r / L ** a, "GNMT's is ((5 + L) / 6)^alpha"),
    (lambda r, L, a: r * ((5 + L) / 6) ** a, "you multiplied by the penalty"),
    (lambda r, L, a: r / (5 + L) ** a, "you left out the division by 6"),
    (lambda r, L, a: r / ((5 + L) / 6), "without the power alpha"),
])
def test_gnmt_names_the_typical_mistakes(wrong, words):
    assert_rejects(checks.check_gnmt(wrong, flip_ok), words)


def test_gnmt_flip_names_the_plain_penalty_and_a_stub_is_not_done():
    def flip_plain(rs, ls, rl, ll):
        return math.log(rl / rs) / math.log(ll / ls)

    assert_rejects(checks.check_gnmt(gnmt_ok, flip_plain), "where L^alpha flips the ranking")
    assert_rejects(checks.check_gnmt(gnmt_ok, lambda *a: 0.5), "the ranking changes at alpha")
    assert not checks.check_gnmt(skeleton, skeleton).done

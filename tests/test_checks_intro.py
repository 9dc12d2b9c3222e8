"""lib.checks.intro: the checker accepts the right counts, names each classic slip, and reports an
unfinished skeleton as not done."""

from __future__ import annotations

import pytest
from conftest import assert_rejects, skeleton

from lib.checks import intro as checks

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


def path_counts(S, T, B, T_pad, V):
    return {"encoder_steps": S, "decoder_steps": T + 1, "distributions": T + 1,
            "logits": B * (T_pad + 1) * V}


def with_(**changes):
    """The right answer with some counts replaced by functions of (S, T, B, T_pad, V)."""
    def fn(S, T, B, T_pad, V):
        counts = path_counts(S, T, B, T_pad, V)
        counts.update({k: f(S, T, B, T_pad, V) for k, f in changes.items()})
        return counts
    return fn


def test_the_true_counts_are_read_off_a_model():
    assert checks.true_counts(3, 4, 1, 4, 12) == {
        "encoder_steps": 3, "decoder_steps": 5, "distributions": 5, "logits": 60}
    assert checks.true_counts(5, 7, 4, 9, 30)["logits"] == 4 * 10 * 30


def test_accepts_the_right_counts():
    result = checks.check_path_counts(path_counts)
    assert result.ok, result


def test_accepts_counts_written_as_floats():
    def floats(S, T, B, T_pad, V):
        return {k: float(v) for k, v in path_counts(S, T, B, T_pad, V).items()}

    assert checks.check_path_counts(floats).ok


def test_the_first_case_tells_every_slip_apart():
    case = checks.CASES[0]
    expected = checks.true_counts(*case)
    for key in checks.KEYS:
        values = [expected[key]] + [v for v, _ in checks._slips(key, *case)]
        assert len(set(values)) == len(values), (key, values)


@pytest.mark.parametrize("wrong, words", [
    (with_(encoder_steps=lambda S, T, B, P, V: S + 1), "no <sos> or <eos>"),
    (with_(encoder_steps=lambda S, T, B, P, V: T), "not the French one"),
    (with_(decoder_steps=lambda S, T, B, P, V: T), "has to predict <eos>"),
    (with_(decoder_steps=lambda S, T, B, P, V: T + 2), "not two extra steps"),
    (with_(decoder_steps=lambda S, T, B, P, V: P + 1), "no padding"),
    (with_(decoder_steps=lambda S, T, B, P, V: S + 1), "follow the French sentence"),
    (with_(distributions=lambda S, T, B, P, V: T), "has to predict <eos>"),
    (with_(distributions=lambda S, T, B, P, V: (T + 1) * V), "count the distributions"),
    (with_(distributions=lambda S, T, B, P, V: V), "one distribution at each of its steps"),
    (with_(logits=lambda S, T, B, P, V: B * P * V), "one position short"),
    (with_(logits=lambda S, T, B, P, V: B * (P + 2) * V), "not T_pad + 2"),
    (with_(logits=lambda S, T, B, P, V: B * (T + 1) * V), "the padding is computed too"),
    (with_(logits=lambda S, T, B, P, V: (P + 1) * V), "the batch is missing"),
    (with_(logits=lambda S, T, B, P, V: B * (P + 1)), "V is missing"),
    (with_(logits=lambda S, T, B, P, V: B * (P + 1) * (V - 4)), "special tokens included"),
    (with_(logits=lambda S, T, B, P, V: B * (P + 1) * V + 1), "is not the count"),
])
def test_names_each_slip(wrong, words):
    assert_rejects(checks.check_path_counts(wrong), words)


def test_says_what_is_wrong_with_the_returned_value():
    assert_rejects(checks.check_path_counts(lambda *a: [1, 2, 3, 4]), "return a dict")
    assert_rejects(checks.check_path_counts(with_(logits=lambda *a: "60")), "whole number")
    assert_rejects(checks.check_path_counts(with_(logits=lambda *a: 60.5)), "whole number")

    def no_logits(*args):
        counts = path_counts(*args)
        del counts["logits"]
        return counts

    assert_rejects(checks.check_path_counts(no_logits), "no 'logits'")


def test_a_skeleton_is_not_done():
    assert not checks.check_path_counts(skeleton).done
    placeholders = checks.check_path_counts(lambda *a: dict.fromkeys(checks.KEYS, ...))
    assert not placeholders.done, placeholders


def test_an_error_in_the_learners_code_is_a_message():
    result = checks.check_path_counts(lambda S, T, B, T_pad, V: {"logits": B * (T_pad + 1) / 0})
    assert_rejects(result, "your function raised ZeroDivisionError")

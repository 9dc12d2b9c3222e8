"""lib.checks.teacher_forcing: each checker accepts the reference, rejects typical mistakes with
a message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import teacher_forcing as checks
from lib.data import EOS, PAD, SOS, pad

torch.set_num_threads(1)


# --- make_reversed_io (a right-to-left decoder) -----------------------------------------------


def make_decoder_io(targets):  # left to right: the first slip the reversed checker names
    return pad([[SOS] + t for t in targets]), pad([t + [EOS] for t in targets])


def make_reversed_io(targets):
    return pad([[SOS] + t[::-1] for t in targets]), pad([t[::-1] + [EOS] for t in targets])


def test_reversed_shift_accepts_reference():
    r = checks.check_reversed_shift(make_reversed_io)
    assert r.ok, str(r)
    # the oracle, written out for one target: <sos> y3 y2 y1 and y3 y2 y1 <eos>
    tgt_in, tgt_out = make_reversed_io([[5, 6, 7]])
    assert tgt_in.tolist() == [[SOS, 7, 6, 5]] and tgt_out.tolist() == [[7, 6, 5, EOS]]


def test_reversed_shift_skeleton_is_not_done():
    assert not checks.check_reversed_shift(skeleton).done


@pytest.mark.parametrize("wrong, words", [
    (make_decoder_io, "left-to-right inputs"),
    (lambda ts: (make_decoder_io(ts)[0], make_reversed_io(ts)[1]), "only tgt_out is reversed"),
    (lambda ts: (make_reversed_io(ts)[0], make_decoder_io(ts)[1]), "only tgt_in is reversed"),
    (lambda ts: tuple(x.flip(1) for x in make_decoder_io(ts)), "flipped the padded tensors"),
    (lambda ts: (pad([([SOS] + t)[::-1] for t in ts]), pad([(t + [EOS])[::-1] for t in ts])),
     "reversed after adding <sos> and <eos>"),
    (lambda ts: make_reversed_io(ts)[::-1], "swapped"),
    (lambda ts: (make_reversed_io(ts)[1], make_reversed_io(ts)[1]), "forgot to shift"),
    (lambda ts: (pad([t[::-1] for t in ts]), pad([t[::-1] for t in ts])), "one column short"),
])
def test_reversed_shift_names_typical_mistakes(wrong, words):
    assert_rejects(checks.check_reversed_shift(wrong), words)


def test_reversed_shift_names_a_wrong_token_against_the_reversed_collate():
    def wrong(targets):
        tgt_in, tgt_out = make_reversed_io(targets)
        tgt_out = tgt_out.clone()
        tgt_out[0, 0] = 4 if int(tgt_out[0, 0]) != 4 else 5
        return tgt_in, tgt_out

    assert_rejects(checks.check_reversed_shift(wrong), "tgt_out[0, 0]",
                   "lib.data.collate builds it")


def test_reversed_shift_names_eos_in_the_inputs_and_wrong_padding():
    def eos_read(targets):  # <sos> .. <eos> cut to length: shorter rows keep their <eos>
        return (pad([[SOS] + t[::-1] + [EOS] for t in targets])[:, :-1],
                make_reversed_io(targets)[1])

    def bad_padding(targets):
        return make_reversed_io(targets)[0], pad([t[::-1] + [EOS] for t in targets], value=-1)

    assert_rejects(checks.check_reversed_shift(eos_read), "<eos>", "only has to predict it")
    assert_rejects(checks.check_reversed_shift(bad_padding), "<pad>")


# --- inputs changed in place ------------------------------------------------------------------


def test_inputs_changed_in_place_are_named():
    def reverses_in_place(targets):
        for t in targets:
            t.reverse()  # the caller's reference lists now run backwards
        return make_decoder_io(targets)

    assert_rejects(checks.check_reversed_shift(reverses_in_place),
                   "changed its input `targets[0]` in place")


# --- the scheduled-sampling schedule ----------------------------------------------------------


def inverse_sigmoid(step, k):
    return k / (k + math.exp(step / k))


def k_for_middle(steps):
    lo, hi = 1.0, float(steps)  # the ratio at the middle grows with k: bisect for 0.5
    for _ in range(60):
        k = (lo + hi) / 2
        lo, hi = (k, hi) if inverse_sigmoid(steps // 2, k) < 0.5 else (lo, k)
    return k


def test_schedule_accepts_reference_and_the_k_solves_the_equation():
    k = k_for_middle(240)
    assert checks.check_schedule(inverse_sigmoid, k, 240).ok
    # independent oracle: at ratio 1/2, k = exp(120 / k), i.e. k ln k = 120
    assert k * math.log(k) == pytest.approx(120, rel=1e-6)


def test_schedule_skeleton_is_not_done():
    assert not checks.check_schedule(skeleton, 30.0, 240).done


@pytest.mark.parametrize("fn, k, words", [
    (lambda i, k: 1 - inverse_sigmoid(i, k), None, "START near 1"),
    (lambda i, k: k / (k + math.exp(k / i)) if i else inverse_sigmoid(i, k), None,
     "step / k, not k / step"),
    (lambda i, k: k / (k + math.exp(i)), None, "returned"),
    (lambda i, k: "half", None, "must return a number"),
    (inverse_sigmoid, "last", "LAST step"),
    (inverse_sigmoid, 10.0, "try a larger k"),
    (inverse_sigmoid, 200.0, "try a smaller k"),
    (inverse_sigmoid, 0.5, "k >= 1"),
    (inverse_sigmoid, "30", "k must be a number"),
])
def test_schedule_names_typical_mistakes(fn, k, words):
    if k is None:
        k = k_for_middle(240)
    elif k == "last":
        k = k_for_middle(480)  # 0.5 at step 240: the end of the run, not its middle
    assert_rejects(checks.check_schedule(fn, k, 240), words)


def test_schedule_blames_a_small_k_not_the_checkers_arithmetic():
    """k = 1 over 2000 steps puts exp(1000) in the checker's own formula: the answer is that k
    is too small, not that the learner's function raised OverflowError (#28 §5)."""
    result = checks.check_schedule(inverse_sigmoid, 1, 2000)
    assert_rejects(result, "try a larger k")
    assert "raised" not in str(result)


@pytest.mark.parametrize("steps", [None, "240", 240.0, True, 1, -5])
def test_schedule_refuses_its_own_bad_arguments_before_checking(steps):
    with pytest.raises(ValueError, match="check_schedule: steps is the number of training"):
        checks.check_schedule(inverse_sigmoid, 30.0, steps)


# --- error_after_error --------------------------------------------------------------------------


def error_after_error_ok(model, batch):
    """Written independently of the checker: a step-by-step free run with decoder.step."""
    B, T = batch.tgt_out.shape
    with torch.no_grad():
        _, state, context = model.encode(batch.src, batch.src_lengths)
        prev = torch.full((B,), SOS)
        written, done = [], torch.zeros(B, dtype=torch.bool)
        for _ in range(T):
            logits, state = model.decoder.step(prev, state, context)
            logits[:, PAD] = -math.inf
            logits[:, SOS] = -math.inf
            token = logits.argmax(-1).masked_fill(done, PAD)  # <pad> after <eos>
            written.append(token)
            done |= token == EOS
            prev = token
    wrong = torch.stack(written, 1) != batch.tgt_out  # (B, T)
    pairs = after_wrong = after_right = 0
    for b in range(B):
        n = int((batch.tgt_out[b] != PAD).sum())
        for t in range(n - 1):
            pairs += 1
            if wrong[b, t]:
                after_wrong += [0, 1][int(wrong[b, t + 1])]
            else:
                after_right += [0, 1][int(wrong[b, t + 1])]
    n_wrong = sum(int(wrong[b, t]) for b in range(B)
                  for t in range(int((batch.tgt_out[b] != PAD).sum()) - 1))
    return after_wrong / max(1, n_wrong), after_right / max(1, pairs - n_wrong)


def test_error_after_error_accepts_an_independent_loop():
    assert checks.check_error_after_error(error_after_error_ok).ok


@pytest.mark.parametrize("mistake, words", [
    ("forced", "teacher-forced predictions"), ("pads", "padding positions are counted"),
    ("tgt_in", "you compared the output with tgt_in"),
    ("pad_ok", "a <pad> written after the model's <eos> counts as right"),
    ("truncated", "you compared only the columns greedy wrote"),
    ("t_only", "position t is real but t + 1 is padding"),
    ("joint", "joint rates")])
def test_error_after_error_names_the_typical_mistakes(mistake, words):
    def wrong(model, batch):
        return checks.error_after_error_reference(model, batch, mistake)

    assert_rejects(checks.check_error_after_error(wrong), words)


def test_error_after_error_swapped_and_stub():
    def swapped(model, batch):
        return error_after_error_ok(model, batch)[::-1]

    assert_rejects(checks.check_error_after_error(swapped), "swapped")
    assert not checks.check_error_after_error(skeleton).done


def test_error_after_error_cases_tell_the_slips_apart():
    """Each slip returns its own numbers on both cases, so no message can name the wrong one,
    and the lightly trained case's two rates differ clearly (a random model's are both near 1)."""
    from lib.data import collate
    from lib.experiments.reversal import reversal_examples

    model = checks._lightly_trained_model()
    batch = collate(reversal_examples(40, seed=1))
    after_wrong, after_right = checks.error_after_error_reference(model, batch)
    assert after_wrong - after_right > 0.2
    for m, b in ((checks._random_model(0), collate(reversal_examples(40, seed=0))),
                 (model, batch)):
        right = tuple(round(x, 6) for x in checks.error_after_error_reference(m, b))
        values = [tuple(round(x, 6) for x in checks.error_after_error_reference(m, b, k))
                  for k in checks._AFTER_ERROR_MISTAKES]
        # a random model never stops early, so there "truncated" gives the right answer
        wrong = [v for v in values if v != right]
        assert len(set(wrong)) == len(wrong) >= len(values) - (m is not model)


def test_error_after_error_reference_on_a_hand_built_case(monkeypatch):
    """The checker's reference against rates counted by hand, with greedy's output fixed."""
    from types import SimpleNamespace

    tgt_out = torch.tensor([[5, 6, 7, EOS], [8, 9, EOS, PAD]])
    written = torch.tensor([[5, 9, 9, EOS],  # wrong: . x x .
                            [8, EOS, PAD, PAD]])  # wrong: . x x (a <pad> where <eos> is due)
    monkeypatch.setattr(checks, "_free_run", lambda model, batch: (written, 4))
    batch = SimpleNamespace(tgt_out=tgt_out, tgt_in=tgt_out)
    # real pairs (t, t + 1): row 0 has 3, row 1 has 2. After a wrong token: row 0 (1, 2) wrong,
    # (2, 3) right, row 1 (1, 2) wrong -> 2/3; after a right one: both (0, 1) wrong -> 2/2
    assert checks.error_after_error_reference(None, batch) == pytest.approx((2 / 3, 1.0))
    # counting the <pad> after greedy's <eos> as right turns row 1's (1, 2) right -> 1/3
    assert checks.error_after_error_reference(None, batch, "pad_ok") == pytest.approx((1 / 3, 1.0))

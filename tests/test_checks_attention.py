"""lib.checks.attention: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.attention import AdditiveAttention, Memory, source_mask
from lib.attention import masked_softmax as lib_masked_softmax
from lib.checks import attention as checks
from lib.checks.harness import Mismatch

# --- the scores of all steps ------------------------------------------------------------------


def all_scores(s, H, W_s, W_h, v):
    queries = (s @ W_s.T).unsqueeze(2)  # (B, T, 1, A)
    keys = (H @ W_h.T).unsqueeze(1)  # (B, 1, S, A)
    return torch.tanh(queries + keys) @ v  # (B, T, S)


def test_scores_accept_the_broadcast_and_a_loop_over_lib_steps():
    assert checks.check_all_scores(all_scores).ok

    def with_lib(s, H, W_s, W_h, v):  # lib's one-step scores, once per step
        layer = AdditiveAttention(W_s.size(1), W_h.size(1), W_s.size(0)).double()
        with torch.no_grad():
            layer.W_s.weight.copy_(W_s)
            layer.W_h.weight.copy_(W_h)
            layer.v.weight.copy_(v.unsqueeze(0))
        memory = Memory(H, layer.W_h(H), torch.ones(H.shape[:2], dtype=torch.bool))
        return torch.stack([layer.scores(s[:, t], memory) for t in range(s.size(1))], dim=1)

    assert checks.check_all_scores(with_lib).ok


def test_scores_skeleton_is_not_done():
    r = checks.check_all_scores(skeleton)
    assert not r.ok and not r.done and "not done yet" in str(r)


def _q(s, W_s):
    return (s @ W_s.T).unsqueeze(2)  # (B, T, 1, A)


def _k(H, W_h):
    return (H @ W_h.T).unsqueeze(1)  # (B, 1, S, A)


@pytest.mark.parametrize("wrong, words", [
    (lambda s, H, W_s, W_h, v: (_q(s, W_s) + _k(H, W_h)) @ v, ["tanh is missing"]),
    (lambda s, H, W_s, W_h, v: torch.softmax(all_scores(s, H, W_s, W_h, v), -1),
     ["weights", "before any softmax"]),
    (lambda s, H, W_s, W_h, v: torch.tanh(_q(s, W_s) + _k(H, W_h)), ["dot product with v"]),
    (lambda s, H, W_s, W_h, v: torch.tanh(_q(s, W_s) + _k(H, W_h)).sum(-1),
     ["added up the A numbers", "dot product with v"]),
    (lambda s, H, W_s, W_h, v: torch.tanh(0 * _q(s, W_s) + _k(H, W_h)) @ v,
     ["ignore the decoder states"]),
    # the queries on the step axis of the keys: (B, S, T)
    (lambda s, H, W_s, W_h, v: torch.tanh((s @ W_s.T).unsqueeze(1)
                                          + (H @ W_h.T).unsqueeze(2)) @ v,
     ["(B, S, T)", "swapped"]),
    # only the last step's state, for every step
    (lambda s, H, W_s, W_h, v: all_scores(s[:, -1:].expand_as(s), H, W_s, W_h, v),
     ["every step of a sentence got the same scores"]),
    (lambda s, H, W_s, W_h, v: H @ W_s.T, ["raised"]),  # shapes do not fit: a message
])
def test_scores_name_the_mistake(wrong, words):
    assert_rejects(checks.check_all_scores(wrong), *words)


# --- the masked softmax, safe for a row with no real position ---------------------------------


def masked_softmax(scores, lengths):
    real = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    filled = scores.masked_fill(~real, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1) * real  # an empty row: uniform * 0 = 0


def nan_to_zero(scores, lengths):  # lib's version, its nan replaced afterwards: also right
    w = lib_masked_softmax(scores, source_mask(lengths, scores.size(1)))
    return torch.nan_to_num(w)


def test_softmax_accepts_two_safe_versions():
    assert checks.check_masked_softmax(masked_softmax).ok
    assert checks.check_masked_softmax(nan_to_zero).ok
    assert not checks.check_masked_softmax(skeleton).done


def lib_as_is(scores, lengths):  # lib.attention's: assumes every row has a real position
    return lib_masked_softmax(scores, source_mask(lengths, scores.size(1)))


def no_mask(scores, lengths):
    return torch.softmax(scores, dim=-1)


def min_fill_only(scores, lengths):  # safe from nan, but an empty row becomes uniform
    real = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
    return torch.softmax(scores.masked_fill(~real, torch.finfo(scores.dtype).min), dim=-1)


def zero_fill(scores, lengths):
    mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
    return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)


def off_by_one(scores, lengths):
    mask = torch.arange(scores.size(1)).unsqueeze(0) <= lengths.unsqueeze(1)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def zero_after(scores, lengths):
    mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
    return torch.softmax(scores, dim=-1) * mask


def naive_exp(scores, lengths):
    mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
    e = scores.exp() * mask
    return e / e.sum(-1, keepdim=True)


def nan_zeroed_in_place(scores, lengths):  # right numbers, but backward breaks
    w = lib_as_is(scores, lengths)
    w[torch.isnan(w)] = 0.0
    return w


def detached(scores, lengths):
    return masked_softmax(scores.detach(), lengths)


@pytest.mark.parametrize("wrong, words", [
    (lib_as_is, ["length 0", "nan", "0 / 0"]),
    (min_fill_only, ["padding got weight", "no real position at all"]),
    (no_mask, ["padding got weight"]),
    (zero_fill, ["padding got weight"]),
    (off_by_one, ["padding got weight", "off by one"]),
    (zero_after, ["sum to", "before the softmax"]),
    (naive_exp, ["nan or inf", "torch.softmax"]),
    (nan_zeroed_in_place, ["gradient cannot flow back", "in-place"]),
    (detached, ["gradient of the scores is missing"]),
])
def test_softmax_names_the_mistake(wrong, words):
    assert_rejects(checks.check_masked_softmax(wrong), *words)


def _real(scores, lengths):
    return torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)


def fill_in_place(scores, lengths):  # right weights, but the caller's scores are changed
    real = _real(scores, lengths)
    scores.masked_fill_(~real, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) * real


def assign_in_place(scores, lengths):
    real = _real(scores, lengths)
    scores[~real] = torch.finfo(scores.dtype).min
    return torch.softmax(scores, dim=-1) * real


def shift_in_place(scores, lengths):  # "for stability", but the caller's scores move
    scores -= scores.max(dim=-1, keepdim=True).values
    return masked_softmax(scores, lengths)


@pytest.mark.parametrize("wrong", [fill_in_place, assign_in_place, shift_in_place])
def test_softmax_names_an_in_place_change_of_the_scores(wrong):
    assert_rejects(checks.check_masked_softmax(wrong), "changed its input `scores` in place",
                   "masked_fill_ changes the caller's")


def test_softmax_in_place_message_uses_the_learners_own_name():
    def renamed(logits, n):
        return fill_in_place(logits, n)

    assert_rejects(checks.check_masked_softmax(renamed), "`logits` in place")


def test_softmax_reference_is_the_chapters_masked_softmax_with_empty_rows_zero():
    scores = torch.randn(3, 5, dtype=torch.float64)
    lengths = torch.tensor([5, 0, 2])
    ref = checks.softmax_reference(scores, lengths)
    chapter = lib_masked_softmax(scores, source_mask(lengths, 5))
    assert torch.equal(ref[[0, 2]], chapter[[0, 2]])
    assert torch.equal(ref[1], torch.zeros(5, dtype=torch.float64))


@pytest.mark.parametrize("weights, words", [
    ([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]], None),  # right: the empty row all 0
    ([[0.5, 0.5, 0.0], [float("nan")] * 3], "no real position (length 0)"),
    ([[0.4, 0.4, 0.2], [0.0, 0.0, 0.0]], "your mask is off by one"),
    ([[0.5, 0.5, 0.0], [0.2, 0.0, 0.0]], "this row has no real position at all"),
    ([[0.4, 0.4, 0.0], [0.0, 0.0, 0.0]], "weights sum to 0.8000, not 1"),
])
def test_softmax_values_names_what_is_wrong_with_the_weights(weights, words):
    scores = torch.zeros(2, 3, dtype=torch.float64)
    got = torch.tensor(weights, dtype=torch.float64)
    if words is None:
        checks._softmax_values(got, scores, torch.tensor([2, 0]), "x")
        return
    with pytest.raises(Mismatch, match=re.escape(words)):
        checks._softmax_values(got, scores, torch.tensor([2, 0]), "x")


def test_softmax_gradient_names_detached_weights():
    leaf = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(Mismatch, match="gradient of the scores is missing"):
        checks._softmax_gradient(torch.softmax(leaf, -1).detach(), leaf, "x")
    checks._softmax_gradient(torch.softmax(leaf, -1), leaf, "x")


# --- the contexts of all steps, from a time-major memory --------------------------------------


def contexts(weights, states):
    return torch.bmm(weights, states.transpose(0, 1))  # (B, T, S) @ (B, S, H)


def test_contexts_accept_bmm_and_einsum():
    assert checks.check_contexts(contexts).ok
    assert checks.check_contexts(lambda w, h: torch.einsum("bts,sbh->bth", w, h)).ok
    assert not checks.check_contexts(skeleton).done


@pytest.mark.parametrize("wrong, words", [
    (lambda w, h: w @ h.reshape(h.size(1), h.size(0), h.size(2)), ["reshape", "transpose"]),
    (lambda w, h: w @ h, ["raised"]),  # B != S: the shapes do not fit
    (lambda w, h: contexts(w, h).transpose(0, 1), ["(B, T, H)"]),
    (lambda w, h: contexts(w, h).sum(1, keepdim=True).expand_as(contexts(w, h)),
     ["every step got the same context"]),
    (lambda w, h: contexts(w, h)[..., :1], ["shape"]),
])
def test_contexts_name_the_mistake(wrong, words):
    assert_rejects(checks.check_contexts(wrong), *words)


def test_contexts_name_mixed_sentences_when_the_shapes_happen_to_fit():
    r = checks.check_contexts(lambda w, h: w @ h if w.size(0) == h.size(0) else contexts(w, h))
    assert_rejects(r, "mix the sentences", "position b of every sentence")


# --- where the reversal model looks: offsets, and a guess against measured weights ---------------


def offsets(weights):
    L = weights.size(1)  # columns: the digits; rows: L digits and <eos>
    return [int(weights[t].argmax()) - (L - 1 - t) for t in range(L)]


def test_offsets_accept_a_loop_and_a_vectorised_version():
    assert checks.check_offsets(offsets).ok

    def vectorised(w):
        L = w.size(1)
        return w[:L].argmax(-1) - (L - 1 - torch.arange(L))

    assert checks.check_offsets(vectorised).ok
    assert not checks.check_offsets(skeleton).done


def rows_as_L(w):  # L taken from the rows: L + 1
    L = w.size(0)
    return [int(w[t].argmax()) - (L - 1 - t) for t in range(L)]


@pytest.mark.parametrize("wrong, words", [
    (rows_as_L, ["1 too small", "L + 1", "number of columns"]),
    (lambda w: offsets(w) + [0], ["one offset per digit row", "<eos>"]),
    (lambda w: [int(w[t].argmax()) - (w.size(1) - 1 - t) for t in range(w.size(0))],
     ["one offset per digit row", "<eos>"]),
    (lambda w: [-o for o in offsets(w)], ["wrong sign", "right of the anti-diagonal"]),
    (lambda w: [int(w[t].argmax()) - t for t in range(w.size(1))], ["diagonal", "L - 1 - t"]),
    (lambda w: (w[:w.size(1)].argmax(-1) - (w.size(1) - 1 - torch.arange(w.size(1)))).float(),
     ["floating-point"]),
    (lambda w: [0] * w.size(1), ["row 1", "offset is +1, not +0"]),
])
def test_offsets_name_the_mistake(wrong, words):
    assert_rejects(checks.check_offsets(wrong), *words)


# A measured heatmap of 10 digits: rows 1..9 peak one column right of the copied digit, row 0
# (where no column lies right of it) on the copied digit itself, the <eos> row on column 0.
L10 = 10
MEASURED = checks.peaked_weights([L10 - 1] + [L10 - t for t in range(1, L10)], eos_peak=0)


def test_guess_accepts_a_guess_that_matches_the_measured_peaks():
    r = checks.check_guess(lambda t, L: min(L - t, L - 1), MEASURED)
    assert r.ok and "matches the peak on 10 of 10 rows" in str(r) and "differs" not in str(r)
    assert checks.check_guess(lambda t, L: L - t if t else L - 1, MEASURED).ok
    assert not checks.check_guess(skeleton, MEASURED).done


def test_guess_of_the_copied_digit_passes_and_the_note_names_the_off_by_one():
    """A reasoned guess is not failed for differing from one training run's model: the checker
    says where they differ and why a model may read one column right."""
    r = checks.check_guess(lambda t, L: L - 1 - t, MEASURED)
    assert r.ok
    text = str(r)
    assert "matches the peak on 1 of 10 rows" in text
    assert "it differs on 9 rows: t = 1 (you: 8, the model: 9)" in text
    assert "t = 4 (you: 5, the model: 6) and 5 more. On 9" in text
    assert "On 9 of these rows the model reads one column right of your guess" in text
    assert "the state one step later has read that digit too" in text


def test_guess_right_of_the_copied_digit_passes_with_the_comparison():
    r = checks.check_guess(lambda t, L: L - 1, MEASURED)  # always the last state: it read all
    assert r.ok and "matches the peak on 2 of 10 rows" in str(r)
    assert "one column right" not in str(r)  # the model peaks left of this guess, not right


def test_guess_that_reads_the_model_where_it_peaks_early_is_not_refused():
    early = checks.peaked_weights([9, 7, 6, 5, 4, 3, 2, 1, 0, 0], eos_peak=0)  # rows 1..8 early
    peaks = [9, 7, 6, 5, 4, 3, 2, 1, 0, 0]
    assert checks.check_guess(lambda t, L: peaks[t], early).ok
    assert_rejects(checks.check_guess(lambda t, L: peaks[t] - 1 if t == 2 else peaks[t], early),
                   "guess(2, 10) = 5", "has not read it yet", "1 row guess")


def test_guess_names_the_column_that_runs_off_the_end():
    assert_rejects(checks.check_guess(lambda t, L: L - t, MEASURED), "guess(0, 10) = 10",
                   "not a column", "runs off the end at t = 0")


@pytest.mark.parametrize("wrong, words", [
    (lambda t, L: L - 2 if t == 0 else L - 1 - t, ["guess(0, 10) = 8", "copies input digit 9",
                                                   "has not read it yet", "1 row guess"]),
    (lambda t, L: L - t if t else 0, ["guess(0, 10) = 0", "has not read it yet"]),
    (lambda t, L: t, ["diagonal", "L - 1 - t"]),
    (lambda t, L: 3, ["guess(0, 10) = 3", "has not read it yet", "6 rows guess"]),
    (lambda t, L: -1, ["guess(0, 10) = -1", "not a column"]),
    (lambda t, L: "the last digit", ["an int"]),
    (lambda t, L: float(L - t), ["an int"]),
])
def test_guess_names_the_mistake(wrong, words):
    assert_rejects(checks.check_guess(wrong, MEASURED), *words)


def test_guess_without_the_measured_weights_gets_a_message():
    assert_rejects(checks.check_guess(lambda t, L: 0, torch.ones(4, 4)), "(L + 1, L)",
                   "weights_toy")


# --- the crossover length: when attention's extra work equals a whole fixed step ----------------


def crossover(E, H, A, V, layers):
    gru = 3 * H * (E + H + H) + (layers - 1) * 3 * H * (H + H)  # [e(y); c], then H below
    fixed = gru + H * V  # the GRU layers and the head
    return (fixed - A * H) / (A + H)  # A*H + S(A + H) = fixed


def test_crossover_accepts_the_count_and_a_rounded_length():
    assert checks.check_crossover(crossover).ok
    assert checks.check_crossover(lambda *a: round(crossover(*a))).ok
    assert checks.check_crossover(lambda *a: torch.tensor(crossover(*a))).ok
    assert not checks.check_crossover(skeleton).done


def test_crossover_reference_agrees_with_the_formula_and_with_budget_reference():
    # the real layers' count (lib.experiments.timing) against the formula the page writes out
    for sizes in [(8, 16, 16, 40, 1), (256, 512, 512, 8000, 2)]:
        assert checks.crossover_reference(*sizes) == pytest.approx(crossover(*sizes))
    E, H, A, V, layers = 16, 32, 24, 50, 3
    S = checks.crossover_reference(E, H, A, V, layers)
    extra = checks.budget_reference(S, H, A)["extra_per_step"]
    assert extra == pytest.approx(crossover(E, H, A, V, layers) * (A + H) + A * H)


def _fixed(E, H, V, layers, first_in=None, gates=3, n=None):
    n = layers if n is None else n
    first_in = E + H if first_in is None else first_in
    return gates * H * (first_in + H) + (n - 1) * gates * H * (H + H) + H * V


@pytest.mark.parametrize("wrong, words", [
    (lambda E, H, A, V, n: (_fixed(E, H, V, n) - A * H) / (A + H + A * H),
     ["W_h h_j at every step", "once per sentence"]),
    (lambda E, H, A, V, n: _fixed(E, H, V, n) / (A + H), ["W_s s_{t-1}", "S = 0"]),
    (lambda E, H, A, V, n: (_fixed(E, H, V, n) - H * V - A * H) / (A + H),
     ["prediction head"]),
    (lambda E, H, A, V, n: (_fixed(E, H, V, n, first_in=E) - A * H) / (A + H),
     ["[e(y_{t-1}); c]", "E + H"]),
    (lambda E, H, A, V, n: (_fixed(E, H, V, n, n=1) - A * H) / (A + H), ["one GRU layer"]),
    (lambda E, H, A, V, n: (_fixed(E, H, V, n, gates=4) - A * H) / (A + H), ["LSTM"]),
    (lambda E, H, A, V, n: _fixed(E, H, V, n), ["count of multiply-adds", "the length S"]),
    (lambda E, H, A, V, n: crossover(E, H, A, V, n) + 5, ["expected", "solve for S"]),
    (lambda E, H, A, V, n: "about 7,000", ["one number"]),
])
def test_crossover_names_the_mistake(wrong, words):
    assert_rejects(checks.check_crossover(wrong), *words)

"""lib.checks.attention: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.attention import AdditiveAttention, Memory, source_mask
from lib.attention import masked_softmax as lib_masked_softmax
from lib.checks import attention as checks

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


def test_softmax_in_place_change_of_the_scores_is_named():
    def in_place(scores, lengths):
        mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        scores.masked_fill_(~mask, torch.finfo(scores.dtype).min)
        return torch.softmax(scores, dim=-1) * mask

    r = checks.check_masked_softmax(in_place)
    assert r.done and not r.ok and "scores" in str(r)


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


# --- the strongest position of each row -------------------------------------------------------


def strongest(weights):
    return weights.argmax(-1).tolist()


def test_strongest_accepts_a_list_or_a_tensor_of_positions():
    assert checks.check_strongest(strongest).ok
    assert checks.check_strongest(lambda w: w.argmax(dim=1)).ok
    assert not checks.check_strongest(skeleton).done


@pytest.mark.parametrize("wrong, words", [
    (lambda w: w.argmax(0).tolist(), ["one position per row", "each column"]),
    (lambda w: (w.argmax(-1) + 1).tolist(), ["count from 1"]),
    (lambda w: w.max(-1).values, ["largest weights themselves"]),
    (lambda w: w.argmin(-1).tolist(), ["smallest"]),
    (lambda w: w.argmax(-1).tolist()[:-1], ["one position per row"]),
    (lambda w: [0] * w.size(0), ["row 0", "position 3"]),
])
def test_strongest_names_the_mistake(wrong, words):
    assert_rejects(checks.check_strongest(wrong), *words)


def test_guess_accepts_any_position_and_names_a_wrong_form():
    assert checks.check_guess(lambda t, L: L - 1 - t).ok
    assert checks.check_guess(lambda t, L: 0).ok  # a prediction, not judged here
    assert not checks.check_guess(skeleton).done
    assert_rejects(checks.check_guess(lambda t, L: L - t), "guess(0, 5) = 5", "from 0 to L - 1")
    assert_rejects(checks.check_guess(lambda t, L: "the last digit"), "an int")
    assert_rejects(checks.check_guess(lambda t, L: -1), "not an input position")


# --- the budget -------------------------------------------------------------------------------


def budget(S, H, A):
    return {"fixed": H, "attention": S * H, "extra_per_step": A * H + S * A + S * H}


@pytest.mark.parametrize("wrong, words", [
    (lambda S, H, A: {**budget(S, H, A), "fixed": S * H}, ["one context c"]),
    (lambda S, H, A: {**budget(S, H, A), "extra_per_step": A * H + S * A + S * H + S * H * A},
     ["once per sentence"]),
    (lambda S, H, A: {**budget(S, H, A), "extra_per_step": S * A + S * H}, ["W_s s_{t-1}"]),
    (lambda S, H, A: {**budget(S, H, A), "extra_per_step": A * H + S * A}, ["weighted sum"]),
    (lambda S, H, A: {**budget(S, H, A), "attention": H}, ["S x H"]),
    (lambda S, H, A: (H, S * H), ["keys"]),
])
def test_budget_names_the_mistake(wrong, words):
    assert_rejects(checks.check_attention_budget(wrong), *words)


def test_budget_accepts_reference():
    assert checks.check_attention_budget(budget).ok
    assert not checks.check_attention_budget(skeleton).done

"""lib.checks.attention: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.attention import masked_softmax as lib_masked_softmax
from lib.attention import source_mask
from lib.checks import attention as checks

# --- the additive score -----------------------------------------------------------------------


def additive_score(s, H, W_s, W_h, v):
    return torch.tanh((s @ W_s.T).unsqueeze(1) + H @ W_h.T) @ v  # (B, S)


def test_score_accepts_reference_and_lib():
    assert checks.check_additive_score(additive_score).ok

    def with_lib(s, H, W_s, W_h, v):
        from lib.attention import AdditiveAttention, Memory

        layer = AdditiveAttention(W_s.size(1), W_h.size(1), W_s.size(0)).double()
        with torch.no_grad():
            layer.W_s.weight.copy_(W_s)
            layer.W_h.weight.copy_(W_h)
            layer.v.weight.copy_(v.unsqueeze(0))
        mask = torch.ones(H.shape[:2], dtype=torch.bool)
        return layer.scores(s, Memory(H, layer.W_h(H), mask))

    assert checks.check_additive_score(with_lib).ok


def test_score_skeleton_is_not_done():
    r = checks.check_additive_score(skeleton)
    assert not r.ok and not r.done and "not done yet" in str(r)


@pytest.mark.parametrize("wrong, words", [
    (lambda s, H, W_s, W_h, v: ((s @ W_s.T).unsqueeze(1) + H @ W_h.T) @ v,
     ["tanh is missing"]),
    (lambda s, H, W_s, W_h, v: torch.softmax(additive_score(s, H, W_s, W_h, v), -1),
     ["weights", "before any softmax"]),
    (lambda s, H, W_s, W_h, v: torch.tanh((s @ W_s.T).unsqueeze(1) + H @ W_h.T),
     ["dot product with v"]),
    (lambda s, H, W_s, W_h, v: torch.tanh(H @ W_h.T) @ v, ["ignore the decoder state"]),
    (lambda s, H, W_s, W_h, v: additive_score(s, H, W_s, W_h, v).T, ["(S, B)"]),
    (lambda s, H, W_s, W_h, v: H @ W_s.T, ["raised"]),  # shapes do not fit: a message
])
def test_score_names_the_mistake(wrong, words):
    assert_rejects(checks.check_additive_score(wrong), *words)


# --- the masked softmax -----------------------------------------------------------------------


def masked_softmax(scores, lengths):
    mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


def test_softmax_accepts_reference_and_lib():
    assert checks.check_masked_softmax(masked_softmax).ok
    assert checks.check_masked_softmax(
        lambda sc, n: lib_masked_softmax(sc, source_mask(n, sc.size(1)))).ok
    r = checks.check_masked_softmax(skeleton)
    assert not r.done


def no_mask(scores, lengths):
    return torch.softmax(scores, dim=-1)


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


@pytest.mark.parametrize("wrong, words", [
    (no_mask, ["padding got weight"]),
    (zero_fill, ["padding got weight", "-inf"]),
    (off_by_one, ["padding got weight", "off by one"]),
    (zero_after, ["sum to", "before the softmax"]),
    (naive_exp, ["nan or inf", "torch.softmax"]),
])
def test_softmax_names_the_mistake(wrong, words):
    assert_rejects(checks.check_masked_softmax(wrong), *words)


def test_softmax_in_place_change_is_named():
    def in_place(scores, lengths):
        mask = torch.arange(scores.size(1)).unsqueeze(0) < lengths.unsqueeze(1)
        scores.masked_fill_(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1)

    r = checks.check_masked_softmax(in_place)
    assert r.done and not r.ok and "scores" in str(r)


# --- the context of a batch -------------------------------------------------------------------


def context(weights, states):
    return torch.bmm(weights.unsqueeze(1), states).squeeze(1)  # (B, H)


@pytest.mark.parametrize("wrong, words", [
    (lambda w, h: (w.unsqueeze(-1) * h).sum(-1), ["summed over the hidden units"]),
    (lambda w, h: w @ h, ["met every", "torch.bmm"]),
    (lambda w, h: h.mean(1), ["equal weights"]),
    (lambda w, h: h.sum(1), ["without their weights"]),
    (lambda w, h: torch.einsum("bs,csh->bh", w, h), ["mix the sentences"]),
])
def test_context_names_the_mistake(wrong, words):
    assert_rejects(checks.check_context(wrong), *words)


def test_context_accepts_reference():
    assert checks.check_context(context).ok
    assert checks.check_context(lambda w, h: (w.unsqueeze(-1) * h).sum(1)).ok
    assert not checks.check_context(skeleton).done


# --- the most attended source word ------------------------------------------------------------


def most_attended(weights, src_tokens, tgt_tokens, word):
    return src_tokens[int(weights[tgt_tokens.index(word)].argmax())]


@pytest.mark.parametrize("wrong, words", [
    (lambda w, s, t, word: int(w[t.index(word)].argmax()), ["position"]),
    (lambda w, s, t, word: s[int(w[t.index(word) - 1].argmax())], ["previous step"]),
    (lambda w, s, t, word: t[int(w[t.index(word)].argmax())], ["target token"]),
    (lambda w, s, t, word: s[int(w.argmax(0)[t.index(word)])], ["target axis"]),
])
def test_most_attended_names_the_mistake(wrong, words):
    assert_rejects(checks.check_most_attended(wrong), *words)


def test_most_attended_accepts_reference():
    assert checks.check_most_attended(most_attended).ok
    assert not checks.check_most_attended(skeleton).done


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

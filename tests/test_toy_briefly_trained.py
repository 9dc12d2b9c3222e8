"""lib.experiments.toy.class_pairs and briefly_trained: the made-up task by its rule, and the
beam chapter's claim that a briefly trained tiny model's optima are real outputs (unlike an
untrained one's, mostly <eos> alone or cut by the length cap)."""

from __future__ import annotations

import pytest
import torch

from lib.data import EOS, PAD, SPECIALS
from lib.exhaustive import exhaustive_search
from lib.experiments.toy import briefly_trained, class_pairs, tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest
SIZES = dict(src_words=20, tgt_words=4, emb_dim=16, hidden=32, max_tgt_len=6)  # the chapter's
FIRST = len(SPECIALS)


def test_class_pairs_follow_their_rule_without_noise():
    pairs = class_pairs(200, seed=1, noise=0.0)
    for src, tgt in pairs:
        assert 3 <= len(src) <= 8 and all(FIRST <= i < FIRST + 20 for i in src)
        assert tgt == [FIRST + (i - FIRST) % 4 for i in src[:(len(src) + 1) // 2]]
    assert class_pairs(200, seed=1, noise=0.0) == pairs != class_pairs(200, seed=2, noise=0.0)


def test_class_pairs_noise_changes_words_and_lengths_within_bounds():
    pairs = class_pairs(500, seed=0, noise=0.3, max_words=5)
    rule = [[FIRST + (i - FIRST) % 4 for i in s[:(len(s) + 1) // 2]] for s, _ in pairs]
    assert all(1 <= len(t) <= 5 and all(FIRST <= j < FIRST + 4 for j in t) for _, t in pairs)
    assert sum(t != r for (_, t), r in zip(pairs, rule)) > 100  # noise is felt
    assert sum(len(t) != len(r) for (_, t), r in zip(pairs, rule)) > 50
    with pytest.raises(ValueError):
        class_pairs(5, noise=1.5)


def _optima(model, n=30):
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 9, (n,), generator=gen)
    src = torch.randint(FIRST, len(model.src_vocab), (n, 8), generator=gen)
    src = src.masked_fill(torch.arange(8) >= lengths.unsqueeze(1), PAD)
    rows = exhaustive_search(model, src, lengths, 6).tokens.tolist()
    empty = sum(r[0] == EOS for r in rows)
    capped = sum(EOS not in r for r in rows)
    return empty, capped, n


def test_briefly_trained_optima_are_real_outputs_and_untrained_ones_are_not():
    model = briefly_trained(0, **SIZES)
    assert not model.training
    empty, capped, n = _optima(model)
    assert empty + capped <= n // 5  # at most a fifth degenerate
    untrained = tiny_model(0, scale=3.0, **SIZES).eval()  # the chapter's former setting
    empty, capped, n = _optima(untrained)
    assert empty + capped > n // 2


def test_briefly_trained_is_deterministic():
    a, b = (briefly_trained(1, pairs=200, **SIZES) for _ in range(2))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))

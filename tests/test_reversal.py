"""lib.experiments.reversal: the toy task's pairs are their sources backwards, in the vocabularies'
ids, and
lib.train trains a model on them; bad arguments are refused with a message that names them."""

from __future__ import annotations

import pytest
import torch

from lib.data import SPECIALS, collate
from lib.experiments.reversal import DIGITS, reversal_examples, reversal_model, vocab
from lib.train import TrainConfig, batch_loss, train


def test_each_target_is_its_source_backwards_word_for_word():
    pairs = reversal_examples(50, seed=3, min_len=2, max_len=5)
    en, fr = vocab("en"), vocab("fr")
    assert len(pairs) == 50
    for src, tgt in pairs:
        assert 2 <= len(src) <= 5 and len(tgt) == len(src)
        src_words = [en.itos[i] for i in src]
        tgt_words = [fr.itos[i] for i in tgt]
        assert [w.replace("en", "fr") for w in reversed(src_words)] == tgt_words
        assert all(len(SPECIALS) <= i < len(SPECIALS) + DIGITS for i in src + tgt)
    assert {len(s) for s, _ in pairs} == {2, 3, 4, 5}


def test_same_seed_same_pairs_other_seed_other_pairs():
    assert reversal_examples(20, seed=1) == reversal_examples(20, seed=1)
    assert reversal_examples(20, seed=1) != reversal_examples(20, seed=2)


def test_a_tiny_model_learns_it_with_lib_train():
    torch.set_num_threads(1)
    model = reversal_model(seed=0)
    valid = collate(reversal_examples(64, seed=9))
    with torch.no_grad():
        before = float(batch_loss(model, valid))
    train(model, reversal_examples(640, seed=0), TrainConfig(epochs=3, batch_size=32, lr=1e-2,
          warmup_steps=5), device="cpu", progress=False)
    with torch.no_grad():
        after = float(batch_loss(model, valid))
    assert after < 0.7 * before  # held-out loss falls: the task is learnable in seconds


@pytest.mark.parametrize("kwargs, words", [
    ({"n": 0}, "n must be an integer >= 1"),
    ({"n": True}, "n must be an integer >= 1"),
    ({"n": 5, "min_len": 0}, "min_len must be"),
    ({"n": 5, "min_len": 6, "max_len": 4}, "must not exceed max_len"),
])
def test_bad_arguments_are_named(kwargs, words):
    with pytest.raises(ValueError, match=words):
        reversal_examples(seed=0, **kwargs)


def test_vocab_side_is_checked():
    with pytest.raises(ValueError, match="side must be"):
        vocab("de")


def test_the_attention_model_shares_every_other_initial_weight():
    fixed, attending = reversal_model(seed=2, hidden=16), reversal_model(seed=2, hidden=16,
                                                                         attention=True)
    a, b = fixed.state_dict(), attending.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert sorted(set(b) - set(a)) == ["decoder.attention.W_h.weight",
                                       "decoder.attention.W_s.weight",
                                       "decoder.attention.v.weight"]
    assert attending.config.attention and not fixed.config.attention

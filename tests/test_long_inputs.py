"""lib.experiments.long_inputs: the attention chapter's copies of a model and its buckets."""

from __future__ import annotations

import pytest
import torch

from lib.evaluate import sacrebleu_score
from lib.experiments import long_inputs
from lib.experiments.toy import tiny_model


def test_copy_keeps_every_weight_and_adds_only_attention():
    model = tiny_model(1, layers=2, hidden=16, emb_dim=8)
    for attention in (False, True):
        copy = long_inputs.copy_of(model, attention, max_len=90, seed=0)
        assert copy.config.max_src_len == copy.config.max_tgt_len == 90
        assert copy.config.attention == attention
        a, b = model.state_dict(), copy.state_dict()
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert {k for k in b if k not in a} == (
            {"decoder.attention.W_s.weight", "decoder.attention.W_h.weight",
             "decoder.attention.v.weight"} if attention else set())
    again = long_inputs.copy_of(model, True, seed=0).state_dict()
    assert torch.equal(again["decoder.attention.v.weight"],
                       long_inputs.copy_of(model, True, seed=0).state_dict()[
                           "decoder.attention.v.weight"])


def test_buckets_cover_every_length_once():
    assert long_inputs.bucket_of(1) == (1, 8) and long_inputs.bucket_of(8) == (1, 8)
    assert long_inputs.bucket_of(9) == (9, 16) and long_inputs.bucket_of(33) == (33, None)
    assert long_inputs.bucket_of(500) == (33, None)
    assert long_inputs.bucket_label((33, None)) == "≥ 33"
    assert long_inputs.bucket_label((9, 16)) == "9–16"
    with pytest.raises(ValueError):
        long_inputs.bucket_of(0)


def test_bleu_by_bucket_is_sacrebleu_on_each_bucket():
    groups = [("I see .", ["Je vois ."], 1), ("a " * 10 + ".", ["b c d e", "b c"], 2),
              ("Go .", ["Va !", "Pars !"], 1)]
    hyps = ["Je vois .", "b c d", "Va !"]
    rows = long_inputs.bleu_by_bucket(hyps, groups, buckets=((1, 8), (9, None), (50, None)))
    assert [(b, n) for b, n, _ in rows] == [((1, 8), 2), ((9, None), 1), ((50, None), 0)]
    assert rows[0][2] == pytest.approx(sacrebleu_score([hyps[0], hyps[2]],
                                                       [groups[0][1], groups[2][1]]).score)
    assert rows[2][2] != rows[2][2]  # an empty bucket has no score (nan)
    with pytest.raises(ValueError):
        long_inputs.bleu_by_bucket(hyps[:2], groups)


def test_finetune_runs_exactly_its_steps_and_zero_steps_do_nothing():
    model = tiny_model(0, hidden=16, emb_dim=8, src_words=6, tgt_words=6)
    pairs = [("en1 en2 en3", "fr3 fr2 fr1"), ("en4 en5", "fr5 fr4")] * 20
    config = long_inputs.FinetuneConfig(attention=True, steps=5, batch_size=4)
    copy = long_inputs.copy_of(model, True)
    history = long_inputs.finetune(copy, config, pairs)
    assert history.step[-1] == 5
    assert long_inputs.finetune(copy, long_inputs.FinetuneConfig(steps=0), pairs) is None
    with pytest.raises(ValueError, match="need 400 pairs"):
        long_inputs.finetune(copy, long_inputs.FinetuneConfig(steps=100, batch_size=4), pairs)


@pytest.mark.parametrize("kwargs", [{"steps": -1}, {"batch_size": 0}, {"attention": 1},
                                    {"k_max": 1.5}])
def test_config_refuses_bad_settings(kwargs):
    with pytest.raises(ValueError):
        long_inputs.FinetuneConfig(**kwargs)


@pytest.mark.parametrize("kwargs, words", [
    ({"lr": float("inf")}, "lr must be a number > 0 and <= 1"),
    ({"lr": float("nan")}, "lr must be a number > 0 and <= 1"),
    ({"lr": 0.0}, "lr must be a number > 0 and <= 1"),
    ({"lr": 2.0}, "lr must be a number > 0 and <= 1"),
    ({"lr": "0.1"}, "lr must be a number"),
    ({"seed": 1.5}, "seed must be an integer from 0 to"),
    ({"seed": -1}, "seed must be an integer from 0 to"),
    ({"seed": True}, "seed must be an integer"),
    ({"k_max": 10**9}, "k_max must be an integer from 1 to 2,000"),
    ({"batch_size": 10**7}, "batch_size must be an integer from 1 to"),
    ({"steps": 10**9}, "steps x batch_size"),
    ({"max_len": 10**9}, "max_len must be an integer from 1 to"),
])
def test_config_names_an_unbounded_or_non_finite_setting(kwargs, words):
    """Each setting has a bound that says why; an lr of inf trained to non-finite weights,
    a k_max of 10**9 ran out of memory."""
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        long_inputs.FinetuneConfig(**kwargs)


def test_the_chapter_configs_keep_their_fields():
    """Validation adds no field: the attention chapter's run keys hash these settings."""
    assert long_inputs._key(long_inputs.FinetuneConfig())["lr"] == 1e-3
    assert [f.name for f in __import__("dataclasses").fields(long_inputs.FinetuneConfig)] == [
        "attention", "steps", "batch_size", "lr", "k_max", "max_len", "seed"]


def test_finetuning_that_reaches_a_non_finite_loss_is_refused_naming_the_step():
    model = tiny_model(0, hidden=16, emb_dim=8, src_words=6, tgt_words=6)
    pairs = [("en1 en2 en3", "fr3 fr2 fr1"), ("en4 en5", "fr5 fr4")] * 20
    copy = long_inputs.copy_of(model, False)
    with torch.no_grad():
        for weight in copy.decoder.parameters():
            weight.fill_(float("nan"))
    with pytest.raises(FloatingPointError, match=r"non-finite .* by step \d+"):
        long_inputs.finetune(copy, long_inputs.FinetuneConfig(steps=5, batch_size=4), pairs)

"""lib.experiments.long_inputs: the attention chapter's two models and its buckets."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import with_attention

from lib.evaluate import sacrebleu_score
from lib.experiments import long_inputs
from lib.experiments.toy import tiny_model


def test_the_two_models_differ_only_in_the_decoders_context():
    """Same size, data, seed and steps: a difference between them is the decoder's."""
    fixed, attention = long_inputs.MODELS["fixed vector"], long_inputs.MODELS["attention"]
    assert dataclasses.replace(fixed, attention=True) == attention and not fixed.attention
    sizes = attention.sizes()
    assert sizes["attention"] and sizes["max_src_len"] == attention.max_len
    assert long_inputs.cached_run(fixed).key != long_inputs.cached_run(attention).key


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


def test_fit_runs_exactly_its_steps():
    model = tiny_model(0, hidden=16, emb_dim=8, src_words=6, tgt_words=6)
    pairs = [("en1 en2 en3", "fr3 fr2 fr1"), ("en4 en5", "fr5 fr4")] * 20
    config = long_inputs.ScratchConfig(attention=True, steps=5, batch_size=4)
    history = long_inputs.fit(with_attention(model), config, pairs)
    assert history.step[-1] == 5
    with pytest.raises(ValueError, match="need 400 pairs"):
        long_inputs.fit(model, long_inputs.ScratchConfig(steps=100, batch_size=4), pairs)


@pytest.mark.parametrize("kwargs", [{"steps": 0}, {"batch_size": 0}, {"attention": 1},
                                    {"k_max": 1.5}, {"hidden_size": 0}, {"dropout": 1.0}])
def test_config_refuses_bad_settings(kwargs):
    with pytest.raises(ValueError):
        long_inputs.ScratchConfig(**kwargs)


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
        long_inputs.ScratchConfig(**kwargs)


def test_the_chapter_configs_keep_their_fields():
    """Validation adds no field: the attention chapter's run keys hash these settings."""
    key = long_inputs._key(long_inputs.ScratchConfig())
    assert key["lr"] == 2e-3 and key["hidden_size"] == 128 and len(key["corpus"]) == 64
    assert [f.name for f in dataclasses.fields(long_inputs.ScratchConfig)] == [
        "attention", "emb_dim", "hidden_size", "num_layers", "dropout", "steps", "batch_size",
        "lr", "k_max", "max_len", "seed"]


def test_training_that_reaches_a_non_finite_loss_is_refused_naming_the_step():
    model = tiny_model(0, hidden=16, emb_dim=8, src_words=6, tgt_words=6)
    pairs = [("en1 en2 en3", "fr3 fr2 fr1"), ("en4 en5", "fr5 fr4")] * 20
    with torch.no_grad():
        for weight in model.decoder.parameters():
            weight.fill_(float("nan"))
    with pytest.raises(FloatingPointError, match=r"non-finite .* by step \d+"):
        long_inputs.fit(model, long_inputs.ScratchConfig(steps=5, batch_size=4), pairs)


def test_lead_growth_against_a_loop_over_its_own_draws():
    """The growth is the long lead minus the short one on the whole sets, and its interval holds
    the draws' 2.5 % and 97.5 % points, each set resampled on its own, paired within a set."""
    import random

    refs = [["a b c d e"], ["f g h i j"], ["a b c d"], ["k l m n o"], ["p q r s"], ["t u v w"]]
    good = ["a b c d e", "f g h i j", "a b c d", "k l m n o", "p q r s", "t u v w"]
    bad = ["a b c d e", "f g h x y", "a b c d", "k x y z o", "p x r s", "t u x w"]
    short, long = [0, 1, 2], [3, 4, 5]
    growth, lo, hi = long_inputs.lead_growth(good, bad, refs, short, long, rounds=200, seed=3)

    def lead(idx):
        return (sacrebleu_score([good[i] for i in idx], [refs[i] for i in idx]).score
                - sacrebleu_score([bad[i] for i in idx], [refs[i] for i in idx]).score)

    assert growth == pytest.approx(lead(long) - lead(short))
    rng = random.Random(3)
    draws = sorted(lead(rng.choices(long, k=3)) - lead(rng.choices(short, k=3))
                   for _ in range(200))
    assert (lo, hi) == pytest.approx((draws[5], draws[194]))
    with pytest.raises(ValueError, match="share no source"):
        long_inputs.lead_growth(good, bad, refs, [0, 1], [1, 2])

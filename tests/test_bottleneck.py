"""lib.experiments.bottleneck: the reversal test of the single context vector (wrap-up chapter)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import lib.train
from lib.data import EOS, PAD, SOS
from lib.experiments import bottleneck
from lib.experiments.reversal import reversal_examples, reversal_model


def test_score_outputs_by_hand():
    # one exact copy, one with its second token wrong: 1 of 2 sequences, 4 of 5 positions
    assert bottleneck.score_outputs([[5, 6, 7], [5, 6]], [[5, 6, 7], [5, 7]]) == (0.5, 0.8, 2)
    # too long: not an exact answer, though every target position is right
    assert bottleneck.score_outputs([[5, 6, 7, 8]], [[5, 6, 7]]) == (0.0, 1.0, 1)
    # too short: the missing positions count as wrong
    assert bottleneck.score_outputs([[5]], [[5, 6, 7, 8]]) == (0.0, 0.25, 1)


def test_score_outputs_refuses_unpaired_lists():
    with pytest.raises(ValueError, match="as many outputs as targets"):
        bottleneck.score_outputs([[5]], [[5], [6]])
    with pytest.raises(ValueError, match="at least one"):
        bottleneck.score_outputs([], [])


@pytest.mark.parametrize("kwargs, words", [
    ({"min_len": 9, "max_len": 4}, "must not exceed"),
    ({"hidden": 0}, "hidden must be an integer >= 1"),
    ({"n_train": True}, "n_train must be an integer"),
    ({"max_len": 2.5}, "max_len must be an integer"),
    ({"attention": 1}, "attention must be True or False"),
])
def test_config_refuses_bad_settings(kwargs, words):
    with pytest.raises(ValueError, match=words):
        bottleneck.BottleneckConfig(**kwargs)


def test_steps_counts_what_lib_train_runs():
    config = bottleneck.BottleneckConfig(n_train=1000, batch_size=128, epochs=2.5)
    assert config.steps == 20  # 8 batches an epoch (the last one partial), 2.5 epochs
    assert bottleneck.BottleneckConfig().steps == 3000


def test_bucket_accuracy_pools_sequences_and_positions():
    A = bottleneck.Accuracy
    table = {2: A(1.0, 1.0, 10), 3: A(0.5, 0.8, 10), 4: A(0.0, 0.5, 20)}
    out = bottleneck.bucket_accuracy(table, [(2, 3), (4, 4)])
    assert out[(2, 3)].n == 20 and out[(2, 3)].sequence == pytest.approx(0.75)
    # positions: 2*10 all right + 3*10*0.8 = 44 of 50
    assert out[(2, 3)].token == pytest.approx(44 / 50)
    assert out[(4, 4)] == A(0.0, 0.5, 20)
    with pytest.raises(ValueError, match="no length"):
        bottleneck.bucket_accuracy(table, [(7, 9)])


def greedy_one(model, src: list[int], cap: int) -> list[int]:
    """An independent greedy loop, one sentence, one step at a time: the oracle for decode.
    Like every decoder of the course it never writes <pad> or <sos>."""
    _, state, context = model.encode(torch.tensor([src]), torch.tensor([len(src)]))
    prev, out = torch.tensor([SOS]), []
    for _ in range(cap):
        logits, state = model.decoder.step(prev, state, context)  # (1, V)
        logits[:, [PAD, SOS]] = float("-inf")
        token = int(logits.argmax(-1))
        if token == EOS:
            break
        out.append(token)
        prev = torch.tensor([token])
    return out


@pytest.mark.parametrize("attention", [False, True])
def test_decode_equals_a_step_by_step_greedy_loop(attention):
    model = reversal_model(seed=3, hidden=16, attention=attention).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3)  # peaked distributions: outputs of varied lengths
    sources = [s for s, _ in reversal_examples(12, seed=4, min_len=2, max_len=9)]
    got = bottleneck.decode(model, sources)
    cap = max(len(s) for s in sources) + 5
    with torch.no_grad():
        assert got == [greedy_one(model, s, cap) for s in sources]


def test_training_learns_short_reversals_and_the_result_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    monkeypatch.delenv("SEQ2SEQ_RECOMPUTE", raising=False)
    # the training settings this test was written for, whatever the chapter's defaults are
    config = bottleneck.BottleneckConfig(hidden=32, min_len=2, max_len=4, n_train=1500,
                                         epochs=4, batch_size=64, lr=1e-2)
    model, history = bottleneck.train_reversal(config)
    assert history.loss[-1] < history.loss[0]
    table = bottleneck.accuracy_by_length(model, config, n_per_length=50)
    assert list(table) == [2, 3, 4] and all(a.n == 50 for a in table.values())
    assert table[2].sequence > 0.9  # two digits backwards: learned in a few hundred steps

    # trains again, beside an attention model in another worker: same config, same weights
    other = dataclasses.replace(config, attention=True)
    tests = bottleneck.cached_tests({"a": config, "b": other})
    (cached, result), (_, result_b) = tests["a"], tests["b"]
    assert result["seconds"] > 0 and result_b["seconds"] > 0
    assert len(list((tmp_path / "results").glob("bottleneck-reversal-*.json"))) == 2
    assert list(cached) == [2, 3, 4] and all(a.n == 100 for a in cached.values())
    assert cached == bottleneck.accuracy_by_length(model, config)  # the same model again
    assert len(result["example"]["input"].split()) == 20
    assert result["attention"] is None and result["curve"]["step"][-1] == result["steps"]
    weights = torch.tensor(result_b["attention"])  # (T, S): the example's alignment
    assert weights.shape[1] == 20 and weights.shape[0] == len(
        result_b["example"]["output"].split()) + 1  # + <eos>
    assert torch.allclose(weights.sum(-1), torch.ones(len(weights)), atol=1e-3)
    assert result["example"]["target"].split() == [
        w.replace("en", "fr") for w in reversed(result["example"]["input"].split())]
    monkeypatch.setattr(bottleneck, "run_test", lambda *a: pytest.fail("not read back"))
    assert bottleneck.cached_tests({"a": config}) == {"a": (cached, result)}  # read back
    monkeypatch.setattr(lib.train, "TRAINING_VERSION", lib.train.TRAINING_VERSION + 1)
    with pytest.raises(pytest.fail.Exception, match="not read back"):
        bottleneck.cached_tests({"a": config})  # what training computes changed: trained again
    with pytest.raises(ValueError, match="n_per_length"):
        bottleneck.accuracy_by_length(model, config, n_per_length=0)


def test_longest_reversed_is_where_the_share_first_falls_below():
    acc = bottleneck.Accuracy
    table = {3: acc(1.0, 1.0, 10), 4: acc(0.6, 0.9, 10), 5: acc(0.4, 0.8, 10), 6: acc(0.9, 1, 10)}
    assert bottleneck.longest_reversed(table) == 4  # 6 passes again, but 5 broke first
    assert bottleneck.longest_reversed(table, share=0.95) == 3
    assert bottleneck.longest_reversed({3: acc(0.1, 0.5, 10)}) == 2  # fails at once
    with pytest.raises(ValueError, match="share must be"):
        bottleneck.longest_reversed(table, share=0)

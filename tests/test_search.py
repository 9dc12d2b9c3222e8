"""Greedy, beam and exhaustive search tied together by oracles.

* exhaustive search is the truth: a beam wide enough to keep every prefix must equal it;
* beam k = 1 must equal greedy; a narrow beam can never beat exhaustive search;
* the readable one-sentence reference and the batched search must agree, and batching or
  padding must not change any answer;
* hand-set probability tables (lib.experiments.toy) check hypotheses *and* scores computed by hand;
* pruning by a margin drops exactly the hypotheses it should, and their decoder rows.
"""

from __future__ import annotations

import functools
import json
import math
import re
import time

import pytest
import torch
from conftest import rows, wide_beam
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from lib import exhaustive, search
from lib.data import EOS, PAD, SOS, SPECIALS, Vocab
from lib.experiments.toy import (
    TableModel,
    greedy_loses_table,
    pruning_table,
    tiny_model,
    walkthrough_table,
)

ALPHAS = [0.0, 0.6, 1.0]


# A tiny Seq2Seq with random weights, scaled up so its distributions are peaked and varied.
random_model = functools.partial(tiny_model, src_words=5, tgt_words=2, emb_dim=6, hidden=8,
                                 max_tgt_len=5, scale=3.0)


def random_batch(model, batch: int, seed: int, max_src: int = 6):
    """src (B, S) of random words, padded with <pad>, and their lengths (B,), all different."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_src + 1, (batch,), generator=g)
    V = model.config.src_vocab_size
    src = torch.randint(4, V, (batch, int(lengths.max())), generator=g)
    for i, n in enumerate(lengths.tolist()):
        src[i, n:] = PAD
    return src, lengths


# ---------------------------------------------------------------------------------------------
# Greedy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_greedy_takes_the_argmax_given_its_own_prefix(seed):
    """Teacher-force greedy's output through the full forward pass: each token is the argmax."""
    model = random_model(seed, tgt_words=10, max_tgt_len=8)
    src, lengths = random_batch(model, 12, seed)
    tokens, raw = search.greedy_with_scores(model, src, lengths)
    tgt_in = torch.cat([torch.full((len(src), 1), SOS), tokens[:, :-1]], 1)  # (B, T)
    logp = search.log_probs(model(src, lengths, tgt_in).flatten(0, 1)).view(*tokens.shape, -1)
    real = tokens != PAD
    assert torch.equal(logp.argmax(-1)[real], tokens[real])
    # each row ends with <eos>, or has max_len tokens
    for row in rows(tokens):
        assert row[-1] == EOS or len(row) == 8
        assert EOS not in row[:-1] and SOS not in row
    assert torch.allclose(raw, logp.gather(2, tokens.unsqueeze(-1)).squeeze(-1)
                          .masked_fill(~real, 0).sum(1), atol=1e-5)


def test_sequence_log_prob_equals_the_teacher_forced_forward_pass():
    model = random_model(1, tgt_words=10, max_tgt_len=8)
    src, lengths = random_batch(model, 6, 1)
    g = torch.Generator().manual_seed(0)
    tgt = torch.randint(4, len(model.tgt_vocab), (6, 5), generator=g)
    tgt[0, 2], tgt[0, 3:] = EOS, PAD  # an ended row
    tgt[1, 1] = EOS  # tokens after the first <eos> do not count
    tgt_in = torch.cat([torch.full((6, 1), SOS), tgt[:, :-1]], 1)
    logp = torch.log_softmax(model(src, lengths, tgt_in), -1).gather(2, tgt.unsqueeze(-1))[..., 0]
    counted = torch.ones_like(tgt, dtype=torch.bool)
    counted[0, 3:] = False
    counted[1, 2:] = False
    expected = (logp * counted).sum(1)
    assert torch.allclose(search.sequence_log_prob(model, src, lengths, tgt), expected, atol=1e-5)


@pytest.mark.parametrize("seed", range(3))
def test_greedy_scores_are_sequence_log_prob_of_its_output(seed):
    """Greedy and teacher forcing read log P in one shared step, so they agree to the bit."""
    model = random_model(seed, tgt_words=10, max_tgt_len=8)
    src, lengths = random_batch(model, 1, seed)  # one sentence: the same decoder rows
    tokens, raw = search.greedy_with_scores(model, src, lengths)
    assert torch.equal(search.sequence_log_prob(model, src, lengths, tokens), raw)


# ---------------------------------------------------------------------------------------------
# Beam search against greedy, exhaustive search and the one-sentence reference
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_beam_of_one_is_greedy(seed):
    model = random_model(seed, tgt_words=12, max_tgt_len=10, hidden=16)
    src, lengths = random_batch(model, 16, seed)
    tokens, raw = search.greedy_with_scores(model, src, lengths)
    beam = search.beam_search(model, src, lengths, beam_size=1, alpha=0.0)
    assert torch.equal(beam.tokens, tokens)
    assert torch.allclose(beam.raw_scores, raw, atol=1e-5)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed,max_len", [(0, 4), (1, 5), (2, 4), (3, 5)])
def test_a_beam_that_never_prunes_equals_exhaustive_search(seed, max_len, alpha):
    """k large enough that every candidate of every step ranks in the top k: nothing is pruned,
    every finished hypothesis enters the pool and stopping is exact, so beam = exhaustive,
    n-best lists included, with or without length normalisation."""
    model = random_model(seed, max_tgt_len=max_len)
    src, lengths = random_batch(model, 3, seed)
    k = wide_beam(model, max_len)
    exact = exhaustive.exhaustive_search(model, src, lengths, max_len, alpha=alpha, n_best=4)
    beam = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha, n_best=4,
                              margin=None)
    assert torch.equal(beam.tokens, exact.tokens)
    assert torch.allclose(beam.scores, exact.scores, atol=1e-5)
    assert torch.allclose(beam.raw_scores, exact.raw_scores, atol=1e-5)
    for ours, truth in zip(beam.nbest, exact.nbest):
        assert [ids for ids, _, _ in ours] == [ids for ids, _, _ in truth]
        assert [s for _, s, _ in ours] == pytest.approx([s for _, s, _ in truth], abs=1e-5)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_a_narrow_beam_never_beats_exhaustive_search_and_scores_honestly(alpha):
    misses = 0
    for seed in range(4):
        model = random_model(seed, max_tgt_len=5)
        src, lengths = random_batch(model, 4, seed)
        exact = exhaustive.exhaustive_search(model, src, lengths, 5, alpha=alpha)
        for k in (1, 2, 3):
            beam = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha)
            assert (beam.scores <= exact.scores + 1e-5).all()
            true_raw = search.sequence_log_prob(model, src, lengths, beam.tokens)
            assert torch.allclose(beam.raw_scores, true_raw, atol=1e-5)
            n = (beam.tokens != PAD).sum(1)
            assert torch.allclose(beam.scores, true_raw / n ** alpha, atol=1e-5)
            misses += int((beam.scores < exact.scores - 1e-5).sum())
    assert misses > 0, "these models should make a narrow beam miss the optimum sometimes"


@pytest.mark.parametrize("margin", [None, 0.5, search.DEFAULT_MARGIN])
@pytest.mark.parametrize("alpha", [0.0, 0.6])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_batched_beam_search_equals_the_one_sentence_reference(k, alpha, margin):
    model = random_model(k, tgt_words=8, max_tgt_len=7, hidden=12)
    src, lengths = random_batch(model, 6, k)
    n_best = min(k, 3)
    batched = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha, n_best=n_best,
                                 margin=margin)
    for i, n in enumerate(lengths.tolist()):
        ref = search.beam_search_one(model, src[i, :n], beam_size=k, alpha=alpha, n_best=n_best,
                                     margin=margin)
        assert [ids for ids, _, _ in batched.nbest[i]] == [ids for ids, _, _ in ref]
        assert [s for _, s, _ in batched.nbest[i]] == pytest.approx([s for _, s, _ in ref],
                                                                    abs=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_batching_and_padding_do_not_change_answers(alpha):
    model = random_model(7, tgt_words=8, max_tgt_len=8, hidden=12)
    src, lengths = random_batch(model, 8, 7)
    together = search.beam_search(model, src, lengths, beam_size=3, alpha=alpha, n_best=2)
    padded = torch.cat([src, torch.full((8, 3), PAD)], 1)  # extra padding columns
    more = search.beam_search(model, padded, lengths, beam_size=3, alpha=alpha, n_best=2)
    assert torch.equal(more.tokens, together.tokens)
    assert together.tokens.size(1) == max(len(r) for r in rows(together.tokens))
    for i, n in enumerate(lengths.tolist()):
        alone = search.beam_search(model, src[i:i + 1, :n], lengths[i:i + 1], beam_size=3,
                                   alpha=alpha, n_best=2)
        assert rows(alone.tokens) == rows(together.tokens[i:i + 1])
        assert alone.scores.item() == pytest.approx(together.scores[i].item(), abs=1e-5)
        assert [h[0] for h in alone.nbest[0]] == [h[0] for h in together.nbest[i]]
    greedy_alone = [rows(search.greedy(model, src[i:i + 1, :n], lengths[i:i + 1]))[0]
                    for i, n in enumerate(lengths.tolist())]
    assert greedy_alone == rows(search.greedy(model, padded, lengths))


def test_stopping_early_never_changes_the_winner():
    """The stop test depends on n_best (the n-th finished must be safe), the winner must not."""
    model = random_model(3, tgt_words=8, max_tgt_len=9, hidden=12)
    src, lengths = random_batch(model, 10, 3)
    for alpha in ALPHAS:
        one = search.beam_search(model, src, lengths, beam_size=4, alpha=alpha, n_best=1)
        four = search.beam_search(model, src, lengths, beam_size=4, alpha=alpha, n_best=4)
        assert torch.equal(one.tokens, four.tokens)
        for hyps in four.nbest:
            scores = [s for _, s, _ in hyps]
            assert scores == sorted(scores, reverse=True) and len(hyps) <= 4


def test_translate_uses_greedy_and_beam_search():
    model = random_model(0, tgt_words=8, max_tgt_len=6)
    model.src_vocab = Vocab(list(SPECIALS) + ["hello", "world", "i", "am", "here"])
    sentences = ["hello world", "i am here ."]
    greedy_text = model.translate(sentences)
    assert greedy_text == model.translate(sentences, beam_size=1, alpha=0.0)
    beam_text = model.translate(sentences, beam_size=3)
    assert len(beam_text) == 2 and all(isinstance(s, str) for s in beam_text)
    assert all("<eos>" not in s and "<pad>" not in s for s in greedy_text + beam_text)


# ---------------------------------------------------------------------------------------------
# Hand-set probability tables: hypotheses and scores worked out by hand
# ---------------------------------------------------------------------------------------------


def test_greedy_is_beaten_by_beam_search_on_a_table():
    model = TableModel(greedy_loses_table())
    src, lengths = model.inputs(2)
    tokens, raw = search.greedy_with_scores(model, src, lengths)
    assert rows(tokens) == [model.ids(["A", "C", "<eos>"])] * 2
    assert raw.tolist() == pytest.approx([math.log(0.5) + math.log(0.4)] * 2)
    for alpha in ALPHAS:  # both answers have 3 tokens: alpha changes the scores, not the winner
        beam = search.beam_search(model, src, lengths, beam_size=2, alpha=alpha)
        assert rows(beam.tokens) == [model.ids(["B", "C", "<eos>"])] * 2
        best = math.log(0.4) + math.log(0.9)
        assert beam.raw_scores.tolist() == pytest.approx([best] * 2)
        assert beam.scores.tolist() == pytest.approx([best / 3 ** alpha] * 2)
        assert best > math.log(0.5 * 0.4)  # the product of maxima is not the maximum
        exact = exhaustive.exhaustive_search(model, src, lengths, max_len=4, alpha=alpha)
        assert torch.equal(exact.tokens, beam.tokens)


@pytest.mark.parametrize("alpha,winner,p", [
    (0.0, ["A", "<eos>"], 0.4 * 0.4),
    (0.6, ["A", "<eos>"], 0.4 * 0.4),
    (1.0, ["A", "B", "<eos>"], 0.4 * 0.35 * 0.5),
])
def test_walkthrough_k2_three_steps(alpha, winner, p):
    """A and C, then AB and CE, then ABD and CED; the answer is the best of the six finished
    hypotheses, which length normalisation changes."""
    model = TableModel(walkthrough_table(), max_len=3)
    src, lengths = model.inputs()
    result = search.beam_search(model, src, lengths, beam_size=2, alpha=alpha, n_best=2,
                                trace=True)
    assert rows(result.tokens) == [model.ids(winner)]
    assert result.raw_scores.item() == pytest.approx(math.log(p))
    assert result.scores.item() == pytest.approx(math.log(p) / len(winner) ** alpha)

    trace = result.trace
    text = {n.id: n.text for n in trace.nodes}

    def spelled(node):
        return "".join(text[i] for i in _ancestors(trace, node)).replace("<eos>", ".")

    by_step = trace.steps()
    kept = [sorted(spelled(n) for n in step if n.status == "kept") for step in by_step]
    finished = [sorted(spelled(n) for n in step if n.status == "finished") for step in by_step]
    assert kept[1] == ["A", "C"] and finished[1] == []
    assert kept[2] == ["AB", "CE"] and finished[2] == ["A.", "C."]
    if alpha == 0.0:  # no live hypothesis can beat A. any more (0.14 < 0.16): search stops
        assert len(by_step) == 3
    else:
        assert kept[3] == [] and finished[3] == ["AB.", "ABD", "CE.", "CED"]
        six = {"A.": 0.16, "C.": 0.15, "AB.": 0.07, "CE.": 0.06, "ABD": 0.056, "CED": 0.054}
        best = max(six, key=lambda h: math.log(six[h]) / len(h) ** alpha)
        assert best.replace(".", "") == "".join(winner).replace("<eos>", "")
    # the scores in the trace, by hand: AB = 0.4 * 0.35 at step 2
    ab = next(n for n in by_step[2] if spelled(n) == "AB")
    assert ab.raw == pytest.approx(math.log(0.14))
    assert ab.score == pytest.approx(math.log(0.14) / 2 ** alpha)
    assert [n.status for n in by_step[1]] == ["kept", "kept", "pruned", "pruned"]


def counting_rows(model) -> list[int]:
    """Wrap model.decoder.step to record how many rows each call runs."""
    calls, step = [], model.decoder.step

    def counted(prev, state, context):
        calls.append(prev.numel())
        return step(prev, state, context)

    model.decoder.step = counted
    return calls


def test_margin_prunes_hypotheses_far_behind_the_best_by_hand():
    """Margin 1: B is dropped at step 1 (0.24 < 0.76 / e = 0.2796) although a beam of 3 has
    room for it, so the search misses B <eos> and answers A C <eos>; it also runs fewer decoder
    rows (1 + 1 + 2 instead of 1 + 2 + 2). Margin 2 keeps B (0.76 / e^2 = 0.103)."""
    model = TableModel(pruning_table(), max_len=3)
    src, lengths = model.inputs()
    calls = counting_rows(model)
    plain = search.beam_search(model, src, lengths, beam_size=3, alpha=0.0, margin=None)
    assert rows(plain.tokens) == [model.ids(["B", "<eos>"])]
    assert plain.raw_scores.item() == pytest.approx(math.log(0.24))
    assert calls == [1, 2, 2]
    exact = exhaustive.exhaustive_search(model, src, lengths, max_len=3)
    assert torch.equal(exact.tokens, plain.tokens)

    calls.clear()
    pruned = search.beam_search(model, src, lengths, beam_size=3, alpha=0.0, margin=1.0,
                                trace=True)
    assert rows(pruned.tokens) == [model.ids(["A", "C", "<eos>"])]
    assert pruned.raw_scores.item() == pytest.approx(math.log(0.76 * 0.6 * 0.5))
    assert calls == [1, 1, 2]
    step1 = {n.text: n.status for n in pruned.trace.steps()[1]}
    assert step1 == {"A": "kept", "B": "pruned"}
    assert pruned.trace.margin == 1.0
    assert search.BeamTrace.from_dict(json.loads(json.dumps(pruned.trace.to_dict()))).margin == 1.0
    assert search.beam_search(model, src, lengths, beam_size=3, margin=None,
                              trace=True).trace.margin is None
    one = search.beam_search_one(model, src[0], beam_size=3, alpha=0.0, margin=1.0)
    assert one[0][0] == model.ids(["A", "C", "<eos>"])

    wider = search.beam_search(model, src, lengths, beam_size=3, alpha=0.0, margin=2.0)
    assert rows(wider.tokens) == [model.ids(["B", "<eos>"])]


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_pruned_hypotheses_run_no_decoder_rows(alpha):
    """At every step the decoder runs exactly one row per hypothesis kept at the step before
    (the trace's "kept" nodes), and a smaller margin never runs more rows in total."""
    totals = {}
    for margin in (None, 2.0, 0.5):
        model = random_model(4, tgt_words=8, max_tgt_len=7, hidden=12, scale=2.0)
        src, lengths = random_batch(model, 6, 4)
        calls = counting_rows(model)
        result = search.beam_search(model, src, lengths, beam_size=4, alpha=alpha,
                                    margin=margin, trace=True)
        by_step = [sum(sum(n.status == "kept" for n in trace.steps()[t - 1])
                       for trace in result.traces if len(trace.steps()) > t)
                   for t in range(1, len(calls) + 1)]
        assert calls == by_step
        totals[margin] = sum(calls)
    assert totals[0.5] <= totals[2.0] <= totals[None]
    assert totals[0.5] < totals[None]


def test_an_infinite_margin_is_the_plain_beam():
    model = random_model(2, tgt_words=8, max_tgt_len=7, hidden=12)
    src, lengths = random_batch(model, 6, 2)
    plain = search.beam_search(model, src, lengths, beam_size=4, n_best=2, margin=None)
    huge = search.beam_search(model, src, lengths, beam_size=4, n_best=2, margin=math.inf)
    assert torch.equal(plain.tokens, huge.tokens)
    assert [h for h in plain.nbest] == [h for h in huge.nbest]


def _ancestors(trace, node) -> list[int]:
    by_id = {n.id: n for n in trace.nodes}
    out = []
    while node.parent is not None:
        out.append(node.id)
        node = by_id[node.parent]
    return out[::-1]


def test_length_normalisation_on_a_table():
    """Unnormalised, the empty output (p = 0.3) beats every longer one; with alpha = 1 (the mean
    log-probability per token) X Y Z <eos> (p = 0.7 * 0.6 * 0.6 * 0.9 = 0.2268) wins."""
    table = {(): {"<eos>": 0.3, "X": 0.7},
             ("X",): {"Y": 0.6, "<eos>": 0.4},
             ("X", "Y"): {"Z": 0.6, "<eos>": 0.4},
             ("X", "Y", "Z"): {"<eos>": 0.9, "Y": 0.1}}
    model = TableModel(table, max_len=6)
    src, lengths = model.inputs()
    long_p = 0.7 * 0.6 * 0.6 * 0.9
    no_norm = search.beam_search(model, src, lengths, beam_size=3, alpha=0.0)
    assert rows(no_norm.tokens) == [[EOS]]
    assert no_norm.raw_scores.item() == pytest.approx(math.log(0.3))
    norm = search.beam_search(model, src, lengths, beam_size=3, alpha=1.0)
    assert rows(norm.tokens) == [model.ids(["X", "Y", "Z", "<eos>"])]
    assert norm.scores.item() == pytest.approx(math.log(long_p) / 4)
    for alpha in (0.0, 1.0):
        exact = exhaustive.exhaustive_search(model, src, lengths, max_len=6, alpha=alpha)
        beam = search.beam_search(model, src, lengths, beam_size=3, alpha=alpha)
        assert torch.equal(exact.tokens, beam.tokens)


# ---------------------------------------------------------------------------------------------
# Traces
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_trace_winner_is_the_answer_and_the_beam_holds_at_most_k(alpha):
    model = random_model(5, tgt_words=8, max_tgt_len=7, hidden=12)
    src, lengths = random_batch(model, 4, 5)
    k = 3
    result = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha, n_best=3,
                                trace=True)
    plain = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha, n_best=3)
    assert torch.equal(result.tokens, plain.tokens)
    for i, trace in enumerate(result.traces):
        assert trace.path(trace.winner) == rows(result.tokens)[i]
        assert [trace.path(j) for j in trace.nbest] == [h[0] for h in result.nbest[i]]
        assert trace.node(trace.winner).status == "finished"
        assert trace.source == [model.src_vocab.itos[j] for j in src[i, :lengths[i]]]
        steps = trace.steps()
        for t, step in enumerate(steps[1:], start=1):
            assert sum(n.status == "kept" for n in step) <= k
            assert len(step) <= 2 * k
            assert sum(n.status == "finished" and n.token == EOS for n in step) <= k
            parents = {n.id for n in steps[t - 1] if n.status == "kept"}
            assert all(n.parent in parents for n in step)
            for n in step:
                assert n.text == model.tgt_vocab.itos[n.token]
                assert n.score == pytest.approx(n.raw / t ** alpha, rel=1e-5)
        # one sentence alone gives the same trace as inside the batch
        alone = search.beam_search(model, src[i:i + 1, :lengths[i]], lengths[i:i + 1],
                                   beam_size=k, alpha=alpha, n_best=3, trace=True).trace
        assert [(n.id, n.parent, n.token, n.status) for n in alone.nodes] == \
               [(n.id, n.parent, n.token, n.status) for n in trace.nodes]


def test_trace_round_trips_through_json():
    model = TableModel(walkthrough_table(), max_len=3)
    trace = search.beam_search(model, *model.inputs(), beam_size=2, alpha=1.0, trace=True).trace
    data = json.loads(json.dumps(trace.to_dict()))
    assert search.BeamTrace.from_dict(data) == trace
    assert data["beam_size"] == 2 and data["alpha"] == 1.0 and data["max_len"] == 3
    assert data["nodes"][0] == {"id": 0, "parent": None, "step": 0, "token": SOS,
                                "text": "<sos>", "raw": 0.0, "score": 0.0, "status": "kept"}
    assert search.beam_search(model, *model.inputs(), beam_size=2).trace is None
    batched = search.beam_search(model, *model.inputs(2), beam_size=2, trace=True)
    assert len(batched.traces) == 2
    with pytest.raises(ValueError, match="traces"):
        _ = batched.trace


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    model = random_model(0)
    return model, *random_batch(model, 2, 0)


@pytest.mark.parametrize("beam_size", [0, -1, 2.0, True, "3", None])
def test_bad_beam_size(tiny, beam_size):
    model, src, lengths = tiny
    with pytest.raises(ValueError, match="beam_size must be an integer >= 1"):
        search.beam_search(model, src, lengths, beam_size=beam_size)
    if beam_size in (0, -1):
        with pytest.raises(ValueError, match="beam_size"):
            model.translate(["en1 en2"], beam_size=beam_size)


@pytest.mark.parametrize("max_len", [0, -3, 2.5, False, True, "5"])
def test_bad_length_cap(tiny, max_len):
    """Every decoder (and the widgets) check max_len with the public search.check_max_len."""
    model, src, lengths = tiny
    assert search.check_max_len(model, None) == model.config.max_tgt_len
    assert search.check_max_len(model, 3) == 3
    for call in (lambda: search.check_max_len(model, max_len),
                 lambda: search.greedy(model, src, lengths, max_len=max_len),
                 lambda: search.beam_search(model, src, lengths, max_len=max_len),
                 lambda: search.beam_search_one(model, src[0], max_len=max_len),
                 lambda: exhaustive.exhaustive_search(model, src, lengths, max_len=max_len)):
        with pytest.raises(ValueError, match=r"max_len \(the length cap\)"):
            call()


@pytest.mark.parametrize("alpha", [-0.1, -1, float("nan"), float("inf"), "1"])
def test_bad_alpha(tiny, alpha):
    model, src, lengths = tiny
    with pytest.raises(ValueError, match="alpha .* >= 0"):
        search.beam_search(model, src, lengths, alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=2, alpha=alpha)


@pytest.mark.parametrize("margin", [-0.5, float("nan"), "1", True])
def test_bad_margin(tiny, margin):
    model, src, lengths = tiny
    with pytest.raises(ValueError, match=r"margin \(the pruning threshold"):
        search.beam_search(model, src, lengths, margin=margin)
    with pytest.raises(ValueError, match="margin"):
        search.beam_search_one(model, src[0], margin=margin)


@pytest.mark.parametrize("n_best", [0, 4, 1.0])
def test_bad_n_best(tiny, n_best):
    model, src, lengths = tiny
    with pytest.raises(ValueError, match="n_best must be an integer from 1 to beam_size=3"):
        search.beam_search(model, src, lengths, beam_size=3, n_best=n_best)


def test_exhaustive_search_refuses_a_large_space(tiny):
    model, src, lengths = tiny
    assert exhaustive.count_sequences(6, 3) == 1 + 3 + 9 + 27
    with pytest.raises(ValueError, match=r"would score more than limit=2,000,000 sequences "
                                         r"\(6 tokens, up to 20 steps: about 3\^20\)"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=20)
    with pytest.raises(ValueError, match="limit=100"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=5, limit=100)
    # the limit is exact: 1 + 3 + 9 + 27 + 81 = 121 sequences for max_len 4
    assert exhaustive.count_sequences(6, 4) == 121
    exhaustive.exhaustive_search(model, src, lengths, max_len=4, limit=121)
    with pytest.raises(ValueError, match="limit=120"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=4, limit=120)


@pytest.mark.parametrize("max_len", [20_000, 10**6, search.MAX_LEN])
def test_exhaustive_search_refuses_a_long_cap_at_once(tiny, max_len):
    """Counting 3^20000 sequences once took 18 s and then failed on writing the number out;
    10**6 never returned. The count stops as soon as it passes the limit."""
    model, src, lengths = tiny
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"more than limit=2,000,000 sequences .* up to "
                                         f"{max_len:,} steps"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=max_len)
    assert time.perf_counter() - start < 1.0


def test_huge_numbers_are_refused_with_a_clear_error(tiny):
    """alpha=1e308 once raised OverflowError (L ** alpha) and max_len=2**63 a torch RuntimeError
    (an int64 overflow): both are ValueErrors naming the argument and its bound."""
    model, src, lengths = tiny
    for call in (lambda a: search.beam_search(model, src, lengths, alpha=a),
                 lambda a: search.beam_search_one(model, src[0], alpha=a),
                 lambda a: exhaustive.exhaustive_search(model, src, lengths, max_len=2, alpha=a),
                 lambda a: model.translate(["en1 en2"], beam_size=3, alpha=a)):
        with pytest.raises(ValueError, match=r"alpha .* at most MAX_ALPHA=10, got 1e\+308"):
            call(1e308)
    search.beam_search(model, src, lengths, alpha=search.MAX_ALPHA)  # the bound itself is fine
    for max_len in (2**63, 2**64, search.MAX_LEN + 1):
        for call in (lambda n: search.greedy(model, src, lengths, max_len=n),
                     lambda n: search.beam_search(model, src, lengths, max_len=n),
                     lambda n: exhaustive.exhaustive_search(model, src, lengths, max_len=n),
                     lambda n: model.translate(["en1 en2"], max_len=n),
                     lambda n: model.translate(["en1 en2"], beam_size=2, max_len=n)):
            with pytest.raises(ValueError, match=r"max_len \(the length cap\) must be at most "
                                                 r"MAX_LEN=1,000,000,000"):
                call(max_len)


def test_beam_size_is_bounded_by_the_work_per_step(tiny):
    """beam_size=10**6 once tried to allocate 27 GB. A beam ranks k * min(2k, |V|) candidates
    per sentence and step; above MAX_BEAM_CANDIDATES it is refused before any work."""
    model, src, lengths = tiny
    V = len(model.tgt_vocab)  # 6: a wide beam stays legal on a tiny vocabulary (exhaustive tests)
    widest = search.MAX_BEAM_CANDIDATES // V
    assert search.check_beam(model, widest) == widest
    for k in (widest + 1, 10**6, 10**18):
        message = (f"beam_size={k:,} is too wide for a target vocabulary of {V} words: each "
                   f"step would rank {k:,} x {V} = {k * V:,} candidates per sentence")
        for call in (lambda k: search.beam_search(model, src, lengths, beam_size=k),
                     lambda k: search.beam_search_one(model, src[0], beam_size=k),
                     lambda k: model.translate(["en1 en2"], beam_size=k)):
            with pytest.raises(ValueError, match=re.escape(message)):
                call(k)
    # on a real vocabulary the bound is k = 1,000 (k * 2k candidates while 2k < |V|)
    big = random_model(0, tgt_words=5000)
    assert search.check_beam(big, 1000) == 1000
    with pytest.raises(ValueError, match="1,001 x 2,002 = 2,004,002 candidates"):
        search.check_beam(big, 1001)


@pytest.mark.parametrize("beam_size", [True, 1.0, 2.0, False])
def test_translate_refuses_a_beam_size_that_is_not_an_int(tiny, beam_size):
    """`beam_size == 1` holds for True and 1.0, which once decoded greedily without a word."""
    model, _, _ = tiny
    with pytest.raises(ValueError, match="beam_size must be an integer >= 1"):
        model.translate(["en1 en2"], beam_size=beam_size)


def test_bad_batch_shapes(tiny):
    model, src, lengths = tiny
    with pytest.raises(ValueError, match=r"src \(B, S\) and src_lengths \(B,\)"):
        search.beam_search(model, src, lengths[:1])
    with pytest.raises(ValueError, match=r"src \(B, S\)"):
        search.greedy(model, src[0], lengths)


def test_table_model_refuses_bad_tables():
    with pytest.raises(ValueError, match="sums to"):
        TableModel({(): {"A": 0.5}})
    with pytest.raises(ValueError, match="cannot be generated"):
        TableModel({(): {"<pad>": 1.0}})
    with pytest.raises(ValueError, match="tuples of tokens"):
        TableModel({"A": {"<eos>": 1.0}})


# ---------------------------------------------------------------------------------------------
# The source-length cap and the candidate shortlist
# ---------------------------------------------------------------------------------------------


def test_length_caps_by_hand():
    lengths = torch.tensor([1, 5, 17, 30])
    assert search.length_caps(lengths, 40, source_cap=False).tolist() == [40, 40, 40, 40]
    # 2 * S + 6, never above max_len
    assert search.length_caps(lengths, 40, source_cap=True).tolist() == [8, 16, 40, 40]
    assert search.length_caps(lengths, 12, source_cap=True).tolist() == [8, 12, 12, 12]


@pytest.mark.parametrize("m", [1, 3, 7])
def test_top_candidates_equal_the_full_log_softmax(m):
    logits = torch.randn(6, 7, generator=torch.Generator().manual_seed(m)) * 4
    lp, ids = search.top_candidates(logits, m)
    full = search.log_probs(logits)  # (6, 7) with <pad>, <sos> at -inf
    want_lp, want_ids = full.topk(m, dim=-1)
    torch.testing.assert_close(lp, want_lp)
    finite = want_lp > float("-inf")
    assert torch.equal(ids[finite], want_ids[finite])
    assert not bool(torch.isin(ids[lp > float("-inf")], torch.tensor([PAD, SOS])).any())


@pytest.mark.parametrize("k", [1, 3])
def test_source_cap_equals_a_per_sentence_max_len(k):
    """Decoding a batch with source_cap is decoding each sentence alone with
    max_len = min(max_len, 2 * S + 6); no output is longer than its cap."""
    model = random_model(5, tgt_words=6, max_tgt_len=30, hidden=16, scale=1.0)
    src, lengths = random_batch(model, 12, 5, max_src=4)
    caps = search.length_caps(lengths, 30, source_cap=True).tolist()
    batch = search.beam_search(model, src, lengths, beam_size=k, alpha=0.6, source_cap=True)
    greedy = search.greedy(model, src, lengths, source_cap=True)
    for i, (n, cap) in enumerate(zip(lengths.tolist(), caps)):
        one_src, one_len = src[i:i + 1, :n], lengths[i:i + 1]
        alone = search.beam_search(model, one_src, one_len, beam_size=k, alpha=0.6, max_len=cap)
        assert rows(batch.tokens[i:i + 1]) == rows(alone.tokens)
        assert len(rows(batch.tokens[i:i + 1])[0]) <= cap
        assert rows(greedy[i:i + 1]) == rows(search.greedy(model, one_src, one_len, max_len=cap))
    # the cap binds for some sentence here (the untrained model rarely writes <eos>)
    uncapped = search.greedy(model, src, lengths)
    assert uncapped.size(1) > greedy.size(1)


def test_traces_record_each_sentences_cap():
    model = random_model(5, tgt_words=6, max_tgt_len=30, hidden=16, scale=1.0)
    src, lengths = random_batch(model, 4, 5, max_src=4)
    res = search.beam_search(model, src, lengths, beam_size=2, trace=True, source_cap=True)
    caps = search.length_caps(lengths, 30, source_cap=True).tolist()
    assert [tr.max_len for tr in res.traces] == caps
    assert all(max(n.step for n in tr.nodes) <= tr.max_len for tr in res.traces)


class _LargestTensor(TorchDispatchMode):
    """Records the largest tensor any torch operation returns (every allocation goes through
    an operation, whatever the allocator), in elements."""

    def __init__(self):
        super().__init__()
        self.numel = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        sizes = [t.numel() for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        self.numel = max([self.numel, *sizes])
        return out


def largest_tensor(fn) -> int:
    with _LargestTensor() as spy:
        fn()
    return spy.numel


@pytest.mark.parametrize("beam_size", [1, 3])
def test_memory_follows_the_output_not_max_len(beam_size):
    """translate caps each output at 2 * S + 6 tokens: a huge max_len must not allocate for
    max_len tokens (10**8 once asked for over 4 GB). The largest tensor is the same for a
    max_len of 60 and of 10**6, and translate with max_len=10**8 returns the same sentences."""
    sentences = ["en1 en2 en3", "en4 en5", "en6 en7 en8 en9 en10"]
    alpha = None if beam_size == 1 else 0.0
    model = tiny_model(3, max_tgt_len=60)  # untrained: it never writes <eos>, the cap binds

    def translate(n):
        return lambda: model.translate(sentences, beam_size, n, alpha)

    assert largest_tensor(translate(10**6)) == largest_tensor(translate(60))
    assert model.translate(sentences, beam_size, 10**8, alpha) == \
        model.translate(sentences, beam_size, alpha=alpha)
    # without the source cap, memory follows the longest output written (here 8 tokens)
    model = tiny_model(3, max_tgt_len=60, scale=2.0, eos_bias=0.5)
    src, lengths = model.prepare(sentences)

    def decode(n):
        if beam_size == 1:
            return search.greedy(model, src, lengths, max_len=n)
        return search.beam_search(model, src, lengths, beam_size, max_len=n).tokens

    longest = search.MAX_FREE_LEN  # the longest cap without the source cap
    assert largest_tensor(lambda: decode(longest)) == largest_tensor(lambda: decode(60))
    assert torch.equal(decode(longest), decode(60))


def test_a_model_says_whether_it_attends_and_the_traced_search_asks_it():
    """Seq2Seq.attends follows ModelConfig.attention and cannot be set; a traced beam search
    records weights only for a model that attends, and a TableModel (which does not) is
    searched and traced like any model."""
    plain, attending = tiny_model(0), tiny_model(0, attention=True)
    assert plain.attends is False and attending.attends is True
    with pytest.raises(AttributeError):
        plain.attends = True
    table = TableModel(walkthrough_table(), max_len=3)
    assert table.attends is False
    src, lengths = table.inputs()
    trace = search.beam_search(table, src, lengths, beam_size=2, trace=True).trace
    assert all(node.attention is None for node in trace.nodes)
    src = torch.tensor([[4, 5, 3]])
    traced = search.beam_search(attending.eval(), src, torch.tensor([3]), beam_size=2,
                                trace=True).trace
    assert any(node.attention is not None for node in traced.nodes)


def test_a_free_length_cap_is_bounded_like_translate_bounds_it(tiny):
    """Without source_cap only <eos> stops greedy or beam search before max_len: 10**9 was
    accepted. Above MAX_FREE_LEN it is refused, naming source_cap (what translate() uses)."""
    model, src, lengths = tiny
    n = search.MAX_FREE_LEN + 1
    for call in (lambda: search.greedy(model, src, lengths, max_len=n),
                 lambda: search.beam_search(model, src, lengths, max_len=n),
                 lambda: search.beam_search_one(model, src[0], max_len=n)):
        with pytest.raises(ValueError, match=r"max_len \(the length cap\) must be at most "
                                             r"MAX_FREE_LEN=1,000 without source_cap, got "
                                             r"1,001.*source_cap=True"):
            call()
    # with the source cap, as translate() decodes, the long cap is harmless
    search.greedy(model, src, lengths, max_len=n, source_cap=True)
    search.beam_search(model, src, lengths, max_len=n, source_cap=True)
    model.translate(["en1 en2"], max_len=n)
    search.greedy(model, src, lengths, max_len=search.MAX_FREE_LEN)


@pytest.mark.parametrize("limit", [10**30, search.MAX_LEN, exhaustive.MAX_EXHAUSTIVE + 1, 0,
                                   -5, 2.0, True])
def test_exhaustive_search_bounds_its_limit(tiny, limit):
    """limit=10**30 grew to 4.2 GB in 20 s: it is at most MAX_EXHAUSTIVE."""
    model, src, lengths = tiny
    with pytest.raises(ValueError, match=r"limit \(the most sequences to score\) must be an "
                                         r"integer from 1 to MAX_EXHAUSTIVE=2,000,000"):
        exhaustive.exhaustive_search(model, src, lengths, max_len=30, limit=limit)


def test_numpy_integers_are_accepted_as_the_ints_they_hold():
    import numpy as np
    model = random_model(0, tgt_words=12, max_tgt_len=10, hidden=16)
    src, lengths = random_batch(model, 4, 0)
    beam = search.beam_search(model, src, lengths, beam_size=np.int64(3), max_len=np.int32(6),
                              n_best=np.int64(2))
    same = search.beam_search(model, src, lengths, beam_size=3, max_len=6, n_best=2)
    assert torch.equal(beam.tokens, same.tokens)
    assert torch.equal(search.greedy(model, src, lengths, max_len=np.int64(6)),
                       search.greedy(model, src, lengths, max_len=6))
    one = search.beam_search_one(model, src[0, :int(lengths[0])], beam_size=np.int64(2))
    assert one == search.beam_search_one(model, src[0, :int(lengths[0])], beam_size=2)
    for bad in (True, np.float64(3.0), "3"):
        with pytest.raises(ValueError, match="beam_size must be an integer"):
            search.beam_search(model, src, lengths, beam_size=bad)

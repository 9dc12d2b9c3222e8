"""lib.attention and the attention decoder, tied to oracles.

* the scores, weights and context equal the equations written out with Python loops and with
  einsum, and torch.autograd.gradcheck passes in float64;
* a padded source position gets exactly zero weight, and padding added to a batch changes
  nothing;
* the decoder's teacher-forced step loop, `batch_loss` (teacher forcing 1 and < 1) and
  `attention_weights` equal a decoder stepped by hand from the equations;
* greedy batched equals greedy per sentence; a beam wide enough to keep every hypothesis equals
  exhaustive search; batched beam equals the one-sentence beam; each traced hypothesis carries
  the weights its own teacher-forced pass gives;
* translate and a checkpoint round trip work, and attention=False builds the model it always did.
"""

from __future__ import annotations

import functools
import json

import pytest
import torch
import torch.nn.functional as F
from conftest import rows, wide_beam

from lib import exhaustive, search
from lib.attention import AdditiveAttention, Memory, attention_weights, masked_softmax, source_mask
from lib.course import checkpoint
from lib.data import EOS, PAD, SOS, collate
from lib.decoder import Decoder
from lib.experiments.toy import tiny_model
from lib.model import ModelConfig, Seq2Seq
from lib.train import batch_loss

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest

ALPHAS = [0.0, 0.6]


# A tiny Seq2Seq with random weights scaled up, so its distributions are peaked and its
# attention weights far from uniform.
attention_model = functools.partial(tiny_model, src_words=5, tgt_words=2, emb_dim=6, hidden=8,
                                    max_tgt_len=5, scale=3.0, attention=True)


def random_batch(model, batch: int, seed: int, max_src: int = 6):
    """src (B, S) of random words padded with <pad>, lengths (B,); the longest is max_src."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_src + 1, (batch,), generator=g)
    lengths[0] = max_src
    src = torch.randint(4, model.config.src_vocab_size, (batch, max_src), generator=g)
    for i, n in enumerate(lengths.tolist()):
        src[i, n:] = PAD
    return src, lengths


def random_memory(attn: AdditiveAttention, N=3, S=5, H=4, lengths=(5, 2, 1), seed=0,
                  dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    states = torch.randn(N, S, H, generator=g, dtype=dtype)
    lengths = torch.tensor(lengths)
    return states, lengths, attn.memory(states, lengths)


def attention_loops(attn: AdditiveAttention, query, states, lengths):
    """The equations with Python loops, one sentence and one source position at a time:
    e_j = v . tanh(W_s s + W_h h_j) for j < n, a = exp(e) / sum exp(e), c = sum_j a_j h_j."""
    W_s, W_h, v = attn.W_s.weight, attn.W_h.weight, attn.v.weight[0]  # (A, Hs), (A, H), (A,)
    N, S, H = states.shape
    weights = torch.zeros(N, S, dtype=states.dtype)
    context = torch.zeros(N, H, dtype=states.dtype)
    for n in range(N):
        scores = [float(v @ torch.tanh(W_s @ query[n] + W_h @ states[n, j]))
                  for j in range(int(lengths[n]))]
        top = max(scores)
        exps = [torch.exp(torch.tensor(e - top, dtype=states.dtype)) for e in scores]
        for j, x in enumerate(exps):
            weights[n, j] = x / sum(exps)
            context[n] += weights[n, j] * states[n, j]
    return context, weights


# ---------------------------------------------------------------------------------------------
# The attention module against the equations
# ---------------------------------------------------------------------------------------------


def test_masked_softmax_by_hand():
    scores = torch.tensor([[1.0, 2.0, 100.0], [0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    got = masked_softmax(scores, mask)
    e = torch.exp(torch.tensor([1.0, 2.0]))
    assert got[0, 2] == 0.0  # the huge padded score gets no weight at all
    torch.testing.assert_close(got[0, :2], e / e.sum())
    torch.testing.assert_close(got[1], torch.full((3,), 1 / 3))
    assert torch.equal(source_mask(torch.tensor([3, 1]), 4),
                       torch.tensor([[True, True, True, False], [True, False, False, False]]))


@pytest.mark.parametrize("seed", range(3))
def test_scores_weights_and_context_equal_the_equations(seed):
    torch.manual_seed(seed)
    attn = AdditiveAttention(query_size=3, key_size=4, attn_size=6).double()
    states, lengths, memory = random_memory(attn, seed=seed)
    query = torch.randn(3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    with torch.no_grad():
        context, weights = attn(query, memory)
        ref_context, ref_weights = attention_loops(attn, query, states, lengths)
    torch.testing.assert_close(weights, ref_weights, atol=1e-12, rtol=0)
    torch.testing.assert_close(context, ref_context, atol=1e-12, rtol=0)
    # and with einsum: e[n,j] = sum_a v_a tanh(q[n,a] + k[n,j,a]); c[n,h] = sum_j a[n,j] h[n,j,h]
    with torch.no_grad():
        q = torch.einsum("ah,nh->na", attn.W_s.weight, query)  # (N, A)
        k = torch.einsum("ah,nsh->nsa", attn.W_h.weight, states)  # (N, S, A)
        e = torch.einsum("a,nsa->ns", attn.v.weight[0], torch.tanh(q[:, None] + k))  # (N, S)
        a = torch.softmax(e.masked_fill(~memory.mask, float("-inf")), dim=1)
        c = torch.einsum("ns,nsh->nh", a, states)
    torch.testing.assert_close(weights, a, atol=1e-12, rtol=0)
    torch.testing.assert_close(context, c, atol=1e-12, rtol=0)
    assert torch.allclose(weights.sum(1), torch.ones(3, dtype=torch.float64))


def test_gradcheck_in_float64():
    """Gradients of the context and the weights with respect to the query, the encoder states
    and the three weight matrices (padded positions included: their gradient is zero)."""
    torch.manual_seed(0)
    attn = AdditiveAttention(query_size=3, key_size=4, attn_size=5).double()
    g = torch.Generator().manual_seed(1)
    query = torch.randn(3, 3, dtype=torch.float64, generator=g, requires_grad=True)
    states = torch.randn(3, 4, 4, dtype=torch.float64, generator=g, requires_grad=True)
    lengths = torch.tensor([4, 2, 1])
    params = [p.detach().clone().requires_grad_(True)
              for p in (attn.W_s.weight, attn.W_h.weight, attn.v.weight)]

    def f(query, states, W_s, W_h, v):
        weights = {"W_s.weight": W_s, "W_h.weight": W_h, "v.weight": v}
        memory = Memory(states, F.linear(states, W_h), source_mask(lengths, states.size(1)))
        return torch.func.functional_call(attn, weights, (query, memory))  # c (N, H), a (N, S)

    assert torch.autograd.gradcheck(f, (query, states, *params))
    # the module's own memory() computes the same keys
    torch.testing.assert_close(attn.memory(states, lengths).keys, F.linear(states, params[1]))
    context, _ = attn(query, attn.memory(states, lengths))
    context.sum().backward()
    assert torch.equal(states.grad[1, 2:], torch.zeros(2, 4, dtype=torch.float64))
    assert torch.equal(states.grad[2, 1:], torch.zeros(3, 4, dtype=torch.float64))


def test_padding_gets_exactly_zero_weight_and_more_padding_changes_nothing():
    torch.manual_seed(0)
    attn = AdditiveAttention(3, 4, 6)
    g = torch.Generator().manual_seed(2)
    states = torch.randn(2, 3, 4, generator=g)
    lengths = torch.tensor([3, 1])
    query = torch.randn(2, 3, generator=g)
    with torch.no_grad():
        context, weights = attn(query, attn.memory(states, lengths))
        assert torch.equal(weights[1, 1:], torch.zeros(2))
        # seven more padded positions holding garbage, not even zeros: nothing moves
        garbage = torch.cat([states, 1e3 * torch.randn(2, 7, 4, generator=g)], dim=1)
        garbage[1, 1:3] = -5e2
        more_c, more_w = attn(query, attn.memory(garbage, lengths))
    assert torch.equal(more_w[:, 3:], torch.zeros(2, 7))
    assert torch.equal(more_w[1, 1:], torch.zeros(9))
    torch.testing.assert_close(more_w[:, :3], weights, atol=1e-7, rtol=0)
    torch.testing.assert_close(more_c, context, atol=1e-6, rtol=0)


def test_memory_selects_rows_like_a_tensor():
    torch.manual_seed(0)
    attn = AdditiveAttention(3, 4, 5)
    states, lengths, memory = random_memory(attn, dtype=torch.float32)
    for picked in (memory[torch.tensor([True, False, True])],
                   memory.index_select(0, torch.tensor([0, 2]))):
        assert len(picked) == 2
        assert torch.equal(picked.states, states[[0, 2]])
        assert torch.equal(picked.keys, memory.keys[[0, 2]])
        assert torch.equal(picked.mask, memory.mask[[0, 2]])
    with pytest.raises(ValueError, match="selects sentences"):
        memory.index_select(1, torch.tensor([0]))


# ---------------------------------------------------------------------------------------------
# The decoder, attention_weights and batch_loss against a decoder stepped by hand
# ---------------------------------------------------------------------------------------------


def hand_stepped(model, src, lengths, tgt_in, feed=None):
    """The attention decoder from its equations: c_t = sum_j a_tj h_j with a_t the masked
    softmax of v . tanh(W_s s_{t-1}^L + W_h h_j) (einsum), then one GRU step on
    [e(y_{t-1}); c_t], then the head. feed(t, true_next, logits) picks the next input (teacher
    forcing by default). Returns logits (B, T, V) and weights (B, T, S)."""
    dec, attn = model.decoder, model.decoder.attention
    h, state = model.encoder(src, lengths)  # (B, S, H), (L, B, H)
    real = torch.arange(src.size(1))[None] < lengths[:, None]  # (B, S)
    prev, all_logits, all_weights = tgt_in[:, 0], [], []
    for t in range(tgt_in.size(1)):
        q = torch.einsum("ah,bh->ba", attn.W_s.weight, state[-1])  # (B, A)
        k = torch.einsum("ah,bsh->bsa", attn.W_h.weight, h)  # (B, S, A)
        e = torch.einsum("a,bsa->bs", attn.v.weight[0], torch.tanh(q[:, None] + k))
        a = torch.exp(e - e.max(1, keepdim=True).values) * real  # (B, S) zero at the padding
        a = a / a.sum(1, keepdim=True)
        c = torch.einsum("bs,bsh->bh", a, h)  # (B, H)
        x = torch.cat([dec.embedding.weight[prev], c], dim=1)[:, None]  # (B, 1, E + H)
        out, state = dec.rnn(x, state)
        logits = out[:, 0] @ dec.head.proj.weight.T + dec.head.proj.bias  # (B, V)
        all_logits.append(logits)
        all_weights.append(a)
        if t + 1 < tgt_in.size(1):
            prev = tgt_in[:, t + 1] if feed is None else feed(t, tgt_in[:, t + 1], logits)
    return torch.stack(all_logits, 1), torch.stack(all_weights, 1)


@pytest.fixture(scope="module")
def batch():
    examples = [([4, 5, 6, 7], [4, 5]), ([8], [6, 4, 5]), ([5, 6], [5]), ([7, 8, 4], [4, 4, 6])]
    return collate(examples)


def test_decoder_forward_features_and_step_equal_the_equations(batch):
    model = attention_model(1, tgt_words=4, scale=1.5)
    with torch.no_grad():
        ref_logits, ref_weights = hand_stepped(model, batch.src, batch.src_lengths, batch.tgt_in)
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
        _, state, memory = model.encode(batch.src, batch.src_lengths)
        states, final, weights = model.decoder.features(batch.tgt_in, state, memory,
                                                        return_attention=True)
        stepped, stepped_w = [], []
        for t in range(batch.tgt_in.size(1)):
            lg, state, w = model.decoder.step(batch.tgt_in[:, t], state, memory,
                                              return_attention=True)
            stepped.append(lg)
            stepped_w.append(w)
    torch.testing.assert_close(logits, ref_logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=0)
    torch.testing.assert_close(torch.stack(stepped, 1), ref_logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(torch.stack(stepped_w, 1), ref_weights, atol=1e-6, rtol=0)
    torch.testing.assert_close(state, final, atol=1e-6, rtol=0)
    assert torch.equal(weights[1, :, 1:], torch.zeros(4, 3))  # a one-word source: all on it
    assert torch.equal(weights[1, :, 0], torch.ones(4))


def test_attention_weights_of_an_output(batch):
    """Row t holds the weights that scored y_t; rows after the first <eos> are zero."""
    model = attention_model(1, tgt_words=4, scale=1.5)
    tgt = torch.tensor([[4, 5, EOS, PAD], [6, EOS, PAD, PAD], [5, 6, 7, 4], [EOS, PAD, PAD, PAD]])
    got = attention_weights(model, batch.src, batch.src_lengths, tgt)
    tgt_in = torch.cat([torch.full((4, 1), SOS), tgt[:, :-1]], dim=1)
    with torch.no_grad():
        _, ref = hand_stepped(model, batch.src, batch.src_lengths, tgt_in)
    written = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]).bool()
    assert got.shape == (4, 4, 4)
    torch.testing.assert_close(got[written], ref[written], atol=1e-6, rtol=0)
    assert torch.equal(got[~written], torch.zeros(int((~written).sum()), 4))
    with pytest.raises(ValueError, match="no attention"):
        attention_weights(attention_model(attention=False), batch.src, batch.src_lengths, tgt)


@pytest.mark.parametrize("ratio", [1.0, 0.5, 0.0])
def test_batch_loss_equals_the_decoder_stepped_by_hand(batch, ratio):
    """ratio 1: teacher forcing; 0.5: batch_loss's coins, drawn again here; 0: own outputs."""
    model = attention_model(2, tgt_words=4, scale=1.5)
    g = torch.Generator().manual_seed(7)
    got = batch_loss(model, batch, teacher_forcing=ratio, generator=g)
    coins = torch.Generator().manual_seed(7)

    def feed(t, true_next, logits):
        heads = torch.rand(true_next.size(0), generator=coins) < ratio
        return torch.where(heads, true_next, logits.argmax(-1))

    logits, _ = hand_stepped(model, batch.src, batch.src_lengths, batch.tgt_in,
                             None if ratio == 1.0 else feed)
    logp = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    real = batch.tgt_out != PAD
    want = -logp.gather(2, batch.tgt_out.unsqueeze(-1))[..., 0][real].mean()
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)


def test_training_reaches_the_attention_weights(batch):
    """Gradients flow into W_s, W_h and v, and a few Adam steps fit one batch."""
    model = attention_model(3, tgt_words=4, scale=1.0, dropout=0.1).train()
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    first = None
    for _ in range(40):
        loss = batch_loss(model, batch, teacher_forcing=1.0)
        opt.zero_grad()
        loss.backward()
        for p in model.decoder.attention.parameters():
            assert p.grad is not None and p.grad.abs().sum() > 0
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.3 * first


# ---------------------------------------------------------------------------------------------
# Search with attention
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_batched_greedy_equals_greedy_per_sentence(seed):
    model = attention_model(seed, tgt_words=5, max_tgt_len=8)
    src, lengths = random_batch(model, 5, seed)
    tokens, raw = search.greedy_with_scores(model, src, lengths)
    weights = attention_weights(model, src, lengths, tokens)  # (B, T, S)
    for i, n in enumerate(lengths.tolist()):
        alone, alone_raw = search.greedy_with_scores(model, src[i:i + 1, :n], lengths[i:i + 1])
        assert rows(alone) == rows(tokens[i:i + 1])
        torch.testing.assert_close(alone_raw[0], raw[i], atol=1e-5, rtol=0)
        # the batch's padding changes no weight, and gets none
        alone_w = attention_weights(model, src[i:i + 1, :n], lengths[i:i + 1], alone)[0]
        torch.testing.assert_close(weights[i, :alone.size(1), :n], alone_w, atol=1e-6, rtol=0)
        assert not weights[i, :, n:].any()
    torch.testing.assert_close(search.sequence_log_prob(model, src, lengths, tokens), raw,
                               atol=1e-5, rtol=0)
    beam = search.beam_search(model, src, lengths, beam_size=1, alpha=0.0)
    assert torch.equal(beam.tokens, tokens)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed,max_len", [(0, 4), (1, 5), (2, 4)])
def test_a_beam_that_keeps_every_hypothesis_equals_exhaustive_search(seed, max_len, alpha):
    """Beam search expands the memory per hypothesis (index_select of the hypotheses' rows);
    exhaustive search repeats it per prefix. A beam wider than every step's candidates keeps
    them all, so the two must agree, n-best lists included."""
    model = attention_model(seed, max_tgt_len=max_len)
    src, lengths = random_batch(model, 3, seed)
    k = wide_beam(model, max_len)
    exact = exhaustive.exhaustive_search(model, src, lengths, max_len, alpha=alpha, n_best=4)
    beam = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha, n_best=4,
                              margin=None)
    assert torch.equal(beam.tokens, exact.tokens)
    torch.testing.assert_close(beam.raw_scores, exact.raw_scores, atol=1e-5, rtol=0)
    for ours, truth in zip(beam.nbest, exact.nbest):
        assert [ids for ids, _, _ in ours] == [ids for ids, _, _ in truth]
        assert [s for _, s, _ in ours] == pytest.approx([s for _, s, _ in truth], abs=1e-5)
    # and every answer's score is its log-probability under the model
    torch.testing.assert_close(search.sequence_log_prob(model, src, lengths, exact.tokens),
                               exact.raw_scores, atol=1e-5, rtol=0)


@pytest.mark.parametrize("k,margin", [(2, None), (3, 1.5)])
def test_batched_beam_equals_the_one_sentence_beam(k, margin):
    model = attention_model(4, tgt_words=5, max_tgt_len=7)
    src, lengths = random_batch(model, 4, 4)
    batched = search.beam_search(model, src, lengths, beam_size=k, alpha=0.6, n_best=2,
                                 margin=margin)
    for i, n in enumerate(lengths.tolist()):
        ref = search.beam_search_one(model, src[i, :n], beam_size=k, alpha=0.6, n_best=2,
                                     margin=margin)
        assert [ids for ids, _, _ in batched.nbest[i]] == [ids for ids, _, _ in ref]
        assert [s for _, s, _ in batched.nbest[i]] == pytest.approx([s for _, s, _ in ref],
                                                                    abs=1e-5)


def test_each_traced_hypothesis_carries_its_attention():
    """A node's weights are those with which the decoder scored its token: the last row of
    attention_weights on the node's own path."""
    model = attention_model(5, tgt_words=4, max_tgt_len=5)
    src, lengths = random_batch(model, 3, 5, max_src=4)
    result = search.beam_search(model, src, lengths, beam_size=3, alpha=0.6, n_best=2,
                                trace=True)
    for b, trace in enumerate(result.traces):
        n = int(lengths[b])
        nodes = [node for node in trace.nodes if node.parent is not None]
        assert nodes and trace.nodes[0].attention is None
        for node in nodes:
            path = trace.path(node.id)
            want = attention_weights(model, src[b:b + 1, :n], lengths[b:b + 1],
                                     torch.tensor([path]))[0, -1]  # (n,)
            assert len(node.attention) == n
            torch.testing.assert_close(torch.tensor(node.attention), want, atol=1e-5, rtol=0)
    data = json.loads(json.dumps(result.traces[0].to_dict()))
    assert search.BeamTrace.from_dict(data) == result.traces[0]
    plain = attention_model(5, attention=False)
    node = search.beam_search(plain, src, lengths, beam_size=2, trace=True).traces[0].to_dict()
    assert all("attention" not in n for n in node["nodes"])  # unchanged for a plain model


def test_translate_greedy_and_beam():
    model = attention_model(6, tgt_words=5, max_tgt_len=8)
    sentences = ["en1 en2 en3", "en4", "en0 en1 en2 en3 en4 en0"]
    src, lengths = model.prepare(sentences)

    def text(ids):
        return [" ".join(model.tgt_vocab.decode(r)) for r in ids.tolist()]

    greedy = search.greedy(model, src, lengths, source_cap=True)
    beam = search.beam_search(model, src, lengths, beam_size=3, source_cap=True).tokens
    assert model.translate(sentences) == text(greedy)
    assert model.translate(sentences, beam_size=3) == text(beam)


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path):
    model = attention_model(7, tgt_words=5, max_tgt_len=8)
    src, lengths = random_batch(model, 3, 7)
    path = checkpoint.save(model, tmp_path / "attention.pt")
    loaded = checkpoint.load(path, device="cpu")
    assert loaded.config.attention and loaded.config == model.config
    assert loaded.state_dict().keys() == model.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(),
                                                 model.state_dict().values()))
    tokens = search.greedy(model, src, lengths)
    assert torch.equal(search.greedy(loaded, src, lengths), tokens)
    assert torch.equal(search.beam_search(loaded, src, lengths, beam_size=3).tokens,
                       search.beam_search(model, src, lengths, beam_size=3).tokens)
    assert torch.equal(attention_weights(loaded, src, lengths, tokens),
                       attention_weights(model, src, lengths, tokens))


# ---------------------------------------------------------------------------------------------
# The option: off by default, and an attention decoder starts from a fixed-vector one's weights
# ---------------------------------------------------------------------------------------------


def test_attention_off_is_the_model_it_always_was_and_on_adds_only_attention():
    plain, att = attention_model(8, attention=False), attention_model(8)
    assert plain.decoder.attention is None
    assert not any("attention" in name for name in plain.state_dict())
    added = [name for name in att.state_dict() if name not in plain.state_dict()]
    assert added == ["decoder.attention.W_s.weight", "decoder.attention.W_h.weight",
                     "decoder.attention.v.weight"]
    # created last, so the same seed draws the same weights for every shared layer
    shared = plain.state_dict()
    assert all(torch.equal(att.state_dict()[name], w) for name, w in shared.items())
    # the GRU reads [e(y); c] in both: the fixed-vector weights load into the attention model
    fresh = attention_model(9)
    missing, unexpected = fresh.load_state_dict(shared, strict=False)
    assert sorted(missing) == sorted(added) and not unexpected
    src, lengths = random_batch(plain, 2, 0)
    _, hidden, context = plain.encode(src, lengths)
    assert isinstance(context, torch.Tensor) and torch.equal(context, hidden[-1])
    assert isinstance(att.encode(src, lengths)[2], Memory)


def test_clear_errors_for_mixed_up_contexts():
    att, plain = attention_model(0), attention_model(0, attention=False)
    src, lengths = random_batch(att, 2, 0)
    _, state, memory = att.encode(src, lengths)
    prev = torch.full((2,), SOS)
    with pytest.raises(TypeError, match="pass the Memory that model.encode returns"):
        att.decoder.step(prev, state, state[-1])
    with pytest.raises(TypeError, match="has no attention"):
        plain.decoder.step(prev, state, memory)
    with pytest.raises(ValueError, match="no attention weights"):
        plain.decoder.step(prev, state, state[-1], return_attention=True)
    with pytest.raises(ValueError, match="needs feed_context=True"):
        Decoder(8, 4, 8, feed_context=False, attention=True)
    with pytest.raises(ValueError, match="needs feed_context=True"):
        Seq2Seq(ModelConfig(len(att.src_vocab), len(att.tgt_vocab), emb_dim=4, hidden_size=8,
                            feed_context=False, attention=True), att.src_vocab, att.tgt_vocab)


def test_ids_outside_the_vocabulary_are_named(batch):
    """A bare embedding IndexError once told nothing of which id or which vocabulary."""
    model = attention_model(1, tgt_words=4, scale=1.5)
    V = len(model.tgt_vocab)
    tgt = torch.tensor([[4, 5, EOS, PAD], [6, EOS, PAD, PAD], [5, V, 7, 4], [EOS, PAD, PAD, PAD]])
    with pytest.raises(ValueError, match=rf"tgt holds the id {V} at \(2, 1\), outside the "
                                         rf"vocabulary of {V} tokens"):
        attention_weights(model, batch.src, batch.src_lengths, tgt)
    with pytest.raises(ValueError, match=rf"tgt holds the id -1 .* vocabulary of {V} tokens"):
        search.sequence_log_prob(model, batch.src, batch.src_lengths, tgt.clamp(max=V - 1) - 5)
    src = batch.src.clone()
    src[0, 0] = 10**6
    with pytest.raises(ValueError, match="src holds the id 1000000 at \\(0, 0\\)"):
        attention_weights(model, src, batch.src_lengths, tgt.clamp(max=V - 1))


@pytest.mark.parametrize("lengths, max_len, words", [
    (torch.tensor([2, -1]), 3, r"lengths must be >= 0"),
    (torch.tensor([2.0, 1.5]), 3, "lengths must be a tensor of whole token counts"),
    ([2, 1], 3, "lengths must be a tensor"),
    (torch.tensor([2, 1]), -2, "max_len must be an integer >= 0"),
    (torch.tensor([2, 1]), 2.5, "max_len must be an integer >= 0"),
])
def test_source_mask_refuses_lengths_that_are_not_counts(lengths, max_len, words):
    with pytest.raises(ValueError, match=words):
        source_mask(lengths, max_len)

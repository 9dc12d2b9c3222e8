"""lib.encoder, lib.decoder and lib.model: padding never changes the encoder, every sentence
equals a GRU written here from the equations, the teacher-forced decoder equals stepping, the two
context wirings, and `translate` on bad input."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lib import data
from lib.data import EOS, PAD, SOS, SPECIALS, Vocab
from lib.decoder import Decoder
from lib.encoder import Encoder
from lib.experiments.toy import tiny_model
from lib.model import ModelConfig, Seq2Seq

V, E, H, L = 13, 6, 8, 2


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


def _encoder(num_layers=L, seed=0):
    torch.manual_seed(seed)
    return Encoder(V, E, H, num_layers, dropout=0.3).eval()  # eval: dropout off


def _decoder(feed_context, seed=0, num_layers=L):
    torch.manual_seed(seed)
    return Decoder(V, E, H, num_layers, dropout=0.3, feed_context=feed_context).eval()


def _padded(seqs, width, filler=PAD):
    out = torch.full((len(seqs), width), filler, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.tensor(s)
    return out, torch.tensor([len(s) for s in seqs])


def gru_reference(gru: torch.nn.GRU, x: torch.Tensor, h0: torch.Tensor | None = None):
    """One unbatched sentence through a stacked GRU, written from the equations.

    x (T, in), h0 (L, H) -> outputs of the last layer (T, H), final states (L, H).
        r = σ(W_ir x + b_ir + W_hr h + b_hr)      z = σ(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))      h' = (1 − z) ⊙ n + z ⊙ h
    """
    hs = gru.hidden_size
    finals = []
    inputs = x
    for layer in range(gru.num_layers):
        w_ih, w_hh = getattr(gru, f"weight_ih_l{layer}"), getattr(gru, f"weight_hh_l{layer}")
        b_ih, b_hh = getattr(gru, f"bias_ih_l{layer}"), getattr(gru, f"bias_hh_l{layer}")
        h = torch.zeros(hs) if h0 is None else h0[layer]
        outs = []
        for t in range(inputs.size(0)):
            gi = w_ih @ inputs[t] + b_ih
            gh = w_hh @ h + b_hh
            r = torch.sigmoid(gi[:hs] + gh[:hs])
            z = torch.sigmoid(gi[hs:2 * hs] + gh[hs:2 * hs])
            n = torch.tanh(gi[2 * hs:] + r * gh[2 * hs:])
            h = (1 - z) * n + z * h
            outs.append(h)
        inputs = torch.stack(outs)
        finals.append(h)
    return inputs, torch.stack(finals)


# ---------------------------------------------------------------------------------------------
# Encoder
# ---------------------------------------------------------------------------------------------

sentences = st.lists(st.lists(st.integers(4, V - 1), min_size=1, max_size=7),
                     min_size=1, max_size=5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seqs=sentences, extra=st.integers(1, 4), garbage=st.booleans())
def test_extra_padding_never_changes_any_output(seqs, extra, garbage):
    enc = _encoder()
    width = max(len(s) for s in seqs)
    src, lengths = _padded(seqs, width)
    with torch.no_grad():
        out, hidden = enc(src, lengths)
        wide, wide_lengths = _padded(seqs, width + extra, filler=7 if garbage else PAD)
        out2, hidden2 = enc(wide, wide_lengths)
    assert out.shape == (len(seqs), width, H) and hidden.shape == (L, len(seqs), H)
    assert out2.shape == (len(seqs), width + extra, H)
    torch.testing.assert_close(out2[:, :width], out, atol=1e-6, rtol=0)
    torch.testing.assert_close(hidden2, hidden, atol=1e-6, rtol=0)
    for i, n in enumerate(lengths.tolist()):  # zero at every padded position
        assert (out[i, n:] == 0).all() and (out2[i, n:] == 0).all()
        assert out[i, n - 1].abs().sum() > 0
    # The last layer's output at the last real token is that layer's hidden state.
    last = out[torch.arange(len(seqs)), lengths - 1]
    torch.testing.assert_close(last, hidden[-1], atol=1e-6, rtol=0)


@settings(max_examples=15, deadline=None)
@given(seqs=sentences)
def test_each_sentence_equals_the_gru_run_on_it_alone(seqs):
    enc = _encoder()
    src, lengths = _padded(seqs, max(len(s) for s in seqs) + 1)
    with torch.no_grad():
        out, hidden = enc(src, lengths)
        for i, s in enumerate(seqs):
            alone_out, alone_hidden = enc(torch.tensor([s]), torch.tensor([len(s)]))
            ref_out, ref_hidden = gru_reference(enc.rnn, enc.embedding.weight[s])
            torch.testing.assert_close(hidden[:, i], ref_hidden, atol=1e-5, rtol=0)
            torch.testing.assert_close(out[i, :len(s)], ref_out, atol=1e-5, rtol=0)
            torch.testing.assert_close(alone_hidden[:, 0], ref_hidden, atol=1e-5, rtol=0)
            torch.testing.assert_close(alone_out[0], ref_out, atol=1e-5, rtol=0)


def test_pad_embedding_is_zero_and_lengths_may_be_any_order():
    enc = _encoder()
    assert (enc.embedding.weight[PAD] == 0).all()
    seqs = [[4, 5], [6, 7, 8, 9], [10]]
    src, lengths = _padded(seqs, 4)
    with torch.no_grad():
        _, hidden = enc(src, lengths)
        _, hidden_rev = enc(src.flip(0), lengths.flip(0))
    torch.testing.assert_close(hidden_rev, hidden.flip(1), atol=1e-6, rtol=0)


def test_encoder_refuses_a_zero_length_sentence():
    enc = _encoder()
    src, _ = _padded([[4, 5], [6]], 2)
    with pytest.raises(ValueError, match="at least one token.*length 0"):
        enc(src, torch.tensor([2, 0]))


# ---------------------------------------------------------------------------------------------
# Decoder
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("feed_context", [True, False])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_teacher_forced_forward_equals_stepping(feed_context, num_layers):
    dec = _decoder(feed_context, num_layers=num_layers)
    g = torch.Generator().manual_seed(1)
    B, T = 3, 6
    tgt_in = torch.randint(4, V, (B, T), generator=g)
    tgt_in[:, 0] = SOS
    tgt_in[0, 4:] = PAD  # a padded row
    state0 = torch.randn(num_layers, B, H, generator=g)
    context = torch.randn(B, H, generator=g)
    with torch.no_grad():
        logits, final = dec(tgt_in, state0, context)
        state, steps = state0, []
        for t in range(T):
            step_logits, state = dec.step(tgt_in[:, t], state, context)
            steps.append(step_logits)
    assert logits.shape == (B, T, V) and final.shape == (num_layers, B, H)
    torch.testing.assert_close(torch.stack(steps, 1), logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(state, final, atol=1e-5, rtol=0)
    # and both equal the GRU of the equations followed by the linear head (eq. 6)
    for b in range(B):
        x = dec.embedding.weight[tgt_in[b]]
        if feed_context:
            x = torch.cat([x, context[b].expand(T, H)], dim=1)
        with torch.no_grad():
            ref_states, ref_final = gru_reference(dec.rnn, x, state0[:, b])
            ref_logits = ref_states @ dec.head.proj.weight.T + dec.head.proj.bias
        torch.testing.assert_close(logits[b], ref_logits, atol=1e-5, rtol=0)
        torch.testing.assert_close(final[:, b], ref_final, atol=1e-5, rtol=0)


@pytest.mark.parametrize("feed_context", [True, False])
def test_context_enters_every_step_only_with_feed_context(feed_context):
    dec = _decoder(feed_context)
    g = torch.Generator().manual_seed(2)
    tgt_in = torch.randint(4, V, (2, 5), generator=g)
    state = torch.randn(L, 2, H, generator=g)
    ctx_a, ctx_b = torch.randn(2, H, generator=g), torch.randn(2, H, generator=g)
    with torch.no_grad():
        a, _ = dec(tgt_in, state, ctx_a)
        b, _ = dec(tgt_in, state, ctx_b)
        c, _ = dec(tgt_in, state + 1.0, ctx_a)
    expected_in = E + (H if feed_context else 0)
    assert dec.rnn.input_size == expected_in
    if feed_context:
        assert (a - b).abs().max() > 1e-3  # Cho et al.: the context is read at every step
    else:
        assert torch.equal(a, b)  # Sutskever et al.: only the initial state carries it
    assert (a - c).abs().max() > 1e-3  # the initial state always matters


def test_seq2seq_wires_encoder_hidden_states_into_the_decoder():
    torch.manual_seed(0)
    sv = Vocab(list(SPECIALS) + [f"e{i}" for i in range(V - 4)])
    tv = Vocab(list(SPECIALS) + [f"f{i}" for i in range(V - 4)])
    model = Seq2Seq(ModelConfig(V, V, emb_dim=E, hidden_size=H, num_layers=L, dropout=0.0),
                    sv, tv).eval()
    src, lengths = _padded([[4, 5, 6], [7]], 3)
    tgt_in = torch.tensor([[SOS, 4, 5], [SOS, 6, PAD]])
    with torch.no_grad():
        outputs, hidden, context = model.encode(src, lengths)
        assert torch.equal(context, hidden[-1])  # eq. 3: the last layer's final state
        enc_out, enc_hidden = model.encoder(src, lengths)
        assert torch.equal(hidden, enc_hidden) and torch.equal(outputs, enc_out)
        expected, _ = model.decoder(tgt_in, enc_hidden, enc_hidden[-1])
        assert torch.equal(model(src, lengths, tgt_in), expected)
    with pytest.raises(ValueError, match="vocabulary sizes 13/13 do not match the config's 14/13"):
        Seq2Seq(ModelConfig(V + 1, V, emb_dim=E, hidden_size=H), sv, tv)


# ---------------------------------------------------------------------------------------------
# Seq2Seq.translate: text in, text out, and bad input
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model():
    pairs = [("I am here.", "Je suis là."), ("You are here.", "Tu es là."),
             ("Go away!", "Va-t'en !"), ("Who is it?", "Qui est-ce ?")]
    sv = Vocab.build([data.tokenize(en) for en, _ in pairs])
    tv = Vocab.build([data.tokenize(fr) for _, fr in pairs])
    return tiny_model(3, src_vocab=sv, tgt_vocab=tv, dropout=0.5, max_src_len=5, max_tgt_len=7)


def _greedy_reference(model, sentence, max_len):
    """Greedy decoding written here: step, take the best token other than <pad>/<sos>."""
    ids = model.src_vocab.encode(data.tokenize(sentence))
    with torch.no_grad():
        _, state, context = model.encode(torch.tensor([ids]), torch.tensor([len(ids)]))
        prev, out = torch.tensor([SOS]), []
        for _ in range(max_len):
            logits, state = model.decoder.step(prev, state, context)
            logits[0, [PAD, SOS]] = float("-inf")
            prev = logits.argmax(-1)
            if int(prev) == EOS:
                break
            out.append(model.tgt_vocab.itos[int(prev)])
    return data.detokenize(out)


def test_translate_returns_one_string_per_sentence_equal_to_greedy_by_hand(model):
    model.train()  # translate must switch dropout off, and restore the mode afterwards
    sentences = ["I am here.", "Who is it?", "Go!"]
    out = model.translate(sentences)
    assert model.training
    assert isinstance(out, list) and len(out) == 3 and all(isinstance(s, str) for s in out)
    assert out == model.translate(sentences) == model.translate(tuple(sentences))
    model.eval()
    assert out == [_greedy_reference(model, s, 7) for s in sentences]
    assert model.translate(sentences, max_len=2) == [_greedy_reference(model, s, 2)
                                                    for s in sentences]
    # a sentence is translated the same alone and in a padded batch
    assert [model.translate([s])[0] for s in sentences] == out


def test_translate_accepts_an_all_unknown_sentence(model):
    assert model.unknown_fraction("Xyzzy plugh") == 1.0
    assert model.unknown_fraction("I am xyzzy") == pytest.approx(1 / 3)
    out = model.translate(["Xyzzy plugh", "I am here."])  # documented: accepted, a guess
    assert len(out) == 2 and isinstance(out[0], str)
    assert out[0] == model.translate(["Qwerty azerty"])[0]  # both are <unk> <unk>


@pytest.mark.parametrize("sentences, match", [
    ([""], r"sentence 0 is empty: ''"),
    (["I am here.", "  \u202f "], r"sentence 1 is empty"),
])
def test_translate_refuses_empty_sentences(model, sentences, match):
    with pytest.raises(ValueError, match=match):
        model.translate(sentences)


def test_translate_refuses_an_empty_list(model):
    with pytest.raises(ValueError, match="no sentences to translate"):
        model.translate([])


def test_translate_length_cap(model):
    assert len(model.translate(["a b c d e"])) == 1  # exactly max_src_len=5 tokens
    with pytest.raises(ValueError, match=r"sentence 1 has 6 tokens, more than the model's "
                                         r"max_src_len=5"):
        model.translate(["I am here.", "a b c d e f"])


@pytest.mark.parametrize("bad, match", [
    ([3], r"sentence 0 is int, not str: 3"),
    (["I am here.", None], r"sentence 1 is NoneType, not str"),
    ([b"I am here."], r"sentence 0 is bytes, not str"),
    ([["I", "am"]], r"sentence 0 is list, not str"),
])
def test_translate_refuses_non_strings(model, bad, match):
    with pytest.raises(TypeError, match=match):
        model.translate(bad)


def test_translate_refuses_a_bare_string(model):
    with pytest.raises(TypeError, match=r"takes a list of sentences; wrap a single one in \[...\]"):
        model.translate("I am here.")


@pytest.mark.parametrize("bad", [None, 42])
def test_translate_refuses_a_non_list_with_a_clear_message(model, bad):
    with pytest.raises(TypeError, match="list of sentences"):
        model.translate(bad)

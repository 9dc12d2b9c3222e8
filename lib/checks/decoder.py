"""Checkers for the exercises of "The decoder".

    check_start_state(start_state)        eq. 3: initial states, context and first input
    check_decoder_inputs(decoder_inputs)  the context concatenated to every step's input
    check_greedy_decode(greedy_decode)    the autoregressive loop, against lib.search.greedy

Each checker runs the learner's function on small seeded models (`tiny_model`) and, when one is
given, on the course's trained model; when the answer is wrong in a common way (the output
states instead of the hidden states, <sos> fed at every step, no stop at <eos>...), it computes
that mistake too and names it.
"""

from __future__ import annotations

import torch

from lib import toy
from lib.checks import (
    DECODING_HINT,
    CheckResult,
    Mismatch,
    call,
    expect_close,
    expect_shape,
    run_checks,
)
from lib.data import EOS, PAD, SOS, SPECIALS, Vocab, tokenize
from lib.model import Seq2Seq
from lib.search import greedy, log_probs

# ---------------------------------------------------------------------------------------------
# Small seeded models the checkers (and their tests) run on
# ---------------------------------------------------------------------------------------------


def tiny_model(seed: int = 0, feed_context: bool = True, vocab_size: int = 12, hidden: int = 16,
               layers: int = 2, eos_bias: float = 0.0) -> Seq2Seq:
    """A small random Seq2Seq (eval mode), weights x2 so outputs depend on inputs, over one
    made-up vocabulary `w0 w1 …` of `vocab_size` tokens for both sides."""
    vocab = Vocab(list(SPECIALS) + [f"w{i}" for i in range(vocab_size - len(SPECIALS))])
    return toy.tiny_model(seed, src_vocab=vocab, tgt_vocab=vocab, hidden=hidden, layers=layers,
                          feed_context=feed_context, max_src_len=20, max_tgt_len=12, scale=2.0,
                          eos_bias=eos_bias)


def _batch(model, lengths: list[int], seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random source ids (B, S) padded with <pad>, and their lengths (B,)."""
    g = torch.Generator().manual_seed(seed)
    V = model.config.src_vocab_size
    src = torch.full((len(lengths), max(lengths)), PAD, dtype=torch.long)  # (B, S)
    for b, n in enumerate(lengths):
        src[b, :n] = torch.randint(len(SPECIALS), V, (n,), generator=g)
    return src, torch.tensor(lengths)


# ---------------------------------------------------------------------------------------------
# start_state(model, src, src_lengths) -> (state (L, B, H), context (B, H), first input (B,))
# ---------------------------------------------------------------------------------------------


def _start_case(fn, model, src, lengths, label: str) -> str:
    L, B, H = model.config.num_layers, src.size(0), model.config.hidden_size
    with torch.no_grad():
        outputs, hidden, context = model.encode(src, lengths)  # (B, S, H), (L, B, H), (B, H)
        got = call(fn, model, src, lengths, names=("model", "src", "src_lengths"),
                   where=label)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise Mismatch("return three things: (state, context, first_input)")
    state, ctx, first = got
    for name, value in (("state", state), ("context", ctx), ("first_input", first)):
        if not torch.is_tensor(value):
            raise Mismatch(f"{name} should be a tensor, got {type(value).__name__}")
    if tuple(state.shape) == (B, L, H) and (B, L) != (L, B):
        raise Mismatch(f"state has shape (B, L, H) = {tuple(state.shape)}: the decoder's "
                       f"nn.GRU expects its initial state as (L, B, H), layers first")
    expect_shape("state", state, (L, B, H))
    state = state.detach()
    if not torch.allclose(state, hidden, atol=1e-5):
        if torch.allclose(state, hidden[-1].expand(L, B, H), atol=1e-5):
            raise Mismatch("every decoder layer starts from the last encoder layer's state "
                           "(the context); eq. 3 starts decoder layer i from encoder layer i: "
                           "s_0^i = h_S^i")
        if torch.allclose(state, outputs[:, -1].expand(L, B, H), atol=1e-5):
            raise Mismatch("state was built from the encoder's *output states* at the last "
                           "position (last layer only, and past the end of shorter "
                           "sentences); eq. 3 starts each decoder layer i from the encoder's "
                           "*hidden state* of layer i, h_S^i — the second thing model.encode "
                           "returns")
        expect_close("state", state, hidden)
    expect_shape("context", ctx, (B, H))
    ctx = ctx.detach()
    if not torch.allclose(ctx, context, atol=1e-5):
        if L > 1 and torch.allclose(ctx, hidden[0], atol=1e-5):
            raise Mismatch("context is the FIRST layer's final state; the context is the last "
                           "layer's, c = h_S^L (hidden[-1])")
        if torch.allclose(ctx, outputs[:, -1], atol=1e-5) and \
                not torch.allclose(outputs[:, -1], context, atol=1e-5):
            raise Mismatch("context was read at the last padded position outputs[:, -1]; for "
                           "a sentence shorter than the batch that is past its end (zeros). "
                           "Use the last layer's hidden state h_S^L")
        expect_close("context", ctx, context)
    expect_shape("first_input", first, (B,))
    if first.dtype != torch.long:
        raise Mismatch(f"first_input should hold token ids (torch.long), got {first.dtype}")
    if not bool((first == SOS).all()):
        raise Mismatch(f"first_input should be <sos> (id {SOS}) for every sentence, got "
                       f"{first.tolist()}: step 1 reads the start token (eq. 3)")
    return f"{label}: state, context and <sos> as eq. 3 says"


def check_start_state(fn, model=None) -> CheckResult:
    """fn(model, src (B, S), src_lengths (B,)) -> (state (L, B, H), context (B, H), first (B,))."""
    tiny = tiny_model(1)
    tiny3 = tiny_model(2, layers=3, hidden=10)
    checks = [
        lambda: _start_case(fn, tiny, *_batch(tiny, [5, 2, 4], 0),
                            "3 sentences of lengths 5, 2, 4, 2 layers"),
        lambda: _start_case(fn, tiny3, *_batch(tiny3, [3, 6], 1),
                            "2 sentences, 3 layers of size 10"),
    ]
    if model is not None:
        src, lengths = model.prepare(["I am cold.", "We won."])
        checks.append(lambda: _start_case(fn, model, src, lengths.to(src.device),
                                          "the course model, 2 sentences"))
    return run_checks("start_state", *checks)


# ---------------------------------------------------------------------------------------------
# decoder_inputs(emb (B, T, E), context (B, H)) -> (B, T, E + H)
# ---------------------------------------------------------------------------------------------


def _inputs_case(fn, B: int, T: int, E: int, H: int, seed: int) -> str:
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(B, T, E, generator=g)  # (B, T, E)
    context = torch.randn(B, H, generator=g)  # (B, H)
    expected = torch.cat([emb, context[:, None, :].expand(B, T, H)], dim=-1)  # (B, T, E+H)
    got = call(fn, emb, context, names=("emb", "context"))
    if not torch.is_tensor(got):
        raise Mismatch(f"return a tensor (B, T, E + H), got {type(got).__name__}")
    shape = tuple(got.shape)
    if shape == (B, T, E):
        raise Mismatch("the result has the embedding's shape (B, T, E): the context was not "
                       "concatenated")
    if shape == (B, T + 1, E) or (len(shape) == 3 and shape[1] != T and shape[2] == E):
        raise Mismatch(f"the result has shape {shape}: you concatenated along time (dim 1); "
                       f"the context joins each step's features, dim -1")
    expect_shape("the decoder inputs", got, (B, T, E + H))
    got = got.detach()
    if torch.allclose(got, expected):
        return f"B={B}, T={T}, E={E}, H={H}"
    swapped = torch.cat([context[:, None, :].expand(B, T, H), emb], dim=-1)
    if torch.allclose(got, swapped):
        raise Mismatch("the context comes first: the decoder reads [e(y_{t-1}); c], the "
                       "embedding first, as lib.decoder.Decoder does (its GRU's weights are "
                       "laid out in that order)")
    if torch.allclose(got[..., :E], emb) and not torch.allclose(got[..., E:], expected[..., E:]):
        wrong = (~torch.isclose(got[..., E:], expected[..., E:])).any(-1).nonzero()[0].tolist()
        raise Mismatch(f"the embedding part is right, but position (sentence {wrong[0]}, step "
                       f"{wrong[1]}) carries the wrong context: every step of sentence b must "
                       f"carry context[b] (use unsqueeze(1).expand(-1, T, -1), not a reshape)")
    expect_close("the decoder inputs", got, expected)
    return ""


def _inputs_model_case(fn) -> str:
    """Through a real decoder: the learner's inputs give the same logits as Decoder.forward."""
    model = tiny_model(3, feed_context=True)
    dec = model.decoder
    g = torch.Generator().manual_seed(4)
    tgt_in = torch.randint(len(SPECIALS), model.config.tgt_vocab_size, (2, 5), generator=g)
    with torch.no_grad():
        _, state, context = model.encode(*_batch(model, [4, 3], 5))
        expected, _ = dec(tgt_in, state, context)  # (B, T, V)
        inputs = call(fn, dec.embedding(tgt_in), context, names=("emb", "context"))
        states, _ = dec.rnn(inputs, state)  # (B, T, H)
        got = dec.head(states)  # (B, T, V)
    expect_close("the logits of Decoder.forward fed your inputs", got, expected)
    return "fed to a real decoder's GRU, your inputs give Decoder.forward's logits"


def check_decoder_inputs(fn) -> CheckResult:
    """fn(emb (B, T, E), context (B, H)) -> [emb; context] at every step, (B, T, E + H)."""
    return run_checks(
        "decoder_inputs",
        lambda: _inputs_case(fn, 2, 4, 3, 5, 0),
        lambda: _inputs_case(fn, 3, 1, 6, 2, 1),
        lambda: _inputs_case(fn, 4, 7, 8, 16, 2),
        lambda: _inputs_model_case(fn),
    )


# ---------------------------------------------------------------------------------------------
# greedy_decode(model, src_ids, max_len) -> list of token ids
# ---------------------------------------------------------------------------------------------


@torch.no_grad()
def _wrong_greedy(model, src_ids: list[int], max_len: int, mistake: str) -> list[int]:
    """Greedy decoding with one typical mistake, to recognise it in a learner's answer."""
    src = torch.tensor([src_ids], device=model.device)  # (1, S)
    _, state, context = model.encode(src, torch.tensor([len(src_ids)]))  # (L, 1, H), (1, H)
    start = state
    prev = torch.tensor([SOS], device=model.device)  # (1,)
    out = []
    for _ in range(max_len):
        logits, new_state = model.decoder.step(prev, state, context)  # (1, V)
        tok = int(log_probs(logits).argmax(-1))
        out.append(tok)
        if tok == EOS and mistake != "no stop":
            break
        state = start if mistake == "state not carried" else new_state
        prev = torch.tensor([SOS if mistake == "always sos" else tok], device=model.device)
    return out


def _greedy_case(fn, model, src_ids: list[int], max_len: int, label: str) -> str:
    src = torch.tensor([src_ids], device=model.device)  # (1, S)
    with torch.no_grad():
        row = greedy(model, src, torch.tensor([len(src_ids)]), max_len=max_len)[0]  # (T,)
    expected = [t for t in row.tolist() if t != PAD]
    with torch.no_grad():
        got = call(fn, model, list(src_ids), max_len, names=("model", "src_ids", "max_len"),
                   hint=DECODING_HINT, where=label)
    if torch.is_tensor(got):
        got = got.flatten().tolist()
    if not isinstance(got, (list, tuple)) or not all(isinstance(t, int) for t in got):
        raise Mismatch("return the output as a list of token ids (int), e.g. [57, 12, 3]")
    got = list(got)
    itos = model.tgt_vocab.itos
    ended = f"ended with <eos> after {len(expected)} tokens" if expected[-1:] == [EOS] else \
        f"reached the length cap of {max_len} tokens"
    if got == expected:
        return f"{label}: equal to lib.search.greedy ({ended})"
    if len(got) > max_len:
        raise Mismatch(f"{label}: you wrote {len(got)} tokens; the length cap is "
                       f"max_len={max_len} tokens, <eos> included")
    if expected[-1:] == [EOS] and len(got) > len(expected) and got[:len(expected)] == expected:
        raise Mismatch(f"{label}: you did not stop at <eos>: step {len(expected)} wrote "
                       f"<eos>, then you went on for {len(got) - len(expected)} more tokens")
    if expected[-1:] == [EOS] and got == expected[:-1]:
        raise Mismatch(f"{label}: the tokens are right, but keep the <eos> you stopped at as "
                       f"the last token (lib.search.greedy does: it tells a finished sentence "
                       f"from one cut by the length cap)")
    forbidden = [t for t in got if t in (PAD, SOS)]
    if forbidden:
        raise Mismatch(f"{label}: you wrote {itos[forbidden[0]]}, which is never generated; "
                       f"pick the next token with lib.search.log_probs(logits).argmax(-1), "
                       f"which forbids <pad> and <sos>")
    for mistake, why in (
            ("always sos", "you fed <sos> at every step; step t must read the token written "
                           "at step t-1 (that is what makes the loop autoregressive)"),
            ("state not carried", "you restarted every step from the initial state; pass the "
                                  "state that decoder.step returns on to the next step")):
        if got == _wrong_greedy(model, src_ids, max_len, mistake):
            raise Mismatch(f"{label}: {why}")
    t = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
             min(len(got), len(expected)))
    mine = itos[got[t]] if t < len(got) else "(nothing: you stopped)"
    theirs = itos[expected[t]] if t < len(expected) else "(nothing: greedy had stopped)"
    raise Mismatch(f"{label}: the first difference is at step {t + 1}: you wrote {mine}, "
                   f"greedy writes {theirs} (the most likely token given everything before)")


def check_greedy_decode(fn, model=None) -> CheckResult:
    """fn(model, src_ids: list[int], max_len: int) -> list[int], <eos> kept when written.

    Run against lib.search.greedy on tiny models (sentences that end with <eos> and sentences
    cut by the cap) and, if given, on `model` with real sentences.
    """
    tiny = tiny_model(5)
    checks = [
        lambda: _greedy_case(fn, tiny, [4, 7, 9, 5], 10, "tiny model, 4-token source"),
        lambda: _greedy_case(fn, tiny, [6, 11], 10, "tiny model, 2-token source"),
        lambda: _greedy_case(fn, tiny, [9, 9, 4], 4, "tiny model, length cap 4"),
    ]
    if model is not None:
        for sentence in ("I am cold.", "Where is the station?"):
            ids = model.src_vocab.encode(tokenize(sentence))
            checks.append(lambda ids=ids, s=sentence: _greedy_case(
                fn, model, ids, model.config.max_tgt_len, f"course model, «{s}»"))
    return run_checks("greedy_decode", *checks)

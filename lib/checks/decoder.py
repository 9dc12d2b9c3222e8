"""Checkers for the exercises of "The decoder".

    check_start_state(start_state)        eq. 3: initial states, context and first input
    check_decode_mixed(decode_mixed)      start from one sentence, feed another's context
    check_greedy_unsure(greedy_unsure)    the loop, with probabilities and a min_prob stop
    check_greedy_decode(greedy_decode)    the plain autoregressive loop, against lib.search.greedy
    check_bridge(make_bridge)             a trainable map from the encoder's final states to
                                          the decoder's initial states, for any two depths

Each checker runs the learner's function on small seeded models
(`lib.checks.models.shared_vocab_model`) and, when one is given, on the course's trained model;
when the answer is wrong in a common way (the output states instead of the hidden states, <sos>
fed at every step, no stop at <eos>...), it computes that mistake too and names it. The bridge's
checker lives in `lib.checks.bridge` and is imported here with the chapter's others.
"""

from __future__ import annotations

import math

import torch

from lib.checks.bridge import check_bridge as check_bridge  # the chapter imports it from here
from lib.checks.harness import (
    DECODING_HINT,
    CheckResult,
    Mismatch,
    call,
    expect_close,
    expect_shape,
    run_checks,
)
from lib.checks.models import shared_vocab_model
from lib.data import EOS, PAD, SOS, SPECIALS, tokenize
from lib.search import greedy, log_probs


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
    tiny = shared_vocab_model(1)
    tiny3 = shared_vocab_model(2, layers=3, hidden=10)
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
# A reference loop for the two variants below: whose context, and when to stop
# ---------------------------------------------------------------------------------------------


@torch.no_grad()
def reference_loop(model, start_ids: list[int], context_ids: list[int], max_len: int,
                   min_prob: float = 0.0, mistake: str = "") -> tuple[list[int], list[float]]:
    """Greedy decoding that starts from the hidden states of `start_ids` (eq. 3) and is fed the
    context of `context_ids` at every step (eq. 4); it stops at <eos>, after max_len tokens, or
    before writing a token whose probability is below min_prob. Returns (ids, probabilities).

    `mistake` reproduces a typical error, so a checker can recognise it: "log" (log-probabilities
    returned), "written" (the unsure token is written before stopping), "prefix" (min_prob
    compared with the probability of the whole prefix), "renormalised" (softmax after forbidding
    <pad> and <sos>), "first layer" (the context taken from the first layer).
    """
    dev = model.device

    def encode(ids):
        return model.encode(torch.tensor([ids], device=dev), torch.tensor([len(ids)]))

    _, state, _ = encode(start_ids)  # (L, 1, H): s_0 = h_S of start_ids
    _, hidden, context = encode(context_ids)  # (L, 1, H), (1, H)
    if mistake == "first layer":
        context = hidden[0]  # (1, H)
    prev = torch.tensor([SOS], device=dev)  # (1,)
    ids, probs, prefix = [], [], 1.0
    for _ in range(max_len):
        logits, new_state = model.decoder.step(prev, state, context)  # (1, V), (L, 1, H)
        if mistake == "renormalised":
            p = torch.softmax(logits.float().index_fill(
                1, torch.tensor([PAD, SOS], device=dev), float("-inf")), -1)[0]  # (V,)
        else:
            p = log_probs(logits)[0].exp()  # (V,)
        token = int(p.argmax())
        prob = float(p[token])
        prefix *= prob
        unsure = (prefix if mistake == "prefix" else prob) < min_prob
        if unsure and mistake != "written":
            break
        ids.append(token)
        probs.append(math.log(prob) if mistake == "log" else prob)
        if unsure or token == EOS:
            break
        state, prev = new_state, torch.tensor([token], device=dev)
    return ids, probs


def _as_id_list(got, what: str = "the output") -> list[int]:
    if torch.is_tensor(got):
        got = got.flatten().tolist()
    if not isinstance(got, (list, tuple)) or not all(isinstance(t, int) and
                                                     not isinstance(t, bool) for t in got):
        raise Mismatch(f"return {what} as a list of token ids (int), e.g. [57, 12, 3]")
    return list(got)


def _ids(model, sentence_or_ids) -> list[int]:
    if isinstance(sentence_or_ids, str):
        return model.src_vocab.encode(tokenize(sentence_or_ids))
    return list(sentence_or_ids)


# ---------------------------------------------------------------------------------------------
# decode_mixed(model, src_ids, other_ids, max_len): whose context does the decoder follow?
# ---------------------------------------------------------------------------------------------


def _mixed_case(fn, model, src, other, max_len: int, label: str) -> str:
    src_ids, other_ids = _ids(model, src), _ids(model, other)
    expected, _ = reference_loop(model, src_ids, other_ids, max_len)
    with torch.no_grad():
        got = call(fn, model, list(src_ids), list(other_ids), max_len,
                   names=("model", "src_ids", "other_ids", "max_len"), hint=DECODING_HINT,
                   where=label)
    got = _as_id_list(got)
    if got == expected:
        return f"{label}: {len(got)} token{'s' * (len(got) != 1)}, as expected"
    if len(got) > max_len:
        raise Mismatch(f"{label}: you wrote {len(got)} tokens; the length cap is "
                       f"max_len={max_len}, <eos> included")
    wrong = [
        ((src_ids, src_ids, ""), "you fed the context of src_ids; the exercise starts from "
         "src_ids' hidden states but feeds the context of other_ids at every step"),
        ((other_ids, other_ids, ""), "you used other_ids for everything: the decoder's "
         "initial states must come from src_ids (eq. 3), only the fed context from other_ids"),
        ((other_ids, src_ids, ""), "the roles are swapped: you started from other_ids' hidden "
         "states and fed src_ids' context; start from src_ids, feed other_ids' context"),
        ((src_ids, other_ids, "first layer"), "your context is the FIRST layer's final state "
         "of other_ids; the context is the last layer's, c = h_S^L (what model.encode "
         "returns third)"),
    ]
    for (start, ctx, mistake), why in wrong:
        if got == reference_loop(model, start, ctx, max_len, mistake=mistake)[0]:
            raise Mismatch(f"{label}: {why}")
    raise Mismatch(f"{label}: " + _first_difference(model, got, expected, "the expected loop"))


def _first_difference(model, got: list[int], expected: list[int], whose: str,
                      stopped: str | None = None) -> str:
    """'the first difference is at step t: you wrote X, <whose> writes Y' for two token lists;
    `stopped` says why `expected` ends where it does, when the learner's answer goes on."""
    itos = model.tgt_vocab.itos
    t = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
             min(len(got), len(expected)))
    mine = itos[got[t]] if t < len(got) else "(nothing: you stopped)"
    if t < len(expected):
        theirs = itos[expected[t]]
    else:
        theirs = f"(nothing: {whose} {'had stopped' if stopped is None else 'stops' + stopped})"
    return f"the first difference is at step {t + 1}: you wrote {mine}, {whose} writes {theirs}"


def check_decode_mixed(fn, model=None) -> CheckResult:
    """fn(model, src_ids, other_ids, max_len) -> list[int]: greedy decoding from src_ids'
    hidden states (eq. 3), fed other_ids' context at every step (eq. 4).

    Against `reference_loop` on tiny models (one that feeds the context and one that does not,
    where the fed context is ignored) and, if given, on `model` with real sentences.
    """
    # a seed and sentences on which the right answer and each named mistake all differ
    fed, unfed = shared_vocab_model(8), shared_vocab_model(8, feed_context=False)
    a, b = [7, 8, 5, 5], [9, 6, 4]
    checks = [
        lambda: _mixed_case(fn, fed, a, b, 10, "tiny model, 2 layers"),
        lambda: _mixed_case(fn, fed, b, a, 10, "the same, roles swapped"),
        lambda: _mixed_case(fn, unfed, a, b, 10,
                            "tiny model with feed_context=False (the fed context is ignored)"),
    ]
    if model is not None:
        pair = ("I am cold.", "Where is the station?")
        for a, b in (pair, pair[::-1]):
            checks.append(lambda a=a, b=b: _mixed_case(
                fn, model, a, b, model.config.max_tgt_len,
                f"course model, «{a}» with the context of «{b}»"))
    return run_checks("decode_mixed", *checks)


# ---------------------------------------------------------------------------------------------
# greedy_unsure(model, src_ids, max_len, min_prob): stop before an unsure token
# ---------------------------------------------------------------------------------------------


def unsure_threshold(model, src_ids: list[int], max_len: int) -> float | None:
    """A min_prob that stops the greedy loop, after two tokens at least, at the first step
    whose token is less likely than every token before it (halfway between), or None."""
    _, probs = reference_loop(model, src_ids, src_ids, max_len)
    for t in range(2, len(probs)):
        if probs[t] < min(probs[:t]):
            return (probs[t] + min(probs[:t])) / 2
    return None


def widest_gap_threshold(model, src_ids: list[int], max_len: int) -> float | None:
    """A min_prob far from every probability plain greedy decoding writes for src_ids: halfway
    across the widest gap between two of them (so that another device's or dtype's rounding
    cannot move a token across it), below the first token's when such a gap exists (so that
    the loop writes a token before it stops), or None when they are all equal."""
    _, probs = reference_loop(model, src_ids, src_ids, max_len)
    levels = sorted(set(probs))
    gaps = list(zip(levels, levels[1:]))
    if not gaps:
        return None
    after_first = [(lo, hi) for lo, hi in gaps if hi <= probs[0]]
    lo, hi = max(after_first or gaps, key=lambda pair: pair[1] - pair[0])
    return (lo + hi) / 2


def _course_unsure_case(fn, model, sentence: str) -> str:
    cap = model.config.max_tgt_len
    min_prob = widest_gap_threshold(model, _ids(model, sentence), cap) or 0.0
    return _unsure_case(fn, model, sentence, cap, min_prob,
                        f"course model, «{sentence}», min_prob {min_prob:.3f}")


def _unsure_answer(got, label: str) -> tuple[list[int], list[float]]:
    """The learner's (ids, probabilities) in plain lists, or a Mismatch that says what is wrong
    with their form (log-probabilities named)."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Mismatch("return two lists: (token ids, their probabilities)")
    ids = _as_id_list(got[0], "the token ids")
    probs = got[1]
    if torch.is_tensor(probs):
        probs = probs.flatten().tolist()
    if not isinstance(probs, (list, tuple)) or not all(
            isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs):
        raise Mismatch("return the probabilities as a list of floats, one per token written")
    probs = [float(p) for p in probs]
    if len(probs) != len(ids):
        raise Mismatch(f"{label}: {len(ids)} tokens but {len(probs)} probabilities: return one "
                       f"probability per token written")
    if probs and all(p <= 0 for p in probs) and any(p < 0 for p in probs):
        raise Mismatch(f"{label}: your probabilities are negative, so they are "
                       f"log-probabilities; return P = exp(log P), between 0 and 1")
    return ids, probs


_UNSURE_MISTAKES = (
    ("written", "you wrote the unsure token, then stopped; stop *before* writing a token "
                "whose probability is below min_prob"),
    ("prefix", "you compared min_prob with the probability of the whole prefix (the product "
               "so far); the rule is about each token's own probability P(y_t | y_<t, x)"),
    ("renormalised", "your probabilities are too large: you applied the softmax after "
                     "forbidding <pad> and <sos>, which renormalises; the model's probability "
                     "is search.log_probs(logits).exp()"),
)


def _unsure_mistake(model, src_ids: list[int], max_len: int, min_prob: float, ids: list[int],
                    probs: list[float], stopped: str) -> str | None:
    """Which typical mistake (ids, probs) is, in words, or None: one of `_UNSURE_MISTAKES`, or
    no stop for an unsure token at all (when the right loop stops for one, `stopped` says
    where)."""
    def matches(mistake: str = "", threshold: float = min_prob) -> bool:
        ref_ids, ref_p = reference_loop(model, src_ids, src_ids, max_len, threshold, mistake)
        return ids == ref_ids and len(probs) == len(ref_p) and all(
            abs(a - b) <= 1e-5 for a, b in zip(probs, ref_p))

    if matches():
        return None
    for mistake, why in _UNSURE_MISTAKES:
        if matches(mistake):
            return why
    if stopped and matches(threshold=0.0):
        return f"you never stopped for an unsure token{stopped}"
    return None


def _unsure_case(fn, model, src, max_len: int, min_prob: float, label: str) -> str:
    src_ids = _ids(model, src)
    expected, expected_p = reference_loop(model, src_ids, src_ids, max_len, min_prob)
    with torch.no_grad():
        got = call(fn, model, list(src_ids), max_len, min_prob,
                   names=("model", "src_ids", "max_len", "min_prob"), hint=DECODING_HINT,
                   where=label)
    ids, probs = _unsure_answer(got, label)
    stopped = ""
    if len(expected) < max_len and expected[-1:] != [EOS]:
        stopped = (f" (the loop stops before step {len(expected) + 1}, whose best token has "
                   f"P below min_prob={min_prob:.3f})")
    why = _unsure_mistake(model, src_ids, max_len, min_prob, ids, probs, stopped)
    if why:
        raise Mismatch(f"{label}: {why}")
    if ids == expected:
        expect_close(f"{label}: the probabilities", probs, expected_p)
        ended = "ended with <eos>" if expected[-1:] == [EOS] else \
            f"stopped by min_prob={min_prob:.3f}" if stopped else "cut by the length cap"
        return f"{label}: {len(ids)} token{'s' * (len(ids) != 1)}, {ended}"
    if len(ids) > max_len:
        raise Mismatch(f"{label}: you wrote {len(ids)} tokens; the length cap is "
                       f"max_len={max_len}, <eos> included")
    raise Mismatch(f"{label}: " + _first_difference(model, ids, expected, "the loop",
                                                    stopped=stopped))


def check_greedy_unsure(fn, model=None) -> CheckResult:
    """fn(model, src_ids, max_len, min_prob) -> (ids, probs): greedy decoding that also returns
    each written token's probability and stops before a token less likely than min_prob.

    Against `reference_loop`: with min_prob 0 (plain greedy, ending at <eos> or the cap), with a
    min_prob that stops a tiny model in mid-sentence, and, if given, on `model` (with a min_prob
    halfway across the widest gap between its probabilities: `widest_gap_threshold`).
    """
    tiny = shared_vocab_model(5)
    src = [9, 9, 4]  # a sentence where each named mistake gives another output (tests)
    checks = [
        lambda: _unsure_case(fn, tiny, [4, 7, 9, 5], 10, 0.0, "tiny model, min_prob 0"),
        lambda: _unsure_case(fn, tiny, [9, 9, 4], 4, 0.0, "tiny model, length cap 4"),
        lambda: _unsure_case(fn, tiny, src, 10, unsure_threshold(tiny, src, 10) or 0.5,
                             "tiny model, a min_prob that stops it mid-sentence"),
    ]
    if model is not None:
        for sentence in ("I am cold.", "Where is the station?"):
            checks.append(lambda s=sentence: _course_unsure_case(fn, model, s))
    return run_checks("greedy_unsure", *checks)


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
    raise Mismatch(f"{label}: " + _first_difference(model, got, expected, "greedy")
                   + " (the most likely token given everything before)")


def check_greedy_decode(fn, model=None) -> CheckResult:
    """fn(model, src_ids: list[int], max_len: int) -> list[int], <eos> kept when written.

    Run against lib.search.greedy on tiny models (sentences that end with <eos> and sentences
    cut by the cap) and, if given, on `model` with real sentences.
    """
    tiny = shared_vocab_model(5)
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

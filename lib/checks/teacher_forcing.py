"""Checkers for the exercises of "Teacher forcing".

    check_shift(make_decoder_io)         target id lists -> (tgt_in, tgt_out), as lib.data.collate
    check_choose_inputs(choose_inputs)   the teacher-forcing coin: true token or the model's own
    check_forced_loss(forced_loss)       the teacher-forced loss in ONE decoder call, equal to
                                         the loss of stepping the decoder token by token

Each checker runs the learner's function on several cases, compares it with the reference
(`lib.data.collate`, exact probabilities, a stepping loop) and recognises the usual mistakes
(no shift, <eos> fed as an input, one coin for the whole batch, padding in the loss...).
"""

from __future__ import annotations

import torch

from lib import toy
from lib.checks import CheckResult, Mismatch, call, expect_shape, run_checks
from lib.data import EOS, PAD, SOS, SPECIALS, Vocab, collate
from lib.head import masked_cross_entropy

# ---------------------------------------------------------------------------------------------
# make_decoder_io(targets: list[list[int]]) -> (tgt_in (B, T), tgt_out (B, T))
# ---------------------------------------------------------------------------------------------

SHIFT_CASES = [
    [[5, 6, 7]],  # one sentence: no padding
    [[5, 6, 7, 8], [9], [10, 11]],  # different lengths: padding
    [[12], [13, 14, 15, 16, 17]],
]


def _as_pair(got, name: str):
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise Mismatch(f"{name} must return a pair (tgt_in, tgt_out), got {type(got).__name__}")
    tgt_in, tgt_out = got
    for label, x in (("tgt_in", tgt_in), ("tgt_out", tgt_out)):
        if not torch.is_tensor(x):
            raise Mismatch(f"{label} must be a tensor, got {type(x).__name__}")
    return tgt_in.long(), tgt_out.long()


def _shift_case(fn, targets: list[list[int]]) -> str:
    ref = collate([([4], t) for t in targets])  # the source does not matter here
    B, T = ref.tgt_in.shape
    got = call(fn, [list(t) for t in targets], names=("targets",))  # fresh: SHIFT_CASES stays
    tgt_in, tgt_out = _as_pair(got, "make_decoder_io")
    longest = max(len(t) for t in targets)
    for label, x in (("tgt_in", tgt_in), ("tgt_out", tgt_out)):
        if tuple(x.shape) == (B, longest):
            raise Mismatch(f"{label} has shape {tuple(x.shape)}: one column short. The longest "
                           f"target has {longest} tokens; tgt_in adds <sos> in front and "
                           f"tgt_out adds <eos> at the end, so both have {T} columns")
        expect_shape(label, x, (B, T))
    if torch.equal(tgt_in, ref.tgt_out) and torch.equal(tgt_out, ref.tgt_in):
        raise Mismatch("tgt_in and tgt_out are swapped: the decoder READS <sos> y1 .. yn "
                       "(tgt_in) and must PREDICT y1 .. yn <eos> (tgt_out)")
    if torch.equal(tgt_in, tgt_out):
        raise Mismatch("tgt_in equals tgt_out: you forgot to shift by one. At step t the "
                       "decoder reads y_{t-1} and predicts y_t, so the inputs are the targets "
                       "moved one place to the right, with <sos> in front")
    if bool((tgt_in[:, 0] != SOS).any()):
        raise Mismatch(f"tgt_in must start with <sos> (id {SOS}) in every row; row 0 starts "
                       f"with {int(tgt_in[0, 0])}")
    if bool((tgt_in == EOS).any()):
        raise Mismatch(f"tgt_in contains <eos> (id {EOS}): the decoder never reads <eos>, it "
                       f"only has to predict it, so <eos> belongs in tgt_out only")
    for b, t in enumerate(targets):
        if int(tgt_out[b, len(t)]) != EOS:
            raise Mismatch(f"tgt_out row {b} should have <eos> (id {EOS}) at position "
                           f"{len(t)}, right after its {len(t)} tokens; it has "
                           f"{int(tgt_out[b, len(t)])}")
    for label, x, r in (("tgt_in", tgt_in, ref.tgt_in), ("tgt_out", tgt_out, ref.tgt_out)):
        pad_mask = r == PAD
        if bool((x[pad_mask] != PAD).any()):
            raise Mismatch(f"{label}: the positions after a sentence's end must be <pad> "
                           f"(id {PAD}); found {x[pad_mask].unique().tolist()} there")
        bad = (x != r).nonzero()
        if len(bad):
            b, t = (int(i) for i in bad[0])
            raise Mismatch(f"{label}[{b}, {t}] is {int(x[b, t])}, expected {int(r[b, t])} "
                           f"(as lib.data.collate builds it: {r[b].tolist()})")
    return f"{B} target(s), lengths {[len(t) for t in targets]}: equal to lib.data.collate"


def check_shift(fn) -> CheckResult:
    """`fn(targets)` turns target id lists (no <sos>/<eos>) into padded (tgt_in, tgt_out)."""
    return run_checks("decoder inputs and targets, shifted by one",
                      *[lambda t=t: _shift_case(fn, t) for t in SHIFT_CASES])


# ---------------------------------------------------------------------------------------------
# choose_inputs(gold (B,), own (B,), ratio, generator) -> next decoder inputs (B,)
# ---------------------------------------------------------------------------------------------


def _choose(fn, B: int, ratio: float, seed: int) -> torch.Tensor:
    gold = torch.arange(B) + 10  # (B,) the true previous tokens
    own = torch.arange(B) + 10 + B  # (B,) the model's predictions: never equal to gold
    g = torch.Generator().manual_seed(seed)
    got = call(fn, gold, own, ratio, g, names=("gold", "own", "ratio", "generator"))
    if not torch.is_tensor(got):
        raise Mismatch(f"return the next inputs as a tensor (B,), got {type(got).__name__}")
    expect_shape(f"the next inputs (ratio {ratio})", got, (B,))
    got = got.long()
    from_gold, from_own = got == gold, got == own
    if not bool((from_gold | from_own).all()):
        i = int((~(from_gold | from_own)).nonzero()[0])
        raise Mismatch(f"sentence {i} got token {int(got[i])}, which is neither its true "
                       f"previous token ({int(gold[i])}) nor the model's prediction "
                       f"({int(own[i])}): each input must be one of the two")
    return from_gold.float()  # (B,) 1 where the true token was fed


def _extreme(fn, ratio: float) -> str:
    for seed in range(3):
        used_gold = _choose(fn, 64, ratio, seed)
        if ratio == 1.0 and not bool(used_gold.all()):
            raise Mismatch(f"with ratio 1.0 every sentence must get the TRUE previous token "
                           f"(pure teacher forcing); {int((1 - used_gold).sum())} of 64 got "
                           f"the model's own prediction")
        if ratio == 0.0 and bool(used_gold.any()):
            raise Mismatch(f"with ratio 0.0 every sentence must get the model's OWN "
                           f"prediction (free running); {int(used_gold.sum())} of 64 got the "
                           f"true token")
    return f"ratio {ratio}: {'always the true token' if ratio else 'always its own prediction'}"


def _rate(fn, ratio: float) -> str:
    B = 4000
    share = float(_choose(fn, B, ratio, seed=7).mean())
    # 4000 fair coins: the share lies within 0.03 of the ratio with overwhelming probability
    if abs(share - (1 - ratio)) < 0.03 and abs(ratio - 0.5) > 0.1:
        raise Mismatch(f"with ratio {ratio} you fed the true token to {share:.0%} of the "
                       f"sentences, about 1 - ratio: the comparison is the wrong way round "
                       f"(the ratio is the probability of feeding the TRUE token)")
    if share in (0.0, 1.0):
        raise Mismatch(f"with ratio {ratio} all {B} sentences got the "
                       f"{'true token' if share else 'own prediction'}: toss one coin PER "
                       f"SENTENCE (torch.rand(B) < ratio), not one for the whole batch")
    if abs(share - ratio) > 0.03:
        raise Mismatch(f"with ratio {ratio} the true token was fed to {share:.1%} of {B} "
                       f"sentences; expected about {ratio:.0%}")
    return f"ratio {ratio}: the true token for {share:.1%} of {B} sentences"


def check_choose_inputs(fn) -> CheckResult:
    """`fn(gold, own, ratio, generator)`: per sentence, the true token with probability ratio."""
    return run_checks("the teacher-forcing coin",
                      lambda: _extreme(fn, 1.0), lambda: _extreme(fn, 0.0),
                      lambda: _rate(fn, 0.5), lambda: _rate(fn, 0.2))


# ---------------------------------------------------------------------------------------------
# forced_loss(model, batch) -> scalar: teacher forcing in one call
# ---------------------------------------------------------------------------------------------


def tiny_model(seed: int = 0, vocab: int = 12, feed_context: bool = True):
    """A small random Seq2Seq on one made-up vocabulary `w0 w1 …` (fast; enough for losses)."""
    words = Vocab(list(SPECIALS) + [f"w{i}" for i in range(vocab - len(SPECIALS))])
    return toy.tiny_model(seed, src_vocab=words, tgt_vocab=words, feed_context=feed_context)


def stepping_loss(model, batch, reduction: str = "mean") -> torch.Tensor:
    """The reference: step the decoder one token at a time, feeding the true previous token."""
    _, state, context = model.encode(batch.src, batch.src_lengths)  # (L, B, H), (B, H)
    steps = []
    for t in range(batch.tgt_in.size(1)):
        logits, state = model.decoder.step(batch.tgt_in[:, t], state, context)  # (B, V)
        steps.append(logits)
    return masked_cross_entropy(torch.stack(steps, dim=1), batch.tgt_out,
                                reduction=reduction)  # (B, T, V) vs (B, T)


def _batches() -> list:
    return [
        collate([([4, 5, 6], [5, 6, 7])]),  # one sentence, no padding
        collate([([4, 5, 6, 7], [5, 6, 7, 8, 9]), ([8], [10]), ([9, 10], [6, 11])]),
    ]


def _forced_case(fn, seed: int, batch) -> str:
    model = tiny_model(seed)
    calls = []
    hook = model.decoder.rnn.register_forward_hook(lambda *a: calls.append(1))
    try:
        got = call(fn, model, batch, names=("model", "batch"))
    finally:
        hook.remove()
    if not torch.is_tensor(got):
        raise Mismatch(f"return the loss as a tensor, got {type(got).__name__}")
    if got.numel() != 1:
        raise Mismatch(f"return one number (the mean over real target tokens), got a tensor "
                       f"of shape {tuple(got.shape)}")
    got = float(got.detach())
    with torch.no_grad():
        expected = float(stepping_loss(model, batch))
        summed = float(stepping_loss(model, batch, "sum"))
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, V)
        unmasked = float(torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)), batch.tgt_out.reshape(-1)))
        fed_out = float(masked_cross_entropy(
            model(batch.src, batch.src_lengths, batch.tgt_out), batch.tgt_out))

    def near(a, b):
        return abs(a - b) <= 1e-4 * max(1.0, abs(b))

    if not near(got, expected):
        has_pad = bool((batch.tgt_out == PAD).any())
        if near(got, fed_out):
            raise Mismatch("you fed tgt_out to the decoder: it must read tgt_in (<sos> y1 .. "
                           "yn) and predict tgt_out (y1 .. yn <eos>); reading the token it "
                           "must predict is cheating, and the loss is far too low")
        if near(got, summed) and batch.n_tokens > 1:
            raise Mismatch(f"your loss {got:.4f} is the SUM over the {batch.n_tokens} real "
                           f"tokens; return the mean per real token, {expected:.4f}")
        if has_pad and near(got, unmasked):
            raise Mismatch("<pad> positions are counted in your loss: mask them out (e.g. "
                           "lib.head.masked_cross_entropy, or ignore_index=PAD)")
        raise Mismatch(f"your loss is {got:.6f}; stepping the decoder with the true previous "
                       f"tokens gives {expected:.6f}")
    if len(calls) > 1:
        raise Mismatch(f"the value is right, but you called the decoder GRU {len(calls)} "
                       f"times: with teacher forcing every input is known in advance, so one "
                       f"call over the whole of tgt_in does it")
    return (f"batch of {batch.src.size(0)} (target length {batch.tgt_in.size(1)}): "
            f"{got:.4f} in one GRU call, equal to stepping")


def check_forced_loss(fn) -> CheckResult:
    """`fn(model, batch)`: teacher-forced mean loss per real token, computed in one call."""
    return run_checks("teacher-forced loss in one call",
                      *[lambda s=s, b=b: _forced_case(fn, s, b)
                        for s, b in enumerate(_batches())])
